"""The firmware's protocol and motion code, compiled for the host with a fake hal.

Checked against robot.rig.protocol (the bytes) and robot.rig.timing (the exact DDA
model): the same integer algorithm on both sides, tick for tick.
"""

from __future__ import annotations

import pytest
from fwtools import HostShim, host_estop_bytes, make, noise_burst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robot.rig import protocol as P
from robot.rig import timing
from robot.sim.virtual_rig import EventClock, VirtualRig

FAST = timing.quantize(12000, 400000, 1000, settle_ms=2)


@pytest.fixture(scope="module")
def shim():
    make("host")
    s = HostShim()
    yield s
    s.close()


def fresh(shim: HostShim) -> HostShim:
    shim.cmd("reset")
    shim.cmd("tx")
    shim.other.clear()
    shim.seq = 0
    return shim


def session(shim: HostShim, profiles=(FAST,) * 6, idle_ms: int = 0) -> HostShim:
    fresh(shim)
    ok = shim.request(P.Hello())
    assert isinstance(ok, P.HelloOk)
    for m, p in enumerate(profiles):
        assert isinstance(shim.request(P.ConfigMotor(m, p.vmax_q, p.accel_q, p.vmin_q, p.settle_ms)), P.Ack)
    assert isinstance(shim.request(P.ConfigGlobal(idle_ms)), P.Ack)
    return shim


