"""The six-motor rig's timing compiled into a cost automaton.

The solver's search in its own metric (solver/costsearch.py) reads a cost
automaton and nothing else: ``next[state, move, k]`` and ``cost[state,
move, k]``, numbers only. A flipper is compiled into one by
robot/rig/mechanisms/automaton.py; this module does the same for the
six-motor rig, so that one search looks for every robot's cheapest solution
in that robot's own time.

What a six-motor plan takes (robot/rig/motion.py) is the sum, over
consecutive steps, of the ticks from one step's start to the next one's
(the *gap*: the whole step, or with corner cutting only up to the tick at
which it has the overlap's steps left), plus the last step's whole time.
A gap depends on the two steps only: their motors, quarter turns, and
whether the overlap model allows corner cutting between them. A half turn
can go either way round; each way is an outcome of its own here, so the
automaton's price (the least over its paths) chooses the directions as the
planner's dynamic programme does.

Two moves on opposite faces that follow each other are one step (both
motors at once, :func:`solver.group_steps`): the second move makes the step
before it a pair. So a state remembers the last step, and when that step is
a single move, the step before it too: a move that joins the last step
re-prices the gap into it. The cost of a move is what it adds to the time
of the solution so far, ended there::

    T(steps) = gap(s1, s2) + ... + gap(s(n-1), sn) + whole(sn)

so the costs along a solution add up to ``T`` of its steps, and none is
negative (checked when compiling: an overlap never saves more than the
step after it takes). The states that price every future alike are merged
(Moore's partition refinement), which leaves the search a few hundred.

What ``T`` leaves out: the rig's schedule (robot/rig/timing.py
``schedule``) also lets a step overlap only once the step two before it is
done, and starts a step that does not overlap only when every earlier one
is done, which the gaps cannot see. Both can only make the rig later, never
earlier, so the automaton's price is a lower bound of the planned
estimate, ``price <= estimate_ticks(plan(solution))``, equal to it where
those waits do not bind (tests/test_motion_automaton.py checks both, on a
set-up with 70 degrees of corner cutting where they do bind); on every
set-up shipped they never bind, so there it is the estimate. The search's answer is planned again
exactly, so what the rig turns is what :func:`robot.rig.motion.plan` makes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from solver import Move

from .motion import HALF_TURNS, MotorStep, _Planner, estimate_s, plan
from .timing import move_ticks, ticks_to_s

if TYPE_CHECKING:
    from .config import Config

Variant = tuple[tuple[Move, ...], tuple[int, ...]]
"""A step as the rig makes it: its moves (one, or two on opposite faces, in
face order) and each one's signed quarter turns."""


@dataclass(frozen=True)
class RigAutomaton:
    """``next[s, m, k]``: the k-th state after solver move m from state s (-1
    past the last), ``cost[s, m, k]`` its seconds; ``start`` the state before
    the first move. ``ticks`` holds the same costs in the rig's ticks (exact
    integers)."""

    next: np.ndarray
    cost: np.ndarray
    ticks: np.ndarray
    start: int


def _options(move: Move, half_turns: str) -> tuple[int, ...]:
    """The signed quarter turns a move may be made with (clockwise first)."""
    if move.power == 1:
        return (1,)
    if move.power == 3:
        return (-1,)
    return (2, -2) if half_turns == "short" else (2,)


def _key(config: Config, half_turns: str) -> tuple:
    """What the automaton depends on: each motor's number, steps, direction
    and profile, the overlap model, and how half turns may go."""
    faces = tuple((m.motor, m.steps_per_quarter, m.invert) for _, m in sorted(config.motors.items()))
    return faces, tuple(config.profiles()), config.overlap_model(), half_turns


_CACHE: dict[tuple, RigAutomaton] = {}


