"""Turning as fast as the cube allows (issue 25): the overlap model, the
virtual rig that enforces it, half turns the short way, the solution the rig
finishes first."""

import dataclasses
import itertools
import tempfile

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from robot.rig import job
from robot.rig.config import OVERLAP_CLASSES, CubeConfig, OverlapModel, parse_config
from robot.rig.errors import RigError, UserError
from robot.rig.journal import Journal
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.rig.motion import AXIS, _directions, _Planner, estimate_ticks, fastest, plan
from robot.rig.timing import sequence_ticks
from robot.sim.protocol_sim import forget, rig_for_url, sim_url
from solver import SOLVED_CUBE, Move, format_moves, group_steps, parse_facelets

CFG = load_config()
moves_st = st.lists(st.builds(Move, st.integers(0, 5), st.integers(1, 3)), min_size=1, max_size=24)
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_n = itertools.count()


def turn_on_a_virtual_rig(steps, cfg=CFG):
    """Turn planned ``steps`` from solved on a fresh virtual rig that
    enforces ``cfg``'s cube; (the rig, the job's report or the error)."""
    url = sim_url(f"overlap-{next(_n)}", speed="max")
    try:
        with tempfile.TemporaryDirectory() as tmp, Journal(tmp) as journal, Link(cfg, url) as link:
            link.connect()
            try:
                result = job.run(link, journal, SOLVED_CUBE, steps)
            except RigError as e:
                result = e
            return rig_for_url(url), result
    finally:
        forget(url)


def has_perpendicular_transition(moves):
    groups = group_steps(moves)
    return any(AXIS[a[0].face] != AXIS[b[0].face] for a, b in zip(groups, groups[1:]))


@FEW
@given(moves_st)
def test_random_sequences_never_collide_under_the_default_model(moves):
    steps = plan(group_steps(moves), CFG)
    rig, report = turn_on_a_virtual_rig(steps)
    assert rig.collisions == []
    assert isinstance(report, job.JobReport)
    assert rig.cube == SOLVED_CUBE.apply(moves)
    # The rig's DONEs add up to the plan's time, overlaps and all.
    assert report.executed_s == pytest.approx(estimate_ticks(steps, CFG) / 25000, abs=1e-9)


@FEW
@given(moves_st)
def test_a_plan_ten_degrees_too_eager_collides(moves):
    """The check can fail: plan with every angle of the model 10 degrees
    larger, turn on a rig that holds the real model."""
    assume(has_perpendicular_transition(moves))
    eager = plan(group_steps(moves), CFG, model=CFG.overlap_model().raised(10.0))
    rig, result = turn_on_a_virtual_rig(eager)
    assert rig.collisions, "a too eager plan went unnoticed"
    assert isinstance(result, RigError)
    hit = rig.collisions[0]
    assert AXIS["URFDLB".index(hit.still)] != AXIS["URFDLB".index(hit.started)]
    assert hit.angle > hit.allowed
    assert f"{hit.started} started while {hit.still} was" in str(hit)


def test_the_class_of_a_transition():
    """With: one face clockwise, the other anticlockwise (the edge they share
    moves the same way under both); quarter or half before and after."""
    model = OverlapModel(tuple(float(i + 1) for i in range(len(OVERLAP_CLASSES))), 0.5)
    pl = _Planner(CFG, model)

    def deg(a, b):
        ga, gb = group_steps(a)[0], group_steps(b)[0]
        qa, qb = _directions(ga, "clockwise")[0], _directions(gb, "clockwise")[0]
        k = pl.overlap(ga, qa, pl.parts(ga, qa), gb, qb, pl.parts(gb, qb))
        return round(k / 400 * 90)

    assert deg("U", "R'") == 1 + OVERLAP_CLASSES.index("quarter_quarter_with")
    assert deg("U", "R") == 1 + OVERLAP_CLASSES.index("quarter_quarter_against")
    assert deg("U'", "F2") == 1 + OVERLAP_CLASSES.index("quarter_half_with")
    assert deg("U2", "F") == 1 + OVERLAP_CLASSES.index("half_quarter_against")
    assert deg("U2", "F2") == 1 + OVERLAP_CLASSES.index("half_half_against")
    assert deg("U", "D") == 0  # same axis: parallel_deg (0.5 degrees is not a step)
    assert deg("U", "U") == 0  # the same motor never overlaps


