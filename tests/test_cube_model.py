"""The cube model: facelets <-> cubies, moves, random states."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver import (
    MOVE_CUBES,
    SOLVED,
    SOLVED_CUBE,
    CubeError,
    Move,
    format_moves,
    htm,
    invert,
    parse_facelets,
    parse_moves,
    qtm,
    random_cube,
    random_scramble,
    simplify,
)

seeds = st.integers(min_value=0, max_value=2**64)


# -- known answers, worked out by hand on a real cube --------------------------
@pytest.mark.parametrize("move, expected", [
    ("U", "UUUUUUUUU" "BBBRRRRRR" "RRRFFFFFF" "DDDDDDDDD" "FFFLLLLLL" "LLLBBBBBB"),
    ("R", "UUFUUFUUF" "RRRRRRRRR" "FFDFFDFFD" "DDBDDBDDB" "LLLLLLLLL" "UBBUBBUBB"),
    ("F", "UUUUUULLL" "URRURRURR" "FFFFFFFFF" "RRRDDDDDD" "LLDLLDLLD" "BBBBBBBBB"),
    ("D", "UUUUUUUUU" "RRRRRRFFF" "FFFFFFLLL" "DDDDDDDDD" "LLLLLLBBB" "BBBBBBRRR"),
    ("L", "BUUBUUBUU" "RRRRRRRRR" "UFFUFFUFF" "FDDFDDFDD" "LLLLLLLLL" "BBDBBDBBD"),
    ("B", "RRRUUUUUU" "RRDRRDRRD" "FFFFFFFFF" "DDDDDDLLL" "ULLULLULL" "BBBBBBBBB"),
])
def test_single_moves_on_solved_cube(move, expected):
    assert SOLVED_CUBE.apply(move).to_facelets() == expected
    assert parse_facelets(expected) == SOLVED_CUBE.apply(move)


def test_superflip_facelets():
    superflip = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2"
    f = SOLVED_CUBE.apply(superflip).to_facelets()
    cube = parse_facelets(f)
    assert cube.ep == tuple(range(12)) and cube.eo == (1,) * 12
    assert cube.cp == tuple(range(8)) and cube.co == (0,) * 8


# -- identities ----------------------------------------------------------------
def test_sexy_move_has_order_six():
    c = SOLVED_CUBE
    for i in range(1, 7):
        c = c.apply("R U R' U'")
        assert c.is_solved() == (i == 6)


@pytest.mark.parametrize("index", range(18))
def test_every_move_has_order_four_or_two(index):
    m = MOVE_CUBES[index]
    order = 2 if index % 3 == 1 else 4
    c = SOLVED_CUBE
    for i in range(1, order + 1):
        c = c * m
        assert c.is_solved() == (i == order)


def test_opposite_faces_commute():
    for a, b in ("UD", "RL", "FB"):
        assert SOLVED_CUBE.apply(f"{a} {b}") == SOLVED_CUBE.apply(f"{b} {a}")
    assert SOLVED_CUBE.apply("U R") != SOLVED_CUBE.apply("R U")


@given(seeds)
def test_facelets_cubies_round_trip(seed):
    cube = random_cube(seed)
    f = cube.to_facelets()
    assert parse_facelets(f) == cube
    assert sorted(Counter(f).values()) == [9] * 6


@given(seeds, seeds)
def test_multiplication_and_inverse(a, b):
    x, y = random_cube(a), random_cube(b)
    assert (x * y) * y.inverse() == x
    assert x * x.inverse() == SOLVED_CUBE
    assert (x * y).inverse() == y.inverse() * x.inverse()


@given(seeds, st.integers(0, 40))
def test_inverse_sequence_undoes(seed, length):
    moves = random_scramble(length, seed)
    assert len(moves) == length
    cube = SOLVED_CUBE.apply(moves)
    assert cube.apply(invert(moves)).is_solved()


@given(seeds, st.integers(0, 30))
def test_simplify_keeps_the_state(seed, length):
    import random
    rng = random.Random(seed)
    moves = [Move(rng.randrange(6), rng.randrange(1, 4)) for _ in range(length)]
    short = simplify(moves)
    assert SOLVED_CUBE.apply(short) == SOLVED_CUBE.apply(moves)
    assert len(short) <= len(moves)
    for a, b in zip(short, short[1:]):
        assert a.face != b.face
    for a, b, c in zip(short, short[1:], short[2:]):
        assert not (a.face % 3 == b.face % 3 == c.face % 3)


def test_random_scramble_never_cancels():
    for seed in range(50):
        moves = random_scramble(30, seed)
        assert simplify(moves) == moves


def test_random_scramble_is_repeatable():
    assert random_scramble(20, 7) == random_scramble(20, 7)
    assert random_cube(7) == random_cube(7)
    assert random_cube(7) != random_cube(8)


# -- notation ------------------------------------------------------------------
def test_parse_aliases_and_separators():
    assert format_moves(parse_moves("R U2' F3, B’ D2 L")) == "R U2 F' B' D2 L"
    assert parse_moves("") == []


@pytest.mark.parametrize("text, token, number", [
    ("R U X", "X", 3), ("R u", "u", 2), ("R2x", "R2x", 1), ("R,, U4", "U4", 2),
])
def test_parse_error_names_token_and_position(text, token, number):
    with pytest.raises(CubeError) as e:
        parse_moves(text)
    assert e.value.kind == "moves"
    assert repr(token) in str(e.value) and f"move {number}" in str(e.value)
    assert e.value.positions == [text.index(token)]


@pytest.mark.parametrize("text, says", [
    ("R4", "'4' after the face is not a turn: expected nothing (a quarter turn clockwise), "
           "' (anticlockwise), 2 (a half turn) or 3 (three quarters, the same as ')"),
    ("Q", "expected a face U R F D L B first"),
    ("r", "wide, slice and whole-cube moves are not face turns"),
    ("M", "wide, slice and whole-cube moves are not face turns"),
    ("y2", "wide, slice and whole-cube moves are not face turns"),
])
def test_a_bad_move_says_which_part_is_wrong(text, says):
    """Every suffix taken is named (R3 is R', so R4's refusal must not say only ', 2 and 2')."""
    with pytest.raises(CubeError) as e:
        parse_moves(text)
    assert says in str(e.value), str(e.value)
    assert ("wide" in str(e.value)) == (text[0] in "rMy")


def test_simplify_examples():
    assert format_moves(simplify("U D U'")) == "D"
    assert format_moves(simplify("R R R")) == "R'"
    assert format_moves(simplify("R U U' R'")) == ""
    assert format_moves(simplify("U D U D")) == "U2 D2"
    assert format_moves(simplify("F B2 F' B2")) == ""
    assert format_moves(simplify("R L R")) == "R2 L"


def test_metrics():
    assert htm("R U2 F' D2") == 4
    assert qtm("R U2 F' D2") == 6
    assert htm("") == qtm("") == 0


# -- uniformity of random states ---------------------------------------------------
def test_random_states_look_uniform():
    n = 6000
    corner_at_urf = Counter()
    twist = Counter()
    flip = Counter()
    parity = Counter()
    for seed in range(n):
        c = random_cube(seed)
        corner_at_urf[c.cp[0]] += 1
        twist[c.co[7]] += 1
        flip[c.eo[11]] += 1
        parity[c.corner_parity()] += 1
        assert c.corner_parity() == c.edge_parity()
        assert sum(c.co) % 3 == 0 and sum(c.eo) % 2 == 0

    def chi2(counter, k):
        expected = n / k
        return sum((counter[i] - expected) ** 2 / expected for i in range(k))

    # 99.9% quantiles of chi-square with k-1 degrees of freedom
    assert chi2(corner_at_urf, 8) < 24.3
    assert chi2(twist, 3) < 13.8
    assert chi2(flip, 2) < 10.8
    assert chi2(parity, 2) < 10.8


def test_solved_constant():
    assert parse_facelets(SOLVED).is_solved()
