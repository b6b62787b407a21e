"""The solution a mechanism makes cheapest, searched for in its own metric.

:func:`~.planner.cheapest` can only choose among the few short solutions
the solver hands it, and on a flipper a short solution is not a cheap
one: what it costs is how its faces follow each other (the front face
comes down with one flip, any other takes two moves). So here the solver's
two-phase search itself is steered by the mechanism: the mechanism is
compiled into a cost automaton (:mod:`.automaton`: numbers, no rig
knowledge crosses into solver/), and :func:`solver.costsearch.cheapest`
looks for the solution cheapest in it, starting from the price of the
planner's best candidate as the one to beat. Whatever it finds is planned
again by :func:`~.planner.plan`, so the answer is an exact plan checked
move by move, and the better of it and the candidates' best is returned:
never worse than the planner alone.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from solver import Move, parse_facelets, solve
from solver import tables as tb
from solver.costsearch import cheapest as cost_search

from .automaton import compile_automaton
from .base import Mechanism, State
from .planner import MOVE_WEIGHT, MechanismPlan, cheapest, plan

BUDGET_S = 1.0
"""Default search time per cube: a robot solve takes tens of seconds, and the
search's gains flatten after about a second (docs/benchmarks.md)."""
CANDIDATES = 8
CANDIDATE_MS = 100


def best_solution(facelets: str, mech: Mechanism, start: State | None = None, budget_s: float = BUDGET_S, *,
                  candidates: Sequence[str | Sequence[Move]] | None = None,
                  move_weight: float = MOVE_WEIGHT,
                  workers: int | None = None) -> tuple[list[Move], MechanismPlan]:
    """The solution of the cube ``facelets`` that ``mech`` makes cheapest from
    ``start`` (its own start if None) and its exact plan: the solver's
    candidates (``candidates``, or asked for here with part of the budget)
    planned, then the search in the mechanism's metric with the rest of
    ``budget_s`` seconds. The price is planned seconds plus ``move_weight``
    per robot move, and so is the plan's (the planner's ``weighed``
    objective): the plan returned is the one the search priced. The search
    runs on ``workers`` threads (None: every core this process may use; the
    rig stands still while it runs). The solution is checked on the cube."""
    t0 = time.perf_counter()
    cube = parse_facelets(facelets)
    if cube.is_solved():
        return [], plan([], mech, start, objective="weighed", move_weight=move_weight)
    if candidates is None:
        s = solve(cube, budget_ms=CANDIDATE_MS, candidates=CANDIDATES, workers=1)
        candidates = [s.moves] + [o.moves for o in s.others]
    _, p = cheapest(candidates, mech, start=start, objective="weighed", move_weight=move_weight)
    auto = compile_automaton(mech, start, move_weight)
    left = budget_s - (time.perf_counter() - t0)
    if left > 0:
        found, _, _ = cost_search(cube, auto.next, auto.cost, auto.start, tb.load(), budget_s=left,
                                  beat=p.weighed(move_weight),
                                  workers=workers)
        if found is not None:
            q = plan([Move.from_index(m) for m in found], mech, start, objective="weighed",
                     move_weight=move_weight)
            if q.weighed(move_weight) < p.weighed(move_weight):
                p = q
    moves = list(p.solution)
    if not cube.apply(moves).is_solved():  # pragma: no cover - a search or planner bug
        raise AssertionError(f"{' '.join(map(str, moves))} does not solve the cube")
    return moves, p