def compile_rig(config: Config, *, half_turns: str | None = None) -> RigAutomaton:
    """The cost automaton of ``config``'s six-motor rig (half turns as
    ``half_turns``, default the config's ``[cube] half_turns``). Compiled
    once per distinct set of mechanics, in well under a second."""
    half_turns = half_turns or config.cube.half_turns
    if half_turns not in HALF_TURNS:
        raise ValueError(f"half_turns must be one of {', '.join(HALF_TURNS)}, not {half_turns!r}")
    key = _key(config, half_turns)
    if key not in _CACHE:
        if len(_CACHE) > 16:
            _CACHE.clear()
        _CACHE[key] = _compile(config, half_turns)
    return _CACHE[key]


def _compile(config: Config, half_turns: str) -> RigAutomaton:
    pl = _Planner(config)
    profiles = pl.profiles
    parts: dict[Variant, tuple[tuple[int, int], ...]] = {}
    whole: dict[Variant, int] = {}

    def variant(moves: tuple[Move, ...], quarters: tuple[int, ...]) -> Variant:
        v = tuple(sorted(zip(moves, quarters), key=lambda x: x[0].face))
        key = (tuple(m for m, _ in v), tuple(q for _, q in v))
        if key not in parts:
            parts[key] = pl.parts(key[0], key[1])
            whole[key] = sum(move_ticks(parts[key], profiles))
        return key

    gaps: dict[tuple[Variant, Variant], int] = {}

    def gap(a: Variant, b: Variant) -> int:
        if (a, b) not in gaps:
            k = pl.overlap(a[0], a[1], parts[a], b[0], b[1], parts[b])
            gaps[a, b] = pl.gap(parts[a], k)
        return gaps[a, b]

    moves = [Move.from_index(i) for i in range(18)]
    singles = [variant((m,), (q,)) for m in moves for q in _options(m, half_turns)]
    pairs = [variant((a, b), (qa, qb)) for a in moves for b in moves if b.face == a.face + 3
             for qa, qb in itertools.product(_options(a, half_turns), _options(b, half_turns))]
    # States: 0 the start; ("S", before, last) a single-move last step and the
    # step before it (None: none); ("P", last) a two-move last step.
    befores: list[Variant | None] = [None, *singles, *pairs]
    states: list[tuple] = [("start",)]
    states += [("S", b, s) for b in befores for s in singles]
    states += [("P", p) for p in pairs]
    number = {st: i for i, st in enumerate(states)}
    width = 2 if half_turns == "short" else 1
    nxt = np.full((len(states), 18, width), -1, dtype=np.int64)
    ticks = np.zeros((len(states), 18, width), dtype=np.int64)
    for i, st in enumerate(states):
        for m in moves:
            for k, q in enumerate(_options(m, half_turns)):
                one = variant((m,), (q,))
                to: tuple
                if st[0] == "start":
                    to, c = ("S", None, one), whole[one]
                elif st[0] == "P":
                    last = st[1]
                    to, c = ("S", last, one), gap(last, one) + whole[one] - whole[last]
                else:
                    _, before, last = st
                    if m.face % 3 == last[0][0].face % 3 and m.face != last[0][0].face:
                        both = variant((last[0][0], m), (last[1][0], q))
                        into = (gap(before, both) - gap(before, last)) if before is not None else 0
                        to, c = ("P", both), into + whole[both] - whole[last]
                    else:
                        to, c = ("S", last, one), gap(last, one) + whole[one] - whole[last]
                if c < 0:  # pragma: no cover - an overlap longer than the step after it
                    raise ValueError(f"the rig's overlap saves more than {m} takes: the costs would be "
                                     "negative; lower the [cube] overlap angles")
                nxt[i, m.index, k] = number[to]
                ticks[i, m.index, k] = c
    nxt, ticks, start = _minimise(nxt, ticks, 0)
    return RigAutomaton(nxt, np.array([[[ticks_to_s(int(t)) for t in row] for row in s] for s in ticks],
                                      dtype=np.float64).reshape(ticks.shape), ticks, start)


