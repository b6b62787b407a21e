"""The virtual rig behaves like the firmware described in docs/protocol.md."""

import random

import pytest
from fwtools import host_estop_bytes, longest_estop_run, noise_burst, noisy_writes

from robot.rig import job
from robot.rig import protocol as P
from robot.rig.journal import Journal
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.rig.motion import plan
from robot.rig.timing import PlannedMove, move_ticks, quantize, schedule
from robot.sim.protocol_sim import forget, parse_sim_url, rig_for_url
from robot.sim.virtual_rig import EventClock, Faults, Mechanics, VirtualRig
from solver import SOLVED_CUBE, group_steps, invert, random_scramble

PROFILE = quantize(4800, 64000, 480, 20)


class Wire:
    """The host side of a raw connection to a rig, with a manual clock."""

    def __init__(self, rig):
        self.rig = rig
        self.conn = rig.connect()
        self.dec = P.FrameDecoder()
        self.seq = 0

    def frames(self):
        out = [P.decode(c) for c in self.dec.feed(bytes(self.conn.to_host))]
        self.conn.to_host.clear()
        return out

    def send(self, msg, seq=None):
        if seq is None:
            self.seq = P.next_seq(self.seq)
            seq = self.seq
        self.conn.write(P.encode(msg, seq))
        return self.frames()

    def setup(self):
        self.send(P.Hello())
        for m in range(6):
            self.send(P.ConfigMotor(m, PROFILE.vmax_q, PROFILE.accel_q, PROFILE.vmin_q, PROFILE.settle_ms))


def make(**kw):
    rig = VirtualRig(clock=EventClock(), mechanics=Mechanics(), **kw)
    w = Wire(rig)
    return rig, w


def test_commands_need_a_session_and_a_matching_version():
    rig, w = make()
    assert w.send(P.MoveCommand(1, 0, 400)) == [(1, P.Err(P.ErrorCode.NO_SESSION))]
    assert w.send(P.Hello(1)) == [(2, P.Err(P.ErrorCode.VERSION, 2))]
    (seq, ok), = w.send(P.Hello())
    assert seq == 3 and isinstance(ok, P.HelloOk) and ok.queue_capacity == 4 and ok.tick_hz == 25000
    assert w.send(P.MoveCommand(1, 0, 400)) == [(4, P.Err(P.ErrorCode.NOT_CONFIGURED, 0))]


def test_an_unknown_type_or_a_bad_length_is_answered_with_the_type_as_the_firmware_does():
    """docs/protocol.md: ERR_UNKNOWN_TYPE or ERR_BAD_LENGTH, detail = the
    type (tests/test_firmware_host.py asks the firmware the same; the
    virtual rig answered 0 until the two played rigs shared the rules)."""
    rig, w = make()
    w.send(P.Hello())
    w.conn.write(P.frame(bytes([0x33, 99, 1, 2])))
    assert w.frames() == [(99, P.Err(P.ErrorCode.UNKNOWN_TYPE, 0x33))]
    w.conn.write(P.frame(bytes([P.MoveCommand.TYPE, 100, 1, 2, 3])))
    assert w.frames() == [(100, P.Err(P.ErrorCode.BAD_LENGTH, P.MoveCommand.TYPE))]


def test_positive_steps_turn_the_face_clockwise_and_done_reports_exact_ticks():
    rig, w = make()
    w.setup()
    assert w.send(P.MoveCommand(5, 0, 400, 3, -800)) == [(w.seq, P.Ack(3))]
    rig.advance(10**6)
    (_, done), = w.frames()
    assert done == P.Done(5, sum(move_ticks([(0, 400), (3, -800)], [PROFILE] * 6)), 4)
    assert rig.cube == SOLVED_CUBE.apply("U D2")


def test_a_repeated_sequence_number_is_answered_but_not_executed():
    rig, w = make()
    w.setup()
    first = w.send(P.MoveCommand(1, 1, 400), seq=77)
    again = w.send(P.MoveCommand(1, 1, 400), seq=77)
    assert first == again == [(77, P.Ack(3))]
    w.send(P.MoveCommand(2, 1, 400), seq=78)
    rig.advance(10**6)
    assert [r.move_id for r in rig.record] == [1, 2]
    assert rig.cube == SOLVED_CUBE.apply("R R")


