"""The search in a mechanism's own metric (robot/rig/mechanisms/search.py on
solver/costsearch.py): its solutions solve the cube, its price is what the
exact planner pays for the solution it returns, and it is never worse than
the planner choosing among the solver's candidates."""

from __future__ import annotations

import heapq
import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mechanism_kinds import MECHS, RIGS

from robot.rig.mechanisms import apply_to_cube, cheapest, plan
from robot.rig.mechanisms.automaton import compile_automaton, price
from robot.rig.mechanisms.search import best_solution
from solver import SOLVED, Move, parse_moves, random_cube, solve
from solver import tables as tb
from solver.costsearch import INF, MAXD, NOFACE, _View, togo_bounds
from solver.costsearch import cheapest as cost_search
from solver.search import P2_MAX, Tables


def weighed_least(m, moves, w):
    """The least seconds + ``w`` per robot move of making ``moves`` in order: a
    shortest path over (mechanism state, turns made), the test's own."""
    g, n = m.graph, len(moves)
    best, heap = {(0, 0): 0.0}, [(0.0, 0, 0)]
    while heap:
        c, k, i = heapq.heappop(heap)
        if i == n:
            return c
        if c > best[(k, i)]:
            continue
        for _action, after, seconds, made in g.edges[k]:
            if made is not None and (i == n or made.index != moves[i]):
                continue
            node = (after, i + (made is not None))
            if c + seconds + w < best.get(node, float("inf")):
                best[node] = c + seconds + w
                heapq.heappush(heap, (c + seconds + w, *node))
    raise AssertionError("no plan")


@pytest.mark.parametrize("kind", RIGS)
@settings(max_examples=8, deadline=None)
@given(moves=st.lists(st.integers(0, 17), max_size=25))
@example(moves=[7, 3, 17, 2, 1, 4])
def test_the_automaton_prices_a_solution_between_the_planners_fastest_plan_and_its_price(kind, moves):
    m = MECHS[kind]
    auto = compile_automaton(m)
    p = plan([Move.from_index(x) for x in moves], m, reorder=False)
    least_moves = plan([Move.from_index(x) for x in moves], m, reorder=False, objective="moves").moves
    # the planner puts time first, the automaton weighs time and moves together: the planner's plan is
    # never slower than the automaton's cheapest, and by the weighed price never cheaper
    # (hypothesis found F2 R B' U' U2 R2 on a flipper: 8.675 s in 29 moves against 8.725 s in 27)
    got = price(auto, moves)
    assert got == pytest.approx(weighed_least(m, moves, auto.move_weight), abs=1e-9)
    # the planner's weighed objective pays exactly the automaton's price
    w = plan([Move.from_index(x) for x in moves], m, reorder=False, objective="weighed")
    assert w.weighed(auto.move_weight) == pytest.approx(got, abs=1e-9)
    assert p.seconds - 1e-9 <= got - auto.move_weight * least_moves
    assert got <= p.seconds + auto.move_weight * p.moves + 1e-9


