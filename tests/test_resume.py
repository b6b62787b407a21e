"""A flipper's or two-gripper's resume decided below the faces
(robot/app/resume.py), called as a face calls it (robot/app/kindwork.py): a job cut with a move the
rig then finished goes on to the end; one cut with a flip half made ends
"state unknown" and nothing moves; a folder with no job, or one whose last
job ended unknown, says so. `cuberobot resume` in a new process presents
the same (tests/test_mechanism_link.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot.app.kindwork import resume
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.rig.mechanisms import mechanism_for, plan
from robot.rig.mechanisms.drive import LinkMechanism
from robot.rig.mechanisms.journal import UNKNOWN, Interrupted, MechanismJournal, run_job
from robot.sim.pty_rig import SimRigProcess
from solver import random_cube

ROOT = Path(__file__).resolve().parents[1]
FLIPPER = ROOT / "config" / "examples" / "flipper.toml"


@pytest.mark.parametrize("half", [False, True], ids=["made-whole", "flip-half-made"])
def test_a_cut_job_goes_on_from_the_rigs_word_or_moves_nothing(tmp_path, half):
    cfg = load_config(FLIPPER)
    m = mechanism_for(cfg)
    assert m is not None
    cube = random_cube(7)
    p = plan("R U F", m)
    cut_at = [i for i, a in enumerate(p.actions) if a.kind == "flip"][-1 if half else 0]
    with SimRigProcess("--config", str(FLIPPER), "--state", cube.to_facelets(), "--speed", "max") as sim:
        with Link(cfg, sim.port, kind="flipper") as link:
            link.connect()
            drive = LinkMechanism(link, cfg, m.start())
            count = [0]

            def do(a):
                i, count[0] = count[0], count[0] + 1
                if i != cut_at:
                    return drive.do(a)
                if not half:
                    drive.do(a)  # made whole; the host dies before "done" is written
                    raise Interrupted
                msg = drive.commands.commands(a)[0]  # the flipper goes up, and the host dies
                mid = drive._id()
                drive._queue(type(msg)(mid, msg.servo, msg.pulse_us, msg.travel_ms))
                drive._wait(mid, "flip up")
                raise Interrupted

            with pytest.raises(Interrupted):
                run_job(MechanismJournal(tmp_path), m, cube.to_facelets(), p.actions, do, state=m.start(),
                        boot_id=link.hello.boot_id, ids=drive.ids)
        before = sim.counts()
        heard: list[str] = []
        said = resume(cfg, str(tmp_path), sim.port, lambda port: Link(cfg, port, kind="flipper"),
                      heard.append)
        after = sim.counts()
    j = MechanismJournal(tmp_path).last()
    assert j is not None
    if half:
        assert said.outcome == "unknown" and "Nothing was moved" in said.message, said
        assert after["moves"] == before["moves"] and j.end == UNKNOWN
    else:
        assert said.outcome == "done" and said.message.startswith("done: "), said
        assert any("the rig finished robot move" in line for line in heard), heard
        assert len(after["layer_turns"]) == len(p.solution) and j.end == "done"
        assert j.cube == cube.apply(p.solution).to_facelets()
    # asked again: nothing waits, and a job that ended unknown is said so
    again = resume(cfg, str(tmp_path), "/dev/null", lambda port: Link(cfg, port), heard.append)
    assert (again.outcome, again.message.startswith("nothing to resume")) == (
        ("unknown", True) if half else ("nothing", True)), again
