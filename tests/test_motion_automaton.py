"""The six-motor rig compiled into a cost automaton (robot/rig/motion_automaton.py)
and searched in its own time by solver/costsearch.py: the automaton's price
of a solution is the exact planner's estimate (a lower bound of it where the
schedule's two-back rule binds), its costs are never negative, and what the
search returns solves the cube and is never slower than the candidates."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from robot.app.solving import SolveRequest, _fastest_for_rig, planned_solution
from robot.rig.loading import load_config
from robot.rig.motion import estimate_s, estimate_ticks, fastest, plan
from robot.rig.motion_automaton import best_solution, compile_rig, price_ticks
from robot.rig.timing import move_ticks, release_tick, schedule
from solver import Move, group_steps, parse_moves, random_cube, solve

DEFAULT = load_config(None)
FAST = load_config("config/examples/fast-servo-class.toml")


def _variants():
    """The default rig, with half turns clockwise, with no corner cutting,
    with faster and inverted motors: every input the automaton depends on."""
    cube = DEFAULT.cube
    return {
        "default": DEFAULT,
        "clockwise": dataclasses.replace(DEFAULT, cube=dataclasses.replace(cube, half_turns="clockwise")),
        "no-overlap": dataclasses.replace(DEFAULT, cube=dataclasses.replace(cube, corner_cutting=False)),
        "fast-servo": FAST,
        # far more corner cutting than a cube allows: the schedule's waits bind, the price is below
        "eager": dataclasses.replace(DEFAULT, rig=dataclasses.replace(DEFAULT.rig, overlap_deg=70.0)),
    }


VARIANTS = _variants()


def _binds(moves: list[Move], cfg) -> bool:
    """Whether the rig's schedule started some step later than the chain of
    gaps says (each step from the one before it: its whole time, or up to
    the tick it has the overlap's steps left): what the schedule adds, a step
    waiting for every earlier one before it starts unoverlapped, and for the
    one two before it before it overlaps."""
    steps = plan(group_steps(moves), cfg)
    profiles = cfg.profiles()
    sched = schedule([s.planned() for s in steps], profiles)
    chain = 0
    for i in range(1, len(steps)):
        prev, k = steps[i - 1].parts, steps[i].overlap
        disjoint = not ({m for m, _ in prev} & {m for m, _ in steps[i].parts})
        chain += release_tick(prev, profiles, k) if k > 0 and disjoint else sum(move_ticks(prev, profiles))
        if sched[i][0] != chain:
            return True
    return bool(steps) and max(d for _, d in sched) != chain + sum(move_ticks(steps[-1].parts, profiles))


@pytest.mark.parametrize("name", list(VARIANTS))
@settings(max_examples=60, deadline=None)
@given(moves=st.lists(st.integers(0, 17), max_size=30))
@example(moves=[])
@example(moves=[0, 9, 4, 13])  # U D R L: two pairs
@example(moves=[1, 10, 1])  # U2 D2 U2: a pair, then its own motor again
@example(moves=[1, 4, 7, 10, 13, 16])  # half turns only: every direction is a choice
def test_the_automatons_price_is_the_planners_estimate(name, moves):
    cfg = VARIANTS[name]
    auto = compile_rig(cfg)
    assert (auto.ticks >= 0).all()
    ms = [Move.from_index(m) for m in moves]
    exact = estimate_ticks(plan(group_steps(ms), cfg), cfg)
    got = price_ticks(auto, moves)
    # the price leaves out only the schedule's waits, which can only delay: a lower bound, equal where
    # they do not bind (on every rig but the eager one they never bind)
    assert got <= exact
    binds = _binds(ms, cfg)
    assert binds or got == exact
    assert name == "eager" or not binds


def test_the_automaton_is_small_and_compiled_once():
    a = compile_rig(DEFAULT)
    assert compile_rig(DEFAULT) is a
    assert a.next.shape[1] == 18 and a.next.shape[0] < 200  # merged from 1,801 states
    assert (a.next[:, :, 0] >= 0).all()  # every move has an outcome from every state
    clockwise = compile_rig(DEFAULT, half_turns="clockwise")
    assert clockwise.next.shape[2] == 1


def test_a_bad_half_turns_setting_is_one_clear_error():
    with pytest.raises(ValueError, match="half_turns must be one of short, clockwise, not 'sideways'"):
        compile_rig(DEFAULT, half_turns="sideways")


@pytest.mark.parametrize("seed", [101, 106])
def test_the_search_solves_the_cube_and_beats_the_candidates_or_says_none(seed):
    cube = random_cube(seed)
    facelets = cube.to_facelets()
    sol = solve(facelets, budget_ms=50, metric="axial", candidates=4, workers=1)
    cands = [parse_moves(c.moves) for c in (sol, *sol.others)]
    _, best = fastest([group_steps(c) for c in cands], DEFAULT)
    bar = estimate_s(best, DEFAULT)
    # with nothing to beat, the search goes on to its first solution, however busy the host
    got = best_solution(facelets, DEFAULT, 0.1, candidates=[], workers=1)
    assert got is not None
    moves, steps = got
    assert cube.apply(moves).is_solved()
    assert steps == plan(group_steps(moves), DEFAULT)
    # with the true bar it returns something faster or nothing
    again = best_solution(facelets, DEFAULT, 0.3, candidates=cands, workers=1)
    if again is not None:
        assert cube.apply(again[0]).is_solved() and estimate_s(again[1], DEFAULT) < bar


def test_a_solution_longer_than_max_length_is_not_returned():
    facelets = random_cube(103).to_facelets()
    assert best_solution(facelets, DEFAULT, 0.3, candidates=[], max_length=5, workers=1) is None


def test_the_rig_metric_keeps_the_faster_of_the_search_and_the_candidates():
    facelets = random_cube(112).to_facelets()
    on = dataclasses.replace(DEFAULT, solver=dataclasses.replace(DEFAULT.solver, search_ms=400))
    won, steps = _fastest_for_rig(on, facelets, max_length=None, budget_ms=50, workers=1)
    assert random_cube(112).apply(won.moves).is_solved()
    assert won.cost == round(estimate_s(steps, DEFAULT), 4)
    assert steps == plan(won.steps, DEFAULT)
    # the others are the candidates that lost (to another candidate or to the search): none is faster
    assert all(won.cost <= estimate_s(plan(c.steps, DEFAULT), DEFAULT) for c in won.others)
    sol, steps = planned_solution(SolveRequest(facelets, metric="rig", budget_ms=50, workers=1), on)
    assert sol.cost == round(estimate_s(steps, on), 4)
