"""The suite's fuzzers at full size: every `cuberobot` command with
hostile arguments, files and input (tests/test_cli_fuzz.py, issue 13's bar
of at least 2000 examples: 2247), every HTTP endpoint of a real
`cuberobot serve` (tests/test_web_hostile_fuzz.py, issue 21's bar of 5,000
cases: 5,400), `cuberobot scan` against camera programs that misbehave
at random (tests/test_camera_fuzz.py, issue 46: 300 examples), and Ctrl-C
twice at moments of `serve`'s start-up that its own output picks
(tests/test_trust.py, issue 46's 24 cases: 48).

    .venv/bin/python benchmarks/fuzz.py              # the full size
    .venv/bin/python benchmarks/fuzz.py --scale 0.5  # half of it
    .venv/bin/python benchmarks/fuzz.py --only web
    .venv/bin/python benchmarks/fuzz.py --only ctrl-c

The suite runs a seeded tenth of each (CUBEROBOT_FUZZ_SCALE unset). This
runs the same tests through pytest, one process, no parallel workers, with
CUBEROBOT_FUZZ_SCALE set, and prints each fuzzer's cases, failures and
wall time. The examples are seeded (hypothesis's ``derandomize``): the
full run's first examples of each command are the suite's.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"cli": "tests/test_cli_fuzz.py::test_every_command_survives_hostile_input",
           "web": "tests/test_web_hostile_fuzz.py", "camera": "tests/test_camera_fuzz.py",
           "ctrl-c": "tests/test_trust.py::"
                     "test_ctrl_c_twice_while_serve_starts_is_one_line_and_leaves_nothing_running"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="CUBEROBOT_FUZZ_SCALE (1: the full size)")
    ap.add_argument("--only", choices=sorted(MODULES), help="one fuzzer")
    args = ap.parse_args()
    env = {**os.environ, "CUBEROBOT_FUZZ_SCALE": repr(args.scale)}
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"CUBEROBOT_FUZZ_SCALE={args.scale:g}")
    bad = 0
    for name, target in MODULES.items():
        if args.only and name != args.only:
            continue
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                            "-s", "--durations=0", target], cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        out = r.stdout
        summary = out.strip().splitlines()[-1] if out.strip() else r.stderr.strip()[-300:]
        if name == "cli":
            per = re.findall(r"fuzz (\S+): (\d+) examples in ([\d.]+) s", out)
            for command, n, s in per:
                print(f"  {command}: {n} examples, {s} s")
            cases = sum(int(n) for _, n, _ in per)
            print(f"CLI fuzz: {cases} examples over {len(per)} commands; {summary}; {wall:.0f} s wall")
        elif name == "camera":
            found = re.search(r"fuzz camera: (\d+) examples in ([\d.]+) s, peak memory ([+-]?\d+) MB", out)
            told = (f"{found.group(1)} examples in {found.group(2)} s, peak memory {found.group(3)} MB"
                    if found else "(no count: see pytest)")
            print(f"camera fuzz: {told}; {summary}; {wall:.0f} s wall")
        elif name == "ctrl-c":
            said = re.search(r"ctrl-c twice: (.*)", out)
            print(f"ctrl-c twice in serve's start-up: {said.group(1) if said else '(no count)'}; {summary}; "
                  f"{wall:.0f} s wall")
        else:
            counts = re.search(r"fuzz: (\{.*\})", out)
            for line in re.findall(r"^\s*([\d.]+s call\s+\S+)", out, re.M):
                print(f"  {line}")
            print(f"web fuzz: {counts.group(1) if counts else '(no count: see pytest)'}; {summary}; "
                  f"{wall:.0f} s wall")
        if r.returncode != 0:
            bad += 1
            print(out[-4000:], r.stderr[-2000:])
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
