"""How much compute the six-motor rig's motion bar would take (issue 45).

Issue 45 asks for the default rig's turning time at most 0.65 x the set-up
before issue 25 (no corner cutting, half turns clockwise, the axial
metric). benchmarks/motion.py measures the shipped set-up (0.70-0.71 x, no
search) and one second of the search in the rig's own time (0.69 x). This
measures what more search buys, to say how far the bar is: for each seed
K (the cube `cuberobot start --seed K` scrambles), the `before` set-up's
turning time as the virtual rig measures it (benchmarks/motion.py's own
run), then the time of the plan a start would turn with ``[solver]
search_ms`` set to each of ``--budgets`` seconds (the start's own solving
call, ``--workers`` threads), and with ``--wide S`` one more: S seconds of
the same search over a wider space (phase 1 up to 8 moves past its
shortest instead of 6, phase 2 up to 3 past its shortest instead of 1),
beating the candidates as a start does.

The plan's time is the estimate the rig then measures (equal on every
seed, benchmarks/motion.py); the host's load changes only what a search
finds in its budget, so the budgets run one after another seed by seed.

    python benchmarks/motion_search.py                       # seeds 101-115, 0,1,4,16 s
    python benchmarks/motion_search.py --budgets 0,1,4,16,32 --wide 60
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import tempfile
import time

from motion import one_run, variants  # benchmarks/motion.py: the same runs and set-ups

from robot.app.solving import _fastest_for_rig
from robot.rig.loading import load_config
from robot.rig.motion import estimate_s
from robot.rig.motion_automaton import best_solution
from solver import Move, parse_moves
from solver.scramble import random_cube

BAR = 0.65
WIDE_EXTRA, WIDE_P2EXTRA = 8, 3


def planned(cfg, facelets: str, budget_s: float, workers: int) -> tuple[list[Move], float]:
    """The moves `start` would turn with this much search, and their turning time."""
    c = dataclasses.replace(cfg, solver=dataclasses.replace(cfg.solver, search_ms=int(budget_s * 1000)))
    sol, steps = _fastest_for_rig(c, facelets, max_length=None, budget_ms=cfg.solver.budget_ms,
                                  workers=workers)
    return parse_moves(sol.moves), estimate_s(steps, c)


def wide_s(cfg, facelets: str, beat: tuple[list[Move], float], budget_s: float, workers: int) -> float:
    """The wider search's best turning time, or the time of ``beat`` (moves
    and their time) when it found nothing faster: the start's own search
    (robot/rig/motion_automaton.py), given a wider space."""
    found = best_solution(facelets, cfg, budget_s, candidates=[beat[0]], workers=workers,
                          extra=WIDE_EXTRA, p2extra=WIDE_P2EXTRA)
    return beat[1] if found is None else estimate_s(found[1], cfg)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="101-115", help="first-last (default 101-115)")
    ap.add_argument("--budgets", default="0,1,4,16", help="seconds of search, comma-separated")
    ap.add_argument("--wide", type=float, default=0.0, help="seconds of the wider search (0: none)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.seeds.split("-"))
    budgets = [float(x) for x in args.budgets.split(",")]
    cfg = load_config(None)
    before_cfg = variants(cfg)["before"]
    cols = [f"{b:g} s" for b in budgets] + ([f"wide {args.wide:g} s"] if args.wide > 0 else [])
    print(f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}; seeds {lo}..{hi}, "
          f"{args.workers} threads; load at the start {os.getloadavg()[0]:.1f}", flush=True)
    print("| seed | before | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    before: list[float] = []
    times: dict[str, list[float]] = {c: [] for c in cols}
    with tempfile.TemporaryDirectory(prefix="cuberobot-motion-search-") as tmp:
        for seed in range(lo, hi + 1):
            run = one_run(before_cfg, seed, tmp)
            if not run["solved"] or run["collisions"]:
                raise SystemExit(f"seed {seed}: the before set-up did not solve cleanly")
            before.append(run["measured"])
            facelets = random_cube(seed).to_facelets()
            plans = [planned(cfg, facelets, b, args.workers) for b in budgets]
            row = [t for _, t in plans]
            if args.wide > 0:  # beating the candidates, as a start's search does
                cand = (plans[budgets.index(0.0)] if 0.0 in budgets
                        else planned(cfg, facelets, 0, args.workers))
                row.append(wide_s(cfg, facelets, cand, args.wide, args.workers))
            for c, t in zip(cols, row):
                times[c].append(t)
            cells = " | ".join(f"{t:.3f} s" for t in row)
            print(f"| {seed} | {before[-1]:.3f} s | {cells} |", flush=True)
    mb = statistics.fmean(before)
    print(f"\n# load at the end {os.getloadavg()[0]:.1f}")
    print("| search | mean turning time | / before (bar 0.65) | per seed / before, min-max "
          "| seeds at most 0.65 |")
    print("|---|---|---|---|---|")
    print(f"| before | {mb:.3f} s | 1 | - | - |")
    for c in cols:
        ts = times[c]
        per = [t / b for t, b in zip(ts, before)]
        print(f"| {c} | {statistics.fmean(ts):.3f} s | **{statistics.fmean(ts) / mb:.3f}** | "
              f"{min(per):.3f}-{max(per):.3f} | {sum(p <= BAR for p in per)}/{len(per)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
