"""Turning time on the default simulated rig, and what each part of the
planning gives (issue 25).

Runs `cuberobot start --headless --seed K` (the same ``run_start`` call the
command makes) for K = 101..130 on the virtual rig at full speed, once per
variant of the default config, and reports the turning time the rig
measured (its DONEs), the plan's estimate, and the collisions the virtual
rig reported:

* ``before``: no corner cutting, half turns clockwise, the axial metric
  (the set-up before issue 25);
* ``overlap``: the cube's overlap model only;
* ``no-half-dp``, ``no-choice``: everything but the half-turn directions,
  everything but the choice among the solver's solutions (one solution, the
  cheapest in the axial metric);
* ``no-search``: everything but the search in the rig's own time (the
  rig compiled into a cost automaton, ``[solver] search_ms``, issue 45):
  the choice among the candidates only, as before issue 45;
* ``search``: the default with 1000 ms of that search (``search_ms =
  1000``, as the flipper and two-gripper examples have it);
* ``default``: config/rig.toml as shipped (``search_ms = 0``: on this rig
  the search saves less turning than it takes computing).

Each of the two turned off alone is given with its share of the gain
(``before`` - ``default``): what the default loses without it. The variants
run interleaved seed by seed, so a busy spell of the shared host falls on
all of them alike (the load changes only what the solver finds in its
100 ms; the turning time is the rig's own clock). ``--repeats N`` runs the
seeds N times.

``--firmware`` then turns the default variant's solutions (the same seeds,
the same moves, planned the same way) on the Uno build in simavr, checked
for collisions from its step pulses (robot/sim/pulses.py, the harness's
edge log) and timed by its own DONEs, beside the virtual rig's figure.

    python benchmarks/motion.py                    # all variants, seeds 101..130
    python benchmarks/motion.py --variants before,default --firmware
    python benchmarks/motion.py --variants before,default,search   # the search's gain and its compute
    python benchmarks/motion.py --variants default --seeds 101-110
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the simavr harness's tooling (simavr_rig, fwtools)

from robot.app.engines import run_start  # noqa: E402
from robot.rig.config import Config  # noqa: E402
from robot.rig.loading import load_config  # noqa: E402
from robot.sim.protocol_sim import forget, rig_for_url, sim_url  # noqa: E402


def variants(cfg: Config) -> dict[str, Config]:
    def with_(corner: bool, half: str, metric: str, search_ms: int | None = None) -> Config:
        cube = dataclasses.replace(cfg.cube, corner_cutting=corner, half_turns=half)
        solver = dataclasses.replace(cfg.solver, metric=metric,
                                     search_ms=cfg.solver.search_ms if search_ms is None else search_ms)
        return dataclasses.replace(cfg, cube=cube, solver=solver)

    return {
        "before": with_(False, "clockwise", "axial"),
        "overlap": with_(True, "clockwise", "axial"),
        "no-half-dp": with_(True, "clockwise", "rig"),
        "no-choice": with_(True, "short", "axial"),
        "no-search": with_(True, "short", "rig", search_ms=0),
        "search": with_(True, "short", "rig", search_ms=1000),
        "default": cfg,
    }


def one_run(cfg: Config, seed: int, state_dir: str) -> dict:
    port = sim_url(f"motion-{seed}-{time.monotonic_ns()}", speed="max")
    try:
        record = run_start(cfg, port=port, headless=True, state_dir=state_dir, seed=seed, out=lambda _l: None)
        rig = rig_for_url(port)
        return {"seed": seed, "solved": rig.cube.is_solved(), "collisions": len(rig.collisions),
                "turns": record.turns or 0, "length": record.length or 0,
                "estimated": record.estimated_turning_s or 0.0,
                "measured": record.measured_turning_s or 0.0,
                "compute_s": record.compute_s or 0.0, "moves": record.moves or ""}
    finally:
        forget(port)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="101-130", help="first-last (default 101-130)")
    ap.add_argument("--variants", default="before,overlap,no-half-dp,no-choice,search,default")
    ap.add_argument("--config", default=None)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--firmware", action="store_true",
                    help="also turn the default variant's solutions on the firmware in simavr")
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.seeds.split("-"))
    cfg = load_config(args.config)
    table = variants(cfg)
    print(f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}; seeds {lo}..{hi}")
    names = args.variants.split(",")
    print(f"# load average at the start: {os.getloadavg()[0]:.1f}", flush=True)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory(prefix="cuberobot-motion-") as tmp:
        for _ in range(args.repeats):
            for seed in range(lo, hi + 1):
                for name in names:  # interleaved: the host's load falls on every variant alike
                    runs[name].append(one_run(table[name], seed, tmp))
    print(f"# load average at the end: {os.getloadavg()[0]:.1f}")
    means = {n: statistics.fmean(r["measured"] for r in runs[n]) for n in names}
    gain = means["before"] - means["default"] if {"before", "default"} <= set(means) else None
    print("| variant | solved | collisions | mean turns | turning time, mean (min-max, sd) "
          "| share of the gain lost | estimate - measured, worst | compute, median |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        rs = runs[name]
        meas = [r["measured"] for r in rs]
        mean = means[name]
        less, share = "", "-"
        if "before" in means and name != "before":
            less = f" ({(1 - mean / means['before']) * 100:.1f} % less)"
        if gain and name not in ("before", "default"):
            share = f"{(mean - means['default']) / gain * 100:.0f} %"
        worst = max(abs(r["estimated"] - r["measured"]) / r["measured"] for r in rs if r["measured"])
        print(f"| {name} | {sum(r['solved'] for r in rs)}/{len(rs)} | {sum(r['collisions'] for r in rs)} "
              f"| {statistics.fmean(r['turns'] for r in rs):.1f} | {mean:.3f} s{less} ({min(meas):.3f}-"
              f"{max(meas):.3f}, {statistics.stdev(meas):.3f}) | {share} | {worst * 100:.3f} % "
              f"| {statistics.median(r['compute_s'] for r in rs) * 1000:.0f} ms |", flush=True)
    if args.firmware and "default" in runs:
        on_firmware(table["default"], runs["default"][:hi - lo + 1])
    return 0


def on_firmware(cfg: Config, runs: list[dict]) -> None:
    """The virtual rig's solutions, turned by the firmware in simavr."""
    from fwtools import UNO_ELF, make, read_edges
    from simavr_rig import SimavrRig

    from robot.rig import job
    from robot.rig.journal import Journal
    from robot.rig.link import Link
    from robot.rig.motion import estimate_s, plan
    from robot.rig.protocol import TICK_HZ
    from robot.sim.pulses import collisions, drift_ticks, pulsed_moves
    from robot.sim.virtual_rig import Mechanics
    from solver import group_steps, random_cube

    make("all", "sim")
    mech = Mechanics.from_config(cfg)
    rows = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cuberobot-motion-fw-") as tmp:
        for r in runs:
            start = random_cube(r["seed"])  # the cube `start --seed` put in the virtual rig
            steps = plan(group_steps(r["moves"]), cfg)
            log = Path(tmp) / f"{r['seed']}.edges"
            t = time.monotonic()
            with SimavrRig(UNO_ELF, mech, state=start.to_facelets(), edge_log=log) as rig, \
                    Link(cfg, rig.port) as link:
                link.connect()
                with Journal(Path(tmp) / str(r["seed"])) as journal:
                    report = job.run(link, journal, start, steps)
                end = start.apply(r["moves"])
                solved = end.is_solved() and rig.state() == end.to_facelets()
                rig.counts()  # flushes the edge log
            edges = read_edges(log)
            drift = drift_ticks(pulsed_moves(edges, steps), steps, cfg.profiles())
            rows.append({"seed": r["seed"], "solved": solved, "done": report.executed_s or 0.0,
                         # the pulses' own time: the plan, and how late the last pulse left
                         "fw": estimate_s(steps, cfg) + drift[-1] / TICK_HZ,
                         "virtual": r["measured"], "plan": estimate_s(steps, cfg),
                         "collisions": len(collisions(edges, steps, mech)),
                         "wall": time.monotonic() - t})
            log.unlink()
    fw = [x["fw"] for x in rows]
    virt = [x["virtual"] for x in rows]
    far = max(rows, key=lambda x: abs(x["fw"] - x["virtual"]) / x["virtual"])
    worst = abs(far["fw"] - far["virtual"]) / far["virtual"]
    done = [x["done"] for x in rows]
    print(f"\n| firmware in simavr, {len(rows)} seeds | solved | collisions (from the step pulses) "
          "| turning time from the pulses, mean (min-max) | by its DONEs | virtual rig, same moves "
          "| pulses - virtual, mean / worst seed | wall per solve |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| default | {sum(x['solved'] for x in rows)}/{len(rows)} | {sum(x['collisions'] for x in rows)} "
          f"| {statistics.fmean(fw):.3f} s ({min(fw):.3f}-{max(fw):.3f}) | {statistics.fmean(done):.3f} s "
          f"| {statistics.fmean(virt):.3f} s "
          f"| {(statistics.fmean(fw) / statistics.fmean(virt) - 1) * 100:+.2f} % / {worst * 100:.2f} % "
          f"(seed {far['seed']}: {far['fw']:.3f} s, DONEs {far['done']:.3f} s, "
          f"virtual {far['virtual']:.3f} s) "
          f"| {(time.monotonic() - t0) / len(rows):.1f} s |")


if __name__ == "__main__":
    sys.exit(main())
