"""The web panel and the typed events on a flipper and a two-gripper rig:
a run from the page's Start to solved, every robot move a turn with the
orientation the rig holds after it, a stop between two robot moves."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from webserver import Client, panel_server

from robot.app.engines import Engine
from robot.app.events import Face, Stopped
from robot.app.mechanism_events import MechanismEvents, rotation_between
from robot.app.mechanism_start import run_mechanism_start
from robot.rig.loading import load_config
from robot.rig.mechanisms.orientation import HOME, parse, rotate
from solver import FACES, Cube, parse_facelets

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("flipper", "two-gripper")


def config(kind):
    return load_config(ROOT / "config" / "examples" / f"{kind}.toml")


class Recorder(Face):
    def __init__(self, stop_at=None):
        self.events, self.stop_at, self.engine = [], stop_at, None

    def emit(self, event):
        self.events.append(event)
        if event.kind == "turn-done" and event.data["index"] == self.stop_at:
            self.engine.stop()


def check_moves(solution, turns):
    """The orientations the events report follow from the whole-cube turns
    they report, and the face turns make the solution in the cube's frame."""
    held = parse(solution["orientation"])
    cube = parse_facelets(solution["facelets"])
    made = []
    for e in turns:
        if "rotation" in e:
            held = rotate(held, FACES.index(e["rotation"]["slot"]), e["rotation"]["quarters"])
        if "move" in e:
            made.append(e["move"])
            cube = cube.apply(e["move"])
        assert "".join(FACES[f] for f in held) == e["orientation"], e
        assert cube.to_facelets() == e["state_facelets"]
    return made


def test_rotation_between_names_the_whole_cube_turn():
    assert rotation_between(HOME, HOME) is None
    assert rotation_between(HOME, rotate(HOME, 4, 1)) == {"slot": "L", "quarters": 1}
    assert rotation_between(HOME, rotate(HOME, 3, -1), -1) == {"slot": "D", "quarters": -1}
    assert rotation_between(HOME, rotate(HOME, 3, 2), -2) == {"slot": "D", "quarters": -2}


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_tells_its_face_every_robot_move_with_the_orientation(kind, tmp_path):
    face = Recorder()
    lines = []
    # seed 12: glare leaves stickers in doubt until faces are shown again (recapture events)
    run = run_mechanism_start(config(kind), seed=12, state_dir=tmp_path, out=lines.append,
                              events=MechanismEvents(face))
    assert run.status == "solved" and lines  # the terminal's lines are still printed
    kinds = [e.kind for e in face.events]
    assert kind != "flipper" or "recapture" in kinds
    assert kinds[:2] == ["started", "scanning"] and kinds[-2:] == ["confirmed", "finished"]
    solution = next(e.data for e in face.events if e.kind == "solution")
    turns = [e.data for e in face.events if e.kind == "turn-done"]
    assert [e.data["step"] for e in face.events if e.kind == "turn-started"] == solution["steps"]
    assert len(turns) == len(solution["steps"]) == run.turns
    assert " ".join(check_moves(solution, turns)) == run.moves
    assert parse_facelets(turns[-1]["state_facelets"]).is_solved()
    assert face.events[-1].data["status"] == "solved"


def test_a_stop_ends_the_run_between_two_moves_with_the_journal_whole(tmp_path):
    face = Recorder(stop_at=4)
    engine = Engine(config("flipper"), face, seed=10, state_dir=tmp_path)
    face.engine = engine
    with pytest.raises(Stopped):
        engine.run()
    done = [e for e in face.events if e.kind == "turn-done"]
    assert len(done) == 5 and face.events[-1].kind == "finished"
    assert face.events[-1].data == {"status": "stopped", "estop": False}
    records = [json.loads(x) for x in (tmp_path / "mechanism-journal.jsonl").read_text().splitlines()]
    sent, done = ([r["i"] for r in records if r["type"] == t] for t in ("sent", "done"))
    assert sent == done
    assert records[-1]["type"] == "done" and records[-1]["i"] == 4  # resume goes on from there


