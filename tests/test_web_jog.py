"""The panel's jog (POST /api/jog): a face turned on the kept rig between
runs, robot moves on a flipper, each checked as `cuberobot jog` checks it,
refused during a run, with a latched emergency stop or an unfinished job,
and stopped by the emergency stop. The simulated rig's own cube says what
really turned."""

import threading
import time
from pathlib import Path

import pytest
from mechanism_kinds import as_held
from webserver import Client, panel_server, rig_for_url

from robot.rig.journal import Journal
from robot.rig.loading import load_config
from robot.rig.mechanisms import mechanism_for
from robot.rig.mechanisms.base import Action
from robot.rig.mechanisms.journal import MechanismJournal
from solver import SOLVED_CUBE, parse_moves, random_cube

ROOT = Path(__file__).resolve().parents[1]


def _connected(client):
    deadline = time.monotonic() + 20
    while not client.get("/api/status")[1]["rig"]["connected"]:
        assert time.monotonic() < deadline, "the panel did not connect to the rig"
        time.sleep(0.05)


def test_a_jog_turns_the_face_on_the_kept_rig(tmp_path):
    with panel_server(tmp_path, speed="max") as (base, panel, rig_url):
        client = Client(base)
        _connected(client)
        rig = rig_for_url(rig_url)
        before = rig.cube
        status, body, _ = client.post("/api/jog", {"face": "u"})
        assert status == 200 and body["moved"] and body["face"] == "U", body
        assert body["message"].startswith("turned U by 1 quarter turn(s)")
        assert rig.cube == before.apply(parse_moves("U"))
        status, body, _ = client.post("/api/jog", {"face": "R", "turns": -2})
        assert status == 200 and body["steps"] == -2 * body["quarter"], body
        assert rig.cube == before.apply(parse_moves("U R2"))
        # motor steps: a few to align a face (no quarter turn: the cube is as it was), then a quarter's worth
        status, body, _ = client.post("/api/jog", {"face": "F", "steps": 5})
        assert status == 200 and "5 step(s) clockwise" in body["message"], body
        assert rig.cube == before.apply(parse_moves("U R2"))
        status, body, _ = client.post("/api/jog", {"face": "F", "steps": -abs(body["quarter"])})
        assert status == 200 and "step(s) anticlockwise" in body["message"], body
        assert rig.cube == before.apply(parse_moves("U R2 F'"))
        # the next run starts as ever, from whatever cube the rig holds
        assert client.post("/api/start", {"seed": 4})[0] == 202
        assert client.wait_state("done", "failed", "stopped")["result"] == "solved"
        assert rig.cube.is_solved()


@pytest.mark.parametrize("body, words", [
    ({}, "send 'face'"),
    ({"face": "X"}, "U R F D L B"),
    ({"face": "UR"}, "U R F D L B"),
    ({"face": "U", "turns": 0}, "non-zero"),
    ({"face": "U", "turns": 9}, "from -8 to 8"),
    ({"face": "U", "turns": 1.5}, "whole number"),
    ({"face": "U", "steps": 0}, "non-zero"),
    ({"face": "U", "steps": 30001}, "30000"),
    ({"face": "U", "turns": 1, "steps": 5}, "not both"),
    ({"face": "U", "moves": "flip"}, "send 'face'"),
    ({"face": 3}, "must be a string"),
    ({"face": "U" * 9}, "at most 8"),
    # a misspelt field was dropped and its default used: U turned +1 where -1 was meant
    ({"face": "U", "turn": -1}, "unknown field 'turn': did you mean 'turns'? (/api/jog takes face, turns"),
])
def test_a_jog_that_is_not_one_is_refused_in_a_line_and_moves_nothing(tmp_path, body, words):
    with panel_server(tmp_path, speed="max") as (base, panel, rig_url):
        client = Client(base)
        _connected(client)
        before = rig_for_url(rig_url).cube
        status, answer, _ = client.post("/api/jog", body)
        message = answer["error"]["message"]
        assert status == 400 and words in message and "\n" not in message, answer
        assert rig_for_url(rig_url).cube == before


