"""The typed hand-off (issue 22): a solution's steps are Move tuples from the
solver to the planner, planned once into the MotorSteps that `start`
estimates, journals and turns, that the dry run turns, and that resume
rebuilds from the journal."""

import dataclasses
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robot.app.dryrun_six_motors import dry_run
from robot.app.engines import run_start
from robot.app.start import cfop_solution
from robot.rig import job, motion
from robot.rig.journal import Journal, JournalDamaged
from robot.rig.link import Link, LinkLost
from robot.rig.loading import load_config
from robot.rig.motion import MotorStep, estimate_s, plan
from robot.sim.protocol_sim import forget, rig_for_url, sim_url
from solver import (
    SOLVED_CUBE,
    CubeError,
    Move,
    check_step,
    group_steps,
    invert,
    parse_facelets,
    parse_steps,
    random_cube,
    random_scramble,
    solve,
)

CFG = load_config()
_n = [0]


def _url(name, start, **opts):
    _n[0] += 1
    url = sim_url(f"typed-{name}-{_n[0]}", speed="max", state=start.to_facelets(), **opts)
    forget(url)
    return url


def _flat(steps):
    return [m for s in steps for m in s]


def _no_planning(monkeypatch):
    """Any planning from here on fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("planned again")

    monkeypatch.setattr(motion, "plan", refuse)
    monkeypatch.setattr(job, "plan", refuse)


# -- the solver's steps ------------------------------------------------------
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1))
def test_a_solutions_steps_are_move_tuples_that_solve_the_cube(seed):
    cube = random_cube(seed)
    sol = solve(cube, budget_ms=5, workers=1)
    assert isinstance(sol.steps, tuple)
    assert all(isinstance(s, tuple) and s == check_step(s) for s in sol.steps)
    assert all(isinstance(m, Move) for s in sol.steps for m in s)
    assert cube.apply(_flat(sol.steps)).is_solved()
    assert cube.apply(sol.moves).is_solved()
    # the text edges read back as the same steps
    assert parse_steps(sol.step_texts) == sol.steps
    assert parse_steps(" ".join(s) for s in sol.to_dict()["steps"]) == sol.steps
    # and the plan turns exactly those moves
    planned = plan(sol.steps, CFG)
    assert tuple(s.moves for s in planned) == sol.steps
    assert cube.apply(_flat(s.moves for s in planned)).is_solved()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.builds(Move, st.integers(0, 5), st.integers(1, 3)), max_size=30))
def test_grouped_steps_of_a_random_solution_solve_its_cube(moves):
    """Any move sequence is the solution of the cube its inverse makes: its
    steps, applied step by step, solve that cube."""
    cube = SOLVED_CUBE.apply(invert(moves))
    steps = group_steps(moves)
    for s in steps:
        cube = cube.apply(check_step(s))
    assert cube.is_solved()


def test_cfop_steps_are_move_tuples_that_solve_the_cube():
    cube = random_cube(5)
    sol, labels = cfop_solution(cube.to_facelets(), 1.0, 1.5)
    assert all(isinstance(s, tuple) and s == check_step(s) for s in sol.steps)
    assert cube.apply(_flat(sol.steps)).is_solved() and cube.apply(sol.moves).is_solved()
    assert len(labels) == len(sol.steps)


def test_a_step_is_one_turn_or_two_opposite_ones():
    u, d3, r2, f, b = Move(0, 1), Move(3, 3), Move(1, 2), Move(2, 1), Move(5, 1)
    assert parse_steps(["U D'", "R2", "F B"]) == ((u, d3), (r2,), (f, b))
    for bad in (["U R"], ["U D R"], [""], ["U U"]):
        with pytest.raises(CubeError, match="not one step"):
            parse_steps(bad)
    with pytest.raises(CubeError):
        plan(((Move(0, 1), Move(1, 1)),), CFG)
    with pytest.raises(TypeError):
        plan("U R", CFG)  # type: ignore[arg-type]


# -- one plan: start, job.run, dry run, resume -------------------------------
def test_job_run_turns_the_plan_it_is_given_without_planning(monkeypatch, tmp_path):
    scramble = random_scramble(16, seed=3)
    start = SOLVED_CUBE.apply(scramble)
    steps = plan(group_steps(invert(scramble)), CFG)
    url = _url("run", start)
    _no_planning(monkeypatch)
    with Journal(tmp_path) as journal, Link(CFG, url) as link:
        link.connect()
        report = job.run(link, journal, start, steps)
        with pytest.raises(TypeError, match="plan"):
            job.run(link, journal, SOLVED_CUBE, group_steps("U"))  # type: ignore[arg-type]
    assert report.steps == steps and rig_for_url(url).cube.is_solved()
    assert report.estimated_s == estimate_s(steps, CFG)
    (js,) = Journal(tmp_path).read()
    assert js.steps == [s.text for s in steps] and js.quarters == [list(s.quarters) for s in steps]
    forget(url)


def test_the_dry_run_turns_the_plan_it_is_given(monkeypatch, tmp_path):
    start = random_cube(8)
    sol = solve(start, budget_ms=5, workers=1)
    assert start.apply(_flat(sol.steps)).is_solved()
    steps = plan(sol.steps, CFG)
    _no_planning(monkeypatch)
    seen = []
    report = dry_run(CFG, start, steps, speed="max", on_turn=lambda td: seen.append(td.step))
    assert seen == steps == report.steps
    assert parse_facelets(report.state).is_solved()


def _record_plans(monkeypatch) -> list:
    """Every plan motion.plan makes from now on, in order."""
    plans: list = []
    real = motion.plan

    def recording(*args, **kwargs):
        plans.append(real(*args, **kwargs))
        return plans[-1]

    monkeypatch.setattr(motion, "plan", recording)
    return plans


def _solved_start(monkeypatch, tmp_path, name, seed):
    """``(plans made, url, record)`` of a headless start on a fresh simulated
    rig, checked solved on the rig and by its own moves."""
    plans = _record_plans(monkeypatch)
    url = sim_url(name, speed="max")
    forget(url)
    record = run_start(CFG, port=url, headless=True, state_dir=tmp_path, seed=seed, out=lambda line: None)
    assert record.status == "solved" and rig_for_url(url).cube.is_solved()
    assert parse_facelets(record.facelets).apply(record.moves).is_solved()
    return plans, url, record


def test_start_turns_and_journals_the_plan_it_estimated(monkeypatch, tmp_path):
    plans, url, record = _solved_start(monkeypatch, tmp_path, "typed-start", 21)
    js = Journal(tmp_path).read()[-1]
    executed = job.journaled_plan(js, CFG)
    assert executed in plans  # the plan start made ...
    assert record.estimated_turning_s == estimate_s(executed, CFG)  # ... is the one it estimated ...
    assert js.steps == [s.text for s in executed] and record.turns == len(executed)  # ... and turned
    assert js.quarters == [list(s.quarters) for s in executed]
    assert parse_facelets(js.start).apply(_flat(s.moves for s in executed)).is_solved()
    forget(url)


def test_start_plans_each_candidate_once_and_turns_the_winners_plan(monkeypatch, tmp_path):
    """With the rig metric the choice among the candidates plans each of
    them; the winner's plan is the one turned, not planned a second time."""
    assert CFG.solver.metric == "rig" and CFG.solver.candidates > 1
    plans, url, _record = _solved_start(monkeypatch, tmp_path, "typed-once", 22)
    executed = job.journaled_plan(Journal(tmp_path).read()[-1], CFG)
    candidates = len(plans)
    assert candidates >= 1 and sum(p == executed for p in plans) == 1  # planned once, in the choice
    forget(url)


