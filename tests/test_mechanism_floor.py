"""The counting floor of benchmarks/mechanism_floor.py: its counts must bound
the cube positions a mechanism really reaches, or the floor it prints beside
the benchmark's figures would be no floor at all; and they should not be
much more, or it would say little."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from mechanism_kinds import MECHS, RIGS

from solver.cubie import SOLVED_CUBE as SOLVED

_spec = importlib.util.spec_from_file_location(
    "mechanism_floor", Path(__file__).resolve().parents[1] / "benchmarks" / "mechanism_floor.py"
)
assert _spec is not None and _spec.loader is not None
mf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mf)


def reached_within(kind: str, most: int) -> list[int]:
    """``r[c]``: distinct cube positions the rig can make with at most ``c``
    robot moves, found by walking every robot move from every state (a
    breadth-first search over (mechanism state, cube))."""
    g = MECHS[kind].graph
    seen = {(0, SOLVED.to_facelets())}
    frontier = [(0, SOLVED)]
    positions = {SOLVED.to_facelets()}
    out = [1]
    for _ in range(most):
        nxt = []
        for s, cube in frontier:
            for _action, t, _sec, made in g.edges[s]:
                after = cube if made is None else cube.apply([made])
                key = (t, after.to_facelets())
                if key not in seen:
                    seen.add(key)
                    nxt.append((t, after))
                    positions.add(key[1])
        frontier = nxt
        out.append(len(positions))
    return out


@pytest.mark.parametrize("kind", RIGS)
def test_the_counts_bound_the_positions_really_reached(kind):
    most = 11 if kind == "flipper" else 8
    # a cap lowers prices, so a count at a higher cap is smaller and the check
    # stronger; the flipper's cap 1 checks the lowering (at the cap its floor
    # tests below use, which count once: the transitions are kept), the other
    # kinds' cap 0 their graphs (at cap 1, 8 s and 14 s of counting more)
    cap = 1 if kind == "flipper" else 0
    counts = mf.least_price_counts(MECHS[kind], cap=cap, limit=most + 1)
    reached = reached_within(kind, most)
    assert reached[-1] > 18  # the walk went past one turn
    for c in range(most + 1):
        assert reached[c] <= counts[c], (kind, c, reached[c], counts[c])


def test_the_flipper_count_is_exact_while_the_cube_has_no_relation_to_use():
    # up to 6 robot moves a flipper turns at most two faces: no two
    # sequences make one position, so only the cap could make the count
    # larger than the walk, and it does not there
    counts = mf.least_price_counts(MECHS["flipper"], limit=7)
    assert [int(c) for c in counts] == reached_within("flipper", 6)


def test_a_larger_cap_only_raises_the_floor_and_the_floor_is_not_trivial():
    m = MECHS["flipper"]
    loose, tight = mf.floor(m, cap=0), mf.floor(m, cap=1)
    assert 60 < loose < tight
    # the flipper needs an open, a flip, a close and a turn for every solver
    # move but the first, and a random cube about 18 of them: at least 18 * 4 - 3
    assert 69 < tight < 90
    seconds = mf.floor(m, seconds=True, unit=0.05, cap=1, limit=1000)
    assert 15.0 < seconds < 30.0


def test_the_two_gripper_floor_is_not_trivial():
    moves = mf.floor(MECHS["two-gripper"], cap=0)
    # a random cube takes about 18 face turns, each at least one robot move
    assert 18 < moves < 62


def test_bad_arguments_are_refused_in_one_line():
    with pytest.raises(ValueError, match="limit 10 too low"):
        mf.floor(MECHS["flipper"], limit=10)
    with pytest.raises(ValueError, match="cap 101 must be 0 to 100"):
        mf.floor(MECHS["flipper"], cap=101)
    with pytest.raises(ValueError, match="unit 30.0 is more than a move's price"):
        mf.floor(MECHS["flipper"], seconds=True, unit=30.0)
