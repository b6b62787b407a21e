"""The search in a mechanism's own metric (robot/rig/mechanisms/search.py on
solver/costsearch.py): its solutions solve the cube, its price is what the
exact planner pays for the solution it returns, and it is never worse than
the planner choosing among the solver's candidates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot.rig.config import parse_config
from robot.rig.mechanisms import Mechanism, apply_to_cube, cheapest, mechanism_for, plan
from robot.rig.mechanisms.automaton import compile_automaton, price
from robot.rig.mechanisms.search import best_solution
from solver import SOLVED, Move, parse_moves, random_cube, solve
from solver import tables as tb
from solver.costsearch import INF
from solver.costsearch import cheapest as cost_search

KINDS = ("flipper", "two-gripper")


def mech(kind: str) -> Mechanism:
    m = mechanism_for(parse_config(f'[rig]\nkind = "{kind}"\n'))
    assert m is not None
    return m


MECHS = {k: mech(k) for k in KINDS}


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=8, deadline=None)
@given(moves=st.lists(st.integers(0, 17), max_size=25))
def test_the_automaton_prices_a_solution_as_the_planner_does_in_the_order_given(kind, moves):
    m = MECHS[kind]
    auto = compile_automaton(m)
    p = plan([Move.from_index(x) for x in moves], m, reorder=False)
    assert price(auto, moves) == pytest.approx(p.seconds + auto.move_weight * p.moves, abs=1e-6)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("views", [1, 6])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(1, 10**6))
def test_the_search_solves_the_cube_at_the_price_it_says(kind, views, seed):
    m = MECHS[kind]
    auto = compile_automaton(m)
    cube = random_cube(seed)
    found, cost, stats = cost_search(cube, auto.next, auto.cost, auto.start, tb.load(), budget_s=0.3,
                                     views=views)
    assert found is not None and cost < INF and stats["nodes"] >= 0
    assert cube.apply([Move.from_index(x) for x in found]).is_solved()
    assert price(auto, found) == pytest.approx(cost, abs=1e-6)
    # the exact plan of that solution costs what the search said, or less
    # when it may swap turns of opposite faces
    p = plan([Move.from_index(x) for x in found], m, reorder=False)
    assert p.seconds + auto.move_weight * p.moves == pytest.approx(cost, abs=1e-6)
    assert apply_to_cube(cube.to_facelets(), p.actions, m).is_solved()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(1, 10**6))
def test_best_solution_is_never_worse_than_the_planner_over_the_candidates(kind, seed):
    m = MECHS[kind]
    cube = random_cube(seed)
    s = solve(cube, candidates=4, workers=1, budget_ms=50)
    cands = [s.moves] + [o.moves for o in s.others]
    _, p0 = cheapest(cands, m)
    moves, p = best_solution(cube.to_facelets(), m, budget_s=0.3, candidates=cands)
    assert cube.apply(moves).is_solved()
    assert apply_to_cube(cube.to_facelets(), p.actions, m).is_solved()
    assert p == plan(moves, m)
    w = compile_automaton(m).move_weight
    assert p.seconds + w * p.moves <= p0.seconds + w * p0.moves + 1e-9


def test_best_solution_from_another_start_and_of_a_solved_cube():
    m = MECHS["flipper"]
    start = plan(parse_moves("R"), m).end
    cube = random_cube(7)
    moves, p = best_solution(cube.to_facelets(), m, start, budget_s=0.2)
    assert cube.apply(moves).is_solved()
    assert p == plan(moves, m, start)
    moves, p = best_solution(SOLVED, m, start)
    assert moves == [] and p.moves == 0
