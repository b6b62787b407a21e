"""The most likely *valid* cube, given a cost for every sticker and colour.

A cube is 8 corner slots each holding one of 8 corner pieces in one of 3
twists, and 12 edge slots each holding one of 12 edges in one of 2 flips,
every piece exactly once, twists summing to 0 mod 3, flips to 0 mod 2, and
corner and edge permutations of equal parity. Exactly these assignments
are the solvable cubes, so a dynamic programme over "which pieces are used
so far" (2^8 and 2^12 states), carrying the running twist/flip sum and the
permutation parity, finds the cheapest solvable cube exactly.

Running it forwards and backwards also gives, for every slot and every
(piece, orientation), the cost of the best solvable cube that uses it: the
"min-marginal". From those, each sticker's cost of being any other colour
follows, which is what confidence is made of.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from solver.facelets import CORNER_COLORS, CORNER_FACELETS, EDGE_COLORS, EDGE_FACELETS, FACES

INF = 1e30

# For slot s, piece p, orientation o: the face index shown at each of the
# slot's stickers (same rule as solver.Cube.to_facelets).
_CF = np.array(CORNER_FACELETS, dtype=np.int64)  # (8, 3)
_EF = np.array(EDGE_FACELETS, dtype=np.int64)  # (12, 2)


def _colour_table(colours: Sequence[Sequence[str]], k: int) -> np.ndarray:
    """table[p, o, j] = face index on the slot's j-th sticker."""
    n = len(colours)
    t = np.zeros((n, k, k), dtype=np.int64)
    for p in range(n):
        for o in range(k):
            for m in range(k):
                t[p, o, (m + o) % k] = FACES.index(colours[p][m])
    return t


_CCOL = _colour_table(CORNER_COLORS, 3)  # (8, 3, 3)
_ECOL = _colour_table(EDGE_COLORS, 2)  # (12, 2, 2)


