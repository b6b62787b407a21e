"""Solver benchmark, side by side with the `kociemba` package from PyPI.

    python benchmarks/solver.py               # 200 states, all measurements
    python benchmarks/solver.py --states 50   # quicker
    python benchmarks/solver.py --skip-startup
    python benchmarks/solver.py --only-startup

Every solution (ours and kociemba's) is applied to its cube and checked.
Startup numbers come from fresh subprocesses: "cold" with empty table and
numba caches, "warm" with both present.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This file is named like the package it measures; keep its own directory off
# the import path so ``import solver`` finds the package, from the repo root.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from solver import Cube, axial_cost, prepare, random_cube, solve  # noqa: E402

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import solver
cube = solver.random_cube(12345)
sol = solver.solve(cube, max_length=20)
t1 = time.perf_counter()
assert cube.apply(sol.moves).is_solved()
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
kb = lambda k: int(status.get(k, "0 kB").split()[0]) / 1024
print(json.dumps({"inside_s": t1 - t0, "length": sol.length,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "anon_mb": kb("RssAnon"), "file_mb": kb("RssFile")}))
"""


MEMORY_CHILD = r"""
import json, resource, sys
import solver
n, seed = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    cube = solver.random_cube(seed * 100000 + i)
    assert cube.apply(solver.solve(cube).moves).is_solved()
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
kb = lambda k: int(status.get(k, "0 kB").split()[0]) / 1024
print(json.dumps({"maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "anon_mb": kb("RssAnon"), "file_mb": kb("RssFile")}))
"""
"""Peak memory as measured for the bar: a fresh process (caches present)
imports the solver and solves the benchmark's states with the defaults
(``budget_ms=100``); the figure is its resident-set high-water mark
(``ru_maxrss``: private and file-backed pages together)."""


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def startup(env_extra: dict) -> dict:
    env = {**os.environ, **env_extra}
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(r.stderr)
    out = json.loads(r.stdout)
    out["wall_s"] = wall
    return out


def verify(cube: Cube, moves: str) -> None:
    if not cube.apply(moves).is_solved():
        raise SystemExit(f"WRONG SOLUTION {moves!r} for {cube.to_facelets()}")


def run_ours(cubes, **kw):
    times, lengths, costs = [], [], []
    for c in cubes:
        t = time.perf_counter()
        s = solve(c, **kw)
        times.append((time.perf_counter() - t) * 1000)
        verify(c, s.moves)
        lengths.append(s.length)
        costs.append(axial_cost(s.moves))
    return times, lengths, costs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1, help="states are random_cube(seed*100000 + i)")
    ap.add_argument("--budget-ms", type=float, default=100)
    ap.add_argument("--skip-startup", action="store_true")
    ap.add_argument("--skip-kociemba", action="store_true")
    ap.add_argument("--only-startup", action="store_true", help="just the cold/warm start measurements")
    args = ap.parse_args()

    cubes = [random_cube(args.seed * 100000 + i) for i in range(args.states)]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, load {os.getloadavg()[0]:.2f}")
    print(f"{len(cubes)} uniformly random states (seed {args.seed})")

    if not args.skip_startup:
        with tempfile.TemporaryDirectory() as tmp:
            cold = startup({"CUBEROBOT_CACHE": tmp + "/tables", "NUMBA_CACHE_DIR": tmp + "/numba"})
            warm = startup({"CUBEROBOT_CACHE": tmp + "/tables", "NUMBA_CACHE_DIR": tmp + "/numba"})
        print(f"cold start (no tables, no compiled code) to first solution: {cold['wall_s']:.1f} s, "
              f"peak RSS {cold['maxrss_mb']:.0f} MB")
        print(f"warm start (new process, caches present) to first solution: {warm['wall_s']:.2f} s "
              f"({warm['inside_s']:.2f} s from import), peak RSS {warm['maxrss_mb']:.0f} MB "
              f"(at the end: {warm['anon_mb']:.0f} MB private, {warm['file_mb']:.0f} MB file-backed:"
              " memory-mapped tables and libraries, shared and reclaimable)")

        # make sure the compiled code in the default cache is current, so the
        # measured process loads it rather than compiling (which takes more)
        subprocess.run([sys.executable, "-c", "import solver; solver.prepare()"], check=True)
        r = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(args.states), str(args.seed)],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(r.stderr)
        mem = json.loads(r.stdout)
        print(f"peak RSS of a fresh process solving the {args.states} states (defaults): "
              f"{mem['maxrss_mb']:.0f} MB (at the end: {mem['anon_mb']:.0f} MB private, "
              f"{mem['file_mb']:.0f} MB file-backed)")

    if args.only_startup:
        return
    prepare()
    t20, l20, _ = run_ours(cubes, max_length=20)
    print(f"max_length=20: median {statistics.median(t20):.2f} ms, p99 {pct(t20, 99):.1f} ms, "
          f"max {max(t20):.1f} ms, mean length {statistics.mean(l20):.2f}, longest {max(l20)}"
          f"  [all verified; {'all <= 20' if max(l20) <= 20 else 'SOME > 20'}]")
    over = [(args.seed * 100000 + i, n, t) for i, (n, t) in enumerate(zip(l20, t20)) if n > 20]
    for seed, n, t in over:
        print(f"  random_cube({seed}): {n} moves when the {100:g} ms budget ran out ({t:.1f} ms)")
    # the same without a time limit that matters: how long 20 moves really take
    tu, lu, _ = run_ours(cubes, max_length=20, budget_ms=10_000)
    print(f"max_length=20, budget_ms=10000: median {statistics.median(tu):.2f} ms, p99 {pct(tu, 99):.1f} ms, "
          f"max {max(tu):.1f} ms, longest {max(lu)}")

    kmed = None
    kcost = None
    if not args.skip_kociemba:
        import kociemba
        kociemba.solve(cubes[0].to_facelets())  # load its tables
        kt, kl, kc = [], [], []
        for c in cubes:
            t = time.perf_counter()
            m = kociemba.solve(c.to_facelets())
            kt.append((time.perf_counter() - t) * 1000)
            verify(c, m)
            kl.append(len(m.split()))
            kc.append(axial_cost(m))
        kmed = statistics.median(kt)
        kcost = statistics.mean(kc)
        print(f"kociemba (PyPI, defaults): median {kmed:.2f} ms, p99 {pct(kt, 99):.1f} ms, "
              f"mean length {statistics.mean(kl):.2f}, mean axial cost {kcost:.2f}")
        print(f"  ratio of medians, ours(max_length=20) / kociemba: {statistics.median(t20) / kmed:.3f}")

    tb, lb, cb = run_ours(cubes, budget_ms=args.budget_ms)
    print(f"budget_ms={args.budget_ms:g} (htm): mean length {statistics.mean(lb):.2f}, "
          f"mean time {statistics.mean(tb):.1f} ms, mean axial cost {statistics.mean(cb):.2f}")

    ta, la, ca = run_ours(cubes, budget_ms=args.budget_ms, metric="axial")
    line = (f"budget_ms={args.budget_ms:g} metric=axial: mean axial cost {statistics.mean(ca):.2f}, "
            f"mean length {statistics.mean(la):.2f}")
    if kcost:
        line += f", ratio to kociemba's axial cost {statistics.mean(ca) / kcost:.3f}"
    print(line)


if __name__ == "__main__":
    main()
