"""CFOP: every rule tests itself, every case is covered, every solve checked.

A rule is right when its algorithm, applied to every case it claims (each
turn of U before it, any contents of the pieces it must not care about),
reaches its stage's goal and touches nothing it must keep. A table is
complete when every state its stage can meet is claimed by exactly one rule.
"""

import itertools
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from incli import cuberobot

from solver import SOLVED_CUBE, Cube, CubeError, format_moves, invert, parse_moves, random_cube
from solver.cfop import SLOTS, solve_cfop
from solver.cfop import patterns as pat
from solver.cfop.cross import cross_solved, distance_table, solve_cross
from solver.cfop.engine import _Y_POWERS, f2l_solved, last_layer_oriented, plan_slot, slot_solved
from solver.cfop.notation import to_face_turns
from solver.cfop.rules import (
    AUF_CUBES,
    AUF_MOVES,
    Rule,
    RuleConflict,
    _claim,
    f2l_lookup,
    f2l_rules,
    oll_lookup,
    oll_rules,
    pll_lookup,
    pll_rules,
)

PLL_NAMES = {"Aa", "Ab", "E", "F", "Ga", "Gb", "Gc", "Gd", "H", "Ja", "Jb", "Na", "Nb", "Ra", "Rb",
             "T", "Ua", "Ub", "V", "Y", "Z"}
F2L_CORNERS = (4, 5, 6, 7)
F2L_EDGES = (4, 5, 6, 7, 8, 9, 10, 11)


def ll_permutation(rng: random.Random) -> Cube:
    """A random permutation of the top layer (even in all), nothing twisted."""
    cp, ep = list(range(4)), list(range(4))
    rng.shuffle(cp)
    rng.shuffle(ep)
    if pat.permutation_parity(cp) != pat.permutation_parity(ep):
        ep[0], ep[1] = ep[1], ep[0]
    return Cube(tuple(cp) + (4, 5, 6, 7), (0,) * 8, tuple(ep) + tuple(range(4, 12)), (0,) * 12)


def cross_kept_cube(rng: random.Random) -> Cube:
    """A random cube whose cross is solved (everything else anywhere)."""
    c = random_cube(rng.randrange(2 ** 32))
    return c.apply(solve_cross(c))


def f2l_kept(before: Cube, after: Cube, skip: int | None = None) -> bool:
    """Each first-two-layer slot except ``skip``'s holds what it held."""
    corners = [s for s in F2L_CORNERS if skip is None or s != 4 + skip]
    edges = [s for s in F2L_EDGES if skip is None or s != 8 + skip]
    return (all((before.cp[s], before.co[s]) == (after.cp[s], after.co[s]) for s in corners)
            and all((before.ep[s], before.eo[s]) == (after.ep[s], after.eo[s]) for s in edges))


# -- notation ------------------------------------------------------------------

@pytest.mark.parametrize("alg, faces", [
    ("x' R U' R' D R U R' D' x", "R B' R' F R B R' F'"),  # after x', F sits at D
    ("y R", "B"), ("y' R", "F"), ("x U", "F"), ("z U", "L"), ("z' U", "R"),
    ("r", "L"), ("Rw'", "L'"), ("r U", "L F"), ("M U", "R L' B"), ("E R", "U D' F"),
    ("S U", "F' B L"), ("x R' U R' D2 R U' R' D2 R2 x'", "R' F R' B2 R F' R' B2 R2"),
    ("U U'", ""), ("R2'", "R2"),
])
def test_notation_translates_to_face_turns(alg, faces):
    assert format_moves(to_face_turns(alg)) == faces


_TOKENS = [f + s for f in "URFDLBxyzMESrludfb" for s in ("", "'", "2")] + ["Rw", "Uw'", "Fw2"]


def _inverse_text(tokens: list[str]) -> str:
    def inv(t: str) -> str:
        return t if t.endswith("2") else t[:-1] if t.endswith("'") else t + "'"
    return " ".join(inv(t) for t in reversed(tokens))


@given(st.lists(st.sampled_from(_TOKENS), max_size=25))
def test_notation_sequence_and_its_inverse_cancel(tokens):
    text = " ".join(tokens)
    assert SOLVED_CUBE.apply(to_face_turns(f"{text} {_inverse_text(tokens)}")).is_solved()


