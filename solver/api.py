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

``max_length`` is a promise: the answer has at most that many moves, or the
call raises :class:`solver.errors.SolveError` (kind ``max-length``). Every
cube has a solution of at most :data:`GODS_NUMBER` moves and the two-phase
search finds one within milliseconds to a few hundred, so a ``max_length``
of 20 or more always gets one; below that the search keeps looking for
``max(budget_ms, REFUSE_AFTER_MS)`` and then refuses (finding the optimal
length is not feasible in general, so a refusal does not prove that no such
solution exists, except at :data:`SHORT` moves or fewer, where the search is
optimal and refuses at once). Whatever is asked, a search that has found
nothing after ``max(budget_ms, REFUSE_AFTER_MS)`` plus :data:`WALL_MARGIN_MS` raises ``SolveError``
(kind ``time-limit``) instead of running on: that happens only with damaged
tables. And every solution is applied to the cube before it is returned: a
wrong one raises :class:`solver.errors.SolverFault`.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import coords as co
from . import residency, search
from . import tables as tb
from .cache import cache_dir
from .cubie import Cube
from .errors import SolveError, SolverFault
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
RIG_BOUND = 21
"""In the rig metrics, the longest solution stage 2 looks at: every cube has
one of 20 moves, and the rig-cheapest are rarely longer than the shortest
by more than one."""
P2_EXTRA = 2
"""In the rig metrics' second stage, phase-2 completions up to this many
moves longer than the shortest are searched too: with more turns paired up
they are often faster on the rig."""
GODS_NUMBER = 20
"""Every cube has a solution of at most this many moves: a ``max_length`` of
at least this is always met."""
REFUSE_AFTER_MS = 2000.0
"""A ``max_length`` below GODS_NUMBER (and above SHORT) is refused with
SolveError when no solution that short turns up within ``max(budget_ms,
REFUSE_AFTER_MS)`` milliseconds: long enough for the 18- and 19-move
solutions most cubes have to turn up, short enough to answer a person."""
WALL_MARGIN_MS = 10_000.0
"""The hard wall-clock limit of any search past its budget (or past
REFUSE_AFTER_MS if that is longer): a search that has found nothing by then
raises SolveError rather than run on. A sound search finds its first
solution within a few hundred milliseconds even on a slow machine, so
reaching it means damaged tables."""
QUANTUM = 4000
"""Nodes per search slice between clock checks (well under a millisecond)."""
PREMOVES = 3
"""Each view also searches the cube after premove sequences of up to this
many moves (see :class:`search.Searcher`) when it runs for the whole budget:
more solutions for the same work (shorter, and cheaper on the rig, than
with two; see docs/benchmarks.md)."""
PREMOVES_QUICK = 1
"""The same for a search that stops at its first good-enough solution (a
``max_length``, or the first solution of the rig metrics): one premove
finds it soonest; more roots only delay it."""


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
        s.step(3, 1 << 20, search.AXIAL)
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


_Back = Callable[[list[int]], list[int]]
"""Maps a solution of a view's cube to a solution of the cube being solved."""


def _from_turned(cmap: list[int], s: list[int]) -> list[int]:
    """A solution of the turned cube, as moves of the original."""
    return [cmap[m] for m in s]


