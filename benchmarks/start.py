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
    python benchmarks/start.py --starts 200    # #14's bar: 200 headless starts, random seeds and light

``--starts N`` runs `cuberobot start --headless` N times (the same
``run_start`` call the command makes, the terminal face headless) with
random seeds, so random scrambles and random light, and counts: solved,
needing a person (a doubtful scan: exit 3), other failures (with their exit
code), and the look-again turns and re-captures used. Failing seeds are
named, and with ``--keep DIR`` their run folders (scan pictures with the
doubtful stickers ringed, run.json) are kept there to look at.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robot.app.engines import run_start  # noqa: E402
from robot.app.start import ScanDoubtful  # noqa: E402
from robot.rig.errors import RigError  # noqa: E402
from robot.rig.loading import load_config  # noqa: E402
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
        solved = bool(record.confirmed)
    est, meas = record.estimated_turning_s or 0.0, record.measured_turning_s
    first = record.start_to_first_move_s if record.start_to_first_move_s is not None else record.scan_s
    return {"seed": seed, "solved": solved and record.status in ("solved", "already-solved"),
            "human": False, "first_move_s": first,
            "scan_s": record.scan_s, "compute_s": record.compute_s or 0.0,
            "captures": record.captures, "turns": record.turns or 0,
            "time_error": abs(meas - est) / est if meas and est else 0.0,
            "scan_correct": record.scan_correct}


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


def headless_start(cfg, seed: int, keep: Path | None) -> dict:
    """One `cuberobot start --headless --seed SEED` on the default simulated
    rig, as the command runs it; the outcome and what it took."""
    lines: list[str] = []
    state_dir = tempfile.mkdtemp(prefix="cuberobot-start-")
    t = time.monotonic()
    out = {"seed": seed, "outcome": "solved", "exit": 0}
    record: dict = {}
    try:
        record = run_start(cfg, port=sim_url(f"starts-{seed}", speed="max"), headless=True,
                           state_dir=state_dir, seed=seed, out=lines.append)
        if record.status not in ("solved", "already-solved"):
            out.update(outcome=f"status {record.get('status')}", exit=1)
    except ScanDoubtful as e:
        out.update(outcome="needs a person", exit=e.exit_code, why=str(e))
    except RigError as e:
        out.update(outcome="failed", exit=e.exit_code, why=str(e))
    finally:
        forget(sim_url(f"starts-{seed}", speed="max"))
    out.update(seconds=time.monotonic() - t, captures=(record.captures if record.captures is not None else 0),
               look_again=len(record.look_again_turns if record.look_again_turns is not None else []),
               look_again_undone=bool(record.look_again_undone),
               recaptured=sum(line.startswith(("scan:", "confirmation scan:")) and "capturing" in line
                              for line in lines),
               scan_correct=record.scan_correct)
    if out["exit"] and keep is not None:
        shutil.copytree(state_dir, keep / f"seed-{seed}", dirs_exist_ok=True)
        (keep / f"seed-{seed}" / "output.txt").write_text("\n".join(lines + [out.get("why", "")]) + "\n")
    shutil.rmtree(state_dir, ignore_errors=True)
    return out


def starts_report(runs: list[dict]) -> list[str]:
    n = len(runs)
    solved = sum(r["exit"] == 0 for r in runs)
    person = [r for r in runs if r["exit"] == 3]
    other = [r for r in runs if r["exit"] not in (0, 3)]
    secs = sorted(r["seconds"] for r in runs)
    lines = [
        f"headless starts: {solved}/{n} solved, {len(person)} needing a person (exit 3), "
        f"{len(other)} other failures",
        f"  look-again turns used in {sum(r['look_again'] > 0 for r in runs)} runs "
        f"({sum(r['look_again'] for r in runs)} turns, {sum(r['look_again_undone'] for r in runs)} undone); "
        f"re-captured in {sum(r['recaptured'] > 0 for r in runs)} runs; "
        f"scan wrong but trusted: {sum(r['scan_correct'] is False for r in runs)}",
        f"  seconds a start: median {statistics.median(secs):.1f}, max {secs[-1]:.1f}",
    ]
    for r in person + other:
        lines.append(f"  seed {r['seed']}: {r['outcome']} (exit {r['exit']}): {r.get('why', '')[:300]}")
    return lines


def run_starts(cfg, n: int, seeds: list[int] | None, keep: Path | None) -> list[str]:
    pick = random.SystemRandom()
    seeds = seeds or [pick.randrange(2**31) for _ in range(n)]
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    runs = []
    for i, seed in enumerate(seeds):
        runs.append(headless_start(cfg, seed, keep))
        r = runs[-1]
        print(f"[{i + 1}/{len(seeds)}] seed {seed}: {r['outcome']} in {r['seconds']:.1f} s"
              + (f", look-again {r['look_again']}" if r["look_again"] else ""), file=sys.stderr, flush=True)
    return starts_report(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--firmware", type=int, default=0, metavar="N", help="also N runs in simavr")
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--starts", type=int, default=0, metavar="N",
                    help="instead: N headless starts with random seeds (the #14 bar is 200)")
    ap.add_argument("--seeds", type=int, nargs="+", metavar="SEED", help="with --starts: these seeds")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="with --starts: keep failing runs' folders here")
    args = ap.parse_args()
    cfg = load_config()
    out = [f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
           f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"]
    if args.starts or args.seeds:
        out += run_starts(cfg, args.starts, args.seeds, args.keep)
        out.append(f"load at the end {os.getloadavg()[0]:.1f}")
        print("\n".join(out))
        return 0
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
