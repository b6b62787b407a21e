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

A solve has two stages. The first finds any solution (within
``max_length`` if one is given) with few roots a view, which takes about a
millisecond; setting up all the premove roots first would take several.
The second sets them up and looks for shorter solutions (``htm``) or
cheaper ones (the rig metrics) until the budget ends. The views' searches
run on ``workers`` threads: the compiled search lets go of Python's lock,
and a solution one thread finds lowers the bound every thread searches
under.

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
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import MAX_CANDIDATES, residency, search
from . import coords as co
from . import tables as tb
from .cache import cache_dir
from .cubie import Cube
from .errors import SolveError, SolverFault
from .metrics import METRICS, cost, group_steps
from .moves import Move, format_moves, simplify
from .search import Searcher
from .solution import Solution
from .symmetry import DIAGONAL_MOVE_MAPS, DIAGONAL_TURNS
from .talk import ticking
from .validate import parse_facelets
from .workers import check_workers

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
CANDIDATES_WITHIN = 0.04
"""With ``candidates`` > 1, the solutions kept besides the cheapest are
those the search met on its way that are at most this fraction dearer, and
ties; the search's bound stays the cheapest's. Searching for the N cheapest
instead loosens the bound to the N-th, and in the same budget the search
then finds dearer solutions: on 100 cubes the best of 8 planned on the rig
came out between 0.3 % faster and 1.1 % slower than the one cheapest in two
runs (docs/benchmarks.md); near-ties are where a finer price (the rig's
plan) can disagree with the metric, at no cost to the search."""
FINISH_MS = 0.3
"""Of the budget, what is kept back for checking the answer on the cube and
writing it out, so that the whole call takes about ``budget_ms``."""
QUANTUM = 4000
"""Nodes per search slice between clock checks (well under a millisecond)."""
PREMOVES = 3
"""Each view also searches the cube after premove sequences of up to this
many moves (see :class:`search.Searcher`) when it runs for the whole budget:
more solutions for the same work (shorter, and cheaper on the rig, than
with two; see docs/benchmarks.md)."""
PREMOVES_SHORT = 2
"""The same when less than :data:`SHORT_STAGE_MS` of the budget is left for
stage 2: setting up the 1,557 roots of three premoves takes 2 to 6 ms, which
a small budget cannot spare; two premoves need 117 roots."""
SHORT_STAGE_MS = 40.0
PREMOVES_QUICK = 1
"""The same for a search that stops at its first good-enough solution (a
``max_length``, or the first solution of the rig metrics): one premove
finds it soonest; more roots only delay it."""


_ready = False


def prepare(progress: Callable[[str], None] | None = None) -> None:
    """Load (on first use: build) the tables and compile the search, so the
    first real solve is fast. Safe to call any number of times; ``solve``
    calls it too, before its clock starts.

    Building the tables takes half a minute or more and happens once per
    cache directory (see :func:`solver.cache.cache_dir`). Meanwhile
    ``progress``, if given, receives one-line messages: which step of how
    many is under way, how far the big ones are, and at the end how long the
    build took. It hears nothing when the tables load from the cache, and
    about compiling the search only when that outlasts a few seconds' silence
    (numba's cache was cold; see :mod:`solver.talk`)."""
    global _ready
    if _ready:
        return
    with ticking(progress) as say:
        if say is not None:
            say.quietly("loading the solver's tables")
        tables = tb.load(say)
        if say is not None:
            say.quietly(f"compiling the solver's search, or loading it once compiled (the code is cached in "
                        f"{os.environ.get('NUMBA_CACHE_DIR') or 'the package'})")
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


_CONJ = DIAGONAL_MOVE_MAPS
_TURN = DIAGONAL_TURNS


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
    shortest; and the length of the shortest found, cheap or not. With
    ``keep`` > 1 it also keeps the ``keep`` cheapest different ones, and the
    search looks for anything no dearer than the cheapest (:attr:`bound`):
    the others are what it meets on the way, within ``within`` of the
    cheapest, and ties."""

    def __init__(self, price: _Price, keep: int = 1, within: float = CANDIDATES_WITHIN):
        self.price = price
        self.keep = keep
        self.within = within
        self.moves: list[int] | None = None
        self.cost = math.inf
        self.shortest = ANY_BOUND + 1
        self.kept: list[tuple[float, int, tuple[int, ...]]] = []
        self.bound = math.inf

    def offer(self, moves: list[int]) -> None:
        k = self.price.of(moves)
        if self.moves is None or k < self.cost or (k == self.cost and len(moves) < len(self.moves)):
            self.moves, self.cost = moves, k
        self.shortest = min(self.shortest, len(moves))
        entry = (k, len(moves), tuple(moves))
        if entry not in self.kept:
            self.kept.append(entry)
            self.kept.sort()
            del self.kept[self.keep:]
        if self.keep > 1:  # the near-ties only: anything dearer leaves the list and the bound
            worst = self.cost * (1.0 + self.within) + 1e-9
            self.kept = [e for e in self.kept if e[0] <= worst]
            self.bound = self.cost + 1e-9  # ties with the cheapest still count
        else:
            self.bound = self.kept[-1][0]


class _View:
    """One view's search, as the race schedules it."""

    def __init__(self, searcher: Searcher, back: _Back):
        self.searcher = searcher
        self.back = back
        self.busy = False
        self.turns = 0


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}


