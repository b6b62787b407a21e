"""Real pseudo-terminals: the driver and the CLI against `cuberobot sim-rig`,
with a proxy of our own in between that corrupts and drops bytes, and the
bad inputs a user meets (wrong port, silent rig, garbage, other protocol)."""

import dataclasses
import os
import random
import select
import subprocess
import sys
import threading
import time
import tty

import pytest
from ptyproxy import ManglingProxy

from robot.rig import job
from robot.rig import link as link_module
from robot.rig.journal import Journal
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.rig.motion import plan
from robot.sim.pty_rig import SimRigProcess
from solver import SOLVED, SOLVED_CUBE, format_moves, group_steps, invert, random_scramble


def _cli(*args, timeout=60, **kw):
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True,
                       timeout=timeout, **kw)
    r.elapsed = time.monotonic() - t0
    assert "Traceback" not in r.stderr, r.stderr
    return r


@pytest.fixture
def cfg(tmp_path):
    c = load_config()
    return dataclasses.replace(c, rig=dataclasses.replace(c.rig, reply_timeout_s=0.03))


def test_driver_through_a_mangling_proxy_to_a_sim_rig_process(cfg, tmp_path):
    scramble = random_scramble(12, seed=7)
    start = SOLVED_CUBE.apply(scramble)
    with SimRigProcess("--speed", "20", "--state", start.to_facelets()) as sim:
        proxy = ManglingProxy(sim.port, drop=0.01, corrupt=0.01, seed=1)
        try:
            with Link(cfg, proxy.path) as link, Journal(tmp_path) as journal:
                link.connect()
                report = job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
        finally:
            proxy.close()
        assert sim.state() == SOLVED and report.state == SOLVED
        counts = sim.counts()
        (js,) = Journal(tmp_path).read()
        assert counts["moves"] == len(js.turns) == len(report.steps)
        assert counts["boots"] == 1