def test_a_jog_waits_for_the_run_and_a_run_for_the_jog(tmp_path):
    with panel_server(tmp_path, speed="1") as (base, panel, rig_url):
        client = Client(base)
        _connected(client)
        assert client.post("/api/start", {"seed": 5})[0] == 202
        client.wait_state("turning", timeout=60)
        status, body, _ = client.post("/api/jog", {"face": "U"})
        assert status == 409 and body["error"]["kind"] == "busy", body
        assert client.post("/api/stop", {})[0] == 200
        client.wait_state("stopped", timeout=60)
        # the stopped run's job waits in the journal (for `resume`): the jog says so, and moves nothing
        rig = rig_for_url(rig_url)
        before = rig.cube
        status, body, _ = client.post("/api/jog", {"face": "U"})
        assert status == 409 and body["error"]["kind"] == "unfinished-job", body
        assert "give it up" in body["error"]["message"] and "`cuberobot resume`" in body["error"]["message"]
        assert rig.cube == before
        # a jog (two whole turns of D, in real time) that gives the job up holds off a start
        answers = []
        jog = threading.Thread(target=lambda: answers.append(
            client.post("/api/jog", {"face": "D", "turns": 8, "give_up_job": True})))
        jog.start()
        deadline = time.monotonic() + 10
        while panel.held_by != "jog":
            assert time.monotonic() < deadline, f"the jog did not start: {answers}"
            time.sleep(0.01)
        status, body, _ = Client(base).post("/api/start", {})
        assert status == 409 and "jog" in body["error"]["message"], body
        jog.join(timeout=60)
        assert answers and answers[0][0] == 200 and answers[0][1]["gave_up_job"], answers
        assert "the unfinished job was given up" in answers[0][1]["message"]
        assert rig.cube == before  # eight quarters: the face is back where it was, and nothing else moved
        with Journal(tmp_path) as journal:
            assert journal.unfinished() is None and journal.read()[-1].end["status"] == "given-up"
        status, body, _ = client.post("/api/jog", {"face": "D"})  # nothing waits now
        assert status == 200 and not body["gave_up_job"], body


def test_the_emergency_stop_ends_a_jog_and_a_latched_rig_is_not_jogged(tmp_path):
    with panel_server(tmp_path, speed="1") as (base, panel, rig_url):
        client = Client(base)
        _connected(client)
        answers = []
        jog = threading.Thread(target=lambda: answers.append(client.post("/api/jog", {"face": "L",
                                                                                      "turns": 8})))
        jog.start()
        deadline = time.monotonic() + 10
        while panel.held_by != "jog":
            assert time.monotonic() < deadline, f"the jog did not start: {answers}"
            time.sleep(0.01)
        rig = rig_for_url(rig_url)
        while not rig.active:  # the rig's word: its eight quarter turns of L under way (2 s at speed 1)
            assert time.monotonic() < deadline + 20 and not rig.record, "the jog did not get going"
            time.sleep(0.01)
        status, body, _ = Client(base).post("/api/estop")
        assert status == 200 and body["sent"] and "the jog" in body["message"], body
        jog.join(timeout=30)
        assert not jog.is_alive()
        status, body, _ = answers[0]
        assert status == 502 and "emergency stop" in body["error"]["message"], body
        assert rig_for_url(rig_url).estop
        status, body, _ = client.post("/api/jog", {"face": "L"})
        assert status == 502 and "latched" in body["error"]["message"] and "clear" in body["error"]["message"]
        # a job is not given up for a jog the latch refuses
        with Journal(tmp_path) as journal:
            journal.start_job(SOLVED_CUBE.to_facelets(), ["U"])
        status, body, _ = client.post("/api/jog", {"face": "L", "give_up_job": True})
        assert status == 502 and "latched" in body["error"]["message"], body
        with Journal(tmp_path) as journal:
            assert journal.unfinished() is not None
        assert client.post("/api/estop/clear", {})[0] == 200
        status, body, _ = client.post("/api/jog", {"face": "L", "give_up_job": True})
        assert status == 200 and body["gave_up_job"], body


