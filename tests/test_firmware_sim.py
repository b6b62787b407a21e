"""The real Uno binary in simavr, driven by the real host driver (robot.rig.link).

The harness counts every step pulse on the STEP/DIR pins and turns the
motors' positions into face turns on its own cube, so these tests check the
firmware by its effect on the emulated machine, not by what it says.
"""

from __future__ import annotations

import dataclasses
import random
import time

import pytest
import soak
from fwtools import (
    UNO_ELF,
    SerialClient,
    expected_counts,
    host_estop_bytes,
    longest_estop_run,
    make,
    noise_burst,
    noisy_writes,
    read_edges,
    write_config,
)
from simavr_rig import SimavrRig

from robot.rig import job, timing
from robot.rig import protocol as P
from robot.rig.config import CubeConfig
from robot.rig.journal import Journal
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.rig.motion import plan
from robot.sim.virtual_rig import Mechanics
from solver import SOLVED, SOLVED_CUBE, group_steps, invert, random_scramble

F_CPU = 16_000_000
CYCLES_PER_TICK = F_CPU // P.TICK_HZ


@pytest.fixture(scope="module")
def elf():
    make("all", "sim")
    return UNO_ELF


@pytest.fixture
def fast_cfg(tmp_path):
    return load_config(write_config(tmp_path / "fast.toml"))


def test_100_random_solves_end_solved_with_exact_step_counts(elf, fast_cfg, tmp_path):
    """The first 10 of tests/soak.py's 100 seeded solves (``firmware_solves``:
    the cube solved, each motor's steps exactly the plan's, each DONE's
    ticks the host's model); ``python benchmarks/firmware.py --solves 100``
    runs all 100, as does CUBEROBOT_SOAK_SCALE=1 here."""
    n = soak.sized(soak.FIRMWARE_SOLVES, suite=10)
    r = soak.firmware_solves(n, elf, fast_cfg, tmp_path)
    assert r["solves"] == n and r["moves"] >= n
    print(f"\n{n} solves, {r['moves']} moves, {r['wall_s']:.1f} s wall, {r['simulated_s']:.1f} s simulated")


def _rising_steps(edges, motor: int) -> list[int]:
    return [c for c, name, v in edges if name == f"step{motor}" and v == 1]


def test_a_turns_duration_from_the_edge_log_matches_the_host_estimate(elf, tmp_path):
    # The default set-up (400 steps a quarter turn, 3 rev/s) with turns one after another: this
    # is about one motor's profile, step by step (overlapping turns are tested on their own).
    cfg = load_config()
    cfg = dataclasses.replace(cfg, cube=CubeConfig(corner_cutting=False))
    log = tmp_path / "edges.log"
    with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
        link.connect()
        steps = plan(group_steps("R2 U"), cfg)
        with Journal(tmp_path / "j") as journal:
            report = job.run(link, journal, SOLVED_CUBE, plan(group_steps("R2 U"), link.config))
        assert rig.state() == SOLVED_CUBE.apply("R2 U").to_facelets()
        rig.counts()  # flushes the edge log
    edges = read_edges(log)
    profiles = cfg.profiles()
    for step in steps:
        (motor, n), = step.parts
        rises = _rising_steps(edges, motor)
        assert len(rises) == abs(n)
        model = timing.step_ticks(abs(n), *(getattr(profiles[motor], f) for f in ("vmax_q", "accel_q",
                                                                                   "vmin_q")))
        measured = (rises[-1] - rises[0]) / CYCLES_PER_TICK
        expected = model[-1] - model[0]
        assert abs(measured - expected) <= 0.02 * expected
        # Each pulse in its modelled tick.
        for c, t in zip(rises, model):
            assert abs((c - rises[0]) / CYCLES_PER_TICK - (t - model[0])) < 0.75
        print(f"\nmotor {motor}: {abs(n)} steps, measured {measured:.2f} ticks, model {expected} ticks "
              f"({100 * (measured - expected) / expected:+.4f}%)")
    for turn, step in zip(report.turns, steps):
        assert turn.ticks == sum(timing.move_ticks(step.parts, profiles))


