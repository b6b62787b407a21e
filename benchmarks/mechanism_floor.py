"""How cheaply *any* planner could solve a random cube on a mechanism: a
counting floor.

A solve on a mechanism is a sequence of solver moves (face turns) together
with the robot moves that bring each face to where the rig can turn it.
Every one of the cube's 43,252,003,274,489,856,000 positions needs some
such sequence, and distinct positions need distinct sequences. So if only
N(C) sequences can be made for a price of at most C, at most N(C)
positions can be solved for C or less, and for a position drawn at random

    P(cheapest solve > C) >= 1 - N(C) / positions,

which, summed over C, is a floor on the average cheapest solve that no
planner and no search can beat. It says nothing about a given cube.

What is counted. Any solve, read as the rig makes it, splits into blocks:
the robot moves up to and including a run of layer turns that all lie on
one axis (U and D, say). A block's effect on the cube is one of the 15
canonical moves of its axis (U, U2, U', D..., U D', ...), or nothing. A
block that does nothing only moves the rig between states, so it counts
as a move that turns nothing; taking those out and joining the blocks that
meet on one axis, every solve is a sequence of canonical moves, never one
axis twice running (the solver's own form), and distinct positions give
distinct sequences. Each such sequence is counted once, at its *least*
price: the cheapest of all the ways of making it from the rig's start,
found by shortest paths over the mechanism's graph (runs of any length, a
face turned twice or turned back included), priced in robot moves or in
planned seconds. So the count bounds the positions, and the floor is a
floor, with nothing assumed about how a solve may look;
tests/test_mechanism_floor.py checks it against the positions the rig
really reaches when every robot move is walked.

The count follows, for each sequence, its price vector: the least cost of
leaving the rig in each state. Vectors that differ only by a constant
behave alike, and an entry that another entry can reach by robot moves
that turn nothing, for no more than the difference, never matters: it is
dropped. That still leaves too many vectors to follow exactly, so entries
more than ``cap`` units above the least are lowered to ``cap`` above it.
Lowering prices only makes more sequences cheap, so the floor stays a
floor, a little lower than the exact one; a larger cap gives a higher floor
for more time (flipper, robot moves: cap 0 70.1, 1 80.8, 2 83.3, 3 84.0).
For plain face turns the same count (each sequence at its length) gives an
average of about 17.5 against the true 17.7 that Rokicki et al. computed
over every position: what a count leaves out, the cube's own relations
between sequences, is worth about 1 % there.

Until 2026-11-26 this counted every pair of a sequence and a way of making
it, much looser: a flipper floor of 63.0 robot moves.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from robot.rig.mechanisms import Mechanism
from robot.rig.mechanisms.automaton import free_costs

POSITIONS = 43_252_003_274_489_856_000
"""Positions of the 3x3x3 cube, orientation aside."""

BIG = 1 << 20
"""A price that stands for 'cannot be made'."""
ABSENT = 127
"""The same in a stored price vector (int8)."""
MAX_CAP = 100
INF = float("inf")


def _min_plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``out[i, j] = min over k of a[i, k] + b[k, j]``, over the k that can matter."""
    out = np.full((a.shape[0], b.shape[1]), INF)
    for k in np.flatnonzero(np.isfinite(a).any(axis=0) & np.isfinite(b).any(axis=1)):
        rows = np.flatnonzero(np.isfinite(a[:, k]))
        out[rows] = np.minimum(out[rows], a[rows, k, None] + b[None, k, :])
    return out


