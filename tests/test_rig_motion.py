"""Motion planning: steps, motors and signed step counts."""

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from robot.rig.config import CubeConfig
from robot.rig.loading import load_config
from robot.rig.motion import AXIS, plan
from solver import SOLVED_CUBE, Move, format_moves, group_steps

CFG = load_config()
moves_st = st.lists(st.builds(Move, st.integers(0, 5), st.integers(1, 3)), max_size=30)


@given(moves_st)
def test_grouped_steps_do_what_the_sequence_does(moves):
    steps = group_steps(moves)
    assert isinstance(steps, tuple) and all(isinstance(s, tuple) for s in steps)
    flat = [m for s in steps for m in s]
    assert flat == moves
    for s in steps:
        assert 1 <= len(s) <= 2
        if len(s) == 2:
            assert AXIS[s[0].face] == AXIS[s[1].face] and s[0].face != s[1].face
    # Consecutive steps that could have been merged were merged.
    for a, b in zip(steps, steps[1:]):
        if len(a) == 1:
            assert not (AXIS[a[0].face] == AXIS[b[0].face] and a[0].face != b[0].face)
    assert SOLVED_CUBE.apply(format_moves(flat)) == SOLVED_CUBE.apply(format_moves(moves))


def test_step_counts_signs_and_inversion():
    motors = dict(CFG.motors)
    motors["L"] = dataclasses.replace(motors["L"], invert=True, motor=5)
    motors["B"] = dataclasses.replace(motors["B"], motor=4)
    cfg = dataclasses.replace(CFG, motors=motors)
    steps = plan(group_steps("U D' R2 L F'"), cfg)
    assert [s.parts for s in steps] == [((0, 400), (3, -400)), ((1, 800), (5, -400)), ((2, -400),)]
    # No overlap without corner cutting; with the default cube model, the
    # tighter of each step's classes (U+R2 against: 12 degrees; R2+F' with: 20).
    off = dataclasses.replace(cfg, cube=CubeConfig(corner_cutting=False))
    assert [s.overlap for s in plan(group_steps("U D' R2 L F'"), off)] == [0, 0, 0]
    assert [s.overlap for s in steps] == [0, int(12 / 90 * 400), int(20 / 90 * 400)]


def test_overlap_only_between_perpendicular_steps():
    cfg = dataclasses.replace(CFG, rig=dataclasses.replace(CFG.rig, overlap_deg=9.0))
    steps = plan(group_steps("U R L' R F"), cfg)
    # U | R L' | R | F : perpendicular after U, same axis R after R L', perpendicular F.
    assert [s.overlap for s in steps] == [0, 40, 0, 40]