def test_two_motors_at_12000_steps_per_s_miss_no_step(elf, tmp_path):
    # 1600 steps per face turn, 7.5 rev/s = 12,000 steps/s on both motors of an axis.
    cfg = load_config(write_config(tmp_path / "c.toml", microsteps=8, max_speed=7.5,
                                   acceleration=300.0, start_speed=0.5, settle_ms=0))
    spq = cfg.motors["U"].steps_per_quarter
    assert spq == 400
    log = tmp_path / "edges.log"
    with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
        link.connect()
        moves = "U2 D2 U2 D2"  # grouped: two moves of U2+D2, 800 steps per motor each
        with Journal(tmp_path / "j") as journal:
            report = job.run(link, journal, SOLVED_CUBE, plan(group_steps(moves), link.config))
        assert len(report.steps) == 2 and all(len(s.parts) == 2 for s in report.steps)
        assert rig.state() == SOLVED
        counts = rig.counts()
    plus, minus = expected_counts(report.steps)
    assert (counts["plus"], counts["minus"]) == (plus, minus)
    edges = read_edges(log)
    p = cfg.profiles()[0]
    model = timing.step_ticks(800, p.vmax_q, p.accel_q, p.vmin_q)
    i0, i1 = 250, 550  # the middle of the move: full speed (the ramps take ~150 steps)
    assert (i1 - i0) / ((model[i1] - model[i0]) / P.TICK_HZ) == pytest.approx(12000, rel=0.002)
    for motor in (0, 3):
        rises = _rising_steps(edges, motor)
        assert len(rises) == 1600
        first = rises[:800]
        jitter = max(abs((c - first[0]) / CYCLES_PER_TICK - (t - model[0])) for c, t in zip(first, model))
        assert jitter < 0.75  # every pulse in its modelled tick (the interrupt's own length varies)
        # Full speed: 12,000 steps/s measured over the cruise.
        rate = (i1 - i0) / ((first[i1] - first[i0]) / F_CPU)
        assert abs(rate - 12000) < 12000 * 0.01, rate
        print(f"\nmotor {motor}: cruise {rate:.0f} steps/s over {i1 - i0} steps, "
              f"pulse jitter {jitter * 40:.1f} us")


def test_emergency_stop_stops_within_2_ms_latched_until_cleared(elf, tmp_path):
    cfg = load_config(write_config(tmp_path / "c.toml", microsteps=8, max_speed=3.0, acceleration=40.0))
    log = tmp_path / "edges.log"
    with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig:
        client = SerialClient(rig.port)
        try:
            assert isinstance(client.request(P.Hello()), P.HelloOk)
            for m, prof in enumerate(cfg.profiles()):
                client.request(P.ConfigMotor(m, prof.vmax_q, prof.accel_q, prof.vmin_q, prof.settle_ms))
            assert isinstance(client.request(P.MoveCommand(1, 1, 20000)), P.Ack)
            deadline = time.monotonic() + 10
            while rig.counts()["steps"][1] < 2000:
                assert time.monotonic() < deadline
                time.sleep(0.005)
            client.ser.write(host_estop_bytes())
            ev = client.wait_for(lambda m: isinstance(m, P.Event) and m.event == P.EventCode.ESTOP_LATCHED)
            assert ev.arg == 1
            stopped_at = rig.counts()["steps"][1]
            time.sleep(0.2)
            assert rig.counts()["steps"][1] == stopped_at < 20000
            st = client.request(P.StatusQuery())
            assert st.estop and not st.moving
            err = client.request(P.MoveCommand(2, 1, 100))
            assert isinstance(err, P.Err) and err.code == P.ErrorCode.ESTOP
            assert isinstance(client.request(P.ClearEstop()), P.Ack)
            assert isinstance(client.request(P.MoveCommand(3, 1, 100)), P.Ack)
            client.wait_for(lambda m: isinstance(m, P.Done) and m.move_id == 3)
            assert rig.counts()["steps"][1] == stopped_at + 100
        finally:
            client.close()
    edges = read_edges(log)
    arrival, latching, last, stopping, off = _stop_timing(edges, 1, 0)
    assert len([c for c in _rising_steps(edges, 1) if c < arrival]) >= 2000
    assert last - arrival < 2e-3 * F_CPU and off - arrival < 2e-3 * F_CPU
    assert off >= latching  # the run's last byte stops, not the ones before it
    print(f"\nestop: last step pulse {(last - arrival) / F_CPU * 1e6:+.0f} us after the arrival of the "
          f"stop's first byte ({len(stopping)} pulses after it), drivers off after "
          f"{(off - arrival) / F_CPU * 1e6:.0f} us, {(off - latching) / F_CPU * 1e6:.0f} us after its "
          f"byte {P.ESTOP_RUN}")


