"""CFOP benchmark: length and time of rule-based solves of random cubes.

    python benchmarks/cfop.py                 # 1000 cubes
    python benchmarks/cfop.py --cubes 200 --seed 7

Every solution is applied to its cube and checked stage by stage (cross,
each pair, OLL, PLL). Times are per solve after the one-time cross table
build (reported on its own). The bars (issue 17): all solved, mean length
printed (rule-based CFOP is typically 55-65 moves), median under 50 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver import random_cube  # noqa: E402
from solver.cfop import SLOTS, solve_cfop  # noqa: E402
from solver.cfop.cross import cross_solved, distance_table  # noqa: E402
from solver.cfop.engine import f2l_solved, last_layer_oriented, slot_solved  # noqa: E402


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def check(cube, sol) -> None:
    done = []
    for stage in sol.stages:
        cube = cube.apply(stage.moves)
        assert cross_solved(cube), stage.name
        if stage.slot:
            done.append(SLOTS.index(stage.slot))
        assert all(slot_solved(cube, k) for k in done), stage.name
        if stage.name == "OLL":
            assert f2l_solved(cube) and last_layer_oriented(cube)
    assert cube.is_solved()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cubes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")
    t = time.perf_counter()
    distance_table()
    print(f"cross table build (once): {(time.perf_counter() - t) * 1000:.0f} ms")
    lengths, times, per_stage = [], [], {}
    for i in range(args.cubes):
        cube = random_cube(args.seed * 1_000_000 + i)
        t = time.perf_counter()
        sol = solve_cfop(cube)
        times.append((time.perf_counter() - t) * 1000)
        check(cube, sol)
        lengths.append(sol.length)
        for stage in sol.stages:
            key = "F2L (each pair)" if stage.name.startswith("F2L") else stage.name
            per_stage.setdefault(key, []).append(len(stage.moves))
    n = len(lengths)
    print(f"{n}/{args.cubes} solved, every stage's goal checked")
    print(f"length: mean {statistics.mean(lengths):.1f}, median {statistics.median(lengths):.0f}, "
          f"min {min(lengths)}, max {max(lengths)}, stdev {statistics.stdev(lengths):.1f}")
    for name, vals in per_stage.items():
        print(f"  {name}: mean {statistics.mean(vals):.1f} moves, max {max(vals)}")
    print(f"time per solve: median {statistics.median(times):.2f} ms, p90 {pct(times, 90):.2f} ms, "
          f"max {max(times):.2f} ms (bar: median under 50 ms)")


if __name__ == "__main__":
    main()