def _clockwise_plan_that_differs(scramble):
    """A plan whose half turns all go clockwise, where the config's own
    planner would turn some the other way: resume must keep the journaled one."""
    steps = group_steps(invert(scramble))
    mine = plan(steps, CFG, half_turns="clockwise")
    assert CFG.cube.half_turns == "short" and plan(steps, CFG) != mine
    return mine


def test_resume_rebuilds_the_journaled_plan_exactly(monkeypatch, tmp_path):
    scramble = random_scramble(20, seed=5)
    start = SOLVED_CUBE.apply(scramble)
    steps = _clockwise_plan_that_differs(scramble)
    url = _url("resume", start, faults="disconnect:600")
    cfg = dataclasses.replace(CFG, rig=dataclasses.replace(CFG.rig, reply_timeout_s=0.005))
    with Journal(tmp_path) as journal:
        with Link(cfg, url) as link, pytest.raises(LinkLost):
            link.connect()
            job.run(link, journal, start, steps)
        assert 0 < journal.unfinished().done < len(steps)
        with Link(cfg, url) as link:
            report = job.resume(link, journal)
    assert report.steps == steps  # the directions journaled, not chosen again
    assert rig_for_url(url).cube.is_solved() and parse_facelets(report.state).is_solved()
    forget(url)


