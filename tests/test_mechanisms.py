"""The flipper and two-gripper rigs: their geometry, their rules, and the
planner, which must be exactly optimal for the solution it is given (an
exhaustive search says so) and whose every plan, applied sticker by sticker,
makes what the solution makes."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_kinds import KINDS, MECHS, RIGS

from robot.rig.config import parse_config
from robot.rig.errors import UserError
from robot.rig.mechanisms import (
    HOME,
    Action,
    HeldCube,
    ImpossibleMove,
    Mechanism,
    apply_to_cube,
    cheapest,
    mechanism_for,
    plan,
    replay,
)
from robot.rig.mechanisms.orientation import all_orientations, face_move, name, parse, rotate
from robot.rig.mechanisms.planner import MOVE_WEIGHT, OBJECTIVES
from solver import SOLVED, Cube, Move, normalize_facelets, parse_facelets, random_cube, simplify

# ------------------------------------------------------------- geometry


def test_layer_turns_are_the_solvers_moves():
    f = random_cube(7).to_facelets()
    for face in range(6):
        for power in (1, 2, 3):
            held = HeldCube(f)
            held.turn(face, power)
            assert held.stickers == parse_facelets(f).apply([Move(face, power)]).to_facelets()


def test_24_orientations_and_their_names():
    os = all_orientations()
    assert len(os) == 24 and HOME in os
    for o in os:
        assert parse(name(o)) == o
        for slot in range(6):
            assert rotate(rotate(o, slot, 1), slot, 3) == o
            assert rotate(o, slot, 1) == rotate(o, (slot + 3) % 6, 3)  # the opposite side, the other way
    with pytest.raises(ValueError, match="mirror"):
        parse("URFDBL")


def test_whole_cube_turns_move_the_centres_as_the_orientation_says():
    held, o = HeldCube(SOLVED), HOME
    for slot, q in [(0, 1), (2, 1), (1, 3), (3, 2), (4, 1)]:
        held.rotate(slot, q)
        o = rotate(o, slot, q)
        assert "".join(held.face(s)[4] for s in range(6)) == name(o)


@given(seed=st.integers(0, 10**6),
       turns=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 3)), max_size=4))
def test_a_cube_held_turned_whole_reads_as_the_same_cube_turned_whole(seed, turns):
    """What a scan of a cube held any way must read (the run record's check
    of a simulated rig's scan): the same cube, the stickers named by the
    centres' slots, so a valid cube with its centres in place."""
    cube = random_cube(seed)
    held = HeldCube(cube.to_facelets())
    for slot, q in turns:
        held.rotate(slot, q)
    read = normalize_facelets(held.stickers)
    assert parse_facelets(read).to_facelets() == read  # a real cube: the same pieces, held another way
    assert "".join(read[9 * s + 4] for s in range(6)) == "URFDLB"
    assert normalize_facelets(cube.to_facelets()) == cube.to_facelets()
    for slot, q in reversed(turns):  # turned back, the names are the cube's own
        held.rotate(slot, -q)
    assert normalize_facelets(held.stickers) == cube.to_facelets()


def test_a_face_turn_is_clockwise_seen_from_outside_however_the_cube_is_held():
    # hold the cube with F at the bottom: turning the bottom slot turns F
    o = rotate(HOME, 4, 1)  # tipped forward
    assert name(o)[3] == "F"
    assert face_move(o, 3, 1) == Move(2, 1) and face_move(o, 3, -1) == Move(2, 3)


# ------------------------------------------------------------- rules


def test_flipper_refuses_what_it_cannot_do():
    m = MECHS["flipper"]
    s = m.start()
    with pytest.raises(ImpossibleMove, match="cover open"):
        m.apply(s, Action("turn", "", 1))
    closed = m.apply(s, Action("close", "cover")).after
    with pytest.raises(ImpossibleMove, match="flip with the cover closed"):
        m.apply(closed, Action("flip"))
    with pytest.raises(ImpossibleMove, match="spin with the cover closed"):
        m.apply(closed, Action("spin", "", 1))
    at_end = m.apply(s, Action("spin", "", 1)).after
    with pytest.raises(ImpossibleMove, match="range"):
        m.apply(at_end, Action("spin", "", 1))


def test_a_cover_that_flips_flips_from_either_position_and_comes_down_either_way():
    m = MECHS["cubotino"]
    assert m.cover_flips and not MECHS["flipper"].cover_flips
    s = m.start()
    closed = m.apply(s, Action("close", "cover")).after
    turned = m.apply(closed, Action("turn", "", 1)).after
    # turn, flip, turn: the cover never opens in between
    down = m.apply(turned, Action("flip", "close"))
    assert down.after[2] and down.after[0] == rotate(s[0], 4, 1) and down.turn is None
    assert m.apply(down.after, Action("turn", "", -1)).turn == (3, -1)
    up = m.apply(turned, Action("flip"))
    assert not up.after[2] and up.seconds < down.seconds  # the lifter comes down only to open
    assert m.apply(s, Action("flip")).seconds < up.seconds  # from open it rises less far
    with pytest.raises(ImpossibleMove, match="turn with the cover open"):
        m.apply(up.after, Action("turn", "", -1))
    with pytest.raises(ImpossibleMove, match="flip close"):
        m.apply(s, Action("flip", "twice"))
    # a flipper servo of its own cannot close the cover on its way down
    with pytest.raises(ImpossibleMove, match="cannot close the cover"):
        MECHS["flipper"].apply(s, Action("flip", "close"))


def test_two_grippers_refuse_what_they_cannot_do():
    m = MECHS["two-gripper"]
    s = m.start()
    open_d = m.apply(s, Action("open", "D")).after
    with pytest.raises(ImpossibleMove, match="fall"):
        m.apply(open_d, Action("open", "L"))
    # D's jaws turned a quarter while open, closed again: they lie across the L layer
    across = m.apply(m.apply(open_d, Action("rotate", "D", 1)).after, Action("close", "D")).after
    with pytest.raises(ImpossibleMove, match="across"):
        m.apply(across, Action("rotate", "L", 1))
    assert m.apply(across, Action("rotate", "D", 1)).turn == (3, 1)  # D itself may turn its layer


# ------------------------------------------------------------- the planner


def _variants(moves: tuple[Move, ...]) -> set[tuple[Move, ...]]:
    """The solution and every order of it with disjoint neighbouring turns of
    one axis swapped (they commute)."""
    out = {moves}
    for i in range(len(moves) - 1):
        if moves[i].face % 3 == moves[i + 1].face % 3:
            for v in _variants(moves[i + 2:]):
                out.add(moves[:i] + (moves[i + 1], moves[i]) + v)
            for v in _variants(moves[i + 1:]):
                out.add(moves[:i + 1] + v)
    return out


def _brute_force(moves: tuple[Move, ...], m: Mechanism, bound: float, objective: str) -> float:
    """The least cost of any sequence of possible robot moves whose turns
    spell the solution (or a commuted order of it): every sequence of up to
    ``bound / cheapest move`` moves is covered, layer by layer, keeping per
    node only the cheapest way to it in exactly k moves."""
    targets = _variants(moves)
    prefixes = {v[:k] for v in targets for k in range(len(v) + 1)}
    step_cost = {"time": lambda out: out.seconds, "moves": lambda out: 1.0,
                 "weighed": lambda out: out.seconds + MOVE_WEIGHT}[objective]
    cheapest_move = min(step_cost(out) for s in _all_states(m) for _, out in m.steps(s))
    depth = int(bound / cheapest_move + 1e-9)
    frontier: dict[tuple, float] = {(m.start(), ()): 0.0}
    best = float("inf")
    for _ in range(depth + 1):
        for (_, made), c in frontier.items():
            if made in targets:
                best = min(best, c)
        nxt: dict[tuple, float] = {}
        for (state, made), c in frontier.items():
            for action in m.actions(state):
                try:
                    out = m.apply(state, action)
                except ImpossibleMove:
                    continue
                now = made if out.turn is None else made + (face_move(m.orientation(state), *out.turn),)
                if now not in prefixes:
                    continue
                key = (out.after, now)
                cost = c + step_cost(out)
                if cost <= bound + 1e-9 and cost < nxt.get(key, float("inf")):
                    nxt[key] = cost
        frontier = nxt
    return best


def _all_states(m: Mechanism) -> set:
    seen, todo = {m.start()}, [m.start()]
    while todo:
        s = todo.pop()
        for _, out in m.steps(s):
            if out.after not in seen:
                seen.add(out.after)
                todo.append(out.after)
    return seen


short = st.lists(st.tuples(st.integers(0, 5), st.integers(1, 3)), min_size=1, max_size=3).map(
    lambda xs: tuple(Move(f, p) for f, p in xs))


@pytest.mark.parametrize("kind", RIGS)
@pytest.mark.parametrize("objective", OBJECTIVES)
@settings(max_examples=15, deadline=None)
@given(moves=short)
def test_the_plan_is_optimal_for_the_solution_given(kind, objective, moves):
    m = MECHS[kind]
    p = plan(moves, m, objective=objective)
    got = {"time": p.seconds, "moves": float(p.moves), "weighed": p.weighed()}[objective]
    assert _brute_force(moves, m, got, objective) == pytest.approx(got)


def _rotations_to(o) -> list[tuple[int, int]]:
    """Whole-cube turns from HOME to ``o`` (a breadth-first search)."""
    paths = {HOME: []}
    todo = [HOME]
    while todo:
        cur = todo.pop(0)
        for slot in range(3):
            nxt = rotate(cur, slot, 1)
            if nxt not in paths:
                paths[nxt] = paths[cur] + [(slot, 1)]
                todo.append(nxt)
    return paths[o]


def _check(facelets: str, moves: tuple[Move, ...], m: Mechanism) -> None:
    """The plan applied sticker by sticker makes the solution's cube, held in
    the orientation the plan says it ends in."""
    p = plan(moves, m)
    replay(p.actions, m, expect=moves)  # every move possible, the turns the solution's
    held = apply_to_cube(facelets, p.actions, m)
    want = HeldCube(parse_facelets(facelets).apply(moves).to_facelets())
    for slot, q in _rotations_to(p.end[0]):
        want.rotate(slot, q)
    assert held.stickers == want.stickers


@pytest.mark.parametrize("kind", RIGS)
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 3)),
                                                   max_size=25))
