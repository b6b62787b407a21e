"""Misbehaving rigs behind a real pseudo-terminal, for the trust tests.

A :class:`TalkingRig` answers ``HELLO`` as the firmware would and then never
answers anything again, while it keeps talking: garbage bytes (``babble``)
or well-formed ``EVENT`` frames every 0.1 s (``events``). It keeps a log of
what reached it, with the time each emergency-stop run (three ``0x18`` in a
row) arrived, so a test can measure how long a stop took to get there.
"""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty

from robot.rig import protocol as P


class TalkingRig:
    def __init__(self, mode: str, *, seed: int = 0):
        assert mode in ("babble", "events")
        self.mode = mode
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)  # nobody reading the other end must not block the rig
        self.port = os.ttyname(self.slave)
        self.hellos = 0
        self.estops: list[float] = []
        """time.monotonic() of each stop run's third byte."""
        self.commands_after_hello = 0
        self._rng = random.Random(seed)
        self._decoder = P.FrameDecoder(realtime=True)
        self._run = 0
        self._last_stop_byte = 0.0
        self.raw: list[tuple[float, bytes]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    # -- what a test asks -----------------------------------------------------
    def wait_for_hello(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while self.hellos == 0:
            assert time.monotonic() < deadline, "nobody greeted the rig"
            time.sleep(0.005)

    def wait_for_estop(self, count: int = 1, timeout: float = 5.0) -> float:
        deadline = time.monotonic() + timeout
        while len(self.estops) < count:
            assert time.monotonic() < deadline, ("no emergency stop reached the rig", self.raw[-30:])
            time.sleep(0.001)
        return self.estops[count - 1]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> TalkingRig:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the rig's side -----------------------------------------------------
    def _serve(self) -> None:
        next_talk = time.monotonic()
        event_seq = 0
        while not self._stop.is_set():
            try:
                ready = select.select([self.master], [], [], 0.002)[0]
                if ready:
                    self._take(os.read(self.master, 4096))
                now = time.monotonic()
                if self.hellos and now >= next_talk:
                    if self.mode == "babble":
                        self._send(bytes(self._rng.randrange(256) for _ in range(16)))
                        next_talk = now + 0.01
                    else:
                        event_seq = event_seq % 255 + 1
                        self._send(P.encode(P.Event(P.EventCode.BUTTON, 0), event_seq))
                        next_talk = now + 0.1
            except BlockingIOError:
                continue
            except OSError:
                return

    def _send(self, data: bytes) -> None:
        """Talk; while nobody reads the line its buffer fills, and the rest is lost."""
        try:
            os.write(self.master, data)
        except BlockingIOError:
            pass

    def _take(self, data: bytes) -> None:
        now = time.monotonic()
        self.raw.append((now, data))
        for b in data:
            # As the firmware counts a stop run: any other byte ends it. Two
            # stops sent 50 ms or more apart count twice here even with no
            # other byte between (the firmware would be latched already).
            if b != P.RT_ESTOP or now - self._last_stop_byte > 0.05:
                self._run = 0
            if b == P.RT_ESTOP:
                self._last_stop_byte = now
                self._run += 1
                if self._run == P.ESTOP_RUN:
                    self.estops.append(now)
        for item in self._decoder.feed(data):
            if isinstance(item, int):
                continue
            try:
                seq, msg = P.decode(item)
            except P.ProtocolError:
                continue
            if isinstance(msg, P.Hello):
                self.hellos += 1
                self._send(P.encode(P.HelloOk(P.PROTOCOL_VERSION, 9, 9, 9, P.BOARD_UNO, 4,
                                                         1234, P.TICK_HZ), seq))
            else:
                self.commands_after_hello += 1
