"""The virtual flipper and two-gripper rigs: physics from the wire's
commands, written apart from the planner's rules; the two must agree on
every move in every state, and every plan must solve the cube on them."""

from __future__ import annotations

import dataclasses

import pytest
from mechanism_kinds import RIGS, rig_config

from robot.rig.mechanisms import (
    Action,
    HeldCube,
    ImpossibleMove,
    apply_to_cube,
    cheapest,
    mechanism_for,
    plan,
)
from robot.rig.mechanisms.commands import Commands
from robot.rig.mechanisms.greedy import greedy
from robot.rig.protocol import ConfigServo, MoveCommand, ServoCommand
from robot.sim.mechanisms import Fault, virtual_mechanism
from solver import SOLVED, Cube, random_cube, solve

cfg = rig_config


def _paths(m):
    """A shortest sequence of robot moves to every state the mechanism reaches."""
    start = m.start()
    paths = {start: []}
    todo = [start]
    while todo:
        s = todo.pop(0)
        for a, out in m.steps(s):
            if out.after not in paths:
                paths[out.after] = paths[s] + [a]
                todo.append(out.after)
    return paths


@pytest.mark.parametrize("kind", RIGS)
def test_the_rules_and_the_physics_agree_on_every_move_in_every_state(kind):
    config = cfg(kind)
    m = mechanism_for(config)
    f = random_cube(5).to_facelets()
    for state, path in _paths(m).items():
        for action in m.actions(state):
            rig = virtual_mechanism(config, f)
            for a in path:
                rig.do(a)
            try:
                out = m.apply(state, action)
            except ImpossibleMove as e:
                if "already" in str(e):
                    continue  # opening what is open: the rules refuse a move that does nothing
                with pytest.raises(Fault):
                    rig.do(action)
                assert rig.fault  # latched
                continue
            rig.do(action)
            assert rig.cube.stickers == apply_to_cube(f, path + [action], m).stickers
            centres = "".join(rig.cube.face(slot)[4] for slot in range(6))
            assert centres == "".join(f[9 * face + 4] for face in m.orientation(out.after))


@pytest.mark.parametrize("kind", RIGS)
def test_every_plan_solves_the_cube_on_the_virtual_rig(kind):
    config = cfg(kind)
    m = mechanism_for(config)
    for seed in range(1, 6):
        cube = random_cube(seed)
        s = solve(cube, budget_ms=40, candidates=4, workers=1)
        for p in (cheapest([s.moves] + [o.moves for o in s.others], m)[1], greedy(s.moves, m)):
            rig = virtual_mechanism(config, cube.to_facelets())
            for a in p.actions:
                rig.do(a)
            assert rig.is_solved()


def test_a_fault_stops_the_flipper_for_good():
    config = cfg("flipper")
    rig = virtual_mechanism(config, SOLVED)
    rig.do(Action("close", "cover"))
    with pytest.raises(Fault, match="cover not open"):
        rig.do(Action("flip"))
    with pytest.raises(Fault, match="stopped on a fault"):
        rig.do(Action("open", "cover"))
    assert not rig.is_solved()


def test_a_servo_goes_to_any_angle_in_its_range_and_past_it_is_a_fault():
    config = cfg("flipper")
    tt = config.servos["turntable"]
    rig = virtual_mechanism(config, SOLVED)
    with pytest.raises(Fault, match="outside"):
        rig.execute(ServoCommand(1, 0, tt.max_us + 10, 100))
    rig = virtual_mechanism(config, SOLVED)
    rig.execute(ConfigServo(0, 1000, 2000))  # tighter limits: a quarter either way no longer fits
    with pytest.raises(Fault, match="outside"):
        rig.do(Action("spin", "", 1))
    for kind, servo, deg in (("flipper", "turntable", 130), ("flipper", "cover", 80),
                             ("flipper", "flipper", 45), ("cubotino", "cover", 95), ("cubotino", "cover", 40),
                             ("cubotino", "turntable", 45), ("two-gripper", "grip_D", 95)):
        config = cfg(kind)
        rig = virtual_mechanism(config, SOLVED)
        number = {n: i for i, n in rig.names.items()}[servo]
        rig.execute(ServoCommand(1, number, config.servos[servo].pulse_us(deg), 100))  # no fault: it is there
        assert rig.fault is None and abs(rig.angle[servo] - deg) < 0.1, (kind, servo)


