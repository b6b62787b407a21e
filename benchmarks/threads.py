"""One search thread or one per core: which makes the solver's answers
better (issue 25, "threads chosen by measurement").

For the same random cubes, interleaved cube by cube and in rotating order
(so that a busy spell of the shared host falls on all alike), times
``solve`` with ``workers=1``, ``workers=N`` (every core this process may
use) and the default (one thread to the first solution, then N) in three
ways:

* the first answer of at most 20 moves (``max_length=20, budget_ms=0``),
* the first answer with no limit (``budget_ms=0``),
* the length found in a 100 ms budget (``budget_ms=100``, htm) and, for the
  rig, the axial cost found in 100 ms.

Each round uses other cubes; the table gives each round's medians (and
means for lengths) so that the spread between rounds shows.

    python benchmarks/threads.py                  # 3 rounds of 100 cubes
    python benchmarks/threads.py --rounds 5 --cubes 50
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver import default_workers, prepare, random_cube, solve  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cubes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7000)
    args = ap.parse_args()
    prepare()
    many = default_workers()
    kinds: tuple[int | None, ...] = (1, many, None)
    print(f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores ({many} usable), Python "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}; {args.rounds} rounds of "
          f"{args.cubes} cubes; workers 1, {many} and the default")
    print("| round, load | first <= 20 moves, median ms (p90) | first, no limit, median ms (p90) "
          "| 100 ms: mean length | 100 ms: mean axial cost |")
    print("|---|---|---|---|---|")
    for r in range(args.rounds):
        load = os.getloadavg()[0]
        ms: dict[tuple[str, int | None], list[float]] = {}
        length: dict[int | None, list[int]] = {w: [] for w in kinds}
        axial: dict[int | None, list[float]] = {w: [] for w in kinds}
        for k in range(args.cubes):
            cube = random_cube(args.seed + 1000 * r + k)
            order = kinds[k % 3:] + kinds[:k % 3]
            for w in order:
                for name, kw in (("20", {"max_length": 20}), ("any", {})):
                    t = time.perf_counter()
                    solve(cube, budget_ms=0, workers=w, **kw)
                    ms.setdefault((name, w), []).append((time.perf_counter() - t) * 1000)
            for w in order:
                length[w].append(solve(cube, budget_ms=100, workers=w).length)
                axial[w].append(solve(cube, budget_ms=100, workers=w, metric="axial").cost)

        def cell(name: str, ms: dict[tuple[str, int | None], list[float]] = ms,
                 kinds: tuple[int | None, ...] = kinds) -> str:
            parts = []
            for w in kinds:
                xs = sorted(ms[(name, w)])
                parts.append(f"{statistics.median(xs):.2f} ({xs[int(0.9 * len(xs))]:.2f})")
            return " / ".join(parts)

        print(f"| {r + 1}, {load:.1f}-{os.getloadavg()[0]:.1f} | {cell('20')} | {cell('any')} "
              f"| {' / '.join(f'{statistics.fmean(length[w]):.2f}' for w in kinds)} "
              f"| {' / '.join(f'{statistics.fmean(axial[w]):.3f}' for w in kinds)} |", flush=True)
    print(f"(each cell: workers=1 / workers={many} / the default)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
