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
  everything but the choice among the solver's solutions;
* ``default``: config/rig.toml as shipped.

    python benchmarks/motion.py                    # all variants, seeds 101..130
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

from robot.app.start import run_start  # noqa: E402
from robot.rig.config import Config, load_config  # noqa: E402
from robot.sim.protocol_sim import forget, rig_for_url, sim_url  # noqa: E402


def variants(cfg: Config) -> dict[str, Config]:
    def with_(corner: bool, half: str, metric: str) -> Config:
        cube = dataclasses.replace(cfg.cube, corner_cutting=corner, half_turns=half)
        return dataclasses.replace(cfg, cube=cube, solver=dataclasses.replace(cfg.solver, metric=metric))

    return {
        "before": with_(False, "clockwise", "axial"),
        "overlap": with_(True, "clockwise", "axial"),
        "no-half-dp": with_(True, "clockwise", "rig"),
        "no-choice": with_(True, "short", "axial"),
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
                "compute_s": record.compute_s or 0.0}
    finally:
        forget(port)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="101-130", help="first-last (default 101-130)")
    ap.add_argument("--variants", default="before,overlap,no-half-dp,no-choice,default")
    ap.add_argument("--config", default=None)
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.seeds.split("-"))
    cfg = load_config(args.config)
    table = variants(cfg)
    print(f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}; seeds {lo}..{hi}")
    print("| variant | solved | collisions | mean turns | turning time, mean (min-max, sd) "
          "| estimate - measured, worst | compute, median |")
    print("|---|---|---|---|---|---|---|")
    base = None
    for name in args.variants.split(","):
        c = table[name]
        with tempfile.TemporaryDirectory(prefix="cuberobot-motion-") as tmp:
            runs = [one_run(c, seed, tmp) for seed in range(lo, hi + 1)]
        meas = [r["measured"] for r in runs]
        mean = statistics.fmean(meas)
        base = mean if name == "before" else base
        gain = f" ({(1 - mean / base) * 100:.1f} % less)" if base and name != "before" else ""
        worst = max(abs(r["estimated"] - r["measured"]) / r["measured"] for r in runs if r["measured"])
        collisions = sum(r["collisions"] for r in runs)
        print(f"| {name} | {sum(r['solved'] for r in runs)}/{len(runs)} | {collisions} "
              f"| {statistics.fmean(r['turns'] for r in runs):.1f} | {mean:.3f} s{gain} ({min(meas):.3f}-"
              f"{max(meas):.3f}, {statistics.stdev(meas):.3f}) | {worst * 100:.3f} % "
              f"| {statistics.median(r['compute_s'] for r in runs) * 1000:.0f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
