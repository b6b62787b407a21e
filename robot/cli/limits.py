"""The command line's own face of the input limits (robot/app/limits.py):
argparse types that refuse a bad option value in argparse's words, before any
command runs."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from ..app.limits import MAX_PATH_CHARS, MAX_PATH_DEPTH, MAX_TEXT_CHARS, shown


def whole(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``lo`` to ``hi``."""

    def convert(text: str) -> int:
        want = f"a whole number from {lo} to {hi}"
        t = text.strip()
        if len(t) > 24:
            raise argparse.ArgumentTypeError(f"expected {want}, got {shown(text)}")
        try:
            value = int(t)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {want}, got {shown(text)}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"expected {want}, got {value}")
        return value

    convert.__name__ = "whole number"
    return convert


def number(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse ``type``: a finite number from ``lo`` to ``hi``."""

    def convert(text: str) -> float:
        want = f"a number from {lo:g} to {hi:g}"
        t = text.strip()
        if len(t) > 40:
            raise argparse.ArgumentTypeError(f"expected {want}, got {shown(text)}")
        try:
            value = float(t)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {want}, got {shown(text)}") from None
        if not (math.isfinite(value) and lo <= value <= hi):
            raise argparse.ArgumentTypeError(f"expected {want}, got {shown(text)}")
        return value

    convert.__name__ = "number"
    return convert


def text(option: str, limit: int = MAX_TEXT_CHARS) -> Callable[[str], str]:
    """An argparse ``type``: printable text of at most ``limit`` characters."""

    def convert(value: str) -> str:
        if len(value) > limit:
            raise argparse.ArgumentTypeError(f"{len(value)} characters is too long (at most {limit})")
        if not value.isprintable():
            raise argparse.ArgumentTypeError(f"{shown(value)} has a control character; give plain text")
        return value

    convert.__name__ = option
    return convert


def path(value: str) -> str:
    """An argparse ``type``: a file or folder name (not empty, no NUL, not absurdly long)."""
    if not value:
        raise argparse.ArgumentTypeError("an empty file name")
    if len(value) > MAX_PATH_CHARS:
        raise argparse.ArgumentTypeError(f"a file name of {len(value)} characters (at most {MAX_PATH_CHARS})")
    if "\0" in value:
        raise argparse.ArgumentTypeError(f"{shown(value)} has a NUL character, which no file name can hold")
    depth = value.replace("\\", "/").count("/")
    if depth > MAX_PATH_DEPTH:
        raise argparse.ArgumentTypeError(f"a path {depth} folders deep (at most {MAX_PATH_DEPTH})")
    return value


path.__name__ = "file name"


def sim_speed(value: str) -> str:
    """An argparse ``type``: a virtual rig's --speed, 'max' or 0.01 to 10000 times real time."""
    from ..sim.virtual_rig import make_clock  # lazy: the simulation plugs in when asked for

    if len(value) > 40:
        raise argparse.ArgumentTypeError(f"expected 'max' or a number, got {shown(value)}")
    try:
        make_clock(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return value


sim_speed.__name__ = "speed"

MIN_PORT_SIM_SPEED = 0.25
"""The slowest a rig behind a port may run: the host does not know its
time scale, and stops a move that takes over about four and a half times
its plan as stalled (robot/rig/job.py ``check_head``)."""


def port_sim_speed(value: str) -> str:
    """An argparse ``type``: `sim-rig`'s --speed, 'max' or 0.25 to 10000
    times real time (a slower rig behind a port would end every job
    "did not finish")."""
    from ..sim.virtual_rig import RealClock, make_clock  # lazy: the simulation plugs in when asked for

    value = sim_speed(value)
    clock = make_clock(value)  # 'max', 'MAX', 'inf' and 'event' are the event clock
    if isinstance(clock, RealClock) and float(value) < MIN_PORT_SIM_SPEED:
        raise argparse.ArgumentTypeError(
            f"{shown(value)} is slower than a rig behind a port may run: the host, which cannot know its "
            f"speed, would take each move for a stalled one; give {MIN_PORT_SIM_SPEED:g} to 10000, or 'max'")
    return value


port_sim_speed.__name__ = "speed"
