"""The firmware's simavr harness driven directly, for tests and benchmarks:
the pty path plus the harness's line commands (state, press, set, counts,
history, reset). Test tooling, not part of the installed package; the
command line's `cuberobot sim-rig --firmware` runs the same harness."""

from __future__ import annotations

import os
import subprocess
import threading

from robot.rig.errors import RigError
from robot.sim.pty_rig import SimRigLines
from robot.sim.simavr import DEFAULT_MECHANICS, HARNESS, build_harness, check_firmware, harness_command
from robot.sim.virtual_rig import Mechanics


class SimavrRig(SimRigLines):
    """A running harness, for tests and tools: the pty path plus its commands."""

    def __init__(
        self,
        elf: str | os.PathLike,
        mechanics: Mechanics = DEFAULT_MECHANICS,
        *,
        board: str = "uno",
        state: str | None = None,
        edge_log: str | os.PathLike | None = None,
        speed: float = 0.0,
    ) -> None:
        check_firmware(elf)
        if not HARNESS.is_file():
            build_harness()
        self.proc = subprocess.Popen(
            harness_command(elf, mechanics, board=board, state=state, edge_log=edge_log, speed=speed),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert self.proc.stdout is not None
        self._lock = threading.Lock()
        self.port = self.proc.stdout.readline().strip()
        if not self.port:
            self.proc.wait(timeout=5)
            raise RigError("the simavr harness did not start (see its error output)")

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self._lock:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        if not answer:
            raise RigError("the simavr harness exited")
        return answer.rstrip("\n")

    def history(self) -> str:
        """The face turns the motors made since the last `set`."""
        return self.ask("history")

    def reset(self) -> None:
        """Presses the board's reset button: the firmware restarts, the cube stays."""
        self.ask("reset")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.ask("quit")
                self.proc.wait(timeout=5)
            except (RigError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> SimavrRig:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
