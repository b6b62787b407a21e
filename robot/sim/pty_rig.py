"""The virtual rig as its own process behind a pseudo-terminal.

``cuberobot sim-rig`` prints the pty path on its first stdout line and then
serves the rig on it; on stdin it takes one command per line and answers one
line each (``state``, ``press``, ``reset``, ``set FACELETS``, ``counts``, ``quit``).
The simavr firmware runner offers the same interface, so tests can swap the
Python rig for the real firmware. :class:`SimRigProcess` drives either.
The Python rig also takes ``hold N``, ``held`` and ``release``
(:meth:`~robot.sim.virtual_rig.VirtualRig.hold_after`): a test holds it
mid-job.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import stat
import subprocess
import sys
import time
import tty
from typing import TextIO

from solver import CubeError

from ..rig.errors import RigError
from .virtual_rig import Connection, VirtualRig

DEAD_LINE_S = 2.0
"""After a simulated disconnect the pty carries nothing for this long."""


def serve(rig: VirtualRig, out: TextIO | None = None, inp: TextIO | None = None,
          view: str | None = None) -> int:
    """Serve ``rig`` on a new pty until ``quit``, or until the pipe on stdin
    closes (the driving process is gone); with stdin from /dev/null or a file,
    until killed. ``view``: a file the rig keeps its cube in (as a camera
    sees it), rewritten whole whenever it changes, for simulated cameras in
    another process (`cuberobot start --sim-view`)."""
    out = out if out is not None else sys.stdout
    inp = inp if inp is not None else sys.stdin
    master, slave = os.openpty()
    tty.setraw(slave)
    print(os.ttyname(slave), file=out, flush=True)
    os.set_blocking(master, False)
    pump = _PtyPump(rig, master)
    commands = _CommandLines(rig, inp.fileno(), out)
    shown = None
    try:
        while commands.open:
            rig.advance()
            if view is not None and rig.facelets() != shown:
                shown = rig.facelets()
                write_view(view, shown)
            pump.reconnect_after_a_pulled_cable()
            pump.to_host()
            ready = pump.wait([] if commands.fd is None else [commands.fd])
            if master in ready:
                pump.from_host()
            if commands.fd is not None and commands.fd in ready:
                commands.read()
        return 0
    finally:
        os.close(master)
        os.close(slave)


def write_view(path: str, facelets: str) -> None:
    """The cube into ``path`` whole (a reader never sees half of it)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="ascii") as f:
            f.write(facelets + "\n")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _PtyPump:
    """The rig's end of the pty: bytes each way, the rig's clock between them,
    and a simulated pulled cable (the line dead for a while, then a new one)."""

    def __init__(self, rig: VirtualRig, master: int):
        self.rig, self.master = rig, master
        self.conn: Connection = rig.connect()
        self.dead_until = 0.0

    def reconnect_after_a_pulled_cable(self) -> None:
        now = time.monotonic()
        if self.conn.broken and now >= self.dead_until:
            if self.dead_until == 0.0:
                self.dead_until = now + DEAD_LINE_S
            else:
                self.conn, self.dead_until = self.rig.connect(), 0.0

    def to_host(self) -> None:
        if not self.conn.to_host:
            return
        with self.rig.lock:
            data = bytes(self.conn.to_host)
            self.conn.to_host.clear()
        try:
            os.write(self.master, data)
        except BlockingIOError:
            pass  # nobody reads the line: what the rig said is lost, as on a wire

    def wait(self, others: list[int]) -> list[int]:
        """Until bytes arrive or the rig's next event is due (an event clock
        jumps to it when nothing arrives)."""
        rig = self.rig
        nxt = rig.next_event_time()
        timeout = 0.05
        if nxt is not None:
            timeout = max(0.0, min(timeout, (nxt - rig.clock.now()) / rig.clock.speed))
        ready, _, _ = select.select([self.master, *others], [], [], timeout)
        if not ready and nxt is not None:
            rig.clock.wait(nxt, 0.0)
        return ready

    def from_host(self) -> None:
        try:
            data = os.read(self.master, 4096)
        except OSError:  # BlockingIOError included
            data = b""
        if data and not self.conn.broken:
            try:
                self.conn.write(data)
            except Exception:  # noqa: BLE001 - Disconnected: the line is now dead
                pass


class _CommandLines:
    """The test's side channel on stdin: one command a line (state, press,
    set, counts, quit), each answered on stdout."""

    def __init__(self, rig: VirtualRig, fd: int, out: TextIO):
        self.rig, self.out = rig, out
        self.fd: int | None = fd
        self.open = True
        self.pending = b""

    def read(self) -> None:
        assert self.fd is not None
        chunk = os.read(self.fd, 4096)
        if not chunk:
            if stat.S_ISFIFO(os.fstat(self.fd).st_mode):
                self.open = False  # the process driving us through a pipe is gone
            else:
                self.fd = None  # /dev/null or a file: serve until killed
            return
        self.pending += chunk
        while b"\n" in self.pending and self.open:
            line, self.pending = self.pending.split(b"\n", 1)
            answer = _command(self.rig, line.decode("utf-8", "replace").strip())
            if answer is None:
                self.open = False
                return
            print(answer, file=self.out, flush=True)


def _command(rig: VirtualRig, line: str) -> str | None:
    word, _, arg = line.partition(" ")
    with rig.lock:
        rig.advance()
        if word == "state":
            return rig.facelets()
        if word == "press":
            rig.press()
            return "ok"
        if word == "reset":
            rig.reset()
            return "ok"
        if word == "set":
            try:
                rig.set_facelets(arg.strip())
            except CubeError as e:
                return f"error: {e}"
            return "ok"
        if word == "hold":
            if not (arg.strip().isascii() and arg.strip().isdigit()):
                return "error: hold takes a number of moves"
            rig.hold_after(int(arg))
            return "ok"
        if word == "held":
            return json.dumps({"held": rig.held, "moving": bool(rig.active), "moves": len(rig.record)})
        if word == "release":
            rig.release()
            return "ok"
        if word == "counts":
            counts = {"turns": rig.counts_turns, "steps": rig.counts_steps, "moves": len(rig.record),
                      "boots": rig.boots}
            if rig.mechanism is not None:  # a flipper's or two-gripper's layer turns, in order
                counts["layer_turns"] = [list(t) for t in rig.mechanism.turns]
                counts["fault"] = rig.mechanism.fault
                counts["angles"] = {n: round(a, 1) for n, a in rig.mechanism.angle.items()}
            return json.dumps(counts)
        if word == "quit":
            return None
        return (f"error: unknown command {word!r} (state, press, reset, set FACELETS, counts, hold N, "
                "held, release, quit)")


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

    def reset(self) -> None:
        """The board's reset button: the firmware restarts, the cube stays."""
        answer = self.ask("reset")
        if answer != "ok":
            raise RigError(answer)

    def set_state(self, facelets: str) -> None:
        answer = self.ask(f"set {facelets}")
        if answer != "ok":
            raise RigError(answer)

    def counts(self) -> dict:
        return json.loads(self.ask("counts"))

    def hold_after(self, moves: int) -> None:
        """The rig's time stands still once it has recorded ``moves`` moves,
        until :meth:`release` (the Python rig only: a test's hold mid-job)."""
        answer = self.ask(f"hold {moves}")
        if answer != "ok":
            raise RigError(answer)

    def held(self) -> dict:
        """Whether the rig's time stands still (``held``), a move under way
        (``moving``), and its moves so far (``moves``)."""
        return json.loads(self.ask("held"))

    def release(self) -> None:
        answer = self.ask("release")
        if answer != "ok":
            raise RigError(answer)


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
