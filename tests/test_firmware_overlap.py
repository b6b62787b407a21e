"""The firmware in simavr against the cube's overlap model (issue 25): the
plans `start` turns, checked from the step pulses (robot/sim/pulses.py),
not from what the firmware reports. The 30-seed run is in
benchmarks/motion.py (--firmware); here a few seeds and the check's own
failure."""

from __future__ import annotations

import dataclasses

import pytest
from fwtools import UNO_ELF, make, read_edges
from simavr_rig import SimavrRig

from robot.app.solving import for_the_rig
from robot.rig import job
from robot.rig.journal import Journal
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.rig.motion import estimate_s, plan
from robot.sim.pulses import collisions, drift_ticks, pulsed_moves
from robot.sim.virtual_rig import Mechanics
from solver import SOLVED, Cube, group_steps, parse_facelets, random_cube

CFG = load_config()


@pytest.fixture(scope="module")
def elf():
    make("all", "sim")
    return UNO_ELF


def turn_on_the_firmware(elf, steps, start: Cube, tmp_path, name: str):
    """Turn planned ``steps`` from ``start``; (the job's report, the edge log,
    the emulated cube)."""
    log = tmp_path / f"{name}.edges"
    with SimavrRig(elf, Mechanics.from_config(CFG), state=start.to_facelets(), edge_log=log) as rig, \
            Link(CFG, rig.port) as link:
        link.connect()
        with Journal(tmp_path / name) as journal:
            report = job.run(link, journal, start, steps)
        state = rig.state()
        rig.counts()  # flushes the edge log
    return report, read_edges(log), state


@pytest.mark.parametrize("seed", [101, 102, 103])
def test_starts_plans_on_the_firmware_keep_to_the_model(elf, tmp_path, seed):
    cube = random_cube(seed)  # the cube `start --seed` puts in a simulated rig
    sol = for_the_rig(CFG, cube.to_facelets(), max_length=None, budget_ms=50, workers=1)
    steps = plan(sol.steps, CFG)
    assert any(s.overlap for s in steps)
    report, edges, state = turn_on_the_firmware(elf, steps, cube, tmp_path, f"s{seed}")
    assert state == SOLVED and report.state == SOLVED
    assert collisions(edges, steps, Mechanics.from_config(CFG)) == []
    # The firmware's own clock (its DONEs) against the plan: equal when the
    # host kept its queue full, longer only by the moves queued late.
    assert report.executed_s >= estimate_s(steps, CFG) - 1e-9
    assert len(pulsed_moves(edges, steps)) == len(steps)


def test_a_plan_ten_degrees_too_eager_is_caught_from_the_pulses(elf, tmp_path):
    """The check can fail: the firmware turns what it is sent, and the
    pulses show faces starting while a neighbour is past the model's angle."""
    moves = "R U F' L2 B D' R2 F U'"
    eager = plan(group_steps(moves), CFG, model=CFG.overlap_model().raised(10.0))
    start = parse_facelets(SOLVED)  # any cube: the check is of the motion
    report, edges, _ = turn_on_the_firmware(elf, eager, start, tmp_path, "eager")
    hits = collisions(edges, eager, Mechanics.from_config(CFG))
    assert hits and all(h.angle > h.allowed for h in hits)
    # Against the eager model itself, the same pulses are within bounds.
    lenient = dataclasses.replace(Mechanics.from_config(CFG), cube=CFG.overlap_model().raised(10.0))
    assert collisions(edges, eager, lenient) == []


@pytest.mark.parametrize("moves", ["U2 R", "R U2 F'", "U D2 R'"])
def test_overlapped_turns_keep_the_schedule_pulse_by_pulse(elf, tmp_path, moves):
    """Two moves running at once tick up to three motors: every tick of
    that must fit in a tick's 640 cycles, or the timer's ticks are lost and
    the motors run slower than the schedule while the firmware's DONEs (its
    own tick count) still say they kept it. An overlapped half turn ran
    2.2 % slow in simavr this way; now every move starts, and the last pulse
    leaves, within a tick of the host's schedule."""
    steps = plan(group_steps(moves), CFG)
    assert any(s.overlap for s in steps)
    _, edges, _ = turn_on_the_firmware(elf, steps, parse_facelets(SOLVED), tmp_path, "sched")
    drift = drift_ticks(pulsed_moves(edges, steps), steps, CFG.profiles())
    assert max(abs(d) for d in drift) < 1.0, drift
