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

from solver import parse_facelets

from ..errors import UserError
from .base import Action, Mechanism, State, state_from_json
from .orientation import face_move, name

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
    """Append-only, one record a line, each forced to disk before the rig acts on it."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _write(self, record: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def start_job(self, mech: Mechanism, start_cube: str, actions: Sequence[Action], state: State,
                  boot_id: int | None = None, last_id: int | None = None) -> int:
        last = self.last()
        job = 1 if last is None else last.job + 1
        record = {"type": "job", "job": job, "kind": mech.kind, "start": start_cube,
                  "actions": [str(a) for a in actions], "state": state,
                  "orientation": name(mech.orientation(state))}
        if boot_id is not None:
            record["boot_id"] = boot_id
        if last_id is not None:
            record["last_id"] = last_id
        self._write(record)
        return job

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
        """The last job in the journal, as far as it was written."""
        if not self.path.exists():
            return None
        lines = self.path.read_text(encoding="utf-8").split("\n")
        jobs: dict[int, MechanismJob] = {}
        last: MechanismJob | None = None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                kind = r["type"]
                job = int(r["job"])
                if kind == "job":
                    last = jobs[job] = MechanismJob(job, r["kind"], r["start"],
                                                    [Action.parse(a) for a in r["actions"]],
                                                    state_from_json(r["state"]), r["start"],
                                                    orientations=[r["orientation"]],
                                                    boot_id=r.get("boot_id"), last_id=r.get("last_id"))
                    continue
                j = jobs[job]
                if kind == "sent":
                    if int(r["i"]) != j.sent or j.sent != j.done:
                        raise ValueError(f"move {r['i']} sent out of turn")
                    j.sent += 1
                    j.sent_ids = [int(x) for x in r.get("ids", [])]
                    j.last_id = j.sent_ids[-1] if j.sent_ids else None
                elif kind == "done":
                    if int(r["i"]) != j.done or j.sent != j.done + 1:
                        raise ValueError(f"move {r['i']} done but not sent")
                    j.done += 1
                    j.state, j.cube = state_from_json(r["state"]), r["cube"]
                    j.orientations.append(r["orientation"])
                elif kind == "end":
                    j.end = r["status"]
                else:
                    raise ValueError(f"unknown record {kind!r}")
            except (ValueError, KeyError, TypeError) as e:
                if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                    break  # a torn last line: the write the crash interrupted
                raise UserError(f"{self.path}:{number}: not a mechanism journal record ({e}); "
                                "move the file aside and scan the cube again") from None
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
    out = mech.apply(j.state, j.actions[i])
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
    state, cube = run_job(journal, mech, j.start, j.actions, do, state=j.state, job=j.job, first=j.done,
                          cube=j.cube, ids=ids)
    return "done", state, cube