def test_resume_of_a_journal_without_quarter_turns_plans_its_steps_again(tmp_path):
    """A journal written before the quarter turns were kept (the main branch
    of before issue 22) resumes as that version did."""
    scramble = random_scramble(12, seed=9)
    start = SOLVED_CUBE.apply(scramble)
    steps = plan(group_steps(invert(scramble)), CFG)
    with Journal(tmp_path) as journal:
        journal.start_job(start.to_facelets(), [s.text for s in steps], port="sim://old")
    line = json.loads((tmp_path / "journal.jsonl").read_text().splitlines()[-1])
    assert "quarters" not in line
    url = _url("old", start)
    with Journal(tmp_path) as journal, Link(CFG, url) as link:
        assert journal.unfinished().quarters is None
        report = job.resume(link, journal)
    assert report.steps == steps and rig_for_url(url).cube.is_solved()
    forget(url)


@pytest.mark.parametrize("steps, quarters", [(["U'"], [[1]]), (["R2"], [[1]]), (["U R"], None),
                                             (["U D"], [[1]])])
def test_a_journaled_plan_that_is_no_plan_is_one_line_and_moves_nothing(tmp_path, steps, quarters):
    start = SOLVED_CUBE
    with Journal(tmp_path) as journal:
        journal.start_job(start.to_facelets(), steps, quarters=quarters)
    url = _url("bad", start)
    with Journal(tmp_path) as journal, Link(CFG, url) as link, \
            pytest.raises(JournalDamaged, match="cannot be turned") as e:
        job.resume(link, journal)
    assert "\n" not in str(e.value) and "journal.jsonl" in str(e.value)
    assert rig_for_url(url).record == []
    forget(url)


def test_resume_of_a_damaged_plan_on_the_command_line_is_one_line(tmp_path):
    with Journal(tmp_path) as journal:
        journal.start_job(SOLVED_CUBE.to_facelets(), ["U'"], quarters=[[1]])
    r = subprocess.run([sys.executable, "-m", "robot", "resume", "--state-dir", str(tmp_path),
                        "--port", "sim://typed-cli?speed=max"], capture_output=True, text=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert "cannot be turned" in lines[0] and "scan the cube again" in lines[0]


def test_a_journals_quarter_turns_must_be_one_short_list_per_step(tmp_path):
    with Journal(tmp_path) as journal:
        journal.start_job(SOLVED_CUBE.to_facelets(), ["U", "R2"], quarters=[[1], [-2]])
    with Journal(tmp_path) as journal:
        assert journal.unfinished().quarters == [[1], [-2]]
    path = tmp_path / "journal.jsonl"
    record = json.loads(path.read_text())
    for bad in ([[1]], [[1], [3]], [[1], "x"], [[1], [True]], [[1], [2, 2, 2]], "x"):
        path.write_text(json.dumps({**record, "quarters": bad}) + "\n")
        with Journal(tmp_path) as journal, pytest.raises(JournalDamaged, match="quarter turns"):
            journal.read()


def test_plans_are_what_job_run_takes(tmp_path):
    """MotorStep is the only thing job.run and dry_run turn; its quarters say
    each half turn's way round, which the journal keeps."""
    steps = plan(group_steps("R2 U2 L2 D2"), CFG)
    assert all(isinstance(s, MotorStep) and len(s.quarters) == len(s.moves) for s in steps)
    again = plan([s.moves for s in steps], CFG, directions=[s.quarters for s in steps])
    assert again == steps
    flipped = [tuple(-q for q in s.quarters) for s in steps]
    other = plan([s.moves for s in steps], CFG, directions=flipped)
    assert [s.quarters for s in other] == flipped and [s.moves for s in other] == [s.moves for s in steps]
    with pytest.raises(ValueError, match="directions"):
        plan([s.moves for s in steps], CFG, directions=flipped[:1])
