"""Progress lines on standard error, for work that keeps a person waiting
(the solver's one-time table build): rewritten in place on a terminal, one
line per message elsewhere (a log, a pipe, a service's journal)."""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressLine:
    """A callable that shows ``message``; :meth:`end` closes a line left open."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.in_place = self.stream.isatty()
        self._open = False

    def __call__(self, message: str) -> None:
        if self.quiet:
            return
        if self.in_place:
            self.stream.write("\r" + message + "\x1b[K")
            self._open = True
        else:
            self.stream.write(message + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
