"""Frames from a program that writes MJPEG to its standard output: the
Raspberry Pi's own camera through ``rpicam-vid --codec mjpeg -o -`` (called
``libcamera-vid`` before Raspberry Pi OS 12), or any command a maker has
that does the same.

Why a pipe and not OpenCV: libcamera cameras are not V4L2 capture devices
OpenCV can open, and the opencv-python wheels are built without GStreamer;
a JPEG stream on a pipe needs nothing but ``cv2.imdecode``.

:class:`CommandCapture` has the part of ``cv2.VideoCapture``'s interface
the camera code uses (``isOpened``, ``read``, ``set``, ``get``,
``release``), so a command camera goes through the same warm-up, averaging,
timeout and size checks as a webcam. A thread drains the pipe all the time
and keeps only the newest frame: a frame read is never older than the one
read before it, and a camera left alone does not block its program.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence

import cv2
import numpy as np

from .errors import VisionError
from .setup import CameraSpec, libcamera_index

MAX_FRAME_BYTES = 32 << 20
"""A JPEG of 16384 x 16384 at the best quality is well under this; more
bytes without a frame's end is not MJPEG."""
STDERR_LINES = 20
LIBCAMERA_PROGRAMS = ("rpicam-vid", "libcamera-vid")
LIBCAMERA_FRAMERATE = 15
LIBCAMERA_QUALITY = 90
EXPOSURE_UNIT_US = 100
"""The camera code passes exposures in V4L2's unit (100 µs, as OpenCV's
CAP_PROP_EXPOSURE does with a webcam), so a profile's exposure means the same
time on a webcam and on a libcamera camera."""

_SOI, _EOI, _SOS = 0xD8, 0xD9, 0xDA


class JpegSplitter:
    """Cuts a byte stream into whole JPEG files by walking their segments
    (not by looking for the end marker's two bytes, which a thumbnail in an
    EXIF segment also holds). Bytes before a start-of-image are skipped, and
    a stream that breaks a segment's rules is picked up again at the next
    start-of-image."""

    def __init__(self, limit: int = MAX_FRAME_BYTES):
        self.limit = limit
        self._buf = bytearray()
        self._pos = -1  # -1: looking for a start-of-image; else where the next marker (or data) is
        self._entropy = False  # inside a scan's coded data

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        frames: list[bytes] = []
        while (frame := self._next()) is not None:
            frames.append(frame)
        if len(self._buf) > self.limit:
            raise VisionError(f"more than {self.limit} bytes without a whole JPEG: the program does not "
                              "write MJPEG")
        return frames

    def _restart(self, at: int) -> None:
        del self._buf[:at]
        self._pos, self._entropy = -1, False

    def _next(self) -> bytes | None:
        buf = self._buf
        while True:
            if self._pos < 0:
                i = buf.find(b"\xff\xd8")
                if i < 0:
                    del buf[:max(0, len(buf) - 1)]  # keep a last 0xFF: it may start the next frame
                    return None
                del buf[:i]
                self._pos, self._entropy = 2, False
            if self._entropy:
                j = buf.find(b"\xff", self._pos)
                if j < 0 or j + 1 >= len(buf):
                    self._pos = len(buf) if j < 0 else j
                    return None
                m = buf[j + 1]
                if m == 0 or 0xD0 <= m <= 0xD7:  # a stuffed 0xFF, a restart marker: still coded data
                    self._pos = j + 2
                elif m == 0xFF:
                    self._pos = j + 1
                else:
                    self._pos, self._entropy = j, False
                continue
            p = self._pos
            if p + 2 > len(buf):
                return None
            if buf[p] != 0xFF:  # not a segment: this frame is broken; look again after its start
                self._restart(2)
                continue
            m = buf[p + 1]
            if m == 0xFF:  # fill byte
                self._pos = p + 1
            elif m == _EOI:
                frame = bytes(buf[:p + 2])
                self._restart(p + 2)
                return frame
            elif m == _SOI:  # a frame cut short and a new one begun
                self._restart(p)
            elif 0xD0 <= m <= 0xD7 or m == 0x01:
                self._pos = p + 2
            else:
                if p + 4 > len(buf):
                    return None
                length = (buf[p + 2] << 8) | buf[p + 3]
                if length < 2:
                    self._restart(2)
                    continue
                self._pos = p + 2 + length
                self._entropy = m == _SOS


