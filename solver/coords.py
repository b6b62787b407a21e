"""Cubie arrays and the coordinates the search runs on, compiled with numba.

The search never touches :class:`~solver.cubie.Cube` objects: they are far too
slow for millions of nodes. A cube here is a flat ``int64`` array of 40
numbers, ``cp[0:8] co[8:16] ep[16:28] eo[28:40]``, and each coordinate is a
small integer that identifies one aspect of the state (the corner twist, the
edge flip, where the four middle-layer edges are, ...). Moves act on
coordinates through tables built from these functions in
:mod:`solver.tables`.

Corner orientations 3..5 mark a mirrored corner; they only occur inside the
reflecting symmetries of :mod:`solver.symmetry`, never in a real cube, and the
multiplication rule below keeps them consistent.

Every coordinate is 0 for the solved cube.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cubie import MOVE_CUBES, Cube

N_TWIST = 2187  # 3^7 corner orientations
N_FLIP = 2048  # 2^11 edge orientations
N_SLICE = 495  # C(12, 4) places for the four middle-layer edges
N_SLICE_SORTED = 11880  # 495 places x 24 orders
N_PERM8 = 40320  # 8! corner permutations, or orders of the 8 U/D edges in phase 2

CUBE_LEN = 40

_BINOM = np.zeros((13, 13), dtype=np.int64)
for _n in range(13):
    _BINOM[_n, 0] = 1
    for _k in range(1, _n + 1):
        _BINOM[_n, _k] = _BINOM[_n - 1, _k - 1] + _BINOM[_n - 1, _k]
_FACT = np.array([1, 1, 2, 6, 24, 120, 720, 5040, 40320], dtype=np.int64)


def to_array(cube: Cube) -> np.ndarray:
    return np.array(cube.cp + cube.co + cube.ep + cube.eo, dtype=np.int64)


MOVES = np.stack([to_array(c) for c in MOVE_CUBES])
"""The 18 move cubes as arrays, in move-index order (U U2 U' R ...)."""


@njit(cache=True)
def multiply(a, b, out):
    """``out = a * b`` (first a, then b), mirrored corners included."""
    for i in range(8):
        j = b[i]
        out[i] = a[j]
        oa = a[8 + j]
        ob = b[8 + i]
        if oa < 3 and ob < 3:
            o = (oa + ob) % 3
        elif oa < 3:
            o = oa + ob
            if o >= 6:
                o -= 3
        elif ob < 3:
            o = oa - ob
            if o < 3:
                o += 3
        else:
            o = oa - ob
            if o < 0:
                o += 3
        out[8 + i] = o
    for i in range(12):
        j = b[16 + i]
        out[16 + i] = a[16 + j]
        out[28 + i] = (a[28 + j] + b[28 + i]) % 2


@njit(cache=True)
def identity():
    a = np.zeros(CUBE_LEN, dtype=np.int64)
    for i in range(8):
        a[i] = i
    for i in range(12):
        a[16 + i] = i
    return a


# -- orientation coordinates ---------------------------------------------
@njit(cache=True)
def get_twist(a):
    t = 0
    for i in range(7):
        t = 3 * t + a[8 + i]
    return t


@njit(cache=True)
def set_twist(a, t):
    s = 0
    for i in range(6, -1, -1):
        a[8 + i] = t % 3
        s += t % 3
        t //= 3
    a[15] = (-s) % 3


@njit(cache=True)
def get_flip(a):
    f = 0
    for i in range(11):
        f = 2 * f + a[28 + i]
    return f


@njit(cache=True)
def set_flip(a, f):
    s = 0
    for i in range(10, -1, -1):
        a[28 + i] = f % 2
        s += f % 2
        f //= 2
    a[39] = s % 2


# -- permutation ranks ---------------------------------------------------
@njit(cache=True)
def perm_rank(p, n):
    """Lehmer rank of p[0:n] (values 0..n-1); the identity ranks 0."""
    r = 0
    for i in range(n):
        smaller = 0
        for j in range(i + 1, n):
            if p[j] < p[i]:
                smaller += 1
        r += smaller * _FACT[n - 1 - i]
    return r


@njit(cache=True)
def perm_unrank(r, n, out):
    used = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        f = _FACT[n - 1 - i]
        k = r // f
        r %= f
        for v in range(n):
            if not used[v]:
                if k == 0:
                    out[i] = v
                    used[v] = True
                    break
                k -= 1


@njit(cache=True)
def get_corners(a):
    return perm_rank(a[0:8], 8)


@njit(cache=True)
def set_corners(a, c):
    perm_unrank(c, 8, a[0:8])


@njit(cache=True)
def get_ud_edges(a):
    """Order of the 8 U/D edges; meaningful once they are all in U/D slots."""
    return perm_rank(a[16:24], 8)


@njit(cache=True)
def set_ud_edges(a, c):
    perm_unrank(c, 8, a[16:24])
    for i in range(8, 12):
        a[16 + i] = i


# -- the middle-layer (UD-slice) edges FR FL BL BR ------------------------
@njit(cache=True)
def get_slice_sorted(a):
    """Where the four slice edges are (0..494) times 24, plus their order.

    The places are written in the combinatorial number system, counted from
    slot 11 downwards, so the solved places (slots 8..11) give 0.
    """
    place = 0
    found = 0
    order = np.empty(4, dtype=np.int64)
    for j in range(11, -1, -1):
        e = a[16 + j]
        if e >= 8:
            found += 1
            place += _BINOM[11 - j, found]
            order[4 - found] = e - 8
    return 24 * place + perm_rank(order, 4)


@njit(cache=True)
def set_slice_sorted(a, c):
    place = c // 24
    order = np.empty(4, dtype=np.int64)
    perm_unrank(c % 24, 4, order)
    slot_taken = np.zeros(12, dtype=np.bool_)
    slots = np.empty(4, dtype=np.int64)
    for k in range(4, 0, -1):
        q = k - 1
        while _BINOM[q + 1, k] <= place:
            q += 1
        place -= _BINOM[q, k]
        slots[k - 1] = 11 - q  # k-th found, counting from slot 11 down
    # slots[3] is the lowest slot; order runs from the lowest slot upwards
    for i in range(4):
        s = slots[3 - i]
        a[16 + s] = 8 + order[i]
        slot_taken[s] = True
    other = 0
    for s in range(12):
        if not slot_taken[s]:
            a[16 + s] = other
            other += 1
