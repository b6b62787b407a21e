"""The cube's symmetries, used to shrink the pruning tables.

Sixteen symmetries of the cube keep the U-D axis in place (four turns about
it, a half turn about the F-B axis, and the left-right mirror image of each).
Conjugating a cube by one of them maps it to a cube that is exactly as far
from the phase-1 goal and from the phase-2 goal as the original, so the
pruning tables need only one entry per equivalence class: 64,430 classes of
(flip, slice) instead of 1,013,760 states, and 2,768 classes of corner
permutations instead of 40,320.

A third symmetry, the 120-degree turn about the URF-DBL diagonal, does not
keep the U-D axis; :mod:`solver.api` uses it to look at the cube from three
sides, since a cube that is awkward for the two-phase split along one axis is
often easy along another.

Conjugation here is ``conj(x, s) = S[s] * x * S[s]^-1``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import coords as co
from .cubie import Cube

N_SYM = 16

# Corner/edge numbering as in solver.facelets: URF UFL ULB UBR DFR DLF DBL DRB;
# UR UF UL UB DR DF DL DB FR FL BL BR. Orientation 3 marks a mirrored corner.
S_URF3 = Cube((0, 4, 5, 1, 3, 7, 6, 2), (1, 2, 1, 2, 2, 1, 2, 1),
              (1, 8, 5, 9, 3, 11, 7, 10, 0, 4, 6, 2), (1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1))
_S_F2 = co.to_array(Cube((5, 4, 7, 6, 1, 0, 3, 2), (0,) * 8,
                         (6, 5, 4, 7, 2, 1, 0, 3, 9, 8, 11, 10), (0,) * 12))
_S_U4 = co.to_array(Cube((3, 0, 1, 2, 7, 4, 5, 6), (0,) * 8,
                         (3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10), (0,) * 8 + (1,) * 4))
_S_LR2 = co.to_array(Cube((1, 0, 3, 2, 5, 4, 7, 6), (3,) * 8,
                          (2, 1, 0, 3, 6, 5, 4, 7, 9, 8, 11, 10), (0,) * 12))


def _turned_move_map(r: int) -> list[int]:
    """Move m of the cube turned r times about the URF-DBL diagonal -> the
    move of the cube itself."""
    u = Cube()
    for _ in range(r):
        u = u * S_URF3
    ui = u.inverse()
    index = {c: k for k, c in enumerate(co.MOVE_CUBES)}
    return [index[ui * mc * u] for mc in co.MOVE_CUBES]


DIAGONAL_TURNS = (Cube(), S_URF3, S_URF3 * S_URF3)
"""The cube turned 0, 1 and 2 times about the URF-DBL diagonal: each puts
another axis where the two-phase split wants U-D (searches look from all three)."""
DIAGONAL_MOVE_MAPS = tuple(_turned_move_map(r) for r in range(3))
"""For each of :data:`DIAGONAL_TURNS`: a move of the turned cube -> the same
move named on the cube itself."""


def _mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a * b`` in plain Python: run at import, where the compiled code
    would cost a numba start-up that importing the solver should not pay."""
    out = np.empty(co.CUBE_LEN, dtype=np.int64)
    co.multiply.py_func(a, b, out)
    return out


def _symmetries() -> np.ndarray:
    """S[8*f2 + 2*u4 + lr2] = S_F2^f2 * S_U4^u4 * S_LR2^lr2."""
    out = np.empty((N_SYM, co.CUBE_LEN), dtype=np.int64)
    for f2 in range(2):
        for u4 in range(4):
            for lr2 in range(2):
                c = co.identity.py_func()
                for factor, times in ((_S_F2, f2), (_S_U4, u4), (_S_LR2, lr2)):
                    for _ in range(times):
                        c = _mul(c, factor)
                out[8 * f2 + 2 * u4 + lr2] = c
    return out


SYMS = _symmetries()
_ID = co.identity.py_func()
SYM_INV = np.array([next(t for t in range(N_SYM) if np.array_equal(_mul(SYMS[s], SYMS[t]), _ID))
                    for s in range(N_SYM)], dtype=np.int64)


