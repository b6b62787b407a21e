"""The one dry run, on any kind of rig (issue 45): a plan turned without a
scan, on the virtual rig of its own or on the rig behind a port, shared by
`cuberobot dry-run` and the web panel's dry-run card.

What every dry run does lives here: the request's bounds, checked before
anything opens (:func:`check_ask`), and the shell a page watches
(:class:`WatchedDryRun`): the opening event, every end told once as a
``finished`` event, the stop and the emergency stop from any thread. What
differs between kinds is a :class:`DryRunPart` the kind's work makes
(app/kindwork.py): six motors plan motor steps and turn them
(app/dryrun_six_motors.py); a flipper or two grippers plan robot moves and
make them (app/dryrun_robot_moves.py). The shell asks the part, never
which kind it is.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Protocol

from ..rig.errors import RigError, UserError
from ..rig.mechanisms.base import ImpossibleMove
from .events import Event, Face, Stopped
from .limits import (
    MAX_DRY_RUN_MOVES,
    MAX_RENDER_MOVES,
    check_cube_text,
    check_moves,
    check_output_file,
    check_port_and_folder,
)


@dataclass(frozen=True)
class DryRunAsk:
    """A dry run as the terminal asks for it (`cuberobot dry-run`), on any
    kind of rig: the moves, the cube they start from (as given: ``-`` reads
    it from standard input), the rig (None: a virtual one of its own), its
    pace, the journal's folder and where to draw it."""

    moves: str
    start: str | None = None
    port: str | None = None
    speed: str = "max"
    state_dir: str | None = None
    render: str | None = None

    @property
    def simulated(self) -> bool:
        """A virtual rig of the dry run's own, with a journal of its own unless a folder is given."""
        return self.port is None or self.port.startswith("sim://")


def check_ask(ask: DryRunAsk) -> None:
    """The bounds every dry run keeps, before anything is planned or opened:
    at most 1000 moves (100 when they are drawn), the starting cube's text,
    the picture's file, and the port with its journal's folder."""
    if ask.render:
        check_moves(ask.moves, "MOVES", MAX_RENDER_MOVES, " (with --render: drawing takes a while a move)")
        check_output_file(ask.render, "--render")
    else:
        check_moves(ask.moves, "MOVES", MAX_DRY_RUN_MOVES, " (the rig makes each move)")
    if ask.start:
        check_cube_text(ask.start, "--from")
    check_port_and_folder(ask.port, ask.state_dir, default_folder=not ask.simulated)


class DryRunPart(Protocol):
    """A kind's dry run for a page to watch, planned, bounded and drawn when
    made, on a virtual rig of its own (app/dryrun_six_motors.py,
    app/dryrun_robot_moves.py)."""

    picture: bytes
    """Its timeline (PNG): the motors', or the rig's parts'."""
    rig: str
    """The rig it runs on, in a person's words ("the virtual flipper rig")."""

    def opening(self) -> Event:
        """The event that opens it: the moves, the steps, the estimate."""

    def make(self, face: Face, stop_flag: threading.Event) -> Event:
        """Make the moves, telling ``face`` each, stopping between two once
        ``stop_flag`` is set (:class:`Stopped`); the ``finished`` event of a
        dry run that got to its end. Raises what ended it otherwise."""

    def estop(self) -> bool:
        """The emergency stop onto the rig's line; False when no line is open yet."""


class WatchedDryRun:
    """A dry run a page watches (the panel's dry-run card), on any kind of
    rig: its part planned and drew it; this shell tells its events, ends it
    once, and takes the stop and the emergency stop from any thread."""

    def __init__(self, part: DryRunPart):
        self.part = part
        self.picture = part.picture
        self.face: Face | None = None
        self.stop_flag = threading.Event()
        self.estop_sent = False

    def begin(self, face: Face, stop_flag: threading.Event) -> Event:
        """Its events go to ``face`` and ``stop_flag`` stops it; the event that opens it."""
        self.face, self.stop_flag = face, stop_flag
        return self.part.opening()

    def run(self) -> Event:
        """The dry run, its moves told to the face; the ``finished`` event of however it ended."""
        assert self.face is not None, "begin() first"
        try:
            return self.part.make(self.face, self.stop_flag)
        except Stopped as e:
            estop = e.estop or self.estop_sent
            return Event("finished", "stopped", {"status": "stopped", "estop": estop},
                         f"emergency stop: {self.part.rig} was stopped" if estop else str(e))
        except (RigError, UserError, ImpossibleMove) as e:
            if self.estop_sent:  # the rig stopped on the emergency stop it was sent, and says so
                return Event("finished", "stopped", {"status": "stopped", "estop": True},
                             f"emergency stop: {e}")
            return Event("finished", "failed", {"status": "failed", "estop": False}, str(e))

    def estop(self) -> dict[str, Any]:
        """The emergency stop onto the rig's line if one is open; the dry run
        ends before its next move either way."""
        self.estop_sent = True
        self.stop_flag.set()
        if self.part.estop():
            return {"sent": True, "message": f"emergency stop sent to {self.part.rig}"}
        return {"sent": False, "message": f"the dry run stops before its next move ({self.part.rig} had no "
                                          "line open yet to send the emergency stop on)"}
