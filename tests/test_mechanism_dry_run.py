"""`cuberobot dry-run --port` on a flipper or two-gripper rig: the face
turns planned into robot moves and made on the rig behind the port (a
sim-rig in its own process over a pty, as a real rig; the real firmware in
simavr), homed first and journalled as a run, so a maker can watch a
sequence on the rig they built before the first solve."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from robot.rig.loading import load_config
from robot.rig.mechanisms import Action, apply_to_cube, mechanism_for
from robot.rig.mechanisms.journal import MechanismJournal
from robot.rig.mechanisms.planner import plan
from robot.sim.pty_rig import SimRigProcess
from solver import parse_moves, random_cube

ROOT = Path(__file__).resolve().parents[1]


def _config(kind: str) -> Path:
    return ROOT / "config" / "examples" / f"{kind}.toml"


def _dry_run(kind: str, moves: str, start: str, *, port: str, state_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot", "dry-run", moves, "--from", start,
                           "--config", str(_config(kind)), "--port", port, "--state-dir", str(state_dir)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def _check_made(kind: str, moves: str, cube, sim: SimRigProcess, r: subprocess.CompletedProcess,
                state_dir: Path) -> None:
    """The rig holds what the plan's robot moves make of the cube it was
    given, each layer turned once; the command says so, and the journal
    ends the job done with the same cube."""
    assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    m = mechanism_for(load_config(_config(kind), settings=False))
    assert m is not None
    p = plan(parse_moves(moves), m, objective="weighed")  # as the dry run plans
    counts = sim.counts()
    assert counts["fault"] is None, counts
    assert len(counts["layer_turns"]) == len(parse_moves(moves)), counts
    assert sim.ask("state") == apply_to_cube(cube.to_facelets(), p.actions, m).stickers
    solved_frame = cube.apply(moves).to_facelets()
    assert f"final state: {solved_frame}" in r.stdout, r.stdout
    assert f"{len(p.actions)} robot moves for {len(parse_moves(moves))} face turns" in r.stdout
    assert f"on the {kind} rig on {sim.port}" in r.stdout, r.stdout
    job = MechanismJournal(state_dir).last()
    assert job is not None and job.end == "done" and job.cube == solved_frame


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_a_dry_run_makes_the_planned_robot_moves_on_the_rig_behind_the_port(kind, tmp_path):
    cube, moves = random_cube(21), "R U F' D2 B"
    rig = ("--config", str(_config(kind)), "--state", cube.to_facelets(), "--speed", "max")
    with SimRigProcess(*rig) as sim:
        r = _dry_run(kind, moves, cube.to_facelets(), port=sim.port, state_dir=tmp_path)
        _check_made(kind, moves, cube, sim, r, tmp_path)


def test_a_dry_run_waits_for_an_unfinished_job(tmp_path):
    """A job the journal says is under way knows where the rig stood; a dry
    run would move the cube under it, so it is refused in one line and
    nothing moves (not even homing)."""
    m = mechanism_for(load_config(_config("flipper"), settings=False))
    assert m is not None
    MechanismJournal(tmp_path).start_job(m, random_cube(3).to_facelets(), [Action("flip")], m.start())
    with SimRigProcess("--config", str(_config("flipper")), "--speed", "max") as sim:
        r = _dry_run("flipper", "R", random_cube(3).to_facelets(), port=sim.port, state_dir=tmp_path)
        assert r.returncode == 2 and "a dry run now would make its recorded state wrong" in r.stderr, r.stderr
        assert "cuberobot resume" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert r.stdout == "" and sim.counts()["moves"] == 0


@pytest.fixture(scope="module")
def elf():
    from fwtools import make

    make("all", "sim")
    return ROOT / "firmware" / "build" / "uno" / "cuberobot.elf"


def test_a_flipper_dry_run_on_the_firmware_in_simavr(elf, tmp_path):
    """The real firmware's servo pulses and steps move the virtual parts."""
    cube, moves = random_cube(22), "F R2 U'"
    rig = ("--config", str(_config("flipper")), "--state", cube.to_facelets(), "--speed", "max")
    with SimRigProcess(*rig, firmware=str(elf)) as sim:
        r = _dry_run("flipper", moves, cube.to_facelets(), port=sim.port, state_dir=tmp_path)
        _check_made("flipper", moves, cube, sim, r, tmp_path)


