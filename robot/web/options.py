"""How the panel starts its runs: the rig and where records go, as `serve`'s
options set them (robot/web/server.py); read by the run controller
(robot/web/runs.py) and by the rig's holder between runs (robot/web/between_runs.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Options:
    """How runs are started: the rig and where records go."""

    rig_port: str | None = None
    firmware: str | None = None
    state_dir: str | None = None
    sim_lighting: Callable[[int], Any] | None = None
    profile_dir: str | None = None
    """Where the page's colour calibration saves profiles (None: the user's)."""
    settings_dir: str | None = None
    """Where the page's sticker grid and profile choice are kept (None: the
    user's config folder, which every command reads: robot/rig/settings.py)."""
    firmware_speed: str = "1"
    """The emulated rig's pace with ``firmware`` (1: real time, as a board turns)."""
    ports_root: str = "/"
    """Where the serial ports the page offers are looked for (robot/app/ports.py): the machine's
    own /dev and /sys; a test gives a folder laid out as / is, its device nodes linked to sim-rigs."""
