"""The seam between the one application and the kinds of robot it drives.

Klipper's toolhead asks its kinematics, never which printer it is; here the
faces (the terminal, the panel) and the service ask a :class:`RigKind` what
applies to the configured robot: which methods and metrics a run can honour,
whether its events tell how the rig holds the cube, whether the rig's line
is kept between runs, and which engine runs it. Three kinds answer: six
motors (one on each face), and the flipper and two-gripper mechanisms (robot
moves of servos and a turntable, planned and journalled in their own terms).

The two engines behind :meth:`RigKind.engine` (app/start.py and
app/mechanism_start.py) still differ inside; they meet here, behind one
constructor with the same options and one shape (``run``, ``stop``,
``estop``, ``face``, ``record``), so that no face tests the kind's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from solver.metrics import METHODS, RIG_METRICS

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


@dataclass(frozen=True)
class RigKind:
    """What differs between kinds of robot, as data and one factory."""

    name: str
    methods: tuple[str, ...]
    """The methods a press-start can turn (``[solver] method``, ``--method``)."""
    metrics: tuple[str, ...]
    """The metrics a face may ask a press-start to choose its solution in;
    none where the rig always chooses in its own (robot moves and seconds)."""
    tells_orientation: bool
    """Its events say how the rig holds the cube (``orientation``): the cube
    is turned whole between layer turns, so the page draws it as held."""
    keeps_its_line: bool
    """The rig's line is opened once and kept between runs (the six-motor
    rig's start button is heard on it); otherwise each run, jog or stop
    opens its own."""
    look_again_scans: bool
    """A doubtful scan is looked at again after a face is turned (six
    motors turn a face under the camera; a mechanism rescans instead)."""

    def engine(self, cfg: Config, face: Face, *, port: str | None = None, firmware: str | None = None,
               state_dir: str | Path | None = None, seed: int | None = None, scan_only: bool = False,
               sim_lighting: Callable[[int], Lighting] | None = None, started_by: str = "auto",
               no_wait: bool = False, paced: bool = True) -> RunEngine:
        """The engine of one run on ``cfg``'s rig. ``started_by``: who
        pressed start; ``no_wait``: the run begins without waiting for the
        rig's own start button (a rig that has one); ``paced``: a virtual
        rig's robot moves go at the pace a person watches (the panel), else
        as fast as it can (the terminal)."""
        if self.keeps_its_line:
            from .start import Engine

            return Engine(cfg, face, port=port, firmware=firmware, state_dir=state_dir, seed=seed,
                          no_wait=no_wait, scan_only=scan_only, sim_lighting=sim_lighting,
                          started_by=started_by)
        from .mechanism_start import MechanismEngine

        return MechanismEngine(cfg, face, port=port, firmware=firmware, state_dir=state_dir, seed=seed,
                               scan_only=scan_only, sim_lighting=sim_lighting, started_by=started_by,
                               paced=paced)


SIX_MOTORS = RigKind("six-motor", METHODS, RIG_METRICS, tells_orientation=False, keeps_its_line=True,
                     look_again_scans=True)
FLIPPER = RigKind("flipper", ("two-phase",), (), tells_orientation=True, keeps_its_line=False,
                  look_again_scans=False)
TWO_GRIPPERS = RigKind("two-gripper", ("two-phase",), (), tells_orientation=True, keeps_its_line=False,
                       look_again_scans=False)
KINDS: dict[str, RigKind] = {k.name: k for k in (SIX_MOTORS, FLIPPER, TWO_GRIPPERS)}
"""Every kind, by the name ``[rig] kind`` gives (CUBOTino's build is a flipper);
robot/rig/config.py's RIG_KINDS lists the same names."""


def kind_of(cfg: Config) -> RigKind:
    """The kind of ``cfg``'s rig (the config has checked the name)."""
    return KINDS[cfg.rig.kind]
