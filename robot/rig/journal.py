"""The append-only record that lets a job survive a crash.

Every record that tells what the rig may have done is forced to disk (fsync)
before the rig is told to do it: the job (its start state, and its planned
steps as text with each step's signed quarter turns, from which resume
rebuilds the very plan that was started), the
session (the rig's boot id), and each move as "sent" before its MOVE goes out.
Each completed turn is written with the cube state after it, forced to disk
as soon as the rig reports it. Up to a queue's worth of moves (four on an
Uno, eight on a Mega) may be on their way at once, so the turns "sent" and
not yet "done" are the ones that may be under way; on resume the rig itself
is asked how far it got (robot/rig/job.py).

One JSON object per line. A torn last line (a crash while writing) is
ignored; anything else that does not read as a journal (a record of the
wrong shape, a state that the moves do not make, bytes that are not text) is
reported with its file and line, never passed over: a damaged journal cannot
say where the cube is.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import platformdirs

from solver import Cube, CubeError, parse_facelets

from .config import read_up_to
from .errors import UserError, storage_advice
from .owner import Claim, claim_folder

FILENAME = "journal.jsonl"
ROTATE_BYTES = 256 * 1024
"""A journal larger than this is set aside (as journal.1.jsonl) when a new job
starts with nothing unfinished, so reading it stays quick."""
MAX_BYTES = 16 * 1024 * 1024
"""A journal is set aside at 256 KiB between jobs; one larger than this is
not a journal (a wrong file, a link to a big one) and is not read."""
ID_SPACE = 0xFFFE
JOG_ID = 0xFFFE
"""Jobs' move ids run 0..0xFFFD: 0xFFFE is the id of a hand jog (`cuberobot
jog`) and 0xFFFF means "none" on the wire, so neither can be taken for a
step of a job."""

# The fields each kind of record must have, with their types.
_SHAPES: dict[str, dict[str, type | tuple[type, ...]]] = {
    "journal": {"next_id": int},
    "job": {"job": int, "start": str, "steps": list, "first_id": int},
    "session": {"job": int, "boot_id": int},
    "sent": {"job": int, "i": int},
    "refused": {"job": int, "i": int},
    "turn": {"job": int, "i": int, "state": str},
    "end": {"job": int, "status": str},
    "stop": {"job": int, "why": str},
}


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
    rig_last: int | None = None
    """The id of the last move the rig had finished when the job began: while
    the rig still says so, none of the job's moves has run, nor anything else."""
    stopped: str | None = None
    """Why the host emergency-stopped the rig during the job (Ctrl-C), if it did."""
    quarters: list[list[int]] | None = None
    """Each step's signed quarter turns as planned (a half turn's +2 or -2:
    which way its motor went), so that resume rebuilds the plan the job was
    started with; None in a journal written before they were kept."""

    @property
    def done(self) -> int:
        return len(self.turns)

    @property
    def state(self) -> str:
        return self.turns[-1]["state"] if self.turns else self.start

    def move_id(self, index: int) -> int:
        return (self.first_id + index) % ID_SPACE


class JournalDamaged(UserError):
    """The journal does not read as one: the cube's state cannot be taken from
    it. Not the user's mistake: the run cannot go on (exit 1)."""

    exit_code = 1


def check_file(path: Path) -> None:
    """The journal must be a regular file of a journal's size: a device, a
    FIFO or a huge file (or a link to one) is named, not read. A command
    checks it before it scans or moves anything, and again when it opens it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise UserError(f"the journal {path} is a link to nothing: move it away") from None
        return
    except OSError as e:
        raise UserError(f"cannot read the journal {path}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise _not_a_file(path, st.st_mode)
    if st.st_size > MAX_BYTES:
        raise UserError(f"the journal {path} is {st.st_size} bytes, more than any journal "
                        f"({MAX_BYTES // (1024 * 1024)} MiB): move it away (a fresh journal is started "
                        "in its place)")


def _not_a_file(path: Path, mode: int) -> UserError:
    kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device or a socket")
    return UserError(f"the journal {path} is {kind}, not a file: move it away (a fresh journal "
                     "is started in its place)")


def read_bounded(path: Path) -> bytes:
    """The journal's bytes (b"" when there is none), read without waiting and
    never more than a journal's size: what is not a regular file (a FIFO,
    a device, a folder, or a link to one, swapped in since
    :func:`check_file`) or is larger than :data:`MAX_BYTES` is a
    :class:`UserError` in one line, not read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return b""
    except OSError as e:
        raise UserError(f"cannot read the journal {path}: {e.strerror or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_a_file(path, mode)
        data = read_up_to(fd, MAX_BYTES)
    except OSError as e:
        raise UserError(f"cannot read the journal {path}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise UserError(f"the journal {path} is larger than any journal "
                        f"({MAX_BYTES // (1024 * 1024)} MiB): move it away (a fresh journal is started "
                        "in its place)")
    return data


def open_append(path: Path) -> TextIO:
    """The journal opened to append to (created if missing), without waiting:
    a FIFO, a device or a folder put there (since :func:`check_file`) is a
    :class:`UserError` in one line."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        raise UserError(f"cannot open the journal {path}: {e.strerror or e}{_advice(e)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped since the check
            raise _not_a_file(path, mode)
        os.set_blocking(fd, True)
    except BaseException as e:
        os.close(fd)
        if isinstance(e, OSError):
            raise UserError(f"cannot open the journal {path}: {e.strerror or e}") from None
        raise
    return os.fdopen(fd, "a", encoding="utf-8")


class StorageError(UserError):
    """The state folder cannot be written (a full disk, a read-only folder):
    the user's to fix; nothing was lost, nothing moved after it (exit 1)."""

    exit_code = 1


class Journal:
    """The journal file in ``state_dir`` (default: the user's state folder),
    held by this process alone for as long as it is open (owner.py)."""

    def __init__(self, state_dir: str | os.PathLike | None = None):
        self.dir = Path(state_dir) if state_dir is not None else default_state_dir()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create the state directory {self.dir}: {e.strerror}") from None
        self.path = self.dir / FILENAME
        self._claim: Claim = claim_folder(self.dir)
        try:
            check_file(self.path)
            self._cut_torn_tail()
            self._f = self._open()
        except BaseException:
            self._claim.release()
            raise
        self.fsyncs = 0


    def _cut_torn_tail(self) -> None:
        """A record cut short by a crash is dropped before anything is
        appended, so that the next record starts on a line of its own."""
        try:
            with open(self.path, "rb+") as f:
                size = f.seek(0, os.SEEK_END)
                if size == 0:
                    return
                f.seek(max(0, size - 4096))
                chunk = f.read()
                if chunk.endswith(b"\n"):
                    return
                cut = chunk.rfind(b"\n") + 1
                if cut == 0 and size > len(chunk):
                    return  # a last line longer than any record: left for the reader to report
                if JournalReader.torn(chunk[cut:]):
                    f.truncate(size - len(chunk) + cut)
                    os.fsync(f.fileno())
        except FileNotFoundError:
            return
        except OSError as e:
            raise UserError(f"cannot open the journal {self.path}: {e.strerror}") from None

    def _open(self) -> TextIO:
        return open_append(self.path)

    def close(self) -> None:
        try:
            self._f.close()
        except OSError:
            pass  # what could not be written was already reported
        finally:
            self._claim.release()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, record: dict, sync: bool) -> None:
        record.setdefault("t", round(time.time(), 3))
        try:
            self._f.write(json.dumps(record, separators=(",", ":")) + "\n")
            self._f.flush()
            if sync:
                os.fsync(self._f.fileno())
                self.fsyncs += 1
        except OSError as e:
            raise StorageError(f"cannot write the journal in {self.dir}: {e.strerror or e}{_advice(e)}; "
                               "nothing was sent to the rig after the last record that was written") from None

    # -- writing ---------------------------------------------------------
    def start_job(self, start: str, steps: list[str], *, port: str = "",
                  config: str | None = None, avoid_id: int | None = None,
                  quarters: list[list[int]] | None = None) -> JobState:
        """Record a new job. ``avoid_id``: the id of the last move the rig
        finished, which must not be one of the new job's ids (else a resume
        would take it for a step of this job); the rig may have run jobs of
        another journal since it booted. It is kept as the job's ``rig_last``.
        ``quarters``: each step's signed quarter turns as planned (see
        :attr:`JobState.quarters`)."""
        if quarters is not None and len(quarters) != len(steps):
            raise ValueError(f"{len(quarters)} steps' quarter turns for {len(steps)} steps")
        jobs, next_id = self._read()
        if avoid_id is not None and avoid_id < ID_SPACE and (avoid_id - next_id) % ID_SPACE < len(steps):
            next_id = (avoid_id + 1) % ID_SPACE
        if jobs and jobs[-1].end is not None and self._size() > ROTATE_BYTES:
            self._rotate(next_id)
        job = (jobs[-1].job + 1) if jobs else 1
        record = {"type": "job", "job": job, "start": start, "steps": steps, "first_id": next_id,
                  "port": port, "config": config, "rig_last": avoid_id}
        if quarters is not None:
            record["quarters"] = [list(q) for q in quarters]
        self._write(record, sync=True)
        return JobState(job, start, list(steps), next_id, port, config, rig_last=avoid_id,
                        quarters=[list(q) for q in quarters] if quarters is not None else None)

    def session(self, js: JobState, boot_id: int) -> None:
        """The rig the job's moves go to (its boot id): on disk before any of them."""
        js.boot_id = boot_id
        self._write({"type": "session", "job": js.job, "boot_id": boot_id}, sync=True)

    def sent(self, js: JobState, index: int) -> None:
        """Move ``index`` is about to be sent: on disk before it goes out."""
        js.sent.add(index)
        self._write({"type": "sent", "job": js.job, "i": index, "id": js.move_id(index)}, sync=True)

    def refused(self, js: JobState, index: int) -> None:
        """The rig provably did not take a sent move (it answered with an error)."""
        js.sent.discard(index)
        self._write({"type": "refused", "job": js.job, "i": index}, sync=False)

    def stop(self, js: JobState, why: str) -> None:
        """The host emergency-stopped the rig during the job (Ctrl-C): a turn
        under way may be half done, whatever the rig says later."""
        js.stopped = why
        self._write({"type": "stop", "job": js.job, "why": why}, sync=True)

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

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def _rotate(self, next_id: int) -> None:
        """Set the journal aside and start a new one that carries on the move
        ids (a rig that is still up must never see an id twice for two moves)."""
        self._f.close()
        try:
            self.path.replace(self.dir / "journal.1.jsonl")
        except OSError as e:
            raise UserError(f"cannot set the full journal {self.path} aside: {e.strerror}") from None
        self._f = self._open()
        self._write({"type": "journal", "next_id": next_id}, sync=True)

    # -- reading ---------------------------------------------------------
    def read(self) -> list[JobState]:
        """Every job in the journal, checked (see :class:`JournalReader`)."""
        return self._read()[0]

    def _read(self) -> tuple[list[JobState], int]:
        reader = JournalReader(self.path)
        reader.feed(read_bounded(self.path))
        return reader.jobs, reader.next_id

    def unfinished(self) -> JobState | None:
        jobs = self.read()
        if jobs and jobs[-1].end is None:
            return jobs[-1]
        return None


class JournalReader:
    """Reads a journal's bytes into jobs, checking every record: its shape,
    that it belongs to a job, that turns come in order, and that each turn's
    state is the job's start state after its moves. What fails is a
    :class:`JournalDamaged` naming the file and line."""

    def __init__(self, path: Path):
        self.path = path
        self.jobs: list[JobState] = []
        self.next_id = 0
        self._cube: Cube | None = None  # the last job's cube after its recorded turns

    def feed(self, data: bytes) -> None:
        lines = data.split(b"\n")
        complete = lines[:-1]
        tail = lines[-1]  # empty when the file ends with a newline
        for n, raw in enumerate(complete, start=1):
            self._line(n, raw)
        if tail and not self.torn(tail):
            self._line(len(complete) + 1, tail)

    @staticmethod
    def torn(tail: bytes) -> bool:
        """A last line cut short by a crash: the start of a record, nothing else."""
        return tail.startswith(b'{"') and b"\x00" not in tail and not tail.rstrip().endswith(b"}")

    def _damaged(self, n: int, what: str) -> JournalDamaged:
        return JournalDamaged(f"{self.path}, line {n}: {what}; the journal is damaged and cannot say where "
                              "the cube is: scan the cube again, and move the file away to start a fresh "
                              "journal")

    def _line(self, n: int, raw: bytes) -> None:
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise self._damaged(n, "bytes that are not text") from None
        except (json.JSONDecodeError, RecursionError, ValueError):
            raise self._damaged(n, "not a journal record") from None
        self._check_shape(n, record)
        getattr(self, "_" + record["type"])(n, record)

    def _check_shape(self, n: int, record: Any) -> None:
        if not isinstance(record, dict):
            raise self._damaged(n, "not a journal record")
        shape = _SHAPES.get(record.get("type"))  # type: ignore[arg-type]
        if shape is None:
            raise self._damaged(n, f"unknown record type {str(record.get('type'))[:20]!r}")
        for key, kind in shape.items():
            if key not in record:
                raise self._damaged(n, f"a {record['type']} record without {key!r}")
            value = record[key]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise self._damaged(n, f"{key!r} of a {record['type']} record has the wrong type")

    def _job_of(self, n: int, record: dict) -> JobState:
        if not self.jobs or record["job"] != self.jobs[-1].job:
            raise self._damaged(n, f"a record of job {record['job']}, which is not the current job")
        return self.jobs[-1]

    def _index(self, n: int, js: JobState, i: int) -> int:
        if not 0 <= i < len(js.steps):
            raise self._damaged(n, f"step {i} of a job of {len(js.steps)} steps")
        return i

    # One method per record type.
    def _journal(self, n: int, r: dict) -> None:
        if self.jobs or not 0 <= r["next_id"] < ID_SPACE:
            raise self._damaged(n, "a journal header in the wrong place")
        self.next_id = r["next_id"]

    def _job(self, n: int, r: dict) -> None:
        if self.jobs and r["job"] != self.jobs[-1].job + 1:
            raise self._damaged(n, f"job {r['job']} after job {self.jobs[-1].job}")
        if not 0 <= r["first_id"] < ID_SPACE:
            raise self._damaged(n, f"job {r['job']}'s move ids start outside 0..{ID_SPACE - 1}")
        steps = r["steps"]
        if not all(isinstance(s, str) for s in steps):
            raise self._damaged(n, "a job whose steps are not all move strings")
        try:
            self._cube = parse_facelets(r["start"])
            for s in steps:
                Cube().apply(s)
        except CubeError as e:
            raise self._damaged(n, f"a job whose cube or moves are not valid ({e})") from None
        port = r.get("port", "")
        config = r.get("config")
        rig_last = r.get("rig_last")
        self.jobs.append(JobState(r["job"], r["start"], list(steps), r["first_id"],
                                  port if isinstance(port, str) else "",
                                  config if isinstance(config, str) else None,
                                  rig_last=rig_last if isinstance(rig_last, int) and 0 <= rig_last <= 0xFFFF
                                  else None, quarters=self._quarters(n, r)))
        self.next_id = (r["first_id"] + len(steps)) % ID_SPACE

    def _quarters(self, n: int, r: dict) -> list[list[int]] | None:
        """A job's quarter turns, one list of small whole numbers per step, if
        it has them (a journal of an older version has not). Whether they
        make the steps' moves is the planner's to say, on resume."""
        q = r.get("quarters")
        if q is None:
            return None
        if not (isinstance(q, list) and len(q) == len(r["steps"])
                and all(isinstance(s, list) and len(s) <= 2
                        and all(type(x) is int and -2 <= x <= 2 for x in s) for s in q)):
            raise self._damaged(n, "a job whose quarter turns are not one short list of turns per step")
        return [list(s) for s in q]

    def _session(self, n: int, r: dict) -> None:
        self._job_of(n, r).boot_id = r["boot_id"]

    def _sent(self, n: int, r: dict) -> None:
        js = self._job_of(n, r)
        js.sent.add(self._index(n, js, r["i"]))

    def _refused(self, n: int, r: dict) -> None:
        js = self._job_of(n, r)
        js.sent.discard(self._index(n, js, r["i"]))

    def _stop(self, n: int, r: dict) -> None:
        self._job_of(n, r).stopped = r["why"][:200]

    def _turn(self, n: int, r: dict) -> None:
        js = self._job_of(n, r)
        if js.end is not None:
            raise self._damaged(n, f"a turn of job {js.job} after its end")
        if r["i"] != js.done or r["i"] >= len(js.steps):
            raise self._damaged(n, f"turn {r['i']} where turn {js.done} was due")
        assert self._cube is not None
        self._cube = self._cube.apply(js.steps[r["i"]])
        if r["state"] != self._cube.to_facelets():
            raise self._damaged(n, f"turn {r['i']}'s recorded state is not what the job's moves make")
        js.turns.append(r)

    def _end(self, n: int, r: dict) -> None:
        js = self._job_of(n, r)
        if js.end is not None:
            raise self._damaged(n, f"job {js.job} ended twice")
        if r["status"] == "done" and (js.done != len(js.steps) or r.get("state", js.state) != js.state):
            raise self._damaged(n, f"job {js.job} recorded as done, but its turns do not say so")
        js.end = r


def _advice(e: OSError) -> str:
    """The storage advice in brackets, after the system's own words."""
    what = storage_advice(e)
    return f" ({what})" if what else ""
