"""The journal of a job on a rig that moves the cube: where the cube is
held, not only what state it is in.

A six-motor rig never moves the cube, so its journal need only say which
turns were done (robot/rig/journal.py). A flipper or two-gripper rig also
turns and regrips the whole cube; after a crash the next move is right
only if the rig still holds the cube the way the plan expects. So every
robot move is written as "sent" (forced to disk) before it goes out, and as
"done" with the mechanism's state after it (the orientation, the turntable,
the cover or the grippers) and the cube's state when the rig reports it.

Resume believes only what was written as done. If the last move was sent
and not reported done (a power cut or a kill under way), nobody knows
whether the cube was tipped, spun or turned: resume ends the job "state
unknown: scan again" and moves nothing. A job stopped between two moves
goes on from the state recorded after the first. One JSON object per
line; a torn last line is ignored, anything else that does not read is
reported, never passed over.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solver import CubeError, parse_facelets

from ..errors import UserError
from ..journal import ROTATE_BYTES, StorageError, check_file, open_append, read_bounded
from .base import Action, ImpossibleMove, Mechanism, Outcome, State, state_from_json
from .orientation import HOME, all_orientations, face_move, name

FILENAME = "mechanism-journal.jsonl"
UNKNOWN = "state unknown: scan again"


@dataclass
class MechanismJob:
    """One job as the journal tells it."""

    job: int
    kind: str
    start: str
    actions: list[Action]
    state: State
    """The mechanism's state after the last move reported done."""
    cube: str
    """The cube (solver's frame) after the last move reported done."""
    done: int = 0
    sent: int = 0
    end: str | None = None
    orientations: list[str] = field(default_factory=list)
    sent_ids: list[int] = field(default_factory=list)
    """The protocol move ids of the last move sent (its commands'), when the journal has them."""
    boot_id: int | None = None
    """The rig's boot id when the job started (None: not known): a rig that
    has restarted since may have let its servos go."""
    last_id: int | None = None
    """The id of the last command the rig should have reported done: the
    last move's, or before the first, the last the run sent before the job
    (None: not known). A rig whose last DONE is another has moved since."""


class MechanismJournal:
    """Append-only, one record a line, each forced to disk before the rig acts on it.

    The file is read and written as the six-motor journal's is
    (robot/rig/journal.py): what is not a regular file of a journal's size
    (a FIFO, a device, a folder, or a link to one) is named, never read or
    waited on; every record is checked, field by field, before it is
    believed."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / FILENAME
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create the state directory {self.path.parent}: "
                            f"{e.strerror or e}") from None

    def _write(self, record: dict) -> None:
        check_file(self.path)
        with open_append(self.path) as f:
            try:
                f.write(json.dumps(record, separators=(",", ":")) + "\n")
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:
                raise StorageError(f"cannot write the journal {self.path}: {e.strerror or e}; nothing was "
                                   "sent to the rig after the last record that was written") from None

    def start_job(self, mech: Mechanism, start_cube: str, actions: Sequence[Action], state: State,
                  boot_id: int | None = None, last_id: int | None = None) -> int:
        last = self.last()
        job = 1 if last is None else last.job + 1
        if last is not None and last.end is not None and self._size() > ROTATE_BYTES:
            self._rotate()
        record = {"type": "job", "job": job, "kind": mech.kind, "start": start_cube,
                  "actions": [str(a) for a in actions], "state": state,
                  "orientation": name(mech.orientation(state))}
        if boot_id is not None:
            record["boot_id"] = boot_id
        if last_id is not None:
            record["last_id"] = last_id
        self._write(record)
        return job

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def _rotate(self) -> None:
        """Set the journal aside (as the six-motor journal is, between jobs
        once it is long) so that it never grows to more than a journal may
        be: the next job's number carries on."""
        aside = self.path.with_name(FILENAME.replace(".jsonl", ".1.jsonl"))
        try:
            self.path.replace(aside)
        except OSError as e:
            raise UserError(f"cannot set the full journal {self.path} aside: {e.strerror or e}") from None

    def sent(self, job: int, i: int, ids: Sequence[int] = ()) -> None:
        record: dict[str, Any] = {"type": "sent", "job": job, "i": i}
        if ids:
            record["ids"] = list(ids)
        self._write(record)

    def done(self, job: int, i: int, state: State, cube: str, mech: Mechanism) -> None:
        self._write({"type": "done", "job": job, "i": i, "state": state, "cube": cube,
                     "orientation": name(mech.orientation(state))})

    def end(self, job: int, status: str) -> None:
        self._write({"type": "end", "job": job, "status": status})

    def last(self) -> MechanismJob | None:
        """The last job in the journal, as far as it was written. A torn
        last line (the write a crash interrupted) is passed over; any other
        line that is not a record of the right shape is a :class:`UserError`
        naming the file and the line."""
        check_file(self.path)
        lines = read_bounded(self.path).split(b"\n")
        jobs: dict[int, MechanismJob] = {}
        last: MechanismJob | None = None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                last = _record(json.loads(line.decode("utf-8")), jobs, last)
                continue
            except UnicodeDecodeError:
                why = "bytes that are not text"
            except RecursionError:
                why = "JSON nested too deep"
            except json.JSONDecodeError as e:
                why = f"not JSON: {e.msg}"
            except (ValueError, KeyError, TypeError) as e:
                why = str(e)
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                break  # a torn last line: the write the crash interrupted
            why = " ".join(why.split())[:200]
            raise UserError(f"{self.path}:{number}: not a mechanism journal record ({why}); "
                            "move the file aside and scan the cube again")
        return last


