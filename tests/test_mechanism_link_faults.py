"""Fault injection on a flipper's or two-gripper's line: `cuberobot start`
against a sim-rig in its own process over a pty whose line drops and
damages bytes, or whose firmware restarts mid-job (``--faults``, as the
six-motor rig's link is tested in test_link_faults.py). Each layer is
turned exactly as the journal's plan turns it, once; a run the line cannot
finish says so in one line, and `resume` then says "state unknown" and
moves nothing rather than guess where the cube is."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import mechanism_soak
import pytest
import soak
from mechanism_soak import planned_turns

from robot.rig.mechanisms.journal import MechanismJournal
from robot.rig.mechanisms.orientation import HeldCube
from robot.sim.pty_rig import SimRigProcess

ROOT = Path(__file__).resolve().parents[1]


def _run(kind: str, sim: SimRigProcess, state: Path, view: Path, *args: str) -> subprocess.CompletedProcess:
    cfg = ROOT / "config" / "examples" / f"{kind}.toml"
    return subprocess.run([sys.executable, "-m", "robot", *args, "--config", str(cfg), "--port", sim.port,
                           "--state-dir", str(state)], capture_output=True, text=True, cwd=ROOT, timeout=600)


def _rig(kind: str, seed: int, speed: str, faults: str, view: Path) -> SimRigProcess:
    cfg = ROOT / "config" / "examples" / f"{kind}.toml"
    return SimRigProcess("--config", str(cfg), "--scramble", str(seed), "--speed", speed, "--sim-view",
                         str(view), "--faults", faults, "--seed", str(seed))


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_a_run_over_a_line_that_drops_and_damages_bytes_turns_each_layer_once(kind, tmp_path):
    """One run a kind in the suite, on a line a quarter as bad as the full
    soak's (0.5 % of the bytes dropped and 0.5 % damaged, each way, seeded:
    dozens of frames hit in a run); ``python benchmarks/mechanisms.py
    --line-faults 5`` runs five a kind at 2 % (about 30 s a run: each lost
    DONE costs the host its wait for the move), as does
    CUBEROBOT_SOAK_SCALE=1 here."""
    full = soak.scale() is not None
    faults = mechanism_soak.LINE_FAULTS if full else mechanism_soak.SUITE_LINE_FAULTS
    for seed in range(5, 5 + soak.sized(mechanism_soak.LINE_RUNS, suite=1)):
        failures = mechanism_soak.line_fault_run(kind, seed, tmp_path / str(seed), faults)
        assert failures == []


def test_a_firmware_restart_mid_job_leaves_the_state_unknown_and_resume_moves_nothing(tmp_path):
    """The board is reset once the rig says the job is under way (its first
    layer turn made; the 30-second job at 4x has most of its turns to go), not
    at a time on the rig's clock, which a loaded machine's slow solve could
    spend before the job began. A rig that restarted may have let its servos
    go: where the cube is cannot be known."""
    kind, view, state, seed = "flipper", tmp_path / "view", tmp_path / "state", 7
    with _rig(kind, seed, "4", "", view) as sim:
        cfg = ROOT / "config" / "examples" / f"{kind}.toml"
        start = subprocess.Popen([sys.executable, "-m", "robot", "start", "--headless", "--seed", str(seed),
                                  "--sim-view", str(view), "--config", str(cfg), "--port", sim.port,
                                  "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, cwd=ROOT)
        try:
            deadline = time.monotonic() + 300
            while not sim.counts()["layer_turns"]:
                assert start.poll() is None and time.monotonic() < deadline, start.communicate(timeout=60)
                time.sleep(0.05)
            sim.reset()
            out, err = start.communicate(timeout=300)
        finally:
            if start.poll() is None:
                start.kill()
                start.wait()
        assert start.returncode == 1 and "was reset" in err, (out, err)
        r = subprocess.CompletedProcess(start.args, start.returncode, out, err)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        before = sim.counts()
        job = MechanismJournal(state).last()
        assert job is not None and job.end is None and 0 < job.done < len(job.actions), job
        r = _run(kind, sim, state, view, "resume")
        after = sim.counts()
    assert r.returncode == 1 and "state unknown: scan again" in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert "Nothing was moved" in r.stdout + r.stderr
    assert after["moves"] == before["moves"] and after["layer_turns"] == before["layer_turns"]
    made = [tuple(t) for t in before["layer_turns"]]
    plan = planned_turns(kind, state)
    assert plan is not None and made == plan[:len(made)]  # nothing turned that the plan does not turn there
    assert MechanismJournal(state).last().end == "state unknown: scan again"


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_one_rig_solves_cube_after_cube(kind, tmp_path):
    """A maker's evening: `cuberobot start`, a new scrambled cube put in,
    `start` again, on one rig. A run may end with a two-gripper's jaws
    across (a gripper that turned a layer last), which homing cannot square
    (its steppers have no home): every run now ends with its parts where
    homing takes them home. Before, the second run on a two-gripper turned
    a gripper into the other's crossed jaws and the rig stopped. Two cubes
    in the suite (the second is the one that jammed); ``python
    benchmarks/mechanisms.py --one-rig 10`` runs ten in a row a kind."""
    n = soak.sized(10, suite=2, least=2)
    failures = mechanism_soak.one_rig_runs(kind, [4, *range(11, 10 + n)], tmp_path)
    assert failures == []


def test_a_resumed_two_gripper_job_ends_with_the_jaws_square_for_the_next_start(tmp_path):
    """A job stopped between two robot moves (its journal says where) is
    finished by `resume`, which then squares the jaws as a run does: the
    next `start` on the same rig solves a new cube (it jammed before)."""
    from robot.rig.loading import load_config
    from robot.rig.mechanisms import mechanism_for, plan
    from solver import random_cube

    kind, view, state = "two-gripper", tmp_path / "view", tmp_path / "state"
    m = mechanism_for(load_config(ROOT / "config" / "examples" / f"{kind}.toml"))
    assert m is not None
    with _rig(kind, 3, "max", "", view) as sim:
        cube = sim.state()
        p = plan("R U F'", m)
        assert any(jaws for _, jaws in p.end[1:]), "a plan that ends with a jaw across"
        # a job stopped before its first move
        MechanismJournal(state).start_job(m, cube, list(p.actions), m.start())
        r = _run(kind, sim, state, view, "resume")
        assert r.returncode == 0 and "done:" in r.stdout, (r.stdout, r.stderr)
        sim.set_state(random_cube(9).to_facelets())
        r = _run(kind, sim, state, view, "start", "--headless", "--seed", "9", "--sim-view", str(view))
        assert r.returncode == 0 and "confirmed solved" in r.stdout, (r.stdout[-1500:], r.stderr[-1500:])
        assert sim.counts()["fault"] is None and HeldCube(sim.state()).is_solved()


@pytest.mark.parametrize("moved_since", [False, True])
@pytest.mark.parametrize("stop_after", [0, 2])
def test_resume_of_a_job_stopped_between_moves_asks_the_rig_whether_it_moved_since(moved_since, stop_after,
                                                                                  tmp_path):
    """A job stopped cleanly between two robot moves (as a Stop or the
    emergency stop leaves it) is finished by `resume`, unless the rig has
    made other moves since (a run in another state folder, a jog): then its
    last reported move is not the job's, where the cube is is not known,
    and nothing moves. Before, the old job was replayed onto the new cube
    and the result called "as planned"."""
    from robot.rig.link import Link
    from robot.rig.loading import load_config
    from robot.rig.mechanisms import mechanism_for, plan
    from robot.rig.mechanisms.drive import LinkMechanism
    from robot.rig.mechanisms.journal import Interrupted, run_job

    kind, view = "flipper", tmp_path / "view"
    cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
    m = mechanism_for(cfg)
    assert m is not None
    p = plan("R U F'", m)

    class Stops(MechanismJournal):  # the run's stop, heard before move ``stop_after`` + 1 is sent
        def sent(self, job, i, ids=()):
            if i == stop_after:
                raise Interrupted
            super().sent(job, i, ids)

    with _rig(kind, 3, "max", "", view) as sim:
        cube = sim.state()
        with Link(cfg, sim.port, kind=kind) as link:
            link.connect()
            drive = LinkMechanism(link, cfg, m.start())
            drive.home()
            with pytest.raises(Interrupted):
                run_job(Stops(tmp_path / "a"), m, cube, p.actions, drive.do, state=m.start(),
                        boot_id=link.hello.boot_id, ids=drive.ids, last_id=drive.last_id)
        if moved_since:
            r = _run(kind, sim, tmp_path / "b", view, "jog", "flip")
            assert r.returncode == 0, r.stderr
        before = sim.counts()
        r = _run(kind, sim, tmp_path / "a", view, "resume")
        after = sim.counts()
    assert "Traceback" not in r.stderr
    if moved_since:
        assert r.returncode == 1 and "has moved since the job stopped" in r.stderr, (r.stdout, r.stderr)
        assert "Nothing was moved" in r.stderr and after["moves"] == before["moves"]
    else:
        assert r.returncode == 0 and "done:" in r.stdout, (r.stdout, r.stderr)
        assert len(after["layer_turns"]) == len(p.solution)


@pytest.mark.parametrize("noted", [True, False])
def test_jaws_a_stopped_command_left_across_are_squared_by_the_next_start(noted, tmp_path):
    """A two-gripper command stopped between two robot moves (the emergency
    stop, Ctrl-C) may leave a gripper's jaws across; it notes where it left
    the parts (robot/rig/mechanisms/left.py), and the next `start` on the
    same boot squares them before it homes and solves. With no note (a move
    cut, not known) nothing is guessed: the rig stops on the crossed jaws,
    as docs/hardware.md warns (square them by hand)."""
    from robot.rig.link import Link
    from robot.rig.loading import load_config
    from robot.rig.mechanisms import Action, mechanism_for
    from robot.rig.mechanisms.drive import LinkMechanism
    from robot.rig.mechanisms.left import remember

    kind, view = "two-gripper", tmp_path / "view"
    cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
    m = mechanism_for(cfg)
    assert m is not None
    with _rig(kind, 6, "max", "", view) as sim:
        with Link(cfg, sim.port, kind=kind) as link:
            link.connect()
            drive = LinkMechanism(link, cfg, m.start())
            drive.home()
            state = m.start()
            # a layer turn, then a regrip that turns the cube on L
            for action in (Action("rotate", "D", 1), Action("open", "D"), Action("rotate", "L", -1),
                           Action("close", "D")):
                state = m.apply(state, action).after
                drive.do(action)
            assert all(jaws for _, jaws in state[1:])  # both jaws across, as a stop can leave them
            remember(link, kind, state if noted else None)
            link.estop()  # the stop that ended it; a start tried before the clear moves nothing ...
        r = _run(kind, sim, tmp_path / "state", view, "start", "--headless", "--seed", "6",
                 "--sim-view", str(view))
        assert r.returncode == 1 and "emergency stop" in r.stderr, (r.stdout, r.stderr)
        r = subprocess.run([sys.executable, "-m", "robot", "estop", "--clear", "--port", sim.port, "--config",
                            str(ROOT / "config" / "examples" / f"{kind}.toml")], capture_output=True,
                           text=True, cwd=ROOT, timeout=120)  # ... and loses no note
        assert r.returncode == 0, r.stderr
        r = _run(kind, sim, tmp_path / "state", view, "start", "--headless", "--seed", "6",
                 "--sim-view", str(view))
        fault = sim.counts()["fault"]
    if noted:
        assert r.returncode == 0 and "confirmed solved" in r.stdout, (r.stdout[-1500:], r.stderr[-1500:])
        assert fault is None
    else:
        assert r.returncode == 1 and "jammed part" in r.stderr and fault is not None, (r.stdout, r.stderr)
