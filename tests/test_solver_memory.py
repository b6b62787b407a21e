"""Releasing library pages after the search is loaded (solver.residency)."""

import sys

import pytest

from solver import random_cube, residency, solve


def _resident_kb(path_part: str) -> int:
    total = 0
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                inside = path_part in line
            elif inside and line.startswith("Rss:"):
                total += int(head[1])
    return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and madvise")
def test_release_drops_llvm_pages_and_solving_still_works():
    cube = random_cube(7)
    solve(cube, max_length=20)  # compiles or loads the search
    solve(cube, max_length=20)
    before = _resident_kb("libllvmlite")
    assert residency.release("libllvmlite") > 0
    after = _resident_kb("libllvmlite")
    assert after <= before
    after = _resident_kb("libllvmlite")
    # a solve runs only numba's compiled code, not LLVM
    for seed in range(5):
        c = random_cube(seed)
        assert c.apply(solve(c, max_length=20).moves).is_solved()
    assert _resident_kb("libllvmlite") <= after + 4096


def test_release_of_nothing_is_harmless():
    assert residency.release("no-such-library-anywhere") == 0
