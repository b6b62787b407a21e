"""The 2x2 solver: table build, the distance distributions, solve times.

    .venv/bin/python benchmarks/pocket.py               # 2000 random cubes, 3 builds
    .venv/bin/python benchmarks/pocket.py --cubes 10000

Builds the distance tables from scratch (``--builds`` times, in memory, not
touching the cache) and prints how many of the 3,674,160 positions lie at
each distance in HTM and QTM next to the known counts; then loads the
cached table and times ``solve`` on uniformly random cubes (wall clock
around each call, the table already loaded), and scrambles of 1 to 6 face
turns come back with at most that many moves.

Bars: the distributions match; no HTM answer longer than 11 (QTM 14);
median solve under 1 ms.
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

from solver import random_scramble  # noqa: E402
from solver.pocket import SOLVED_POCKET, random_pocket, solve  # noqa: E402
from solver.pocket.optimal import prepare  # noqa: E402
from solver.pocket.tables import build  # noqa: E402

KNOWN = {
    "htm": [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644],
    "qtm": [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cubes", type=int, default=2000)
    ap.add_argument("--builds", type=int, default=3)
    args = ap.parse_args()
    print(f"{platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores,"
          f" load {os.getloadavg()[0]:.1f}")
    ok = True
    times = []
    arrays = {}
    for _ in range(args.builds):
        t = time.perf_counter()
        arrays = build()
        times.append(time.perf_counter() - t)
    print(f"table build (both metrics): median {statistics.median(times):.2f} s"
          f" ({min(times):.2f}-{max(times):.2f}) over {args.builds};"
          f" stored {sum(a.nbytes for a in arrays.values())} bytes")
    for metric, known in KNOWN.items():
        counts = arrays[f"{metric}_counts"].tolist()
        same = counts == known
        ok &= same
        print(f"{metric.upper()} distribution: {', '.join(map(str, counts))} (sum {sum(counts)})"
              f" {'= the known one' if same else '!= the known ' + str(known)}")
    for metric in KNOWN:
        prepare(metric=metric)
        ms, lengths = [], []
        for seed in range(args.cubes):
            cube = random_pocket(seed).to_facelets()
            t = time.perf_counter()
            sol = solve(cube, metric=metric)
            ms.append((time.perf_counter() - t) * 1000)
            lengths.append(sol.cost)
        longest = max(lengths)
        ok &= longest <= (11 if metric == "htm" else 14) and statistics.median(ms) < 1.0
        q = statistics.quantiles(ms, n=100)
        print(f"{metric.upper()} solve of {args.cubes} random cubes: median {statistics.median(ms):.3f} ms,"
              f" p90 {q[89]:.3f}, max {max(ms):.3f}; mean length {statistics.mean(lengths):.2f},"
              f" longest {longest:g}")
    worst = 0
    for n in range(1, 7):
        for seed in range(200):
            cube = SOLVED_POCKET.apply(random_scramble(n, seed)).to_facelets()
            worst = max(worst, solve(cube).length - n)
    ok &= worst <= 0
    print(f"scrambles of 1 to 6 face turns (200 each): answers at most as long: {worst <= 0}")
    print("bars:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
