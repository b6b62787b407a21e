"""One owner per rig and per state folder.

Two processes that drive one rig, or write one journal, interleave what they
do: two jobs' records in one journal make it unreadable, two hosts on one
serial line answer each other's replies. So a process that needs a rig or a
state folder first *claims* it: an exclusive ``flock`` on a lock file, which
the operating system releases when the process ends, however it ends (a
kill, a crash, a pulled plug), so a claim can never be left stuck. The lock
file also says who holds it (command, process id, since when, and for
``cuberobot serve`` the panel's address), so that the second process can say
in one line who to ask.

Claims are counted within a process: the command that claimed a folder can
open its journal again and again (the panel runs one job after another)
without refusing itself.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UserError

FOLDER_LOCK = "owner.lock"
"""The lock file inside a state folder."""
MAX_RECORD_BYTES = 4096


class InUse(UserError):
    """Somebody else holds the rig or the folder. Not a mistake in the
    command: it can run once the other one is done (exit 1)."""

    exit_code = 1

    def __init__(self, message: str, holder: dict[str, Any]):
        super().__init__(message)
        self.holder = holder


@dataclass
class _Held:
    fd: int
    count: int
    record: dict[str, Any]


_held: dict[str, _Held] = {}
_held_lock = threading.Lock()


def command_line() -> str:
    """What this process is, in words a person recognises (``cuberobot serve``)."""
    argv = sys.argv or ["?"]
    name = Path(argv[0]).name
    if name in ("__main__.py", "-c", "-m") or name.startswith("python"):
        name = "cuberobot"
    words = [name, *[a for a in argv[1:] if not a.startswith("-")][:1]]
    return " ".join(words)[:80]


def describe_holder(holder: dict[str, Any]) -> str:
    command = str(holder.get("command") or "another process")[:80]
    pid = holder.get("pid")
    since = holder.get("since")
    parts = [f"process {pid}" if isinstance(pid, int) else ""]
    if isinstance(since, (int, float)):
        parts.append("since " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)))
    extra = ", ".join(p for p in parts if p)
    return f"`{command}`" + (f" ({extra})" if extra else "")


def _read_holder(fd: int, wait_s: float = 0.0) -> dict[str, Any]:
    """The holder's record; a holder that has just taken the lock writes it
    a moment later, so an empty file is read again for up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            data = os.pread(fd, MAX_RECORD_BYTES, 0)
            holder = json.loads(data.decode("utf-8")) if data else {}
        except (OSError, ValueError, RecursionError):
            holder = {}
        if holder or time.monotonic() >= deadline:
            return holder if isinstance(holder, dict) else {}
        time.sleep(0.01)


class Claim:
    """A held claim; :meth:`release` (or leaving the ``with``) gives it back."""

    def __init__(self, key: str, path: Path):
        self.key, self.path = key, path
        self._released = False

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        with _held_lock:
            held = _held.get(self.key)
            if held is None:
                return
            held.count -= 1
            if held.count == 0:
                del _held[self.key]
                with contextlib.suppress(OSError):
                    os.ftruncate(held.fd, 0)
                os.close(held.fd)  # closing the file gives the lock back

    def describe(self, details: dict[str, Any]) -> None:
        """Add ``details`` to what the lock file tells the next comer: what
        is known only once the claim is held (the panel's address, bound
        after the claim so that a refused `serve` touches nothing)."""
        with _held_lock:
            held = _held.get(self.key)
            if held is None or self._released:
                return
            held.record.update(details)
            data = json.dumps(held.record).encode("utf-8")
            with contextlib.suppress(OSError):  # as at the claim: the lock holds without its description
                os.pwrite(held.fd, data, 0)  # over the old record, then cut: never an empty file to read
                os.ftruncate(held.fd, len(data))

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim(lock_path: Path, what: str, advice: Callable[[dict[str, Any]], str], *,
          details: dict[str, Any] | None = None) -> Claim:
    """Hold ``lock_path`` for this process, or raise :class:`InUse` saying
    who holds it: "``what`` is in use by `cuberobot serve` (process 812, since
    …): ``advice``". ``details`` go into the lock file for the next comer (the
    panel's address)."""
    key = str(lock_path)
    with _held_lock:
        held = _held.get(key)
        if held is not None:
            held.count += 1
            return Claim(key, lock_path)
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                         | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as e:
            raise UserError(f"cannot claim {what}: cannot open {lock_path}: {e.strerror or e} (check the "
                            "folder's permissions)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read_holder(fd, wait_s=0.5)
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise UserError(f"cannot claim {what}: {e.strerror or e}") from None
            raise InUse(f"{what} is in use by {describe_holder(holder)}: {advice(holder)}", holder) from None
        record = {"pid": os.getpid(), "command": command_line(), "since": round(time.time(), 3),
                  **(details or {})}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)
        except OSError:
            pass  # the lock holds without its description; a full disk must not stop a claim
        _held[key] = _Held(fd, 1, record)
        return Claim(key, lock_path)