def _graph_prices(mech: Mechanism, seconds: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(free, turn)`` over the mechanism's graph states: ``free[s, t]`` the
    least price from s to t by moves that turn no layer, ``turn[m, s, t]``
    the price of the one robot move from s to t that makes solver move m."""
    g = mech.graph
    w, per_second = (0.0, 1.0) if seconds else (1.0, 0.0)
    n = len(g.states)
    free = np.full((n, n), INF)
    turn = np.full((18, n, n), INF)
    for k in range(n):
        for t, c in free_costs(mech, k, w, per_second).items():
            free[k, t] = c
        for _action, after, sec, made in g.edges[k]:
            if made is not None:
                turn[made.index, k, after] = min(turn[made.index, k, after], per_second * sec + w)
    return free, turn


def _axis_runs(axis: int, free: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """``r[4 * a + b][s, t]``: the least price from state ``s`` of robot
    moves ending in a layer turn, every turn on ``axis``, that leaves
    state ``t`` and turns the axis's first face ``a`` quarters and its
    second ``b`` (mod 4), over runs of any length."""
    made = [(3 * f + q, (q + 1) * (4 if f == axis else 1)) for f in (axis, axis + 3) for q in range(3)]
    step = {m: _min_plus(free, turn[m]) for m, _ in made}
    n = free.shape[0]
    r = np.full((16, n, n), INF)
    for m, d in made:
        r[d] = np.minimum(r[d], step[m])
    while True:
        new = r.copy()
        for net in range(16):
            if not np.isfinite(r[net]).any():
                continue
            for m, d in made:
                to = 4 * ((net // 4 + d // 4) % 4) + (net % 4 + d % 4) % 4
                new[to] = np.minimum(new[to], _min_plus(r[net], step[m]))
        if (new >= r).all():
            return r
        r = new


def _with_identity_runs(free: np.ndarray, turn: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """``free`` widened by the runs that leave the cube as it was (they only
    move the rig between states), closed again, until nothing gets cheaper;
    with each axis's runs over the final ``free``."""
    while True:
        runs = [_axis_runs(axis, free, turn) for axis in range(3)]
        better = np.minimum(free, np.minimum.reduce([r[0] for r in runs]))
        if (better >= free).all():
            return free, runs
        free = better
        for _ in range(len(free)):
            closed = np.minimum(free, _min_plus(free, free))
            if (closed >= free).all():
                break
            free = closed


def _rows(runs: list[np.ndarray]) -> list[int]:
    """The graph states a block can leave the rig in, reached from its start
    (state 0, first)."""
    rows, order = {0}, [0]
    for s in order:  # grows while walked
        for r in runs:
            for net in range(1, 16):
                for t in np.flatnonzero(np.isfinite(r[net][s])).tolist():
                    if t not in rows:
                        rows.add(t)
                        order.append(t)
    return order


class _Rig:
    """The mechanism seen from the turns. A solve splits into *blocks*: the
    robot moves up to and including a run of layer turns all on one axis.
    For each axis and each net effect of such a run on its two faces (the
    15 canonical moves of that axis), ``blocks`` holds the least price from
    each state the rig can be in after a block to each, in whole units
    (rounded down); ``free`` the price of going between those states by
    moves that change nothing on the cube (rounded up)."""

    def __init__(self, mech: Mechanism, seconds: bool, unit: float):
        free, turn = _graph_prices(mech, seconds)
        free, runs = _with_identity_runs(free, turn)
        idx = np.array(_rows(runs))
        self.blocks: list[tuple[int, np.ndarray, np.ndarray]] = []
        for axis, r in enumerate(runs):
            for net in range(1, 16):
                m = r[net][np.ix_(idx, idx)]
                if (np.isfinite(m) & (m < unit - 1e-9)).any():
                    raise ValueError(f"unit {unit} is more than a move's price: choose a smaller one")
                units = np.where(np.isfinite(m), np.floor(m / unit + 1e-9), BIG).astype(np.int64)
                self.blocks.append((axis, np.flatnonzero((units < BIG).any(axis=0)), units))
        f = free[np.ix_(idx, idx)]
        self.free = np.where(np.isfinite(f), np.ceil(f / unit - 1e-9), BIG).astype(np.int64)
        np.fill_diagonal(self.free, BIG)


def _unique_rows(vecs: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``vecs`` and where each row is among them; rows
    read as numbers in base ``cap + 2`` where they fit in 62 bits (sorting
    numbers is far faster than sorting rows)."""
    base = cap + 2
    if vecs.shape[1] * math.log2(base) > 62:
        uniq, inv = np.unique(vecs, axis=0, return_inverse=True)
        return uniq, inv.reshape(-1)
    digits = np.where(vecs == ABSENT, cap + 1, vecs).astype(np.int64)
    keys = digits @ (base ** np.arange(vecs.shape[1], dtype=np.int64))
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    return vecs[first], inv.reshape(-1)


def _widen(vecs: np.ndarray) -> np.ndarray:
    """Stored vectors (int8) back to prices to add to."""
    out = vecs.astype(np.int64)
    out[vecs == ABSENT] = BIG
    return out


def _after_block(
    rig: _Rig, vecs: np.ndarray, rows: tuple[int, ...], dst_rows: np.ndarray, matrix: np.ndarray, cap: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The price vectors ``vecs`` (over ``rows``) after one more block priced
    ``matrix``: which of them can make it, the least price each adds, and
    the new vectors over ``dst_rows``, shifted to start at 0, entries that
    another reaches for the difference dropped (ABSENT), the rest lowered to
    ``cap``; int8, for finding equal vectors fast."""
    new = (vecs[:, :, None] + matrix[np.ix_(np.array(rows), dst_rows)][None, :, :]).min(axis=1)
    least = new.min(axis=1)
    ok = least < BIG
    new, least = new[ok] - least[ok, None], least[ok]
    free = rig.free[np.ix_(dst_rows, dst_rows)]
    reach = (new[:, :, None] + free[None, :, :]).min(axis=1)
    kept = np.where((new >= reach) | (new >= BIG // 2), ABSENT, np.minimum(new, cap)).astype(np.int8)
    return ok, least, kept


def _transitions(rig: _Rig, cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Every price vector a canonical sequence can leave, numbered (0 the
    start's), and every block between them: ``(from, to, price added)``.
    A vector is known by the axis of the last block (the next must differ),
    the rows it is over, and its entries."""
    Key = tuple[int, tuple[int, ...]]
    start: Key = (-1, (0,))
    index: dict[tuple[int, tuple[int, ...], bytes], int] = {(*start, np.zeros(1, dtype=np.int8).tobytes()): 0}
    frontier: dict[Key, tuple[np.ndarray, np.ndarray]] = {
        start: (np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64))
    }
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    add: list[np.ndarray] = []
    while frontier:
        grown: dict[Key, tuple[list[np.ndarray], list[int]]] = {}
        for (last, rows), (vecs, ids) in frontier.items():
            for axis, dst_rows, matrix in rig.blocks:
                if axis == last:
                    continue
                ok, least, new = _after_block(rig, vecs, rows, dst_rows, matrix, cap)
                if not ok.any():
                    continue
                key: Key = (axis, tuple(dst_rows.tolist()))
                uniq, inv = _unique_rows(new, cap)
                found = np.empty(len(uniq), dtype=np.int64)
                for i, v in enumerate(uniq):
                    k = (key[0], key[1], v.tobytes())
                    n = index.get(k)
                    if n is None:  # a vector not met before: follow it next round
                        n = index[k] = len(index)
                        met, numbers = grown.setdefault(key, ([], []))
                        met.append(v)
                        numbers.append(n)
                    found[i] = n
                src.append(ids[ok])
                dst.append(found[inv])
                add.append(least)
        frontier = {k: (_widen(np.array(v)), np.array(i)) for k, (v, i) in grown.items()}
    return np.concatenate(src), np.concatenate(dst), np.concatenate(add), len(index)


@functools.lru_cache(maxsize=4)
def _priced_transitions(mech: Mechanism, seconds: bool, unit: float,
                        cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`_transitions` of the mechanism so priced, kept for the next
    call: they do not depend on the limit, and they are most of the time
    (seconds for a two-gripper), so a floor and its counts to another limit
    (the tests ask both) count them once. Read only."""
    return _transitions(_Rig(mech, seconds, unit), cap)


def least_price_counts(
    mech: Mechanism, *, seconds: bool = False, unit: float = 1.0, cap: int = 1, limit: int = 160
) -> np.ndarray:
    """``n[c]``: how many canonical face-turn sequences, the empty one
    included, can be made for less than ``(c + 1) * unit`` (robot moves, or
    planned seconds with ``seconds``), for ``c`` below ``limit``; each move's
    price rounded down to whole units and vector entries lowered to ``cap``
    units above the least, so the counts only grow and the floor stays a
    floor."""
    if not 0 <= cap <= MAX_CAP:
        raise ValueError(f"cap {cap} must be 0 to {MAX_CAP}")
    src, dst, add, n = _priced_transitions(mech, seconds, unit, cap)
    # at[c, v]: sequences that leave vector v for a price of c units
    at = np.zeros((limit, n))
    at[0, 0] = 1.0
    by_price = [(int(d), src[add == d], dst[add == d]) for d in np.unique(add) if d < limit]
    for c in range(1, limit):
        for d, s, t in by_price:
            if d <= c:
                at[c] += np.bincount(t, weights=at[c - d, s], minlength=n)
    return np.cumsum(at.sum(axis=1))


def floor(
    mech: Mechanism, *, seconds: bool = False, unit: float = 1.0, cap: int = 1, limit: int = 160
) -> float:
    """The least average price, over random positions, of any solve on
    ``mech``: robot moves (``seconds`` False) or planned seconds."""
    counts = least_price_counts(mech, seconds=seconds, unit=unit, cap=cap, limit=limit)
    if counts[-1] < POSITIONS:
        raise ValueError(f"limit {limit} too low: only {counts[-1]:.3g} sequences counted")
    below = np.clip(1.0 - counts / POSITIONS, 0.0, 1.0)
    # with k = price // unit: P(k > c) >= below[c], and the average of k is
    # the sum over c >= 0 of P(k > c)
    return float(unit * below.sum())
