"""What many tests need built once, made ahead of the suite's parallel workers.

``tests/conftest.py`` runs this when the suite runs in parallel: ``solver``
(before the workers start) builds the solver's tables and has numba compile
the two-phase search, the flipper's cost search and the 2x2 solver into the
user's cache; ``firmware`` (in the background, beside the first tests)
builds the firmware's images in ``firmware/build``. Nothing here is needed
for correctness: the tables and the firmware build hold locks, so a worker
that gets there first builds and the others wait for it; but numba's cache
has no lock, and four workers each compiling the same search side by side on
two cores at the start of a run (a fresh checkout compiles anew: numba keys
its cache by the source's path) cost more than compiling it once first. Any
failure here is left for the tests to report.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def solver() -> None:
    from robot.rig.loading import load_config
    from robot.rig.mechanisms import mechanism_for
    from robot.rig.mechanisms.search import best_solution
    from solver import pocket, random_cube, solve

    cube = random_cube(seed=1)
    solve(cube, budget_ms=20)
    mech = mechanism_for(load_config(ROOT / "config" / "examples" / "flipper.toml"))
    assert mech is not None
    best_solution(cube.to_facelets(), mech, budget_s=0.05)
    pocket.solve(pocket.random_pocket(seed=1).to_facelets())


def firmware() -> None:
    from fwtools import make

    make("all", "sim")


if __name__ == "__main__":
    try:
        {"solver": solver, "firmware": firmware}[sys.argv[1]]()
    except BaseException as e:  # noqa: BLE001 - reported by the tests that need the part
        print(f"warm-up {sys.argv[1:]}: {type(e).__name__}: {e}", file=sys.stderr)
