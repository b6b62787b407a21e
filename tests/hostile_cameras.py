"""Helpers for the tests and the benchmark of command cameras that
misbehave (tests/standins/hostile_camera.py): a set-up that runs one as
its upper camera, and what is left running of it afterwards."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
CAMERA = ROOT / "tests" / "standins" / "hostile_camera.py"


def standin() -> ModuleType:
    """tests/standins/hostile_camera.py as a module (its frames, its plans)."""
    found = importlib.util.spec_from_file_location("hostile_camera", CAMERA)
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def camera_argv(plan: str | list) -> list[str]:
    """The command of a hostile camera following ``plan`` (a name of
    hostile_camera.PLANS, or a list of steps); "child-shell" is the issue's
    own: a shell that starts the silent camera behind it and waits on a
    sleep, holding the pipes."""
    camera = [sys.executable, "-I", str(CAMERA)]
    if plan == "child-shell":
        return ["sh", "-c", f"({' '.join(camera)} silent) & sleep 3600"]
    if plan == "child-shell-frames":
        return ["sh", "-c", f"({' '.join(camera)} silent) & {' '.join(camera)} frames"]
    return camera + [plan if isinstance(plan, str) else json.dumps(plan)]


def set_up_text(argv: list[str], timeout_s: float, *, warmup: int = 5, average: int = 3,
                lower: list[str] | None = None) -> str:
    """The default set-up (config/rig.toml) with its upper camera running
    ``argv`` (and its lower one ``lower``, when given)."""
    text = (ROOT / "config" / "rig.toml").read_text()
    for name, command in (("upper", argv), ("lower", lower)):
        if command is None:
            continue
        old = f'name = "{name}"\nsource = "sim"\n'
        assert old in text
        array = json.dumps(command)  # a TOML array of basic strings is JSON's
        text = text.replace(old, f'name = "{name}"\ncommand = {array}\ntimeout_s = {timeout_s}\n'
                                 f"warmup_frames = {warmup}\naverage_frames = {average}\n", 1)
    return text


def grey_frame(path: Path, width: int = 1280, height: int = 720) -> Path:
    """A mid-grey JPEG of the set-up's size."""
    import cv2
    import numpy as np

    cv2.imwrite(str(path), np.full((height, width, 3), 128, np.uint8))
    return path


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def running(pids: Path) -> list[int]:
    """The hostile camera's processes still running (not gone, not a
    zombie): each that wrote its pid into ``pids``, and every other process
    in their process groups (a shell around them, a sleep beside them)."""
    alive: set[int] = set()
    groups: set[str] = set()
    for f in pids.iterdir():
        try:
            started, group = f.read_text().split()
        except ValueError:  # being written
            continue
        groups.add(group)
        st = _stat(int(f.name))
        if st is not None and st[0] != "Z" and st[19] == started:
            alive.add(int(f.name))
    groups.discard(str(os.getpgrp()))  # a camera run in our own group (not a guarded one): its pids only
    if groups:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                st = _stat(int(entry.name))
                if st is not None and st[0] != "Z" and st[2] in groups:
                    alive.add(int(entry.name))
    return sorted(alive)


def wait_gone(pids: Path, limit_s: float) -> tuple[list[int], float]:
    """(what is still running, seconds waited): looked at until nothing is,
    or ``limit_s`` passes."""
    t0 = time.monotonic()
    while (left := running(pids)) and time.monotonic() - t0 < limit_s:
        time.sleep(0.01)
    return left, time.monotonic() - t0


def wait_started(pids: Path, limit_s: float, count: int = 1) -> list[int]:
    """The camera's recorded processes once ``count`` of them run."""
    deadline = time.monotonic() + limit_s
    while len(alive := running(pids)) < count:
        assert time.monotonic() < deadline, f"the camera did not start within {limit_s} s"
        time.sleep(0.01)
    return alive


class PeakMemory:
    """This process's peak resident memory from now on (VmHWM, reset
    through /proc/self/clear_refs), in MB above what it was."""

    def __enter__(self) -> PeakMemory:
        self.base = self._rss()
        Path("/proc/self/clear_refs").write_text("5")
        return self

    def __exit__(self, *exc: object) -> None:
        self.added = self._field("VmHWM") / 1024 - self.base

    def _rss(self) -> float:
        return self._field("VmRSS") / 1024

    @staticmethod
    def _field(name: str) -> int:
        line = next(ln for ln in Path("/proc/self/status").read_text().splitlines() if ln.startswith(name))
        return int(line.split()[1])
