"""Move tables and pruning tables: built once, cached on disk, memory-mapped.

Move tables say where each coordinate goes under each of the 18 moves.
Pruning tables give, for a pair of coordinates, the exact number of moves to
the goal of a phase; the search uses them as lower bounds.

- Phase 1 (reach the subgroup <U, D, R2, L2, F2, B2>): distance over
  (flip-slice symmetry class, corner twist), 64,430 x 2,187 entries. Only the
  distance modulo 3 is stored, in 2 bits, which is enough because a move
  changes the distance by at most one and the search always knows the
  parent's exact distance.
  Two small tables give the exact distance of what two of the three
  coordinates alone say, (twist, slice places) and (flip, slice places),
  one byte each and 2 MB in all: they stay in the processor's cache and
  rule out three in four of the moves the search looks at before the big
  table is read.
- Phase 2 (solve within the subgroup): distance over (corner-permutation
  symmetry class, order of the U/D edges), 2,768 x 40,320 entries, exact in
  4 bits (14 standing for 14 or more, which is more than phase 2 is ever
  allowed): a phase-1 end needs one read to know its phase-2 distance, where
  a table modulo 3 would need a walk down to the goal with a cache miss per
  move, and the ends are where a search for a short or a cheap solution
  spends much of its time. Also over (corner permutation, order of the slice
  edges) and (U/D edge order, order of the slice edges), one byte each, which
  are cheap to look up and rule out most phase-1 ends first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import coords as co
from . import symmetry as sy
from .cache import load_or_build

VERSION = 11

# Phase-2 moves, as indices into the 18 moves: U U2 U' R2 F2 D D2 D' L2 B2.
PHASE2_MOVES = np.array([0, 1, 2, 4, 7, 9, 10, 11, 13, 16], dtype=np.int64)
EMPTY = 3


# -- move tables -----------------------------------------------------------
@njit(cache=True)
def _move_tables(moves):
    twist = np.empty((co.N_TWIST, 18), dtype=np.uint16)
    flip = np.empty((co.N_FLIP, 18), dtype=np.uint16)
    sl = np.empty((co.N_SLICE_SORTED, 18), dtype=np.uint16)
    corners = np.empty((co.N_PERM8, 18), dtype=np.uint16)
    ud = np.zeros((co.N_PERM8, 18), dtype=np.uint16)
    a = co.identity()
    b = np.empty(co.CUBE_LEN, dtype=np.int64)
    for t in range(co.N_TWIST):
        co.set_twist(a, t)
        for m in range(18):
            co.multiply(a, moves[m], b)
            twist[t, m] = co.get_twist(b)
    for f in range(co.N_FLIP):
        co.set_flip(a, f)
        for m in range(18):
            co.multiply(a, moves[m], b)
            flip[f, m] = co.get_flip(b)
    for s in range(co.N_SLICE_SORTED):
        co.set_slice_sorted(a, s)
        for m in range(18):
            co.multiply(a, moves[m], b)
            sl[s, m] = co.get_slice_sorted(b)
    a = co.identity()
    for c in range(co.N_PERM8):
        co.set_corners(a, c)
        for m in range(18):
            co.multiply(a, moves[m], b)
            corners[c, m] = co.get_corners(b)
    a = co.identity()
    for e in range(co.N_PERM8):
        co.set_ud_edges(a, e)
        for m in (0, 1, 2, 4, 7, 9, 10, 11, 13, 16):
            co.multiply(a, moves[m], b)
            ud[e, m] = co.get_ud_edges(b)
    return twist, flip, sl, corners, ud


def build_moves() -> dict[str, np.ndarray]:
    twist, flip, sl, corners, ud = _move_tables(co.MOVES)
    fs_classidx, fs_sym, fs_rep, fs_stab = sy.build_flipslice_classes(sy.SYMS, sy.SYM_INV)
    c_classidx, c_sym, c_rep, c_stab = sy.build_corner_classes(sy.SYMS, sy.SYM_INV)
    return {
        # class and symmetry in one word: one memory access per phase-1 node
        "fs_cs": (fs_classidx.astype(np.uint32) << 4) | fs_sym,
        "slice_move": (sl[::24].astype(np.int64) // 24).astype(np.uint16),
        "c_classidx": c_classidx, "c_sym": c_sym, "c_rep": c_rep, "c_stab": c_stab,
        "ud_edges_conj": sy.build_ud_edges_conj(sy.SYMS, sy.SYM_INV),
        "twist_move": twist, "flip_move": flip, "slice_sorted_move": sl,
        "corners_move": corners, "ud_edges_move": ud,
        "twist_conj": sy.build_twist_conj(sy.SYMS, sy.SYM_INV),
        "fs_classidx": fs_classidx, "fs_sym": fs_sym, "fs_rep": fs_rep, "fs_stab": fs_stab,
    }


# -- 2-bit tables ------------------------------------------------------------
@njit(cache=True, inline="always")
def get2(table, i):
    return (table[i >> 2] >> ((i & 3) << 1)) & 3


@njit(cache=True, inline="always")
def set2(table, i, v):
    shift = (i & 3) << 1
    table[i >> 2] = (table[i >> 2] & ~np.uint8(3 << shift)) | np.uint8(v << shift)


@njit(cache=True, inline="always")
def get4(table, i):
    return (table[i >> 1] >> ((i & 1) << 2)) & 15


@njit(cache=True, inline="always")
def set4(table, i, v):
    shift = (i & 1) << 2
    table[i >> 1] = (table[i >> 1] & ~np.uint8(15 << shift)) | np.uint8(v << shift)


FAR = 14
"""Phase-2 distances of 14 or more are stored as 14."""
EMPTY4 = 15


@njit(cache=True)
def _fill_stab(table, c, t, v, stab, conj, nt, bits):
    """Mark the entries equivalent to (c, t) under the class's self-symmetries,
    in a table of 2 or 4 bits an entry."""
    added = 0
    st = stab[c]
    if st != 1:
        for k in range(1, 16):
            if (st >> k) & 1:
                j = c * nt + conj[t, k]
                if bits == 2:
                    if get2(table, j) == EMPTY:
                        set2(table, j, v)
                        added += 1
                elif get4(table, j) == EMPTY4:
                    set4(table, j, v)
                    added += 1
    return added


@njit(cache=True)
def _phase1_prune(twist_move, flip_move, slice_sorted_move, twist_conj,
                  fs_classidx, fs_sym, fs_rep, fs_stab):
    nt = co.N_TWIST
    n = fs_rep.shape[0] * nt
    table = np.full((n + 3) // 4, 0xFF, dtype=np.uint8)
    slice_move = np.empty((co.N_SLICE, 18), dtype=np.int64)
    for s in range(co.N_SLICE):
        for m in range(18):
            slice_move[s, m] = slice_sorted_move[24 * s, m] // 24
    set2(table, 0, 0)
    done = 1
    depth = 0
    while done < n:
        d3 = depth % 3
        nxt = (depth + 1) % 3
        backward = done > n // 10
        for i in range(n):
            v = get2(table, i)
            if backward:
                if v != 3:
                    continue
            elif v != d3:
                continue
            c = i // nt
            t = i % nt
            fs = fs_rep[c]
            fl = fs % co.N_FLIP
            sl = fs // co.N_FLIP
            for m in range(18):
                fs1 = slice_move[sl, m] * co.N_FLIP + flip_move[fl, m]
                c1 = np.int64(fs_classidx[fs1])
                t1 = np.int64(twist_conj[twist_move[t, m], fs_sym[fs1]])
                j = c1 * nt + t1
                if backward:
                    if get2(table, j) == d3:
                        set2(table, i, nxt)
                        done += 1 + _fill_stab(table, c, t, nxt, fs_stab, twist_conj, nt, 2)
                        break
                elif get2(table, j) == 3:
                    set2(table, j, nxt)
                    done += 1 + _fill_stab(table, c1, t1, nxt, fs_stab, twist_conj, nt, 2)
        depth += 1
    return table


@njit(cache=True)
def _phase2_prune(corners_move, ud_edges_move, ud_edges_conj, c_classidx, c_sym, c_rep, c_stab, moves):
    """Exact distances over (corner class, U/D edge order), phase-2 moves,
    up to FAR (which stands for FAR or more)."""
    ne = co.N_PERM8
    n = c_rep.shape[0] * ne
    table = np.full((n + 1) // 2, 0xFF, dtype=np.uint8)
    set4(table, 0, 0)
    done = 1
    depth = 0
    while done < n and depth < FAR - 1:
        nxt = depth + 1
        backward = done > n // 4
        for i in range(n):
            v = get4(table, i)
            if backward:
                if v != EMPTY4:
                    continue
            elif v != depth:
                continue
            cl = i // ne
            e = i % ne
            c = c_rep[cl]
            for m in moves:
                c1 = corners_move[c, m]
                cl1 = np.int64(c_classidx[c1])
                e1 = np.int64(ud_edges_conj[ud_edges_move[e, m], c_sym[c1]])
                j = cl1 * ne + e1
                if backward:
                    if get4(table, j) == depth:
                        set4(table, i, nxt)
                        done += 1 + _fill_stab(table, cl, e, nxt, c_stab, ud_edges_conj, ne, 4)
                        break
                elif get4(table, j) == EMPTY4:
                    set4(table, j, nxt)
                    done += 1 + _fill_stab(table, cl1, e1, nxt, c_stab, ud_edges_conj, ne, 4)
        depth += 1
    for i in range(n):
        if get4(table, i) == EMPTY4:
            set4(table, i, FAR)
    return table


@njit(cache=True)
def _pair_prune(move_a, move_b, na, nb, moves):
    """Exact distances over (a, b) pairs, a * nb + b, under the given moves."""
    n = na * nb
    table = np.full(n, 255, dtype=np.uint8)
    table[0] = 0
    done = 1
    depth = 0
    while done < n:
        for i in range(n):
            if table[i] != depth:
                continue
            a = i // nb
            b = i % nb
            for m in moves:
                j = move_a[a, m] * nb + move_b[b, m]
                if table[j] == 255:
                    table[j] = depth + 1
                    done += 1
        depth += 1
    return table


def build_phase1(moves: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    p1 = _phase1_prune(moves["twist_move"], moves["flip_move"], moves["slice_sorted_move"],
                       moves["twist_conj"], moves["fs_classidx"], moves["fs_sym"],
                       moves["fs_rep"], moves["fs_stab"])
    every = np.arange(18, dtype=np.int64)
    return {"phase1": p1,
            "twist_slice": _pair_prune(moves["twist_move"], moves["slice_move"], co.N_TWIST, co.N_SLICE,
                                       every),
            "flip_slice": _pair_prune(moves["flip_move"], moves["slice_move"], co.N_FLIP, co.N_SLICE,
                                      every)}


def build_phase2(moves: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    sl24 = np.ascontiguousarray(moves["slice_sorted_move"][:24])
    cornslice = _pair_prune(moves["corners_move"], sl24, co.N_PERM8, 24, PHASE2_MOVES)
    p2 = _phase2_prune(moves["corners_move"], moves["ud_edges_move"], moves["ud_edges_conj"],
                       moves["c_classidx"], moves["c_sym"], moves["c_rep"], moves["c_stab"], PHASE2_MOVES)
    edgeslice = _pair_prune(moves["ud_edges_move"], sl24, co.N_PERM8, 24, PHASE2_MOVES)
    return {"phase2": p2, "cornslice": cornslice, "edgeslice": edgeslice}


_TABLES: dict[str, np.ndarray] | None = None


def load() -> dict[str, np.ndarray]:
    """All tables, from the cache directory (building them on first use)."""
    global _TABLES
    if _TABLES is None:
        # one file per big table, so a build holds only one of them in memory
        moves = load_or_build("moves.tbl", VERSION, build_moves)
        p1 = load_or_build("phase1.tbl", VERSION, lambda: build_phase1(moves))
        p2 = load_or_build("phase2.tbl", VERSION, lambda: build_phase2(moves))
        _TABLES = {**moves, **p1, **p2}
    return _TABLES