def test_ctrl_c_during_a_dry_run_on_the_rig_latches_it(tmp_path):
    from mechanism_kinds import interrupt_in_the_moves

    cfg = load_config(_config("flipper"), settings=False)
    start = random_cube(23).to_facelets()
    with SimRigProcess("--config", str(_config("flipper")), "--state", start, "--speed", "1") as sim:
        cmd = [sys.executable, "-m", "robot", "dry-run", "R U F L B D R' U' F'", "--from", start, "--config",
               str(_config("flipper")), "--port", sim.port, "--state-dir", str(tmp_path)]
        code, out, err, latched = interrupt_in_the_moves(cmd, tmp_path, sim.port, cfg)
    assert code != 0 and "Traceback" not in err, (out, err)
    assert latched
    assert "was sent the emergency stop" in err and "estop --clear" in err, err  # says what to do next
    assert MechanismJournal(tmp_path).last().end is None  # `resume` settles it


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


@pytest.mark.parametrize(("args", "says"), [
    (["--port", ""], "--port is empty"),
    (["--port", " "], "--port is empty"),
    (["--port", "sim://x?faults=drop:0.1"], "takes only ?speed=, not faults"),
    (["--port", "sim://x?colour=1"], "unknown sim:// option 'colour'"),
    (["--state-dir", "FILE"], "exists and is not a folder"),
])
def test_a_dry_runs_port_and_folder_are_checked_as_other_commands_check_them(args, says, tmp_path):
    """A port or folder the dry run would ignore, or not find, is refused
    before anything moves, as `jog` and `start` refuse them."""
    (tmp_path / "file").write_text("")
    args = [str(tmp_path / "file") if a == "FILE" else a for a in args]
    r = _cli("dry-run", "R U", "--config", str(_config("flipper")), *args)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_a_port_that_cannot_be_opened_prints_no_table(tmp_path):
    r = _cli("dry-run", "R U", "--config", str(_config("flipper")), "--port", str(tmp_path / "none"),
             "--state-dir", str(tmp_path))
    assert r.returncode == 1 and "cannot open the rig's port" in r.stderr, r.stderr
    assert r.stdout == "", r.stdout


@pytest.mark.parametrize(("kind", "servo", "key"), [("flipper", "cover", "closed_deg"),
                                                    ("two-gripper", "grip_D", "closed_deg")])
def test_the_final_state_is_said_only_when_the_virtual_rigs_own_cube_agrees(kind, servo, key):
    """Angles the virtual rig cannot tell from another named angle make it
    do another move (or refuse one): the dry run then says so in one line
    rather than print the plan's final state. The set-up reader refuses
    angles this close; the check stands behind it."""
    from dataclasses import replace

    from robot.app.dryrun_robot_moves import dry_run_mechanism, mechanism_plan
    from robot.app.events import Face
    from robot.app.mechanism_events import MechanismEvents
    from robot.rig.errors import RigError
    from robot.sim.mechanisms import TOLERANCE_DEG

    cfg = load_config(_config(kind), settings=False)
    sc = cfg.servos[servo]
    near = dict(sc.angles)["open_deg"] + TOLERANCE_DEG / 2
    bent = replace(sc, angles=tuple((k, near if k == key else v) for k, v in sc.angles))
    cfg = replace(cfg, servos={**cfg.servos, servo: bent})
    m, p = mechanism_plan(cfg, "R U")

    class Quiet(Face):
        def emit(self, event):
            pass

    with pytest.raises(RigError) as got:
        dry_run_mechanism(cfg, random_cube(5), m, p, MechanismEvents(Quiet(), pace=None))
    assert f"the virtual {kind} rig" in str(got.value) and "[servos.*]" in str(got.value)
    assert "\n" not in str(got.value)


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_config_check_summarises_the_kinds_own_parts(kind):
    r = _cli("config", "check", str(_config(kind)))
    assert r.returncode == 0, r.stderr
    assert f"rig: {kind} on sim://" in r.stdout and "motors U:0" not in r.stdout, r.stdout
    servos = ("turntable", "cover", "flipper") if kind == "flipper" else ("grip_D", "grip_L")
    for name in servos:
        assert f"servo {name}: pin " in r.stdout, r.stdout
    moves = re.search(r"robot moves: (.*)", r.stdout)
    assert moves and ("flip " in moves.group(1)) == (kind == "flipper"), r.stdout