_STATES: dict[str, State] = {"flipper": (HOME, 0, False), "two-gripper": (HOME, (True, 0), (True, 0))}
"""Each kind's state by its shape, as flipper.py and grippers.py make it:
``(orientation, turntable quarters, cover closed)``, ``(orientation, (D
closed, D across), (L closed, L across))``."""

_WHAT = {int: "a whole number", str: "text", list: "a list"}


def _field(r: dict, key: str, want: type, optional: bool = False) -> Any:
    """``r[key]``, of type ``want`` (None when ``optional`` and missing or
    null), or ValueError saying what is wrong."""
    if key not in r or (optional and r[key] is None):
        if optional:
            return None
        raise ValueError(f"a {r['type']} record without {key!r}")
    value = r[key]
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise ValueError(f"{key!r} of a {r['type']} record is not {_WHAT[want]}")
    return value


def _like(value: Any, shape: Any) -> bool:
    """Whether JSON ``value`` has the shape of state part ``shape``."""
    if isinstance(shape, tuple):
        return isinstance(value, list) and len(value) == len(shape) and all(map(_like, value, shape))
    if isinstance(shape, bool):
        return isinstance(value, bool)
    return type(value) is type(shape)


def _state(r: dict, kind: str) -> State:
    """The record's mechanism state, checked against the shape of a ``kind``
    rig's state; its orientation one a cube can be held in, and the same as
    the record's "orientation"."""
    value: Any = r.get("state")
    if not _like(value, _STATES[kind]) or tuple(value[0]) not in all_orientations():
        raise ValueError(f"'state' of a {r['type']} record is not a {kind} rig's state")
    state: State = state_from_json(value)
    if _field(r, "orientation", str) != name(state[0]):
        raise ValueError(f"'orientation' of a {r['type']} record is not its state's")
    return state


def _cube(r: dict, key: str) -> str:
    facelets: str = _field(r, key, str)
    try:
        parse_facelets(facelets)
    except CubeError as e:
        raise ValueError(f"{key!r} of a {r['type']} record is not a cube ({e})") from None
    return facelets


def _action(text: Any) -> Action:
    if not isinstance(text, str) or len(text) > 40:
        raise ValueError("a job whose actions are not all robot moves")
    try:
        return Action.parse(text)
    except ValueError:
        raise ValueError("a job whose actions are not all robot moves") from None


def _record(r: Any, jobs: dict[int, MechanismJob], last: MechanismJob | None) -> MechanismJob | None:
    """Take one record into ``jobs``; the last job begun after it. ValueError
    for a record of the wrong shape or out of turn."""
    if not isinstance(r, dict):
        raise ValueError(f"a JSON {type(r).__name__}, not an object")
    kind = r.get("type")
    if not isinstance(kind, str):
        raise ValueError("no record type")
    r["type"] = kind = kind[:20]
    job = _field(r, "job", int)
    if kind == "job":
        rig = _field(r, "kind", str)
        if rig not in _STATES:
            raise ValueError(f"a job for a rig of unknown kind {rig[:20]!r}")
        start = _cube(r, "start")
        actions = [_action(a) for a in _field(r, "actions", list)]
        state = _state(r, rig)
        last = jobs[job] = MechanismJob(job, rig, start, actions, state, start,
                                        orientations=[name(state[0])],
                                        boot_id=_field(r, "boot_id", int, optional=True),
                                        last_id=_field(r, "last_id", int, optional=True))
        return last
    j = jobs.get(job)
    if j is None:
        raise ValueError(f"a record of job {job}, which has not begun")
    if kind == "sent":
        i = _field(r, "i", int)
        if i != j.sent or j.sent != j.done or i >= len(j.actions):
            raise ValueError(f"move {i} sent out of turn")
        ids = _field(r, "ids", list, optional=True) or []
        if not all(type(x) is int for x in ids):
            raise ValueError("'ids' of a sent record are not all whole numbers")
        j.sent += 1
        j.sent_ids = list(ids)
        j.last_id = j.sent_ids[-1] if j.sent_ids else None
    elif kind == "done":
        i = _field(r, "i", int)
        if i != j.done or j.sent != j.done + 1:
            raise ValueError(f"move {i} done but not sent")
        j.state, j.cube = _state(r, j.kind), _cube(r, "cube")
        j.done += 1
        j.orientations.append(name(j.state[0]))
    elif kind == "end":
        j.end = _field(r, "status", str)
    else:
        raise ValueError(f"unknown record {kind!r}")
    return last


