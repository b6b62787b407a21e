"""The NxN model: applying long random scrambles.

    .venv/bin/python benchmarks/nxn.py              # 30 repeats

For each size 2 to 7, times ``apply_turns`` of a 1000-move random scramble
(parsing the text and composing the permutations) on the solved cube;
the first call of a size, which works out the moves' permutations, is
timed on its own. Bar: N=7 under 50 ms (median).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.nxn import apply_turns, format_turns, random_turns, solved  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    print(f"{platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores,"
          f" load {os.getloadavg()[0]:.1f}")
    ok = True
    for n in range(2, 8):
        start = solved(n)
        texts = [format_turns(random_turns(n, 1000, seed)) for seed in range(args.repeat + 1)]
        t = time.perf_counter()
        apply_turns(start, n, texts[0])
        first = (time.perf_counter() - t) * 1000
        ms = []
        for text in texts[1:]:
            t = time.perf_counter()
            apply_turns(start, n, text)
            ms.append((time.perf_counter() - t) * 1000)
        med = statistics.median(ms)
        if n == 7:
            ok &= med < 50
        print(f"N={n}: 1000 moves in {med:.2f} ms median ({min(ms):.2f}-{max(ms):.2f}),"
              f" first call {first:.1f} ms")
    print("bar (N=7 under 50 ms):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