def run_until_idle(shim: HostShim, limit: int = 2_000_000) -> list[P.Done]:
    done = [m for m in shim.other if isinstance(m, P.Done)]
    shim.other.clear()
    for _ in range(limit // 2500):
        shim.ticks(2500)
        done += [m for _, m in shim.replies() if isinstance(m, P.Done)]
        st_ = shim.request(P.StatusQuery())
        if not st_.moving:
            done += [m for _, m in shim.replies() if isinstance(m, P.Done)]
            done += [m for m in shim.other if isinstance(m, P.Done)]
            shim.other.clear()
            return done
    raise AssertionError("still moving")


profiles_st = st.builds(
    lambda vmax, accel, vmin_frac: (vmax, accel, max(P.Q // 40, int(vmax * vmin_frac))),
    st.integers(P.Q // 40, P.Q - 1),
    st.integers(1, 200_000),
    st.floats(0.0, 1.0),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 800), prof=profiles_st)
def test_profile_duration_matches_host_model(shim, n, prof):
    """Realistic settings (at least 625 steps/s): T stays small enough for the Python model."""
    vmax, accel, vmin = prof
    assert int(shim.cmd(f"profile {n} {vmax} {accel} {vmin}")) == timing.step_ticks(n, vmax, accel, vmin)[-1]


def test_boot_event_and_handshake(shim):
    shim.cmd("reset")
    boot = [m for _, m in shim.replies() if isinstance(m, P.Event)]
    assert boot and boot[0].event == P.EventCode.BOOT
    ok = shim.request(P.Hello())
    assert isinstance(ok, P.HelloOk)
    assert (ok.version, ok.board, ok.queue_capacity, ok.tick_hz) == (P.PROTOCOL_VERSION, P.BOARD_UNO, 4,
                                                                     25000)
    first = ok.boot_id
    shim.cmd("reset")
    shim.replies()
    assert shim.request(P.Hello()).boot_id != first


def test_commands_before_hello_get_no_session(shim):
    fresh(shim)
    err = shim.request(P.MoveCommand(1, 0, 10))
    assert isinstance(err, P.Err) and err.code == P.ErrorCode.NO_SESSION
    assert isinstance(shim.request(P.StatusQuery()), P.Status)


def test_wrong_version_is_refused_with_own_version(shim):
    fresh(shim)
    err = shim.request(P.Hello(version=7))
    assert isinstance(err, P.Err) and (err.code, err.detail) == (P.ErrorCode.VERSION, P.PROTOCOL_VERSION)


def test_duplicate_move_is_not_executed_twice(shim):
    session(shim)
    first = shim.request(P.MoveCommand(5, 0, 50), seq=77)
    again = shim.request(P.MoveCommand(5, 0, 50), seq=77)
    assert first == again == P.Ack(3)
    done = run_until_idle(shim)
    assert [d.move_id for d in done] == [5]
    assert shim.steps()[0] == (50, 0, 50)


def test_status_does_not_disturb_duplicate_detection(shim):
    session(shim)
    shim.request(P.MoveCommand(1, 2, -30), seq=40)
    shim.request(P.StatusQuery(), seq=41)
    assert shim.request(P.MoveCommand(1, 2, -30), seq=40) == P.Ack(3)
    run_until_idle(shim)
    assert shim.steps()[2] == (0, 30, -30)


@pytest.mark.parametrize(
    "msg, code",
    [
        (P.MoveCommand(1, 6, 10), P.ErrorCode.BAD_ARG),
        (P.MoveCommand(1, 0, 0), P.ErrorCode.BAD_ARG),
        (P.MoveCommand(1, 0, 30001), P.ErrorCode.BAD_ARG),
        (P.MoveCommand(1, 0, 10, 0, 10), P.ErrorCode.BAD_ARG),
        (P.MoveCommand(1, 0, 10, 3, 0), P.ErrorCode.BAD_ARG),
        (P.ConfigMotor(6, 100, 1, 1, 0), P.ErrorCode.BAD_ARG),
        (P.ConfigMotor(0, P.Q, 1, 1, 0), P.ErrorCode.BAD_ARG),
        (P.ConfigMotor(0, 100, 0, 1, 0), P.ErrorCode.BAD_ARG),
        (P.ConfigMotor(0, 100, 1, 101, 0), P.ErrorCode.BAD_ARG),
    ],
)
def test_bad_arguments_are_refused(shim, msg, code):
    session(shim)
    err = shim.request(msg)
    assert isinstance(err, P.Err) and err.code == code
    assert shim.steps() == [(0, 0, 0)] * 6


def test_unconfigured_motor_and_unknown_type_and_bad_length(shim):
    fresh(shim)
    shim.request(P.Hello())
    err = shim.request(P.MoveCommand(1, 4, 10))
    assert isinstance(err, P.Err) and (err.code, err.detail) == (P.ErrorCode.NOT_CONFIGURED, 4)
    shim.rx(P.frame(bytes([0x33, 99, 1, 2])))
    (seq, err), = shim.replies()
    assert seq == 99 and err == P.Err(P.ErrorCode.UNKNOWN_TYPE, 0x33)
    shim.rx(P.frame(bytes([P.MoveCommand.TYPE, 100, 1, 2, 3])))
    (seq, err), = shim.replies()
    assert seq == 100 and err == P.Err(P.ErrorCode.BAD_LENGTH, P.MoveCommand.TYPE)


def test_corrupted_frames_are_dropped_and_counted(shim):
    session(shim)
    good = P.encode(P.MoveCommand(3, 1, 20), 9)
    bad = bytearray(good)
    bad[4] ^= 0x01
    shim.rx(bytes(bad))
    assert shim.replies() == []
    assert shim.request(P.StatusQuery()).rx_errors == 1
    shim.rx(b"\x00\x7d\x7e\x41\x42\x7e" + good)  # garbage, then the good frame resyncs
    assert [m for _, m in shim.replies()] == [P.Ack(3)]


def test_escaped_ids_travel_intact(shim):
    session(shim)
    ids = [0x187E, 0x7D05, 0x7E7E]
    for i in ids:
        assert shim.request(P.MoveCommand(i, 5, 7)) == P.Ack(4 - 1 - ids.index(i))
    done = run_until_idle(shim)
    assert [d.move_id for d in done] == ids


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    moves=st.lists(
        st.tuples(st.integers(0, 5), st.integers(-400, 400).filter(bool), st.booleans(),
                  st.integers(-400, 400).filter(bool)),
        min_size=1, max_size=10,
    )
)
def test_queued_moves_step_exactly_and_take_the_modelled_time(shim, moves):
    session(shim)
    plan, sent = [], 0
    expected = [0] * 6
    for i, (a, sa, two, sb) in enumerate(moves):
        b = (a + 3) % 6 if two else P.NO_MOTOR
        cmd = P.MoveCommand(i, a, sa, b, sb if two else 0)
        while True:
            reply = shim.request(cmd)
            if isinstance(reply, P.Ack):
                break
            assert reply.code == P.ErrorCode.QUEUE_FULL
            shim.ticks(500)
        sent += 1
        expected[a] += sa
        if two:
            expected[b] += sb
        plan.append(cmd)
    done = run_until_idle(shim)
    assert [d.move_id for d in done] == list(range(len(moves)))
    assert [pos for _, _, pos in shim.steps()] == expected
    for d, cmd in zip(done, plan):
        motion, settle = timing.move_ticks(cmd.motors(), [FAST] * 6)
        assert d.ticks == motion + settle
    st_ = shim.state()
    assert st_["double_pulse"] == 0 and st_["dir_during_pulse"] == 0 and st_["ignored"] == 0


def test_back_to_back_moves_follow_the_schedule_tick_for_tick(shim):
    session(shim)
    shim.cmd("clearsteps")
    cmds = [P.MoveCommand(0, 0, 120, 3, -80), P.MoveCommand(1, 1, 200), P.MoveCommand(2, 0, -60)]
    for c in cmds:
        assert isinstance(shim.request(c), P.Ack)
    t0 = shim.state()["ticks"]
    run_until_idle(shim)
    sched = timing.schedule([timing.PlannedMove(tuple(c.motors())) for c in cmds], [FAST] * 6)
    # The first move starts at the first tick after it was queued.
    start1 = t0
    u_steps = timing.step_ticks(120, FAST.vmax_q, FAST.accel_q, FAST.vmin_q)
    assert shim.step_times(0)[:120] == [start1 + t for t in u_steps]
    r_steps = timing.step_ticks(200, FAST.vmax_q, FAST.accel_q, FAST.vmin_q)
    assert shim.step_times(1) == [start1 + sched[1][0] + t for t in r_steps]


def test_overlapping_moves_follow_the_schedule(shim):
    session(shim)
    shim.cmd("clearsteps")
    cmds = [
        P.MoveCommand(0, 0, 300),
        P.MoveCommand(1, 1, 300, overlap=40),
        P.MoveCommand(2, 2, 100, overlap=40),
        P.MoveCommand(3, 0, 100, overlap=40),  # same motor as move 0 but not as move 2
    ]
    for c in cmds:
        assert isinstance(shim.request(c), P.Ack)
    t0 = shim.state()["ticks"]
    done = run_until_idle(shim)
    planned = [timing.PlannedMove(tuple(c.motors()), c.overlap) for c in cmds]
    sched = timing.schedule(planned, [FAST] * 6)
    for m, c, (start, _end) in zip((0, 1, 2), cmds, sched):
        prof = FAST
        n = abs(c.steps_a)
        assert shim.step_times(m)[:n] == [t0 + start + t for t in timing.step_ticks(n, prof.vmax_q,
                                                                                     prof.accel_q,
                                                                                     prof.vmin_q)]
    # Each DONE counts from the previous one (or its move's start): they add up to the whole.
    assert [d.ticks for d in done] == timing.done_ticks(sched)
    assert sum(d.ticks for d in done) == sched[-1][1] - sched[0][0]


def test_estop_mid_move_stops_at_once_and_latches(shim):
    session(shim)
    assert isinstance(shim.request(P.MoveCommand(1, 0, 3000)), P.Ack)
    shim.ticks(2000)
    before = shim.steps()[0][0]
    assert 0 < before < 3000
    stop = host_estop_bytes()
    # The host's stop, byte by byte: the run's last byte is the one that stops.
    for i, b in enumerate(stop):
        shim.rx(bytes((b,)))
        assert shim.state()["drivers"] == (1 if i < P.ESTOP_RUN - 1 else 0), i
    shim.ticks(5000)
    assert shim.steps()[0][0] == before
    events = [m for _, m in shim.replies() if isinstance(m, P.Event)]
    assert events == [P.Event(P.EventCode.ESTOP_LATCHED, 1)]
    err = shim.request(P.MoveCommand(2, 0, 10))
    assert isinstance(err, P.Err) and err.code == P.ErrorCode.ESTOP
    st_ = shim.request(P.StatusQuery())
    assert st_.estop and st_.cut and not st_.moving and st_.last_done_id == P.NO_ID
    assert shim.request(P.ClearEstop()) == P.Ack(4)
    # Clearing the latch keeps the evidence that a move was cut short; the next move ends it.
    st_ = shim.request(P.StatusQuery())
    assert not st_.estop and st_.cut
    assert shim.request(P.Hello()) and shim.request(P.StatusQuery()).cut
    assert isinstance(shim.request(P.MoveCommand(3, 0, 10)), P.Ack)
    assert not shim.request(P.StatusQuery()).cut
    run_until_idle(shim)
    assert shim.steps()[0][0] == before + 10
    # A stop on an idle rig cuts nothing.
    shim.rx(host_estop_bytes())
    assert not shim.request(P.StatusQuery()).cut


NOISE = [
    bytes((P.RT_ESTOP,)),
    bytes((P.RT_ESTOP,)) * (P.ESTOP_RUN - 1),
    bytes((P.RT_ESTOP, P.RT_ESTOP, P.RT_STATUS, P.RT_ESTOP, P.RT_ESTOP)),
    bytes((P.RT_ESTOP, P.RT_ESTOP, P.FLAG, P.RT_ESTOP, 0x00, P.RT_ESTOP, P.RT_ESTOP)),
]


def test_runs_shorter_than_the_stop_are_noise_and_stop_nothing(shim):
    import random

    session(shim)
    assert isinstance(shim.request(P.MoveCommand(1, 0, 3000)), P.Ack)
    rng = random.Random(3)
    for k, noise in enumerate(NOISE + [noise_burst(rng) for _ in range(20)]):
        shim.rx(noise)  # between frames, as noise on an idle line
        shim.ticks(50)
        assert shim.state()["drivers"] == 1, k
        assert shim.request(P.StatusQuery()).moving
    # A frame byte turned into RT_ESTOP: the frame is lost (bad CRC), nothing
    # stops. An RT_ESTOP slipped in between a frame's bytes never reaches the
    # decoder: that frame arrives intact.
    frame_ = P.encode(P.StatusQuery(), 60)
    shim.rx(frame_[:3] + bytes((P.RT_ESTOP,)) + frame_[4:])
    assert not [m for s, m in shim.replies() if s == 60]
    frame_ = P.encode(P.StatusQuery(), 61)
    shim.rx(frame_[:3] + bytes((P.RT_ESTOP,)) + frame_[3:])
    assert [type(m) for s, m in shim.replies() if s == 61] == [P.Status]
    done = run_until_idle(shim)
    assert [d.move_id for d in done] == [1] and shim.steps()[0][0] == 3000
    st_ = shim.request(P.StatusQuery())
    assert not st_.estop and st_.rx_errors >= 1
    assert not [m for m in shim.other if isinstance(m, P.Event) and m.event == P.EventCode.ESTOP_LATCHED]
    shim.rx(host_estop_bytes())
    assert [m for _, m in shim.replies() if isinstance(m, P.Event)] == [P.Event(P.EventCode.ESTOP_LATCHED, 1)]


rt_chunks = st.one_of(
    st.integers(1, P.ESTOP_RUN + 1).map(lambda n: bytes((P.RT_ESTOP,)) * n),
    st.sampled_from([bytes((P.RT_STATUS,)), bytes((P.FLAG,)), bytes((P.ESC,)), P.encode(P.StatusQuery(), 9)]),
    st.binary(min_size=1, max_size=6),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(rt_chunks, min_size=1, max_size=10))
def test_the_virtual_rig_stops_on_the_same_byte_as_the_firmware(shim, chunks):
    """Byte streams of RT_ESTOP runs, other real-time bytes, flags and
    garbage, cut anywhere: the virtual rig latches exactly when the firmware does."""
    session(shim)
    rig = VirtualRig(clock=EventClock())
    conn = rig.connect()
    seq = 0
    for msg in [P.Hello()] + [P.ConfigMotor(m, FAST.vmax_q, FAST.accel_q, FAST.vmin_q, FAST.settle_ms)
                               for m in range(6)] + [P.MoveCommand(1, 0, 30000)]:
        seq += 1
        conn.write(P.encode(msg, seq))
    assert isinstance(shim.request(P.MoveCommand(1, 0, 30000)), P.Ack)
    assert not rig.estop and rig.drivers and shim.state()["drivers"] == 1
    for c in chunks:
        shim.rx(c)
        conn.write(c)
        assert (shim.state()["drivers"] == 0) == rig.estop, c.hex()
    latched = [m for _, m in shim.replies() if m == P.Event(P.EventCode.ESTOP_LATCHED, 1)]
    dec = P.FrameDecoder()
    latched_rig = [c for c in dec.feed(bytes(conn.to_host))
                   if P.decode(c)[1] == P.Event(P.EventCode.ESTOP_LATCHED, 1)]
    assert len(latched) == len(latched_rig) == int(rig.estop)


def test_estop_input_latches_and_blocks_clear(shim):
    session(shim)
    shim.cmd("estop 1")
    shim.ticks(1)
    assert [m for _, m in shim.replies() if isinstance(m, P.Event)] == [P.Event(P.EventCode.ESTOP_LATCHED, 2)]
    err = shim.request(P.ClearEstop())
    assert isinstance(err, P.Err) and err.code == P.ErrorCode.ESTOP
    assert err.detail == 2  # the switch: the host's refusal message says so (robot/rig/link.py)
    shim.cmd("estop 0")
    assert shim.request(P.ClearEstop()) == P.Ack(4)


def test_realtime_status_byte_mid_frame(shim):
    session(shim)
    frame_ = P.encode(P.MoveCommand(1, 0, 10), 50)
    shim.rx(frame_[:5] + bytes([P.RT_STATUS]) + frame_[5:])
    got = shim.replies()
    kinds = {type(m) for _, m in got}
    assert P.RealtimeStatus in kinds and P.Ack in kinds
    # Unsolicited frames share one counter: the status follows the boot event.
    (seq, _), = [(s, m) for s, m in got if isinstance(m, P.RealtimeStatus)]
    assert seq == 2


def test_idle_time_disables_drivers(shim):
    session(shim, idle_ms=100)
    shim.request(P.MoveCommand(1, 0, 20))
    run_until_idle(shim)
    assert shim.state()["drivers"] == 1
    shim.ticks(25 * 120)
    assert shim.state()["drivers"] == 0


def test_release_refused_while_moving(shim):
    session(shim)
    shim.request(P.MoveCommand(1, 0, 2000))
    err = shim.request(P.Release())
    assert isinstance(err, P.Err) and err.code == P.ErrorCode.BUSY
    run_until_idle(shim)
    assert shim.request(P.Release()) == P.Ack(4)
    assert shim.state()["drivers"] == 0


def test_button_is_debounced(shim):
    session(shim)
    for _ in range(5):  # bounces shorter than 20 ms
        shim.cmd("button 1")
        shim.ticks(100)
        shim.cmd("button 0")
        shim.ticks(100)
    assert not [m for _, m in shim.replies() if isinstance(m, P.Event)]
    shim.cmd("button 1")
    shim.ticks(25 * 30)
    assert [m for _, m in shim.replies() if isinstance(m, P.Event)] == [P.Event(P.EventCode.BUTTON, 0)]