@given(st.lists(st.sampled_from([f + s for f in "URFDLB" for s in ("", "'", "2")]), max_size=25),
       st.sampled_from(["x", "y", "z", "x'", "y2", "z2"]))
def test_rotation_does_not_change_the_face_turn_count(tokens, rotation):
    """A rotation relabels faces, one for one: same number of turns."""
    text = " ".join(tokens)
    assert len(to_face_turns(f"{rotation} {text}")) == len(to_face_turns(text))


def test_bad_notation_names_the_token():
    with pytest.raises(CubeError, match="'Q'"):
        to_face_turns("R Q U")
    with pytest.raises(CubeError, match="'Mw'"):
        to_face_turns("Mw")


# -- OLL -----------------------------------------------------------------------

def test_oll_table_has_the_57_standard_numbers():
    assert sorted(int(r.name.split()[1]) for r in oll_rules()) == list(range(1, 58))


@pytest.mark.parametrize("rule", oll_rules(), ids=lambda r: r.name)
def test_every_oll_rule_orients_every_case_it_claims(rule):
    assert pat.oll_picture(rule.case) == rule.pattern  # the picture reads back as written
    rng = random.Random(rule.name)
    for k in range(4):
        for _ in range(6):  # any permutation of the top layer: OLL must not care
            state = ll_permutation(rng) * rule.case * AUF_CUBES[k].inverse()
            assert oll_lookup()[pat.oll_key(state)][0] is rule
            after = state.apply(AUF_MOVES[k] + rule.moves)
            assert last_layer_oriented(after) and f2l_solved(after), (rule.name, k)


def test_every_last_layer_orientation_is_claimed_by_exactly_one_oll_rule():
    """All 27 * 8 = 216 orientations; each rule tried with each turn of U."""
    claims = {}
    for rule in oll_rules():
        for k in range(4):
            claims.setdefault(pat.oll_key(rule.case * AUF_CUBES[k].inverse()), set()).add(rule.name)
    states = 0
    for co in itertools.product(range(3), repeat=4):
        for eo in itertools.product(range(2), repeat=4):
            if sum(co) % 3 or sum(eo) % 2:
                continue
            states += 1
            key = co + eo
            expected = 0 if not any(key) else 1
            assert len(claims.get(key, ())) == expected, (key, claims.get(key))
    assert states == 216 and len(oll_lookup()) == 215


# -- PLL -----------------------------------------------------------------------

def test_pll_table_has_the_21_standard_names():
    assert {r.name.removeprefix("PLL ") for r in pll_rules()} == PLL_NAMES


@pytest.mark.parametrize("rule", pll_rules(), ids=lambda r: r.name)
def test_every_pll_rule_solves_every_case_it_claims(rule):
    assert pat.pll_pattern(rule.case) == rule.pattern
    for k in range(4):
        for colours in AUF_CUBES:  # the same case with its colours turned round
            state = colours * rule.case * AUF_CUBES[k].inverse()
            assert pll_lookup()[pat.pll_key(state)][0] is rule
            after = state.apply(AUF_MOVES[k] + rule.moves)
            assert any((after * u).is_solved() for u in AUF_CUBES), (rule.name, k)


def test_every_last_layer_permutation_is_claimed_by_exactly_one_pll_rule():
    """All 4! * 4! / 2 = 288 permutations of an oriented top layer."""
    claims = {}
    for rule in pll_rules():
        for k in range(4):
            for colours in AUF_CUBES:
                claims.setdefault(pat.pll_key(colours * rule.case * AUF_CUBES[k].inverse()),
                                  set()).add(rule.name)
    states = 0
    for cp in itertools.permutations(range(4)):
        for ep in itertools.permutations(range(4)):
            if pat.permutation_parity(cp) != pat.permutation_parity(ep):
                continue
            states += 1
            cube = Cube(cp + (4, 5, 6, 7), (0,) * 8, ep + tuple(range(4, 12)), (0,) * 12)
            only_auf = any((cube * u).is_solved() for u in AUF_CUBES)
            assert len(claims.get(cp + ep, ())) == (0 if only_auf else 1), (cp, ep, claims.get(cp + ep))
    assert states == 288 and len(pll_lookup()) == 284


# -- F2L -----------------------------------------------------------------------

