"""Power cuts on a rig that moves the cube: the journal records where the
cube is held; resume goes on only from a state it knows, and otherwise says
"state unknown: scan again" and moves nothing. Never a turn twice, never a
false state."""

from __future__ import annotations

import random

import pytest

from robot.rig.config import parse_config
from robot.rig.errors import UserError
from robot.rig.mechanisms import mechanism_for, plan
from robot.rig.mechanisms.journal import UNKNOWN, Interrupted, MechanismJournal, resume_job, run_job
from robot.sim.mechanisms import virtual_mechanism
from solver import SOLVED, random_cube, solve

KINDS = ("flipper", "two-gripper")


class _CutJournal(MechanismJournal):
    """The power goes just before move ``k`` is written as sent."""

    def __init__(self, folder, k: int):
        super().__init__(folder)
        self.k = k

    def sent(self, job: int, i: int) -> None:
        if i == self.k:
            raise Interrupted
        super().sent(job, i)


@pytest.mark.parametrize("kind", KINDS)
def test_power_cut_soak(kind, tmp_path):
    cfg = parse_config(f'[rig]\nkind = "{kind}"\n')
    m = mechanism_for(cfg)
    rng = random.Random(26)
    for run in range(20):
        folder = tmp_path / f"run{run}"
        cube = random_cube(1000 + run)
        s = solve(cube, budget_ms=30, workers=1)
        p = plan(s.moves, m)
        rig = virtual_mechanism(cfg, cube.to_facelets())
        turns: list[int] = []
        state = [m.start()]

        def do(a, rig=rig, turns=turns, state=state):
            out = m.apply(state[0], a)
            rig.do(a)
            state[0] = out.after
            if out.turn is not None:
                turns.append(1)

        k = rng.randrange(len(p.actions))
        moment = rng.choice(["between", "under way", "done unrecorded"])
        journal = _CutJournal(folder, k) if moment == "between" else MechanismJournal(folder)
        n = [0]

        def cut(a, n=n, do=do, k=k, moment=moment):
            if n[0] == k:
                if moment == "under way":
                    raise Interrupted  # sent, the power went before the rig moved (or while it did)
                do(a)
                raise Interrupted  # made, the power went before the rig's word reached the journal
            n[0] += 1
            do(a)

        with pytest.raises(Interrupted):
            run_job(journal, m, cube.to_facelets(), p.actions, cut if moment != "between" else do)
        before = len(turns)
        status, end, facelets = resume_job(MechanismJournal(folder), m, do)
        if moment == "between":
            assert status == "done" and facelets == SOLVED and rig.is_solved()
            assert len(turns) == len(p.solution)  # every turn once
            assert end == state[0]
        else:
            assert status == UNKNOWN and end is None and facelets is None
            assert len(turns) == before  # nothing moved
        assert resume_job(MechanismJournal(folder), m, do)[0] == "nothing"
        last = MechanismJournal(folder).last()
        assert last is not None and last.end == ("done" if moment == "between" else UNKNOWN)


def test_the_journal_records_the_orientation_and_reads_back_the_state(tmp_path):
    cfg = parse_config('[rig]\nkind = "flipper"\n')
    m = mechanism_for(cfg)
    p = plan("F R", m)
    j = MechanismJournal(tmp_path)
    run_job(j, m, random_cube(1).to_facelets(), p.actions, lambda a: None)
    last = j.last()
    assert last is not None and last.done == len(p.actions) and last.state == p.end
    assert last.orientations[-1] == "".join("URFDLB"[f] for f in p.end[0])
    assert '"orientation"' in (tmp_path / "mechanism-journal.jsonl").read_text()


def test_a_torn_last_line_is_ignored_and_a_damaged_one_reported(tmp_path):
    cfg = parse_config('[rig]\nkind = "flipper"\n')
    m = mechanism_for(cfg)
    j = MechanismJournal(tmp_path)
    run_job(j, m, random_cube(1).to_facelets(), plan("F", m).actions, lambda a: None)
    with open(j.path, "a") as f:
        f.write('{"type":"sent","jo')
    assert j.last() is not None
    text = j.path.read_text().replace('"type":"done"', '"type":"dome"', 1)
    j.path.write_text(text)
    with pytest.raises(UserError, match=r"mechanism-journal.jsonl:\d+: not a mechanism journal record"):
        j.last()


