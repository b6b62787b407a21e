"""A serial line that drops and corrupts bytes: the traffic the driver never
sees coming. It offers the driver a pty of its own and bridges it, through a
thread, to the rig's pty (`cuberobot sim-rig`, or the firmware in simavr)."""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty


class ManglingProxy:
    def __init__(self, target: str, drop: float, corrupt: float, seed: int = 0) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.target = os.open(target, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.target)
        self.rng = random.Random(seed)
        self.drop, self.corrupt = drop, corrupt
        self.mangled = 0
        self.quiet_until = 0.0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _mangle(self, data: bytes) -> bytes:
        out = bytearray()
        for b in data:
            r = self.rng.random()
            if r < self.drop:
                self.mangled += 1
                continue
            if r < self.drop + self.corrupt:
                self.mangled += 1
                b ^= self.rng.randrange(1, 256)
            out.append(b)
        return bytes(out)

    def _run(self) -> None:
        while self.running:
            ready, _, _ = select.select([self.master, self.target], [], [], 0.05)
            for fd in ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    continue
                if time.monotonic() < self.quiet_until:
                    continue  # a stalled line: what is sent meanwhile is lost
                data = self._mangle(data)
                if data:
                    os.write(self.target if fd == self.master else self.master, data)

    def stall(self, seconds: float) -> None:
        """The line goes dead both ways for ``seconds`` from now."""
        self.quiet_until = time.monotonic() + seconds

    def close(self) -> None:
        self.running = False
        self.thread.join(2)
        for fd in (self.master, self.slave, self.target):
            os.close(fd)
