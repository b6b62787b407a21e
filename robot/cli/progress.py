"""Progress lines on standard error, for work that keeps a person waiting
(the solver's one-time table build): rewritten in place on a terminal, a
few whole lines elsewhere (a log, a pipe, a service's journal).

On a terminal every message replaces the last, so the live line can move
by the percent and repeat "still working" every two seconds at no cost.
In a log each message is a line for good: there the news is kept (each
step's start, each other message, a step's percentage when it passes a
quarter) and the repeats are thinned to one per :data:`HEARTBEAT_S`, so
the first run's table build is a dozen lines, not thirty, and a silent
step still shows it is alive."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from typing import TextIO

from solver.talk import STILL

HEARTBEAT_S = 10.0
"""In a log, a repeat of the work under way ("still working") at most this often."""
QUARTER = 25
"""In a log, a step's percentage is written when it reaches the next multiple of this."""
_PERCENT = re.compile(r"(.*): (\d{1,3}) %")
"""A step's percentage as solver/tables.py's BuildProgress says it: ``STEP: NN %``."""


class LogLines:
    """Which messages a log keeps (see the module): :meth:`keep` answers
    for each message in turn. ``clock`` is the seconds' source (a test
    gives its own)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.step: str | None = None
        self.quarter = 0
        self.said_at = -HEARTBEAT_S

    def keep(self, message: str) -> bool:
        """True when ``message`` is worth a line of its own."""
        head, repeat, _ = message.partition(STILL)
        m = _PERCENT.fullmatch(head)
        step, percent = (m[1], int(m[2])) if m else (head, None)
        now = self.clock()
        if step != self.step:
            keep = True  # news: a step begins, or a status is said for the first time
        elif repeat:
            keep = now - self.said_at >= HEARTBEAT_S
        elif percent is not None:
            keep = percent // QUARTER > self.quarter
        else:
            keep = True  # the same words said again on purpose
        if keep:
            self.step, self.said_at = step, now
            self.quarter = percent // QUARTER if percent is not None else 0
        return keep


class ProgressLine:
    """A callable that shows ``message``; :meth:`end` closes a line left open."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.in_place = self.stream.isatty()
        self.log = LogLines(clock)
        self._open = False

    def __call__(self, message: str) -> None:
        if self.quiet:
            return
        if self.in_place:
            self.stream.write("\r" + message + "\x1b[K")
            self._open = True
        elif self.log.keep(message):
            self.stream.write(message + "\n")
        else:
            return
        self.stream.flush()

    def end(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