@njit(cache=True)
def conj(x, s, syms, sym_inv, tmp, out):
    """out = S[s] * x * S[s]^-1."""
    co.multiply(syms[s], x, tmp)
    co.multiply(tmp, syms[sym_inv[s]], out)


@njit(cache=True)
def build_twist_conj(syms, sym_inv):
    table = np.empty((co.N_TWIST, N_SYM), dtype=np.uint16)
    a = co.identity()
    tmp = np.empty(co.CUBE_LEN, dtype=np.int64)
    out = np.empty(co.CUBE_LEN, dtype=np.int64)
    for t in range(co.N_TWIST):
        co.set_twist(a, t)
        for s in range(N_SYM):
            conj(a, s, syms, sym_inv, tmp, out)
            table[t, s] = co.get_twist(out)
    return table


@njit(cache=True)
def build_ud_edges_conj(syms, sym_inv):
    table = np.empty((co.N_PERM8, N_SYM), dtype=np.uint16)
    a = co.identity()
    tmp = np.empty(co.CUBE_LEN, dtype=np.int64)
    out = np.empty(co.CUBE_LEN, dtype=np.int64)
    for e in range(co.N_PERM8):
        co.set_ud_edges(a, e)
        for s in range(N_SYM):
            conj(a, s, syms, sym_inv, tmp, out)
            table[e, s] = co.get_ud_edges(out)
    return table


@njit(cache=True)
def build_flipslice_classes(syms, sym_inv):
    """Classes of flipslice = slice * 2048 + flip under the 16 symmetries.

    Returns (class of each flipslice, a symmetry s with conj(x, s) = the
    class representative, the representatives, and per class the bit mask of
    symmetries that fix the representative).
    """
    n = co.N_SLICE * co.N_FLIP
    classidx = np.full(n, 0xFFFF, dtype=np.uint16)
    sym = np.zeros(n, dtype=np.uint8)
    rep = np.empty(n // 8, dtype=np.uint32)
    stab = np.zeros(n // 8, dtype=np.uint16)
    a = co.identity()
    tmp = np.empty(co.CUBE_LEN, dtype=np.int64)
    out = np.empty(co.CUBE_LEN, dtype=np.int64)
    count = 0
    for sl in range(co.N_SLICE):
        a[16:28] = np.arange(12)
        co.set_slice_sorted(a, 24 * sl)
        for fl in range(co.N_FLIP):
            fs = sl * co.N_FLIP + fl
            if classidx[fs] != 0xFFFF:
                continue
            co.set_flip(a, fl)
            rep[count] = fs
            for s in range(N_SYM):
                conj(a, s, syms, sym_inv, tmp, out)
                y = (co.get_slice_sorted(out) // 24) * co.N_FLIP + co.get_flip(out)
                if y == fs:
                    stab[count] |= 1 << s
                if classidx[y] == 0xFFFF:
                    classidx[y] = count
                    sym[y] = sym_inv[s]
            count += 1
    return classidx, sym, rep[:count].copy(), stab[:count].copy()


@njit(cache=True)
def build_corner_classes(syms, sym_inv):
    n = co.N_PERM8
    classidx = np.full(n, 0xFFFF, dtype=np.uint16)
    sym = np.zeros(n, dtype=np.uint8)
    rep = np.empty(n, dtype=np.uint16)
    stab = np.zeros(n, dtype=np.uint16)
    a = co.identity()
    tmp = np.empty(co.CUBE_LEN, dtype=np.int64)
    out = np.empty(co.CUBE_LEN, dtype=np.int64)
    count = 0
    for c in range(n):
        if classidx[c] != 0xFFFF:
            continue
        co.set_corners(a, c)
        rep[count] = c
        for s in range(N_SYM):
            conj(a, s, syms, sym_inv, tmp, out)
            y = co.get_corners(out)
            if y == c:
                stab[count] |= 1 << s
            if classidx[y] == 0xFFFF:
                classidx[y] = count
                sym[y] = sym_inv[s]
        count += 1
    return classidx, sym, rep[:count].copy(), stab[:count].copy()