@pytest.mark.parametrize("kind", KINDS)
def test_the_panel_runs_a_mechanism_from_start_to_solved(kind, tmp_path):
    with panel_server(tmp_path, cfg=config(kind), speed="max") as (base, panel, _):
        client = Client(base)
        status, body, _ = client.get("/api/status")
        assert body["rig"]["connected"] and body["rig"]["kind"] == kind
        assert client.post("/api/start", {"seed": 10})[0] == 202
        events = client.events(lambda e: e["kind"] == "finished")
        assert events[-1]["status"] == "solved" and events[-1]["state"] == "done", events[-1]
        solution = next(e for e in events if e["kind"] == "solution")
        turns = [e for e in events if e["kind"] == "turn-done"]
        check_moves(solution, turns)
        status, body, _ = client.get("/api/status")
        assert body["result"] == "solved" and body["turn"] == body["turns"] == len(turns)
        # held as the last robot move left it: the confirmation scan's, after the solution's
        held = [e for e in events if "orientation" in e]
        assert held[-1]["kind"] == "scan-move" and held[-1]["purpose"] == "confirmation scan"
        assert body["orientation"] == held[-1]["orientation"] and body["rig_kind"] == kind
        assert len(body["views"]) >= 6
        status, jpg, _ = client.get(f"/api/images/{body['views'][0]}.jpg")
        assert status == 200 and jpg[:2] == b"\xff\xd8"
        deadline = time.monotonic() + 20  # kept as a run record once the run's thread ends
        while not client.get("/api/runs")[1]["runs"] and time.monotonic() < deadline:
            time.sleep(0.05)
        last = client.get("/api/runs")[1]["runs"][0]
        assert last["status"] == "solved" and last["confirmed"] and last["turns"] == len(turns), last
        assert any(p.startswith("scan-") for p in last["pictures"])
        assert any(p.startswith("confirm-") for p in last["pictures"])


@pytest.mark.parametrize("kind", KINDS)
def test_scan_only_on_the_panel_has_the_rig_show_the_camera_each_face(kind, tmp_path):
    """The panel's Scan only on these kinds, as `cuberobot scan`: homed, the
    six faces shown by whole-cube moves only, the cube read, no layer turned."""
    from solver import random_cube

    with panel_server(tmp_path, cfg=config(kind), speed="max") as (base, panel, _):
        client = Client(base)
        assert client.post("/api/scan", {"seed": 4})[0] == 202
        events = client.events(lambda e: e["kind"] == "finished")
        assert events[-1]["status"] == "scanned" and events[-1]["state"] == "done", events[-1]
        moves = [e for e in events if e["kind"] == "scan-move"]
        assert moves and not any("move" in e for e in moves)  # whole-cube moves: no layer turned
        assert not any(e["kind"] in ("solution", "turn-done") for e in events)
        status, body, _ = client.get("/api/status")
        assert body["result"] == "scanned" and body["turns"] == 0
        assert body["facelets"] == random_cube(4).to_facelets()  # the virtual rig's cube, read right


def test_a_flippers_one_camera_grid_is_set_on_the_panel_and_used_by_the_next_scan(tmp_path):
    """The one thing a one-camera rig calibrates: its sticker grid, dragged on
    the page (POST /api/geometry), kept, and read through by Scan only."""
    from solver import random_cube

    with panel_server(tmp_path, cfg=config("flipper"), speed="max") as (base, panel, _):
        client = Client(base)
        (view,) = client.get("/api/geometry")[1]["views"]
        assert [f["face"] for f in view["faces"]] == ["U"]  # the one slot the camera sees
        status, jpg, _ = client.get(f"/api/geometry/{view['name']}.jpg")
        assert status == 200 and jpg[:2] == b"\xff\xd8"
        moved = [[x + 3, y - 2] for x, y in view["faces"][0]["corners"]]
        status, body, _ = client.post("/api/geometry", {"views": {view["name"]: {"U": moved}}})
        assert status == 200 and Path(body["path"]).exists(), body
        (now,) = client.get("/api/geometry")[1]["views"]
        assert now["faces"][0]["corners"] == moved
        assert client.post("/api/scan", {"seed": 6})[0] == 202
        events = client.events(lambda e: e["kind"] == "finished")
        assert events[-1]["status"] == "scanned", events[-1]
        assert client.get("/api/status")[1]["facelets"] == random_cube(6).to_facelets()


@pytest.mark.parametrize("kind", KINDS)
def test_the_live_view_of_a_one_camera_rig_reads_the_face_it_sees_and_no_cube(kind, tmp_path):
    """The live card read 54 stickers from a picture of one face and called
    the cube it made up valid. One face alone cannot say which colour is
    which face: it now names the face the camera sees and reads no cube."""
    with panel_server(tmp_path, cfg=config(kind), speed="max") as (base, panel, _):
        client = Client(base)
        status, body, _ = client.get("/api/live")
        assert status == 200 and body["source"] == "live", body
        assert body["facelets"] is None and body["valid"] is False and body["doubtful"] == [], body
        assert body["seen"] == "U" and len(body["views"]) == 1, body
        status, jpg, _ = client.get(f"/api/live/{body['views'][0]}.jpg")
        assert status == 200 and jpg[:2] == b"\xff\xd8"