def test_resume_command_after_a_cut_says_state_unknown_and_moves_nothing(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cfg = parse_config('[rig]\nkind = "flipper"\n')
    m = mechanism_for(cfg)
    p = plan("F R U", m)
    seen: list = []

    def cut(a):
        if len(seen) == 3:
            raise Interrupted
        seen.append(a)

    with pytest.raises(Interrupted):
        run_job(MechanismJournal(tmp_path), m, random_cube(4).to_facelets(), p.actions, cut)
    example = root / "config" / "examples" / "flipper.toml"
    argv = [sys.executable, "-m", "robot", "resume", "--config", str(example), "--state-dir", str(tmp_path)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=root)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "robot move 4" in r.stderr and "state unknown: scan again" in r.stderr
    assert "Nothing was moved" in r.stderr
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=root)
    assert r.returncode == 1 and "nothing to resume: the last job ended state unknown" in r.stderr


def test_resume_with_a_set_up_of_the_other_kind_names_the_waiting_job(tmp_path):
    """The two kinds of journal sit side by side in one folder: `resume` with
    the wrong kind's set-up never says "nothing to resume" while a job waits."""
    import subprocess
    import sys
    from pathlib import Path

    from robot.rig.journal import Journal
    from robot.rig.loading import load_config
    from robot.rig.mechanisms import Action

    root = Path(__file__).resolve().parents[1]
    flipper = root / "config" / "examples" / "flipper.toml"

    def resume(folder, *config):
        return subprocess.run([sys.executable, "-m", "robot", "resume", *config, "--state-dir", str(folder)],
                              capture_output=True, text=True, timeout=60, cwd=root)

    m = mechanism_for(load_config(flipper, settings=False))
    MechanismJournal(tmp_path / "a").start_job(m, random_cube(3).to_facelets(), [Action("flip")], m.start())
    r = resume(tmp_path / "a")  # the default set-up: six motors
    assert r.returncode == 2 and "is for a flipper rig, the config for a six-motor rig" in r.stderr, r.stderr
    assert "nothing to resume" not in r.stdout
    with Journal(tmp_path / "b") as journal:
        journal.start_job(SOLVED, ["U"])
    r = resume(tmp_path / "b", "--config", str(flipper))
    assert r.returncode == 2 and "is for a six-motor rig, the config for a flipper rig" in r.stderr, r.stderr
    assert resume(tmp_path / "c", "--config", str(flipper)).stdout.startswith("nothing to resume")


def _hostile(folder, what: str) -> None:
    """Put ``what`` in place of the flipper journal of ``folder``; each record
    hostile line is followed by a good one, so that it is not a torn last line."""
    import json
    import os

    from robot.rig.journal import MAX_BYTES

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mechanism-journal.jsonl"
    good = json.dumps({"type": "job", "job": 1, "kind": "flipper", "start": SOLVED, "actions": ["flip"],
                       "state": [[0, 1, 2, 3, 4, 5], 0, False], "orientation": "URFDLB"})
    lines = {
        "deep": "[" * 100_000,
        "a list": '[{"type": "job"}]',
        "actions a number": good.replace('["flip"]', "5"),
        "an action a number": good.replace('["flip"]', "[5]"),
        "i a string": good + '\n{"type":"sent","job":1,"i":"0"}',
        "state malformed": good.replace("[[0, 1, 2, 3, 4, 5], 0, false]", "[[0, 0, 0, 0, 0, 0], 0, false]"),
        "kind a list": good.replace('"flipper"', '["flipper"]'),
    }
    if what == "/dev/zero":
        path.symlink_to("/dev/zero")
    elif what == "fifo":
        os.mkfifo(path)
    elif what == "directory":
        path.mkdir()
    elif what == "huge":
        with open(path, "wb") as f:
            f.truncate(MAX_BYTES + 1)  # sparse: no disk taken
    elif what == "not utf-8":
        path.write_bytes(b"\xff\xfe\x00\n" + good.encode() + b"\n")
    else:
        path.write_text(lines[what] + "\n" + good + "\n")


