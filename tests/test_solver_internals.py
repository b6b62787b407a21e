"""The solver's building blocks: coordinates, symmetries, pruning tables."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import SOLVED_CUBE, Move, axial_cost, qtm, random_cube, random_scramble
from solver import coords as co
from solver import symmetry as sy
from solver.search import (
    AXIAL,
    ROOT,
    TURNS,
    Searcher,
    _premove_sequences,
    phase1_distance,
    phase2_distance,
    premove_count,
    seq_cost,
)
from solver.tables import PHASE2_MOVES, load

seeds = st.integers(0, 2**64)


@given(st.integers(0, co.N_TWIST - 1), st.integers(0, co.N_FLIP - 1),
       st.integers(0, co.N_SLICE_SORTED - 1), st.integers(0, co.N_PERM8 - 1))
def test_coordinates_round_trip(twist, flip, slice_sorted, perm):
    a = co.identity()
    co.set_twist(a, twist)
    co.set_flip(a, flip)
    co.set_slice_sorted(a, slice_sorted)
    assert (co.get_twist(a), co.get_flip(a), co.get_slice_sorted(a)) == (twist, flip, slice_sorted)
    assert sum(a[8:16]) % 3 == 0 and sum(a[28:40]) % 2 == 0
    assert sorted(a[16:28]) == list(range(12))
    co.set_corners(a, perm)
    assert co.get_corners(a) == perm
    b = co.identity()
    co.set_ud_edges(b, perm)
    assert co.get_ud_edges(b) == perm


def test_solved_cube_is_zero_everywhere():
    a = co.to_array(SOLVED_CUBE)
    assert (co.get_twist(a), co.get_flip(a), co.get_slice_sorted(a), co.get_corners(a),
            co.get_ud_edges(a)) == (0, 0, 0, 0, 0)


def _conj_move_table() -> np.ndarray:
    """conj_move[m, s]: the move S[s] * M * S[s]^-1; StopIteration if one is not a move."""
    table = np.empty((18, sy.N_SYM), dtype=np.int64)
    for m in range(18):
        for s in range(sy.N_SYM):
            c = sy._mul(sy._mul(sy.SYMS[s], co.MOVES[m]), sy.SYMS[sy.SYM_INV[s]])
            table[m, s] = next(k for k in range(18) if np.array_equal(c, co.MOVES[k]))
    return table


def test_symmetries_map_moves_to_moves():
    table = _conj_move_table()
    assert len({tuple(x) for x in sy.SYMS}) == 16
    for s in range(16):
        assert sorted(table[:, s]) == list(range(18))
        # every symmetry keeps the U-D axis: U and D turns stay U or D turns
        assert {table[m, s] // 3 for m in (0, 9)} <= {0, 3}
        assert np.array_equal(sy._mul(sy.SYMS[s], sy.SYMS[sy.SYM_INV[s]]), co.identity())
    # the mirror images turn clockwise into anticlockwise
    assert any(table[0, s] in (2, 11) for s in range(16))


def test_class_counts_match_the_literature():
    t = load()
    assert t["fs_rep"].shape == (64430,)
    assert t["c_rep"].shape == (2768,)


@given(st.integers(0, 12), seeds)
@settings(max_examples=60, deadline=None)
def test_phase1_distance_is_a_lower_bound_and_consistent(n, seed):
    t = load()
    args = (t["twist_move"], t["flip_move"], t["slice_move"], t["fs_cs"],
            t["twist_conj"], t["phase1"])
    cube = SOLVED_CUBE.apply(random_scramble(n, seed))

    def h(c):
        a = co.to_array(c)
        return phase1_distance(co.get_twist(a), co.get_flip(a), co.get_slice_sorted(a) // 24, *args)

    d = h(cube)
    assert d <= n
    for m in range(18):  # one move changes the distance by at most one
        assert abs(h(cube.apply([Move.from_index(m)])) - d) <= 1


def _subgroup_cube(n: int, seed: int) -> np.ndarray:
    """The cubie array after n random moves of the subgroup <U, D, R2, L2, F2, B2>."""
    rng = np.random.default_rng(seed)
    moves = [Move.from_index(int(PHASE2_MOVES[rng.integers(10)])) for _ in range(n)]
    return co.to_array(SOLVED_CUBE.apply(moves))


@given(st.integers(0, 14), seeds)
@settings(max_examples=60, deadline=None)
def test_phase2_distance_is_a_lower_bound(n, seed):
    t = load()
    a = _subgroup_cube(n, seed)
    assert (co.get_twist(a), co.get_flip(a), co.get_slice_sorted(a) < 24) == (0, 0, True)
    d = phase2_distance(co.get_corners(a), co.get_ud_edges(a), t["c_classidx"], t["c_sym"],
                        t["ud_edges_conj"], t["phase2"])
    assert d <= n
    assert (d == 0) == (co.get_corners(a) == 0 and co.get_ud_edges(a) == 0)


def test_random_state_phase1_distance_in_range():
    t = load()
    for seed in range(20):
        a = co.to_array(random_cube(seed))
        d = phase1_distance(co.get_twist(a), co.get_flip(a), co.get_slice_sorted(a) // 24,
                            t["twist_move"], t["flip_move"], t["slice_move"], t["fs_cs"],
                            t["twist_conj"], t["phase1"])
        assert 0 < d <= 12  # phase 1 never needs more than 12 moves


def _phase2_only(scramble: str, p2extra: int) -> str:
    """The first solution a single search finds for a cube already in the
    subgroup (so phase 1 is empty), cheapest in the rig metric."""
    cube = SOLVED_CUBE.apply(scramble)
    s = Searcher(co.to_array(cube), load())
    found = None
    while found is None and not s.done:
        found = s.step(20, 1 << 30, AXIAL, 1.0, 1.5, np.inf, 0, p2extra)
    moves = " ".join(str(Move.from_index(m)) for m in found)
    assert cube.apply(moves).is_solved()
    return moves


def test_longer_phase2_can_be_cheaper_on_the_rig():
    # the shortest completion has 6 moves and costs 8.5 on a six-motor rig;
    # two moves more, paired on opposite faces, cost 7.5
    scramble = "U U F2 D2 D' F2 U U R2"
    short = _phase2_only(scramble, 0)
    longer = _phase2_only(scramble, 2)
    assert (len(short.split()), axial_cost(short)) == (6, 8.5)
    assert (len(longer.split()), axial_cost(longer)) == (8, 7.5)


@given(st.integers(0, 14), seeds)
@settings(max_examples=60, deadline=None)
def test_small_phase1_tables_never_overestimate(n, seed):
    # they rule moves out before the big table is read: a bound too high
    # would silently lose solutions
    t = load()
    a = co.to_array(SOLVED_CUBE.apply(random_scramble(n, seed)))
    tw, fl, sl = co.get_twist(a), co.get_flip(a), co.get_slice_sorted(a) // 24
    d = phase1_distance(tw, fl, sl, t["twist_move"], t["flip_move"], t["slice_move"], t["fs_cs"],
                        t["twist_conj"], t["phase1"])
    assert t["twist_slice"][tw * co.N_SLICE + sl] <= d
    assert t["flip_slice"][fl * co.N_SLICE + sl] <= d
    assert max(t["twist_slice"].max(), t["flip_slice"].max()) <= 12


@given(st.integers(0, 18), seeds)
@settings(max_examples=60, deadline=None)
def test_small_phase2_tables_never_overestimate(n, seed):
    # they rule phase-1 ends out before the big table is read
    t = load()
    a = _subgroup_cube(n, seed)
    c, e, s = co.get_corners(a), co.get_ud_edges(a), co.get_slice_sorted(a)
    assert t["cornslice"][c * 24 + s] <= n and t["edgeslice"][e * 24 + s] <= n


def test_phase2_table_is_exact_near_the_goal():
    # breadth first over the whole subgroup to depth 5, by corner and U/D-edge
    # order: every entry the search can meet this close must be exact
    t = load()
    seen = {(0, 0): 0}
    frontier = [(0, 0)]
    for depth in range(1, 6):
        nxt = []
        for c, e in frontier:
            for m in PHASE2_MOVES:
                key = (int(t["corners_move"][c, m]), int(t["ud_edges_move"][e, m]))
                if key not in seen:
                    seen[key] = depth
                    nxt.append(key)
        frontier = nxt
    assert len(seen) > 10_000
    for (c, e), d in seen.items():
        assert phase2_distance(c, e, t["c_classidx"], t["c_sym"], t["ud_edges_conj"], t["phase2"]) == d


def test_premove_sequences_are_all_different_and_start_outside_the_subgroup():
    seqs = _premove_sequences(2)
    assert seqs[0] == () and len(seqs) == premove_count(2) == 1 + 8 + 108
    assert [len(q) for q in seqs] == sorted(len(q) for q in seqs)
    assert all(q[0] not in PHASE2_MOVES for q in seqs[1:])
    states = {SOLVED_CUBE.apply([Move.from_index(m) for m in q]) for q in seqs}
    assert len(states) == len(seqs)


@given(seeds)
@settings(max_examples=8, deadline=None)
def test_every_kind_of_root_solves_the_cube(seed):
    # the search goes through the plain cube and the cubes after one and two
    # premoves; a solution from a premove root ends with its premoves
    cube = random_cube(seed)
    s = Searcher(co.to_array(cube), load(), premoves=2)
    kinds = set()
    for _ in range(5000):
        found = s.step(21, 1 << 30)
        assert found is not None and len(found) <= 21
        r = int(s.st[ROOT])
        k = int(s.rk[r])
        assert found[len(found) - k:] == [int(m) for m in s.rp[r, :k]]
        assert cube.apply([Move.from_index(m) for m in found]).is_solved()
        kinds.add(k)
        if kinds == {0, 1, 2}:
            break
    assert kinds == {0, 1, 2}


@given(st.lists(st.integers(0, 17), max_size=30), st.sampled_from([(1.0, 1.5), (1.0, 2.0), (0.7, 1.2)]))
def test_compiled_costs_match_the_metrics(seq, costs):
    # the search's branch and bound prices moves with seq_cost; the solution
    # it returns is priced with solver.metrics: the two must agree on every
    # sequence the search makes (never the same face twice in a row)
    kept: list[int] = []
    for m in seq:
        if not kept or m // 3 != kept[-1] // 3:
            kept.append(m)
    seq = kept
    moves = [Move.from_index(m) for m in seq]
    arr = np.array(seq, dtype=np.int64)
    assert seq_cost(arr, len(seq), AXIAL, *costs) == pytest.approx(axial_cost(moves, *costs))
    assert seq_cost(arr, len(seq), TURNS, 1.0, 2.0) == qtm(moves)