def _minimise(nxt: np.ndarray, ticks: np.ndarray, start: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The same automaton with the states that price every future alike
    merged into one (Moore's partition refinement: states are told apart
    only by their outcomes' costs and the classes they lead to), and only
    the states reachable from ``start`` kept."""
    n = nxt.shape[0]
    cls = np.zeros(n, dtype=np.int64)
    count = 1
    while True:
        sig: dict[tuple, int] = {}
        new = np.empty(n, dtype=np.int64)
        for s in range(n):
            row = tuple(tuple(sorted((int(ticks[s, m, k]), int(cls[nxt[s, m, k]]))
                                     for k in range(nxt.shape[2]) if nxt[s, m, k] >= 0)) for m in range(18))
            new[s] = sig.setdefault((int(cls[s]), row), len(sig))
        if len(sig) == count:
            break
        cls, count = new, len(sig)
    # one representative a class, numbered from the start's in the order reached
    order = [int(cls[start])]
    index = {order[0]: 0}
    rep = {int(cls[s]): s for s in range(n - 1, -1, -1)}
    i = 0
    while i < len(order):
        s = rep[order[i]]
        for m in range(18):
            for k in range(nxt.shape[2]):
                if nxt[s, m, k] >= 0:
                    c = int(cls[nxt[s, m, k]])
                    if c not in index:
                        index[c] = len(order)
                        order.append(c)
        i += 1
    out_n = np.full((len(order), 18, nxt.shape[2]), -1, dtype=np.int64)
    out_t = np.zeros((len(order), 18, nxt.shape[2]), dtype=np.int64)
    for j, c in enumerate(order):
        s = rep[c]
        for m in range(18):
            outs = sorted({(int(ticks[s, m, k]), index[int(cls[nxt[s, m, k]])])
                           for k in range(nxt.shape[2]) if nxt[s, m, k] >= 0})
            for k, (t, to) in enumerate(outs):
                out_n[j, m, k] = to
                out_t[j, m, k] = t
    return out_n, out_t, 0


def price_ticks(auto: RigAutomaton, moves: list[int]) -> int:
    """The automaton's price of a solution (move indices) in ticks: the least
    over the half turns' directions."""
    best = {auto.start: 0}
    for m in moves:
        new: dict[int, int] = {}
        for s, c in best.items():
            for k in range(auto.next.shape[2]):
                t = int(auto.next[s, m, k])
                if t < 0:
                    break
                v = c + int(auto.ticks[s, m, k])
                if v < new.get(t, v + 1):
                    new[t] = v
        best = new
    return min(best.values())


def best_solution(facelets: str, config: Config, budget_s: float, *,
                  candidates: Sequence[Sequence[Move]] = (), max_length: int | None = None,
                  workers: int | None = None, **space: int) -> tuple[list[Move], list[MotorStep]] | None:
    """The solution of ``facelets`` that the search in the rig's own time
    finds within ``budget_s`` seconds and that beats the fastest of
    ``candidates`` (their exact plans are the bar), with its exact plan
    (:func:`robot.rig.motion.plan`); None when it found none faster, or
    none of at most ``max_length`` moves. Checked on the cube. ``space``
    widens what is searched (:func:`solver.costsearch.cheapest`'s ``extra``
    and ``p2extra``; benchmarks/motion_search.py), its defaults otherwise."""
    from solver import group_steps, parse_facelets
    from solver import tables as tb
    from solver.costsearch import cheapest

    cube = parse_facelets(facelets)
    if budget_s <= 0 or cube.is_solved():  # before the automaton is compiled: 0.3-0.6 s once a process
        return None
    auto = compile_rig(config)
    bar = float("inf")
    for c in candidates:
        bar = min(bar, estimate_s(plan(group_steps(list(c)), config), config))
    found, _, _ = cheapest(cube, auto.next, auto.cost, auto.start, tb.load(), budget_s=budget_s,
                           beat=bar, workers=workers, **space)
    if found is None or (max_length is not None and len(found) > max_length):
        return None
    moves = [Move.from_index(m) for m in found]
    if not cube.apply(moves).is_solved():  # pragma: no cover - a search bug
        raise AssertionError(f"{' '.join(map(str, moves))} does not solve the cube")
    steps = plan(group_steps(moves), config)
    if estimate_s(steps, config) >= bar:
        return None
    return moves, steps
