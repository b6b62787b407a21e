"""kill -9 and resume on CUBOTino driven from the Pi's own pins (issue 49), at full count.

Each run is a cuberobot command on gpiozero's mock pins (``gpio://``, the
virtual CUBOTino moved by the pins' pulses), its pins recording every
change, killed with SIGKILL, then `cuberobot resume` in a new process on
recording pins too (tests/gpio_soak.py). Checked from what the pins
recorded: the killed command's pins turned only the plan's layers, in
order, each once; resume moved nothing and said "state unknown: scan
again" (a rig on the pins dies with its command: docs/hardware.md), or
"nothing to resume" when the job had ended or not begun.

``--cut-at time`` (default): `cuberobot start --headless` (scan, solve, the
job, the confirming scan) killed at a random moment, uniform from 1.5 s to
the length of one whole run, timed first, as the Arduino kinds' soak
(benchmarks/mechanisms.py --power-cut). ``--cut-at move``: the suite's test
(tests/test_gpio_soak.py) at full count, a dry run killed a random moment
after the journal says a random robot move of the job was sent.

    python benchmarks/gpio_soak.py                 # 20 runs of start, killed at random
    python benchmarks/gpio_soak.py --runs 20 --cut-at move
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import gpio_soak  # noqa: E402  (test tooling, from tests/)


def timed_runs(n: int, speed: str) -> tuple[Counter[str], list[str], float]:
    """N runs of `start --headless`, each killed at a random moment of a whole run."""
    command = ["start", "--headless", "--port", f"gpio://?speed={speed}"]
    with tempfile.TemporaryDirectory() as d:  # one run to its end: how long a run takes here
        whole = gpio_soak.power_cut_run(0, Path(d), [*command, "--seed", "1000"], kill_after_s=float("inf"))
    assert whole.outcome == "ended" and not whole.failures, whole
    print(f"  a whole run takes {whole.took_s:.1f} s; kills at random from 1.5 s to that", file=sys.stderr,
          flush=True)
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    for k in range(1, n + 1):
        kill = random.Random(f"gpio-{k}").uniform(1.5, whole.took_s)
        with tempfile.TemporaryDirectory() as d:
            r = gpio_soak.power_cut_run(k, Path(d), [*command, "--seed", str(k)], kill_after_s=kill)
        _tell(k, f"kill at {kill:.1f} s", r, outcomes, failures)
    return outcomes, failures, whole.took_s


def move_runs(n: int, speed: str) -> tuple[Counter[str], list[str], float]:
    """N dry runs, each killed a random moment after a random robot move of the job was sent."""
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    for k in range(1, n + 1):
        rng = random.Random(f"gpio-move-{k}")
        at_move, delay_s = rng.randrange(0, 7), rng.uniform(0.0, 0.3)
        with tempfile.TemporaryDirectory() as d:
            r = gpio_soak.power_cut_run(k, Path(d), ["dry-run", "R U R' U'", "--port", f"gpio://?speed={speed}"],
                                        at_move=at_move, delay_s=delay_s)
        if r.outcome != "unknown":  # as tests/test_gpio_soak.py holds it
            r.failures.append(f"run {k}: the kill fell outside the job: {r.outcome}")
        _tell(k, f"kill {delay_s:.2f} s after robot move {at_move} was sent", r, outcomes, failures)
    return outcomes, failures, 0.0


def _tell(k: int, when: str, r: gpio_soak.CutResult, outcomes: Counter[str], failures: list[str]) -> None:
    outcomes[r.outcome] += 1
    failures += r.failures
    said = "".join(f"; {f}" for f in r.failures)
    print(f"  run {k}: {when}, {r.done_at_kill} robot moves journalled done, {len(r.made)} of "
          f"{r.plan_turns} layer turns made, {r.outcome}{said}", file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20, metavar="N")
    ap.add_argument("--cut-at", choices=("time", "move"), default="time")
    ap.add_argument("--speed", default=None, help="the servos' pace on the mock pins, times real time "
                                                  "(default 4 for --cut-at time, 2 for move)")
    args = ap.parse_args()
    speed = args.speed or ("4" if args.cut_at == "time" else "2")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {load:.1f}, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}; --cut-at {args.cut_at}, "
          f"gpio://?speed={speed}")
    t0 = time.perf_counter()
    outcomes, failures, whole_s = (timed_runs if args.cut_at == "time" else move_runs)(args.runs, speed)
    print("| command | runs | state unknown, nothing moved | ended before the kill | killed before the job "
          "| failures | wall |")
    print("|---|---|---|---|---|---|---|")
    what = (f"start --headless (a whole run {whole_s:.1f} s)" if args.cut_at == "time"
            else "dry-run, 11 robot moves")
    print(f"| {what} | {args.runs} | {outcomes['unknown']} | {outcomes['ended']} | {outcomes['not-begun']} "
          f"| {len(failures)} | {time.perf_counter() - t0:.0f} s |")
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
