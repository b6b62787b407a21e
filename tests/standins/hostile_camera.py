"""A camera command that misbehaves on purpose, for the tests and the
benchmark of command cameras (vision/stream.py): it follows a plan of steps
given as JSON in its first argument, or one of the named plans of
:data:`PLANS`.

    python hostile_camera.py silent
    python hostile_camera.py '[["frame"], ["err", 100], ["exit", 3]]'
    python hostile_camera.py @plan.json

Every process it makes (itself, and each child it starts) writes a file
named by its pid into the folder CUBEROBOT_CAMERA_PIDS (when set), holding
its start time as /proc has it and its process group, so that a test can
tell, once the command under test has returned, whether any of them, or
anything else in their group (a shell around it), is still running (the
start time tells a reused pid apart).

Steps:

- ``["frame"]``: write the JPEG in the file CUBEROBOT_CAMERA_FRAME (a good
  frame, made by the test), or a small grey JPEG when unset;
- ``["file", PATH]``: the bytes of that file;
- ``["huge", W, H]``: a JPEG whose header claims W x H pixels (a small
  picture's header rewritten; the decoder allocates W x H before finding
  the data short);
- ``["half"]``: the first half of a frame (a camera that dies mid-frame);
- ``["bytes", HEX]``: these bytes on standard output;
- ``["err", N]``: N bytes of ``x`` on standard error, no newline; N < 0:
  without end;
- ``["line", TEXT]``: TEXT and a newline on standard error;
- ``["sleep", S]``;
- ``["child"]``: start a child that keeps both pipes open and sleeps for
  an hour (a camera's helper that outlives it);
- ``["ignore-term"]``: from now on ignore SIGTERM;
- ``["close"]``: close standard output;
- ``["loop", STEPS]``: the steps over and over;
- ``["exit", CODE]``.

The plan ending without an exit step ends with status 0. It imports only
the standard library, so that it starts in a few milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

PLANS: dict[str, list[Any]] = {
    "silent": [["sleep", 3600]],
    "frames": [["loop", [["frame"], ["sleep", 0.02]]]],
    "stderr": [["err", -1]],
    "huge": [["loop", [["huge", 30000, 30000], ["sleep", 0.01]]]],
    "cut": [["frame"], ["half"], ["line", "camera: lost the sensor mid-frame"], ["exit", 3]],
    "child": [["child"], ["sleep", 3600]],
    "stubborn": [["ignore-term"], ["child"], ["sleep", 3600]],
}

# A 16x16 grey baseline JPEG (made once with OpenCV, quality 90): the frame
# when no file is given, and the body a "huge" header is put on.
SMALL_JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300030202030202030303030403030405080505040405"
    "0a070706080c0a0c0c0b0a0b0b0d0e12100d0e110e0b0b1016101113141515150c0f171816141812141514ffdb00"
    "430103040405040509050509140d0b0d141414141414141414141414141414141414141414141414141414141414"
    "1414141414141414141414141414141414141414ffc00011080010001003012200021101031101ffc4001f000001"
    "0501010101010100000000000000000102030405060708090a0bffc400b510000201030302040305050404000001"
    "7d01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25"
    "262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a8384"
    "85868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5"
    "d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffc4001f0100030101010101010101010000000000"
    "000102030405060708090a0bffc400b5110002010204040304070504040001027700010203110405213106124151"
    "0761711322328108144291a1b1c109233352f0156272d10a162434e125f11718191a262728292a35363738393a43"
    "4445464748494a535455565758595a636465666768696a737475767778797a82838485868788898a929394959697"
    "98999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8"
    "e9eaf2f3f4f5f6f7f8f9faffda000c03010002110311003f0028a28a00ffd9")


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except OSError:
        return "?"


def _record() -> None:
    folder = os.environ.get("CUBEROBOT_CAMERA_PIDS")
    if folder:
        pid = os.getpid()
        with open(os.path.join(folder, str(pid)), "w") as f:
            f.write(f"{_start_time(pid)} {os.getpgid(0)}")


def _frame() -> bytes:
    path = os.environ.get("CUBEROBOT_CAMERA_FRAME")
    if path:
        with open(path, "rb") as f:
            return f.read()
    return SMALL_JPEG


def _huge(width: int, height: int) -> bytes:
    data = bytearray(SMALL_JPEG)
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _child() -> None:
    if os.fork() == 0:
        try:
            _record()
            time.sleep(3600)
        finally:
            os._exit(0)


def run(steps: list[Any]) -> int | None:
    for step in steps:
        kind, args = step[0], step[1:]
        if kind == "frame":
            _write(1, _frame())
        elif kind == "file":
            with open(args[0], "rb") as f:
                _write(1, f.read())
        elif kind == "huge":
            _write(1, _huge(int(args[0]), int(args[1])))
        elif kind == "half":
            frame = _frame()
            _write(1, frame[:len(frame) // 2])
        elif kind == "bytes":
            _write(1, bytes.fromhex(args[0]))
        elif kind == "err":
            n = int(args[0])
            chunk = b"x" * 65536
            while n != 0:
                part = chunk if n < 0 else chunk[:min(n, len(chunk))]
                _write(2, part)
                n = n if n < 0 else n - len(part)
        elif kind == "line":
            _write(2, str(args[0]).encode() + b"\n")
        elif kind == "sleep":
            time.sleep(float(args[0]))
        elif kind == "child":
            _child()
        elif kind == "ignore-term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        elif kind == "close":
            os.close(1)
        elif kind == "loop":
            while True:
                code = run(args[0])
                if code is not None:
                    return code
        elif kind == "exit":
            return int(args[0])
        else:
            raise SystemExit(f"hostile camera: unknown step {kind!r}")
    return None


def main() -> int:
    _record()
    plan = sys.argv[1] if len(sys.argv) > 1 else "silent"
    if plan.startswith("@"):
        with open(plan[1:]) as f:
            plan = f.read()
    steps = PLANS[plan] if plan in PLANS else json.loads(plan)
    try:
        return run(steps) or 0
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
