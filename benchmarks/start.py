"""The whole loop, as a user runs it: `cuberobot start --headless`, many times.

Each run puts a randomly scrambled cube in a simulated rig, renders it under
random light through the simulated cameras, scans, classifies, solves with the
rig's own timing and turns the motors until the rig's cube is solved, then
scans again to confirm. Reported per run: solved or not, whether a human
would have been needed (a doubtful scan), the time from pressing start to
the first motor command (scan + classify + solve), and the estimated turning
time against the rig's own measurement.

    python benchmarks/start.py                 # 50 runs on the Python virtual rig
    python benchmarks/start.py --firmware 10   # plus 10 runs on the real firmware in simavr
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robot.app.start import ScanDoubtful, run_start  # noqa: E402
from robot.rig.config import load_config  # noqa: E402
from robot.sim.protocol_sim import forget, rig_for_url, sim_url  # noqa: E402


def one_run(cfg, i: int, seed: int, state_dir: str, firmware: str | None) -> dict:
    port = None if firmware else sim_url(f"bench-{i}", speed="max")
    try:
        record = run_start(cfg, port=port, firmware=firmware, headless=True, state_dir=state_dir,
                           seed=seed, out=lambda _line: None)
    except ScanDoubtful as e:
        return {"seed": seed, "solved": False, "human": True, "why": str(e)}
    if port is not None:
        solved = rig_for_url(port).cube.is_solved()
        forget(port)
    else:
        solved = record.get("confirmed", False)
    est, meas = record.get("estimated_turning_s", 0.0), record.get("measured_turning_s")
    return {"seed": seed, "solved": solved and record["status"] in ("solved", "already-solved"),
            "human": False, "first_move_s": record.get("start_to_first_move_s", record.get("scan_s")),
            "scan_s": record["scan_s"], "compute_s": record.get("compute_s", 0.0),
            "captures": record["captures"], "turns": record.get("turns", 0),
            "time_error": abs(meas - est) / est if meas and est else 0.0,
            "scan_correct": record.get("scan_correct")}


def report(name: str, runs: list[dict]) -> list[str]:
    solved = sum(r["solved"] for r in runs)
    human = sum(r["human"] for r in runs)
    fm = sorted(r["first_move_s"] for r in runs if not r["human"])
    lines = [
        f"{name}: {solved}/{len(runs)} solved, {human} needed a human, "
        f"{sum(r.get('captures', 1) > 1 for r in runs)} re-captured",
        f"  start -> first motor command: median {statistics.median(fm) * 1000:.0f} ms, "
        f"max {max(fm) * 1000:.0f} ms, under 1 s: {sum(t < 1.0 for t in fm)}/{len(fm)}",
        f"  scan median {statistics.median(r['scan_s'] for r in runs if not r['human']) * 1000:.0f} ms, "
        f"solve median {statistics.median(r['compute_s'] for r in runs if not r['human']) * 1000:.0f} ms",
        f"  estimated vs measured turning time: worst {max(r.get('time_error', 0) for r in runs) * 100:.3f}%",
    ]
    for r in runs:
        if not r["solved"]:
            lines.append(f"  seed {r['seed']}: NOT solved {r.get('why', '')}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--firmware", type=int, default=0, metavar="N", help="also N runs in simavr")
    ap.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args()
    cfg = load_config()
    out = [f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
           f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"]
    with tempfile.TemporaryDirectory() as state_dir:
        runs = [one_run(cfg, i, args.seed + i, state_dir, None) for i in range(args.runs)]
        out += report("virtual rig", runs)
        if args.firmware:
            elf = ROOT / "firmware" / "build" / "uno" / "cuberobot.elf"
            subprocess.run(["make", "-s", "-C", str(ROOT / "firmware"), "all", "sim"], check=True)
            t = time.monotonic()
            fw = [one_run(cfg, i, args.seed + 500 + i, state_dir, str(elf)) for i in range(args.firmware)]
            out += report(f"firmware in simavr ({time.monotonic() - t:.0f} s)", fw)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
