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
from solver import tables as tb
from solver.costsearch import IN_PHASE2, MAXD, NOFACE, _View, togo_bounds
from solver.search import P2_MAX, Tables
from solver.tables import PHASE2_MOVES

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


def _least_from(nxt, cost, costs: dict[int, float], moves: list[int]) -> dict[int, float]:
    """The least cost of ending in each state after ``moves``, from the
    costs of starting in each (the automaton's price, state by state)."""
    for m in moves:
        new: dict[int, float] = {}
        for s, c in costs.items():
            for k in range(nxt.shape[2]):
                t = int(nxt[s, m, k])
                if t < 0:
                    break
                new[t] = min(new.get(t, float("inf")), c + float(cost[s, m, k]))
        costs = new
    return costs


def _phase2_run(draw_faces: list[int], powers: list[int], before: int) -> list[int]:
    """Phase-2 moves (U, D any power; R, L, F, B half turns) from drawn
    faces, none on the face of the move before it."""
    out: list[int] = []
    last = before
    for f, p in zip(draw_faces, powers, strict=True):
        if f == last:
            f = (f + 1) % 6
            if f == last:  # pragma: no cover - f + 1 is never f
                continue
        out.append(3 * f + (p if f % 3 == 0 else 1))
        last = f
    return out


_T = Tables.select(tb.load())
_AUTO = compile_rig(DEFAULT)


@pytest.mark.parametrize("r", [0, 1, 2])
@pytest.mark.parametrize("inverse", [False, True])
@settings(max_examples=40, deadline=None)
@given(prefix=st.lists(st.integers(0, 17), max_size=12),
       faces=st.lists(st.integers(0, 5), min_size=1, max_size=P2_MAX),
       data=st.data())
def test_the_phase2_bound_never_exceeds_the_price(r, inverse, prefix, faces, data):
    """The cost search prunes phase 2 by the least its own moves can cost
    (U and D, and the sides' half turns only); that must never be above what
    any run of those moves really costs in the automaton, from any state a
    prefix reaches (forward), or from the start (a search of the inverse,
    whose phase 2 is the solution's beginning). Checked in each view's
    naming of the moves, on the default rig."""
    v = _View(random_cube(3), r, inverse, _AUTO.next, _AUTO.cost, _AUTO.start,
              togo_bounds(_AUTO.next, _AUTO.cost, _AUTO.start, MAXD + P2_MAX, inverse), tuple(_T), _T)
    powers = data.draw(st.lists(st.integers(0, 2), min_size=len(faces), max_size=len(faces)))
    before = prefix[-1] // 3 if prefix and not inverse else NOFACE
    run = _phase2_run(faces, powers, before)
    assert all(m in PHASE2_MOVES for m in run)
    k = len(run)
    if inverse:
        after = data.draw(st.sampled_from([f for f in range(NOFACE + 1) if f != run[-1] // 3]))
        for s, c in _least_from(v.nxt, v.cost, {v.start: 0.0}, run).items():
            assert c >= v.togo_p2[k, after, s] - 1e-9
    else:
        reached = _least_from(v.nxt, v.cost, {v.start: 0.0}, prefix)
        for s in reached:
            c = min(_least_from(v.nxt, v.cost, {s: 0.0}, run).values())
            assert c >= v.togo_p2[k, before, s] - 1e-9
    # tighter than any 18 moves' bound, never looser
    assert (v.togo_p2 >= v.togo_exact[:P2_MAX + 2] - 1e-9).all()


def test_the_phase2_bound_is_tighter_on_the_six_motor_rig():
    """The point of it: twelve phase-2 moves cost about a third more than
    the cheapest twelve of all 18 (pairs of opposite quarter turns)."""
    exact, _ = togo_bounds(_AUTO.next, _AUTO.cost, _AUTO.start, P2_MAX, False)
    p2, _ = togo_bounds(_AUTO.next, _AUTO.cost, _AUTO.start, P2_MAX, False, IN_PHASE2)
    assert p2[P2_MAX, NOFACE].min() > 1.25 * exact[P2_MAX, NOFACE].min()