def _stop_timing(edges, motor: int, sent_at: int):
    """Cycle stamps of the host's emergency stop, sent at cycle ``sent_at`` or
    later, in an edge log: the arrival of its first byte, of the byte that
    completes the run, the last step pulse of ``motor`` before the drivers
    come back on, the pulses after the first byte, and the drivers going off."""
    stop = [c for c, name, v in edges if name == "rx" and v == P.RT_ESTOP and c >= sent_at]
    arrival, latching = stop[0], stop[P.ESTOP_RUN - 1]
    off = min(c for c, name, v in edges if name == "en" and v == 0 and c >= arrival)
    back_on = min((c for c, name, v in edges if name == "en" and v == 1 and c >= arrival), default=1 << 62)
    rises = _rising_steps(edges, motor)
    stopping = [c for c in rises if arrival <= c < back_on]
    last = stopping[-1] if stopping else max(c for c in rises if c < arrival)
    return arrival, latching, last, stopping, off


NOISE = [
    bytes((P.RT_ESTOP,)),
    bytes((P.RT_ESTOP,)) * (P.ESTOP_RUN - 1),
    bytes((P.RT_ESTOP, P.RT_ESTOP, P.RT_STATUS, P.RT_ESTOP, P.RT_ESTOP)),
    bytes((P.RT_ESTOP, P.RT_ESTOP, P.FLAG, P.RT_ESTOP, 0x00, P.RT_ESTOP, P.RT_ESTOP)),
]


def _solve_with_noise(rig, link, cfg, tmp_path, k: int) -> list[int]:
    """One solve on the emulated rig, which must end solved with no stop
    latched; returns the steps (+, -) per motor that the solve planned."""
    scramble = random_scramble(8, seed=500 + k)
    start = SOLVED_CUBE.apply(scramble)
    rig.set_state(start.to_facelets())
    with Journal(tmp_path / f"j{k}") as journal:
        report = job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
    assert report.state == SOLVED and rig.state() == SOLVED, f"solve {k}"
    assert not link.estop_latched
    return expected_counts(plan(group_steps(invert(scramble)), cfg))


def _solves_with_noise(rig, link, cfg, tmp_path, n):
    """``n`` solves through the noisy link; the harness's step counts must be
    exactly what the moves ask for. Returns the harness's counts."""
    plus, minus = [0] * 6, [0] * 6
    for k in range(n):
        p, m = _solve_with_noise(rig, link, cfg, tmp_path, k)
        plus = [a + b for a, b in zip(plus, p)]
        minus = [a + b for a, b in zip(minus, m)]
    counts = rig.counts()
    assert (counts["plus"], counts["minus"]) == (plus, minus)
    return counts


def test_lone_estop_bytes_mid_solve_stop_nothing_and_the_hosts_stop_still_does(elf, fast_cfg, tmp_path):
    """Short runs of RT_ESTOP between frames, and frame bytes turned into
    RT_ESTOP, during solves: no stop, every step made; then the host's stop,
    mid-turn, still stops within 2 ms."""
    log = tmp_path / "edges.log"
    injected = {"between": 0, "in_frame": 0}

    def noise(k, frame):
        if k % 7 == 3:  # a frame byte hit by noise: that frame is lost, the host sends it again
            injected["in_frame"] += 1
            i = 1 + k % (len(frame) - 2)
            return frame[:i] + bytes((P.RT_ESTOP,)) + frame[i + 1:]
        injected["between"] += 1
        return NOISE[k % len(NOISE)] + frame

    with SimavrRig(elf, Mechanics.from_config(fast_cfg), edge_log=log) as rig, \
            Link(fast_cfg, rig.port) as link:
        link.connect()
        noisy_writes(link, noise)
        counts = _solves_with_noise(rig, link, fast_cfg, tmp_path, 10)
        st = link.status()
        assert not st.estop and st.rx_errors > 0 and link.retransmissions > 0 and counts["estops"] == 0
        assert injected["between"] > 50 and injected["in_frame"] > 8
        # The host's own stop, mid-turn.
        link.move(P.MoveCommand(0xFFF0, 1, 20000))
        deadline = time.monotonic() + 10
        while rig.counts()["steps"][1] < 1000:
            assert time.monotonic() < deadline
            time.sleep(0.005)
        sent_at = rig.counts()["cycle"]
        link.estop()
        while not link.estop_latched:
            assert time.monotonic() < deadline
            link.poll(0.02)
        assert link.status().estop
        assert rig.counts()["estops"] == 1  # (asking also flushes the harness's edge log)
    edges = read_edges(log)
    arrival, latching, last, stopping, off = _stop_timing(edges, 1, sent_at)
    assert last - arrival < 2e-3 * F_CPU and off - arrival < 2e-3 * F_CPU and off >= latching
    print(f"\n{injected} noise injections, {link.retransmissions} retransmissions; the host's stop: last "
          f"pulse {(last - arrival) / F_CPU * 1e6:+.0f} us after its first byte")