def test_a_jog_waits_for_an_unfinished_job(tmp_path):
    with Journal(tmp_path) as journal:
        journal.start_job("U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9, ["U"])
    with panel_server(tmp_path, speed="max") as (base, panel, rig_url):
        client = Client(base)
        _connected(client)
        before = rig_for_url(rig_url).cube
        status, body, _ = client.post("/api/jog", {"face": "U"})
        assert status == 409 and "`cuberobot resume`" in body["error"]["message"], body
        assert rig_for_url(rig_url).cube == before
        status, body, _ = client.post("/api/jog", {"face": "U", "give_up_job": "yes"})
        assert status == 400 and "true or false" in body["error"]["message"], body


def test_a_flipper_jogs_by_robot_moves_from_its_home(tmp_path):
    cfg = load_config(ROOT / "config" / "examples" / "flipper.toml")
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, panel, _):
        client = Client(base)
        status, body, _ = client.post("/api/jog", {"moves": "flip, close cover, turn -1, open cover"})
        assert status == 200 and body["moved"], body
        assert body["message"].startswith("made 4 robot move(s), 1 of them layer turns")
        assert len(body["moves"]) == 5 and body["moves"][0].startswith("homed")
        status, body, _ = client.post("/api/jog", {"moves": "turn +1"})
        assert status == 400 and "robot move 1" in body["error"]["message"], body
        # servo angles, for finding the named angles of [servos.*]
        status, body, _ = client.post("/api/jog", {"moves": "servo cover 95, servo flipper 10"})
        assert status == 200 and body["message"].startswith("set 2 servo angle(s)"), body
        assert body["moves"][1:] == ["servo cover 95: held at 95 degrees (1556 us)",
                                     "servo flipper 10: held at 10 degrees (611 us)"], body
        status, body, _ = client.post("/api/jog", {"moves": "servo cover 190"})
        assert status == 400 and "from 0 to 180" in body["error"]["message"], body
        status, body, _ = client.post("/api/jog", {"face": "U"})
        assert status == 400 and "robot moves" in body["error"]["message"], body
        # a killed run's job: refused, then given up on purpose
        m = mechanism_for(cfg)
        MechanismJournal(tmp_path).start_job(m, random_cube(3).to_facelets(), [Action("flip")], m.start())
        status, body, _ = client.post("/api/jog", {"moves": "flip"})
        assert status == 409 and body["error"]["kind"] == "unfinished-job", body
        status, body, _ = client.post("/api/jog", {"moves": "flip", "give_up_job": True})
        assert status == 200 and body["gave_up_job"], body
        assert MechanismJournal(tmp_path).last().end is not None


def test_the_servo_finding_step_works_on_a_cubotino_in_the_jog_card(tmp_path):
    """The README's servo-finding step on config/examples/cubotino.toml, in
    the Jog card (issues 46 and 48: the virtual rig took only the named
    angles and blamed a jam): a servo goes to any angle in its range, the
    message names what is left between named angles, the next jog homes
    the rig from there and its robot moves work; angles that would jam are
    refused in one line before anything moves."""
    cfg = load_config(ROOT / "config" / "examples" / "cubotino.toml")
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, panel, rig_url):
        client = Client(base)
        status, body, _ = client.post("/api/jog", {"moves": "servo cover 95"})
        assert status == 200 and "cover at 95 degrees (open 70, closed 110, flip 0)" in body["message"], body
        rig = rig_for_url(rig_url).mechanism
        assert rig is not None and rig.fault is None and abs(rig.angle["cover"] - 95) < 0.1
        status, body, _ = client.post("/api/jog", {"moves": "servo turntable 45"})  # homed first: cover open
        assert status == 200 and "turntable at 45 degrees (home 90)" in body["message"], body
        assert rig.fault is None and abs(rig.angle["cover"] - 70) < 0.1
        assert abs(rig.angle["turntable"] - 45) < 0.1
        assert not rig.square()  # the cube turned with the turntable, off square ...
        angles = dict(rig.angle)
        status, body, _ = client.post("/api/jog", {"moves": "servo cover 95, servo turntable 0"})
        message = body["error"]["message"]
        assert status == 400 and "servo angle 2 ('servo turntable 0')" in message and "half way" in message \
            and message.endswith("nothing was moved"), body
        assert rig.angle == angles and rig.fault is None
        status, body, _ = client.post("/api/jog", {"moves": "close cover, turn +1, open cover, flip"})
        assert status == 200 and rig.fault is None and rig.square(), body  # ... and homing squared it
        assert rig.turns[-1] == (3, 1)


