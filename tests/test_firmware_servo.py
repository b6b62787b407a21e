"""The firmware's servo outputs (docs/protocol.md 7), as the real binary in
simavr: pulse widths and frames measured from the pins' edges, idle and
while a stepper turns, SERVO queued in order with MOVE and reported
DONE after its travel time, and every refusal the protocol promises."""

from __future__ import annotations

import time

import pytest
from fwtools import UNO_ELF, make, read_edges, write_config
from simavr_rig import SimavrRig

from robot.rig import protocol as P
from robot.rig.errors import RigError
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.sim.virtual_rig import Mechanics

CYCLES_PER_US = 16
# Measured in simavr (docs/protocol.md 7): while a motor steps, an edge that
# falls while the steppers' tick interrupt runs (up to 570 of its 640 cycles
# with a step in it) waits for it, so a pulse is within one such interrupt
# (36 us, about 3 degrees) of the width asked. Idle, every edge lands in the
# part of the tick the interrupt leaves free, and every width is within a
# few us (a hobby servo's dead band is 1 to 5 us).
WORST_US = 40.0
TYPICAL_US = 20.0
IDLE_US = 10.0


@pytest.fixture(scope="module")
def elf():
    make("all", "sim")
    return UNO_ELF


@pytest.fixture
def cfg(tmp_path):
    # 1/8 microsteps at 3 rev/s: 4,800 steps/s a motor, a brisk stock rig.
    return load_config(write_config(tmp_path / "c.toml", microsteps=8, max_speed=3.0, acceleration=60.0,
                                    start_speed=0.5, settle_ms=0))