def test_cli_dry_run_and_jog_take_a_pty_port(tmp_path):
    moves = "R U R' U' F2 B"
    with SimRigProcess("--speed", "50") as sim:
        r = _cli("dry-run", moves, "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 0, r.stderr
        expected = SOLVED_CUBE.apply(moves).to_facelets()
        assert sim.state() == expected and f"final state: {expected}" in r.stdout
        assert "estimated" in r.stdout
        r = _cli("jog", "U", "-1", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 0, r.stderr
        assert sim.state() == SOLVED_CUBE.apply(moves + " U'").to_facelets()
        sim.press()
        sim.set_state(SOLVED)
        assert sim.state() == SOLVED
        r = _cli("resume", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 0 and "nothing to resume" in r.stdout


def test_start_on_a_pty_with_the_simulated_cameras_refuses_as_the_hardware_doc_says(tmp_path):
    """A pty carries the protocol, not the cube: the simulated cameras cannot
    show it, and docs/hardware.md says so and what to run instead."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "hardware.md").read_text()
    assert "`start` on such a port needs\nreal cameras" in doc and "start --headless --firmware" in doc
    with SimRigProcess("--speed", "50") as sim:
        r = _cli("start", "--headless", "--no-wait", "--port", sim.port, "--state-dir", str(tmp_path))
    assert r.returncode == 2 and "is simulated, but the rig on" in r.stderr, r.stderr
    assert "sim:// or --firmware" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_jog_refuses_an_unfinished_job_unless_told_to_give_it_up(tmp_path):
    """A stopped run's job waits for `resume`; a jog would make its recorded
    state wrong, so it is refused in one line, and made only with
    --give-up-job, which ends the job in the journal first."""
    with Journal(tmp_path) as journal:
        journal.start_job(SOLVED, ["U"])
    with SimRigProcess("--speed", "50") as sim:
        r = _cli("jog", "U", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 2 and "`cuberobot resume` first" in r.stderr and "--give-up-job" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and sim.state() == SOLVED
        r = _cli("jog", "U", "--give-up-job", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 0 and "gave up the job" in r.stdout, r.stderr
        assert sim.state() == SOLVED_CUBE.apply("U").to_facelets()
    with Journal(tmp_path) as journal:
        assert journal.unfinished() is None and journal.read()[-1].end["status"] == "given-up"


def test_jog_takes_a_step_count_to_align_a_face(tmp_path):
    """A few motor steps at a time (the protocol's MOVE takes any count): the
    rig counts exactly those steps; a quarter's worth turns the face."""
    with SimRigProcess("--speed", "50") as sim:
        r = _cli("jog", "U", "--steps", "5", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 0, r.stderr
        assert "turned U 5 step(s) clockwise" in r.stdout and "a quarter turn is " in r.stdout
        quarter = int(r.stdout.rsplit("a quarter turn is ", 1)[1].rstrip(")\n"))
        assert sim.counts()["steps"][0] == 5 and sim.state() == SOLVED
        r = _cli("jog", "U", "--steps", str(-quarter), "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 0 and "anticlockwise" in r.stdout, r.stderr
        assert sim.state() == SOLVED_CUBE.apply("U'").to_facelets()
    for bad, why in ((["--steps", "0"], "non-zero"), (["--steps", "40000"], "from -30000 to 30000"),
                     (["2", "--steps", "3"], "not both")):
        r = _cli("jog", "U", *bad, "--state-dir", str(tmp_path))
        assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_unknown_port_is_a_clear_error(tmp_path):
    r = _cli("dry-run", "U", "--port", "/dev/cuberobot-missing", "--state-dir", str(tmp_path))
    assert r.returncode == 1 and "cannot open the rig's port '/dev/cuberobot-missing'" in r.stderr
    assert "no such device: is the board plugged in" in r.stderr and "`cuberobot doctor`" in r.stderr
    for port, words in (("/dev/null", "not a serial port"), (str(tmp_path), "a folder, not a serial port")):
        r = _cli("dry-run", "U", "--port", port, "--state-dir", str(tmp_path / "s"))
        assert r.returncode == 1 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def _quick_config(tmp_path):
    p = tmp_path / "quick.toml"
    p.write_text("[rig]\nconnect_timeout_s = 1.0\nreply_timeout_s = 0.02\n")
    return str(p)


def test_a_rig_that_never_answers(tmp_path):
    master, slave = os.openpty()
    try:
        r = _cli("dry-run", "U", "--port", os.ttyname(slave), "--config", _quick_config(tmp_path),
                 "--state-dir", str(tmp_path), timeout=30)
    finally:
        os.close(master)
        os.close(slave)
    assert r.returncode == 1 and "no answer from a rig" in r.stderr
    assert r.elapsed < 15


def test_garbage_on_the_line(tmp_path):
    master, slave = os.openpty()
    tty.setraw(slave)
    stop = threading.Event()

    def spew():
        rng = random.Random(3)
        while not stop.is_set():
            try:
                os.write(master, bytes(rng.randrange(256) for _ in range(64)))
                while select.select([master], [], [], 0)[0]:
                    os.read(master, 4096)
            except OSError:
                return
            time.sleep(0.005)

    t = threading.Thread(target=spew, daemon=True)
    t.start()
    try:
        r = _cli("dry-run", "U", "--port", os.ttyname(slave), "--config", _quick_config(tmp_path),
                 "--state-dir", str(tmp_path), timeout=30)
    finally:
        stop.set()
        t.join(2)
        os.close(master)
        os.close(slave)
    assert r.returncode == 1 and "no answer from a rig" in r.stderr


def test_other_protocol_version(tmp_path):
    r = _cli("dry-run", "U", "--port", "sim://?protocol=7", "--state-dir", str(tmp_path))
    assert r.returncode == 1
    assert "speaks protocol version 7, this cuberobot speaks version 2" in r.stderr


def test_malformed_config_and_bad_fault_spec(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[rig]\nbaud = 'fast'\n")
    r = _cli("dry-run", "U", "--config", str(bad))
    assert r.returncode == 2 and "bad.toml: rig.baud: expected an integer" in r.stderr
    r = _cli("sim-rig", "--faults", "drop:7")
    assert r.returncode == 2 and "drop" in r.stderr
    r = _cli("sim-rig", "--firmware", "/nonexistent.elf")
    assert r.returncode in (1, 2) and r.stderr


def test_dry_run_output_is_timed_and_correct():
    moves = "U D' R2 L F B'"
    r = _cli("dry-run", moves, "--from", SOLVED)
    assert r.returncode == 0, r.stderr
    assert f"final state: {SOLVED_CUBE.apply(moves).to_facelets()}" in r.stdout
    assert "U:+400 D:-400" in r.stdout  # opposite faces in one step
    assert format_moves(invert(moves))  # the moves parse both ways


def test_a_killed_process_is_resumed_from_the_true_state(tmp_path):
    import signal

    moves = "R U R' U' F2 B D' L2 U F' R2 D B2 L U2 R' F D2"
    expected = SOLVED_CUBE.apply(moves).to_facelets()
    with SimRigProcess("--speed", "4") as sim:
        p = subprocess.Popen([sys.executable, "-m", "robot", "dry-run", moves, "--port", sim.port,
                              "--state-dir", str(tmp_path)], stdout=subprocess.PIPE, text=True)
        # Wait for a few turns to finish, then kill the driver without warning.
        lines = []
        while len(lines) < 4:
            lines.append(p.stdout.readline())
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        p.stdout.close()
        assert sim.state() != expected
        r = _cli("resume", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 0, r.stderr
        assert "resuming job 1: " in r.stdout and "(the rig's word)" in r.stdout, r.stdout
        assert sim.state() == expected
        (js,) = Journal(tmp_path).read()
        assert js.end["status"] == "done" and js.state == expected
        assert sim.counts()["moves"] == len(js.turns)


def test_ctrl_c_stops_the_rig_through_the_pty(tmp_path):
    import signal

    moves = "R U R' U' F2 B D' L2 U F' R2 D B2 L U2"
    # At half real time the job takes about 8 s, so a busy machine that is
    # slow to read turn 1 and send the signal cannot see the job finish first.
    with SimRigProcess("--speed", "0.5") as sim:
        with Link(load_config(), sim.port) as link:
            link.connect()
            sim.press()
            deadline = time.monotonic() + 5
            while link.buttons == 0 and time.monotonic() < deadline:
                link.poll(0.05)
            assert link.buttons == 1
        p = subprocess.Popen([sys.executable, "-m", "robot", "dry-run", moves, "--port", sim.port,
                              "--state-dir", str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        while "1  R" not in p.stdout.readline():
            pass
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=20)
        assert p.returncode == 130 and "interrupted" in err and "Traceback" not in err
        # The one line says the rig was stopped and what to do next.
        assert f"the rig on {sim.port} was sent the emergency stop" in err and "estop --clear" in err
        assert len(err.strip().splitlines()) == 1
        # The rig latched its emergency stop: the job cannot go on, and resume says why.
        r = _cli("resume", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 1 and "emergency stop" in r.stderr and "Rescan" in r.stderr
        assert "resuming" not in r.stdout and "asking the rig" in r.stdout, r.stdout  # it never went on
        r = _cli("dry-run", "U", "--port", sim.port, "--state-dir", str(tmp_path / "other"))
        assert r.returncode == 1 and "emergency stop" in r.stderr and "the job was not started" in r.stderr
        moves_before = sim.counts()["moves"]
        r = _cli("estop", "--clear", "--port", sim.port)
        assert r.returncode == 0, r.stderr
        # The refused job was never journalled: a resume after the clear turns nothing it was not asked to.
        r = _cli("resume", "--port", sim.port, "--state-dir", str(tmp_path / "other"))
        assert r.returncode == 0 and "nothing to resume" in r.stdout, r.stdout + r.stderr
        assert sim.counts()["moves"] == moves_before
        r = _cli("dry-run", "U", "--port", sim.port, "--state-dir", str(tmp_path / "other"))
        assert r.returncode == 0, r.stderr
        # `cuberobot estop` latches a rig that lives on, and says so only because the rig says so.
        r = _cli("estop", "--port", sim.port)
        assert r.returncode == 0 and "latched" in r.stdout, r.stderr
        r = _cli("jog", "U", "--port", sim.port, "--state-dir", str(tmp_path / "other"))
        assert r.returncode == 1 and "emergency stop" in r.stderr
        assert _cli("estop", "--clear", "--port", sim.port).returncode == 0


def test_a_reset_mid_turn_asks_for_a_rescan(tmp_path):
    moves = "R U R' U' F2 B D' L2 U F'"
    with SimRigProcess("--speed", "5", "--faults", "reset:0.5") as sim:
        r = _cli("dry-run", moves, "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 1
        assert "was reset" in r.stderr and "Rescan the cube" in r.stderr
        r = _cli("resume", "--port", sim.port, "--state-dir", str(tmp_path))
        assert r.returncode == 1 and "unknown" in r.stderr
        assert sim.counts()["boots"] == 2


def test_sim_rig_line_interface():
    from solver import random_cube

    with SimRigProcess("--scramble", "5") as sim:
        assert sim.port.startswith("/dev/")
        assert sim.state() == random_cube(5).to_facelets()
        assert sim.ask("set UUU").startswith("error:")
        assert sim.ask("bogus").startswith("error: unknown command")
        assert sim.counts() == {"turns": [0] * 6, "steps": [0] * 6, "moves": 0, "boots": 1}
        assert sim.proc.poll() is None
    assert sim.proc.returncode == 0


@pytest.mark.parametrize("mode", ["unsynced", "torn", "three"])
def test_a_power_cut_that_takes_the_journals_tail_never_turns_a_face_twice(mode, tmp_path):
    """The issue's repro and its cousins: the driver killed mid-job, the
    journal's end lost, the rig carrying on with its queue; resume must take
    the rig's word, never turn a face twice, never report a state the rig is
    not in, and move nothing when it cannot know."""
    import soak

    outcomes = []
    with SimRigProcess("--speed", "4") as sim:
        for k, kill_after in enumerate((0.9, 1.3, 1.8)):
            r = soak.power_cut_run(100 * len(mode) + k, sim, tmp_path / f"{k}", mode, kill_after_s=kill_after)
            assert not r.failures, r.failures
            outcomes.append(r.outcome)
    assert "finished" in outcomes, outcomes  # the rig's word made at least one run finishable


def test_a_stalled_line_is_waited_for_and_said_so(cfg, tmp_path):
    scramble = random_scramble(14, seed=21)
    start = SOLVED_CUBE.apply(scramble)
    said = []
    with SimRigProcess("--speed", "4", "--state", start.to_facelets()) as sim:
        proxy = ManglingProxy(sim.port, drop=0, corrupt=0)
        try:
            with Link(cfg, proxy.path) as link, Journal(tmp_path) as journal:
                link.connect()
                link.on_stall = said.append

                def on_turn(td):
                    if td.index == 2:
                        proxy.stall(2.5)

                steps = plan(group_steps(invert(scramble)), link.config)
                report = job.run(link, journal, start, steps, on_turn=on_turn)
        finally:
            proxy.close()
        assert sim.state() == SOLVED and report.state == SOLVED
        assert sim.counts()["moves"] == len(report.steps)  # every move once
    assert any("silent" in s and "waiting up to 10 s" in s for s in said), said
    assert "answers again" in said[-1]


def test_a_stall_past_the_limit_names_resume_which_then_finishes(cfg, tmp_path):
    short = dataclasses.replace(cfg, rig=dataclasses.replace(cfg.rig, stall_timeout_s=1.0))
    scramble = random_scramble(14, seed=22)
    start = SOLVED_CUBE.apply(scramble)
    with SimRigProcess("--speed", "4", "--state", start.to_facelets()) as sim:
        proxy = ManglingProxy(sim.port, drop=0, corrupt=0)
        try:
            with Link(short, proxy.path) as link, Journal(tmp_path) as journal:
                link.connect()
                link.on_stall = lambda s: None

                def on_turn(td):
                    if td.index == 2:
                        proxy.stall(3.0)

                steps = plan(group_steps(invert(scramble)), link.config)
                with pytest.raises(link_module.LinkStalled, match="cuberobot resume"):
                    job.run(link, journal, start, steps, on_turn=on_turn)
            time.sleep(2.5)
            with Link(short, proxy.path) as link, Journal(tmp_path) as journal:
                report = job.resume(link, journal)
        finally:
            proxy.close()
        assert sim.state() == SOLVED and report.state == SOLVED
        (js,) = Journal(tmp_path).read()
        assert sim.counts()["moves"] == len(js.turns)  # every move once


def test_solves_ride_out_noise_bursts_stalls_and_a_pulled_cable(cfg, tmp_path):
    """The line soak of benchmarks/link.py (100 solves), sized down: 1 % of
    the bytes dropped and 1 % damaged, garbage bursts with lone and paired
    0x18 bytes, a 2-3 s stall in solve 1 and a pulled cable in solve 2
    (then resume); CUBEROBOT_SOAK_SCALE=1 runs the 100 here."""
    import soak

    n = soak.sized(soak.LINE_SOLVES, suite=3, least=3)
    stall_every, pull_every = (4, 10) if n >= 10 else (2, 4)
    stall_s = (2.0, 5.0) if n >= 10 else (2.0, 3.0)
    with SimRigProcess("--speed", "10") as sim:
        r = soak.line_soak(n, sim, cfg, tmp_path, seed=3, stall_every=stall_every, pull_every=pull_every,
                           stall_s=stall_s)
    print(f"\nline soak: {r}")
    assert not r.failures, r.failures
    pulls = sum(k % pull_every == pull_every // 2 for k in range(n))
    assert r.solves == n and r.pulls == r.resumes == pulls >= 1
    # every stall planned (at full size, a cable pulled earlier in the same solve may spare one)
    assert 1 <= r.stalls <= n // stall_every and (n >= 10 or r.stalls == n // stall_every)
    assert r.bursts > 3 * n


def test_ctrl_c_while_the_rig_is_connecting_stops_it_and_says_so():
    """Ctrl-C during the handshake of a run's rig (app/rigs.py connect_rig,
    the boot wait of an Uno): the stop goes out on the line, and the
    interrupt says so with the clear that names the port (it said only
    "interrupted" while the rig latched)."""
    import _thread

    from robot.app.rigs import attach_rig, connect_rig
    from robot.rig.config import parse_config
    from robot.rig.protocol import ESTOP_SEQUENCE

    host, rig = os.openpty()  # a rig that never answers: the handshake waits
    tty.setraw(rig)
    try:
        port = os.ttyname(rig)
        cfg = parse_config('[rig]\nport = "x"\nconnect_timeout_s = 20\n', None)
        handle = attach_rig(cfg, port=port, firmware=None, seed=1)
        timer = threading.Timer(0.5, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt) as caught:
            connect_rig(handle)
        timer.join()
        said = str(caught.value)
        assert f"the rig on {port} was sent the emergency stop" in said, said
        assert f"`cuberobot estop --clear --port {port}`" in said
        heard = b""
        while select.select([host], [], [], 0.2)[0]:
            heard += os.read(host, 4096)
        assert ESTOP_SEQUENCE in heard
    finally:
        os.close(host)
        os.close(rig)
