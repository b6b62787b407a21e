"""The baselines the flipper planner is measured against (issue 26).

``cubotino`` must be CUBOTino's own conversion, not our idea of it: on the
four example solutions in its Cubotino_T_moves.py it must make, move for
move, the robot moves its current code makes (run once, 2026-11-27, at
AndreaFavero71/cubotino HEAD; the strings below are that output, written in
its notation: F<n> n flips, S/R a spin/layer turn, 1 and 3 a quarter
clockwise and anticlockwise seen from below, 0 and 4 a half turn either
way). The same check on 6,000 random solutions (3,000 from each start)
found no difference, 61 of them with its two-flip saving.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_kinds import MECHS, mech
from test_mechanisms import _rotations_to

from robot.rig.mechanisms import HOME, HeldCube, MechanismPlan, apply_to_cube, plan
from robot.rig.mechanisms.flipper import Flipper
from robot.rig.mechanisms.greedy import cubotino, greedy
from robot.rig.mechanisms.orientation import parse
from solver import Move, parse_facelets, parse_moves, random_cube, solve

AFTER_SCAN = (parse("LBURFD"), 0, False)
"""Where CUBOTino's scan leaves the cube (its ``simulation=False`` start)."""

EXAMPLES = [
    # solution, its moves from AFTER_SCAN, its moves from home (``simulation=True``)
    ("U2 L R D2 B2 R D2 B2 D2 L' B' R' F2 D' L U2 F2 D' B' D",
     "F1S3R0S3F3R1F2S3R1S3F3S3R0F1R4S1F1R1S3F3S3R0F1R4F3R0S3F1R3S1F1R3F1S1R3S1F3S3R0F1R3S3F1R1F1S3R0F1R4"
     "F1S1R3S1F3R3F1R1",
     "F2S3R0F3S3R1F2S3R1F1R4S1F1S3R0F3S3R1F1R4S1F1S3R0S3F1S3R0F3R3S3F1S1R3S1F3R3F3R0S3F1R3S1F3R1F3R4S1F1"
     "S3R0S3F3R3F3S1R3S1F3R1S3"),
    ("R2 L D' F2 L2 B L U' R F L2 D' F2 D F2 B2 D2",
     "S3R0F2S3R1F1R3S1F1S4R0S3F1S3R0S3F3R1F1S3R1F3R3F3R1S3F3R1F3R4S1F3R3S1F3S3R0S3F3R1F1R4F2R0F1R4S1",
     "S3F1R0F2S3R1S3F3R3S1F3S3R0F1R4F1R1F3R1S3F1R3F1R1S3F1R1F1S3R0F3R3S3F1R0F3S3R1S3F3S3R0F2R4S1F1S3R0S3"),
    ("L D2 L D2 R2 F2 D2 R F' R U R2 B' L' D R D2 B2 F'",
     "F2R1F1R4F3R1F1S3R0S3F3S3R0F1R4S1F1S3R0F3S3R1F1R3F3R1S3F1R1F3R4S1F3R3F3S1R3F1R1F1R1F3R4S1F3S3R0F2R3",
     "S1F1S3R1S3F1S3R0S3F1R1F3R4F3R0S3F1S3R0F3R4S1F3R1S3F1R3F3R1S3F1R1F3S3R0F1R3F1R3S1F3R1F3S3R1S3F3S3R0"
     "F1R4F2S1R3S1"),
    ("F' U D2 R2 L2 U2 D2 R L2",
     "S1F1R3S3F1R1F2S3R0F1R4F2R0F3R4F2R0F1S3R1F2R4S1",
     "F1R3F1R1F2S3R0F1R4F2R0F3R4F2R0F1S3R1F2R4S1"),
]


def notation(p: MechanismPlan) -> str:
    """``p`` written as CUBOTino writes robot moves (the cover left out: its
    servo code opens and closes it around each move)."""
    out: list[str] = []
    for a in p.actions:
        if a.part == "cover":
            continue
        if a.kind == "flip":
            if out and out[-1][0] == "F":
                out[-1] = f"F{int(out[-1][1]) + 1}"
            else:
                out.append("F1")
        else:
            out.append(("S" if a.kind == "spin" else "R") + {1: "1", -1: "3", 2: "0", -2: "4"}[a.quarters])
    return "".join(out)


@pytest.mark.parametrize("solution, after_scan, from_home", EXAMPLES)
def test_cubotino_makes_the_moves_its_own_code_makes(solution, after_scan, from_home):
    m = MECHS["flipper"]
    assert notation(cubotino(solution, m, AFTER_SCAN)) == after_scan
    assert notation(cubotino(solution, m, (HOME, 0, False))) == from_home