def _from_turned_inverse(cmap: list[int], s: list[int]) -> list[int]:
    """A solution of the turned cube's inverse, read backwards with every
    move inverted, as moves of the original."""
    return [3 * (cmap[m] // 3) + 2 - cmap[m] % 3 for m in reversed(s)]


def _views(cube: Cube) -> list[tuple[np.ndarray, _Back]]:
    """(cubie array, function mapping its solution to one of ``cube``)."""
    out: list[tuple[np.ndarray, _Back]] = []
    for r in range(3):
        turned = _TURN[r] * cube * _TURN[r].inverse()
        out.append((co.to_array(turned), functools.partial(_from_turned, _CONJ[r])))
        out.append((co.to_array(turned.inverse()), functools.partial(_from_turned_inverse, _CONJ[r])))
    return out


def _to_cube(cube: str | Cube) -> Cube:
    if isinstance(cube, Cube):
        # a Cube built by hand is not validated by its constructor
        return parse_facelets(cube.to_facelets())
    return parse_facelets(cube)


def _check_options(max_length: int | None, metric: str, quarter_cost: float, half_cost: float) -> None:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")
    if max_length is not None and max_length < 0:
        raise ValueError("max_length must not be negative")
    if not (math.isfinite(quarter_cost) and math.isfinite(half_cost)) or quarter_cost < 0 or half_cost < 0:
        raise ValueError("quarter_cost and half_cost must be non-negative numbers")


_MODES = {"htm": search.LENGTH, "axial": search.AXIAL, "qtm": search.TURNS}


@dataclass(frozen=True)
class _Price:
    """The metric a solve minimises, as :func:`solver.metrics.cost` and the
    search each take it."""

    metric: str
    quarter_cost: float
    half_cost: float

    @property
    def mode(self) -> int:
        return _MODES[self.metric]

    @property
    def search_costs(self) -> tuple[float, float]:
        """Quarter- and half-turn costs for the search (quarter turns count one
        each in ``qtm``)."""
        return (1.0, 2.0) if self.metric == "qtm" else (self.quarter_cost, self.half_cost)

    def of(self, moves: list[int]) -> float:
        return cost([Move.from_index(m) for m in moves], self.metric, self.quarter_cost, self.half_cost)


class _Best:
    """The best solution so far: the cheapest, and of equally cheap ones the
    shortest; and the length of the shortest found, cheap or not."""

    def __init__(self, price: _Price):
        self.price = price
        self.moves: list[int] | None = None
        self.cost = math.inf
        self.shortest = ANY_BOUND + 1

    def offer(self, moves: list[int]) -> None:
        k = self.price.of(moves)
        if self.moves is None or k < self.cost or (k == self.cost and len(moves) < len(self.moves)):
            self.moves, self.cost = moves, k
        self.shortest = min(self.shortest, len(moves))


class _Race:
    """The views' searches, run side by side a slice of :data:`QUANTUM`
    nodes at a time."""

    def __init__(self, views: list[tuple[np.ndarray, _Back]], tables: dict[str, np.ndarray], premoves: int):
        self.searchers = [(Searcher(arr, tables, premoves), back) for arr, back in views]
        self.active = True

    def due(self) -> list[tuple[Searcher, _Back]]:
        """The searches to run a slice each in this round: those not done
        at the shallowest phase-1 length, so that no view runs ahead to
        longer sequences while another can still find a shorter solution.
        Sets ``active``: whether any search is not done."""
        live = [s.depth for s, _ in self.searchers if not s.done]
        self.active = bool(live)
        shallow = min(live, default=0)
        return [(s, back) for s, back in self.searchers if not s.done and s.depth == shallow]

    def restart(self) -> None:
        """Let searches that ran out under a lower bound go on under a higher one."""
        for s, _ in self.searchers:
            s.done = False


def _original_moves(found: list[int], back: _Back) -> list[int]:
    """A view's solution as moves of the cube being solved; a premove may
    merge with the last move of phase 2."""
    return [m.index for m in simplify([Move.from_index(m) for m in back(found)])]


def _damaged() -> str:
    return f"its tables may be damaged; delete the cache folder {cache_dir()} to rebuild them"


def _hit_the_wall(limit: _Limits) -> SolveError:
    return SolveError("time-limit", f"the search found no solution in {limit.wall_ms / 1000:g} s "
                                    f"(a sound one finds one within a second): {_damaged()}")


@dataclass(frozen=True)
class _Limits:
    """When a search stops: ``deadline`` ends the budget (the best found so
    far is the answer), ``give_up`` is when a search that has found nothing
    good enough raises SolveError, ``wall_ms`` its distance from the start."""

    deadline: float
    give_up: float
    wall_ms: float
    target: int | None


def _optimal_if_near(cube: Cube, tables: dict[str, np.ndarray], limit: _Limits) -> list[int] | None:
    """An optimal solution if ``cube`` is at most SHORT moves from solved."""
    s = Searcher(co.to_array(cube), tables)
    best = None
    bound = SHORT
    while not s.done:
        found = s.step(bound, QUANTUM)
        if found is not None:
            best, bound = found, len(found) - 1
        elif time.perf_counter() >= limit.give_up:
            raise _hit_the_wall(limit)
    return best


def _shorter_and_shorter(race: _Race, best: _Best, limit: _Limits) -> list[int] | None:
    """Stage 1, in every metric: any solution shorter than the shortest so
    far counts and lowers the bound for all views. Returns a solution of at
    most ``target`` moves as soon as one turns up. In ``htm`` this is the
    whole search, until the deadline or until no view can find anything
    shorter; in the rig metrics it ends with the round that finds the first
    solution, leaving the budget to stage 2 (which pays better than getting
    shorter first). If there is none at the deadline, it goes on to the
    first one until ``limit.give_up`` and then raises SolveError. The bound
    is never above the target (``max_length``)."""
    price = best.price
    qc, hc = price.search_costs
    target = limit.target
    bound = min(ANY_BOUND, best.shortest - 1, target if target is not None else ANY_BOUND)
    while True:
        for s, back in race.due():
            found = s.step(bound, QUANTUM, price.mode, qc, hc, best.cost, best.shortest, 0)
            if found is None:
                continue
            moves = _original_moves(found, back)
            best.offer(moves)
            if target is not None and len(moves) <= target and price.mode == search.LENGTH:
                return moves
            bound = min(bound, len(moves) - 1)
        if price.mode != search.LENGTH and best.moves is not None:
            return None
        now = time.perf_counter()
        if best.moves is not None and (not race.active or now >= limit.deadline):
            return None
        if best.moves is None and (not race.active or now >= limit.give_up):
            if target is not None and target < GODS_NUMBER:
                raise _too_short(target, now >= limit.give_up)
            if not race.active:  # every cube has a solution within ANY_BOUND
                raise SolverFault(f"the two-phase search ended without a solution: {_damaged()}")
            raise _hit_the_wall(limit)


def _too_short(target: int, timed_out: bool) -> SolveError:
    how = (f"none turned up within {REFUSE_AFTER_MS / 1000:g} s or the budget, whichever is longer"
           if timed_out else "the search ran out of sequences that short")
    return SolveError("max-length", f"no solution of at most {target} moves found ({how}); every cube "
                                    f"has one of at most {GODS_NUMBER}: allow more moves")


def _cheaper(race: _Race, best: _Best, deadline: float, target: int | None) -> None:
    """Stage 2, in the rig metrics: a fresh search among solutions up to
    SLACK moves longer than the shortest found, and at most RIG_BOUND, for
    any that is cheaper. That is affordable only with a tight length bound,
    and pays because pairs of opposite turns make some longer solutions
    faster on the rig."""
    price = best.price
    qc, hc = price.search_costs
    bound = min(ANY_BOUND, best.shortest + SLACK, RIG_BOUND, target if target is not None else ANY_BOUND)
    while True:
        for s, back in race.due():
            found = s.step(bound, QUANTUM, price.mode, qc, hc, best.cost, 0, P2_EXTRA)
            if found is not None:
                best.offer(_original_moves(found, back))
        if not race.active or time.perf_counter() >= deadline:
            return


def _solution(cube: Cube, moves: list[int], price: _Price, t0: float, target: int | None = None) -> Solution:
    """The answer, once it is checked: it solves ``cube`` within ``target``
    moves, or SolverFault."""
    ms = [Move.from_index(m) for m in moves]
    solves = cube.apply(ms).is_solved()
    if not solves or (target is not None and len(ms) > target):
        what = "does not solve the cube" if not solves else f"is longer than {target} moves"
        raise SolverFault(f"the solver produced a wrong solution ({format_moves(ms) or 'no moves'} {what} "
                          f"{cube.to_facelets()}): {_damaged()}")
    return Solution(moves=format_moves(ms), length=len(ms),
                    cost=cost(ms, price.metric, price.quarter_cost, price.half_cost),
                    elapsed_ms=(time.perf_counter() - t0) * 1000.0,
                    steps=[[str(m) for m in step] for step in group_steps(ms)], metric=price.metric)


def solve(cube: str | Cube, *, max_length: int | None = None, budget_ms: float = 100,
          metric: str = "htm", quarter_cost: float = 1.0, half_cost: float = 1.5) -> Solution:
    """A short solution of ``cube`` (a facelet string in any six symbols, or a Cube).

    Searches for ``budget_ms`` milliseconds (not counting a first call's
    table loading and compiling, see :func:`prepare`) and returns the
    cheapest solution in ``metric`` (``htm`` face turns, ``qtm`` quarter
    turns, ``axial`` six-motor rig time, see :mod:`solver.metrics`). If
    nothing was found when the budget runs out, it goes on to the first
    solution, which comes within milliseconds.

    ``max_length`` is a promise: the solution has at most that many moves
    (in ``htm`` the first such is returned at once), or SolveError (kind
    ``max-length``) is raised: at once for a cube provably farther away, and
    for a ``max_length`` under GODS_NUMBER after ``max(budget_ms,
    REFUSE_AFTER_MS)``. A ``max_length`` of GODS_NUMBER or more always gets
    a solution. Any search gives up with SolveError (kind ``time-limit``)
    after max(budget_ms, REFUSE_AFTER_MS) + WALL_MARGIN_MS, which only damaged tables reach;
    a solution is checked on the cube before it is returned (SolverFault if
    it is wrong).
    """
    t0 = time.perf_counter()
    _check_options(max_length, metric, quarter_cost, half_cost)
    c = _to_cube(cube)
    price = _Price(metric, quarter_cost, half_cost)
    if c.is_solved():
        return _solution(c, [], price, t0)

    prepare()
    tables = tb.load()
    start = time.perf_counter()
    budget = max(0.0, budget_ms)
    refuse_ms = max(budget, REFUSE_AFTER_MS) if max_length is not None and max_length < GODS_NUMBER else None
    wall_ms = max(budget, REFUSE_AFTER_MS) + WALL_MARGIN_MS
    limit = _Limits(deadline=start + budget / 1000.0,
                    give_up=start + (refuse_ms if refuse_ms is not None else wall_ms) / 1000.0,
                    wall_ms=wall_ms, target=max_length)
    best = _Best(price)

    near = _optimal_if_near(c, tables, limit)
    if max_length is not None and (near is None and max_length <= SHORT
                                   or near is not None and len(near) > max_length):
        far = f"{len(near)}" if near is not None else f"more than {SHORT}"
        raise SolveError("max-length", f"no solution of at most {max_length} moves: the cube is {far} moves "
                                       "from solved")
    if near is not None:
        if metric == "htm":
            return _solution(c, near, price, t0, max_length)
        best.offer(near)

    views = _views(c)
    quick = max_length is not None or metric != "htm"
    race = _Race(views, tables, PREMOVES_QUICK if quick else PREMOVES)
    met = _shorter_and_shorter(race, best, limit)
    if met is not None:
        return _solution(c, met, price, t0, max_length)

    if metric != "htm":
        _cheaper(_Race(views, tables, PREMOVES), best, limit.deadline, max_length)
    assert best.moves is not None
    return _solution(c, best.moves, price, t0, max_length)
