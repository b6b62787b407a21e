"""Keeping a person informed through work that is long only the first time.

The first run on a fresh machine builds the solver's tables and has numba
compile the search and the classifier: tens of seconds in which some single
steps (compiling one function, one stretch of a table) take several seconds
with nothing to report. A :class:`Ticker` sits between that work and a
progress callback: lines said through it pass straight on, and when nothing
has been said for :data:`EVERY` seconds it repeats what is under way with
the seconds since it was said, from a thread of its own, so a silence
never lasts long whatever the step does. A status set with
:meth:`Ticker.quietly` is said only if its work outlasts the silence: a warm
start (compiled code loaded from the cache in a fraction of a second)
prints nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

EVERY = 2.0
"""Seconds of silence after which the work under way is said again: well
within the 5 s a person (or a service's watchdog) should wait for a sign."""
STILL = " (still working: "
"""What a repeat adds to the status it repeats (then the seconds and ``s)``):
a reader that keeps fewer lines (a log: robot/cli/progress.py) tells a
repeat from news by it."""
FIRST = 1.5
"""Seconds a quiet status waits before it is said: a warm start's loading
takes a fraction of that, and the silence before it (the program's own
start-up) has already begun."""


class Ticker:
    """A progress callable that also speaks up during silences (see the module)."""

    def __init__(self, progress: Callable[[str], None], every: float = EVERY):
        self._progress = progress
        self._every = every
        self._lock = threading.Lock()
        self._status = ""
        self._since = time.monotonic()
        self._last = self._since
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="progress-ticker", daemon=True)

    def __call__(self, line: str) -> None:
        """Say ``line`` now; it is also what a later silence repeats."""
        with self._lock:
            self._status = line
            self._since = self._last = time.monotonic()
            self._progress(line)

    def quietly(self, status: str) -> None:
        """Work described by ``status`` begins: said only if it lasts
        :data:`FIRST` seconds with nothing else said, then as any status."""
        with self._lock:
            self._status = status
            self._since = time.monotonic()
            self._last = self._since - (self._every - FIRST)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            with self._lock:
                now = time.monotonic()
                if self._status and now - self._last >= self._every:
                    self._last = now
                    self._progress(f"{self._status}{STILL}{now - self._since:.0f} s)")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def ticking(progress: Callable[[str], None] | None,
            every: float = EVERY) -> Iterator[Ticker | None]:
    """A :class:`Ticker` over ``progress`` for the ``with`` block (None when
    there is nobody to tell: no thread is started then)."""
    if progress is None:
        yield None
        return
    if isinstance(progress, Ticker):  # already inside one: its thread serves
        yield progress
        return
    t = Ticker(progress, every)
    t.start()
    try:
        yield t
    finally:
        t.stop()