def test_every_plan_applied_to_the_cube_makes_the_solutions_cube(kind, seed, moves):
    _check(random_cube(seed).to_facelets(), tuple(Move(f, p) for f, p in moves), MECHS[kind])


@pytest.mark.parametrize("kind", RIGS)
def test_a_real_solution_solves_the_cube_and_the_cheapest_candidate_wins(kind):
    from solver import solve

    m = MECHS[kind]
    cube = random_cube(11)
    s = solve(cube, budget_ms=50, candidates=4, workers=1)
    cands = [s.moves] + [o.moves for o in s.others]
    i, p = cheapest(cands, m)
    assert apply_to_cube(cube.to_facelets(), p.actions, m).is_solved()
    assert all(p.seconds <= plan(c, m).seconds + 1e-9 for c in cands)
    assert p.moves > s.length  # the turns themselves, and getting there


def test_commuting_turns_are_swapped_when_that_is_cheaper():
    m = MECHS["flipper"]
    # U D: D is at the bottom already; doing D first saves nothing on U but
    # doing U first would need flips before D as well
    assert plan("U D", m).moves <= plan("D U", m, reorder=False).moves + 0
    assert plan("U D", m).moves < plan("U D", m, reorder=False).moves


def test_an_empty_solution_is_no_moves():
    for m in MECHS.values():
        p = plan((), m)
        assert p.moves == 0 and p.seconds == 0 and p.end == m.start()