class Interrupted(Exception):
    """The run stopped on purpose part-way (a test's power cut)."""


def run_job(journal: MechanismJournal, mech: Mechanism, start_cube: str, actions: Sequence[Action],
            do: Callable[[Action], None], *, state: State | None = None, job: int | None = None,
            first: int = 0, cube: str | None = None, boot_id: int | None = None,
            ids: Callable[[Action], Sequence[int]] | None = None,
            last_id: int | None = None) -> tuple[State, str]:
    """Make ``actions`` from ``first`` on, each journalled as sent before
    ``do`` sends it and as done (with the state and cube after it) once it
    returns. Returns the state and cube at the end; the job ends "done".
    ``ids`` tells the protocol move ids ``do`` will give a move's commands,
    journalled with "sent" so that a resume can ask the rig whether it
    finished them (:func:`confirm_sent`); ``last_id``, the last command
    the run sent before the job, lets it tell a rig moved since."""
    state = mech.start() if state is None else state
    cube = start_cube if cube is None else cube
    if job is None:
        job = journal.start_job(mech, start_cube, actions, state, boot_id, last_id)
    for i in range(first, len(actions)):
        a = actions[i]
        out = mech.apply(state, a)
        if ids is None:
            journal.sent(job, i)
        else:
            journal.sent(job, i, ids(a))
        do(a)
        if out.turn is not None:
            made = face_move(mech.orientation(state), *out.turn)
            cube = parse_facelets(cube).apply([made]).to_facelets()
        state = out.after
        journal.done(job, i, state, cube, mech)
    journal.end(job, "done")
    return state, cube


def confirm_sent(journal: MechanismJournal, mech: Mechanism, j: MechanismJob) -> None:
    """The rig's word that the move journalled as sent was made whole (its
    last command reported done, nothing queued or moving, the same boot):
    it is journalled as done, with the state and cube after it."""
    i = j.done
    out = _check_moves(journal, mech, j, i, i + 1)[0]
    cube = j.cube
    if out.turn is not None:
        made = face_move(mech.orientation(j.state), *out.turn)
        cube = parse_facelets(cube).apply([made]).to_facelets()
    journal.done(j.job, i, out.after, cube, mech)


def resume_job(journal: MechanismJournal, mech: Mechanism,
               do: Callable[[Action], None], *,
               ids: Callable[[Action], Sequence[int]] | None = None) -> tuple[str, State | None, str | None]:
    """Finish the journal's unfinished job, or say why not:
    ``(status, state, cube)``. Status ``nothing`` (no unfinished job),
    ``done``, or :data:`UNKNOWN` (nothing moved: a move was sent and never
    reported done, so whether the cube was tipped, spun or turned is not
    known). A job stopped between moves goes on from the state the journal
    recorded after the last one."""
    j = journal.last()
    if j is None or j.end is not None:
        return "nothing", None, None
    if j.kind != mech.kind:
        raise UserError(f"the unfinished job is for a {j.kind} rig, not {mech.kind}: scan the cube again")
    if j.sent != j.done:
        journal.end(j.job, UNKNOWN)
        return UNKNOWN, None, None
    _check_moves(journal, mech, j, j.done, len(j.actions))
    state, cube = run_job(journal, mech, j.start, j.actions, do, state=j.state, job=j.job, first=j.done,
                          cube=j.cube, ids=ids)
    return "done", state, cube


def _check_moves(journal: MechanismJournal, mech: Mechanism, j: MechanismJob, first: int,
                 stop: int) -> list[Outcome]:
    """The outcomes of the job's moves ``first`` to ``stop`` from the state
    the journal recorded, worked out before any is made: a journal whose
    moves this rig cannot make from there is a :class:`UserError`."""
    outcomes = []
    state = j.state
    try:
        for a in j.actions[first:stop]:
            outcomes.append(mech.apply(state, a))
            state = outcomes[-1].after
    except ImpossibleMove as e:
        raise UserError(f"{journal.path}: job {j.job}'s robot moves cannot be made from the state it "
                        f"recorded ({' '.join(str(e).split())[:200]}): move the file aside and scan the cube "
                        "again") from None
    return outcomes