def test_garbage_bursts_between_frames_stop_no_solve(elf, fast_cfg, tmp_path):
    rng = random.Random(12)
    bursts = []

    def noise(k, frame):
        bursts.append(noise_burst(rng))
        return bursts[-1] + frame

    with SimavrRig(elf, Mechanics.from_config(fast_cfg)) as rig, Link(fast_cfg, rig.port) as link:
        link.connect()
        noisy_writes(link, noise)
        counts = _solves_with_noise(rig, link, fast_cfg, tmp_path, 20)
        assert not link.status().estop and counts["estops"] == 0
    ones = sum(b.count(bytes((P.RT_ESTOP,))) for b in bursts)
    assert len(bursts) > 100 and ones > 5 * len(bursts)
    assert max(longest_estop_run(b) for b in bursts) == P.ESTOP_RUN - 1
    print(f"\n{len(bursts)} bursts of 64 bytes, {ones} RT_ESTOP bytes in them, "
          f"{link.retransmissions} retransmissions")


def test_reset_is_seen_with_its_cause_and_a_new_boot_id(elf):
    with SimavrRig(elf) as rig:
        client = SerialClient(rig.port)
        try:
            first = client.request(P.Hello())
            client.pump(0.05)
            client.inbox.clear()
            rig.reset()
            boot = client.wait_for(lambda m: isinstance(m, P.Event) and m.event == P.EventCode.BOOT)
            assert boot.arg == 2  # external reset
            err = client.request(P.MoveCommand(1, 0, 10))
            assert isinstance(err, P.Err) and err.code == P.ErrorCode.NO_SESSION
            second = client.request(P.Hello())
            assert second.boot_id != first.boot_id
            st = client.request(P.StatusQuery())
            assert st.session and not st.estop and st.last_done_id == P.NO_ID
        finally:
            client.close()
        assert rig.counts()["boots"] == 2


def test_the_button_reaches_the_host_as_an_event(elf):
    with SimavrRig(elf) as rig:
        client = SerialClient(rig.port)
        try:
            client.request(P.Hello())
            rig.press()
            ev = client.wait_for(lambda m: isinstance(m, P.Event) and m.event == P.EventCode.BUTTON)
            assert ev.arg == 0
        finally:
            client.close()


def test_mega_build_runs_solves_too(elf, fast_cfg, tmp_path):
    mega = elf.parent.parent / "mega" / "cuberobot.elf"
    with SimavrRig(mega, Mechanics.from_config(fast_cfg), board="mega") as rig, \
            Link(fast_cfg, rig.port) as link:
        hello = link.connect()
        assert (hello.board, hello.queue_capacity) == (P.BOARD_MEGA, 8)
        scramble = random_scramble(15, seed=3)
        start = SOLVED_CUBE.apply(scramble)
        rig.set_state(start.to_facelets())
        with Journal(tmp_path / "j") as journal:
            job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
        assert rig.state() == SOLVED
        plus, minus = expected_counts(plan(group_steps(invert(scramble)), fast_cfg))
        counts = rig.counts()
        assert (counts["plus"], counts["minus"]) == (plus, minus)


