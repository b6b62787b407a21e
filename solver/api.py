"""The public solver: ``solve(cube) -> Solution``.

One cube is searched six ways at once: as given, turned about the URF-DBL
diagonal by 120 and 240 degrees, and the inverse of each. They are the same
problem, but the two-phase split treats them differently, and whichever
finds a short solution first lowers the bound for all. A solution of a
turned cube is turned back by conjugating its moves; a solution of the
inverse is read backwards with every move inverted. Each view also searches
its cube after a few premoves (see :class:`search.Searcher`): solutions that
end with a handful of moves after phase 2, found at the cost of a shorter
phase 1.

Before that, a cube within 7 moves of solved is solved optimally: the
two-phase search with a bound of 7 is complete (every solution of at most 7
moves splits into a phase-1 part and a phase-2 part it tries), and for a
cube farther away it gives up at once because the phase-1 distance alone
exceeds the bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import coords as co
from . import residency
from . import tables as tb
from .cubie import Cube
from .metrics import METRICS, cost, group_steps
from .moves import Move, format_moves, simplify
from .search import Searcher
from .symmetry import S_URF3
from .validate import parse_facelets

SHORT = 7
"""Cubes this close to solved get an optimal solution."""
ANY_BOUND = 30
"""A bound under which the two-phase search always finds a solution (12 + 18)."""
SLACK = 2
"""In the rig metrics, solutions up to this many moves longer than the
shortest found still count if they are cheaper."""
STAGE1 = 0.0
"""In the rig metrics, the share of the budget spent getting short before
looking for cheap: none (stage 1 ends with its first solution) measured
0.13 cost units a solve better than a quarter, on four sets of 200 cubes."""
RIG_BOUND = 21
"""In the rig metrics, the longest solution stage 2 looks at: every cube has
one of 20 moves, and the rig-cheapest are rarely longer than the shortest
by more than one."""
P2_EXTRA = 2
"""In the rig metrics' second stage, phase-2 completions up to this many
moves longer than the shortest are searched too: with more turns paired up
they are often faster on the rig (0.1 cost units a solve on average)."""
QUANTUM = 4000
"""Nodes per search slice between clock checks (well under a millisecond)."""
LEAD = 0
"""A view searches phase-1 sequences at most this much longer than the
shallowest view's."""
PREMOVES = 3
"""Each view also searches the cube after premove sequences of up to this
many moves (see :class:`search.Searcher`) when it runs for the whole budget:
more solutions for the same work. On the benchmark's 200 cubes: mean length
at 100 ms 18.36 rather than 18.68 without, rig cost 2 % lower; two premoves
measured 0.04 moves and 0.08 cost units a solve worse than three."""
PREMOVES_QUICK = 1
"""The same for a search that stops at its first good-enough solution (a
``max_length``, or the first solution of the rig metrics): one premove
finds it soonest. Measured on 200 cubes with ``max_length=20``: median 0.80
ms, slowest 25 ms, against 0.87 and 70 ms without premoves and 1.36 and 28
ms with two."""


@dataclass(frozen=True)
class Solution:
    moves: str
    length: int
    cost: float
    elapsed_ms: float
    steps: list[list[str]] = field(default_factory=list)
    metric: str = "htm"

    def to_dict(self) -> dict:
        return {"moves": self.moves, "length": self.length, "cost": self.cost,
                "elapsed_ms": round(self.elapsed_ms, 3), "steps": self.steps}


_ready = False


def prepare(progress: Callable[[str], None] | None = None) -> None:
    """Load (on first use: build) the tables and compile the search, so the
    first real solve is fast. Safe to call any number of times; ``solve``
    calls it too, before its clock starts.

    Building the tables takes half a minute or more and happens once per
    cache directory (see :func:`solver.cache.cache_dir`). Meanwhile
    ``progress``, if given, receives one-line messages: which step of how
    many is under way, how far the big ones are, and at the end how long the
    build took. It hears nothing when the tables load from the cache."""
    global _ready
    if _ready:
        return
    tables = tb.load(progress)
    s = Searcher(co.to_array(Cube().apply("R U F")), tables)
    while not s.done:
        s.step(3, 1 << 20, 1)
    # the search is compiled and loaded: LLVM's code is not needed any more
    residency.release("libllvmlite")
    # map the pruning tables in now, one read per page in file order, rather
    # than one page fault at a time in the middle of the first solve (a hard
    # cube touches nearly all of them)
    for name in ("phase1", "phase2"):
        a = tables[name]
        a.reshape(-1).view(np.uint8)[::4096].sum()
    _ready = True


def _conj_map(r: int) -> list[int]:
    """Move m of the cube turned r times -> the move of the original cube."""
    u = Cube()
    for _ in range(r):
        u = u * S_URF3
    ui = u.inverse()
    index = {c: k for k, c in enumerate(co.MOVE_CUBES)}
    return [index[ui * mc * u] for mc in co.MOVE_CUBES]


_CONJ = [_conj_map(r) for r in range(3)]
_TURN = [Cube(), S_URF3, S_URF3 * S_URF3]