@pytest.mark.parametrize("rule", f2l_rules(), ids=lambda r: " ".join(r.pattern))
def test_every_f2l_rule_inserts_its_pair_and_keeps_the_rest(rule):
    rng = random.Random(repr(rule.pattern))
    assert pat.f2l_pattern(pat.f2l_key(rule.case)) == rule.pattern
    for k in range(4):
        for rest in [SOLVED_CUBE] + [cross_kept_cube(rng) for _ in range(3)]:
            state = pat.f2l_cube(rule.pattern, rest) * AUF_CUBES[k].inverse()
            assert f2l_lookup()[pat.f2l_key(state)][0] is rule
            after = state.apply(AUF_MOVES[k] + rule.moves)
            assert slot_solved(after, 0) and cross_solved(after), (rule.pattern, k)
            assert f2l_kept(state, after, skip=0), (rule.pattern, k)


def test_f2l_rules_cover_the_42_cases_of_a_pair_in_the_top_layer_or_its_slot():
    """150 placements (corner in 5 slots x 3 twists, edge in 5 slots x 2
    flips): all but the solved one are claimed by exactly one rule."""
    claims = {}
    for rule in f2l_rules():
        for k in range(4):
            claims.setdefault(pat.f2l_key(rule.case * AUF_CUBES[k].inverse()), set()).add(rule.pattern)
    for key in itertools.product((0, 1, 2, 3, 4), range(3), (0, 1, 2, 3, 8), range(2)):
        assert len(claims.get(key, ())) == (0 if key == (4, 0, 8, 0) else 1), key
    assert len(f2l_rules()) == 41


@pytest.mark.parametrize("slot", range(4), ids=SLOTS)
def test_every_pair_placement_reachable_from_a_solved_cross_is_solved(slot):
    """The pair's corner in any of 8 slots x 3 twists, its edge in any of the
    8 non-cross slots x 2 flips (384 placements), with the other slots solved
    and with them scrambled: the slot ends solved, the cross and every other
    solved slot that held none of the pair's pieces stay solved."""
    rng = random.Random(slot)
    turn = _Y_POWERS[slot]
    count = 0
    for cs, co, es, eo in itertools.product(range(8), range(3), (0, 1, 2, 3, 8, 9, 10, 11), range(2)):
        for rest in (SOLVED_CUBE, cross_kept_cube(rng)):
            view = pat.f2l_cube(pat.f2l_pattern((cs, co, es, eo)), rest)
            assert cross_solved(view)
            cube = turn.inverse() * view * turn  # slot `slot` where the view had front right
            steps, moves = plan_slot(cube, slot)
            after = cube.apply(moves)
            assert slot_solved(after, slot) and cross_solved(after), ((cs, co, es, eo), steps)
            for other in range(4):
                held_pair = (cube.cp[4 + other] == 4 + slot or cube.ep[8 + other] == 8 + slot)
                if other != slot and slot_solved(cube, other) and not held_pair:
                    assert slot_solved(after, other), ((cs, co, es, eo), steps)
            count += 1
    assert count == 2 * 24 * 16


# -- a wrong rule is found -------------------------------------------------------

def test_a_wrong_algorithm_fails_its_own_check():
    sune = next(r for r in oll_rules() if r.name == "OLL 27")
    wrong = Rule("OLL", "OLL 27", sune.pattern, "R U R' U R U R'", tuple(parse_moves("R U R' U R U R'")),
                 sune.case)
    assert not last_layer_oriented(wrong.case.apply(wrong.moves))


def test_two_rules_claiming_one_case_are_refused():
    t = next(r for r in pll_rules() if r.name == "PLL T")
    table: dict = {}
    _claim(table, (1,), t, 0)
    _claim(table, (1,), t, 2)  # the same rule again (a symmetric case) is fine
    with pytest.raises(RuleConflict, match="PLL T"):
        _claim(table, (1,), Rule("PLL", "PLL X", t.pattern, t.algorithm, t.moves, t.case), 0)


# -- whole solves ----------------------------------------------------------------

def replay(cube: Cube, sol) -> None:
    """Apply the solution stage by stage, checking each stage's goal."""
    assert sum(len(s.moves) for s in sol.stages) == sol.length
    index = 0
    done = []
    for stage in sol.stages:
        assert stage.start == index and stage.end == index + len(stage.moves)
        assert tuple(sol.moves[stage.start:stage.end]) == stage.moves
        assert all(sol.stage_of(i) is stage for i in range(stage.start, stage.end))
        index = stage.end
        cube = cube.apply(stage.moves)
        assert cross_solved(cube)
        if stage.name.startswith("F2L"):
            done.append(SLOTS.index(stage.slot))
        assert all(slot_solved(cube, k) for k in done)
        if stage.name == "OLL":
            assert f2l_solved(cube) and last_layer_oriented(cube)
    assert [s.name for s in sol.stages][0] == "cross" and [s.name for s in sol.stages][-2:] == ["OLL", "PLL"]
    assert cube.is_solved()


