"""A warm `cuberobot solve <cube>` as a whole process, beside two yardsticks.

    .venv/bin/python benchmarks/cli_solve.py              # 10 rounds
    .venv/bin/python benchmarks/cli_solve.py --rounds 20

Three commands run as fresh processes, interleaved round by round (A B C A B
C ...) so that all three see the same machine load, after one untimed
warm-up of each (page cache, the solver's tables and numba's compiled code):

* A: `python -m robot solve CUBE` from this checkout (what the `cuberobot`
  entry point runs, for the code beside this file; its default 100 ms search
  budget included: that is what a person waits for);
* B: `python -c "import numpy"`, the floor of any numpy program;
* C: `python -c "import kociemba; print(kociemba.solve(CUBE))"`, the
  `kociemba` package (C, two-phase, tables read from files), when installed
  (`pip install -e '.[bench]'`); skipped, saying so, when it is not.

Wall time from spawn to exit and the peak resident memory of the child
(``ru_maxrss`` of that process alone) are printed as median and spread
(min-max). The bar: A's median wall time within 1.0 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

CUBE = "LDLUURLDBRBDBRBBLUDFUDFUUURRRDFDFDFBULBBLLRRFFRFDBLLUF"
BAR_S = 1.0
ROOT = Path(__file__).resolve().parents[1]


def _run_reaped(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak MiB) of one run of ``argv``, which must succeed: the
    child is reaped with wait4 for its own resource usage, its output thrown away."""
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, dict(os.environ),
                         file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        code = os.waitstatus_to_exitcode(status)
        raise SystemExit(f"{' '.join(argv)}: exit {code} (run it by hand to see why)")
    return wall, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10, help="timed runs of each command (default 10)")
    args = ap.parse_args()

    os.chdir(ROOT)  # `python -m robot` runs this checkout's code, whatever the venv installed
    commands = {
        "cuberobot solve": [sys.executable, "-m", "robot", "solve", CUBE],
        "import numpy": [sys.executable, "-c", "import numpy"],
    }
    if importlib.util.find_spec("kociemba") is not None:
        code = f"import kociemba; print(kociemba.solve({CUBE!r}))"
        commands["kociemba solve"] = [sys.executable, "-c", code]
    else:
        print("kociemba is not installed (pip install -e '.[bench]'): its column is left out")

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, {platform.platform(terse=True)}, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{args.rounds} rounds, interleaved, after one warm-up of each")
    for argv in commands.values():
        _run_reaped(argv)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, argv in commands.items():
            wall, peak = _run_reaped(argv)
            walls[name].append(wall)
            peaks[name].append(peak)
    print(f"{'command':<18} {'wall median':>11} {'(min-max)':>15} {'peak MiB':>9}")
    for name in commands:
        w = walls[name]
        print(f"{name:<18} {statistics.median(w):9.3f} s ({min(w):.3f}-{max(w):.3f}) "
              f"{statistics.median(peaks[name]):9.1f}")
    median = statistics.median(walls["cuberobot solve"])
    print(f"bar (warm cuberobot solve within {BAR_S:.1f} s, median): "
          + ("holds" if median <= BAR_S else "does NOT hold") + f" ({median:.3f} s; load "
          f"{os.getloadavg()[0]:.2f} at the end)")
    return 0 if median <= BAR_S else 1


if __name__ == "__main__":
    sys.exit(main())
