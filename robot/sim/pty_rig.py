"""The virtual rig as its own process behind a pseudo-terminal.

``cuberobot sim-rig`` prints the pty path on its first stdout line and then
serves the rig on it; on stdin it takes one command per line and answers one
line each (``state``, ``press``, ``set FACELETS``, ``counts``, ``quit``).
The simavr firmware runner offers the same interface, so tests can swap the
Python rig for the real firmware. :class:`SimRigProcess` drives either.
"""

from __future__ import annotations

import json
import os
import select
import stat
import subprocess
import sys
import time
import tty
from typing import TextIO

from solver import Cube, CubeError

from ..rig.errors import RigError
from .virtual_rig import Connection, VirtualRig

DEAD_LINE_S = 2.0
"""After a simulated disconnect the pty carries nothing for this long."""


def serve(rig: VirtualRig, out: TextIO | None = None, inp: TextIO | None = None) -> int:
    """Serve ``rig`` on a new pty until ``quit``, or until the pipe on stdin
    closes (the driving process is gone); with stdin from /dev/null or a file,
    until killed."""
    out = out if out is not None else sys.stdout
    inp = inp if inp is not None else sys.stdin
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    print(path, file=out, flush=True)
    conn: Connection = rig.connect()
    dead_until = 0.0
    stdin_fd: int | None = inp.fileno()
    pending = b""
    os.set_blocking(master, False)
    try:
        while True:
            rig.advance()
            now = time.monotonic()
            if conn.broken and now >= dead_until:
                if dead_until == 0.0:
                    dead_until = now + DEAD_LINE_S
                else:
                    conn, dead_until = rig.connect(), 0.0
            if conn.to_host:
                with rig.lock:
                    data = bytes(conn.to_host)
                    conn.to_host.clear()
                try:
                    os.write(master, data)
                except BlockingIOError:
                    pass
            nxt = rig.next_event_time()
            timeout = 0.05
            if nxt is not None:
                timeout = max(0.0, min(timeout, (nxt - rig.clock.now()) / rig.clock.speed))
            r, _, _ = select.select([master] + ([stdin_fd] if stdin_fd is not None else []), [], [], timeout)
            if not r and nxt is not None:
                rig.clock.wait(nxt, 0.0)  # an event clock jumps to the rig's next event
            if master in r:
                try:
                    data = os.read(master, 4096)
                except (BlockingIOError, OSError):
                    data = b""
                if data and not conn.broken:
                    try:
                        conn.write(data)
                    except Exception:  # noqa: BLE001 - Disconnected: the line is now dead
                        pass
            if stdin_fd is not None and stdin_fd in r:
                chunk = os.read(stdin_fd, 4096)
                if not chunk:
                    if stat.S_ISFIFO(os.fstat(stdin_fd).st_mode):
                        return 0  # the process driving us through a pipe is gone
                    stdin_fd = None  # /dev/null or a file: serve until killed
                    continue
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    answer = _command(rig, line.decode("utf-8", "replace").strip())
                    if answer is None:
                        return 0
                    print(answer, file=out, flush=True)
    finally:
        os.close(master)
        os.close(slave)


def _command(rig: VirtualRig, line: str) -> str | None:
    word, _, arg = line.partition(" ")
    with rig.lock:
        rig.advance()
        if word == "state":
            return rig.cube.to_facelets()
        if word == "press":
            rig.press()
            return "ok"
        if word == "set":
            try:
                rig.cube = Cube.from_facelets(arg.strip())
            except CubeError as e:
                return f"error: {e}"
            return "ok"
        if word == "counts":
            return json.dumps({"turns": rig.counts_turns, "steps": rig.counts_steps,
                               "moves": len(rig.record), "boots": rig.boots})
        if word == "quit":
            return None
        return f"error: unknown command {word!r} (state, press, set FACELETS, counts, quit)"


class SimRigLines:
    """The line commands every simulated rig process answers on its stdin
    (the Python virtual rig and the firmware's simavr harness alike); a
    subclass supplies ``ask``."""

    def ask(self, line: str) -> str:
        raise NotImplementedError

    def state(self) -> str:
        return self.ask("state")

    def press(self) -> None:
        self.ask("press")

    def set_state(self, facelets: str) -> None:
        answer = self.ask(f"set {facelets}")
        if answer != "ok":
            raise RigError(answer)

    def counts(self) -> dict:
        return json.loads(self.ask("counts"))


class SimRigProcess(SimRigLines):
    """A ``cuberobot sim-rig`` child process (or the simavr firmware with
    ``firmware=ELF``), with its pty path in ``.port``."""

    def __init__(self, *args: str, firmware: str | None = None, timeout: float = 20.0):
        cmd = [sys.executable, "-m", "robot", "sim-rig", *args]
        if firmware:
            cmd += ["--firmware", firmware]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr  # all three are pipes
        self._in, self._out, self._err = self.proc.stdin, self.proc.stdout, self.proc.stderr
        self.timeout = timeout
        line = self._line()
        if not line.startswith("/"):
            err = self._err.read() if self.proc.poll() is not None else ""
            self.close()
            said = (err.strip().splitlines() or [line or "no output"])[-1]
            raise RigError(f"the simulated rig did not start: {said}")
        self.port = line

    def _line(self) -> str:
        r, _, _ = select.select([self._out], [], [], self.timeout)
        if not r:
            self.close()
            raise RigError(f"sim-rig did not answer within {self.timeout:g} s")
        return self._out.readline().strip()

    def ask(self, line: str) -> str:
        self._in.write(line + "\n")
        self._in.flush()
        return self._line()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self._in.write("quit\n")
                self._in.flush()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                self.proc.kill()
                self.proc.wait()
        for f in (self._in, self._out, self._err):
            try:
                f.close()
            except OSError:
                pass

    def __enter__(self) -> SimRigProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