def test_queue_capacity_and_back_to_back_timing():
    rig, w = make()
    w.setup()
    moves = [P.MoveCommand(i, i % 6, 400 * (1 + i % 2)) for i in range(5)]
    replies = [w.send(m)[0][1] for m in moves]
    assert replies[:4] == [P.Ack(3), P.Ack(2), P.Ack(1), P.Ack(0)]
    assert replies[4] == P.Err(P.ErrorCode.QUEUE_FULL)
    rig.advance(10**7)
    w.send(moves[4])
    rig.advance(2 * 10**7)
    planned = [PlannedMove(tuple(m.motors())) for m in moves[:4]]
    sched = schedule(planned, [PROFILE] * 6)
    starts = [r.start - rig.record[0].start for r in rig.record[:4]]
    ends = [r.tick - rig.record[0].start for r in rig.record[:4]]
    assert starts == [s for s, _ in sched] and ends == [d for _, d in sched]


def test_overlap_matches_the_host_schedule():
    rig, w = make()
    w.setup()
    moves = [P.MoveCommand(1, 0, 400), P.MoveCommand(2, 1, -400, overlap=40),
             P.MoveCommand(3, 4, 800, overlap=40)]
    for m in moves:
        w.send(m)
    rig.advance(10**7)
    sched = schedule([PlannedMove(tuple(m.motors()), m.overlap) for m in moves], [PROFILE] * 6)
    t0 = rig.record[0].start
    assert [(r.start - t0, r.tick - t0) for r in rig.record] == sched
    assert sched[1][0] < sched[0][1]


def test_realtime_estop_interrupts_latches_and_clears():
    rig, w = make()
    w.setup()
    w.send(P.MoveCommand(1, 2, 800))
    w.send(P.MoveCommand(2, 2, 800))
    rig.advance(rig.tick + 2000)
    stop = host_estop_bytes()
    w.conn.write(stop[:P.ESTOP_RUN - 1])
    assert not rig.estop and rig.active and w.frames() == []
    w.conn.write(stop[P.ESTOP_RUN - 1:])
    frames = w.frames()
    assert [m for _, m in frames] == [P.Event(P.EventCode.ESTOP_LATCHED, 1)]
    assert [(r.move_id, r.complete) for r in rig.record] == [(1, False)]
    assert w.send(P.MoveCommand(3, 2, 400))[0][1] == P.Err(P.ErrorCode.ESTOP)
    st = w.send(P.StatusQuery())[0][1]
    assert st.estop and not st.moving and st.queue_len == 0 and st.last_done_id == P.NO_ID
    out = w.send(P.ClearEstop())
    assert P.Event(P.EventCode.ESTOP_CLEARED, 0) in [m for _, m in out]
    assert w.send(P.MoveCommand(4, 2, 400))[0][1] == P.Ack(3)


def test_runs_shorter_than_the_stop_are_noise_and_stop_nothing():
    rig, w = make()
    w.setup()
    w.send(P.MoveCommand(1, 2, 800))
    rig.advance(rig.tick + 1000)
    noise = [bytes((P.RT_ESTOP,)), bytes((P.RT_ESTOP,)) * (P.ESTOP_RUN - 1),
             bytes((P.RT_ESTOP, P.RT_ESTOP, P.RT_STATUS, P.RT_ESTOP, P.RT_ESTOP)),
             bytes((P.RT_ESTOP, P.RT_ESTOP, P.FLAG, P.RT_ESTOP, 0x00, P.RT_ESTOP, P.RT_ESTOP))]
    rng = random.Random(3)
    for k, data in enumerate(noise + [noise_burst(rng) for _ in range(20)]):
        w.conn.write(data)
        st = w.send(P.StatusQuery())[-1][1]  # a frame between the bursts of noise
        assert not rig.estop and st.moving and not st.estop, k
    # A frame byte turned into RT_ESTOP costs that frame; one slipped in between
    # a frame's bytes never reaches the decoder.
    frame = P.encode(P.StatusQuery(), 60)
    w.conn.write(frame[:3] + bytes((P.RT_ESTOP,)) + frame[4:])
    assert w.frames() == []
    frame = P.encode(P.StatusQuery(), 61)
    w.conn.write(frame[:3] + bytes((P.RT_ESTOP,)) + frame[3:])
    assert [type(m) for _, m in w.frames()] == [P.Status]
    rig.advance(10**6)
    assert [(r.move_id, r.complete) for r in rig.record] == [(1, True)] and not rig.estop
    w.frames()
    w.conn.write(host_estop_bytes())
    assert [m for _, m in w.frames()] == [P.Event(P.EventCode.ESTOP_LATCHED, 1)]


