"""Robot moves over the serial link: a flipper or two-gripper rig driven
as docs/protocol.md 7 says.

Each robot move becomes its commands (:class:`~.commands.Commands`:
``SERVO`` for a servo, ``MOVE`` for a gripper's stepper), queued in order,
and the move counts as made only when the rig has reported the last of
them ``DONE``: what the journal writes as done is what the rig did. The
rig's own word settles a lost ``DONE`` (``STATUS``: nothing queued, the
move's id the last done). A rig that resets, latches its emergency stop or
goes silent raises, and the caller's journal keeps the move as sent and
not done: "state unknown: scan again".
"""

from __future__ import annotations

import copy
import dataclasses
import random
import time

from .. import protocol as P
from ..config import Config
from ..errors import RigError
from ..link import EstopLatched, Link, RigReset
from .base import Action, State
from .commands import Commands

STATUS_EVERY_S = 0.5
"""How often, while a move runs, the rig is asked where it is (a DONE lost on the line)."""


class LinkMechanism:
    """Makes robot moves on the rig behind ``link``; ``state`` is the
    mechanism's state now (where the turntable stands, which the commands
    of a spin or a turn depend on)."""

    def __init__(self, link: Link, config: Config, state: State | None = None):
        self.link = link
        parts = state if config.rig.kind == "flipper" and state is not None else (None, 0, False)
        self.commands = Commands(config, turntable_quarters=int(parts[1]), cover_closed=bool(parts[2]))
        # Ids start at random, so that a move id in a journal is not one an
        # earlier process gave another command (what the rig's last DONE
        # says is then about this move).
        self.next_id = random.SystemRandom().randrange(1, 0xFFF0)
        self.done: set[int] = set()
        self.sent = 0
        self.last_id: int | None = None
        """The id of the last command sent (each is waited for: the rig has reported it done)."""
        link.on_done = lambda d: self.done.add(d.move_id)

    def _id(self) -> int:
        mid = self.last_id = self.next_id
        self.next_id = mid % 0xFFF0 + 1  # NO_ID and the jog's id are never used
        return mid

    def ids(self, action: Action) -> list[int]:
        """The move ids :meth:`do` will give ``action``'s commands (for the journal)."""
        n = len(copy.copy(self.commands).commands(action))
        out, mid = [], self.next_id
        for _ in range(n):
            out.append(mid)
            mid = mid % 0xFFF0 + 1
        return out

    def home(self) -> None:
        """The servos to the start state's positions (:meth:`Commands.home`),
        before a job's first scan: a rig a killed run left part-way is then
        where the plan starts."""
        self._send(self.commands.home(), "home")

    def set_servo(self, name: str, deg: float) -> None:
        """Servo ``name`` to ``deg`` (a jog's angle), waited for."""
        self._send([self.commands.angle(name, deg)], f"servo {name} {deg:g}")

    def do(self, action: Action) -> None:
        """Send the move's commands and wait until the rig reports the last done."""
        self._send(self.commands.commands(action), str(action))

    def _send(self, messages: list[P.Message], what: str) -> None:
        """Queue ``messages``, each with an id of its own, and wait until the
        rig reports the last one done."""
        last = P.NO_ID
        try:
            for msg in messages:
                last = self._id()
                self.done.discard(last)
                self._queue(dataclasses.replace(msg, move_id=last))  # type: ignore[call-arg]
        except EstopLatched:
            if not self.sent:  # latched before this command moved anything: the link's word stands
                raise
            raise self._stopped(what) from None  # latched as a move was queued: a stop in the run
        if last != P.NO_ID:
            self._wait(last, what)

    def _stopped(self, what: str) -> EstopLatched:
        return EstopLatched(f"the rig stopped during the robot move {what} (emergency stop or a jammed "
                            f"part); check it is safe, then run {self.link.clear_command}")

    def _queue(self, msg: P.Message) -> None:
        while True:
            reply = self.link.request(msg)
            if not (isinstance(reply, P.Err) and reply.code == P.ErrorCode.QUEUE_FULL):
                self.sent += 1
                return
            self.link.poll(0.05)

    def _wait(self, move_id: int, what: str) -> None:
        link = self.link
        asked = time.monotonic()
        while move_id not in self.done:
            if link.reset_seen:
                raise RigReset(f"the rig was reset during the robot move {what} ({link.reset_seen})")
            if link.estop_latched:
                raise self._stopped(what)
            if time.monotonic() - asked >= STATUS_EVERY_S:
                st = link.status()  # bounded by the link's stall rules
                asked = time.monotonic()
                if st.estop:
                    continue
                if st.last_done_id == move_id and not st.moving and st.queue_len == 0:
                    self.done.add(move_id)  # its DONE was lost on the line
                    break
                if not st.moving and st.queue_len == 0:
                    raise RigError(f"the rig stopped without finishing the robot move {what}")
            link.poll(0.05)
