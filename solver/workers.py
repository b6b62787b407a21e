"""How many threads a search may run on: the length search (api.py) and the
search in a rig's own metric (costsearch.py) read the same number the same
way."""

from __future__ import annotations

import os

MAX_WORKERS = 64
"""The most threads one search may use (``solve(workers=...)``)."""


def default_workers() -> int:
    """Every core this process may run on (``taskset`` and containers may
    allow fewer than the machine has)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_WORKERS))


def check_workers(workers: int | None) -> int:
    """``workers`` checked (a whole number from 1 to MAX_WORKERS), or every
    core for None."""
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be a whole number from 1 to {MAX_WORKERS}, not {workers!r}")
    return workers
