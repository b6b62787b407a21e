"""The seam between the one application and the kinds of robot it drives.

Klipper's toolhead asks its kinematics, never which printer it is; here the
faces (the terminal, the panel) and the service ask a :class:`RigKind` what
applies to the configured robot: which methods and metrics a run can honour,
whether its events tell how the rig holds the cube, whether the rig's line
is kept between runs (app/engines.py makes the engine that runs it). Three
kinds answer: six motors (one on each face), and the flipper and
two-gripper mechanisms (robot moves of servos and a turntable, planned and
journalled in their own terms).

This module is data at the bottom of the service layer: the solving
service and the engines read it, and it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from solver.metrics import METHODS, RIG_METRICS

if TYPE_CHECKING:
    from ..rig.config import Config


@dataclass(frozen=True)
class RigKind:
    """What differs between kinds of robot, as data."""

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
    scans_by_moving: bool
    """A scan is a run of the rig: it shows its one camera the six faces by
    whole-cube moves (`cuberobot scan` drives it); otherwise the cameras see
    the faces where the cube stands, and a scan moves nothing."""
    makes_robot_moves: bool
    """A solution is made as robot moves (servos and a turntable turning the
    cube whole and its layers), planned and priced in the rig's own time
    through its cost automaton, and journalled move by move
    (robot/rig/mechanisms/journal.py); otherwise as motor steps on each
    face, journalled by robot/rig/journal.py."""
    learns_colours: bool
    """A colour profile is learnt and used: the cameras see the faces in one
    light. A rig that shows its one camera each face reads each in its own
    picture's light and needs only the sticker grid."""
    turns: str = ""
    """How a run turns the cube, in a person's words (the panel's rig line)."""

    def for_page(self) -> dict[str, object]:
        """What applies to this rig, as the panel's page reads it: the page
        asks these, never which kind it is (issue 45)."""
        return {"methods": list(self.methods), "metrics": list(self.metrics),
                "robot_moves": self.makes_robot_moves, "tells_orientation": self.tells_orientation,
                "learns_colours": self.learns_colours, "start_button": self.keeps_its_line,
                "reached_each_time": not self.keeps_its_line, "turns": self.turns}


SIX_MOTORS = RigKind("six-motor", METHODS, RIG_METRICS, tells_orientation=False, keeps_its_line=True,
                     look_again_scans=True, scans_by_moving=False, makes_robot_moves=False,
                     learns_colours=True, turns="a face (or two opposite faces) at a time")
FLIPPER = RigKind("flipper", ("two-phase",), (), tells_orientation=True, keeps_its_line=False,
                  look_again_scans=False, scans_by_moving=True, makes_robot_moves=True, learns_colours=False,
                  turns="one robot move at a time (a flip, a spin, a layer turn)")
TWO_GRIPPERS = RigKind("two-gripper", ("two-phase",), (), tells_orientation=True, keeps_its_line=False,
                       look_again_scans=False, scans_by_moving=True, makes_robot_moves=True,
                       learns_colours=False, turns="one robot move at a time (a regrip, a layer turn)")
KINDS: dict[str, RigKind] = {k.name: k for k in (SIX_MOTORS, FLIPPER, TWO_GRIPPERS)}
"""Every kind, by the name ``[rig] kind`` gives (CUBOTino's build is a flipper);
robot/rig/config.py's RIG_KINDS lists the same names."""


def kind_of(cfg: Config) -> RigKind:
    """The kind of ``cfg``'s rig (the config has checked the name)."""
    return KINDS[cfg.rig.kind]
