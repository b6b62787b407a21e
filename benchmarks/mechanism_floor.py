"""How cheaply *any* planner could solve a random cube on a mechanism: a
counting floor.

A solve on a mechanism is a sequence of solver moves (face turns) together
with the robot moves that bring each face to where the rig can turn it.
Every one of the cube's 43,252,003,274,489,856,000 positions needs some
such sequence, and distinct positions need distinct sequences. So if there
are only N(C) sequences of price at most C, at most N(C) positions can be
solved for C or less, and for a position drawn at random

    P(cheapest solve > C) >= 1 - N(C) / positions,

which, summed over C, is a floor on the average cheapest solve that no
planner and no search can beat. It says nothing about a given cube, and it
is loose (many sequences make the same position), but it shows how far a
figure is from what is possible at all. In plain face turns, counting the
sequences with no face twice running and opposite faces in one order, the
same argument gives an average of at least about 17.5, close to the true
average of about 17.7 that Rokicki et al. computed over every position.
This count is looser: it keeps both orders of two opposite faces, since on
a rig they are not the same price.

Counted here, per mechanism: sequences of solver moves, never the same face
twice running, each paired with a way of making it, where each move is made
from the state the last one left by the cheapest robot moves to each state
the rig may end in (a shortest path over the mechanism's graph, as the
planner does, priced in robot moves or in planned seconds). Every position
with a solve of price C is counted at least once (its cheapest solve is
among these pairs), so the count is an upper bound on the positions and the
floor is a true floor.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from robot.rig.mechanisms import Mechanism
from robot.rig.mechanisms.automaton import free_costs

POSITIONS = 43_252_003_274_489_856_000
"""Positions of the 3x3x3 cube, orientation aside."""


def _outcomes(mech: Mechanism, source: int, seconds: bool) -> dict[tuple[int, int], float]:
    """``{(solver move, state after it): least price}`` from graph state ``source``:
    the cheapest robot moves that turn no layer, then one layer turn."""
    w, per_second = (0.0, 1.0) if seconds else (1.0, 0.0)
    out: dict[tuple[int, int], float] = {}
    for k, c in free_costs(mech, source, w, per_second).items():
        for _action, after, sec, made in mech.graph.edges[k]:
            if made is not None:
                key = (made.index, after)
                out[key] = min(out.get(key, float("inf")), c + per_second * sec + w)
    return out


def sequence_counts(mech: Mechanism, *, seconds: bool = False, unit: float = 1.0,
                    limit: int = 160) -> np.ndarray:
    """``n[c]``: how many (solver-move sequence, way of making it) pairs, the
    empty one included, cost less than ``(c + 1) * unit`` (robot moves, or
    planned seconds with ``seconds``), for ``c`` below ``limit``. A pair's
    price is rounded down to whole units, so the counts only grow and the
    floor stays a floor."""
    # (graph state, face of the last move, -1 at the start) -> index
    index: dict[tuple[int, int], int] = {(0, -1): 0}
    edges: dict[int, list[tuple[int, int]]] = defaultdict(list)  # price in units -> [(from, to)]
    todo = [(0, -1)]
    memo: dict[int, dict[tuple[int, int], float]] = {}
    while todo:
        s, lf = todo.pop()
        if s not in memo:
            memo[s] = _outcomes(mech, s, seconds)
        for (m, t), price in memo[s].items():
            if m // 3 == lf:
                continue
            key = (t, m // 3)
            if key not in index:
                index[key] = len(index)
                todo.append(key)
            d = int(price / unit + 1e-9)
            if d < 1:
                raise ValueError(f"unit {unit} is more than a move's price {price}: choose a smaller one")
            edges[d].append((index[(s, lf)], index[key]))
    width = len(index)
    # float counts: they pass 10**19 only past the point that matters, and a
    # float's relative error (1e-16) cannot move the floor by a unit
    n = np.zeros((limit, width))
    n[0, 0] = 1.0
    arrays = {d: (np.array([a for a, _ in e]), np.array([b for _, b in e])) for d, e in edges.items()}
    for c in range(limit):
        for d, (src, dst) in arrays.items():
            if c + d < limit:
                np.add.at(n[c + d], dst, n[c, src])
    return np.cumsum(n.sum(axis=1))


def floor(mech: Mechanism, *, seconds: bool = False, unit: float = 1.0, limit: int = 160) -> float:
    """The least average price, over random positions, of any solve on
    ``mech``: robot moves (``seconds`` False) or planned seconds."""
    counts = sequence_counts(mech, seconds=seconds, unit=unit, limit=limit)
    if counts[-1] < POSITIONS:
        raise ValueError(f"limit {limit} too low: only {counts[-1]:.3g} sequences counted")
    below = np.clip(1.0 - counts / POSITIONS, 0.0, 1.0)
    # with k = price // unit: P(k > c) >= below[c], and the average of k is
    # the sum over c >= 0 of P(k > c)
    return float(unit * below.sum())