def test_the_hosts_stop_survives_any_one_byte_lost_or_damaged():
    stop = host_estop_bytes()
    assert longest_estop_run(stop) >= P.ESTOP_RUN
    damaged = [stop[:i] + stop[i + 1:] for i in range(len(stop))]
    damaged += [stop[:i] + bytes((b,)) + stop[i + 1:] for i in range(len(stop)) for b in range(256)
                if b != P.RT_ESTOP]
    for data in damaged:
        rig, w = make()
        w.setup()
        w.send(P.MoveCommand(1, 2, 800))
        w.conn.write(data)
        assert rig.estop and not rig.active, data.hex()


def test_solves_through_bursts_of_garbage_between_frames_are_not_stopped(tmp_path):
    cfg = load_config()
    rng = random.Random(11)
    bursts = []

    def noise(k, frame):
        bursts.append(noise_burst(rng))
        return bursts[-1] + frame

    for k in range(10):
        scramble = random_scramble(20, seed=300 + k)
        start = SOLVED_CUBE.apply(scramble)
        url = f"sim://bursts{k}?speed=max&state={start.to_facelets()}"
        forget(url)
        with Link(cfg, url) as link, Journal(tmp_path / f"j{k}") as journal:
            link.connect()
            noisy_writes(link, noise)
            job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
            assert not link.estop_latched and not link.status().estop
        rig = rig_for_url(url)
        assert rig.cube.is_solved() and all(r.complete for r in rig.record)
    ones = sum(b.count(bytes((P.RT_ESTOP,))) for b in bursts)
    assert len(bursts) > 150 and ones > 5 * len(bursts)
    assert max(longest_estop_run(b) for b in bursts) == P.ESTOP_RUN - 1


def test_realtime_status_byte_answers_at_once():
    rig, w = make()
    w.setup()
    w.conn.write(bytes((P.RT_STATUS,)))
    (_, st), = w.frames()
    assert isinstance(st, P.RealtimeStatus) and st.session


def test_rigs_of_one_seed_do_not_share_a_boot_id():
    # two runs of `cuberobot sim-rig` (seed 0) booted with one id: resume took the second for the
    # first rig still up, and sent again a turn that may have been under way when it went down
    ids = {VirtualRig(seed=0).boot_id for _ in range(8)}
    assert len(ids) > 1


def test_reset_fault_loses_the_queue_and_the_session():
    rig, w = make(faults=Faults.parse("reset:0.05"))
    w.setup()
    boot = rig.boot_id
    w.send(P.MoveCommand(1, 0, 800))
    rig.advance(int(0.06 * 25000))
    assert any(m == P.Event(P.EventCode.BOOT, 2) for _, m in w.frames())
    assert rig.boot_id != boot and rig.boots == 2
    assert [r.complete for r in rig.record] == [False]
    assert w.send(P.MoveCommand(2, 0, 400))[0][1] == P.Err(P.ErrorCode.NO_SESSION)


def test_stalled_motor_never_finishes():
    rig, w = make(faults=Faults.parse("stall:F"))
    w.setup()
    w.send(P.MoveCommand(1, 2, 400))
    rig.advance(10**7)
    st = w.send(P.StatusQuery())[0][1]
    assert st.moving and st.active_id == 1 and rig.record == []


def test_button_press_is_an_event():
    rig, w = make()
    rig.press()
    assert [m for _, m in w.frames()] == [P.Event(P.EventCode.BUTTON, 0)]