@settings(max_examples=60, deadline=None)
@given(st.lists(st.builds(Move, st.integers(0, 5), st.sampled_from([1, 2, 2, 3])), min_size=1, max_size=7))
def test_half_turns_the_short_way_are_the_best_directions(moves):
    """The dynamic programme against every choice of directions, timed by the
    exact schedule: never slower than clockwise, never slower than the best."""
    short = estimate_ticks(plan(group_steps(moves), CFG), CFG)
    clockwise = estimate_ticks(plan(group_steps(moves), CFG, half_turns="clockwise"), CFG)
    assert short <= clockwise
    groups = group_steps(moves)
    pl = _Planner(CFG)
    best = None
    for choice in itertools.product(*[_directions(g, "short") for g in groups]):
        parts = [pl.parts(g, q) for g, q in zip(groups, choice)]
        planned = []
        for i, (g, q, p) in enumerate(zip(groups, choice, parts)):
            k = pl.overlap(groups[i - 1], choice[i - 1], parts[i - 1], g, q, p) if i else 0
            planned.append(dataclasses.replace(plan([g], CFG, half_turns="clockwise")[0], parts=p,
                                               overlap=k).planned())
        t = sequence_ticks(planned, CFG.profiles())
        best = t if best is None else min(best, t)
    assert short == best


def test_fastest_picks_the_least_planned_time():
    a, b = "U R U' R'", "R2 U2 R2 U2"
    i, steps = fastest([group_steps(a), group_steps(b)], CFG)
    times = [estimate_ticks(plan(group_steps(m), CFG), CFG) for m in (a, b)]
    assert i == times.index(min(times)) and estimate_ticks(steps, CFG) == min(times)


def test_the_default_model_and_its_checks(tmp_path):
    model = CFG.overlap_model()
    assert CFG.cube.corner_cutting and min(model.perpendicular) > 0
    assert parse_config("[cube]\ncorner_cutting = false\n").overlap_model().off
    assert parse_config("[rig]\noverlap_deg = 9.0\n").overlap_model() == OverlapModel.uniform(9.0)
    custom = parse_config("[cube]\nhalf_half_with_deg = 30\n")
    assert custom.overlap_model().angle(True, True, True) == 30.0
    with pytest.raises(UserError, match=r"quarter_quarter_with_deg: expected a value between 0.0 and 45.0"):
        parse_config("[cube]\nquarter_quarter_with_deg = 50\n")
    with pytest.raises(UserError, match=r"cube.quarter_quater_with_deg: unknown key; did you mean"):
        parse_config("[cube]\nquarter_quater_with_deg = 5\n")
    with pytest.raises(UserError, match=r"overlap_deg and a \[cube\] table"):
        parse_config("[rig]\noverlap_deg = 9.0\n[cube]\ncorner_cutting = true\n")
    with pytest.raises(UserError, match=r"cube.half_turns: expected one of"):
        parse_config("[cube]\nhalf_turns = 'left'\n")
    with pytest.raises(UserError, match=r"solver.candidates: expected a value between 1 and 32"):
        parse_config("[solver]\ncandidates = 33\n")
    off = dataclasses.replace(CFG, cube=CubeConfig(corner_cutting=False))
    assert all(s.overlap == 0 for s in plan(group_steps(format_moves([Move(f, 1) for f in range(6)])), off))


def test_for_the_rig_turns_the_candidate_with_the_least_planned_time():
    """The one service behind `solve --metric rig`, the API and `start`: of
    the solver's candidates, the one whose plan ends first, priced by that plan."""
    from robot.app.solving import for_the_rig
    from robot.rig.motion import estimate_s
    from solver import random_cube

    facelets = random_cube(25).to_facelets()
    sol = for_the_rig(CFG, facelets, max_length=None, budget_ms=30, workers=1)
    assert sol.metric == "rig"
    assert parse_facelets(facelets).apply(sol.moves).is_solved()
    mine = estimate_s(plan(sol.steps, CFG), CFG)
    assert sol.cost == round(mine, 4)
    assert all(mine <= estimate_s(plan(o.steps, CFG), CFG) for o in sol.others)