def test_simplified_long_sequences_plan_quickly():
    import time

    m = MECHS["flipper"]
    moves = tuple(simplify([Move(f % 6, 1 + f % 3) for f in itertools.islice(itertools.count(1, 5), 30)]))
    t = time.perf_counter()
    plan(moves, m)
    assert time.perf_counter() - t < 5


# ------------------------------------------------------------- config


def test_six_motor_is_the_default_and_has_no_mechanism():
    cfg = parse_config("")
    assert cfg.rig.kind == "six-motor" and cfg.servos == {} and mechanism_for(cfg) is None


@pytest.mark.parametrize("text, says", [
    ('[rig]\nkind = "flip"\n', "rig.kind: expected one of 'six-motor', 'flipper', 'two-gripper'"),
    ('[servos.cover]\npin = 3\n', "servos: a six-motor rig has no servos"),
    ('[rig]\nkind = "flipper"\n[servos.arm]\npin = 3\n', "servos.arm: unknown key"),
    ('[rig]\nkind = "flipper"\n[servos.cover]\npin = 9\n', "servos.cover.pin: pin 9 is already used"),
    ('[rig]\nkind = "flipper"\n[servos.turntable]\nhome_deg = 30\n', "servos.turntable.home_deg"),
    ('[rig]\nkind = "flipper"\n[servos.cover]\nopen_deg = 200\n', "servos.cover.open_deg: 200 degrees"),
    ('[rig]\nkind = "two-gripper"\n[servos.grip_D]\nmin_us = 2000\nmax_us = 1000\n', "servos.grip_D.max_us"),
    ('[rig]\nkind = "two-gripper"\n[servos.grip_L]\nclosed_deg = 40\n', "servos.grip_L.closed_deg"),
    ('[rig]\nkind = "flipper"\n[servos.cover]\nflip_deg = 0\n[servos.flipper]\npin = 11\n',
     "servos.flipper: servos.cover.flip_deg says the cover flips the cube"),
    ('[rig]\nkind = "flipper"\n[servos.cover]\nflip_deg = 150\n',
     "servos.cover.flip_deg: the cover rises from closed (100) past open (60) to flip the cube, so flip_deg "
     "must lie beyond open_deg"),
    ('[rig]\nkind = "flipper"\n[servos.cover]\nflip_deg = 55\n',
     "servos.cover.flip_deg: flip_deg (55) must be at least 10 degrees from open_deg (60)"),
    ('[rig]\nkind = "flipper"\n[servos.cover]\nflip_deg = 200\n', "servos.cover.flip_deg: 200 degrees"),
    ('[rig]\nkind = "two-gripper"\n[servos.grip_D]\nflip_deg = 10\n', "servos.grip_D.flip_deg: unknown key"),
])
def test_bad_mechanism_config_is_one_clear_line(text, says):
    with pytest.raises(UserError) as e:
        parse_config(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_servo_timing_comes_from_the_table():
    slow = mechanism_for(parse_config('[rig]\nkind = "flipper"\n[servos.flipper]\ns_per_60deg = 0.5\n'))
    fast = MECHS["flipper"]
    assert slow is not None
    assert plan("F", slow).seconds > plan("F", fast).seconds
    cfg = parse_config('[rig]\nkind = "flipper"\n')
    assert cfg.servos["cover"].pulse_us(90) == 1500


@pytest.mark.parametrize("kind", RIGS)
def test_the_example_configs_plan_and_the_link_takes_them(kind):
    from pathlib import Path

    from robot.rig.link import Link
    from robot.rig.loading import load_config

    cfg = load_config(Path(__file__).resolve().parents[1] / "config" / "examples" / f"{kind}.toml")
    m = mechanism_for(cfg)
    assert m is not None and m.kind == cfg.rig.kind == {"cubotino": "flipper"}.get(kind, kind)
    assert set(cfg.servos) == set(m.servos) if kind != "two-gripper" else True
    assert apply_to_cube(Cube().apply("R U F'").to_facelets(), plan("F U' R'", m).actions, m).is_solved()
    assert Link(cfg, kind=m.kind).config is cfg  # driven over the link (tests/test_mechanism_link.py)
    with pytest.raises(UserError, match=f'kind = "{m.kind}": this command drives six-motor rigs') as e:
        Link(cfg)  # a six-motor dry run, jog or engine
    assert "\n" not in str(e.value)


def test_every_state_a_run_can_leave_is_parked_without_moving_the_cube():
    """Every state either kind can reach: the parking moves are possible,
    turn no layer, leave the cube's hold as it was, and end where homing
    can take the parts home; a two-gripper's jaws end square."""
    from robot.rig.mechanisms import parking

    for kind in KINDS:
        m = MECHS[kind]
        for state in m.graph.states:
            moves = parking(m, state)
            assert moves is not None, (kind, state)
            here = state
            for action in moves:
                out = m.apply(here, action)
                assert out.turn is None and m.orientation(out.after) == m.orientation(here), (kind, state)
                here = out.after
            assert m.homing(here) is not None
            if kind == "two-gripper":
                assert not any(jaws for _, jaws in here[1:]) and len(moves) <= 6, (state, moves)
            else:
                assert moves == ()


def test_the_notes_of_in_process_rigs_are_bounded_and_the_newest_kept():
    """A panel's run on a ``sim://`` of no name has a rig of its own; the
    notes of where such rigs' parts were left stay in memory, at most
    MAX_IN_PROCESS of them (a long session would grow them without end)."""
    from robot.rig.mechanisms import left

    ports = [f"sim://bounded-{i}" for i in range(left.MAX_IN_PROCESS + 10)]
    for i, port in enumerate(ports):
        left._write(port, f'{{"n": {i}}}')
    assert len([p for p in left._IN_PROCESS if p.startswith("sim://bounded-")]) <= left.MAX_IN_PROCESS
    assert left._read(ports[-1]) == {"n": len(ports) - 1} and left._read(ports[0]) is None
    left._write(ports[-1], "{not json")
    assert left._read(ports[-1]) is None  # a note that is not JSON is no note