def _wait_done(link: Link, ids: set[int], dones: list[tuple[float, int]], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not ids <= {i for _, i in dones}:
        assert time.monotonic() < deadline, f"no DONE for {ids - {i for _, i in dones}}"
        link.poll(0.05)


def _wait_pulses(rig: SimavrRig, log, servos, n: int, timeout: float = 120.0) -> None:
    """Until the edge log holds ``n`` pulses of every servo in ``servos``: the
    emulated board's own count, not a wall-clock wait (a loaded machine
    emulates fewer cycles a second). Any command to the harness flushes its log."""
    deadline = time.monotonic() + timeout
    while True:
        rig.counts()
        text = log.read_text()
        edges = [(int(c), name, int(v)) for c, name, v in
                 (line.split() for line in text[:text.rfind("\n") + 1].splitlines())]  # whole lines
        if all(len(_pulses(edges, s)) >= n for s in servos):
            return
        assert time.monotonic() < deadline, f"fewer than {n} pulses on a servo in {timeout:g} s"
        time.sleep(0.05)


def _pulses(edges, servo: int) -> list[tuple[int, int]]:
    """(rise cycle, width in cycles) of each pulse on servo ``servo``'s pin
    (the DIR pin of motor servo + 1)."""
    name = f"dir{servo + 1}"
    out, rise = [], None
    for cycle, n, v in edges:
        if n != name:
            continue
        if v == 1:
            rise = cycle
        elif rise is not None:
            out.append((rise, cycle - rise))
            rise = None
    return out


def test_pulses_are_exact_and_framed_idle_and_while_a_stepper_turns(elf, cfg, tmp_path):
    log = tmp_path / "edges.log"
    asked = {0: 1000, 1: 1500, 2: 2345}
    with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
        link.connect()
        dones: list[tuple[float, int]] = []
        link.on_done = lambda d: dones.append((time.monotonic(), d.move_id))
        for s in range(3):
            assert isinstance(link.request(P.ConfigServo(s, 500, 2500)), P.Ack)
        for s, us in asked.items():
            assert isinstance(link.request(P.ServoCommand(10 + s, s, us, 0)), P.Ack)
        _wait_done(link, {10, 11, 12}, dones)
        _wait_pulses(rig, log, asked, 3)  # a few idle frames
        # A gripper's stepper turns a half turn while the servos hold.
        link.move(P.MoveCommand(20, 0, 1600))
        _wait_done(link, {20}, dones)
        rig.counts()  # flushes the edge log
    edges = read_edges(log)
    steps = [c for c, n, v in edges if n == "step0" and v == 1]
    assert len(steps) == 1600
    during = (steps[0], steps[-1])
    for s, us in asked.items():
        pulses = _pulses(edges, s)
        busy = [p for p in pulses if during[0] <= p[0] <= during[1]]
        assert len(busy) >= 5, (s, len(pulses))
        quiet = [w / CYCLES_PER_US for r, w in pulses if r + w < during[0] or r > during[1]]
        moving = [w / CYCLES_PER_US for r, w in pulses if during[0] <= r + w and r <= during[1]]
        for widths in (quiet, moving):
            errors = sorted(abs(w - us) for w in widths)
            assert errors[-1] <= WORST_US and errors[len(errors) // 2] <= TYPICAL_US, (s, errors)
        print(f"servo {s}: {us} us asked; idle {min(quiet) - us:+.2f}..{max(quiet) - us:+.2f} us, "
              f"stepping {min(moving) - us:+.2f}..{max(moving) - us:+.2f} us")
        frames = [(a[0], (b[0] - a[0]) / CYCLES_PER_US) for a, b in zip(pulses, pulses[1:], strict=False)]
        idle = [f for a, f in frames if during[1] < a or a + f * CYCLES_PER_US < during[0]]
        stepping = [f for a, f in frames if during[0] <= a and a + f * CYCLES_PER_US <= during[1]]
        # a rise that cannot be placed in its tick goes to the next one, 40 us on
        assert idle and all(abs(f - 20_000) <= 2 * WORST_US + 5 for f in idle), (s, idle)
        assert stepping and all(abs(f - 20_000) <= 2 * WORST_US + 5 for f in stepping), (s, stepping)
    # one pulse in flight at a time: the servos take turns in their own slots
    spans = sorted((r, r + w) for s in asked for r, w in _pulses(edges, s))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_servo_moves_run_in_queue_order_and_report_done_after_their_travel(elf, cfg, tmp_path):
    log = tmp_path / "edges.log"
    with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
        link.connect()
        dones: list[tuple[float, int]] = []
        link.on_done = lambda d: dones.append((time.monotonic(), d.move_id))
        assert isinstance(link.request(P.ConfigServo(0, 600, 2400)), P.Ack)
        link.move(P.MoveCommand(1, 0, 200))
        assert isinstance(link.request(P.ServoCommand(2, 0, 2000, 300)), P.Ack)
        link.move(P.MoveCommand(3, 4, 200, P.NO_MOTOR, 0, 50))  # asks to overlap: never over a servo
        _wait_done(link, {1, 2, 3}, dones)
        rig.counts()
    assert [i for _, i in dones] == [1, 2, 3]
    edges = read_edges(log)
    u = [c for c, n, v in edges if n == "step0" and v == 1]
    first_wide = min(r for r, w in _pulses(edges, 0) if abs(w / CYCLES_PER_US - 2000) <= WORST_US)
    l_steps = [c for c, n, v in edges if n == "step4" and v == 1]
    assert u[-1] < first_wide  # the servo moved after the stepper's move
    travel_ms = (l_steps[0] - u[-1]) / CYCLES_PER_US / 1000
    assert 300 <= travel_ms <= 310, travel_ms  # the next move waited the servo's whole travel


@pytest.mark.parametrize("msg, code", [
    (P.ServoCommand(1, 0, 1500, 100), P.ErrorCode.NOT_CONFIGURED),  # not configured yet
    (P.ConfigServo(3, 1000, 2000), P.ErrorCode.BAD_ARG),             # no servo 3
    (P.ConfigServo(0, 300, 2000), P.ErrorCode.BAD_ARG),              # below any servo's range
    (P.ConfigServo(0, 2000, 1000), P.ErrorCode.BAD_ARG),             # min above max
])
def test_bad_servo_commands_are_refused(elf, cfg, msg, code):
    with SimavrRig(elf, Mechanics.from_config(cfg)) as rig, Link(cfg, rig.port) as link:
        link.connect()
        with pytest.raises(RigError, match=code.name):
            link.request(msg)


def test_a_pulse_outside_the_limits_a_stepper_on_a_servo_pin_and_a_latched_stop_are_refused(elf, cfg):
    with SimavrRig(elf, Mechanics.from_config(cfg)) as rig, Link(cfg, rig.port) as link:
        link.connect()
        assert isinstance(link.request(P.ConfigServo(1, 1000, 2000)), P.Ack)
        with pytest.raises(RigError, match="BAD_ARG"):
            link.request(P.ServoCommand(1, 1, 2100, 100))  # beyond its max: never sent to the servo
        with pytest.raises(RigError, match="BAD_ARG"):
            link.move(P.MoveCommand(2, 2, 100))  # motor 2's DIR pin is servo 1's signal
        assert isinstance(link.move(P.MoveCommand(3, 3, 100)), P.Ack)  # motor 3 is free
        link.estop()
        with pytest.raises(RigError, match="emergency stop"):
            link.request(P.ServoCommand(4, 1, 1500, 100))


def test_every_width_is_exact_when_the_steppers_are_idle(elf, cfg, tmp_path):
    # The rise is placed by the width's remainder in 40 us ticks (40 of
    # them at 1 us steps); a 1,500 us pulse once ran 12 to 15 us long where
    # its fall met the next tick. Each width is set while another servo's
    # pulse may be in flight, so starting a SERVO must not make one late.
    widths = list(range(1480, 1520)) + [500, 1000, 2345, 2500]
    for start in range(0, len(widths), 3):
        asked = dict(enumerate(widths[start:start + 3]))
        log = tmp_path / f"edges{start}.log"
        with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
            link.connect()
            dones: list[tuple[float, int]] = []
            link.on_done = lambda d, dones=dones: dones.append((time.monotonic(), d.move_id))
            for s in asked:
                assert isinstance(link.request(P.ConfigServo(s, 500, 2500)), P.Ack)
            for s, us in asked.items():
                assert isinstance(link.request(P.ServoCommand(10 + s, s, us, 0)), P.Ack)
            _wait_done(link, {10 + s for s in asked}, dones)
            _wait_pulses(rig, log, asked, 10)
        edges = read_edges(log)
        for s, us in asked.items():
            errors = [w / CYCLES_PER_US - us for _, w in _pulses(edges, s)]
            assert len(errors) >= 10, (us, len(errors))
            assert max(abs(e) for e in errors) <= IDLE_US, (us, sorted(errors))