def test_cli_sim_rig_serves_the_firmware_for_dry_run(elf, tmp_path):
    import subprocess
    import sys

    from robot.sim.pty_rig import SimRigProcess

    cfg_path = write_config(tmp_path / "fast.toml")
    moves = "R U R' U' F2 B L' D2"
    with SimRigProcess("--speed", "max", "--config", str(cfg_path), firmware=str(elf)) as sim:
        r = subprocess.run([sys.executable, "-m", "robot", "dry-run", moves, "--port", sim.port,
                            "--config", str(cfg_path), "--state-dir", str(tmp_path)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert sim.state() == SOLVED_CUBE.apply(moves).to_facelets()
        # F2 B is one move
        assert sim.counts()["moves"] == len(plan(group_steps(moves), load_config(cfg_path)))


def test_cli_sim_rig_firmware_errors_are_clear(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "robot", "sim-rig", "--firmware", str(tmp_path / "nope.elf")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "firmware file not found" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("what", ["missing", "not-elf", "hex", "directory"])
def test_start_with_a_wrong_firmware_file_is_a_user_mistake(what, tmp_path):
    import subprocess
    import sys

    path = {"missing": tmp_path / "nope.elf", "not-elf": tmp_path / "README.md",
            "hex": tmp_path / "cuberobot.hex", "directory": tmp_path}[what]
    if what == "not-elf":
        path.write_text("# not firmware\n")
    if what == "hex":
        path.write_text(":100000000C9434000C9451000C9451000C94510049\n")
    r = subprocess.run([sys.executable, "-m", "robot", "start", "--headless", "--firmware", str(path),
                        "--state-dir", str(tmp_path / "state")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "make -C firmware" in lines[0], r.stderr
    assert "resume" not in r.stderr and "''" not in r.stderr
    assert not (tmp_path / "state" / "journal.jsonl").exists() or \
        (tmp_path / "state" / "journal.jsonl").read_text() == ""


def test_a_paced_harness_that_fell_behind_does_not_sprint(elf, fast_cfg, tmp_path):
    """A harness stopped for a while (a busy host) carries on at real time:
    the turns that follow take at least as long on the wall clock as on the
    rig's own clock, as on a real board."""
    import os
    import signal

    with SimavrRig(elf, Mechanics.from_config(fast_cfg), speed=1.0) as rig, \
            Link(fast_cfg, rig.port) as link:
        link.connect()
        os.kill(rig.proc.pid, signal.SIGSTOP)
        time.sleep(1.5)
        os.kill(rig.proc.pid, signal.SIGCONT)
        moves = "R U F D L B R' U' F' D' L' B'"
        with Journal(tmp_path / "j") as journal:
            report = job.run(link, journal, SOLVED_CUBE, plan(group_steps(moves), link.config))
        assert report.executed_s is not None and report.executed_s > 0.5
        assert report.wall_s >= 0.97 * report.executed_s, (report.wall_s, report.executed_s)


def test_corner_cutting_solves_follow_the_host_schedule(elf, tmp_path):
    """overlap_deg > 0: perpendicular turns start early; the firmware's DONE
    ticks are the host's schedule, and the cube still ends solved."""
    cfg = load_config(write_config(tmp_path / "c.toml", overlap_deg=20.0))
    # At the board's real pace (speed 1), not as fast as the emulator runs: a host that queues
    # each move while the one before still turns is what is measured, and an emulator racing
    # ahead of a loaded machine's host would measure the machine instead.
    with SimavrRig(elf, Mechanics.from_config(cfg), speed=1.0) as rig, Link(cfg, rig.port) as link:
        link.connect()
        for k in range(5):
            scramble = random_scramble(12, seed=50 + k)
            start = SOLVED_CUBE.apply(scramble)
            rig.set_state(start.to_facelets())
            with Journal(tmp_path / f"j{k}") as journal:
                report = job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
            assert rig.state() == SOLVED
            steps = report.steps
            assert any(s.overlap for s in steps)
            sched = timing.schedule([s.planned() for s in steps], cfg.profiles())
            # A move whose successor was queued in time ends with its motion
            # (the schedule); if the host fell behind, it ends after its settle
            # time as a plain move. Nothing else is possible.
            # Each DONE counts from the previous DONE when its move started before it;
            # a move queued late (the host behind) started later and adds more.
            exact = 0
            for turn, step, want in zip(report.turns, steps, timing.done_ticks(sched)):
                motion, settle = timing.move_ticks(step.parts, cfg.profiles())
                assert want <= turn.ticks <= motion + settle
                exact += turn.ticks == want
            assert exact >= len(steps) // 2


def test_a_hung_main_loop_is_reset_by_the_watchdog(tmp_path):
    """A test build whose main loop hangs on frame type 0x7F: the watchdog
    restarts the board, which says so (EVENT BOOT, cause 4) with a new boot id."""
    from fwtools import BUILD

    make("BUILD=" + str(BUILD / "testhooks"), "EXTRA=-DCR_TEST_HOOKS", "uno")
    elf = BUILD / "testhooks" / "uno" / "cuberobot.elf"
    with SimavrRig(elf) as rig:
        client = SerialClient(rig.port)
        try:
            first = client.request(P.Hello())
            client.pump(0.05)
            client.inbox.clear()
            client.ser.write(P.frame(bytes([0x7F, 1])))
            boot = client.wait_for(lambda m: isinstance(m, P.Event) and m.event == P.EventCode.BOOT)
            assert boot.arg == 4
            assert client.request(P.Hello()).boot_id != first.boot_id
            assert not client.request(P.StatusQuery()).estop
        finally:
            client.close()