HOSTILE = ("/dev/zero", "fifo", "directory", "huge", "deep", "a list", "actions a number",
           "an action a number", "i a string", "state malformed", "kind a list", "not utf-8")


@pytest.mark.parametrize("what", HOSTILE)
def test_a_hostile_journal_is_one_line_quickly(tmp_path, what):
    """Whatever sits where the journal should be, reading it is a one-line
    UserError naming it, in moments and without reading more than a journal."""
    import resource
    import time

    folder = tmp_path / "state"
    _hostile(folder, what)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    with pytest.raises(UserError) as e:
        MechanismJournal(folder).last()
    assert time.monotonic() - t0 < 5
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024  # never the GBs of /dev/zero
    message = str(e.value)
    assert "\n" not in message and "mechanism-journal.jsonl" in message and len(message) < 400
    assert "move" in message  # says what to do
    if what in ("/dev/zero", "fifo", "directory", "huge"):  # never opened for writing either
        cfg = parse_config('[rig]\nkind = "flipper"\n')
        m = mechanism_for(cfg)
        with pytest.raises(UserError):
            MechanismJournal(folder).end(1, "given-up")
        with pytest.raises(UserError):
            run_job(MechanismJournal(folder), m, SOLVED, plan("F", m).actions, lambda a: None)


@pytest.mark.parametrize("what", ["/dev/zero", "fifo"])
def test_resume_on_a_hostile_journal_is_one_line(tmp_path, what):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    folder = tmp_path / "state"
    _hostile(folder, what)
    flipper = root / "config" / "examples" / "flipper.toml"
    argv = [sys.executable, "-m", "robot", "resume", "--config", str(flipper), "--state-dir", str(folder)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=root)
    assert r.returncode != 0, r.stdout
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "mechanism-journal.jsonl" in r.stderr, r.stderr


def test_a_job_the_rig_cannot_make_from_its_recorded_state_is_refused_before_moving(tmp_path):
    """A record of the right shape whose moves the rig cannot make from its
    state (a turn with the cover open) is refused before any move is made."""
    import json

    cfg = parse_config('[rig]\nkind = "flipper"\n')
    m = mechanism_for(cfg)
    (tmp_path / "mechanism-journal.jsonl").write_text(json.dumps(
        {"type": "job", "job": 1, "kind": "flipper", "start": SOLVED, "actions": ["spin +1", "turn +1"],
         "state": [[0, 1, 2, 3, 4, 5], 0, False], "orientation": "URFDLB"}) + "\n")
    moved: list = []
    with pytest.raises(UserError, match="cannot be made from the state it recorded") as e:
        resume_job(MechanismJournal(tmp_path), m, moved.append)
    assert moved == [] and "\n" not in str(e.value)


def test_a_long_journal_is_set_aside_between_jobs_and_the_job_numbers_carry_on(tmp_path, monkeypatch):
    """The journal is bounded (robot/rig/journal.py MAX_BYTES), so a long one
    is set aside when a job starts with none unfinished, never refused."""
    import robot.rig.mechanisms.journal as mj

    monkeypatch.setattr(mj, "ROTATE_BYTES", 2000)
    cfg = parse_config('[rig]\nkind = "flipper"\n')
    m = mechanism_for(cfg)
    p = plan("F R", m)
    for _ in range(6):
        run_job(MechanismJournal(tmp_path), m, random_cube(1).to_facelets(), p.actions, lambda a: None)
    assert (tmp_path / "mechanism-journal.1.jsonl").is_file()
    assert (tmp_path / "mechanism-journal.jsonl").stat().st_size < 4000
    last = MechanismJournal(tmp_path).last()
    assert last is not None and last.job == 6 and last.end == "done"
