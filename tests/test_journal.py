"""The journal: append-only, crash-tolerant, checked when read back."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot.rig.errors import UserError
from robot.rig.journal import ID_SPACE, Journal, JournalDamaged, default_state_dir
from solver import SOLVED_CUBE, parse_facelets, random_cube

START = random_cube(7)
STEPS = ["U", "R2", "F' B", "D", "L'"]


def _job(j, steps=STEPS, start=START):
    js = j.start_job(start.to_facelets(), list(steps), port="p")
    j.session(js, 1234)
    return js


def _turns(j, js, n):
    cube = START if js.done == 0 else None
    cube = cube or parse_facelets(js.state)
    for i in range(js.done, js.done + n):
        j.sent(js, i)
        cube = cube.apply(js.steps[i])
        j.turn(js, i, cube.to_facelets(), 100 + i)
    return cube


def test_turns_are_read_back_and_ids_continue_across_jobs(tmp_path):
    with Journal(tmp_path) as j:
        a = _job(j)
        end = _turns(j, a, len(STEPS))
        j.end(a, "done")
        b = _job(j, ["U", "D"], start=end)
        j.sent(b, 0)
    jobs = Journal(tmp_path).read()
    assert [t["state"] for t in jobs[0].turns][-1] == end.to_facelets()
    assert jobs[0].end["status"] == "done" and jobs[0].boot_id == 1234
    assert jobs[1].first_id == len(STEPS) and jobs[1].move_id(1) == len(STEPS) + 1
    assert Journal(tmp_path).unfinished().job == b.job and jobs[1].sent == {0}


def test_what_the_rig_may_do_is_on_disk_before_it_is_told(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        before = j.fsyncs
        j.sent(js, 0)
        assert j.fsyncs == before + 1  # the MOVE may go out now
        j.session(js, 99)
        assert j.fsyncs == before + 2


def test_turns_must_be_recorded_in_order(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        with pytest.raises(AssertionError):
            j.turn(js, 1, "x", None)


def test_a_torn_last_line_is_ignored_and_cut_before_the_next_record(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        after0 = _turns(j, js, 1).to_facelets()
    path = tmp_path / "journal.jsonl"
    with open(path, "a") as f:
        f.write('{"type":"turn","job":1,"i":1,"id"')  # the crash came mid-write
    (js,) = Journal(tmp_path).read()
    assert js.done == 1 and js.state == after0
    with Journal(tmp_path) as j:  # opening it mends the tail, so appending starts a clean line
        js = j.unfinished()
        _turns(j, js, 1)
    (js,) = Journal(tmp_path).read()
    assert js.done == 2


def _write_lines(tmp_path, lines):
    (tmp_path / "journal.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


def _good_lines(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        _turns(j, js, 3)
    return (tmp_path / "journal.jsonl").read_bytes().splitlines()


@pytest.mark.parametrize("damage, where", [
    (lambda ls: ls[:2] + [b"\x00" * 40] + ls[2:], "line 3"),  # NUL bytes in the middle
    (lambda ls: [b"\x00" * 4096], "line 1"),  # a file of NULs (a power cut on some file systems)
    (lambda ls: ls + [b"\x00" * 40], "line"),  # NULs at the end are not a torn record
    (lambda ls: ls[:1] + [b"[1, 2]"] + ls[1:], "line 2"),  # JSON, but not an object
    (lambda ls: ls[:1] + [b'{"type":"job","job":2}'] + ls[1:], "line 2"),  # a key missing
    (lambda ls: ls[:1] + [b"\xff\xfe not text"] + ls[1:], "line 2"),
    (lambda ls: ls[:1] + [b'{"type":"sent","job":"1","i":0}'] + ls[1:], "line 2"),  # wrong type
    (lambda ls: ls[:1] + [b'{"type":"sent","job":1,"i":99}'] + ls[1:], "line 2"),  # no such step
    (lambda ls: ls[:1] + [b'{"type":"turn","job":7,"i":0,"state":"x"}'] + ls[1:], "line 2"),  # no such job
    (lambda ls: ls[:1] + [b'{"type":"bogus","job":1}'] + ls[1:], "line 2"),
    (lambda ls: ls[:1] + [b"[" * 100000] + ls[1:], "line 2"),  # nested too deep for any parser
])
def test_a_damaged_journal_is_reported_with_its_line_never_passed_over(tmp_path, damage, where):
    _write_lines(tmp_path, damage(_good_lines(tmp_path)))
    with pytest.raises(JournalDamaged, match=where) as e:
        Journal(tmp_path).unfinished()
    message = str(e.value)
    assert "\n" not in message and "journal.jsonl" in message and "scan the cube again" in message


def test_a_hand_edited_state_is_caught_by_recomputing_it(tmp_path):
    lines = _good_lines(tmp_path)
    turn = [n for n, line in enumerate(lines) if b'"type":"turn"' in line][1]
    record = json.loads(lines[turn])
    record["state"] = SOLVED_CUBE.to_facelets()
    lines[turn] = json.dumps(record).encode()
    _write_lines(tmp_path, lines)
    with pytest.raises(JournalDamaged, match=f"line {turn + 1}: turn 1's recorded state"):
        Journal(tmp_path).read()


def test_an_end_that_claims_done_too_early_is_caught(tmp_path):
    lines = _good_lines(tmp_path) + [b'{"type":"end","job":1,"status":"done","state":"x"}']
    _write_lines(tmp_path, lines)
    with pytest.raises(JournalDamaged, match="recorded as done"):
        Journal(tmp_path).read()


@settings(max_examples=60)
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=10_000))
def test_any_bytes_read_back_or_raise_one_clear_error(tmp_path_factory, garbage, at):
    d = tmp_path_factory.mktemp("j")
    with Journal(d) as j:
        js = _job(j)
        _turns(j, js, 2)
    path = d / "journal.jsonl"
    data = path.read_bytes()
    at %= len(data) + 1
    path.write_bytes(data[:at] + garbage + data[at:])
    try:
        Journal(d).read()
    except JournalDamaged as e:
        assert "\n" not in str(e) and "line" in str(e)


def test_refused_moves_are_not_under_way(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        j.sent(js, 0)
        j.refused(js, 0)
    assert Journal(tmp_path).read()[0].sent == set()


def test_a_long_journal_is_set_aside_and_the_ids_carry_on(tmp_path, monkeypatch):
    import robot.rig.journal as journal_module

    monkeypatch.setattr(journal_module, "ROTATE_BYTES", 2000)
    ids = []
    cube = START
    with Journal(tmp_path) as j:
        for _ in range(12):
            js = j.start_job(cube.to_facelets(), list(STEPS))
            j.session(js, 1)
            for i, step in enumerate(STEPS):
                j.sent(js, i)
                cube = cube.apply(step)
                j.turn(js, i, cube.to_facelets(), 1)
                ids.append(js.move_id(i))
            j.end(js, "done")
    assert (tmp_path / "journal.1.jsonl").is_file()
    assert (tmp_path / "journal.jsonl").stat().st_size < 4000
    assert ids == list(range(len(ids)))  # never an id twice, across the new file
    assert Journal(tmp_path).read()[-1].state == cube.to_facelets()


def test_move_ids_wrap_below_the_jog_id():
    from robot.rig.journal import JOG_ID, JobState

    js = JobState(1, "x", ["U"] * 5, ID_SPACE - 2)
    assert [js.move_id(i) for i in range(5)] == [ID_SPACE - 2, ID_SPACE - 1, 0, 1, 2]
    assert JOG_ID not in {js.move_id(i) for i in range(5)} and JOG_ID == ID_SPACE


def test_state_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_state_dir() == tmp_path / "cuberobot"


def test_unwritable_state_dir_is_a_user_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="state directory"):
        Journal(blocker / "sub")


@pytest.mark.parametrize("content", [b"[1, 2]\n", b'{"type":"job","job":1}\n', b"\xff\xfe\n", b"\x00" * 512,
                                     b'{"type":"job","job":1,"start":"x","steps":[],"first_id":0}\n'])
def test_resume_on_a_damaged_journal_is_one_line_that_names_it(tmp_path, content):
    import subprocess
    import sys

    (tmp_path / "journal.jsonl").write_bytes(content)
    r = subprocess.run([sys.executable, "-m", "robot", "resume", "--state-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == "", r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "journal.jsonl, line 1" in lines[0] and "scan the cube again" in lines[0]
    assert "nothing to resume" not in r.stderr
