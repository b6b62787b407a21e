"""The engine of a run, whichever kind of rig it runs on (issue 45).

The two engines (app/start.py for six motors, app/mechanism_start.py for a
flipper or two-gripper) still differ inside; they meet here, behind one
constructor with the same options and one shape (:class:`RunEngine`), so
that a face starts, watches and stops a run without naming the kind.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .kinds import kind_of
from .start import Engine

if TYPE_CHECKING:
    from vision.render import Lighting

    from ..rig.config import Config
    from .events import Face
    from .record import RunRecord


class RunEngine(Protocol):
    """What a face holds of a run, whichever engine runs it."""

    stop_flag: Any

    @property
    def record(self) -> RunRecord | None:
        """The run's record, kept as the run went (None before a run kept one)."""

    @property
    def face(self) -> Face: ...

    @face.setter
    def face(self, face: Face) -> None: ...

    def run(self) -> Any:
        """The whole run, told to the face; raises what ended it."""

    def stop(self) -> None:
        """End the run before its next step."""

    def estop(self) -> bool:
        """The emergency stop onto the rig's line now; True when a line took it."""


def engine_for(cfg: Config, face: Face, *, port: str | None = None, firmware: str | None = None,
               state_dir: str | Path | None = None, seed: int | None = None, scan_only: bool = False,
               sim_lighting: Callable[[int], Lighting] | None = None, started_by: str = "auto",
               no_wait: bool = False, paced: bool = True) -> RunEngine:
    """The engine of one run on ``cfg``'s rig. ``started_by``: who pressed
    start; ``no_wait``: the run begins without waiting for the rig's own
    start button (a rig that has one); ``paced``: a virtual rig's robot
    moves go at the pace a person watches (the panel), else as fast as it
    can (the terminal)."""
    if kind_of(cfg).keeps_its_line:
        return Engine(cfg, face, port=port, firmware=firmware, state_dir=state_dir, seed=seed,
                      no_wait=no_wait, scan_only=scan_only, sim_lighting=sim_lighting, started_by=started_by)
    from .mechanism_start import MechanismEngine  # lazy: loads OpenCV and numba

    return MechanismEngine(cfg, face, port=port, firmware=firmware, state_dir=state_dir, seed=seed,
                           scan_only=scan_only, sim_lighting=sim_lighting, started_by=started_by, paced=paced)
