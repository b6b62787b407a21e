"""Frames from a program that writes MJPEG to its standard output: the
Raspberry Pi's own camera through ``rpicam-vid --codec mjpeg -o -`` (called
``libcamera-vid`` before Raspberry Pi OS 12), or any command a maker has
that does the same.

Why a pipe and not OpenCV: libcamera cameras are not V4L2 capture devices
OpenCV can open, and the opencv-python wheels are built without GStreamer;
a JPEG stream on a pipe needs nothing but ``cv2.imdecode``.

:class:`CommandCapture` has the part of ``cv2.VideoCapture``'s interface
the camera code uses (``isOpened``, ``read``, ``set``, ``get``,
``release``), so a command camera goes through the same warm-up, averaging
and size checks as a webcam. A thread drains the pipes all the time and
keeps only the newest frame: a frame read is never older than the one read
before it, and a camera left alone does not block its program.

A camera program is someone else's code, and is held to bounds:

- it runs under vision/camera_guard.py, in a process group of its own,
  and the whole group is ended on every way out: the camera released
  (after an error, Ctrl-C, a timeout), the program ending by itself, the
  command killed (even with SIGKILL);
- a frame whose header claims more pixels than the set-up's camera has is
  refused before anything is decoded, and bytes that never make a frame
  are refused at :data:`MAX_FRAME_BYTES`;
- of its standard error only the last :data:`STDERR_KEEP` bytes are kept
  (for the error message), whether or not it writes newlines;
- a read waits at most the camera's ``timeout_s``, and no read of a pipe
  blocks: one thread waits on both pipes and a wake-up pipe together, so a
  child that keeps the pipes open after the program is gone cannot hold up
  the release.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

from .errors import VisionError
from .setup import CameraSpec, libcamera_index

MAX_FRAME_BYTES = 32 << 20
"""A JPEG of 16384 x 16384 at the best quality is well under this; more
bytes without a frame's end is not MJPEG."""
STDERR_KEEP = 4096
"""The bytes of a camera program's standard error kept: its last message is
in them, and a program that writes without end (or without a newline)
costs no more."""
MESSAGE_CHARS = 200
"""A camera program's last message, as the error quotes it."""
READ_CHUNK = 1 << 16
GRACE_S = 1.0
"""A camera program's time to end on SIGTERM (camera_guard.py gives it
this) before its group is killed; the release waits this and a second more
for the guard."""
GUARD = Path(__file__).with_name("camera_guard.py")
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

    def __init__(self, limit: int = MAX_FRAME_BYTES, max_size: tuple[int, int] | None = None):
        self.limit = limit
        self.max_size = max_size
        """(width, height): a frame whose header (SOF) claims more in either
        is refused (VisionError) as soon as its header is in, undecoded."""
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

    def _check_size(self, width: int, height: int) -> None:
        assert self.max_size is not None
        most_w, most_h = self.max_size
        if width > most_w or height > most_h:
            raise VisionError(f"the program sent a frame of {width}x{height} pixels, more than the set-up's "
                              f"{most_w}x{most_h} (the most a frame may have here; refused undecoded): fix "
                              "the program's size or the set-up's width and height")

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
                if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC) and self.max_size is not None:
                    if p + 9 > len(buf):  # a frame header: its size is read before going on
                        return None
                    self._check_size((buf[p + 7] << 8) | buf[p + 8], (buf[p + 5] << 8) | buf[p + 6])
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



def resolve_program(program: str, label: str) -> str:
    """The path of a camera's program, looked up on PATH as a shell would
    (its guard starts it by path); one line naming the camera when it is
    not there or cannot be run."""
    found = program if os.sep in program else shutil.which(program) or shutil.which(program, mode=os.F_OK)
    if found is None or not os.path.exists(found):
        raise VisionError(f"{label}: program {program!r} not found")
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise VisionError(f"{label}: program {program!r} is not executable")
    return found


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # nobody left in it


