"""Flipper and two-gripper rigs over the serial link (issue 26): the driver
sends CONFIG_SERVO at the handshake and each robot move as SERVO and MOVE
commands; the protocol simulator answers with the virtual parts' physics;
the firmware in simavr moves them by its pulses; `cuberobot resume` in a
new process finishes a killed job or says "state unknown: scan again" and
moves nothing."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from robot.rig import protocol as P
from robot.rig.errors import RigError
from robot.rig.link import EstopLatched, Link
from robot.rig.loading import load_config
from robot.rig.mechanisms import Action, HeldCube
from robot.rig.mechanisms.drive import LinkMechanism
from robot.sim.mechanisms import VirtualFlipper, virtual_mechanism
from robot.sim.protocol_sim import forget, rig_for_url, sim_url
from robot.sim.pulsed_mechanism import PulseReader
from solver import SOLVED, random_cube

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("flipper", "two-gripper")
ELF = ROOT / "firmware" / "build" / "uno" / "cuberobot.elf"


def _cfg(kind: str):
    return load_config(ROOT / "config" / "examples" / f"{kind}.toml")


def _linked(kind: str, name: str):
    url = sim_url(name)
    forget(url)
    rig = rig_for_url(url)
    link = Link(_cfg(kind), url, kind=kind)
    link.connect()
    return rig, link


def test_the_handshake_configures_the_servos_and_moves_turn_the_layer_they_should():
    rig, link = _linked("flipper", "flip-link")
    try:
        assert rig.servo_configured == {0, 1, 2}
        assert rig.mechanism is not None and rig.mechanism.limits["turntable"] == (500, 2500)
        drive = LinkMechanism(link, _cfg("flipper"), (None, 0, False))
        for a in (Action("close", "cover"), Action("turn", "", 1), Action("open", "cover"), Action("flip"),
                  Action("spin", "", -1)):
            drive.do(a)
        assert rig.mechanism.turns == [(3, 1)] and rig.mechanism.fault is None
        assert len(rig.record) == 6  # a flip is two SERVOs, each reported DONE once
    finally:
        link.close()


def test_a_two_gripper_rotation_is_a_move_of_its_stepper():
    rig, link = _linked("two-gripper", "grip-link")
    try:
        drive = LinkMechanism(link, _cfg("two-gripper"))
        drive.do(Action("rotate", "D", 1))  # both closed: the bottom layer turns
        drive.do(Action("open", "L"))
        drive.do(Action("rotate", "D", -1))  # L open: the whole cube turns
        assert rig.mechanism is not None and rig.mechanism.turns == [(3, 1)]
        assert rig.counts_steps[3] == 2 * 400
    finally:
        link.close()


def test_the_simulated_rig_refuses_what_the_firmware_refuses():
    rig, link = _linked("flipper", "flip-refuse")
    try:
        for msg, detail in ((P.ServoCommand(1, 0, 400, 100), 1),  # below its limits
                            (P.ServoCommand(1, 0, 1500, 10001), 2),  # travel too long
                            (P.ConfigServo(0, 300, 2500), 1),
                            (P.MoveCommand(1, 1, 400), 0)):  # D9 carries a servo
            with pytest.raises(RigError, match=f"BAD_ARG \\(detail {detail}\\)"):
                link.request(msg)
    finally:
        link.close()
    url = sim_url("flip-unconfigured")
    forget(url)
    rig = rig_for_url(url)
    rig.adopt_config(_cfg("flipper"))
    rig.session = True
    assert isinstance(rig._execute(P.ServoCommand(1, 0, 1500, 100)), P.Err)


def test_a_move_the_parts_cannot_make_stops_the_rig_and_the_driver_says_so():
    rig, link = _linked("flipper", "flip-jam")
    try:
        drive = LinkMechanism(link, _cfg("flipper"), (None, 0, False))
        drive.do(Action("close", "cover"))
        with pytest.raises(EstopLatched, match="jammed part"):
            drive.do(Action("flip"))  # the cover holds the cube down
        assert rig.mechanism is not None and rig.mechanism.fault and rig.estop
    finally:
        link.close()


def test_a_stop_that_lands_between_two_moves_is_told_as_a_stop_in_the_run():
    """The emergency stop from another terminal may land after one move's
    DONE and before the next move is queued: the rig refuses that move's
    command. The driver names the move, as for a stop under way (it passed
    on the link's "the rig is in emergency stop", the word for a rig found
    latched before the command began, which stands for a first command)."""
    rig, link = _linked("flipper", "flip-between")
    try:
        drive = LinkMechanism(link, _cfg("flipper"), (None, 0, False))
        drive.do(Action("close", "cover"))
        assert link.estop()
        with pytest.raises(EstopLatched, match="the rig stopped during the robot move open cover"):
            drive.do(Action("open", "cover"))
        fresh = LinkMechanism(link, _cfg("flipper"), (None, 0, True))
        with pytest.raises(EstopLatched, match="the rig is in emergency stop"):
            fresh.do(Action("open", "cover"))
    finally:
        link.close()


def test_pulses_with_jitter_give_the_servo_moves_and_whole_quarter_steps():
    cfg = _cfg("two-gripper")
    mech = virtual_mechanism(cfg, SOLVED)
    reader = PulseReader(cfg, mech)
    cycle = 0

    def pulse(servo: int, us: float) -> None:
        nonlocal cycle
        reader.edge(cycle, f"dir{servo + 1}", 1)
        reader.edge(cycle + int(us * 16), f"dir{servo + 1}", 0)
        cycle += 20_000 * 16

    grip = cfg.servos["grip_L"]
    reader.edge(0, "en", 1)
    for jitter in (0, 30, -20, 10, 35):  # L opens: within 40 us of the width asked
        pulse(1, grip.pulse_us(grip.angle("open_deg")) + jitter)
    reader.edge(cycle, "dir3", 1)
    for _ in range(300):  # the bottom gripper part-way through a quarter turn
        cycle += 100
        reader.edge(cycle, "step3", 1)
        reader.edge(cycle + 10, "step3", 0)
    reader.flush(whole_only=True)
    assert mech.cube.stickers == SOLVED  # not handed over half-done
    for _ in range(100):
        cycle += 100
        reader.edge(cycle, "step3", 1)
    reader.flush(whole_only=True)
    assert mech.fault is None and mech.turns == []  # L open: the whole cube turned
    assert mech.cube.stickers != SOLVED and HeldCube(mech.cube.stickers).is_solved()


def test_a_bad_sim_view_and_a_six_motor_sim_view_are_one_line_errors(tmp_path):
    (tmp_path / "one colour").write_text("U" * 54)  # 54 face letters, but no cube's six centres
    flipper = "config/examples/flipper.toml"
    for cfg, view, says in ((flipper, "none", "cannot read the simulated rig's cube"),
                            (flipper, "one colour", "six centres, each a face's letter"),
                            ("config/rig.toml", "none", "--sim-view is for")):
        r = subprocess.run([sys.executable, "-m", "robot", "start", "--headless", "--config", cfg,
                            "--state-dir", str(tmp_path), "--sim-view", str(tmp_path / view)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert r.returncode != 0 and "Traceback" not in r.stderr and says in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_kill_9_then_resume_in_a_new_process(kind, tmp_path):
    """Power cuts inside the job: `cuberobot start` killed with SIGKILL once
    the rig (a sim-rig in its own process) reports a set part of the job's
    layer turns made (half of them in the suite: the other half, seconds
    of the rig's moves, still to come), then `cuberobot resume` in a new
    process (tests/mechanism_soak.py).
    Where the kill falls is the rig's word, not the clock's, so every kill
    is inside the job: resume finishes it, or says "state unknown" and
    moves nothing.
    ``python benchmarks/mechanisms.py --power-cut 20 --cut-at turn`` runs 20
    a kind (and ``--cut-at time`` 20 at random moments of a whole run)."""
    import mechanism_soak
    import soak

    n = soak.sized(20, suite=1)
    for k in range(1, n + 1):
        r = mechanism_soak.power_cut_run(kind, 40 + k, tmp_path / str(k), kill_at=k / (n + 1), speed="4")
        assert not r.failures, r.failures
        # The rig had turned a layer of the job and not yet its last when the kill went out ...
        assert r.plan_turns and r.turns_at_kill is not None and 1 <= r.turns_at_kill < r.plan_turns, r
        assert r.outcome in ("finished", "unknown"), r  # ... so it fell inside the job


@pytest.fixture(scope="module")
def elf():
    from fwtools import make

    make("all", "sim")
    return ELF


def test_flipper_runs_on_the_firmware_in_simavr(elf, tmp_path):
    from robot.app.mechanism_start import run_mechanism_start

    """One whole run (20 s of emulated cycles); many cubes on the firmware:
    ``benchmarks/mechanisms.py --start N --firmware ELF``."""
    run = run_mechanism_start(_cfg("flipper"), seed=1, state_dir=tmp_path, firmware=str(elf),
                              out=lambda _l: None)
    assert run.status == "solved" and run.confirmed and run.scan_correct, run


def test_a_flipper_whose_cover_flips_runs_on_the_firmware_in_simavr(elf, tmp_path):
    """CUBOTino's build (config/examples/cubotino.toml): two servos, the
    cover's lifter tipping the cube, read back from the cover's pulses."""
    from robot.app.mechanism_start import run_mechanism_start

    run = run_mechanism_start(_cfg("cubotino"), seed=4, state_dir=tmp_path, firmware=str(elf),
                              out=lambda _l: None)
    assert run.status == "solved" and run.confirmed and run.scan_correct, run
    assert run.turns and run.length and run.turns < 4 * run.length  # no cover move between turns


def test_two_gripper_runs_on_the_firmware_in_simavr(elf, tmp_path):
    from robot.app.mechanism_start import run_mechanism_start

    run = run_mechanism_start(_cfg("two-gripper"), seed=4, state_dir=tmp_path, firmware=str(elf),
                              out=lambda _l: None)
    assert run.status == "solved" and run.confirmed


def test_the_firmware_s_pins_show_a_wrong_move_as_a_fault(elf):
    """A flip sent while the cover holds the cube: the firmware makes the
    pulses, the parts they move jam (the physics reads the pins, not the
    commands)."""
    from robot.sim.pty_rig import SimRigProcess

    cfg = _cfg("flipper")
    with tempfile.TemporaryDirectory() as d:
        cfg_path = ROOT / "config" / "examples" / "flipper.toml"
        with SimRigProcess("--config", str(cfg_path), "--state", random_cube(3).to_facelets(),
                           "--speed", "max", firmware=str(elf)) as sim, \
                Link(cfg, sim.port, kind="flipper") as link:
            link.connect()
            drive = LinkMechanism(link, cfg, (None, 0, False))
            drive.do(Action("close", "cover"))
            drive.do(Action("turn", "", 1))
            counts = sim.counts()
            assert counts["layer_turns"] == [[3, 1]] and counts["fault"] is None
            f = cfg.servos["flipper"]
            link.request(P.ServoCommand(900, 2, f.pulse_us(f.angle("flip_deg")), 200))
            deadline = time.monotonic() + 20
            while sim.counts()["fault"] is None and time.monotonic() < deadline:
                link.poll(0.1)
            assert "cover not open" in sim.counts()["fault"]
        assert Path(d).is_dir()


@pytest.mark.parametrize("rig", ["flipper", "cubotino"])
def test_resume_in_a_new_process_takes_the_rig_s_word_and_otherwise_moves_nothing(rig, tmp_path):
    """Two cuts in one job, each with a move under way, on a sim-rig in its
    own process: the first after the rig made the whole move (its last
    DONE is the move's last id: resume finishes the job), the second with a
    flip half made (the flipper, or the cover's lifter, up, not yet back
    down: state unknown, nothing moves)."""
    from robot.rig.mechanisms import mechanism_for, plan
    from robot.rig.mechanisms.journal import Interrupted, MechanismJournal, run_job
    from robot.sim.pty_rig import SimRigProcess

    cfg_path = ROOT / "config" / "examples" / f"{rig}.toml"
    cfg = _cfg(rig)
    m = mechanism_for(cfg)
    assert m is not None
    cube = random_cube(7)
    p = plan("R U F", m)  # a few flips among the turns
    flips = [i for i, a in enumerate(p.actions) if a.kind == "flip"]
    resume = [sys.executable, "-m", "robot", "resume", "--config", str(cfg_path), "--state-dir"]
    for folder, cut_at, half in ((tmp_path / "whole", flips[0], False), (tmp_path / "half", flips[-1], True)):
        with SimRigProcess("--config", str(cfg_path), "--state", cube.to_facelets(), "--speed", "max") as sim:
            with Link(cfg, sim.port, kind="flipper") as link:
                link.connect()
                drive = LinkMechanism(link, cfg, m.start())
                count = [0]

                def do(a, drive=drive, cut_at=cut_at, half=half, n=count):
                    i = n[0]
                    n[0] += 1
                    if i != cut_at:
                        return drive.do(a)
                    if not half:
                        drive.do(a)  # made whole; the process dies before "done" is written
                        raise Interrupted
                    msg = drive.commands.commands(a)[0]  # the flipper goes up ...
                    mid = drive._id()
                    drive._queue(type(msg)(mid, msg.servo, msg.pulse_us, msg.travel_ms))
                    drive._wait(mid, "flip up")
                    raise Interrupted  # ... and the host dies before sending it back down

                with pytest.raises(Interrupted):
                    run_job(MechanismJournal(folder), m, cube.to_facelets(), p.actions, do, state=m.start(),
                            boot_id=link.hello.boot_id, ids=drive.ids)
            before = sim.counts()
            r = subprocess.run([*resume, str(folder), "--port", sim.port], capture_output=True, text=True,
                               timeout=120, cwd=ROOT)
            after = sim.counts()
            assert "Traceback" not in r.stderr
            if half:
                assert r.returncode == 1 and "state unknown: scan again" in r.stderr, r.stderr
                assert "Nothing was moved" in r.stderr and after["moves"] == before["moves"]
                assert len(r.stderr.strip().splitlines()) == 1
            else:
                assert r.returncode == 0 and "the rig finished robot move" in r.stdout, (r.stdout, r.stderr)
                made = after["layer_turns"]
                assert len(made) == len(p.solution)  # every layer once
                j = MechanismJournal(folder).last()
                assert j is not None and j.end == "done" and j.done == len(p.actions)
                assert j.cube == cube.apply(p.solution).to_facelets()


def test_homing_brings_a_flipper_left_part_way_back_to_where_a_job_starts():
    """A run killed mid-scan leaves the flipper raised, the cover closed or
    the turntable off home; the next run homes the servos (flipper down,
    cover open, turntable home: a spin, never a layer turn) before it scans."""
    rig, link = _linked("flipper", "flip-home")
    try:
        cfg = _cfg("flipper")
        drive = LinkMechanism(link, cfg, (None, 0, False))
        drive.do(Action("spin", "", 1))
        drive.do(Action("close", "cover"))
        LinkMechanism(link, cfg).home()  # a new run knows nothing of that
        assert rig.mechanism is not None and rig.mechanism.fault is None and rig.mechanism.turns == []
        m = rig.mechanism
        assert isinstance(m, VirtualFlipper) and m.square()
        assert m._cover_at(m.angle["cover"]) == "open" and m._flipper_at(m.angle["flipper"]) == "rest"
        assert abs(m.angle["turntable"] - cfg.servos["turntable"].angle("home_deg")) < 1
    finally:
        link.close()
