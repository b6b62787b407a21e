"""The 2x2: its model, its validation, and the optimal solver checked
against a breadth-first search that knows nothing of the solver's tables."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import CubeError
from solver.pocket import SOLVED, SOLVED_POCKET, PocketCube, parse_pocket, random_pocket, solve
from solver.pocket.coords import from_index, to_index
from solver.pocket.tables import METRICS, build

HTM_COUNTS = [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644]
QTM_COUNTS = [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276]
HTM_MOVES = [f + s for f in "URF" for s in ("", "2", "'")]
QTM_MOVES = [f + s for f in "URF" for s in ("", "'")]


def sticker_moves(moves):
    """Each move as a sticker permutation, worked out by turning stickers
    labelled by their position (independent of the cubie model's tables)."""
    from solver.nxn import apply_turns

    labels = "".join(chr(0x100 + i) for i in range(24))
    return {m: [labels.index(ch) for ch in apply_turns(labels, 2, m)] for m in moves}


def ball(start, perms, radius):
    """Every state within ``radius`` moves of ``start``, with its distance."""
    seen = {start: 0}
    frontier = [start]
    for depth in range(1, radius + 1):
        nxt = []
        for s in frontier:
            for p in perms:
                t = "".join(s[i] for i in p)
                if t not in seen:
                    seen[t] = depth
                    nxt.append(t)
        frontier = nxt
    return seen


def canonical(facelets):
    """A 2x2 in face letters named by its DBL corner: equal strings are the same position."""
    return parse_pocket(facelets).to_facelets()


@pytest.fixture(scope="module")
def balls():
    """Per metric: the solved ball and the move permutations, for a meet-in-the-middle distance."""
    out = {}
    for metric, moves, radius in (("htm", HTM_MOVES, 6), ("qtm", QTM_MOVES, 7)):
        perms = list(sticker_moves(moves).values())
        out[metric] = (ball(SOLVED, perms, radius), perms, radius)
    return out


def bfs_distance(balls, metric, facelets):
    """The exact distance (up to twice the ball radius) by searching out from
    the cube until it meets the ball around solved."""
    near_solved, perms, radius = balls[metric]
    around = ball(canonical(facelets), perms, radius)
    return min(d + near_solved[s] for s, d in around.items() if s in near_solved)


def solves(facelets, moves):
    from solver.nxn import apply_turns

    out = apply_turns(parse_pocket(facelets).to_facelets(), 2, moves)
    return all(len(set(out[4 * f:4 * f + 4])) == 1 for f in range(6))


def test_the_distance_distributions_are_the_known_ones():
    arrays = build()
    assert arrays["htm_counts"].tolist() == HTM_COUNTS
    assert arrays["qtm_counts"].tolist() == QTM_COUNTS
    assert sum(HTM_COUNTS) == 3_674_160 and set(METRICS) == {"htm", "qtm"}


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1))
def test_every_htm_answer_solves_its_cube_and_is_optimal(balls, seed):
    cube = random_pocket(seed).to_facelets()
    sol = solve(cube)
    assert solves(cube, sol.moves)
    assert sol.length == bfs_distance(balls, "htm", cube) <= 11


@settings(max_examples=10)
@given(st.integers(0, 2**32 - 1))
def test_every_qtm_answer_solves_its_cube_and_is_optimal(balls, seed):
    cube = random_pocket(seed).to_facelets()
    sol = solve(cube, metric="qtm")
    assert solves(cube, sol.moves)
    assert sol.cost == bfs_distance(balls, "qtm", cube) <= 14


@given(st.lists(st.sampled_from([f + s for f in "URFDLB" for s in ("", "2", "'")]), max_size=6))
def test_a_scramble_of_n_moves_comes_back_in_at_most_n(moves):
    cube = SOLVED_POCKET.apply(" ".join(moves)).to_facelets()
    sol = solve(cube)
    assert sol.length <= len(moves) and solves(cube, sol.moves)


def test_coordinates_round_trip():
    for seed in range(300):
        c = random_pocket(seed)
        assert from_index(to_index(c)) == c


def test_any_six_symbols_and_any_turn_of_the_whole_cube():
    cube = SOLVED_POCKET.apply("R U F' D L2 B").to_facelets()
    coloured = cube.translate(str.maketrans("URFDLB", "wrgyob"))
    assert solves(coloured, solve(coloured).moves)
    assert parse_pocket(coloured) == parse_pocket(cube)


def test_solved_needs_no_moves():
    assert solve(SOLVED).length == 0 and solve(SOLVED).moves == ""


def _error(text):
    with pytest.raises(CubeError) as e:
        parse_pocket(text)
    return e.value