def _exit_status(pid: int) -> int | None:
    """A child's exit status once it has ended, without reaping it (so its
    pid, which is its group's id, is not given to another process while the
    group may still have members to kill); None while it runs."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return -1
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


class CommandCapture:
    """A running MJPEG-writing program as a ``cv2.VideoCapture``-like source.

    ``size`` is the set-up's (width, height): a frame claiming more is
    refused from its header. ``timeout`` bounds each :meth:`read`. Open and
    release it in one thread (see vision/camera_guard.py: the guard is told
    when the thread that started it ends)."""

    def __init__(self, argv: Sequence[str], label: str, *, timeout: float = 5.0,
                 size: tuple[int, int] | None = None):
        self.argv = list(argv)
        self.label = label
        self.timeout = timeout
        self.size = size
        self._cond = threading.Condition()
        self._frame: bytes | None = None
        self._seq = 0
        self._taken = 0
        self._ended = False  # no more frames will come (standard output ended, or was refused)
        self._refused: str | None = None  # why the program's output was refused
        self._stderr = bytearray()  # the last STDERR_KEEP bytes
        program = resolve_program(self.argv[0], label)
        wake_r, self._wake = os.pipe()
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-S", str(GUARD), str(os.getpid()), program, *self.argv[1:]],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True)
        except OSError as e:
            os.close(wake_r)
            os.close(self._wake)
            raise VisionError(f"{label}: cannot start {self.argv[0]!r}: {e.strerror or e}") from None
        self._thread = threading.Thread(target=self._pump, args=(wake_r,), daemon=True,
                                        name=f"camera {label}")
        self._thread.start()

    def _pump(self, wake: int) -> None:
        """Drain both pipes until the camera is released (a byte on the wake
        pipe) or both have ended: the newest whole frame kept, the tail of
        the errors kept, nothing read blocking."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.fileno(), proc.stderr.fileno()
        splitter = JpegSplitter(max_size=self.size)
        sel = selectors.DefaultSelector()
        try:
            for fd in (out, err):
                os.set_blocking(fd, False)
                sel.register(fd, selectors.EVENT_READ)
            sel.register(wake, selectors.EVENT_READ)
            while len(sel.get_map()) > 1:
                for key, _ in sel.select():
                    if key.fd == wake:
                        return
                    try:
                        chunk = os.read(key.fd, READ_CHUNK)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        sel.unregister(key.fd)
                        if key.fd == out:
                            self._finish()
                    elif key.fd == err:
                        self._stderr += chunk
                        del self._stderr[:-STDERR_KEEP]
                    else:
                        try:
                            frames = splitter.feed(chunk)
                        except VisionError as e:
                            sel.unregister(out)  # nothing more is read of it; the release ends the program
                            self._finish(f"{self.label}: {e}")
                            continue
                        if frames:
                            with self._cond:
                                self._frame = frames[-1]
                                self._seq += len(frames)
                                self._cond.notify_all()
        except OSError as e:
            self._finish(f"{self.label}: cannot read the program's output: {e.strerror or e}")
        finally:
            sel.close()
            os.close(wake)
            self._finish()

    def _finish(self, refused: str | None = None) -> None:
        with self._cond:
            self._ended = True
            if refused and self._refused is None:
                self._refused = refused
            self._cond.notify_all()

    def isOpened(self) -> bool:  # noqa: N802 (cv2.VideoCapture's name)
        return self._proc is not None

    def read(self) -> tuple[bool, np.ndarray | None]:
        """The next frame newer than the last one read (waiting up to the
        timeout for it), decoded to BGR; (False, None) when none came; a
        VisionError naming the camera when its output was refused."""
        with self._cond:
            self._cond.wait_for(lambda: self._seq > self._taken or self._ended, self.timeout)
            if self._seq <= self._taken:
                if self._refused:
                    raise VisionError(self._refused)
                return False, None
            data, self._taken = self._frame, self._seq
        assert data is not None
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise VisionError(f"{self.label}: the program wrote a frame that is not a JPEG")
        return True, img

    def last_message(self) -> str:
        """The program's last line of errors (printable, at most MESSAGE_CHARS), or ""."""
        text = bytes(self._stderr).decode("utf-8", "replace")
        line = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
        line = "".join(c if c.isprintable() else " " for c in line)
        return line if len(line) <= MESSAGE_CHARS else "..." + line[-MESSAGE_CHARS:]

    def problem(self) -> str:
        """Why no frame came, as far as can be told: the program's end and
        its last line of errors."""
        proc = self._proc
        code = None if proc is None else _exit_status(proc.pid)
        with self._cond:
            ended = self._ended
        if code is None and proc is not None and ended:  # its output ended: it is ending, most likely
            deadline = time.monotonic() + 0.5
            while code is None and time.monotonic() < deadline:
                time.sleep(0.01)
                code = _exit_status(proc.pid)
        name = os.path.basename(self.argv[0])
        parts = []
        if code is not None:
            parts.append(f"{name} ended with status {code}")
        elif not ended:
            parts.append(f"{name} is running but sent no frame within {self.timeout:g} s")
        else:
            parts.append(f"{name} closed its output")
        message = self.last_message()
        if message:
            parts.append(f"its last message: {message}")
        return "; ".join(parts)

    def set(self, prop: int, value: float) -> bool:
        return False

    def get(self, prop: int) -> float:
        return 0.0

    def release(self) -> None:
        """End the program and everything it started (SIGTERM to its group,
        SIGKILL to what is left once its guard has ended or after GRACE_S
        and a second), then stop the reading thread. Bounded in time
        whatever the program does."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S + 1.0
        while _exit_status(proc.pid) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        _signal_group(proc.pid, signal.SIGKILL)  # the guard not yet reaped: its group's id is still its own
        proc.wait()
        try:
            os.write(self._wake, b"x")
        except OSError:
            pass
        self._thread.join()
        os.close(self._wake)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
