"""What many tests need built once, made ahead of the suite's parallel workers.

``tests/conftest.py`` starts this in the background when the suite runs in
parallel: the solver's tables and numba's compiled search in the user's
cache, and the firmware's images in ``firmware/build``. Nothing here is
needed for correctness: the tables and the firmware build hold locks, so a
worker that gets there first builds and the others wait for it; this only
spares four workers from compiling the same code side by side on two cores
at the start of the run. Any failure here is left for the tests to report.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    from solver import random_cube, solve

    solve(random_cube(seed=1), budget_ms=20)
    from fwtools import make

    make("all", "sim")


if __name__ == "__main__":
    try:
        main()
    except BaseException as e:  # noqa: BLE001 - reported by the tests that need the part
        print(f"warm-up: {type(e).__name__}: {e}", file=sys.stderr)
