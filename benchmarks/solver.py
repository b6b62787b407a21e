"""Solver benchmark, side by side with the `kociemba` package from PyPI.

    python benchmarks/solver.py               # 200 states, every measurement
    python benchmarks/solver.py --states 50   # quicker
    python benchmarks/solver.py --skip-startup
    python benchmarks/solver.py --only-startup

Each bar of issue #16 is one section; its line ends with the bar. Every
solution (ours and kociemba's) is applied to its cube and checked. Where a
figure is compared with kociemba, the two run state by state, interleaved,
so that a change in the shared host's speed hits both alike; times are
wall-clock milliseconds for the whole call.

"busy" means another process spins on a core meanwhile; "one core" runs
the solver in a child process allowed on one core only (sched_setaffinity,
as taskset does), with a spinning process on that same core.

Start-up numbers come from fresh subprocesses: "cold" with empty table and
numba caches, "warm" with both present; import, table load and the first
solve are measured apart, and "warm start" is `cuberobot solve <cube>` from
a new process to its answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# This file is named like the package it measures; keep its own directory off
# the import path so ``import solver`` finds the package, from the repo root.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from solver import Cube, axial_cost, random_cube  # noqa: E402

STARTUP_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import solver, solver.api
t1 = time.perf_counter()
solver.prepare()
t2 = time.perf_counter()
cube = solver.random_cube(12345)
sol = solver.solve(cube, max_length=20)
t3 = time.perf_counter()
assert cube.apply(sol.moves).is_solved()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "first_s": t3 - t2,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

MEMORY_CHILD = r"""
import json, resource, sys
import solver
n, seed = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    cube = solver.random_cube(seed * 100000 + i)
    assert cube.apply(solver.solve(cube).moves).is_solved()