def least_by_enumeration(auto, k, face, backward):
    """The test's own :func:`togo_bounds` row: every sequence of ``k`` moves,
    no two in a row on one face, the first (forward) or the last (backward)
    not on ``face``, followed through the automaton by hand."""
    ns = auto.next.shape[0]
    out = [INF] * ns
    for seq in itertools.product(range(18), repeat=k):
        faces = [face, *(x // 3 for x in seq)] if not backward else [*(x // 3 for x in seq), face]
        if any(a == b for a, b in itertools.pairwise(faces)):
            continue
        for s0 in range(ns) if not backward else [auto.start]:
            costs = {s0: 0.0}
            for x in seq:
                after: dict[int, float] = {}
                for s, c in costs.items():
                    for t, w in zip(auto.next[s, x], auto.cost[s, x], strict=True):
                        if t >= 0 and c + w < after.get(int(t), INF):
                            after[int(t)] = c + w
                costs = after
            if backward:
                for t, c in costs.items():
                    out[t] = min(out[t], c)
            elif costs:
                out[s0] = min(out[s0], min(costs.values()))
    return out


@pytest.mark.parametrize("kind", RIGS)
@pytest.mark.parametrize("backward", [False, True])
def test_the_bounds_on_what_is_left_are_the_least_any_moves_cost(kind, backward):
    """The search drops a prefix by these bounds: one too high would lose the
    cheapest solution, so each entry must be exactly the least (up to two
    moves, against enumeration), and "k or more" never above "k"."""
    auto = compile_automaton(MECHS[kind])
    exact, atleast = togo_bounds(auto.next, auto.cost, auto.start, 8, backward)
    for k in range(3):
        for face in (0, 4, NOFACE):
            assert exact[k, face] == pytest.approx(least_by_enumeration(auto, k, face, backward), abs=1e-9)
    assert (atleast <= exact).all() and (np.diff(atleast, axis=0) >= -1e-12).all()
    assert np.isfinite(atleast).all()
    if not backward:  # forward, a move more never costs less: "k or more" is "k"
        assert (atleast == exact).all()


@pytest.mark.parametrize("kind", RIGS)
def test_each_view_bounds_its_own_moves(kind):
    """The bounds are worked out once a direction and their faces renamed for
    each turned view: the same as working them out on the view's automaton."""
    auto = compile_automaton(MECHS[kind])
    depth = MAXD + P2_MAX
    t = Tables.select(tb.load())
    for r in range(3):
        for inverse in (False, True):
            v = _View(random_cube(r + 1), r, inverse, auto.next, auto.cost, auto.start,
                      togo_bounds(auto.next, auto.cost, auto.start, depth, inverse), tuple(t), t)
            own_exact, own_min = togo_bounds(v.nxt, v.cost, auto.start, depth, inverse)
            assert np.array_equal(v.togo_exact, own_exact) and np.array_equal(v.togo_min, own_min)


@pytest.mark.parametrize("kind", RIGS)
@pytest.mark.parametrize(("views", "workers"), [(1, 1), (6, 1), (6, 2)])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(1, 10**6))
@example(seed=234445)  # its 20-move answer is 0.02 s faster in one robot move more when planned time first
def test_the_search_solves_the_cube_at_the_price_it_says(kind, views, workers, seed):
    m = MECHS[kind]
    auto = compile_automaton(m)
    cube = random_cube(seed)
    found, cost, stats = cost_search(cube, auto.next, auto.cost, auto.start, tb.load(), budget_s=0.3,
                                     views=views, workers=workers)
    assert found is not None and cost < INF and stats["nodes"] >= 0
    assert cube.apply([Move.from_index(x) for x in found]).is_solved()
    assert price(auto, found) == pytest.approx(cost, abs=1e-6)
    # the exact plan of that solution in the search's own measure costs what the search said
    p = plan([Move.from_index(x) for x in found], m, reorder=False, objective="weighed")
    assert p.weighed(auto.move_weight) == pytest.approx(cost, abs=1e-6)
    assert apply_to_cube(cube.to_facelets(), p.actions, m).is_solved()


@pytest.mark.parametrize("kind", RIGS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(1, 10**6))
def test_best_solution_is_never_worse_than_the_planner_over_the_candidates(kind, seed):
    m = MECHS[kind]
    cube = random_cube(seed)
    s = solve(cube, candidates=4, workers=1, budget_ms=50)
    cands = [s.moves] + [o.moves for o in s.others]
    _, p0 = cheapest(cands, m, objective="weighed")
    moves, p = best_solution(cube.to_facelets(), m, budget_s=0.3, candidates=cands)
    assert cube.apply(moves).is_solved()
    assert apply_to_cube(cube.to_facelets(), p.actions, m).is_solved()
    assert p == plan(moves, m, objective="weighed")
    w = compile_automaton(m).move_weight
    assert p.seconds + w * p.moves <= p0.seconds + w * p0.moves + 1e-9


def test_the_weighed_plan_is_the_one_the_search_priced_where_time_first_differs():
    # found by the search for random_cube(234445) on the flipper: planned time
    # first it takes 29.195 s in 97 robot moves, weighed 29.215 s in 96
    m = MECHS["flipper"]
    auto = compile_automaton(m)
    moves = parse_moves("D F' B' L U2 R2 D L' F' R' B' U R' D' L2 D2 F2 U F2 U'")
    fast = plan(moves, m, reorder=False)
    weighed = plan(moves, m, reorder=False, objective="weighed")
    assert (round(fast.seconds, 3), fast.moves) == (29.195, 97)
    assert (round(weighed.seconds, 3), weighed.moves) == (29.215, 96)
    assert weighed.weighed() == pytest.approx(price(auto, [x.index for x in moves]), abs=1e-9)
    assert weighed.weighed() < fast.weighed()
    assert random_cube(234445).apply(moves).is_solved()
    assert apply_to_cube(random_cube(234445).to_facelets(), weighed.actions, m).is_solved()
    # cheapest chooses by the same measure
    assert cheapest([moves], m, objective="weighed")[1] == weighed
    with pytest.raises(ValueError, match="objective must be one of"):
        plan(moves, m, objective="fastest")


def test_best_solution_from_another_start_and_of_a_solved_cube():
    m = MECHS["flipper"]
    start = plan(parse_moves("R"), m).end
    cube = random_cube(7)
    moves, p = best_solution(cube.to_facelets(), m, start, budget_s=0.2)
    assert cube.apply(moves).is_solved()
    assert p == plan(moves, m, start, objective="weighed")
    moves, p = best_solution(SOLVED, m, start)
    assert moves == [] and p.moves == 0


@pytest.mark.parametrize("workers", [0, 65, 1.5, True])
def test_the_search_refuses_a_number_of_threads_it_cannot_use(workers):
    auto = compile_automaton(MECHS["flipper"])
    with pytest.raises(ValueError, match="workers must be a whole number from 1 to 64"):
        cost_search(random_cube(3), auto.next, auto.cost, auto.start, tb.load(), budget_s=0.1,
                    workers=workers)