def test_cubotino_saves_two_flips_where_its_code_does():
    # the case its file names for the saving: the last two faces opposite,
    # brought down by three flips and two with the same moves after each
    m = MECHS["flipper"]
    p = cubotino("U2 D2 R2 L2 F2 B2", m, AFTER_SCAN)
    assert notation(p) == "F1S3R0F2R4S1F3S3R0F2R4F1R0F2R4S1"  # F3 R0 F2 R4 unsaved
    assert p.solution[-2:] == tuple(parse_moves("B2 F2"))  # made in the other order
    assert notation(cubotino("U2 D2 R2 L2 F2 B2", m, (HOME, 0, False))) == "F2S3R0F2R4F3R0F2R4S1F3S3R0F2R4S1"


def servo_calls(robot_moves: str) -> list[str]:
    """What CUBOTino's servo code (Cubotino_T_servos.py ``servo_solve_cube``,
    read 2026-11-28) does with a string of robot moves, as our robot moves
    on a rig whose cover flips: the first move R closes the cover
    (``flip_to_close``); of n flips the last comes down closed before an R
    and open before an S (``flip_to_close``, ``flip_to_open``); an R closes
    the cover if it is not closed, turns, and opens it again (``rotate_out``
    and ``rotate_home`` end in ``open_cover``); an S spins (the cover is open)."""
    tokens = [robot_moves[i:i + 2] for i in range(0, len(robot_moves), 2)]
    out, closed = [], False
    if tokens and tokens[0][0] == "R":
        out.append("close")
        closed = True
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if t[0] == "F":
            out += ["flip"] * (int(t[1]) - 1)
            closed = nxt == "R"
            out.append("flip close" if closed else "flip")
        elif t[0] == "S":
            assert not closed
            out.append("spin")
        else:
            if not closed:
                out.append("close")
            out += ["turn", "open"]
            closed = False
    return out


@pytest.mark.parametrize("solution, after_scan, from_home", EXAMPLES)
def test_on_a_rig_whose_cover_flips_cubotino_moves_its_cover_as_its_servo_code_does(solution, after_scan,
                                                                                      from_home):
    m = MECHS["cubotino"]
    for start, theirs in ((AFTER_SCAN, after_scan), ((HOME, 0, False), from_home)):
        p = cubotino(solution, m, start)
        assert notation(p) == theirs  # the same flips, spins and turns as on a flipper servo of its own
        got = [a.kind if a.kind in ("spin", "turn") else str(a).replace(" cover", "") for a in p.actions]
        assert got == servo_calls(theirs)


def test_on_a_rig_whose_cover_flips_the_planner_keeps_the_cover_closed_from_turn_to_turn():
    m = MECHS["cubotino"]
    p = plan("D' F U'", m)  # the front face comes down by one flip, then the old up face by one more
    assert [str(a) for a in p.actions] == ["close cover", "turn -1", "flip close", "turn +1", "flip close",
                                           "turn -1"]
    c = cubotino("D' F U'", m)  # opens after each turn, and spins home at the end
    assert [str(a) for a in c.actions] == ["close cover", "turn -1", "open cover", "flip close", "turn +1",
                                           "open cover", "flip close", "turn -1", "open cover", "spin +1"]


def test_on_a_rig_whose_cover_flips_the_baselines_start_from_a_closed_cover_too():
    m = MECHS["cubotino"]
    closed = (HOME, 0, True)
    for convert in (cubotino, greedy):
        p = convert("D' F U'", m, closed)  # replayed through the rules inside: no close while closed
        assert str(p.actions[0]) == "turn -1"


@pytest.mark.parametrize("rig", ["flipper", "cubotino"])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 3)),
                                                   max_size=25))
def test_every_cubotino_plan_makes_the_solutions_cube_within_the_rules(rig, seed, moves):
    m = MECHS[rig]
    sol = [Move(f, p) for f, p in moves]
    facelets = random_cube(seed).to_facelets()
    p = cubotino(sol, m)  # replayed through the rules inside
    assert p.end[1] == 0  # the turntable back home
    held = apply_to_cube(facelets, p.actions, m)
    want = HeldCube(parse_facelets(facelets).apply(sol).to_facelets())
    for slot, q in _rotations_to(p.end[0]):
        want.rotate(slot, q)
    assert held.stickers == want.stickers


@pytest.mark.parametrize("rig", ["flipper", "cubotino"])
def test_a_solve_converted_by_cubotino_solves_the_cube_and_the_planner_beats_both_baselines(rig):
    m = MECHS[rig]
    for seed in (1, 2, 3):
        cube = random_cube(seed)
        s = solve(cube, budget_ms=50, candidates=1, workers=1)
        c, g = cubotino(s.moves, m), greedy(s.moves, m)
        assert apply_to_cube(cube.to_facelets(), c.actions, m).is_solved()
        p = plan(s.moves, m)
        assert p.seconds <= min(c.seconds, g.seconds)


def test_cubotino_needs_its_turntable():
    wide = mech("flipper")
    assert isinstance(wide, Flipper)
    wide.lo, wide.hi = -1, 2
    with pytest.raises(ValueError, match="one quarter turn either way"):
        cubotino("U", wide)