def _pool(threads: int) -> ThreadPoolExecutor:
    """A pool of ``threads`` threads kept for later solves: starting threads
    anew would cost a good part of a quick solve. Kept per process, since a
    forked child has none of its parent's threads."""
    key = (os.getpid(), threads)
    if key not in _POOLS:
        _POOLS[key] = ThreadPoolExecutor(threads, thread_name_prefix="cuberobot-solver")
    return _POOLS[key]


class _Race:
    """The views' searches, run a slice of :data:`QUANTUM` nodes at a time on
    one or more threads. The compiled search lets go of Python's global lock,
    so each thread keeps a core busy; the bound they search under is shared,
    so a solution one view finds shortens the others' work at once."""

    def __init__(self, views: list[tuple[np.ndarray, _Back]], tables: dict[str, np.ndarray], premoves: int):
        self.views = [_View(Searcher(arr, tables, premoves), back) for arr, back in views]

    @property
    def active(self) -> bool:
        """Whether any search is not done."""
        return any(not v.searcher.done for v in self.views)

    def _next(self) -> _View | None:
        """The view to step next: of those no thread is stepping, one at the
        shallowest phase-1 length, so that no view runs ahead to longer
        sequences while another can still find a shorter solution; of those,
        the one stepped least (so one thread goes round them in turn)."""
        free = [v for v in self.views if not v.busy and not v.searcher.done]
        return min(free, key=lambda v: (v.searcher.depth, v.turns)) if free else None

    def run(self, workers: int, step: Callable[[Searcher], list[int] | None],
            found: Callable[[list[int], _Back], None], stop: Callable[[], bool]) -> None:
        """Step the views on ``workers`` threads (this one among them) until
        ``stop()`` says so or every search is done. ``step`` runs a slice of
        a search; ``found`` hears of each solution and ``stop`` is asked
        before every slice, both with the race's lock held. With one worker
        the order of the slices, and so the answer for a given amount of
        work, does not depend on timing."""
        lock = threading.Lock()
        failed: list[BaseException] = []
        closed = False

        def work() -> bool:
            """Step views until told to stop (True) or none is left to take."""
            try:
                while True:
                    with lock:
                        if closed or failed or stop():
                            return True
                        v = self._next()
                        if v is None:
                            return False
                        v.busy = True
                    try:
                        moves = step(v.searcher)
                    finally:
                        with lock:
                            v.busy = False
                            v.turns += 1
                    if moves is not None:
                        with lock:
                            if not closed:
                                found(moves, v.back)
            except BaseException as e:  # handed to the caller's thread
                with lock:
                    failed.append(e)
                return True

        helpers = [_pool(workers - 1).submit(work) for _ in range(workers - 1)] if workers > 1 else []
        stopped = work()
        if stopped:
            # the answer does not wait for slices still running on other
            # threads: what they find now is ignored
            with lock:
                closed = True
        else:  # the last searches may still find something: wait for them
            for h in helpers:
                h.result()
        with lock:
            if failed:
                raise failed[0]


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


def _first(race: _Race, best: _Best, limit: _Limits, workers: int) -> None:
    """Stage 1: a first solution, within ``limit.target`` moves if given, as
    fast as it comes (the views race with few roots each). If there is
    none by ``limit.give_up``: SolveError (or SolverFault if the search ran
    out, which a sound one never does without a target)."""
    price = best.price
    qc, hc = price.search_costs
    target = limit.target
    bound = min(ANY_BOUND, best.shortest - 1, target if target is not None else ANY_BOUND)

    def step(s: Searcher) -> list[int] | None:
        return s.step(bound, QUANTUM, price.mode, qc, hc, best.cost, best.shortest, 0)

    def stop() -> bool:
        return best.moves is not None or time.perf_counter() >= limit.give_up

    race.run(workers, step, lambda found, back: best.offer(_original_moves(found, back)), stop)
    if best.moves is not None:
        return
    if target is not None and target < GODS_NUMBER:
        raise _too_short(target, race.active)
    if not race.active:  # every cube has a solution within ANY_BOUND
        raise SolverFault(f"the two-phase search ended without a solution: {_damaged()}")
    raise _hit_the_wall(limit)


def _shorter(race: _Race, best: _Best, deadline: float, workers: int) -> None:
    """Stage 2 in ``htm``: any solution shorter than the shortest so far
    counts and lowers the bound for all views, until the deadline or until
    no view can find anything shorter (then the answer is the shortest
    there is among the solutions the roots can give)."""

    def step(s: Searcher) -> list[int] | None:
        return s.step(best.shortest - 1, QUANTUM)

    race.run(workers, step, lambda found, back: best.offer(_original_moves(found, back)),
             lambda: time.perf_counter() >= deadline)


