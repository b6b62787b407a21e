"""Every kind of invalid cube string is caught and explained, and nothing
but CubeError ever escapes the validator."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import SOLVED, CubeError, parse_facelets, random_cube


def edit(base: str, **changes: str) -> str:
    """Set stickers by name, e.g. edit(SOLVED, R1='D')."""
    f = list(base)
    for name, symbol in changes.items():
        f[9 * "URFDLB".index(name[0]) + int(name[1]) - 1] = symbol
    return "".join(f)


def swap(base: str, a: int, b: int) -> str:
    f = list(base)
    f[a], f[b] = f[b], f[a]
    return "".join(f)


CASES = [
    ("length", "UUU", []),
    ("length", SOLVED + "U", []),
    ("symbols", edit(SOLVED, B9="x"), [53]),
    ("centers", edit(SOLVED, R5="U", U1="R"), [4, 13]),
    ("count", edit(SOLVED, U1="R"), None),
    ("corner-impossible", edit(SOLVED, R1="D", D1="R"), [8, 9, 20]),
    ("edge-impossible", swap(SOLVED, 10, 3), [5, 10]),
    ("duplicate-piece", swap(SOLVED, 1, 28), None),
    ("corner-twist", edit(SOLVED, U9="F", R1="U", F3="R"), [8, 9, 20]),
    ("edge-flip", edit(SOLVED, U6="R", R2="U"), [5, 10]),
    ("parity", edit(SOLVED, U6="U", R2="F", U8="U", F2="R"), None),
]


@pytest.mark.parametrize("kind, text, positions", CASES, ids=[c[0] for c in CASES])
def test_each_kind_is_reported(kind, text, positions):
    with pytest.raises(CubeError) as e:
        parse_facelets(text)
    assert e.value.kind == kind, str(e.value)
    if positions is not None:
        assert e.value.positions == positions
    assert str(e.value)


def test_impossible_corner_message_names_slot_and_colours():
    with pytest.raises(CubeError) as e:
        parse_facelets(edit(SOLVED, R1="D", D1="R"))
    assert "corner URF" in str(e.value) and "U, D, F" in str(e.value)


def test_duplicate_piece_names_piece_and_missing():
    with pytest.raises(CubeError) as e:
        parse_facelets(swap(SOLVED, 1, 28))
    msg = str(e.value)
    assert "appears 2 times" in msg and "not at all" in msg


def test_count_names_symbols():
    with pytest.raises(CubeError) as e:
        parse_facelets(edit(SOLVED, U1="R"))
    assert "8 times" in str(e.value) and "10 times" in str(e.value)


def test_colour_letters_work_like_face_letters():
    colours = SOLVED.translate(str.maketrans("URFDLB", "WRGYOB"))
    assert parse_facelets(colours).is_solved()
    scrambled = random_cube(3).to_facelets()
    as_colours = scrambled.translate(str.maketrans("URFDLB", "WRGYOB"))
    assert parse_facelets(as_colours) == random_cube(3)


def test_non_string_input():
    with pytest.raises(CubeError):
        parse_facelets(None)  # type: ignore[arg-type]


@settings(max_examples=500)
@given(st.text(max_size=70))
def test_any_text_raises_only_cube_error(text):
    try:
        parse_facelets(text)
    except CubeError as e:
        assert e.kind in {k for k, _, _ in CASES}


@settings(max_examples=500)
@given(st.integers(0, 2**32), st.lists(st.tuples(st.integers(0, 53), st.integers(0, 53)), max_size=4),
       st.lists(st.tuples(st.integers(0, 53), st.sampled_from("URFDLBx?")), max_size=3))
def test_mutated_cubes_raise_only_cube_error(seed, swaps, sets):
    f = list(random_cube(seed).to_facelets())
    for a, b in swaps:
        f[a], f[b] = f[b], f[a]
    for i, ch in sets:
        f[i] = ch
    try:
        cube = parse_facelets("".join(f))
    except CubeError as e:
        assert e.message and isinstance(e.positions, list)
    else:
        assert parse_facelets(cube.to_facelets()) == cube