@pytest.mark.parametrize("answer", ["accept", "rescan"])
def test_a_doubtful_scan_is_put_to_the_person_on_the_page(answer, tmp_path):
    """As on a six-motor rig: a flipper's scan in doubt (a lamp's glare on
    each face the rig shows the camera) asks the person, who fixes the
    stickers and accepts, or has the rig show the faces again; the run then
    goes on to solved. Before, it ended "scan in doubt" with nobody asked."""
    from robot.cli.commands.serve import sim_glare
    from solver import random_cube

    cfg = config("flipper")
    light = sim_glare(cfg.start.recaptures)  # the first scan and its recaptures glare; later ones are clear
    with panel_server(tmp_path, cfg=cfg, speed="max", sim_lighting=light) as (base, panel, _):
        client = Client(base)
        assert client.post("/api/start", {"seed": 12})[0] == 202
        events = client.events(lambda e: e["kind"] in ("finished", "doubt"))
        assert events[-1]["kind"] == "doubt" and events[-1]["state"] == "needs_help", events[-1]
        assert events[-1]["doubtful"] and client.get("/api/status")[1]["state"] == "needs_help"
        assert not any(e["kind"] == "turn-done" for e in events)  # no layer turned while asking
        fixed = {"action": "accept", "facelets": random_cube(12).to_facelets()} if answer == "accept" \
            else {"action": "rescan"}
        status, body, _ = client.post("/api/answer", fixed)
        assert status == 200, body
        events = client.events(lambda e: e["kind"] == "finished")
        assert events[-1]["status"] == "solved", events[-1]
        if answer == "rescan":  # the rig showed the faces again: a second scan, clear this time
            assert sum(e["kind"] == "scan" and e.get("purpose") == "scan" for e in events) >= 2


def test_the_panel_answers_while_a_long_dry_run_is_planned(tmp_path):
    """Planning and drawing a thousand-move dry run takes seconds: it is done
    off the server's event loop, so the emergency stop, the status and the
    event stream answer meanwhile (it froze them all before)."""
    import threading

    from solver import format_moves, random_scramble

    moves = format_moves(random_scramble(1000, seed=3))
    with panel_server(tmp_path, cfg=config("two-gripper"), speed="max") as (base, panel, _):
        client = Client(base)
        done = {}

        def dry_run():
            done["answer"] = Client(base).post("/api/dry-run", {"moves": moves, "speed": 1})
            done["at"] = time.monotonic()

        thread = threading.Thread(target=dry_run)
        thread.start()
        answered = []
        while thread.is_alive():
            assert client.get("/api/status")[0] == 200
            answered.append(time.monotonic())
        thread.join(timeout=120)
        assert done["answer"][0] == 202, done["answer"]
        # the status kept answering while the dry run was planned (a blocked loop answers once, after it)
        assert sum(t < done["at"] for t in answered) >= 3, len(answered)
        assert client.post("/api/stop", {})[0] == 200


@pytest.mark.parametrize("emergency", [False, True], ids=["stop", "estop"])
def test_the_panel_stops_a_mechanism_run_between_robot_moves(tmp_path, emergency):
    with panel_server(tmp_path, cfg=config("flipper"), speed="4") as (base, panel, _):
        client = Client(base)
        assert client.post("/api/start", {"seed": 10})[0] == 202
        client.events(lambda e: e["kind"] == "turn-done" and e["index"] >= 2)
        status, body, _ = client.post("/api/estop" if emergency else "/api/stop", {})
        assert status == 200 and body.get("sent", True), body
        body = client.wait_state("stopped", timeout=30)
        assert body["result"] == "stopped" and body["estop"] is emergency
        assert 3 <= body["turn"] < body["turns"]
        assert client.post("/api/estop/clear", {})[0] == 200
        assert client.post("/api/start", {"seed": 10})[0] == 202  # the next run goes
        client.wait_state("turning", timeout=30)
        assert client.post("/api/stop", {})[0] == 200
        assert client.wait_state("stopped", timeout=30)["result"] == "stopped"


def test_a_two_gripper_run_stopped_on_the_panel_leaves_the_next_run_free_to_solve(tmp_path):
    """A Stop between two moves may leave a gripper's jaws across; the
    panel's simulated rig (sim://NAME, living in the panel's process) keeps
    the note of where its parts were left as a real port's does, and the
    next Start squares them before homing (it jammed: 3 runs of 4)."""
    with panel_server(tmp_path, cfg=config("two-gripper"), speed="4") as (base, panel, _):
        client = Client(base)
        for seed, stop_after in ((10, 3), (11, 4)):
            assert client.post("/api/start", {"seed": seed})[0] == 202
            client.events(lambda e, n=stop_after: e.get("kind") == "turn-done" and e["index"] >= n)
            assert client.post("/api/stop", {})[0] == 200
            assert client.wait_state("stopped", timeout=60)["result"] == "stopped"
        assert client.post("/api/start", {"seed": 20})[0] == 202
        body = client.wait_state("done", "failed", timeout=300)
        assert body["result"] == "solved", body


