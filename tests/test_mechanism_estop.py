"""The emergency stop on a flipper or two-gripper rig, from the panel and
from the terminal's Ctrl-C: it goes onto the line of whatever moves the rig
(a run's, a jog's) at once, so the rig latches it and a move under way
stops, not only the run between two robot moves; a rig that outlives a run
(a serial port; here a sim-rig in its own process over a pty) keeps the
latch, the page is told, and Clear clears it on the rig."""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from webserver import Client, panel_server

from robot.app.engines import Engine
from robot.app.events import Face
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.sim.pty_rig import SimRigProcess

ROOT = Path(__file__).resolve().parents[1]
FLIPPER = ROOT / "config" / "examples" / "flipper.toml"


def _latched_on_the_rig(cfg, port: str) -> bool:
    with Link(cfg, port=port, kind=cfg.rig.kind) as link:
        link.connect()
        return link.status().estop


def test_the_stop_reaches_a_jog_latches_the_rig_and_clear_clears_it(tmp_path):
    cfg = load_config(FLIPPER)
    with SimRigProcess("--config", str(FLIPPER), "--speed", "1") as sim, \
            panel_server(tmp_path, cfg=cfg, rig_port=sim.port) as (base, panel, _):
        client = Client(base)
        rig = client.get("/api/status")[1]["rig"]
        assert rig["simulated"] is False and rig["port"] == sim.port and rig["connected"] is False, rig
        answer = {}

        def jog():
            answer["jog"] = client.post("/api/jog", {"moves": ", ".join(["flip"] * 12)})

        # Homed (3 moves) and into the first flip (its two moves are queued together): there the rig's
        # time stands still, the flip's second move stays under way, and the jog waits for it however
        # long the test takes to press the stop.
        sim.hold_after(4)
        thread = threading.Thread(target=jog)
        thread.start()
        try:
            deadline = time.monotonic() + 60
            while not ((said := sim.held())["held"] and said["moving"]):  # the rig's own word: mid-jog
                assert time.monotonic() < deadline and thread.is_alive(), ("the jog stopped short", answer)
                time.sleep(0.05)
            status, body, _ = client.post("/api/estop")
            if "the flipper rig the jog moves" not in body.get("message", ""):
                thread.join(timeout=30)
            assert status == 200 and body["sent"] and "the flipper rig the jog moves" in body["message"], \
                json.dumps([body["message"], answer.get("jog", (None, None))[1], said, sim.held(),
                            sim.counts()])
            thread.join(timeout=30)
            assert not thread.is_alive(), "the jog did not end on the emergency stop"
        finally:
            sim.release()
            thread.join(timeout=30)
        status, body, _ = answer["jog"]
        assert status == 502 and "stopped during the robot move flip" in body["error"]["message"], body
        moves = sim.counts()["moves"]
        assert 4 < moves < 3 + 2 * 12, moves  # the move under way was cut short, the rest never made
        rig = client.get("/api/status")[1]["rig"]
        assert rig["connected"] and rig["estop_latched"], rig
        status, body, _ = client.post("/api/jog", {"moves": "flip"})  # the rig says it is latched
        assert status == 502 and "latched" in body["error"]["message"], body
        status, body, _ = client.post("/api/estop/clear")
        assert status == 200 and body["cleared"] and body["message"] == "emergency stop cleared", body
        assert body["rig"]["estop_latched"] is False, body
        assert not _latched_on_the_rig(cfg, sim.port)
        status, body, _ = client.post("/api/jog", {"moves": "flip"})
        assert status == 200, body
        # with nothing moving, the stop goes through a line opened for it
        status, body, _ = client.post("/api/estop")
        assert status == 200 and body["sent"] and "idle rig" in body["message"], body
        assert client.get("/api/status")[1]["rig"]["estop_latched"]
        assert _latched_on_the_rig(cfg, sim.port)
        assert client.post("/api/estop/clear")[0] == 200 and not _latched_on_the_rig(cfg, sim.port)


