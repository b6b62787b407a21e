"""A mechanism compiled into a cost automaton for the solver's search.

The search (solver/costsearch.py) knows nothing of flippers or grippers: it
reads numbers. This module makes them: for a mechanism state in which the
rig may stand after a layer turn (or the state it starts in), and for each
of the solver's 18 face moves, every state the rig may end in right after
making that move, each with the least cost of getting there (the moves
that reorient and regrip, then the turn). The cost is planned seconds plus
``move_weight`` per robot move, from the mechanism's own graph
(:attr:`Mechanism.graph`) and timing table, so the automaton's price of a
solution is the least that any way of making it in the order given costs
in that measure: what :func:`~.planner.plan` with the ``weighed``
objective pays for it. Its default puts time first and counts moves only
between equally fast plans, so that plan of the same solution is never
slower than the automaton's cheapest and may have a robot move or two more:
``plan.seconds <= price <= plan.seconds + move_weight * plan.moves``.

An outcome is left out when another outcome of the same move reaches a
state from which the rig can get to the first one's state, by moves that
turn no layer, for no more than the difference: whatever follows can then
be done as cheaply from the other. That keeps a few outcomes per move.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .base import ImpossibleMove, Mechanism, State
from .planner import MOVE_WEIGHT


@dataclass(frozen=True)
class CostAutomaton:
    """``next[s, m, k]``: the k-th state the rig may be in right after making
    solver move m from automaton state s (-1 past the last), ``cost[s, m, k]``
    what that costs; state ``start`` is where the rig starts. ``states[s]`` is
    the mechanism state of automaton state s."""

    states: tuple[State, ...]
    next: np.ndarray
    cost: np.ndarray
    start: int
    move_weight: float


def free_costs(mech: Mechanism, source: int, w: float, per_second: float = 1.0) -> dict[int, float]:
    """Least cost from graph state ``source`` to every state reachable by moves
    that turn no layer, a move costing ``per_second`` times its seconds plus
    ``w`` (``w`` 1 and ``per_second`` 0 count robot moves)."""
    g = mech.graph
    dist = {source: 0.0}
    heap = [(0.0, source)]
    while heap:
        c, k = heapq.heappop(heap)
        if c > dist[k]:
            continue
        for _action, after, seconds, made in g.edges[k]:
            if made is not None:
                continue
            nc = c + per_second * seconds + w
            if nc < dist.get(after, float("inf")):
                dist[after] = nc
                heapq.heappush(heap, (nc, after))
    return dist


def compile_automaton(mech: Mechanism, start: State | None = None,
                      move_weight: float = MOVE_WEIGHT) -> CostAutomaton:
    """The cost automaton of ``mech`` from ``start`` (its own start if None)."""
    return _compile(mech, mech.start() if start is None else start, move_weight)


@lru_cache(maxsize=64)
def _compile(mech: Mechanism, start: State, w: float) -> CostAutomaton:
    g = mech.graph
    if start not in g.number:
        raise ImpossibleMove(f"the {mech.kind} rig cannot reach {mech.describe(start)} from its start")
    free: dict[int, dict[int, float]] = {}

    def reach(k: int) -> dict[int, float]:
        if k not in free:
            free[k] = free_costs(mech, k, w)
        return free[k]

    order = [g.number[start]]
    index = {order[0]: 0}
    rows: list[list[list[tuple[float, int]]]] = []
    i = 0
    while i < len(order):
        src = order[i]
        best: list[dict[int, float]] = [{} for _ in range(18)]
        for u, cu in reach(src).items():
            for _action, after, seconds, made in g.edges[u]:
                if made is None:
                    continue
                c = cu + seconds + w
                m = made.index
                if c < best[m].get(after, float("inf")):
                    best[m][after] = c
        row = []
        for m in range(18):
            outs = sorted((c, after) for after, c in best[m].items())
            kept: list[tuple[float, int]] = []
            for c, after in outs:
                # dominated: an earlier (cheaper) outcome can get here for the difference
                if any(c2 + reach(a2).get(after, float("inf")) <= c + 1e-12 for c2, a2 in kept):
                    continue
                kept.append((c, after))
            for _c, after in kept:
                if after not in index:
                    index[after] = len(order)
                    order.append(after)
            row.append([(c, index[after]) for c, after in kept])
        rows.append(row)
        i += 1
    width = max(1, max(len(outs) for row in rows for outs in row))
    nxt = np.full((len(rows), 18, width), -1, dtype=np.int64)
    cost = np.zeros((len(rows), 18, width), dtype=np.float64)
    for s, row in enumerate(rows):
        for m, outs in enumerate(row):
            for k, (c, t) in enumerate(outs):
                nxt[s, m, k] = t
                cost[s, m, k] = c
    return CostAutomaton(tuple(g.states[k] for k in order), nxt, cost, 0, w)


def price(auto: CostAutomaton, moves: list[int]) -> float:
    """The automaton's cost of a solution given as move indices (the least
    over the states it may pass through)."""
    vec = np.full(len(auto.states), np.inf)
    vec[auto.start] = 0.0
    for m in moves:
        new = np.full_like(vec, np.inf)
        for s in (int(x) for x in np.flatnonzero(np.isfinite(vec))):
            for k in range(auto.next.shape[2]):
                t = auto.next[s, m, k]
                if t < 0:
                    break
                new[t] = min(new[t], vec[s] + auto.cost[s, m, k])
        vec = new
    return float(vec.min())