@pytest.mark.parametrize("kind", KINDS)
def test_a_dry_run_on_the_panel_makes_the_robot_moves_with_their_timeline(kind, tmp_path):
    with panel_server(tmp_path, cfg=config(kind)) as (base, panel, _):
        client = Client(base)
        status, body, _ = client.post("/api/dry-run", {"moves": "R U F' L2 B D'", "speed": 20})
        assert status == 202, body
        events = client.events(lambda e: e["kind"] == "finished")
        solution = next(e for e in events if e["kind"] == "solution")
        assert solution["dry_run"] and solution["orientation"] == "URFDLB"
        turns = [e for e in events if e["kind"] == "turn-done"]
        assert check_moves(solution, turns) == "R U F' L2 B D'".split()
        assert events[-1]["status"] == "dry-run"
        assert events[-1]["final_state"] == Cube().apply("R U F' L2 B D'").to_facelets()
        status, png, r = client.get("/api/dry-run/timeline.png")
        assert status == 200 and png[:4] == b"\x89PNG"
        status, body, _ = client.post("/api/dry-run", {"moves": "R X"})
        assert status == 400 and "bad move 'X'" in body["error"]["message"], body


@pytest.mark.parametrize("kind", KINDS)
def test_the_dry_run_command_on_each_kind(kind, tmp_path):
    import subprocess
    import sys

    cfg = str(ROOT / "config" / "examples" / f"{kind}.toml")
    moves, out = "R U F'", str(tmp_path / "run.gif")
    r = subprocess.run([sys.executable, "-m", "robot", "dry-run", "--config", cfg, moves, "--render", out],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert f"final state: {Cube().apply(moves).to_facelets()}" in r.stdout
    assert "(R)" in r.stdout and "(F')" in r.stdout
    assert (tmp_path / "run-timeline.png").read_bytes()[:4] == b"\x89PNG"
    # a port with nothing answering on it, a pty of our own (a dry run on a
    # rig's port: tests/test_mechanism_dry_run.py)
    import os

    quiet, silent = os.openpty()
    try:
        port = os.ttyname(silent)
        for extra, code, says in ((["R X"], 2, "bad move 'X'"),
                                  (["R", "--port", port, "--state-dir", str(tmp_path)], 1,
                                   f"no answer from a rig on {port}")):
            r = subprocess.run([sys.executable, "-m", "robot", "dry-run", "--config", cfg, *extra],
                               capture_output=True, text=True, timeout=120, cwd=ROOT)
            assert r.returncode == code and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, \
                r.stderr
    finally:
        os.close(quiet)
        os.close(silent)


def test_every_end_of_a_run_is_one_finished_event():
    from robot.app.record import RunRecord

    for status, state, says in (("scan-doubtful", "failed", "the scan is in doubt (glare on F3)"),
                                ("already-solved", "done", "already solved"), ("failed", "failed", "failed"),
                                ("solved", "done", "solved")):
        face = Recorder()
        events = MechanismEvents(face)
        events.why = "glare on F3"
        events.ended(RunRecord(status=status))
        events.ended(RunRecord(status=status))  # told once
        assert [(e.kind, e.state, e.data["status"]) for e in face.events] == [("finished", state, status)]
        assert says in face.events[0].text


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_the_panel_learns_no_colours_on_a_one_camera_rig(kind, tmp_path):
    """As `cuberobot calibrate` says: such a rig reads each face in its own
    light, so a colour profile would be one nothing reads; the sticker grid
    is what it calibrates."""
    with panel_server(tmp_path, cfg=config(kind), speed="max") as (base, panel, _):
        panel.options.profile_dir = str(tmp_path / "profiles")
        status, body, _ = Client(base).post("/api/calibrate", {"profile": "bench"})
        assert status == 422, body
        message = body["error"]["message"]
        assert "uses no colour profile" in message and "--geometry" in message, message
        assert not (tmp_path / "profiles").exists()


@pytest.fixture(scope="module")
def elf():
    from fwtools import make

    make("all", "sim")
    return ROOT / "firmware" / "build" / "uno" / "cuberobot.elf"


def test_the_panel_runs_and_jogs_a_flipper_on_the_firmware(elf, tmp_path):
    """`cuberobot serve --firmware` with a flipper config: a run and a jog
    each on an emulated rig of its own (the real firmware in simavr)."""
    with panel_server(tmp_path, cfg=config("flipper"), firmware=str(elf)) as (base, panel, _):
        client = Client(base)
        rig = client.get("/api/status")[1]["rig"]
        assert rig["firmware"] and rig["simulated"] and "emulated firmware" in rig["port"], rig
        assert client.post("/api/start", {"seed": 3})[0] == 202
        events = client.events(lambda e: e["kind"] == "finished")
        assert events[-1]["status"] == "solved", events[-1]
        status, body, _ = client.post("/api/jog", {"moves": "flip, spin +1"})
        assert status == 200 and "emulated flipper rig of its own" in body["message"], body