def test_a_runs_emergency_stop_goes_onto_its_line():
    """A run on the virtual flipper (sim://, paced as the panel paces it):
    the stop is sent onto the run's line (True), the rig latches, and the
    run ends stopped by the emergency stop."""
    cfg = load_config(FLIPPER)
    events = []

    class Seen(Face):
        def emit(self, event):
            events.append(event)

    engine = Engine(cfg, Seen(), port="sim://?speed=1", seed=4)
    errors = []
    thread = threading.Thread(target=lambda: errors.append(_ended(engine)))
    thread.start()
    deadline = time.monotonic() + 120
    while not any(e.kind == "turn-done" for e in events):
        assert time.monotonic() < deadline and thread.is_alive(), [e.kind for e in events]
        time.sleep(0.05)
    assert engine.estop() is True
    thread.join(timeout=60)
    assert not thread.is_alive()
    finished = [e for e in events if e.kind == "finished"]
    assert len(finished) == 1 and finished[0].state == "stopped" and finished[0].data["estop"], finished
    assert engine.current.rig_latched is True  # the rig's own word
    assert engine.record is not None and engine.record.estop


def _ended(engine):
    try:
        engine.run()
    except Exception as e:  # noqa: BLE001 - the run's end, told to the test
        return e
    return None


def test_ctrl_c_during_a_run_at_the_terminal_latches_the_rig(tmp_path):
    from mechanism_kinds import interrupt_in_the_moves

    cfg = load_config(FLIPPER)
    view, state = tmp_path / "view", tmp_path / "state"
    rig = ("--config", str(FLIPPER), "--scramble", "6", "--speed", "1", "--sim-view", str(view))
    with SimRigProcess(*rig) as sim:
        cmd = [sys.executable, "-m", "robot", "start", "--headless", "--seed", "6", "--config", str(FLIPPER),
               "--port", sim.port, "--sim-view", str(view), "--state-dir", str(state)]
        code, out, err, latched = interrupt_in_the_moves(cmd, state, sim.port, cfg)
        assert code != 0 and "Traceback" not in err, (out, err)
        assert latched and sim.counts()["fault"] is None
        assert "was sent the emergency stop" in err and "estop --clear" in err, err  # says what to do next


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_the_estop_command_latches_and_clears_a_flipper_or_two_gripper_rig(kind):
    """`cuberobot estop` with such a set-up, the rig idle: it refused these kinds until 2026-11-27."""
    example = ROOT / "config" / "examples" / f"{kind}.toml"
    cfg = load_config(example)
    with SimRigProcess("--config", str(example), "--speed", "max") as sim:
        def cli(*args):
            return subprocess.run([sys.executable, "-m", "robot", "estop", "--config", str(example),
                                   "--port", sim.port, *args], capture_output=True, text=True, cwd=ROOT,
                                  timeout=60)
        r = cli()
        assert r.returncode == 0 and "emergency stop latched" in r.stdout, r.stderr
        assert _latched_on_the_rig(cfg, sim.port)
        r = cli("--clear")
        assert r.returncode == 0 and "emergency stop cleared" in r.stdout, r.stderr
        assert not _latched_on_the_rig(cfg, sim.port)


def test_a_jammed_virtual_part_is_not_said_cleared(tmp_path):
    """A flipper's set-up sent to a two-gripper sim-rig: its parts cannot make
    the flip and latch the stop. Clearing is refused with why (it said
    "cleared", and the next move latched again), and the rig stays latched."""
    gripper = ROOT / "config" / "examples" / "two-gripper.toml"
    with SimRigProcess("--config", str(gripper), "--speed", "max") as sim:
        def cli(*args):
            return subprocess.run([sys.executable, "-m", "robot", *args, "--config", str(FLIPPER),
                                   "--port", sim.port], capture_output=True, text=True, cwd=ROOT, timeout=60)
        r = cli("jog", "flip", "--state-dir", str(tmp_path))
        assert r.returncode == 1 and "emergency stop" in r.stderr, r.stderr
        assert sim.counts()["fault"] is not None
        r = cli("estop", "--clear")
        assert r.returncode == 1 and "still latched" in r.stderr and "jammed" in r.stderr, r.stderr
        assert "emergency stop cleared" not in r.stdout
        assert _latched_on_the_rig(load_config(gripper), sim.port)


