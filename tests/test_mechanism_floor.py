"""The counting floor of benchmarks/mechanism_floor.py: its counts must bound
the cube positions a mechanism really reaches, or the floor it prints beside
the benchmark's figures would be no floor at all."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from mechanism_kinds import KINDS, MECHS

from solver.cubie import SOLVED_CUBE as SOLVED

_spec = importlib.util.spec_from_file_location(
    "mechanism_floor", Path(__file__).resolve().parents[1] / "benchmarks" / "mechanism_floor.py")
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


@pytest.mark.parametrize("kind", KINDS)
def test_the_counts_bound_the_positions_really_reached(kind):
    most = 9 if kind == "flipper" else 7
    counts = mf.sequence_counts(MECHS[kind], limit=most + 1)
    reached = reached_within(kind, most)
    assert reached[-1] > 18  # the walk went past one turn
    for c in range(most + 1):
        assert reached[c] <= counts[c], (kind, c, reached[c], counts[c])


@pytest.mark.parametrize("kind", KINDS)
def test_the_floor_lies_below_what_the_planner_pays_and_is_not_trivial(kind):
    moves = mf.floor(MECHS[kind])
    seconds = mf.floor(MECHS[kind], seconds=True, unit=0.05, limit=800)
    # a random cube takes about 18 face turns, each at least one robot move
    assert 18 < moves < 100 and 1.0 < seconds < 40.0
    # a coarser unit only rounds prices further down
    assert mf.floor(MECHS[kind], seconds=True, unit=0.1, limit=400) <= seconds + 1e-9


def test_a_limit_too_low_is_refused_in_one_line():
    with pytest.raises(ValueError, match="limit 10 too low"):
        mf.floor(MECHS["flipper"], limit=10)