def test_bad_frames_are_counted_and_answered_by_nothing():
    rig, w = make()
    w.setup()
    w.conn.write(b"\x7e\x01\x02\x03\x04\x06\x07\x7e" + b"garbage")
    assert w.frames() == []
    st = w.send(P.StatusQuery())[0][1]
    assert st.rx_errors >= 1


def test_inverted_motors_follow_the_config():
    cfg = load_config()
    from dataclasses import replace
    motors = dict(cfg.motors)
    motors["R"] = replace(motors["R"], invert=True)
    cfg = replace(cfg, motors=motors)
    from robot.rig.motion import plan
    rig = VirtualRig(clock=EventClock(), mechanics=Mechanics.from_config(cfg))
    w = Wire(rig)
    w.setup()
    for i, step in enumerate(plan(group_steps("R U' R2 L"), cfg)):
        parts = list(step.parts) + [(P.NO_MOTOR, 0)]
        w.send(P.MoveCommand(i, parts[0][0], parts[0][1], parts[1][0], parts[1][1]))
        rig.advance(rig.tick + 10**5)
    assert plan(group_steps("R"), cfg)[0].parts == ((1, -400),)
    assert rig.cube == SOLVED_CUBE.apply("R U' R2 L")


@pytest.mark.parametrize("spec", ["drop:2", "nonsense:1", "stall:X", "disconnect:0"])
def test_bad_fault_specs_are_explained(spec):
    with pytest.raises(ValueError, match="fault"):
        Faults.parse(spec)


@pytest.mark.parametrize(("url", "said"), [
    ("sim://?seed=x", "seed='x': expected a whole number from 0 to 4294967295"),
    ("sim://?seed=4294967296", "seed='4294967296': expected a whole number"),
    ("sim://?seed=-1", "seed='-1'"),
    ("sim://?seed=" + "9" * 5000, "expected a whole number from 0 to 4294967295"),  # past int()'s digits
    ("sim://?protocol=2.5", "protocol='2.5': expected a whole number from 0 to 255"),
    ("sim://?protocol=256", "protocol='256'"),
    ("sim://?speed=1&speed=max", "option 'speed' is given twice"),
    ("sim://?state=UUU", "state=: a cube string has 54 characters, this one has 3 (or state=solved)"),
    ("sim://?speed=fast", "speed must be 'max' or a number"),
    ("sim://?faults=drop:2", "fault"),
])
def test_a_bad_sim_url_is_refused_when_read_in_one_line(url, said):
    """A port in a set-up file or --port: every option is checked when the
    URL is read, and said in words (not Python's "invalid literal for int()")."""
    with pytest.raises(ValueError) as e:
        parse_sim_url(url)
    assert said in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_sim_url_takes_state_solved_and_its_bounds():
    try:
        rig = rig_for_url("sim://bounds?speed=max&state=solved&seed=4294967295&protocol=0")
        assert rig.cube == SOLVED_CUBE and rig.protocol_version == 0
    finally:
        forget("sim://bounds?speed=max&state=solved&seed=4294967295&protocol=0")


def _status(w):
    (_, st), = [f for f in w.send(P.StatusQuery()) if isinstance(f[1], P.Status)]
    return st


def test_a_stop_that_cuts_a_move_is_remembered_past_the_clear_until_the_next_move():
    """Protocol 3.2: the CUT flag, as the firmware keeps it (test_firmware_host)."""
    rig, w = make()
    w.setup()
    w.send(P.MoveCommand(1, 0, 3000))
    rig.advance(rig.now_tick() + 500)
    w.conn.write(host_estop_bytes())
    st = _status(w)
    assert st.estop and st.cut and not st.moving
    w.send(P.ClearEstop())
    assert not _status(w).estop and _status(w).cut
    w.send(P.Hello())
    assert _status(w).cut
    w.send(P.MoveCommand(2, 0, 10))
    assert not _status(w).cut
    rig.advance(rig.now_tick() + 5000)
    w.conn.write(host_estop_bytes())  # an idle rig: nothing cut
    st = _status(w)
    assert st.estop and not st.cut
