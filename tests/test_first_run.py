"""The first run on a fresh machine (README's command 1 with empty caches):
it talks all the way to the first solve, and ``-v`` stays readable.

Both runs are real: the solver's tables are built and numba compiles into
empty folders under tmp (about a minute together), so the module is marked
slow and left out of ``./run-tests --quick``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robot.cli.progress import HEARTBEAT_S
from solver.talk import EVERY

pytestmark = pytest.mark.slow

MAX_GAP_S = HEARTBEAT_S + EVERY + 3.0
"""The output here is a pipe, a log: the work under way is said again at most every HEARTBEAT_S
(robot/cli/progress.py), from the solver's ticker that speaks up every EVERY seconds of silence; 3 s
for a busy machine, as before (on a terminal the bound was EVERY + 3 = 5 s)."""
MAX_TABLE_MARKS = 13
"""A log of the tables' build: each of its six steps, each quarter of the two long ones, the end (it
was 27 lines, one per percent and per two seconds). Besides these, a sign of life in a long silence
("still working"): at most one a step early on, then one every HEARTBEAT_S, so their number follows
the build's length, which a busy machine doubles."""


def _run_timed(args: list[str], home: Path) -> list[tuple[float, str]]:
    """Run ``cuberobot ARGS`` with caches and state under ``home``; each line
    of its output (stdout and stderr together) with the seconds since the
    start at which this process read it, and a last ("", end) entry."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUBEROBOT_CACHE", "NUMBA_CACHE_DIR")}
    env.update(XDG_CACHE_HOME=str(home / "cache"), XDG_STATE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "config"), PYTHONUNBUFFERED="1")
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "robot", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=env,
                         cwd=Path(__file__).resolve().parents[1])
    assert p.stdout is not None
    lines = [(time.monotonic() - t0, line.rstrip("\n")) for line in p.stdout]
    assert p.wait(timeout=600) == 0, "\n".join(text for _, text in lines[-30:])
    return [*lines, (time.monotonic() - t0, "")]


def _until_first_solve(lines: list[tuple[float, str]]) -> list[tuple[float, str]]:
    n = next(k for k, (_, text) in enumerate(lines) if text.startswith("scanned "))
    return lines[:n + 1]


def _max_gap(lines: list[tuple[float, str]]) -> tuple[float, str]:
    """The longest wait for a line (from the start, too) and the line that ended it."""
    gaps = [(t - (lines[k - 1][0] if k else 0.0), text) for k, (t, text) in enumerate(lines)]
    return max(gaps)


def test_the_first_run_shows_progress_until_the_first_solve_and_verbose_stays_under_200_lines(tmp_path):
    """One fresh machine, two runs (one test, so that a parallel run makes
    one cold machine, not one a worker):

    1. the first ``start --headless`` into a pipe says something at least
       every MAX_GAP_S until the first solve, in a few lines for the
       tables' build, and numba's code goes to the user's cache;
    2. ``-v`` with numba's cache emptied again (the tables of the first run
       kept: with ``-v`` their build prints the same progress lines as
       without, counted here from the first run) stays under 200 lines."""
    home = tmp_path / "fresh-machine"
    first = _run_timed(["start", "--headless"], home)
    text = [t for _, t in first]
    assert any("building the solver's tables" in t for t in text), text[:5]  # the caches were cold
    assert any(t.startswith("compiling the solver's search") for t in text), text
    gap, after = _max_gap(_until_first_solve(first))
    print(f"cold start: {len(first) - 1} lines, longest silence {gap:.2f} s, first solve at "
          f"{_until_first_solve(first)[-1][0]:.0f} s")
    assert gap <= MAX_GAP_S, f"{gap:.1f} s of silence before {after!r}"
    tables = [(at, t) for at, t in first if "building the solver's tables" in t or "tables built in" in t]
    marks = [t for _, t in tables if "still working" not in t]
    alive = len(tables) - len(marks)
    span = tables[-1][0] - tables[0][0]
    said = "\n".join(t for _, t in tables)
    assert len(marks) <= MAX_TABLE_MARKS, said
    assert alive <= 6 + span / HEARTBEAT_S, f"{alive} signs of life in {span:.0f} s:\n{said}"
    assert (home / "cache" / "cuberobot" / "numba").is_dir()  # numba's code went to the user's cache

    shutil.rmtree(home / "cache" / "cuberobot" / "numba")
    lines = _run_timed(["-v", "start", "--headless"], home)
    building = [t for t in text if "building the solver's tables" in t or "tables built in" in t]
    assert any(t.startswith("compiling the solver's search") for _, t in lines)
    assert len(lines) - 1 + len(building) < 200, "\n".join(t for _, t in lines[:50])
