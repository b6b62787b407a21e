"""Cameras: webcams (by index or device path, through V4L2 on Linux),
programs that write MJPEG (the Raspberry Pi camera's rpicam-vid;
vision/stream.py), video files, image sequences and the simulated camera,
all read through ``cv2.VideoCapture`` or a look-alike so the simulation
tests the same code a webcam uses.

Every read runs with a timeout: a busy or unplugged webcam can block inside
the driver, and a robot must say which camera failed rather than hang.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

import cv2
import numpy as np

from .errors import VisionError
from .setup import CameraSpec, ViewSpec, camera_kind
from .stream import CommandCapture, libcamera_command

if TYPE_CHECKING:
    from .render import Lighting

T = TypeVar("T")

log = logging.getLogger(__name__)

BLACK_MEAN = 4.0  # a frame this dark on average shows nothing (lens cap, exposure at zero)


def _with_timeout(fn: Callable[[], T], timeout: float, what: str) -> T:
    box: dict[str, T] = {}
    failed: list[Exception] = []

    def run() -> None:
        try:
            box["value"] = fn()
        except Exception as e:  # handed to the caller's thread
            failed.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise VisionError(f"{what}: no answer within {timeout:g} s (busy, unplugged or hung driver?)")
    if failed:
        if isinstance(failed[0], VisionError):  # it names the camera already
            raise failed[0]
        raise VisionError(f"{what}: {failed[0]}")
    return box["value"]


def _quietly(fn: Callable[..., T], *args: object) -> T:
    """OpenCV's back-ends print their own errors while probing for a device
    that is not there; our VisionError says it better. With --verbose they
    are let through."""
    if log.isEnabledFor(logging.DEBUG):
        return fn(*args)
    lg = cv2.utils.logging
    before = lg.getLogLevel()
    lg.setLogLevel(lg.LOG_LEVEL_SILENT)
    try:
        return fn(*args)
    finally:
        lg.setLogLevel(before)


def _check_regular_file(path: str, label: str) -> None:
    """A camera that is a video or picture file: a regular file, looked at
    without opening it (OpenCV opening a FIFO would wait for a writer)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise VisionError(f"{label}: no such file") from None
    except OSError as e:
        raise VisionError(f"{label}: cannot look at it: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device or a socket"
        raise VisionError(f"{label}: is {what}, not a file; a camera source is a video or picture file, "
                          "a device, an index, libcamera or sim")


def device_node(path: str, label: str) -> str:
    """The video device a path names (a by-id or by-path link followed),
    checked to be a character device this user may open."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise VisionError(f"{label}: no such device (unplugged, or named otherwise: ls /dev/v4l/by-id)"
                          ) from None
    except OSError as e:
        raise VisionError(f"{label}: cannot look at it: {e.strerror or e}") from None
    if not stat.S_ISCHR(st.st_mode):
        raise VisionError(f"{label}: {real} is not a device (a camera is /dev/videoN or a link to one)")
    if not os.access(real, os.R_OK | os.W_OK):
        raise VisionError(f"{label}: no permission to open {real}: sudo usermod -aG video $USER, then log "
                          "out and in again")
    return real


class Camera:
    """One open camera. ``grab()`` returns the average of a few frames
    (BGR uint8) after the warm-up frames were dropped when it was opened."""

    def __init__(self, spec: CameraSpec, source: str | int | None = None, *, cleanup: Path | None = None,
                 exposure: float | None = None, gain: float | None = None):
        self.spec = spec
        self.name = spec.name
        self._source = spec.source if source is None else source
        self._cleanup = cleanup
        self.exposure, self.gain = exposure, gain
        self.settings: dict[str, object] = {"source": str(spec.source), "width": spec.width,
                                            "height": spec.height, "auto_exposure": spec.auto_exposure,
                                            "auto_white_balance": spec.auto_white_balance}
        if exposure is not None:
            self.settings["exposure"] = exposure
        if gain is not None:
            self.settings["gain"] = gain
        self.kind = camera_kind(spec if source is None else replace(spec, source=source, command=()))
        self._cap: cv2.VideoCapture | CommandCapture | None = self._open()
        try:
            for _ in range(max(0, spec.warmup_frames)):
                self._read()
        except BaseException:  # a camera that failed to warm up is not handed back: close it here
            self.close()
            raise

    @property
    def _is_file(self) -> bool:
        return self.kind in ("file", "sim")

    def _open(self) -> cv2.VideoCapture | CommandCapture:
        src = self._source
        label = f"camera {self.name!r} ({src})"
        kind = self.kind
        cap: cv2.VideoCapture | CommandCapture
        if kind in ("command", "libcamera"):
            argv = list(self.spec.command) if kind == "command" else libcamera_command(
                self.spec, exposure=self.exposure, gain=self.gain)
            self.settings["command"] = argv
            log.info("camera %s runs: %s", self.name, " ".join(argv))
            return CommandCapture(argv, label, timeout=self.spec.timeout_s,
                                  size=(self.spec.width, self.spec.height))
        if self._is_file:
            path = str(src)
            if "%" not in path:
                _check_regular_file(path, label)
            api = cv2.CAP_IMAGES if "%" in path else cv2.CAP_ANY
            cap = _with_timeout(lambda: cv2.VideoCapture(path, api), self.spec.timeout_s, label)
        elif kind == "device":
            node = device_node(str(src), label)
            if node != str(src):
                self.settings["device"] = node
            cap = _with_timeout(lambda: _quietly(cv2.VideoCapture, node, cv2.CAP_V4L2), self.spec.timeout_s,
                                label)
        else:
            cap = _with_timeout(lambda: _quietly(cv2.VideoCapture, int(src)), self.spec.timeout_s, label)
        if not cap.isOpened():
            raise VisionError(f"{label}: cannot be opened (missing, or in use by another program)")
        if not self._is_file:
            self._apply_settings(cap)
        return cap

    def _apply_settings(self, cap: cv2.VideoCapture) -> None:
        """Size, exposure, gain and white balance, on an index or a device alike."""
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.spec.width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.spec.height)
        # V4L2 wants 0.25 for manual exposure, 0.75 for auto; other back-ends take 0/1
        # a fixed exposure needs auto exposure off, whatever the set-up says
        auto = self.spec.auto_exposure and self.exposure is None
        cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, 0.75 if auto else 0.25)
        cap.set(cv2.CAP_PROP_AUTO_WB, 1 if self.spec.auto_white_balance else 0)
        if self.exposure is not None:
            cap.set(cv2.CAP_PROP_EXPOSURE, float(self.exposure))
        if self.gain is not None:
            cap.set(cv2.CAP_PROP_GAIN, float(self.gain))
        props = {"width": cv2.CAP_PROP_FRAME_WIDTH, "height": cv2.CAP_PROP_FRAME_HEIGHT,
                 "auto_exposure": cv2.CAP_PROP_AUTO_EXPOSURE, "exposure": cv2.CAP_PROP_EXPOSURE,
                 "gain": cv2.CAP_PROP_GAIN,
                 "auto_wb": cv2.CAP_PROP_AUTO_WB, "wb_temperature": cv2.CAP_PROP_WB_TEMPERATURE}
        self.settings.update({f"reported_{k}": cap.get(v) for k, v in props.items()})
        log.info("camera %s settings: %s", self.name, self.settings)

    def _read(self) -> np.ndarray:
        label = f"camera {self.name!r} ({self._source})"
        cap = self._cap
        if cap is None:
            raise VisionError(f"{label}: read after it was closed")
        if isinstance(cap, CommandCapture):  # its read is bounded by the timeout itself, no thread needed
            ok, frame = cap.read()
        else:
            ok, frame = _with_timeout(cap.read, self.spec.timeout_s, label)
        if not ok and self._is_file:  # a file or sequence ran out: start again from the top
            cap.release()
            cap = self._cap = self._open()
            ok, frame = _with_timeout(cap.read, self.spec.timeout_s, label)
        if not ok or frame is None:
            why = cap.problem() if isinstance(cap, CommandCapture) else ""
            raise VisionError(f"{label}: returned no frame" + (f" ({why})" if why else ""))
        return frame

    def grab(self) -> np.ndarray:
        frames = []
        for _ in range(max(1, self.spec.average_frames)):
            frame = self._read()
            h, w = frame.shape[:2]
            if (w, h) != (self.spec.width, self.spec.height):
                raise VisionError(f"camera {self.name!r} gives {w}x{h} frames but the set-up says"
                                  f" {self.spec.width}x{self.spec.height}: fix the set-up or the camera")
            frames.append(frame.astype(np.float32))
        img = np.mean(frames, axis=0)
        if img.mean() < BLACK_MEAN:
            raise VisionError(f"camera {self.name!r} ({self._source}) returns black frames:"
                              " lens covered, no light, or exposure set to zero")
        return np.clip(img + 0.5, 0, 255).astype(np.uint8)

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None
        if self._cleanup is not None:
            shutil.rmtree(self._cleanup, ignore_errors=True)
            self._cleanup = None

    def __enter__(self) -> Camera:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def write_sim_sequence(directory: Path, facelets: str, view: ViewSpec, spec: CameraSpec, *,
                       lighting: Lighting | None = None, seed: int | None = None,
                       frames: int | None = None) -> str:
    """Render the frames a simulated camera will deliver into ``directory``
    as an image sequence and return its VideoCapture pattern.

    The scene is rendered once (a real scene does not change between two
    frames either); each frame then gets its own sensor noise and JPEG
    artefacts, which is what averaging frames is there to fight. Warm-up
    frames, which the camera code drops, are links to the first frame."""
    from .render import Lighting, add_sensor_effects, render_view

    rng = np.random.default_rng(seed)
    lighting = lighting or Lighting.random(rng)
    n = frames or (spec.warmup_frames + spec.average_frames)
    directory.mkdir(parents=True, exist_ok=True)
    scene = render_view(facelets, view, (spec.width, spec.height),
                        lighting=replace(lighting, noise=0.0, jpeg_quality=None), rng=rng)
    first = directory / "frame000.bmp"
    cv2.imwrite(str(first), add_sensor_effects(scene, lighting, rng))
    for i in range(1, n):
        path = directory / f"frame{i:03d}.bmp"
        if i < spec.warmup_frames:
            os.link(first, path)
        else:
            cv2.imwrite(str(path), add_sensor_effects(scene, lighting, rng))
    return str(directory / "frame%03d.bmp")


SIM_EXPOSURE = 1.0
"""The simulated camera's exposure when none is set: a multiplier of the
scene's light, as a real camera's exposure time is."""


def lower_exposure(value: float) -> float:
    """The next shorter exposure to try, about 0.6 times the light. OpenCV
    passes the driver's own units: V4L2 cameras (and the simulated one)
    take a positive time, DirectShow a power of two in seconds (negative)."""
    return value * 0.6 if value > 0 else value - 0.75


def open_camera(spec: CameraSpec, *, sim_state: str | None = None, sim_seed: int | None = None,
                sim_view: ViewSpec | None = None, sim_lighting: Lighting | None = None,
                exposure: float | None = None, gain: float | None = None) -> Camera:
    """Open a camera. ``source == 'sim'`` renders ``sim_state`` as seen
    through ``sim_view`` (random light from ``sim_seed``, or ``sim_lighting``)
    into a temporary image sequence read back through VideoCapture.

    ``exposure`` and ``gain`` (OpenCV's CAP_PROP_EXPOSURE and CAP_PROP_GAIN,
    in the driver's units) fix the camera's exposure, auto exposure off;
    the simulated camera multiplies its light by both, so a scan that clips
    is handled by the same code as with a webcam."""
    if camera_kind(spec) == "sim":
        if exposure is not None or gain is not None:
            from .render import Lighting

            if sim_lighting is None:
                sim_lighting = Lighting.random(np.random.default_rng(sim_seed))
                sim_seed = None if sim_seed is None else sim_seed + 1
            # a positive time; another driver's units (DirectShow's negative powers of two) mean nothing here
            factor = exposure if exposure is not None and exposure > 0 else SIM_EXPOSURE
            factor *= 1.0 if gain is None else gain
            sim_lighting = replace(sim_lighting, intensity=sim_lighting.intensity * factor)
        if sim_view is None:  # the default simulated rig's view for this camera, if it has one
            from .setup import default_sim_setup

            sim_view = next((v for v in default_sim_setup()[1] if v.camera == spec.name), None)
        if sim_state is None or sim_view is None:
            raise VisionError(f"camera {spec.name!r} is simulated but no simulated cube or view was given")
        tmp = Path(tempfile.mkdtemp(prefix=f"cuberobot-sim-{spec.name}-"))
        try:
            pattern = write_sim_sequence(tmp, sim_state, sim_view, spec, lighting=sim_lighting, seed=sim_seed)
            return Camera(spec, pattern, cleanup=tmp, exposure=exposure, gain=gain)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return Camera(spec, exposure=exposure, gain=gain)