def test_a_thousand_random_cubes_solved_stage_by_stage():
    distance_table()
    lengths = []
    for seed in range(1000):
        cube = random_cube(seed)
        sol = solve_cfop(cube)
        replay(cube, sol)
        assert len(solve_cross(cube)) <= 8
        lengths.append(sol.length)
    assert 45 <= sum(lengths) / len(lengths) <= 65


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 17), max_size=30))
def test_scrambles_of_any_length_are_solved(indices):
    from solver import Move
    cube = SOLVED_CUBE.apply([Move.from_index(i) for i in indices])
    replay(cube, solve_cfop(cube))


def test_solved_cube_needs_nothing():
    sol = solve_cfop(SOLVED_CUBE)
    assert sol.length == 0 and [(s.name, s.case) for s in sol.stages] == [
        ("cross", None), ("OLL", "skip"), ("PLL", "skip")]


def test_a_known_last_layer_case_is_named():
    """T perm applied to a solved cube: one PLL stage, named T, no OLL."""
    cube = SOLVED_CUBE.apply(invert(to_face_turns("R U R' U' R' F R2 U' R' U' R U R' F'")))
    sol = solve_cfop(cube)
    assert [(s.name, s.case) for s in sol.stages if s.moves] == [("PLL", "PLL T")]
    cube = SOLVED_CUBE.apply(invert(to_face_turns("R U R' U R U2 R'")))
    assert solve_cfop(cube).stages[1].case == "OLL 27 (Sune)"


# -- the command line ------------------------------------------------------------

def run(*args):
    """`cuberobot ARGS` in this process (tests/incli.py)."""
    return cuberobot(*args)


def test_cli_cfop_json_gives_moves_length_and_named_stages():
    cube = random_cube(77)
    r = run("solve", cube.to_facelets(), "--method", "cfop", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"moves", "length", "stages", "elapsed_ms"}
    assert cube.apply(out["moves"]).is_solved() and out["length"] == len(out["moves"].split())
    names = [s["name"] for s in out["stages"]]
    assert names[0] == "cross" and names[-2:] == ["OLL", "PLL"]
    assert sum(n.startswith("F2L") for n in names) == 4
    assert " ".join(s["moves"] for s in out["stages"] if s["moves"]) == out["moves"]
    by_name = {s["name"]: s for s in out["stages"]}
    assert by_name["OLL"]["case"].startswith("OLL ") and by_name["PLL"]["case"].startswith("PLL ")
    assert all(set(s) <= {"name", "moves", "case", "slot"} for s in out["stages"])


def test_cli_cfop_plain_names_each_stage():
    cube = random_cube(78)
    r = run("solve", cube.to_facelets(), "--method", "cfop")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("cross:") and lines[-2].startswith("OLL:") and lines[-1].startswith("PLL:")
    assert "[OLL " in lines[-2] and "[PLL " in lines[-1]
    assert [line.split(":")[0] for line in lines[1:5]] == [f"F2L {n} ({s})" for n, s in zip(
        range(1, 5), [line.split("(")[1][:2] for line in lines[1:5]])]
    moves = " ".join(line.split(": ", 1)[1].split(" [")[0].strip(" -") for line in lines)
    assert cube.apply(moves).is_solved()


def test_cli_cfop_refuses_what_it_cannot_do():
    for extra, word in ((["--max-length", "20"], "max_length"), (["--metric", "qtm"], "metric"),
                        (["--batch", "-"], "batch")):
        r = run("solve", "solved", "--method", "cfop", *extra)
        assert r.returncode == 2 and word in r.stderr and "Traceback" not in r.stderr
    r = run("solve", "UUUU", "--method", "cfop")
    assert r.returncode == 2 and "54" in r.stderr and "Traceback" not in r.stderr
    r = run("solve", "solved", "--method", "fridrich")
    assert r.returncode == 2 and "Traceback" not in r.stderr