@pytest.mark.parametrize("kind", ["flipper", "cubotino"])
def test_a_turntable_between_quarters_leaves_the_cube_off_square_until_it_makes_the_quarter_up(kind):
    config = cfg(kind)
    tt = config.servos["turntable"]
    home = tt.angle("home_deg")
    turntable = ServoCommand(1, 0, 0, 100)

    def to(rig, deg):
        rig.execute(dataclasses.replace(turntable, pulse_us=tt.pulse_us(deg)))

    rig = virtual_mechanism(config, SOLVED)  # cover open: the whole cube turns, and back
    to(rig, home + 40)
    assert not rig.square() and not rig.is_solved() and rig.turns == []
    with pytest.raises(Fault, match="came down on the cube standing 40 degrees off square"):
        rig.do(Action("close", "cover"))
    rig = virtual_mechanism(config, SOLVED)
    to(rig, home + 40)
    to(rig, home)
    assert rig.square() and rig.is_solved()
    rig.do(Action("close", "cover"))  # square again: the cover holds it
    to(rig, home + 45)  # the bottom layer half way through a quarter ...
    assert not rig.square() and rig.turns == []
    if kind == "flipper":
        rig.do(Action("open", "cover"))  # a flipper of its own flips only with the cover open
    with pytest.raises(Fault, match="bottom layer stands 45 degrees off square"):
        rig.do(Action("flip", "close") if kind == "cubotino" else Action("flip"))
    rig = virtual_mechanism(config, SOLVED)
    rig.do(Action("close", "cover"))
    to(rig, home + 45)
    to(rig, home + 90)  # ... and through it: one layer turn
    assert rig.square() and rig.turns == [(3, 1)]
    rig.do(Action("open", "cover"))
    to(rig, home - 45)  # open: the whole cube turns, the layer stays square
    to(rig, home)
    want = HeldCube(SOLVED)
    want.turn(3, 1)
    want.rotate(3, -1)
    assert rig.square() and rig.cube.stickers == want.stickers
    # the bottom layer left off square, the cover opened, the turntable home: the cube's top is off square
    rig = virtual_mechanism(config, SOLVED)
    rig.do(Action("close", "cover"))
    to(rig, home + 30)
    rig.do(Action("open", "cover"))
    to(rig, home)
    with pytest.raises(Fault, match="30 degrees off square"):
        rig.do(Action("close", "cover"))


def test_a_cover_that_flips_tips_the_cube_when_its_lifter_rises_and_jams_where_a_real_one_would():
    config = cfg("cubotino")
    cover, tt = config.servos["cover"], config.servos["turntable"]
    rig = virtual_mechanism(config, SOLVED)
    rig.do(Action("close", "cover"))
    rig.do(Action("turn", "", 1))
    rig.do(Action("flip", "close"))  # from closed, up past open, down closed: no open in between
    rig.do(Action("turn", "", -1))
    want = HeldCube(SOLVED)
    want.turn(3, 1)
    want.rotate(4, 1)
    want.turn(3, -1)
    assert rig.cube.stickers == want.stickers and rig.turns == [(3, 1), (3, -1)]
    rig.execute(ServoCommand(1, 1, cover.pulse_us(cover.angle("flip_deg")), 300))
    rig.execute(ServoCommand(2, 0, tt.pulse_us(tt.angle("home_deg")), 300))  # where it stands: nothing moves
    with pytest.raises(Fault, match="turntable turned with the cover's lifter raised"):
        rig.execute(ServoCommand(3, 0, tt.pulse_us(tt.angle("home_deg") + 90), 300))
    rig = virtual_mechanism(config, SOLVED)
    rig.execute(ServoCommand(1, 1, cover.pulse_us(cover.angle("flip_deg")), 300))
    with pytest.raises(Fault, match="rose again"):
        rig.execute(ServoCommand(2, 1, cover.pulse_us(cover.angle("flip_deg") + 1), 300))
    rig = virtual_mechanism(config, SOLVED)  # the cover half way: it catches the cube
    rig.execute(ServoCommand(1, 1, cover.pulse_us(95), 300))
    with pytest.raises(Fault, match=r"cover half way \(at 95 degrees\)"):
        rig.execute(ServoCommand(2, 0, tt.pulse_us(tt.angle("home_deg") + 90), 300))
    rig = virtual_mechanism(config, SOLVED)  # the lifter part way up and down again: no tip
    rig.execute(ServoCommand(1, 1, cover.pulse_us(cover.angle("open_deg") - 30), 300))
    with pytest.raises(Fault, match="lifter raised"):
        rig.execute(ServoCommand(2, 0, tt.pulse_us(tt.angle("home_deg") + 90), 300))
    rig = virtual_mechanism(config, SOLVED)
    rig.execute(ServoCommand(1, 1, cover.pulse_us(cover.angle("open_deg") - 30), 300))
    rig.execute(ServoCommand(2, 1, cover.pulse_us(cover.angle("open_deg")), 300))
    assert rig.cube.stickers == SOLVED and rig.fault is None
    rig.execute(ServoCommand(3, 1, cover.pulse_us(cover.angle("open_deg") - 30), 300))  # part way, then on up
    rig.execute(ServoCommand(4, 1, cover.pulse_us(cover.angle("flip_deg")), 300))
    want = HeldCube(SOLVED)
    want.rotate(4, 1)
    assert rig.cube.stickers == want.stickers
    rig.execute(ServoCommand(5, 1, cover.pulse_us(cover.angle("open_deg") - 30), 300))  # part way down ...
    with pytest.raises(Fault, match="rose again"):  # ... is not down
        rig.execute(ServoCommand(6, 1, cover.pulse_us(cover.angle("flip_deg")), 300))
    with pytest.raises(Fault, match="no servo 2"):  # no flipper servo on this rig
        virtual_mechanism(config, SOLVED).execute(ServoCommand(1, 2, 1500, 300))


