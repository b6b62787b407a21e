"""The two-phase solver through its public API. Every solution is applied to
the cube it claims to solve."""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver import (
    SOLVED,
    SOLVED_CUBE,
    Cube,
    CubeError,
    Move,
    Solution,
    SolveError,
    api,
    axial_cost,
    format_moves,
    group_steps,
    parse_moves,
    prepare,
    qtm,
    random_cube,
    random_scramble,
    solve,
)

seeds = st.integers(min_value=0, max_value=2**64)
slow = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def tables():
    prepare()  # the first call may build the tables (cold cache in CI)


def check(cube: Cube, sol: Solution) -> None:
    assert cube.apply(sol.moves).is_solved(), (cube.to_facelets(), sol.moves)
    moves = parse_moves(sol.moves)
    assert sol.length == len(moves)
    assert [m for step in sol.steps for m in step] == moves
    assert all(isinstance(step, tuple) for step in sol.steps)
    assert sol.steps == group_steps(moves)
    assert cube.apply([m for step in sol.steps for m in step]).is_solved()
    assert sol.elapsed_ms >= 0


def test_solved_cube_gives_empty_solution():
    for cube in (SOLVED, SOLVED_CUBE, "aaaaaaaaabbbbbbbbbcccccccccdddddddddeeeeeeeeefffffffff"):
        sol = solve(cube)
        assert (sol.moves, sol.length, sol.cost, sol.steps) == ("", 0, 0.0, ())


def test_three_moves_come_back_as_three():
    cube = SOLVED_CUBE.apply("R U F")
    sol = solve(cube)
    check(cube, sol)
    assert sol.moves == "F' U' R'"


def test_facelet_string_in_any_symbols():
    cube = SOLVED_CUBE.apply("R U2 D' B L2")
    text = cube.to_facelets().translate(str.maketrans("URFDLB", "wrgyob"))
    sol = solve(text)
    check(cube, sol)
    assert sol.length == 5


@given(seeds)
@slow
def test_random_states_solve_within_20(seed):
    cube = random_cube(seed)
    sol = solve(cube, max_length=20, budget_ms=5000)
    check(cube, sol)
    assert sol.length <= 20


@given(st.integers(0, 7), seeds)
@slow
def test_short_scrambles_come_back_no_longer(n, seed):
    moves = random_scramble(n, seed)
    cube = SOLVED_CUBE.apply(moves)
    sol = solve(cube, max_length=20, budget_ms=50)
    check(cube, sol)
    assert sol.length <= n


def test_short_scramble_is_solved_optimally():
    # R U R' U' has no shorter solution than 4 moves; "R L R'" is 1 move
    for moves, optimal in (("R U R' U'", 4), ("R L R'", 1), ("F2 B2 U2 D2 R2 L2", 6)):
        cube = SOLVED_CUBE.apply(moves)
        sol = solve(cube, max_length=30)
        check(cube, sol)
        assert sol.length == optimal, (moves, sol.moves)


def test_budget_gives_shorter_solutions_than_first_hit():
    cube = random_cube(2024)
    quick = solve(cube, max_length=30, budget_ms=0)
    good = solve(cube, budget_ms=300)
    check(cube, quick)
    check(cube, good)
    assert good.length <= quick.length and good.length <= 20


def test_inverse_and_orientation_mapping_on_many_states():
    # exercises all six searches: with a tiny budget whichever finds first wins
    for seed in range(30):
        cube = random_cube(seed)
        check(cube, solve(cube, budget_ms=1))


@pytest.mark.parametrize("metric", ["htm", "qtm", "axial"])
def test_metrics(metric):
    cube = random_cube(77)
    sol = solve(cube, metric=metric, budget_ms=60)
    check(cube, sol)
    assert sol.metric == metric
    if metric == "htm":
        assert sol.cost == sol.length
    elif metric == "qtm":
        assert sol.cost == qtm(sol.moves)
    else:
        assert sol.cost == axial_cost(sol.moves)