def holder_of(lock_path: Path) -> dict[str, Any] | None:
    """Who holds ``lock_path`` now (its record), or None when nobody does."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read_holder(fd)
        return None
    finally:
        os.close(fd)


# -- the two things claimed ------------------------------------------------------


def folder_lock(state_dir: Path) -> Path:
    return state_dir / FOLDER_LOCK


def claim_folder(state_dir: Path, *, details: dict[str, Any] | None = None) -> Claim:
    """The state folder (journal and run records) for this process."""
    return claim(folder_lock(state_dir), f"the state folder {state_dir}", _folder_advice, details=details)


def _folder_advice(holder: dict[str, Any]) -> str:
    url = holder.get("url")
    if isinstance(url, str) and url:
        return f"use the panel at {url[:200]}, or give this command another --state-dir"
    return "wait for it to finish (or stop it), or give this command another --state-dir"


def port_key(port: str) -> str | None:
    """What identifies a rig's port across processes: the device's real path
    (``/dev/serial/by-id/…`` and ``/dev/ttyACM0`` are one rig), or the URL of a
    network port; None for a rig that lives inside this process (``sim://``)."""
    if port.startswith("sim://") or port.startswith("loop://"):
        return None
    if "://" in port:
        return port
    return os.path.realpath(port)


def runtime_dir() -> Path:
    """The user's runtime folder (``$XDG_RUNTIME_DIR``, gone at logout or
    boot, like the processes whose claims it holds), or a private folder of
    the user's own in the temporary directory where there is none (a service,
    an ssh session without a login manager)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "cuberobot"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"cuberobot-{uid}"


def port_lock(key: str) -> Path:
    folder = runtime_dir() / "ports"
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in key).strip("_")[-120:] or "port"
    return folder / f"{name}.lock"


def claim_port(port: str, *, details: dict[str, Any] | None = None) -> Claim | None:
    """The rig on ``port`` for this process; None for an in-process rig."""
    key = port_key(port)
    if key is None:
        return None
    path = port_lock(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.lstat(path.parent.parent)
    except OSError as e:
        raise UserError(f"cannot claim the rig on {port}: cannot create {path.parent}: "
                        f"{e.strerror or e}") from None
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or not stat.S_ISDIR(st.st_mode)):
        raise UserError(f"cannot claim the rig on {port}: {path.parent.parent} is not a folder of this "
                        "user's own: remove it, or set XDG_RUNTIME_DIR")
    return claim(path, f"the rig on {port}", _port_advice, details=details)


def _port_advice(holder: dict[str, Any]) -> str:
    url = holder.get("url")
    if isinstance(url, str) and url:
        return (f"use the panel at {url[:200]} (or stop the server); `cuberobot estop` still stops "
                "the rig at once")
    return "wait for it to finish (or stop it); `cuberobot estop` still stops the rig at once"


def port_holder(port: str) -> dict[str, Any] | None:
    """Who holds the rig on ``port`` now, or None."""
    key = port_key(port)
    return None if key is None else holder_of(port_lock(key))


Describe = Callable[[dict[str, Any]], None]
"""Adds details to what the claims of a ``with holding(...)`` tell the next comer."""


@contextlib.contextmanager
def holding(port: str | None, state_dir: Path | None, *,
            details: dict[str, Any] | None = None) -> Iterator[Describe]:
    """Claim the rig on ``port`` (None or an in-process rig: nothing to claim)
    and the state folder (None: none used) for the ``with`` block, the folder
    first: a second command on either is refused before it touches anything.
    Yields a function that adds details to both claims' records later."""
    with contextlib.ExitStack() as stack:
        claims: list[Claim] = []
        if state_dir is not None:
            state_dir.mkdir(parents=True, exist_ok=True)
            claims.append(stack.enter_context(claim_folder(state_dir, details=details)))
        if port is not None:
            held = claim_port(port, details=details)
            if held is not None:
                claims.append(stack.enter_context(held))

        def describe(more: dict[str, Any]) -> None:
            for c in claims:
                c.describe(more)

        yield describe
