"""CLI start-up: how long quick `cuberobot` commands take as whole processes.

    .venv/bin/python benchmarks/cli.py               # 20 repeats
    .venv/bin/python benchmarks/cli.py --repeat 50

Each command runs as a fresh process through the venv's `cuberobot` entry
point (the one next to this interpreter), interleaved with the baseline,
`python -c "import numpy, serial"` with the same interpreter: A B A B ...,
so both see the same machine load. One untimed warm-up run of each first.
Times are wall-clock around the whole process, from spawn to exit.

The bar: `cuberobot --version` and `cuberobot check solved` each within 3x
the baseline's median.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [
    ["--version"],
    ["check", "solved"],
    ["show", "solved"],
    ["scramble", "--seed", "1"],
]
BAR = {"--version": 3.0, "check solved": 3.0}
BASELINE = [sys.executable, "-c", "import numpy, serial"]


def timed(argv: list[str], prints: bool = True) -> float:
    t = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0 or (prints and not r.stdout.strip()):
        raise SystemExit(f"{' '.join(argv)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20, help="timed runs of each command (default 20)")
    args = ap.parse_args()

    exe = Path(sys.executable).with_name("cuberobot")
    if not exe.exists():
        raise SystemExit(f"{exe} not found: run this with the venv's python (.venv/bin/python {sys.argv[0]})")

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, {platform.platform(terse=True)}, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"baseline: {Path(sys.executable).name} -c \"import numpy, serial\"; {args.repeat} repeats, "
          "interleaved with each command (A B A B), after one warm-up each")
    print(f"{'command':<28} {'median':>8} {'min':>8} {'max':>8}   {'baseline median (min-max)':<27} ratio")
    ratios = {}
    for cmd in COMMANDS:
        argv = [str(exe), *cmd]
        timed(BASELINE, prints=False), timed(argv)  # warm-up: page cache, numba's and the solver's caches
        base, mine = [], []
        for _ in range(args.repeat):
            base.append(timed(BASELINE, prints=False))
            mine.append(timed(argv))
        name = " ".join(cmd)
        ratios[name] = statistics.median(mine) / statistics.median(base)
        ms = lambda v: f"{1000 * v:6.0f} ms"  # noqa: E731
        print(f"cuberobot {name:<18} {ms(statistics.median(mine))} {ms(min(mine))} {ms(max(mine))}   "
              f"{ms(statistics.median(base))} ({1000 * min(base):.0f}-{1000 * max(base):.0f})"
              f"{'':>8} {ratios[name]:.2f}x")
    held = all(ratios[name] <= limit for name, limit in BAR.items())
    print("bar (--version and check solved each within 3x the baseline's median): "
          + ("holds" if held else "does NOT hold")
          + " (" + ", ".join(f"{name} {ratios[name]:.2f}x" for name in BAR) + ")")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