def test_axial_metric_is_not_worse_than_htm_search_in_axial_cost():
    total_axial = total_htm = 0.0
    for seed in range(12):
        cube = random_cube(seed + 500)
        a = solve(cube, metric="axial", budget_ms=100)
        h = solve(cube, budget_ms=100)
        check(cube, a)
        total_axial += a.cost
        total_htm += axial_cost(h.moves)
    assert total_axial <= total_htm


def test_custom_turn_costs():
    cube = random_cube(3)
    sol = solve(cube, metric="axial", quarter_cost=1.0, half_cost=3.0, budget_ms=30)
    check(cube, sol)
    assert sol.cost == axial_cost(sol.moves, 1.0, 3.0)


def test_invalid_cube_raises_validator_error():
    bad = "UUUUUUUUFURRRRRRRRFFRFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
    with pytest.raises(CubeError) as e:
        solve(bad)
    assert e.value.kind == "corner-twist"
    with pytest.raises(CubeError):
        solve(Cube(cp=(1, 0, 2, 3, 4, 5, 6, 7)))  # a single corner swap: parity


def test_bad_options_raise_value_error():
    with pytest.raises(ValueError, match="metric"):
        solve(SOLVED, metric="stm")
    with pytest.raises(ValueError):
        solve(SOLVED, max_length=-1)


def test_to_dict():
    d = solve(SOLVED_CUBE.apply("R U2")).to_dict()
    assert set(d) == {"moves", "length", "cost", "elapsed_ms", "steps"}
    assert d["moves"] == "U2 R'" and d["length"] == 2 and d["steps"] == [["U2"], ["R'"]]


# -- steps and axial cost --------------------------------------------------
def test_group_steps_pairs_opposite_faces_only():
    steps = group_steps("R U D2 F' B L R")
    assert [[str(m) for m in s] for s in steps] == [["R"], ["U", "D2"], ["F'", "B"], ["L", "R"]]
    assert [[str(m) for m in s] for s in group_steps("U D U")] == [["U", "D"], ["U"]]
    assert group_steps("") == ()
    assert all(isinstance(m, Move) for s in group_steps("R L") for m in s)


def test_axial_cost():
    assert axial_cost("R U D2 F' B") == 1 + 1.5 + 1
    assert axial_cost("R2 L2", quarter_cost=1, half_cost=2) == 2
    assert axial_cost("") == 0
    # 15 steps of 1.2 add up to 17.999999999999996 in binary floating point
    assert axial_cost("R2 U2 " * 7 + "R2", quarter_cost=1.0, half_cost=1.2) == 18.0


@given(st.lists(st.integers(0, 17), max_size=25))
def test_axial_cost_bounds(indices):
    moves = [Move.from_index(i) for i in indices]
    text = format_moves(moves)
    steps = group_steps(text)
    assert sum(len(s) for s in steps) == len(moves)
    assert all(len(s) <= 2 for s in steps)
    assert len(moves) / 2 <= axial_cost(text) <= 1.5 * len(moves)


def test_a_max_length_that_cannot_be_met_is_refused_at_once():
    """A random cube is more than SHORT moves from solved, and below that
    the search is optimal: a max_length it cannot meet is a SolveError at
    once, never a longer solution (it used to relax its bound)."""
    for seed in range(6):
        cube = random_cube(seed)
        for max_length in (0, 1, 5, 7):
            with pytest.raises(SolveError, match=f"at most {max_length} moves") as e:
                solve(cube, max_length=max_length)
            assert e.value.kind == "max-length" and not isinstance(e.value, CubeError)
    # a near cube: its true distance is known, and one short of it is refused
    cube = SOLVED_CUBE.apply("R U R' U'")
    with pytest.raises(SolveError, match="the cube is 4 moves from solved"):
        solve(cube, max_length=3, metric="axial")
    assert solve(cube, max_length=4, metric="axial").length == 4