def choice_costs(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cost (54, 6) -> corner costs (8 slots, 8 pieces, 3) and edge costs (12, 12, 2)."""
    # cost[_CF[s, j], _CCOL[p, o, j]] summed over j
    cc = cost[_CF[:, None, None, :], _CCOL[None, :, :, :]].sum(axis=-1)
    ec = cost[_EF[:, None, None, :], _ECOL[None, :, :, :]].sum(axis=-1)
    return cc, ec


@njit(cache=True)
def _popcount(x: int) -> int:
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


_POP = np.array([bin(m).count("1") for m in range(1 << 12)], dtype=np.int64)


@njit(cache=True)
def _forward(cost: np.ndarray, k: int, pop: np.ndarray) -> np.ndarray:
    n = cost.shape[0]
    full = 1 << n
    f = np.full((full, k, 2), INF)
    f[0, 0, 0] = 0.0
    for mask in range(1, full):
        s = pop[mask] - 1
        for p in range(n):
            bit = 1 << p
            if not mask & bit:
                continue
            prev = mask ^ bit
            inv = pop[prev >> (p + 1)] & 1
            for o in range(k):
                c = cost[s, p, o]
                for t in range(k):
                    pt = t - o
                    if pt < 0:
                        pt += k
                    w0 = f[prev, pt, inv] + c
                    w1 = f[prev, pt, 1 - inv] + c
                    if w0 < f[mask, t, 0]:
                        f[mask, t, 0] = w0
                    if w1 < f[mask, t, 1]:
                        f[mask, t, 1] = w1
    return f


@njit(cache=True)
def _backward(cost: np.ndarray, k: int, term: np.ndarray, pop: np.ndarray) -> np.ndarray:
    n = cost.shape[0]
    full = 1 << n
    b = np.full((full, k, 2), INF)
    b[full - 1, 0, 0] = term[0]
    b[full - 1, 0, 1] = term[1]
    for mask in range(full - 2, -1, -1):
        s = pop[mask]
        for p in range(n):
            bit = 1 << p
            if mask & bit:
                continue
            inv = pop[mask >> (p + 1)] & 1
            nm = mask | bit
            for o in range(k):
                c = cost[s, p, o]
                for t in range(k):
                    nt = t + o
                    if nt >= k:
                        nt -= k
                    w0 = c + b[nm, nt, inv]
                    w1 = c + b[nm, nt, 1 - inv]
                    if w0 < b[mask, t, 0]:
                        b[mask, t, 0] = w0
                    if w1 < b[mask, t, 1]:
                        b[mask, t, 1] = w1
    return b


@njit(cache=True)
def _marginals(cost: np.ndarray, k: int, f: np.ndarray, b: np.ndarray, pop: np.ndarray) -> np.ndarray:
    n = cost.shape[0]
    full = 1 << n
    m = np.full((n, n, k), INF)
    for mask in range(full - 1):
        s = pop[mask]
        for p in range(n):
            bit = 1 << p
            if mask & bit:
                continue
            inv = pop[mask >> (p + 1)] & 1
            nm = mask | bit
            for o in range(k):
                best = INF
                for t in range(k):
                    nt = t + o
                    if nt >= k:
                        nt -= k
                    w = f[mask, t, 0] + b[nm, nt, inv]
                    if w < best:
                        best = w
                    w = f[mask, t, 1] + b[nm, nt, 1 - inv]
                    if w < best:
                        best = w
                w = best + cost[s, p, o]
                if w < m[s, p, o]:
                    m[s, p, o] = w
    return m


@njit(cache=True)
def _best_path(cost: np.ndarray, k: int, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = cost.shape[0]
    mask, t, q = 0, 0, 0
    pieces = np.zeros(n, dtype=np.int64)
    oris = np.zeros(n, dtype=np.int64)
    for s in range(n):
        best = INF
        bp, bo = -1, -1
        for p in range(n):
            bit = 1 << p
            if mask & bit:
                continue
            inv = _popcount(mask >> (p + 1)) & 1
            for o in range(k):
                w = cost[s, p, o] + b[mask | bit, (t + o) % k, q ^ inv]
                if w < best:
                    best, bp, bo = w, p, o
        pieces[s] = bp
        oris[s] = bo
        q ^= _popcount(mask >> (bp + 1)) & 1
        mask |= 1 << bp
        t = (t + bo) % k
    return pieces, oris


def _parity(perm: np.ndarray) -> int:
    n = len(perm)
    return sum(1 for i in range(n) for j in range(i + 1, n) if perm[i] > perm[j]) & 1


class Solution:
    """The best solvable cube and the min-marginal colour costs."""

    def __init__(self, cp: np.ndarray, co: np.ndarray, ep: np.ndarray, eo: np.ndarray, total: float,
                 sticker_marginal: np.ndarray | None, passes: tuple | None = None, shift: float = 0.0):
        self.cp, self.co, self.ep, self.eo = cp, co, ep, eo
        self.total = total
        self.sticker_marginal = sticker_marginal
        """(54, 6): the cost of the best solvable cube with that sticker that
        colour; None when :func:`best_cube` was asked for no marginals."""
        self._passes = passes
        """What :func:`best_cube` computed on the way (the choice costs, the
        corners' forward and the edges' backward pass), which the marginals
        reuse."""
        self._shift = shift

    def shifted(self, amount: float) -> Solution:
        """The same cube for costs with ``amount`` added to every cube's
        total (a constant per sticker, times 54)."""
        marg = None if self.sticker_marginal is None else self.sticker_marginal + amount
        return Solution(self.cp, self.co, self.ep, self.eo, self.total + amount, marg, self._passes,
                        self._shift + amount)

    def with_marginals(self) -> Solution:
        """The marginals too, computed from the passes already made (two of
        the matcher's five); no-op when they are there."""
        if self.sticker_marginal is None:
            if self._passes is None:
                raise ValueError("no passes kept to compute the marginals from")
            cc, ec, fc, be, centre_cost = self._passes
            self.sticker_marginal = _sticker_marginal_costs(cc, ec, fc, be, centre_cost,
                                                            self.total - self._shift) + self._shift
        return self

    @property
    def marginals(self) -> np.ndarray:
        """:attr:`sticker_marginal`, which must have been computed."""
        if self.sticker_marginal is None:
            raise ValueError("best_cube(..., marginals=False) computed no marginals")
        return self.sticker_marginal

    def facelets(self) -> str:
        f = ["?"] * 54
        for s in range(8):
            for j in range(3):
                f[CORNER_FACELETS[s][j]] = FACES[_CCOL[self.cp[s], self.co[s], j]]
        for s in range(12):
            for j in range(2):
                f[EDGE_FACELETS[s][j]] = FACES[_ECOL[self.ep[s], self.eo[s], j]]
        for c in range(6):
            f[9 * c + 4] = FACES[c]
        return "".join(f)


def best_cube(cost: np.ndarray, marginals: bool = True) -> Solution:
    """Exact minimum-cost solvable cube for a (54, 6) sticker/colour cost;
    with ``marginals`` also every sticker's cost of each colour."""
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    cc, ec = choice_costs(cost)
    fc = _forward(cc, 3, _POP)
    best_c = fc[255, 0, :].copy()
    be = _backward(ec, 2, best_c, _POP)
    centre_cost = sum(cost[9 * c + 4, c] for c in range(6))
    total = be[0, 0, 0] + centre_cost
    ep, eo = _best_path(ec, 2, be)
    # the corners follow the parity the edges' best path chose
    term = np.array([INF, INF])
    term[_parity(ep)] = 0.0
    cp, co = _best_path(cc, 3, _backward(cc, 3, term, _POP))
    sol = Solution(cp, co, ep, eo, float(total), None, (cc, ec, fc, be, centre_cost))
    return sol.with_marginals() if marginals else sol


def _sticker_marginal_costs(cc: np.ndarray, ec: np.ndarray, fc: np.ndarray, be: np.ndarray,
                            centre_cost: float, total: float) -> np.ndarray:
    """(54, 6) every sticker's cheapest solvable cube showing each colour,
    from the corners' forward and the edges' backward pass already made."""
    fe = _forward(ec, 2, _POP)
    bc = _backward(cc, 3, fe[4095, 0, :].copy(), _POP)
    mc = _marginals(cc, 3, fc, bc, _POP)
    me = _marginals(ec, 2, fe, be, _POP)
    sm = np.full((54, 6), INF)
    for c in range(6):
        sm[9 * c + 4, c] = total
    _sticker_marginals(mc, _CF, _CCOL, centre_cost, sm)
    _sticker_marginals(me, _EF, _ECOL, centre_cost, sm)
    return sm


@njit(cache=True)
def _sticker_marginals(m: np.ndarray, stickers: np.ndarray, colours: np.ndarray, extra: float,
                       out: np.ndarray) -> None:
    """Each sticker's cheapest choice showing each colour: sticker j of slot s
    under choice (p, o) shows colour ``colours[p, o, j]``; written into ``out``."""
    n, _, k = m.shape
    for s in range(n):
        for j in range(k):
            row = stickers[s, j]
            for c in range(out.shape[1]):
                out[row, c] = INF
            for p in range(n):
                for o in range(k):
                    c = colours[p, o, j]
                    w = m[s, p, o] + extra
                    if w < out[row, c]:
                        out[row, c] = w
