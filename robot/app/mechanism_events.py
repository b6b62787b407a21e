"""The typed events of a run on a rig that moves the cube (flipper,
two-gripper), made from the mechanism's plan and state.

The six-motor engine tells its faces what happens through
:mod:`robot.app.events`; :func:`~robot.app.mechanism_start.run_mechanism_start`
tells them the same kinds through :class:`MechanismEvents`, so the web
panel and the terminal follow these rigs as they follow a six-motor one.
Each robot move (a flip, a spin, a regrip, a layer turn) is one "turn" of
the job: ``step`` is its text (``spin +1``, ``turn -1 (R')``) and the
optional fields say what it does to the cube:

- ``orientation``: the cube face in each rig slot U R F D L B after the
  move (:func:`~robot.rig.mechanisms.orientation.name`; ``URFDLB`` as the
  cube was put in);
- ``rotation``: a whole-cube turn, ``{"slot": "L", "quarters": 1}``
  (quarter turns clockwise seen from outside that rig slot);
- ``move``: the face turn a layer turn makes, in the cube's own letters;
- ``action``: the robot move as the journal writes it (``Action.parse`` reads it).

``state_facelets`` is in the cube's own frame, as everywhere else: a face
draws the cube with its faces where ``orientation`` puts them.

Stop and emergency stop end the run between two robot moves (each move is
journalled done before the run stops, so ``cuberobot resume`` can go on).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solver import FACES

from ..rig.mechanisms import park
from ..rig.mechanisms.base import Action, Mechanism, State
from ..rig.mechanisms.journal import MechanismJournal
from ..rig.mechanisms.left import parts_left
from ..rig.mechanisms.orientation import Orientation, face_move, name, rotate
from .doubt import doubtful_stickers, why_in_doubt
from .events import Face
from .record import RunRecord
from .run import Run

if TYPE_CHECKING:
    from vision.scan_result import ScanResult

    from ..rig.link import Link

_SLOT_ORDER = (3, 4, 0, 1, 2, 5)
"""Slots tried first for a whole-cube turn: the mechanisms turn the cube about D and L."""


def rotation_between(before: Orientation, after: Orientation, prefer: int = 0) -> dict[str, Any] | None:
    """The whole-cube turn that takes ``before`` to ``after`` as ``{"slot",
    "quarters"}`` (None: no turn, or more than one quarter axis apart).
    ``prefer``: the signed quarters tried first (a half turn either way is
    the same orientation; the move's own direction is the one drawn)."""
    if before == after:
        return None
    for q in dict.fromkeys((prefer or 1, 1, -1, 2)):
        for slot in _SLOT_ORDER:
            if rotate(before, slot, q) == after:
                return {"slot": FACES[slot], "quarters": q}
    return None


def move_fields(mech: Mechanism, state: State, action: Action) -> tuple[dict[str, Any], State]:
    """What one robot move does, as an event's optional fields, and the state after it."""
    out = mech.apply(state, action)
    before, after = mech.orientation(state), mech.orientation(out.after)
    fields: dict[str, Any] = {"action": str(action), "orientation": name(after)}
    if out.turn is not None:
        fields["move"] = str(face_move(before, *out.turn))
    turned = rotation_between(before, after, action.quarters)
    if turned is not None:
        fields["rotation"] = turned
    return fields, out.after


def step_texts(mech: Mechanism, state: State, actions: tuple[Action, ...] | list[Action]) -> list[str]:
    """Each robot move as the turn list shows it: ``flip``, ``spin +1``, ``turn -1 (R')``."""
    texts = []
    for a in actions:
        fields, state = move_fields(mech, state, a)
        texts.append(f"{a} ({fields['move']})" if "move" in fields else str(a))
    return texts


def robot_moves_summary(kind: str, record: RunRecord) -> str:
    """The line a terminal prints at the end of a run on a rig that moves the cube."""
    if record.status != "solved":
        return f"{kind} rig: {record.status}"
    return (f"solved on the {kind} rig in {record.length} moves: {record.turns} robot "
            f"moves, {record.estimated_turning_s or 0:.1f} s planned (scans {record.scan_moves or 0} robot "
            f"moves); confirmed {'solved' if record.confirmed else 'NOT solved'}")


BETWEEN_MOVES = " between two robot moves"
"""Where a stop ends a run of robot moves, as its words say."""


class MechanismEvents:
    """What a run of robot moves tells its faces, made from the mechanism's
    plan and state, over the one :class:`~robot.app.run.Run` (its face, its
    stop and emergency stop, honoured between robot moves): the robot moves
    as events, and the rig's state they leave."""

    def __init__(self, face: Face | None = None, *, started_by: str = "auto", pace: float | None = None,
                 run: Run | None = None):
        self.run = run if run is not None else Run(face if face is not None else Face(),
                                                    started_by=started_by, between=BETWEEN_MOVES)
        self.pace = pace
        """Times real time the robot moves of the solution take (each waits its planned
        seconds over this); None: no waiting (the terminal, the tests)."""
        self.emit, self.check_stop = self.run.emit, self.run.check_stop
        self.mech: Mechanism | None = None
        self.steps: list[str] = []
        self.actions: tuple[Action, ...] = ()
        self.plan_s = 0.0
        self.move_state: State | None = None
        self.t_turn = 0.0
        self.why = ""
        """Why the last scan is in doubt."""
        self.view = ""
        """The camera's view (its one [[view]])."""
        self.index = 0
        """The robot move of the solution that comes next."""

    @property
    def face(self) -> Face:
        return self.run.face

    def scan_mover(self, do: Callable[[Action], None], purpose: str,
                   start: State) -> Callable[[Action], None]:
        """``do`` for a scan plan's moves from ``start``: a stop is checked
        first (nothing of a scan is journalled), and each move is told as a
        ``scan-move`` (what it did to the held cube) once the rig has made
        it, paced as the solution's moves are."""
        state = start

        def moving(action: Action) -> None:
            nonlocal state
            self.check_stop()
            assert self.mech is not None
            fields, after = move_fields(self.mech, state, action)
            self.run.rig_state = None
            do(action)  # told once made: a move the rig refused or was stopped in is not reported
            self.run.rig_state = after
            self.emit("scan-move", "scanning", purpose=purpose, step=str(action), **fields)
            if self.pace:
                self.run.stop_flag.wait(self.mech.apply(state, action).seconds / self.pace)
            state = after
        return moving

    def park(self, do: Callable[[Action], None], start: State) -> None:
        """The parts brought to where the next job's homing takes them home
        (:func:`~robot.rig.mechanisms.parking`: a two-gripper's jaws left
        across squared), the cube left as it is: nothing to tell the faces,
        but :attr:`rig_state` follows every move."""
        def moving(action: Action) -> None:
            self.check_stop()
            self.run.rig_state = None
            do(action)

        def moved(state: State) -> None:
            self.run.rig_state = state

        assert self.mech is not None
        park(self.mech, start, moving, moved)

    def park_as_left(self, do: Callable[[Action], None], link: Link) -> None:
        """Before homing: a two-gripper's jaws that the last command on the
        rig left across (stopped between two moves) squared, by
        :meth:`park` from the note of where it left them
        (robot/rig/mechanisms/left.py); nothing when there is no note."""
        assert self.mech is not None
        left = parts_left(self.mech, link)
        if left is not None:
            self.park(do, left)

    # -- what the run tells ----------------------------------------------------
    def homed(self) -> None:
        """The rig went home: its parts are home and the cube is held as this
        run's scan will find it (the run's frame)."""
        assert self.mech is not None
        self.run.rig_state = self.mech.start()

    def started(self, mech: Mechanism) -> None:
        self.mech = mech
        self.run.restart_clock()
        self.run.record.start_by = self.run.started_by
        self.emit("started", "scanning", by=self.run.started_by)

    def scanning(self, purpose: str, view: str) -> None:
        self.check_stop()
        self.run.captures += 1
        self.view = view
        self.emit("scanning", "scanning", purpose=purpose, capture=self.run.captures, views=[view])

    def recapture(self, purpose: str, result: ScanResult, faces: list[int]) -> None:
        """Doubtful faces shown to the camera again, each turned a new way."""
        doubt = sorted(result.classification.suspects)
        self.emit("recapture", "scanning", f"{purpose}: {len(doubt)} doubtful sticker(s); showing face(s) "
                  f"{', '.join(FACES[f] for f in faces)} to the camera again", doubtful=doubt, views=[
                      FACES[f] for f in faces])
        self.scanning(purpose, self.view)

    def scan(self, purpose: str, result: ScanResult, min_confidence: float) -> None:
        """A scan read: its six pictures are the views the page shows."""
        c = result.classification
        if not result.images:
            result.images = dict(result.frames)
        doubt, why = doubtful_stickers(result, min_confidence), why_in_doubt(result)
        self.why = why
        self.run.results[purpose] = result
        self.emit("scan", "scanning", purpose=purpose, facelets=result.facelets, valid=bool(c.valid),
                  confidence=[round(float(x), 3) for x in c.confidence], doubtful=doubt,
                  why=why if doubt or not c.valid else "", views=sorted(result.images), result=result)

    def solution(self, facelets: str, moves: str, length: int, actions: tuple[Action, ...], start: State,
                 seconds: float, text: str) -> None:
        assert self.mech is not None
        self.emit("solving", "solving", facelets=facelets, method="two-phase")
        self.actions, self.plan_s, self.move_state = actions, seconds, start
        self.steps = step_texts(self.mech, start, actions)
        self.emit("solution", "turning", text, facelets=facelets, moves=moves, length=length,
                  steps=self.steps, estimated_s=round(seconds, 3), metric="rig",
                  orientation=name(self.mech.orientation(start)))
        self.check_stop()

    def mover(self, do: Callable[[Action], None]) -> Callable[[Action], None]:
        """``do`` that tells the faces each robot move as it starts."""
        self.t_turn = time.monotonic()

        def moving(action: Action) -> None:
            assert self.mech is not None and self.move_state is not None
            i = self.index
            fields, _ = move_fields(self.mech, self.move_state, action)
            self.emit("turn-started", "turning", index=i, turns=len(self.steps), step=self.steps[i], **fields)
            self.run.rig_state = None  # until the journal has it done (:meth:`done`)
            do(action)
            if self.pace:  # a stop cuts the wait short; it is honoured once the move is journalled
                self.run.stop_flag.wait(self.mech.apply(self.move_state, action).seconds / self.pace)
        self.index = 0
        return moving

    def done(self, i: int, state: State, cube: str) -> None:
        """The journal wrote move ``i`` done: the faces hear it, then a stop may end the run."""
        assert self.mech is not None and self.move_state is not None
        fields, _ = move_fields(self.mech, self.move_state, self.actions[i])
        self.move_state = self.run.rig_state = state
        self.index = i + 1
        elapsed = time.monotonic() - self.t_turn
        self.emit("turn-done", "turning", index=i, turns=len(self.steps), step=self.steps[i],
                  state_facelets=cube, ticks=None, elapsed_s=round(elapsed, 3),
                  remaining_s=round(max(0.0, self.plan_s - elapsed), 3), **fields)
        if i + 1 < len(self.actions):
            self.check_stop()

    def journal(self, folder: str | Path) -> MechanismJournal:
        """The run's journal, telling the faces each move done."""
        return TellingJournal(folder, self.done)

    def confirmed(self, solved: bool, facelets: str) -> None:
        self.emit("confirmed", solved=solved, facelets=facelets)

    def ended(self, run: RunRecord) -> None:
        """The run's end as its status says, unless already told."""
        if self.run.finished:
            return
        if run.status == "scan-doubtful":
            self.emit("finished", "failed", f"the scan is in doubt ({self.why or 'low confidence'}): "
                      "stopped before turning anything", status="scan-doubtful")
            return
        total = round(time.monotonic() - self.run.t0, 3)
        if run.status == "scanned":  # a scan only (the panel's Scan only), read and sure
            self.emit("finished", "done", f"scanned {run.facelets}", status="scanned", facelets=run.facelets)
        elif run.status == "solved":
            self.emit("finished", "done", "solved", status="solved", total_s=total)
        elif run.status == "already-solved":
            self.emit("finished", "done", "the cube is already solved: no layer turns",
                      status="already-solved")
        else:
            kind = self.mech.kind if self.mech is not None else "robot-move"
            self.emit("finished", "failed", robot_moves_summary(kind, run), status="failed")



class TellingJournal(MechanismJournal):
    """The mechanism journal that, once a move is written done, lets the run
    tell its faces (and stop there): the job's record is whole at every stop."""

    def __init__(self, folder: str | Path, on_done: Callable[[int, State, str], None]):
        super().__init__(folder)
        self.on_done = on_done

    def done(self, job: int, i: int, state: State, cube: str, mech: Mechanism) -> None:
        super().done(job, i, state, cube, mech)
        self.on_done(i, state, cube)