def test_a_max_length_the_search_cannot_find_is_refused_after_the_limit():
    """Between SHORT and 20 moves a refusal waits max(budget, REFUSE_AFTER_MS)
    (or less, if the search runs out of sequences that short)."""
    cube = random_cube(5)
    t0 = time.perf_counter()
    with pytest.raises(SolveError, match="no solution of at most 12 moves") as e:
        solve(cube, max_length=12, budget_ms=0)
    assert e.value.kind == "max-length"
    assert time.perf_counter() - t0 < api.REFUSE_AFTER_MS / 1000 + 1.0
    assert e.value.to_dict() == {"kind": "max-length", "message": str(e.value)}


@given(seeds, st.sampled_from([18, 19, 20, 25]), st.sampled_from(["htm", "axial", "qtm"]))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_max_length_is_a_promise(seed, max_length, metric):
    """The answer has at most max_length moves and solves the cube, or (only
    below 20) the call raises SolveError."""
    cube = random_cube(seed)
    try:
        sol = solve(cube, max_length=max_length, budget_ms=20, metric=metric)
    except SolveError as e:
        assert max_length < api.GODS_NUMBER and e.kind == "max-length", e
        return
    check(cube, sol)
    assert sol.length <= max_length


@given(seeds)
@slow
def test_a_max_length_of_20_always_succeeds_quickly(seed):
    cube = random_cube(seed)
    sol = solve(cube, max_length=20, budget_ms=0)
    check(cube, sol)
    assert sol.length <= 20 and sol.elapsed_ms < 2000


@given(seeds, st.integers(1, 4), st.sampled_from([{}, {"max_length": 20}, {"metric": "axial"}]))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_number_of_workers_gives_right_answers(seed, workers, options):
    """Threads share the bound and the best solution: whatever their number
    and timing, the answer solves the cube and keeps max_length."""
    cube = random_cube(seed)
    sol = solve(cube, budget_ms=20, workers=workers, **options)
    assert cube.apply(sol.moves).is_solved() and sol.length <= options.get("max_length", 30)


def test_one_worker_is_deterministic():
    """With one thread the slices run in a fixed order, so a search that
    does not hit its budget gives the same answer every time."""
    for seed in range(5):
        cube = random_cube(seed)
        first = {solve(cube, max_length=20, budget_ms=60_000, workers=1).moves for _ in range(3)}
        assert len(first) == 1
        assert cube.apply(first.pop()).is_solved()


def test_workers_are_checked():
    from solver import MAX_WORKERS, default_workers

    assert 1 <= default_workers() <= MAX_WORKERS
    for bad in (0, -1, MAX_WORKERS + 1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="workers must be a whole number"):
            solve(random_cube(1), workers=bad)


def test_threads_work_in_a_forked_child():
    """A child forked after a solve has none of the parent's threads; its
    solves must not wait for them."""
    import multiprocessing

    solve(random_cube(2), budget_ms=5, workers=2)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        moves = pool.apply_async(_solve_in_child, (NEAR,)).get(timeout=60)
    assert SOLVED_CUBE.apply(NEAR).apply(moves).is_solved()


NEAR = "R U F' L2 D B' R2 U' F"


def _solve_in_child(scramble: str) -> str:
    # a cube near solved: every view runs out of shorter solutions well
    # before the budget, and the solve waits for its threads' last slices
    return solve(SOLVED_CUBE.apply(scramble), budget_ms=60_000, workers=2).moves


@pytest.mark.parametrize("seed", [3, 8])
def test_candidates_are_near_ties_of_the_cheapest(seed):
    """solve(candidates=N): the others solve the cube, differ from the
    answer and from each other, and cost at most CANDIDATES_WITHIN more
    (the search's bound stays the cheapest's, so asking costs it nothing)."""
    from solver.api import CANDIDATES_WITHIN

    cube = random_cube(seed)
    sol = solve(cube, metric="axial", budget_ms=50, workers=1, candidates=8)
    assert len(sol.others) <= 7
    assert len({sol.moves, *(o.moves for o in sol.others)}) == 1 + len(sol.others)
    for o in sol.others:
        assert cube.apply(o.moves).is_solved()
        assert sol.cost <= o.cost <= sol.cost * (1 + CANDIDATES_WITHIN) + 1e-9
    with pytest.raises(ValueError, match="candidates_within"):
        solve(cube, candidates=2, candidates_within=2.0)
