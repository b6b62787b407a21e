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
    """``drop``, ``corrupt``: probability per byte; ``burst``: probability per
    chunk of traffic that a burst of garbage (``make_burst(rng)``) goes in
    before it, both ways."""

    def __init__(self, target: str, drop: float, corrupt: float, seed: int = 0, burst: float = 0.0,
                 make_burst=None) -> None:
        self._lock = threading.Lock()
        self._open_driver_side()
        self.target = os.open(target, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.target)
        self.rng = random.Random(seed)
        self.drop, self.corrupt = drop, corrupt
        self.burst, self.make_burst = burst, make_burst
        self.bursts = 0
        self.mangled = 0
        self.quiet_until = 0.0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open_driver_side(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)

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
        if self.burst and self.make_burst is not None and self.rng.random() < self.burst:
            self.bursts += 1
            return self.make_burst(self.rng) + bytes(out)
        return bytes(out)

    def _run(self) -> None:
        while self.running:
            with self._lock:
                master = self.master
            try:
                ready, _, _ = select.select([master, self.target], [], [], 0.05)
            except (OSError, ValueError):
                continue  # the cable was pulled under us: look again
            for fd in ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    continue
                if time.monotonic() < self.quiet_until:
                    continue  # a stalled line: what is sent meanwhile is lost
                data = self._mangle(data)
                if data:
                    try:
                        os.write(self.target if fd == master else master, data)
                    except OSError:
                        pass

    def stall(self, seconds: float) -> None:
        """The line goes dead both ways for ``seconds`` from now."""
        self.quiet_until = time.monotonic() + seconds

    def pull(self) -> None:
        """The cable is pulled and put back: the driver's side of the line
        goes away (its reads and writes fail) and comes back as a new pty,
        at ``self.path``."""
        with self._lock:
            os.close(self.master)
            os.close(self.slave)
            self._open_driver_side()

    def close(self) -> None:
        self.running = False
        self.thread.join(2)
        for fd in (self.master, self.slave, self.target):
            os.close(fd)