def test_two_grippers_drop_the_cube_or_jam_as_a_real_rig_would():
    config = cfg("two-gripper")
    rig = virtual_mechanism(config, SOLVED)
    rig.do(Action("open", "D"))
    with pytest.raises(Fault, match="the cube fell"):
        rig.do(Action("open", "L"))
    rig = virtual_mechanism(config, SOLVED)
    rig.do(Action("open", "D"))
    rig.do(Action("rotate", "D", 1))
    rig.do(Action("close", "D"))
    with pytest.raises(Fault, match="lay across"):
        rig.do(Action("rotate", "L", 1))
    rig = virtual_mechanism(config, SOLVED)
    rig.do(Action("open", "D"))
    with pytest.raises(Fault, match="not whole quarter turns"):
        rig.execute(MoveCommand(1, config.motors["D"].motor, 7))


def test_commands_are_pulses_and_steps_from_the_tables():
    config = cfg("flipper")
    c = Commands(config)
    setup = c.setup()
    assert [m.servo for m in setup] == [0, 1, 2]
    (spin,) = c.commands(Action("spin", "", -1))
    tt = config.servos["turntable"]
    assert spin.pulse_us == tt.pulse_us(tt.angle("home_deg") - 90) and spin.travel_ms == round(
        tt.travel_s(90) * 1000)
    assert len(c.commands(Action("flip"))) == 2  # up and back
    g = Commands(cfg("two-gripper"))
    (turn,) = g.commands(Action("rotate", "L", -2))
    assert isinstance(turn, MoveCommand)
    assert turn.steps_a == -2 * cfg("two-gripper").motors["L"].steps_per_quarter
    with pytest.raises(ImpossibleMove):
        g.commands(Action("flip"))
    with pytest.raises(ImpossibleMove):  # a flipper servo of its own does not close the cover
        c.commands(Action("flip", "close"))
    # a cover that flips: two servos, and a flip's rise is timed from where the cover stands
    cub = cfg("cubotino")
    cc, cover = Commands(cub), cub.servos["cover"]
    assert [m.servo for m in cc.setup()] == [0, 1]
    up, down = cc.commands(Action("flip"))
    assert up.pulse_us == cover.pulse_us(cover.angle("flip_deg")) and down.pulse_us == cover.pulse_us(
        cover.angle("open_deg"))
    assert up.travel_ms == round(cover.travel_s(cover.angle("flip_deg") - cover.angle("open_deg")) * 1000)
    cc.commands(Action("close", "cover"))
    up, down = cc.commands(Action("flip", "close"))
    assert up.travel_ms == round(cover.travel_s(cover.angle("flip_deg") - cover.angle("closed_deg")) * 1000)
    assert down.pulse_us == cover.pulse_us(cover.angle("closed_deg"))
    assert [m.servo for m in cc.home()] == [1, 0]  # the cover open, then the turntable home


def test_a_short_plan_on_the_rig():
    config = cfg("flipper")
    rig = virtual_mechanism(config, Cube().apply("F'").to_facelets())
    for a in plan("F", mechanism_for(config)).actions:
        rig.do(a)
    assert rig.is_solved()
