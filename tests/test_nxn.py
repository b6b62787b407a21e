"""The NxN model: moves are permutations with the right algebra, and agree
with the 3x3 and 2x2 models where those exist."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import CubeError, parse_facelets, random_cube
from solver.nxn import (
    Turn,
    apply_turns,
    format_turns,
    invert_turns,
    normalize,
    parse_turns,
    permutation,
    random_turns,
    sequence_permutation,
    solved,
)
from solver.pocket import random_pocket

SIZES = st.integers(2, 7)


@st.composite
def sized_turns(draw, max_size=30):
    """A size and a list of any moves that size has."""
    n = draw(SIZES)
    turn = st.builds(
        Turn,
        face=st.sampled_from("URFDLB"),
        first=st.just(1),
        last=st.integers(1, n),
        power=st.integers(1, 3),
    )
    slice_ = st.integers(1, n).flatmap(
        lambda k: st.builds(Turn, face=st.sampled_from("URFDLB"), first=st.just(k), last=st.just(k),
                            power=st.integers(1, 3)))
    rotation = st.builds(Turn, face=st.sampled_from("xyz"), first=st.just(1), last=st.just(n),
                         power=st.integers(1, 3))
    return n, draw(st.lists(st.one_of(turn, slice_, rotation), max_size=max_size))


def labelled(n):
    """Every sticker a different symbol, so a permutation shows in full."""
    return "".join(chr(0x100 + i) for i in range(6 * n * n))


@given(sized_turns())
def test_a_sequence_then_its_inverse_returns_the_start(case):
    n, turns = case
    start = labelled(n)
    there = apply_turns(start, n, turns)
    assert apply_turns(there, n, invert_turns(turns)) == start


@given(sized_turns(max_size=1))
def test_every_move_has_order_four_and_half_turns_order_two(case):
    n, turns = case
    for t in turns:
        quarter = Turn(t.face, t.first, t.last, 1)
        p = permutation(n, quarter)
        identity = np.arange(6 * n * n)
        assert not np.array_equal(p, identity)
        assert not np.array_equal(p[p], identity)
        assert np.array_equal(p[p][p][p], identity)
        half = permutation(n, Turn(t.face, t.first, t.last, 2))
        assert not np.array_equal(half, identity) and np.array_equal(half[half], identity)


@given(st.integers(0, 2**32 - 1), st.sampled_from([f + s for f in "URFDLB" for s in ("", "2", "'")]))
def test_n3_agrees_with_the_3x3_model_on_every_move(seed, move):
    facelets = random_cube(seed).to_facelets()
    assert apply_turns(facelets, 3, move) == parse_facelets(facelets).apply(move).to_facelets()


@given(st.integers(0, 2**32 - 1), st.sampled_from([f + s for f in "URFDLB" for s in ("", "2", "'")]))
def test_n2_agrees_with_the_2x2_model_on_every_move(seed, move):
    cube = random_pocket(seed)
    assert apply_turns(cube.to_facelets(), 2, move) == cube.apply(move).to_facelets()


@given(st.integers(2, 7).flatmap(lambda n: st.tuples(st.just(n), st.integers(2, n))),
       st.sampled_from("URFDLB"), st.sampled_from(["", "'", "2"]))
def test_a_slice_turn_is_the_difference_of_two_wide_turns(nk, face, suffix):
    n, k = nk

    def wide(depth):
        return f"{depth}{face}w" if depth > 1 else face

    inverse = {"": "'", "'": "", "2": "2"}[suffix]
    slice_ = sequence_permutation(n, parse_turns(f"{k}{face}{suffix}", n))
    difference = sequence_permutation(n, parse_turns(f"{wide(k)}{suffix} {wide(k - 1)}{inverse}", n))
    assert np.array_equal(slice_, difference)


def test_wca_names_and_their_meaning():
    assert [str(t) for t in parse_turns("R Rw' 3Rw2 2R x' y2 z 2Rw 1R", 5)] == \
        ["R", "Rw'", "3Rw2", "2R", "x'", "y2", "z", "Rw", "R"]
    # a rotation turns every layer; on a 3x3, Rw is L then x (the same stickers end up everywhere)
    assert apply_turns(solved(3), 3, "Rw") == apply_turns(solved(3), 3, "L x")
    assert apply_turns(solved(4), 4, "x") == apply_turns(solved(4), 4, "4Rw")
    assert apply_turns(solved(4), 4, "y") == apply_turns(solved(4), 4, "U 2U 3U D'")
    # 2R on a 3x3 is the middle layer turned as R
    assert apply_turns(solved(3), 3, "2R") == apply_turns(solved(3), 3, "Rw R'")


@pytest.mark.parametrize("text,n,fragment", [
    ("R Q", 4, "bad move 'Q' (move 2, character 3)"),
    ("8R", 7, "a 7x7 has layers 1 to 7"),
    ("3Rw", 2, "a 2x2 has layers 1 to 2"),
    ("Rw3", 4, "bad move 'Rw3'"),
])
def test_bad_moves_are_named(text, n, fragment):
    with pytest.raises(CubeError) as e:
        parse_turns(text, n)
    assert e.value.kind == "moves" and fragment in e.value.message


@pytest.mark.parametrize("n", [1, 8, 0, -3])
def test_sizes_are_bounded(n):
    with pytest.raises(ValueError, match="2 to 7"):
        solved(n)


@settings(max_examples=30)
@given(sized_turns(max_size=60), st.permutations("wrgyob"))
def test_every_scrambled_cube_passes_the_checks_in_any_colours(case, colours):
    n, turns = case
    cube = apply_turns(solved(n), n, turns)
    recoloured = cube.translate(str.maketrans("URFDLB", "".join(colours)))
    assert normalize(recoloured, n) == normalize(cube, n)


def swap(text, i, j):
    s = list(text)
    s[i], s[j] = s[j], s[i]
    return "".join(s)


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_the_checks_say_what_and_where(n):
    base = apply_turns(solved(n), n, random_turns(n, 50, n))
    area = n * n

    def error(text):
        with pytest.raises(CubeError) as e:
            normalize(text, n)
        return e.value

    assert error(base[:-1]).kind == "length"
    e = error("?" + base[1:])
    assert e.kind == "symbols" and e.positions == [0]
    other = next(ch for ch in "URFDLB" if ch != base[1])
    e = error(base[:1] + other + base[2:])
    assert e.kind == "count" and f"{area} times" in e.message
    # a corner's stickers turned a step round: a twist, named by the corner and its stickers
    u, r, f = 0 * area + area - 1, 1 * area, 2 * area + n - 1  # U's last, R's first, F's top right
    s = list(solved(n))
    s[u], s[r], s[f] = s[f], s[u], s[r]
    e = error("".join(s))
    assert e.kind == "corner-twist" and "URF" in e.message and e.positions == sorted([u, r, f])
    if n % 2:  # the U centre swapped with an R sticker: two centres alike, counts still right
        centre = area // 2
        e = error(swap(solved(n), centre, area + 1))
        assert e.kind == "centers" and e.positions == [centre, area + centre]
        assert f"U{centre + 1} is 'R'" in e.message


def test_n2_and_n3_get_their_full_validation():
    from solver import SOLVED

    twisted = "UUUUUUUUFURRRRRRRRFFRFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
    with pytest.raises(CubeError, match="twisted"):
        normalize(twisted, 3)
    assert normalize(SOLVED, 3) == SOLVED
    # an edge flip: no check of corners or counts finds it, the 3x3's does
    flipped = swap(SOLVED, 7, 19)  # U8 and F2
    with pytest.raises(CubeError) as e:
        normalize(flipped, 3)
    assert e.value.kind == "edge-flip"


def test_random_turns_never_repeat_an_axis_and_are_repeatable():
    turns = random_turns(7, 500, seed=9)
    assert turns == random_turns(7, 500, seed=9) and len(turns) == 500
    axis = {f: "URFDLB".index(f) % 3 for f in "URFDLB"}
    assert all(axis[a.face] != axis[b.face] for a, b in zip(turns, turns[1:], strict=False))
    assert {t.last for t in turns} == {1, 2, 3}
    assert parse_turns(format_turns(turns), 7) == turns


# ---------------------------------------------------------------- the command line


def cli(*args, stdin=None):
    """`cuberobot ARGS` in this process (tests/incli.py)."""
    from incli import cuberobot

    return cuberobot(*args, stdin=stdin)


def test_cli_scramble_apply_show_check_for_every_size():
    for n in range(2, 8):
        out = cli("scramble", "--size", str(n), "--seed", "3", "--moves", "30").stdout.split("\n")
        state, moves = out[0], out[1]
        assert len(state) == 6 * n * n
        assert cli("apply", "--size", str(n), "solved", moves).stdout.strip() == state
        assert cli("check", "--size", str(n), state).stdout.strip() == "valid"
        shown = cli("show", "--size", str(n), state)
        assert shown.returncode == 0 and len(shown.stdout.splitlines()) == 3 * n
        assert shown.stdout.splitlines()[0].split() == list(state[:n])
        assert "\x1b[" in cli("show", "--size", str(n), state, "--color", "always").stdout


def test_cli_sizes_and_moves_are_bounded_with_one_line_errors():
    for args, fragment in ((["check", "--size", "8", "solved"], "from 2 to 7"),
                           (["scramble", "--size", "1"], "from 2 to 7"),
                           (["apply", "--size", "4", "solved", "5R"], "a 4x4 has layers 1 to 4"),
                           (["apply", "--size", "5", "solved", "R " * 10_001], "at most 10000"),
                           (["check", "--size", "5", "x" * 5000], "characters is not a cube"),
                           (["check", "--size", "4", "solved"[:3]], "96 characters")):
        r = cli(*args)
        one_line = len(r.stderr.strip().splitlines()) == 1
        assert r.returncode == 2 and fragment in r.stderr and one_line, r.stderr
        assert "Traceback" not in r.stderr


def test_cli_check_json_names_the_kind_and_stickers():
    s = list(solved(4))
    s[15], s[16], s[35] = s[35], s[15], s[16]
    r = cli("check", "--size", "4", "--json", "".join(s))
    out = __import__("json").loads(r.stdout)
    assert r.returncode == 2 and out["error"]["kind"] == "corner-twist"
    assert out["error"]["positions"] == [15, 16, 35] and "URF" in out["error"]["message"]


def test_quick_commands_load_no_tables_and_no_numba():
    import subprocess
    import sys

    code = ("import sys\nfrom robot.cli.main import main\n"
            "for a in (['check', '--size', '2', 'solved'], ['show', '--size', '7', 'solved'],"
            " ['apply', '--size', '5', 'solved', 'Rw 2R x'], ['scramble', '--size', '6'],"
            " ['check', 'UUUURRRRFFFFDDDDLLLLBBBB']):\n"
            "    assert main(a) == 0, a\n"
            "heavy = ('numba', 'solver.pocket.tables', 'solver.tables', 'solver.cache')\n"
            "bad = [m for m in heavy if m in sys.modules]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------- the canonical form, by the command line


def run(*args: str) -> str:
    """``cuberobot ARGS`` in this process (main() is the command's whole code
    path; a subprocess a call would make the property tests take minutes):
    its standard output, the command having exited 0."""
    import contextlib
    import io

    from robot.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    assert code == 0, (args, out.getvalue())
    return out.getvalue()


def apply_cli(cube: str, n: int, moves: str) -> str:
    return run("apply", "--size", str(n), cube, moves).strip()


def scramble_cli(n: int, seed: int, *more: str) -> list[str]:
    return run("scramble", "--size", str(n), "--seed", str(seed), *more).splitlines()


@settings(max_examples=150, deadline=None)
@given(sized_turns(), st.integers(0, 2**32 - 1))
def test_apply_then_the_inverse_moves_gives_back_the_very_string(case, seed):
    """Any size, any moves (outer, wide, slice, rotation), from a scrambled
    cube as ``scramble`` prints it: two calls undo each other exactly."""
    n, turns = case
    start = scramble_cli(n, seed)[0]
    there = apply_cli(start, n, format_turns(turns))
    assert apply_cli(there, n, format_turns(invert_turns(turns))) == start


@settings(max_examples=100, deadline=None)
@given(sized_turns(max_size=12), st.integers(0, 12), st.integers(0, 2**32 - 1))
def test_two_calls_are_one_call(case, cut, seed):
    """The naming commutes with turning, so the moves may be split anywhere."""
    n, turns = case
    start = scramble_cli(n, seed)[0]
    first, rest = format_turns(turns[:cut]), format_turns(turns[cut:])
    assert apply_cli(apply_cli(start, n, first), n, rest) == apply_cli(start, n, format_turns(turns))


@settings(max_examples=40, deadline=None)
@given(SIZES, st.integers(0, 2**32 - 1), st.sampled_from([None, 0, 1, 7]))
def test_what_scramble_prints_passes_apply_unchanged_and_is_what_its_moves_make(n, seed, moves):
    more = () if moves is None else ("--moves", str(moves))
    out = scramble_cli(n, seed, *more)
    assert apply_cli(out[0], n, "") == out[0]
    assert run("check", "--size", str(n), out[0]).strip() == "valid"
    if len(out) > 1:
        assert apply_cli("solved", n, out[1]) == out[0]


@settings(max_examples=30, deadline=None)
@given(SIZES, st.integers(0, 2**32 - 1), st.permutations("wrgyob"))
def test_a_cube_in_any_colours_is_printed_canonical_and_stays_so(n, seed, colours):
    start = scramble_cli(n, seed)[0]
    recoloured = start.translate(str.maketrans("URFDLB", "".join(colours)))
    assert apply_cli(recoloured, n, "") == start
    assert apply_cli(apply_cli(recoloured, n, "D x 2R"), n, "2R' x' D'") == start


@pytest.mark.parametrize("n,move", [(2, "D"), (2, "L"), (2, "B"), (2, "x"), (2, "y"), (2, "z"), (2, "2U")]
                         + [(4, m) for m in ("D", "L", "B", "Lw", "Dw", "Bw", "x", "y", "z", "3Lw", "2D")]
                         + [(n, m) for n in (3, 5, 7) for m in ("x", "y", "z", f"{(n + 1) // 2}R")])
def test_the_moves_of_the_issue_undo_themselves(n, move):
    """Issue 22: each of these used to come back renamed, not solved."""
    there = apply_cli("solved", n, move)
    assert apply_cli(there, n, format_turns(invert_turns(parse_turns(move, n)))) == solved(n)


def test_the_canonical_strings_show_and_solve():
    """show draws what apply printed; the 2x2 solver solves it (by the corner
    it keeps fixed, that of the naming)."""
    cube = apply_cli("solved", 2, "D L' B2 x R")
    assert run("show", "--size", "2", "--color", "never", cube).split()[:2] == list(cube[:2])
    moves = run("solve", "--size", "2", cube).split("\n")[0]
    assert apply_cli(cube, 2, moves) == solved(2)
    base = apply_cli("solved", 4, "Lw D x")
    assert run("show", "--size", "4", "--color", "never", base).splitlines()[0].split() == list(base[:4])