print(json.dumps({"maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
"""Peak memory as measured for the bar: a fresh process (caches present)
imports the solver and solves the benchmark's states with the defaults; the
figure is its resident-set high-water mark (``ru_maxrss``)."""

SPIN = "while True: pass"


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f}, p90 {pct(values, 90):.2f}, p99 {pct(values, 99):.2f}, " \
           f"max {max(values):.2f}"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


@contextlib.contextmanager
def spinning(cpus: set[int] | None = None) -> Iterator[None]:
    """Another process keeps a core busy (on ``cpus`` if given)."""
    p = subprocess.Popen([sys.executable, "-c", SPIN],
                         preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    try:
        time.sleep(0.2)
        yield
    finally:
        p.kill()
        p.wait()


def verify(cube: Cube, moves: str) -> None:
    if not cube.apply(moves).is_solved():
        raise SystemExit(f"WRONG SOLUTION {moves!r} for {cube.to_facelets()}")


def timed(fn: Callable[[], str], cube: Cube) -> tuple[float, str]:
    t = time.perf_counter()
    moves = fn()
    ms = (time.perf_counter() - t) * 1000
    verify(cube, moves)
    return ms, moves


def ours(cube: Cube, **kw) -> Callable[[], str]:
    from solver import solve
    return lambda: solve(cube, **kw).moves


def theirs(cube: Cube) -> Callable[[], str]:
    import kociemba
    return lambda: kociemba.solve(cube.to_facelets())


def side_by_side(cubes: list[Cube], kw: dict) -> tuple[list[float], list[str], list[float], list[str]]:
    """Ours with ``kw`` and kociemba on each state in turn (which goes first
    alternates): our times and solutions, then kociemba's."""
    ot, om, kt, km = [], [], [], []
    for i, c in enumerate(cubes):
        pair = [(ot, om, ours(c, **kw)), (kt, km, theirs(c))]
        for times, moves, fn in (pair if i % 2 == 0 else pair[::-1]):
            ms, m = timed(fn, c)
            times.append(ms)
            moves.append(m)
    return ot, om, kt, km


def length(moves: str) -> int:
    return len(moves.split())


def mean_cost(solutions: list[str]) -> float:
    return statistics.mean(axial_cost(m) for m in solutions)


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(_HERE.parent)}


def startup(env_extra: dict) -> dict:
    env = {**child_env(), **env_extra}
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", STARTUP_CHILD], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(r.stderr)
    out = json.loads(r.stdout)
    out["wall_s"] = wall
    return out


def cli_start(cube: Cube) -> float:
    """`cuberobot solve <cube>`: new process to its answer, in seconds."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "robot", "solve", cube.to_facelets(), "-q"], env=child_env(),
                       capture_output=True, text=True)
    s = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(r.stderr)
    verify(cube, r.stdout.strip())
    return s


def measure_startup(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        caches = {"CUBEROBOT_CACHE": tmp + "/tables", "NUMBA_CACHE_DIR": tmp + "/numba"}
        cold = startup(caches)
        warm = [startup(caches) for _ in range(3)]
    print(f"cold start (no tables, no compiled code) to first solution: {cold['wall_s']:.1f} s")
    for key, what in (("import_s", "import"), ("load_s", "tables and compiled code"),
                      ("first_s", "first solve")):
        print(f"  warm, {what}: " + ", ".join(f"{w[key]:.3f}" for w in warm) + " s")
    # the default numba cache must be current, so the measured process
    # loads the compiled search rather than compiling it
    subprocess.run([sys.executable, "-c", "import solver; solver.prepare()"], env=child_env(), check=True)
    starts = [cli_start(random_cube(args.seed * 100000 + 900 + i)) for i in range(5)]
    print(f"warm start, `cuberobot solve <cube>` from a new process to its answer: "
          f"{', '.join(f'{s:.2f}' for s in starts)} s, median {statistics.median(starts):.2f} s  "
          f"[bar <= 1.5 s: {verdict(statistics.median(starts) <= 1.5)}]")
    r = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(args.states), str(args.seed)],
                       env=child_env(), capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    mem = json.loads(r.stdout)
    print(f"peak RSS of a fresh process solving the {args.states} states (defaults): "
          f"{mem['maxrss_mb']:.0f} MB  [bar <= 200 MB: {verdict(mem['maxrss_mb'] <= 200)}]")


def max_length_promise(cubes: list[Cube]) -> None:
    """--max-length 18 and 20 on 40 states, another process spinning."""
    from solver import SolveError, solve

    with spinning():
        for limit in (18, 20):
            lengths, refused, times = [], 0, []
            for c in cubes[:40]:
                t = time.perf_counter()
                try:
                    s = solve(c, max_length=limit)
                except SolveError:
                    refused += 1
                else:
                    verify(c, s.moves)
                    lengths.append(s.length)
                times.append((time.perf_counter() - t) * 1000)
            over = sum(n > limit for n in lengths)
            ok = over == 0 and (limit < 20 or refused == 0)
            print(f"max_length={limit}, busy: {len(lengths)} answered (longest {max(lengths, default=0)}), "
                  f"{refused} refused, {over} longer; time {spread(times)} ms  "
                  f"[bar: none longer{', all answered' if limit >= 20 else ''}: {verdict(ok)}]")


def one_core_costs(seeds: list[int], budget_ms: float) -> list[float]:
    """Our axial costs from a child allowed on one core, with a spinning
    process on that core."""
    cpu = min(os.sched_getaffinity(0))
    script = ("import json, sys; from solver import solve, axial_cost, random_cube; "
              "cubes = [random_cube(int(s)) for s in sys.argv[2:]]; "
              "sols = [solve(c, metric='axial', budget_ms=float(sys.argv[1])).moves for c in cubes]; "
              "assert all(c.apply(m).is_solved() for c, m in zip(cubes, sols)); "
              "print(json.dumps([axial_cost(m) for m in sols]))")
    with spinning({cpu}):
        r = subprocess.run([sys.executable, "-c", script, str(budget_ms), *map(str, seeds)], env=child_env(),
                           capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    if r.returncode:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1, help="states are random_cube(seed*100000 + i)")
    ap.add_argument("--runs", type=int, default=3, help="runs of the axial comparison at the default budget")
    ap.add_argument("--skip-startup", action="store_true")
    ap.add_argument("--only-startup", action="store_true", help="just the start-up measurements")
    args = ap.parse_args()

    seeds = [args.seed * 100000 + i for i in range(args.states)]
    cubes = [random_cube(s) for s in seeds]
    from solver import default_workers
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus "
          f"({default_workers()} workers), python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{len(cubes)} uniformly random states (seed {args.seed})")

    if not args.skip_startup:
        measure_startup(args)
    if args.only_startup:
        return
    from solver import prepare
    prepare()
    theirs(cubes[0])()  # kociemba loads its tables

    ft, fm, kt, km = side_by_side(cubes, {"budget_ms": 0})
    print(f"first solution (budget_ms=0): {spread(ft)} ms, mean length "
          f"{statistics.mean(map(length, fm)):.2f}; kociemba {spread(kt)} ms; ratio of medians "
          f"{statistics.median(ft) / statistics.median(kt):.3f}  "
          f"[bar median <= 2, p99 <= 15: {verdict(statistics.median(ft) <= 2 and pct(ft, 99) <= 15)}]")
    kcost = mean_cost(km)
    print(f"kociemba: mean length {statistics.mean(map(length, km)):.2f}, mean axial cost {kcost:.2f}")

    t10, m10, kt, _ = side_by_side(cubes, {"budget_ms": 10})
    print(f"budget_ms=10 (htm): {spread(t10)} ms, mean length {statistics.mean(map(length, m10)):.2f}; "
          f"kociemba median {statistics.median(kt):.2f} ms  [bar p90 <= 12: {verdict(pct(t10, 90) <= 12)}]")

    t100, m100, _, _ = side_by_side(cubes, {"budget_ms": 100})
    mean100 = statistics.mean(map(length, m100))
    print(f"budget_ms=100 (htm): mean length {mean100:.2f}, time {spread(t100)} ms  "
          f"[bar <= 18.7: {verdict(mean100 <= 18.7)}]")

    ratios = []
    for run in range(args.runs):
        _, ma, _, _ = side_by_side(cubes, {"budget_ms": 100, "metric": "axial"})
        ratios.append(mean_cost(ma) / kcost)
        print(f"budget_ms=100 axial, run {run + 1}: mean axial cost {mean_cost(ma):.2f}, mean length "
              f"{statistics.mean(map(length, ma)):.2f}, ratio to kociemba's {ratios[-1]:.3f}")
    print(f"  axial ratio, {args.runs} runs: {', '.join(f'{r:.3f}' for r in ratios)}  "
          f"[bar <= 0.80 in every run: {verdict(max(ratios) <= 0.80)}]")

    _, m25, _, _ = side_by_side(cubes, {"budget_ms": 25, "metric": "axial"})
    r25 = mean_cost(m25) / kcost
    print(f"budget_ms=25 axial: ratio to kociemba's {r25:.3f}  [bar <= 0.85: {verdict(r25 <= 0.85)}]")

    c1 = one_core_costs(seeds, 100)
    r1 = statistics.mean(c1) / kcost
    print(f"one core shared with a spinning process, budget_ms=100 axial: ratio to kociemba's {r1:.3f}  "
          f"[bar <= 0.85: {verdict(r1 <= 0.85)}]")

    max_length_promise(cubes)


if __name__ == "__main__":
    main()
