"""The append-only record that lets a job survive a crash.

A "sent" line (flushed, not forced to disk) precedes every MOVE, and each
completed turn is written with the cube state after it and forced to disk
(fsync) as soon as the rig reports it. Up to a queue's worth of moves (four
on an Uno, eight on a Mega) may be on their way at once, so the turns "sent" and not yet
"done" are the ones that may be under way: after a crash or a firmware reset
the rig is asked which of them it finished.
One JSON object per line; a torn last line (crash while writing) is ignored.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from .errors import UserError

FILENAME = "journal.jsonl"


def default_state_dir() -> Path:
    """The user's state folder for cuberobot (journal and run records):
    ``~/.local/state/cuberobot`` on Linux (``$XDG_STATE_HOME`` honoured), the
    platform's own place elsewhere."""
    return platformdirs.user_state_path("cuberobot")


@dataclass
class JobState:
    """A job as the journal knows it."""

    job: int
    start: str  # facelets
    steps: list[str]  # one string per MOVE, e.g. "U D'"
    first_id: int
    port: str = ""
    config: str | None = None
    turns: list[dict] = field(default_factory=list)
    sent: set[int] = field(default_factory=set)  # step indices written to the rig
    end: dict | None = None
    boot_id: int | None = None

    @property
    def done(self) -> int:
        return len(self.turns)

    @property
    def state(self) -> str:
        return self.turns[-1]["state"] if self.turns else self.start

    def move_id(self, index: int) -> int:
        return (self.first_id + index) % 0xFFFF


class Journal:
    def __init__(self, state_dir: str | os.PathLike | None = None):
        self.dir = Path(state_dir) if state_dir is not None else default_state_dir()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create the state directory {self.dir}: {e.strerror}") from None
        self.path = self.dir / FILENAME
        try:
            self._f = open(self.path, "a", encoding="utf-8")
        except OSError as e:
            raise UserError(f"cannot open the journal {self.path}: {e.strerror}") from None
        self.fsyncs = 0

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, record: dict, sync: bool) -> None:
        record.setdefault("t", round(time.time(), 3))
        self._f.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._f.flush()
        if sync:
            os.fsync(self._f.fileno())
            self.fsyncs += 1

    # -- writing ---------------------------------------------------------
    def start_job(self, start: str, steps: list[str], *, port: str = "",
                  config: str | None = None) -> JobState:
        jobs = self.read()
        job = (jobs[-1].job + 1) if jobs else 1
        first_id = 0
        if jobs:
            last = jobs[-1]
            first_id = (last.first_id + len(last.steps)) % 0xFFFF
        self._write({"type": "job", "job": job, "start": start, "steps": steps, "first_id": first_id,
                     "port": port, "config": config}, sync=True)
        return JobState(job, start, list(steps), first_id, port, config)

    def session(self, js: JobState, boot_id: int) -> None:
        js.boot_id = boot_id
        self._write({"type": "session", "job": js.job, "boot_id": boot_id}, sync=False)

    def sent(self, js: JobState, index: int) -> None:
        js.sent.add(index)
        self._write({"type": "sent", "job": js.job, "i": index, "id": js.move_id(index)}, sync=False)

    def refused(self, js: JobState, index: int) -> None:
        """The rig provably did not take a sent move (it answered with an error)."""
        js.sent.discard(index)
        self._write({"type": "refused", "job": js.job, "i": index}, sync=False)

    def turn(self, js: JobState, index: int, state: str, ticks: int | None) -> None:
        """A turn finished: on disk before anything else is sent."""
        if index != js.done:
            raise AssertionError(f"journal: turn {index} recorded after {js.done} turns")
        rec = {"type": "turn", "job": js.job, "i": index, "id": js.move_id(index), "moves": js.steps[index],
               "state": state, "ticks": ticks}
        self._write(rec, sync=True)
        js.turns.append(rec)

    def end(self, js: JobState, status: str, message: str = "", state: str | None = None,
            maybe: list[int] | None = None) -> None:
        """``maybe``: step indices that may have been partly or wholly executed
        (status "unknown")."""
        rec = {"type": "end", "job": js.job, "status": status, "message": message,
               "state": state if state is not None else js.state, "maybe": maybe or []}
        self._write(rec, sync=True)
        js.end = rec

    # -- reading ---------------------------------------------------------
    def read(self) -> list[JobState]:
        jobs: dict[int, JobState] = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        for n, line in enumerate(lines):
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                if n == len(lines) - 1:
                    break  # torn by a crash while writing
                raise UserError(f"{self.path}: line {n + 1} is not a journal record; "
                                "move the file away to start a fresh journal") from None
            kind, job = r.get("type"), r.get("job")
            if kind == "job":
                jobs[job] = JobState(job, r["start"], r["steps"], r["first_id"], r.get("port", ""),
                                     r.get("config"))
            elif job in jobs:
                js = jobs[job]
                if kind == "turn":
                    js.turns.append(r)
                elif kind == "sent":
                    js.sent.add(r["i"])
                elif kind == "refused":
                    js.sent.discard(r["i"])
                elif kind == "session":
                    js.boot_id = r["boot_id"]
                elif kind == "end":
                    js.end = r
        return [jobs[k] for k in sorted(jobs)]

    def unfinished(self) -> JobState | None:
        jobs = self.read()
        if jobs and jobs[-1].end is None:
            return jobs[-1]
        return None