def _too_short(target: int, timed_out: bool) -> SolveError:
    how = (f"none turned up within {REFUSE_AFTER_MS / 1000:g} s or the budget, whichever is longer"
           if timed_out else "the search ran out of sequences that short")
    return SolveError("max-length", f"no solution of at most {target} moves found ({how}); every cube "
                                    f"has one of at most {GODS_NUMBER}: allow more moves")


def _cheaper(race: _Race, best: _Best, deadline: float, target: int | None, workers: int) -> None:
    """Stage 2 in the rig metrics: a search among solutions up to SLACK
    moves longer than the shortest found, and at most RIG_BOUND, for any
    that is cheaper. That is affordable only with a tight length bound,
    and pays because pairs of opposite turns make some longer solutions
    faster on the rig."""
    price = best.price
    qc, hc = price.search_costs
    bound = min(ANY_BOUND, best.shortest + SLACK, RIG_BOUND, target if target is not None else ANY_BOUND)

    def step(s: Searcher) -> list[int] | None:
        return s.step(bound, QUANTUM, price.mode, qc, hc, best.bound, 0, P2_EXTRA)

    race.run(workers, step, lambda found, back: best.offer(_original_moves(found, back)),
             lambda: time.perf_counter() >= deadline)


def _solution(cube: Cube, moves: list[int], price: _Price, t0: float, target: int | None = None,
              others: tuple[Solution, ...] = ()) -> Solution:
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
                    steps=group_steps(ms), metric=price.metric,
                    others=others)


def solve(cube: str | Cube, *, max_length: int | None = None, budget_ms: float = 100,
          metric: str = "htm", quarter_cost: float = 1.0, half_cost: float = 1.5,
          workers: int | None = None, candidates: int = 1,
          candidates_within: float = CANDIDATES_WITHIN) -> Solution:
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

    ``workers`` threads search at once (at most :data:`MAX_WORKERS`; by
    default one thread until the first solution and then every core this
    process may run on, see :func:`~.workers.default_workers`). With
    ``workers=1`` the search's slices run in a fixed order, so its answer
    depends only on how much it searched, not on how the threads were
    scheduled: the deterministic mode for tests.

    ``candidates`` > 1 (at most :data:`MAX_CANDIDATES`) asks for that many of
    the cheapest different solutions the search met, each checked: the answer
    is the cheapest and ``others`` holds the rest, cheapest first (fewer when
    the budget found fewer), none more than ``candidates_within`` (a
    fraction) dearer than the cheapest. A caller with a better price than
    the metric's (a rig that plans each one) chooses among them.
    """
    t0 = time.perf_counter()
    _check_options(max_length, metric, quarter_cost, half_cost)
    # Left to us, the first answer is searched on one thread and the rest of
    # the budget on every core: the first comes within a few milliseconds,
    # where handing slices between threads costs more than a second core
    # gives, and a budget of tens of milliseconds is where it pays (both
    # measured on this 2-core host, benchmarks/threads.py, docs/benchmarks.md).
    first_workers = 1 if workers is None else check_workers(workers)
    workers = check_workers(workers)
    if isinstance(candidates, bool) or not isinstance(candidates, int) \
            or not 1 <= candidates <= MAX_CANDIDATES:
        raise ValueError(f"candidates must be a whole number from 1 to {MAX_CANDIDATES}, not {candidates!r}")
    c = _to_cube(cube)
    price = _Price(metric, quarter_cost, half_cost)
    if c.is_solved():
        return _solution(c, [], price, t0)

    loading = time.perf_counter()
    prepare()
    tables = tb.load()
    # the budget counts from the call, less a first call's loading, and
    # keeps back what checking and writing out the answer take
    start = t0 + (time.perf_counter() - loading)
    budget = max(0.0, budget_ms - FINISH_MS)
    refuse_ms = max(budget, REFUSE_AFTER_MS) if max_length is not None and max_length < GODS_NUMBER else None
    wall_ms = max(budget, REFUSE_AFTER_MS) + WALL_MARGIN_MS
    limit = _Limits(deadline=start + budget / 1000.0,
                    give_up=start + (refuse_ms if refuse_ms is not None else wall_ms) / 1000.0,
                    wall_ms=wall_ms, target=max_length)
    if not 0 <= candidates_within <= 1:
        raise ValueError(f"candidates_within must be a fraction from 0 to 1, not {candidates_within!r}")
    best = _Best(price, candidates, candidates_within)

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
    _first(_Race(views, tables, PREMOVES_QUICK), best, limit, first_workers)
    if max_length is None or metric != "htm":
        left_ms = (limit.deadline - time.perf_counter()) * 1000.0
        if left_ms > 0:
            race = _Race(views, tables, PREMOVES if left_ms >= SHORT_STAGE_MS else PREMOVES_SHORT)
            if metric == "htm":
                _shorter(race, best, limit.deadline, workers)
            else:
                _cheaper(race, best, limit.deadline, max_length, workers)
    assert best.moves is not None
    others = tuple(_solution(c, list(m), price, t0, max_length) for _, _, m in best.kept
                   if list(m) != best.moves)[:candidates - 1]
    return _solution(c, best.moves, price, t0, max_length, others)
