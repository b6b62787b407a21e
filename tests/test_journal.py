"""The journal: append-only, crash-tolerant, and read back faithfully."""

import pytest

from robot.rig.errors import UserError
from robot.rig.journal import Journal, default_state_dir


def _job(j, n=3):
    js = j.start_job("S" * 54, [f"U{i}" for i in range(n)], port="p")
    j.session(js, 1234)
    return js


def test_turns_are_read_back_and_ids_continue_across_jobs(tmp_path):
    with Journal(tmp_path) as j:
        a = _job(j)
        for i in range(3):
            j.sent(a, i)
            j.turn(a, i, f"state{i}", 100 + i)
        j.end(a, "done")
        b = _job(j, 2)
        j.sent(b, 0)
    jobs = Journal(tmp_path).read()
    assert [t["state"] for t in jobs[0].turns] == ["state0", "state1", "state2"]
    assert jobs[0].end["status"] == "done" and jobs[0].boot_id == 1234
    assert jobs[1].first_id == 3 and jobs[1].move_id(1) == 4
    assert Journal(tmp_path).unfinished().job == b.job and jobs[1].sent == {0}


def test_turns_must_be_recorded_in_order(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        with pytest.raises(AssertionError):
            j.turn(js, 1, "x", None)


def test_a_torn_last_line_is_ignored_but_a_broken_middle_is_reported(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        j.turn(js, 0, "after0", 5)
    path = tmp_path / "journal.jsonl"
    with open(path, "a") as f:
        f.write('{"type":"turn","job":1,"i":1,"id"')  # the crash came mid-write
    (js,) = Journal(tmp_path).read()
    assert js.done == 1 and js.state == "after0"
    with open(path, "a") as f:
        f.write("\n" + '{"type":"end","job":1,"status":"done"}' + "\n")
    with pytest.raises(UserError, match="line 4"):
        Journal(tmp_path).read()


def test_refused_moves_are_not_under_way(tmp_path):
    with Journal(tmp_path) as j:
        js = _job(j)
        j.sent(js, 0)
        j.refused(js, 0)
    assert Journal(tmp_path).read()[0].sent == set()


def test_state_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_state_dir() == tmp_path / "cuberobot"


def test_unwritable_state_dir_is_a_user_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="state directory"):
        Journal(blocker / "sub")