def swap(text, i, j):
    s = list(text)
    s[i], s[j] = s[j], s[i]
    return "".join(s)


def test_validation_says_what_is_wrong_and_where():
    e = _error(SOLVED[:23])
    assert e.kind == "length" and "24" in e.message
    e = _error("x" + SOLVED[1:])
    assert e.kind == "symbols" and e.positions == [0] and "U1" in e.message
    e = _error(SOLVED[:5] + " " + SOLVED[6:])
    assert e.kind == "symbols" and e.positions == [5] and "R2" in e.message
    e = _error("R" + SOLVED[1:])
    assert e.kind == "count" and "'U' 3 times" in e.message and "'R' 5 times" in e.message
    # U4 and R1 swapped: the URF corner's colours go round it the wrong way
    e = _error(swap(SOLVED, 3, 4))
    assert e.kind == "corner-impossible" and "turning order" in e.message and e.positions == [3, 4, 9]
    # R1 and D2 swapped: the URF corner shows U and D, opposite colours
    e = _error(swap(SOLVED, 4, 13))
    assert e.kind == "corner-impossible" and "opposite" in e.message and "URF" in e.message
    # the fixed corner itself cannot repeat a colour
    e = _error(swap(SOLVED, 14, 22))
    assert e.kind == "corner-impossible" and "DBL" in e.message and e.positions == [14, 18, 23]
    # its colours mirrored: the message speaks of the symbols given
    e = _error(swap(SOLVED, 14, 23))
    assert e.kind == "corner-impossible" and "opposite colours (U and B)" in e.message


def test_a_twisted_corner_is_named():
    # turn the URF corner's three stickers one step round
    s = list(SOLVED)
    u, r, f = 3, 4, 9
    s[u], s[r], s[f] = s[f], s[u], s[r]
    e = _error("".join(s))
    assert e.kind == "corner-twist" and "URF" in e.message and e.positions == [3, 4, 9]


def test_a_corner_twice_is_named():
    # URF also in UFL's slot and DBL also in DRB's: every colour still four times
    twice = PocketCube((0, 0, 2, 3, 4, 5, 6, 6), (0,) * 8).to_facelets()
    e = _error(twice)
    assert e.kind == "duplicate-piece" and "UFL" in e.message and "DRB" in e.message


def test_random_states_are_valid_and_cover_both_parities():
    from solver.cubie import permutation_parity

    parities = set()
    for seed in range(50):
        c = random_pocket(seed)
        assert parse_pocket(c.to_facelets()) == c
        parities.add(permutation_parity(c.cp))
    assert parities == {0, 1}


def test_every_sticker_move_is_a_cubie_move():
    perms = sticker_moves([f + s for f in "URFDLB" for s in ("", "2", "'")])
    for move, perm in perms.items():
        for seed in range(3):
            cube = random_pocket(seed)
            f = cube.to_facelets()
            assert "".join(f[i] for i in perm) == cube.apply(move).to_facelets(), move
    assert len(list(itertools.islice(perms, 18))) == 18


def cli(*args, stdin=None):
    """`cuberobot ARGS` in this process (tests/incli.py)."""
    from incli import cuberobot

    return cuberobot(*args, stdin=stdin)


def test_cli_solves_a_2x2_by_length_or_size_in_htm_and_qtm(balls):
    cube = cli("scramble", "--size", "2", "--seed", "11").stdout.strip()
    assert len(cube) == 24
    import json

    for metric in ("htm", "qtm"):
        for args in ((cube,), ("-", "--size", "2")):
            r = cli("solve", *args, "--metric", metric, "--json", stdin=cube)
            out = json.loads(r.stdout)
            assert r.returncode == 0 and solves(cube, out["moves"])
            assert (out["length"] if metric == "htm" else out["cost"]) == bfs_distance(balls, metric, cube)


def test_cli_2x2_refusals_are_one_line():
    cube = cli("scramble", "--size", "2", "--seed", "11").stdout.strip()
    for args, code, fragment in (((cube, "--metric", "axial"), 2, "htm or qtm"),
                                 ((cube, "--max-length", "1"), 1, "more than --max-length 1"),
                                 (("UUUURRRRFFFFDDDDLLLLBBBU",), 2, "4 times"),
                                 (("solved", "--size", "4"), 2, "from 2 to 3")):
        r = cli("solve", *args)
        assert r.returncode == code and fragment in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = cli("check", "--json", swap(SOLVED, 3, 4))
    import json

    out = json.loads(r.stdout)
    assert r.returncode == 2 and out["error"]["kind"] == "corner-impossible"
    assert out["error"]["positions"] == [3, 4, 9]