def _views(cube: Cube):
    """(cubie array, function mapping its solution to one of ``cube``)."""
    out = []
    for r in range(3):
        turned = _TURN[r] * cube * _TURN[r].inverse()
        cmap = _CONJ[r]
        out.append((co.to_array(turned), lambda s, cmap=cmap: [cmap[m] for m in s]))
        out.append((co.to_array(turned.inverse()),
                    lambda s, cmap=cmap: [3 * (cmap[m] // 3) + 2 - cmap[m] % 3 for m in reversed(s)]))
    return out


def _to_cube(cube) -> Cube:
    if isinstance(cube, Cube):
        # a Cube built by hand is not validated by its constructor
        return parse_facelets(cube.to_facelets())
    return parse_facelets(cube)


def solve(cube: str | Cube, *, max_length: int | None = None, budget_ms: float = 100,
          metric: str = "htm", quarter_cost: float = 1.0, half_cost: float = 1.5) -> Solution:
    """A short solution of ``cube`` (a facelet string in any six symbols, or a Cube).

    Returns as soon as a solution of at most ``max_length`` moves is found
    (metric ``htm``); otherwise searches for ``budget_ms`` milliseconds (not counting a
    first call's table loading and compiling, see :func:`prepare`) and
    returns the cheapest solution in ``metric`` (``htm`` face turns, ``qtm``
    quarter turns, ``axial`` six-motor rig time, see :mod:`solver.metrics`).
    If nothing was found when the budget runs out, it goes on to the first
    solution, which comes within milliseconds.
    """
    t0 = time.perf_counter()
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")
    if max_length is not None and max_length < 0:
        raise ValueError("max_length must not be negative")
    if not (math.isfinite(quarter_cost) and math.isfinite(half_cost)) or quarter_cost < 0 or half_cost < 0:
        raise ValueError("quarter_cost and half_cost must be non-negative numbers")
    c = _to_cube(cube)

    def finish(moves: list[int]) -> Solution:
        ms = [Move.from_index(m) for m in moves]
        return Solution(moves=format_moves(ms), length=len(ms),
                        cost=cost(ms, metric, quarter_cost, half_cost),
                        elapsed_ms=(time.perf_counter() - t0) * 1000.0,
                        steps=[[str(m) for m in step] for step in group_steps(ms)], metric=metric)

    if c.is_solved():
        return finish([])
    prepare()
    tables = tb.load()
    t_search = time.perf_counter()
    deadline = t_search + max(0.0, budget_ms) / 1000.0
    best: list[int] | None = None

    # short cubes: optimal
    short = Searcher(co.to_array(c), tables)
    bound = SHORT
    while not short.done:
        found = short.step(bound, 1 << 40)
        if found is not None:
            best, bound = found, len(found) - 1
    if best is not None and metric == "htm":
        return finish(best)

    mode = {"htm": 0, "axial": 1, "qtm": 2}[metric]
    qc, hc = (1.0, 2.0) if metric == "qtm" else (quarter_cost, half_cost)
    target = max_length if (max_length is not None and metric == "htm") else None
    best_cost = math.inf
    if best is not None:
        best_cost = cost([Move.from_index(m) for m in best], metric, quarter_cost, half_cost)
    # Stage 1 (every metric): shorter and shorter solutions, as any solution
    # shorter than the shortest so far counts. In the rig metrics it gets the
    # share STAGE1 of the budget (none: it ends with its first solution);
    # stage 2 then searches afresh among solutions up to SLACK moves longer
    # than that, and at most RIG_BOUND, for any that is cheaper. That is
    # affordable only with a tight length bound, and pays because pairs of
    # opposite turns make some longer solutions faster on the rig.
    views = _views(c)
    quick = target is not None or mode != 0
    searchers = [(Searcher(arr, tables, PREMOVES_QUICK if quick else PREMOVES), back)
                 for arr, back in views]
    shortest = len(best) if best is not None else ANY_BOUND + 1
    bound = min(ANY_BOUND, shortest - 1, target if target is not None else ANY_BOUND)
    stage1_end = deadline if mode == 0 else t_search + (deadline - t_search) * STAGE1
    stage = 1
    while True:
        active = False
        live = [s.depth for s, _ in searchers if not s.done]
        shallow = min(live) if live else 0
        for s, back in searchers:
            if s.done:
                continue
            active = True
            if s.depth > shallow + LEAD:
                continue
            found = s.step(bound, QUANTUM, mode, qc, hc, best_cost, shortest if stage == 1 else 0,
                           P2_EXTRA if stage == 2 else 0)
            if found is None:
                continue
            # a premove may merge with the last move of phase 2
            moves = [m.index for m in simplify([Move.from_index(m) for m in back(found)])]
            k = cost([Move.from_index(m) for m in moves], metric, quarter_cost, half_cost)
            if k < best_cost or (k == best_cost and len(moves) < len(best)):
                best, best_cost = moves, k
            shortest = min(shortest, len(moves))
            if target is not None and len(moves) <= target:
                return finish(moves)
            if stage == 1:
                bound = min(bound, len(moves) - 1)
        now = time.perf_counter()
        if stage == 1 and mode != 0 and best is not None and (not active or now >= stage1_end):
            stage = 2
            bound = min(ANY_BOUND, shortest + SLACK, RIG_BOUND)
            searchers = [(Searcher(arr, tables, PREMOVES), back) for arr, back in views]
            continue
        if not active:
            break
        if now >= deadline:
            if best is not None:
                break
            if bound < ANY_BOUND:  # the target was too ambitious for the budget: take anything
                bound = ANY_BOUND
                for s, _ in searchers:
                    s.done = False
    assert best is not None
    return finish(best)