def libcamera_command(spec: CameraSpec, *, exposure: float | None = None, gain: float | None = None,
                      which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The rpicam-vid (or libcamera-vid) command for a ``libcamera[:N]``
    camera: MJPEG of the set-up's size on standard output, no preview, no
    end; ``exposure`` (in 100 µs, see :data:`EXPOSURE_UNIT_US`) and ``gain``
    fix the shutter and the analogue gain."""
    program = next((p for p in LIBCAMERA_PROGRAMS if which(p)), None)
    if program is None:
        raise VisionError(f"camera {spec.name!r} ({spec.source}): neither rpicam-vid nor libcamera-vid is "
                          "installed (Raspberry Pi OS: sudo apt install rpicam-apps)")
    argv = [program, "--nopreview", "--timeout", "0", "--codec", "mjpeg", "--quality", str(LIBCAMERA_QUALITY),
            "--flush", "--output", "-", "--camera", str(max(0, libcamera_index(spec))),
            "--width", str(spec.width), "--height", str(spec.height), "--framerate", str(LIBCAMERA_FRAMERATE)]
    if exposure is not None and exposure > 0:
        argv += ["--shutter", str(max(1, round(exposure * EXPOSURE_UNIT_US)))]
    if gain is not None and gain > 0:
        argv += ["--gain", f"{gain:g}"]
    return argv


class CommandCapture:
    """A running MJPEG-writing program as a ``cv2.VideoCapture``-like source."""

    def __init__(self, argv: Sequence[str], label: str, *, timeout: float = 5.0):
        self.argv = list(argv)
        self.label = label
        self.timeout = timeout
        self._cond = threading.Condition()
        self._frame: bytes | None = None
        self._seq = 0
        self._taken = 0
        self._ended = False
        self._problem: str | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError:
            raise VisionError(f"{label}: program {self.argv[0]!r} not found") from None
        except PermissionError:
            raise VisionError(f"{label}: program {self.argv[0]!r} is not executable") from None
        except OSError as e:
            raise VisionError(f"{label}: cannot start {self.argv[0]!r}: {e.strerror or e}") from None
        self._threads = [threading.Thread(target=self._pump, daemon=True, name=f"mjpeg {label}"),
                         threading.Thread(target=self._errors, daemon=True, name=f"stderr {label}")]
        for t in self._threads:
            t.start()

    def _pump(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        splitter = JpegSplitter()
        try:
            while chunk := os.read(fd, 1 << 16):
                frames = splitter.feed(chunk)
                if frames:
                    with self._cond:
                        self._frame = frames[-1]
                        self._seq += len(frames)
                        self._cond.notify_all()
        except (OSError, VisionError) as e:
            with self._cond:
                self._problem = str(e)
        finally:
            with self._cond:
                self._ended = True
                self._cond.notify_all()

    def _errors(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for raw in self._proc.stderr:
            line = raw.decode("utf-8", "replace").strip()
            if line:
                self._stderr.append(line)

    def isOpened(self) -> bool:  # noqa: N802 (cv2.VideoCapture's name)
        return self._proc is not None

    def read(self) -> tuple[bool, np.ndarray | None]:
        """The next frame newer than the last one read (waiting up to the
        timeout for it), decoded to BGR; (False, None) when none came."""
        with self._cond:
            self._cond.wait_for(lambda: self._seq > self._taken or self._ended, self.timeout)
            if self._seq <= self._taken:
                return False, None
            data, self._taken = self._frame, self._seq
        assert data is not None
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise VisionError(f"{self.label}: the program wrote a frame that is not a JPEG")
        return True, img

    def problem(self) -> str:
        """Why no frame came, as far as can be told: the program's end and
        its last line of errors."""
        with self._cond:
            why = self._problem
        proc = self._proc
        code = None if proc is None else proc.poll()
        if code is None and proc is not None and self._ended:
            try:
                code = proc.wait(0.5)
            except subprocess.TimeoutExpired:
                pass
        parts = [why] if why else []
        if code is not None:
            parts.append(f"{os.path.basename(self.argv[0])} ended with status {code}")
        elif not self._ended:
            parts.append(f"{os.path.basename(self.argv[0])} is running but wrote no frame")
        if self._stderr:
            parts.append(f"its last message: {self._stderr[-1]}")
        return "; ".join(parts)

    def set(self, prop: int, value: float) -> bool:
        return False

    def get(self, prop: int) -> float:
        return 0.0

    def release(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(2.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for t in self._threads:
            t.join(1.0)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