def test_whatever_holds_the_rig_is_named_when_a_run_or_a_jog_is_refused(tmp_path):
    with panel_server(tmp_path, speed="max") as (base, panel, rig_url):
        client = Client(base)
        _connected(client)
        with panel.holding("clear"):  # as Clear holds a flipper's line while it clears the latch
            status, body, _ = client.post("/api/start", {})
            assert status == 409 and "the emergency stop is being cleared" in body["error"]["message"], body
            status, body, _ = client.post("/api/jog", {"face": "U"})
            assert status == 409 and "the emergency stop is being cleared" in body["error"]["message"], body
        assert panel.held_by is None
        status, body, _ = client.post("/api/jog", {"face": "U"})  # let go: the rig is free again
        assert status == 200 and body["moved"], body


def _jogged(client):
    """The panel's last event, which a jog that changed the page's cube made."""
    seq = client.get("/api/status")[1]["seq"]
    # an event (which has a text), not the status the stream begins with
    event = client.events(lambda e: e.get("seq") == seq and "text" in e, timeout=20)[-1]
    assert event["kind"] == "jogged", event
    return event


@pytest.mark.parametrize("kind, moves, servo", [
    ("flipper", "close cover, turn +1, open cover, flip, spin -1", "servo cover 95"),
    ("two-gripper", "rotate D +1, open L, rotate D -1, close L, rotate L 2", "servo grip_D 45"),
])
def test_the_pages_cube_follows_a_jog_from_where_the_run_left_the_rig(tmp_path, kind, moves, servo):
    """The page draws the cube the rig holds, held as the rig holds it: a
    jog after a run (which homes the rig first: a flipper's turntable going
    home takes the cube with it) turns it and moves it on from where the
    run left the rig, not from home, as the virtual rig's own stickers show.
    Servo angles set by hand leave the hold unknown, said so until a run."""
    cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, panel, rig_url):
        client = Client(base)
        assert client.get("/api/status")[1]["orientation"] == "URFDLB"  # as put in, before any run
        assert client.post("/api/start", {"seed": 4})[0] == 202
        status = client.wait_state("done", "failed", "stopped")
        assert status["result"] == "solved" and status["orientation"] != "URFDLB", status
        rig = rig_for_url(rig_url)
        assert as_held(status["facelets"], status["orientation"]) == rig.mechanism.cube.stickers
        code, body, _ = client.post("/api/jog", {"moves": moves})
        assert code == 200, body
        jogged = _jogged(client)
        assert len(jogged["moves"]) == 2 - (kind == "flipper") and len(jogged["orientation"]) == 6, jogged
        assert jogged["facelets"] != status["facelets"]
        assert as_held(jogged["facelets"], jogged["orientation"]) == rig.mechanism.cube.stickers
        now = client.get("/api/status")[1]
        assert (now["facelets"], now["orientation"], now["result"]) == (
            jogged["facelets"], jogged["orientation"], "solved")
        # a part set by hand may have tipped or turned the cube: no hold is claimed, nor by the next jog
        assert client.post("/api/jog", {"moves": servo})[0] == 200
        assert (_jogged(client)["orientation"], client.get("/api/status")[1]["orientation"]) == ("", "")
        assert client.post("/api/jog", {"moves": moves})[0] == 200
        jogged = _jogged(client)
        assert (jogged["orientation"], jogged["facelets"], jogged["moves"]) == ("", "", [])
        # the next run homes, scans and holds the cube as it finds it
        assert client.post("/api/start", {"seed": 5})[0] == 202
        status = client.wait_state("done", "failed", "stopped")
        assert status["result"] == "solved" and len(status["orientation"]) == 6, status


def test_the_pages_cube_follows_a_six_motor_quarter_jog_and_not_a_few_steps(tmp_path):
    with panel_server(tmp_path, speed="max") as (base, panel, rig_url):
        client = Client(base)
        _connected(client)
        assert client.post("/api/start", {"seed": 4})[0] == 202
        assert client.wait_state("done", "failed", "stopped")["result"] == "solved"
        assert client.post("/api/jog", {"face": "R", "turns": -1})[0] == 200
        jogged = _jogged(client)
        assert (jogged["moves"], jogged["orientation"]) == (["R'"], ""), jogged
        assert jogged["facelets"] == rig_for_url(rig_url).cube.to_facelets() == SOLVED_CUBE.apply(
            parse_moves("R'")).to_facelets()
        seq = client.get("/api/status")[1]["seq"]
        assert client.post("/api/jog", {"face": "F", "steps": 5})[0] == 200
        assert client.get("/api/status")[1]["seq"] == seq  # between two quarters: no cube to draw