def test_a_stop_pressed_before_the_line_opens_moves_nothing(tmp_path):
    """The panel's stop can land while a run's port is still opening (an
    Uno's bootloader, simavr starting): no line takes it, so the panel says
    it was not sent, and the run ends before homing, which is a move too."""
    from robot.app.events import Stopped
    from robot.app.mechanism_events import MechanismEvents
    from robot.app.mechanism_start import run_mechanism_start
    from robot.sim.protocol_sim import forget, rig_for_url, sim_url

    class Quiet(Face):
        def emit(self, event):
            pass

    url = sim_url(f"early-stop-{time.monotonic_ns()}")
    rig = rig_for_url(url)  # held here, to count what it did
    events = MechanismEvents(Quiet())
    assert events.run.estop() is False  # no line yet: nothing sent
    try:
        with pytest.raises(Stopped) as got:
            run_mechanism_start(load_config(FLIPPER), port=url, seed=3, state_dir=tmp_path, events=events,
                                out=lambda _line: None)
        assert got.value.estop
        assert rig.record == []  # not even homed
    finally:
        forget(url)


def test_a_stop_pressed_while_a_jogs_line_opens_makes_the_jog_move_nothing(tmp_path):
    """As for a run: a stop that no line could take yet still holds the jog,
    which checks it once its line is open, before homing."""
    from robot.rig.errors import RigError
    from robot.rig.mechanisms import mechanism_for
    from robot.rig.mechanisms.jog import check_any_jog
    from robot.sim.protocol_sim import forget, rig_for_url, sim_url

    cfg = load_config(FLIPPER)
    url = sim_url(f"jog-stop-{time.monotonic_ns()}")
    rig = rig_for_url(url)  # held here, to count what it did
    try:
        with panel_server(tmp_path, cfg=cfg, rig_port=url) as (base, panel, _):
            mech = mechanism_for(cfg)
            with panel.holding("jog"):  # the jog has the rig; its line is not open yet
                status, body, _ = Client(base).post("/api/estop")
                assert status == 200 and not body["sent"] and "the jog makes no move" in body["message"], body
                with pytest.raises(RigError, match="nothing moved"):
                    panel.rig.jog(check_any_jog(cfg, mech, "flip, flip"), False, panel.jogged,
                                  after_dry_run=False)
            assert rig.record == []  # not even homed
    finally:
        forget(url)


def test_serve_on_a_named_virtual_flipper_stops_and_clears_it_from_the_start(tmp_path):
    """`cuberobot serve --rig sim://NAME` with a flipper, before any run: the
    idle stop reached no rig ("protocol 'sim' not known": only a run loaded
    the simulation), and Clear failed the same way."""
    import signal

    serve = subprocess.Popen([sys.executable, "-m", "robot", "serve", "--config", str(FLIPPER), "--rig",
                              f"sim://kept-{time.monotonic_ns()}", "--port", "0", "--state-dir",
                              str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=ROOT)
    try:
        url = serve.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        client = Client(url.split("?")[0])
        headers = {"Authorization": f"Bearer {url.split('token=')[1]}"} if "token=" in url else {}
        status, body, _ = client.request("POST", "/api/estop", headers=headers)
        assert status == 200 and body["sent"], body
        rig = client.request("GET", "/api/status", headers=headers)[1]["rig"]
        assert rig["estop_latched"], rig
        status, body, _ = client.request("POST", "/api/estop/clear", headers=headers)
        assert status == 200 and body["cleared"] and not body["rig"]["estop_latched"], body
    finally:
        serve.send_signal(signal.SIGINT)
        _, err = serve.communicate(timeout=20)
    assert "Traceback" not in err, err


def test_a_closing_lines_older_word_does_not_undo_a_stop_sent_since(tmp_path):
    """A run's or a jog's line, closing, tells the latch as the rig last said
    it; a stop the panel sent after that line began listening is newer, and
    the page keeps showing it latched."""
    cfg = load_config(FLIPPER)
    with panel_server(tmp_path, cfg=cfg, rig_port=f"sim://older-{time.monotonic_ns()}") as (base, panel, _):
        listening = time.monotonic()  # a run's line begins to listen for the rig's last word
        status, body, _ = Client(base).post("/api/estop")  # the idle stop, sent meanwhile
        assert status == 200 and body["sent"], body
        panel.rig.note_latch(False, heard_at=listening)  # the older word, told as the line closes
        assert Client(base).get("/api/status")[1]["rig"]["estop_latched"] is True
        panel.rig.note_latch(False, heard_at=time.monotonic())  # a newer word is taken
        assert Client(base).get("/api/status")[1]["rig"]["estop_latched"] is False
