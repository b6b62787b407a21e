"""A rig on the rig computer's own pins (``gpio://``, issue 49), on gpiozero's
own mock pins: the set-up's pins checked where they are read, the pulse
widths the pins take checked against the host's plan, the virtual CUBOTino
moved by those pins, the emergency stop stopping every pulse at once, one
owner per pin, and the whole loop through the command line."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpio_soak import runtime_dir
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from robot.gpio import protocol_gpio
from robot.rig import protocol as P
from robot.rig.config import parse_config
from robot.rig.errors import UserError
from robot.rig.link import Link
from robot.rig.loading import load_config
from robot.rig.mechanisms.base import Action
from robot.rig.mechanisms.commands import Commands, servo_numbers
from robot.sim.gpio_pins import attach_pins
from robot.sim.mechanisms import VirtualFlipper

ROOT = Path(__file__).resolve().parents[1]
PI = ROOT / "config" / "examples" / "cubotino-pi.toml"
FRAME_US = 20_000


@pytest.fixture
def mock_pins(tmp_path, monkeypatch):
    """gpiozero's mock board for this test, the pins' claims in a folder of
    its own (so parallel workers never meet), and the rig let go at the end."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir(tmp_path)))
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    protocol_gpio._let_go()
    old = Device.pin_factory
    Device.pin_factory = factory = MockFactory()
    yield factory
    protocol_gpio._let_go()
    factory.reset()
    Device.pin_factory = old


def _pin(factory, n):
    return next(p for info, p in factory.pins.items() if info.name == f"GPIO{n}")


def _widths(factory, n):
    """The pulse widths the mock pin took, in microseconds, in order (0: no pulses)."""
    pin = _pin(factory, n)
    return [round(s.state / 50 * 1e6) if s.state else 0 for s in pin.states[1:]]


def _wait_done(link, move_id, deadline_s=10.0):
    deadline = time.monotonic() + deadline_s
    while link.last_status is None or link.status().last_done_id != move_id:
        assert time.monotonic() < deadline, "the rig did not report the move done"
        link.poll(0.05)


def _send(link, messages, first_id=100):
    ids = []
    for i, msg in enumerate(messages):
        msg = P.ServoCommand(first_id + i, msg.servo, msg.pulse_us, msg.travel_ms)
        while True:
            reply = link.request(msg)
            if not (isinstance(reply, P.Err) and reply.code == P.ErrorCode.QUEUE_FULL):
                break
            link.poll(0.02)
        ids.append(msg.move_id)
    return ids


# -- the set-up -------------------------------------------------------------------

def _setup(extra="", cover_pin="pin = 12", turntable_pin="pin = 13", port="gpio://"):
    return f"""
[rig]
kind = "flipper"
port = "{port}"
[servos.turntable]
{turntable_pin}
min_us = 1000
max_us = 2000
home_deg = 90.0
[servos.cover]
{cover_pin}
min_us = 1000
max_us = 2000
closed_deg = 90.0
open_deg = 60.0
flip_deg = 9.0
{extra}"""


@pytest.mark.parametrize("text, said", [
    (_setup(cover_pin="pin = 40"), "servos.cover.pin: GPIO40 is not a pin a rig may use"),
    (_setup(cover_pin="pin = 1"), "servos.cover.pin: GPIO1 is not a pin a rig may use"),
    (_setup(cover_pin="pin = 13"), "servos.cover.pin: GPIO13 (header pin 33) is already servo turntable's"),
    (_setup(cover_pin=""), "servos.cover.pin: missing: a servo on the Pi's pins needs its GPIO number "
                           "(CUBOTino's is GPIO12)"),
    (_setup("[gpio]\nstart_button = 12\n"), "gpio.start_button: GPIO12 (header pin 32) is already used by "
                                            "cover"),
    (_setup("[gpio]\nstatus_light = 28\n"), "gpio.status_light: GPIO28 is not a pin"),
    (_setup("[gpio]\nstart_buton = 26\n"), "gpio.start_buton: unknown key; did you mean 'start_button'?"),
    (_setup("[gpio]\nstart_button = 26\n", port="/dev/ttyACM0", cover_pin="pin = 10",
            turntable_pin="pin = 9"), "gpio: [gpio] is for a rig on the rig computer's own pins"),
    (_setup().replace("min_us = 1000\nmax_us = 2000\nclosed", "min_us = 300\nmax_us = 2000\nclosed"),
     "servos.cover.min_us: expected a value between 400 and 2600, got 300"),
])
def test_the_set_up_refuses_pins_the_pi_cannot_give_in_one_line(text, said):
    with pytest.raises(UserError) as e:
        parse_config(text)
    assert said in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_the_example_reads_as_cubotino_is_wired():
    cfg = load_config(PI)
    assert cfg.rig.port == "gpio://" and cfg.rig.kind == "flipper"
    assert cfg.servos["cover"].pin == 12 and cfg.servos["turntable"].pin == 13
    assert cfg.gpio is not None and cfg.gpio.start_button == 26


# -- the pins -----------------------------------------------------------------------

def test_the_pins_take_the_widths_the_plan_sends_and_the_virtual_cube_moves_as_they_say(mock_pins):
    cfg = load_config(PI)
    scramble = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
    sim = attach_pins(cfg, "gpio://", scramble)
    assert sim is not None
    plan = Commands(cfg)
    actions = [Action.parse(a) for a in ("flip", "close cover", "turn +1", "flip close", "open cover",
                                          "spin -1", "flip", "close cover", "turn -1", "open cover")]
    messages = plan.home() + [m for a in actions for m in plan.commands(a)]
    with Link(cfg, port="gpio://", kind="flipper") as link:
        link.connect()
        assert link.hello.board == P.BOARD_GPIO
        ids = _send(link, messages)
        _wait_done(link, ids[-1])
    planned = {12: [m.pulse_us for m in messages if m.servo == 1],
               13: [m.pulse_us for m in messages if m.servo == 0]}
    for pin, widths in planned.items():
        took = [w for w in _widths(mock_pins, pin) if w]
        # a servo sent where it stands makes no new width: compare the changes
        changes = [w for i, w in enumerate(widths) if i == 0 or w != widths[i - 1]]
        assert took == changes, (pin, took, changes)
    # the same moves made on a virtual CUBOTino fed the protocol's frames directly
    reference = VirtualFlipper(cfg, scramble)
    for a in actions:
        reference.do(a)
    assert sim.fault is None and reference.fault is None
    assert sim.state() == reference.cube.stickers != scramble
    assert sim.watch.mech.turns == reference.turns == [(3, 1), (3, -1)]


def test_a_pin_that_moves_a_part_wrong_jams_the_virtual_rig(mock_pins):
    """The virtual parts follow the pins, so a bad pulse is a fault there, not a cube quietly right."""
    cfg = load_config(PI)
    sim = attach_pins(cfg, "gpio://", "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB")
    tt, cover = cfg.servos["turntable"], cfg.servos["cover"]
    # the cube spun half way off square (a position a servo may take), then tipped: a real one jams
    number = servo_numbers("flipper")
    bad = [P.ServoCommand(0, number["turntable"], tt.pulse_us(135.0), 100),
           P.ServoCommand(0, number["cover"], cover.pulse_us(cover.angle("flip_deg")), 100)]
    with Link(cfg, port="gpio://", kind="flipper") as link:
        link.connect()
        ids = _send(link, Commands(cfg).home() + bad)
        _wait_done(link, ids[-1])  # the pins did it all: the Pi has no sensor to say a part jammed
    assert sim.fault is not None and "jams" in sim.fault, sim.fault


def test_the_emergency_stop_stops_every_pulse_at_once_and_latches(mock_pins):
    cfg = load_config(PI)
    c = cfg.servos["cover"]
    with Link(cfg, port="gpio://?speed=1", kind="flipper") as link:
        link.connect()
        # a long travel under way and one queued behind it
        _send(link, [P.ServoCommand(0, 1, c.pulse_us(60.0), 5000),
                     P.ServoCommand(0, 1, c.pulse_us(90.0), 50)])
        assert link.status().moving
        assert _widths(mock_pins, 12)[-1] == c.pulse_us(60.0)
        link.estop()
        assert _widths(mock_pins, 12)[-1] == 0, "pulses still going after the stop run was written"
        assert link.latch_heard(5.0)
        st = link.status()
        assert st.estop and st.cut and not st.moving and st.queue_len == 0
        with pytest.raises(Exception, match="emergency stop"):
            link.request(P.ServoCommand(900, 1, c.pulse_us(90.0), 50))
        assert _widths(mock_pins, 12)[-1] == 0  # refused: no pulse went out
        link.clear_latch()
        ids = _send(link, [P.ServoCommand(0, 1, c.pulse_us(90.0), 50)], first_id=901)
        _wait_done(link, ids[-1])
        assert _widths(mock_pins, 12)[-1] == c.pulse_us(90.0)


def test_the_start_button_on_its_pin_is_the_rigs_start_button(mock_pins):
    cfg = load_config(PI)
    sim = attach_pins(cfg, "gpio://", "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB")
    with Link(cfg, port="gpio://", kind="flipper") as link:
        link.connect()
        assert link.buttons == 0
        sim.press()  # the mock pin driven low and high again, through gpiozero's Button
        deadline = time.monotonic() + 5
        while link.buttons == 0:
            assert time.monotonic() < deadline, "no EVENT BUTTON from the pin"
            link.poll(0.05)
        assert link.buttons == 1


def test_the_rig_refuses_what_the_firmware_refuses(mock_pins):
    cfg = load_config(PI)
    with Link(cfg, port="gpio://", kind="flipper") as link:
        link.connect()
        for msg, code in ((P.ServoCommand(1, 2, 1500, 10), P.ErrorCode.BAD_ARG),   # no flipper servo here
                          (P.ServoCommand(2, 1, 2500, 10), P.ErrorCode.BAD_ARG),   # outside 1000..2000 us
                          (P.ServoCommand(3, 1, 1500, 10001), P.ErrorCode.BAD_ARG),
                          (P.MoveCommand(4, 0, 400), P.ErrorCode.BAD_ARG),          # no steppers on the pins
                          (P.ConfigServo(0, 300, 2000), P.ErrorCode.BAD_ARG)):
            with pytest.raises(Exception, match=code.name):
                link.request(msg)
        assert not [w for w in _widths(mock_pins, 12) if w]  # nothing refused reached a pin


def test_the_port_refuses_a_set_up_for_an_arduino_and_options_it_does_not_know(mock_pins):
    with pytest.raises(Exception, match="needs a set-up with port = \"gpio://\""):
        with Link(load_config(ROOT / "config" / "examples" / "cubotino.toml"), port="gpio://",
                  kind="flipper") as link:
            link.open()
    with pytest.raises(Exception, match="unknown gpio:// option 'speeed'"):
        with Link(load_config(PI), port="gpio://?speeed=2", kind="flipper") as link:
            link.open()


def test_one_process_owns_the_pins(mock_pins, tmp_path):
    """A second process that would drive the same pins is refused, naming the holder."""
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "XDG_RUNTIME_DIR": str(runtime_dir(tmp_path))}
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom robot import gpio\nfrom robot.rig.link import Link\n"
         "from robot.rig.loading import load_config\n"
         f"link = Link(load_config({str(PI)!r}), kind='flipper')\nlink.connect()\nprint('held', flush=True)\n"
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(Exception) as e:
            with Link(load_config(PI), kind="flipper") as link:
                link.open()
        assert "gpio://GPIO" in str(e.value) and "in use by" in str(e.value), str(e.value)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    with Link(load_config(PI), kind="flipper") as link:  # once it has ended, the pins are free
        link.connect()


def test_each_pin_is_claimed_with_the_owner_module_and_says_what_it_drives(mock_pins):
    from robot.rig.owner import port_holder

    cfg = load_config(PI)
    with Link(cfg, kind="flipper") as link:
        link.connect()
    # the rig outlives its port (a reconnect finds the servos holding): the pins stay this process's
    for pin, what in ((12, "servo cover"), (13, "servo turntable"), (26, "start_button")):
        holder = port_holder(f"gpio://GPIO{pin}")
        assert holder is not None and holder["pin"] == what and holder["pid"] == os.getpid(), holder
    protocol_gpio._let_go()  # as at the process's end
    assert port_holder("gpio://GPIO12") is None


# -- the command line -------------------------------------------------------------

def _cli(tmp_path, *args, timeout=240):
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "XDG_RUNTIME_DIR": str(runtime_dir(tmp_path))}
    return subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=timeout)


def test_start_headless_solves_on_the_mock_pins(tmp_path):
    # seeded: an unseeded run draws its simulated light at random, and now and then a light the
    # camera clips, which rightly ends the run in doubt before any move (seen once in ten suites)
    r = _cli(tmp_path, "start", "--headless", "--config", str(PI), "--state-dir", str(tmp_path / "state"),
             "--seed", "11")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "confirmed solved" in r.stdout, r.stdout + r.stderr


def test_jog_flip_on_the_mock_pins(tmp_path):
    r = _cli(tmp_path, "jog", "flip", "--config", str(PI), "--state-dir", str(tmp_path / "state"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "flip: orientation" in r.stdout and "made 1 robot move(s)" in r.stdout, r.stdout


def _moving(tmp_path, *command, **popen):
    """``cuberobot COMMAND`` on the mock pins at the servos' own pace, once
    its journal says a move of its job is under way: the process and the journal."""
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "XDG_RUNTIME_DIR": str(runtime_dir(tmp_path))}
    state = tmp_path / "state"
    run = subprocess.Popen([sys.executable, "-m", "robot", *command, "--config", str(PI), "--port",
                            "gpio://?speed=1", "--state-dir", str(state)], env=env, cwd=ROOT, **popen)
    journal = state / "mechanism-journal.jsonl"
    deadline = time.monotonic() + 120
    while not (journal.exists() and '"type":"sent"' in journal.read_text()):
        if run.poll() is not None or time.monotonic() > deadline:
            run.kill()
            run.wait(timeout=30)
            pytest.fail("the job never began moving")
        time.sleep(0.05)
    return run, journal


def test_estop_with_nothing_on_the_pins_says_so_in_one_line(tmp_path):
    r = _cli(tmp_path, "estop", "--config", str(PI))
    assert r.returncode != 0 and "no command drives the Pi's pins (gpio://) now" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = _cli(tmp_path, "estop", "--clear", "--port", "gpio://")
    assert r.returncode == 0 and "nothing is latched" in r.stdout, r.stdout + r.stderr


HOLDER = """\
import sys
from robot import gpio
from robot.gpio.board import pin_factory
from robot.rig import protocol as P
from robot.rig.link import Link
from robot.rig.loading import load_config

def widths(n):
    pin = next(p for info, p in pin_factory().pins.items() if info.name == f"GPIO{n}")
    return round(pin.state / 50 * 1e6) if pin.state else 0

cfg = load_config(sys.argv[1])
link = Link(cfg, kind="flipper", port="gpio://?speed=1")
link.connect()
c = cfg.servos["cover"]
print("held", link.request(P.ServoCommand(7, 1, c.pulse_us(60.0), 8000)), widths(12), flush=True)
for line in sys.stdin:
    link.poll(0.05)
    st = link.status()
    print(st.estop, link.estop_latched, st.queue_len, widths(12), widths(13), flush=True)
"""


def test_estop_and_clear_from_another_terminal_reach_the_rig_of_the_command_on_the_pins(tmp_path):
    """The pins' owner answers `cuberobot estop` from another process at once:
    its pins stop pulsing and its rig says latched to its own host; `estop
    --clear` from there unlatches it the same way."""
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "XDG_RUNTIME_DIR": str(runtime_dir(tmp_path))}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(PI)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)

    def ask():
        holder.stdin.write("status\n")
        holder.stdin.flush()
        return holder.stdout.readline().split()

    try:
        said = holder.stdout.readline().split()
        assert said[0] == "held" and "Ack" in said[1] and int(said[-1]) > 0, said  # the cover is moving
        r = _cli(tmp_path, "estop", "--config", str(PI))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "emergency stop latched" in r.stdout and "`cuberobot start`" not in r.stdout, r.stdout
        # its own host hears the latch; the queue is empty and neither servo pin pulses
        assert ask() == ["True", "True", "0", "0", "0"]
        r = _cli(tmp_path, "estop", "--clear", "--port", "gpio://")
        assert r.returncode == 0 and "emergency stop cleared" in r.stdout, r.stdout + r.stderr
        assert ask()[:2] == ["False", "False"]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_the_pins_owner_listens_past_a_killed_owners_socket_and_a_silent_asker(mock_pins):
    """A kill -9 leaves the owner's socket file behind: the next owner takes
    the path over. An asker that connects and says nothing holds up the
    next order by a second at most."""
    import socket

    from robot.gpio.remote import socket_path, tell_owner

    path = socket_path()
    path.parent.mkdir(parents=True)
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(path))  # bound, then the process gone: nobody answers on it
    left.close()
    assert path.exists()
    with Link(load_config(PI), kind="flipper") as link:
        link.connect()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
            silent.connect(str(path))
            assert "emergency stop latched" in tell_owner("estop")
        assert link.latch_heard(5.0) and link.status().estop
        assert "emergency stop cleared" in tell_owner("clear")
        assert not link.status().estop
    protocol_gpio._let_go()
    assert not path.exists()  # the pins let go: nobody answers, nobody is said to


def test_estop_from_another_terminal_stops_a_run_on_the_pins(tmp_path):
    """A run on the pins (a dry run, moving at the servos' own pace) is
    stopped by `cuberobot estop` in a second process and says so."""
    run, _ = _moving(tmp_path, "dry-run", "R U R' U'", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
    try:
        r = _cli(tmp_path, "estop", "--config", str(PI))
        assert r.returncode == 0 and "emergency stop latched" in r.stdout, r.stdout + r.stderr
        assert "`cuberobot dry-run`" in r.stdout, r.stdout
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=30)
    assert run.returncode != 0 and "the rig stopped during the robot move" in err, out + err


def test_no_pins_here_is_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    env["XDG_RUNTIME_DIR"] = str(runtime_dir(tmp_path))
    r = subprocess.run([sys.executable, "-m", "robot", "jog", "flip", "--config", str(PI), "--state-dir",
                        str(tmp_path / "state")], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=120)
    assert r.returncode != 0 and "no GPIO pin factory works here" in r.stderr, r.stderr
    assert "GPIOZERO_PIN_FACTORY=mock" in r.stderr and "Traceback" not in r.stderr, r.stderr


# -- CUBOTino's own settings ----------------------------------------------------------

SETTINGS = ROOT / "tests" / "data" / "Cubotino_T_servo_settings.txt"


def _gpiozero_pulse(lo_ms, hi_ms, value):
    """The pulse gpiozero's Servo sends for ``value`` (-1..1) over lo..hi ms, in microseconds."""
    return (lo_ms + (value + 1) / 2 * (hi_ms - lo_ms)) * 1000


def test_cubotinos_settings_become_a_set_up_that_sends_its_own_pulses(tmp_path):
    import json

    out = tmp_path / "my-rig.toml"
    r = _cli(tmp_path, "config", "import-cubotino", str(SETTINGS), "-o", str(out))
    assert r.returncode == 0 and "written from" in r.stdout, r.stdout + r.stderr
    assert "t_servo_read is not used" in r.stderr
    check = _cli(tmp_path, "config", "check", str(out))
    assert check.returncode == 0 and f"{out}: ok" in check.stdout, check.stdout + check.stderr
    cfg = load_config(out)
    s = {k: float(v) for k, v in json.loads(SETTINGS.read_text()).items()}
    c, t = cfg.servos["cover"], cfg.servos["turntable"]
    assert (c.pin, t.pin, cfg.gpio.start_button) == (12, 13, 26)
    for key, angle in (("t_servo_close", "closed_deg"), ("t_servo_open", "open_deg"),
                       ("t_servo_flip", "flip_deg")):
        want = _gpiozero_pulse(s["t_min_pulse_width"], s["t_max_pulse_width"], s[key])
        assert abs(c.pulse_us(c.angle(angle)) - want) <= 1.0, (key, c.pulse_us(c.angle(angle)), want)
    for key, quarters in (("b_servo_CCW", -1), ("b_servo_CW", 1)):
        want = _gpiozero_pulse(s["b_min_pulse_width"], s["b_max_pulse_width"], s[key])
        got = t.pulse_us(t.angle("home_deg") + 90 * quarters)
        assert abs(got - want) <= 1.0, (key, got, want)
    # no travel shorter here than CUBOTino waits for it
    closed, opened, flip = c.angle("closed_deg"), c.angle("open_deg"), c.angle("flip_deg")
    for deg, key in ((closed - opened, "t_open_close_time"), (opened - flip, "t_flip_open_time"),
                     (closed - flip, "t_close_to_flip_time"), (closed - flip, "t_flip_to_close_time")):
        assert c.travel_s(deg) >= s[key] - 1e-9, (key, c.travel_s(deg))
    for key in ("b_spin_time", "b_rotate_time"):
        assert t.travel_s(90.0) >= s[key] - 1e-9, (key, t.travel_s(90.0))
    again = _cli(tmp_path, "config", "import-cubotino", str(SETTINGS), "-o", str(out))
    assert again.returncode != 0 and "already exists" in again.stderr, again.stderr
    jog = _cli(tmp_path, "jog", "spin +1", "--config", str(out), "--state-dir", str(tmp_path / "state"))
    assert jog.returncode == 0 and "made 1 robot move(s)" in jog.stdout, jog.stdout + jog.stderr


@pytest.mark.parametrize("text, said", [
    ("not json", "not CUBOTino's settings file (JSON)"),
    ("[1, 2]", "expected CUBOTino's servo settings (a JSON object"),
    ('{"t_min_pulse_width": "1"}', "t_max_pulse_width: missing; is it CUBOTino's"),
    (SETTINGS.read_text().replace('"t_servo_open": "-0.3"', '"t_servo_open": "-1.3"'),
     "t_servo_open: expected a number from -1 to 1, got '-1.3'"),
    (SETTINGS.read_text().replace('"t_max_pulse_width": "2"', '"t_max_pulse_width": "nan"'),
     "t_max_pulse_width: expected a number from 0.4 to 2.6"),
    (SETTINGS.read_text().replace('"t_servo_flip": "-0.86"', '"t_servo_flip": "0.5"'),
     "t_servo_flip: the cover rises from close past open to flip"),
    (SETTINGS.read_text().replace('"b_servo_CW": "0.99"', '"b_servo_CW": "-0.2"'),
     "b_servo_CW: CCW (-0.97) and CW (-0.2) must be a quarter turn either side"),
])
def test_a_settings_file_that_is_not_cubotinos_is_one_line(tmp_path, text, said, capsys, monkeypatch):
    """The command in this process (robot.cli.main.main, as the `cuberobot`
    entry point runs it): a refusal needs no process of its own to be seen."""
    from robot.cli.main import main

    f = tmp_path / "Cubotino_T_servo_settings.txt"
    f.write_text(text)
    monkeypatch.chdir(tmp_path)
    code = main(["config", "import-cubotino", str(f)])
    out, err = capsys.readouterr()
    assert code != 0 and said in err and out == "", (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "my-rig.toml").exists() and [p.name for p in tmp_path.iterdir()] == [f.name]


# -- doctor ---------------------------------------------------------------------------

def _machine(root, *, member=()):
    from robot.app.doctor import Machine

    (root / "dev").mkdir(parents=True, exist_ok=True)
    (root / "dev" / "gpiochip0").write_text("")
    return Machine(root=root, user="maker", run=lambda argv, timeout: None,
                   may_open=lambda p: p.name != "gpiochip0", group_of=lambda p: "gpio",
                   member_of=lambda user: set(member), process_groups=lambda: set())


def test_doctor_says_the_factory_the_pins_and_the_gpio_group_fix(mock_pins, tmp_path):
    from robot.app.doctor import diagnose

    report = diagnose(_machine(tmp_path / "root"), load_config(PI), handshakes=False)
    lines = [f.line() for f in report.findings]
    assert ("gpio    pin factory: gpiozero's mock pins: nothing real moves (GPIOZERO_PIN_FACTORY=mock)"
            in lines)
    assert "gpio    servo cover: GPIO12 (header pin 32)" in lines
    assert "gpio    start_button: GPIO26 (header pin 37)" in lines
    access = [f for f in report.findings if f.kind == "access"]
    assert len(access) == 1 and access[0].subject == "/dev/gpiochip0", lines
    assert access[0].data["fix"] == "sudo usermod -aG gpio maker, then log out and in again", access[0].data
    # added to the group since logging in: the fix is to log in again
    report = diagnose(_machine(tmp_path / "root", member=("gpio",)), load_config(PI), handshakes=False)
    fix = next(f for f in report.findings if f.kind == "access").data["fix"]
    assert fix == "maker was added to gpio since logging in: log out and in again (or reboot)", fix


def test_doctor_names_who_holds_a_pin_and_its_handshake_passes(mock_pins, tmp_path):
    r = _cli(tmp_path, "doctor", "--config", str(PI))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on the Pi's own pins (gpio://), queue of 4: the handshake passes" in r.stdout, r.stdout
    from robot.app.doctor import diagnose

    with Link(load_config(PI), kind="flipper") as link:
        link.connect()
        report = diagnose(_machine(tmp_path / "root"), load_config(PI), handshakes=False)
    held = [f for f in report.findings if f.subject == "servo cover"]
    assert held and "in use by" in held[0].text and held[0].data["holder"]["pid"] == os.getpid(), held


# -- the e-stop switch and the status light ------------------------------------------

def test_the_estop_switch_and_the_status_light(mock_pins, tmp_path):
    text = PI.read_text().replace("# estop_button = 21", "estop_button = 21").replace(
        "# status_light = 19", "status_light = 19")
    f = tmp_path / "pi.toml"
    f.write_text(text)
    cfg = load_config(f)
    assert cfg.gpio.estop_button == 21 and cfg.gpio.status_light == 19
    c = cfg.servos["cover"]
    with Link(cfg, kind="flipper", port="gpio://?speed=1") as link:
        link.connect()
        light = _pin(mock_pins, 19)
        assert light.state, "the light is not lit in a session"
        _send(link, [P.ServoCommand(0, 1, c.pulse_us(60.0), 5000)])
        assert _widths(mock_pins, 12)[-1] == c.pulse_us(60.0)
        switch = _pin(mock_pins, 21)
        switch.drive_low()  # the stop pressed (and it stays pressed)
        assert _widths(mock_pins, 12)[-1] == 0, "pulses still going with the stop pressed"
        assert link.latch_heard(5.0)
        st = link.status()
        assert st.estop and st.cut and not st.moving
        with pytest.raises(Exception, match="emergency-stop switch is still pressed"):
            link.clear_estop()
        deadline = time.monotonic() + 5
        seen = len(light.states)
        while len(light.states) < seen + 2:  # blinking: it goes on and off by itself
            assert time.monotonic() < deadline, light.states
            time.sleep(0.02)
        switch.drive_high()  # released
        link.clear_latch()
        assert not link.status().estop
        deadline = time.monotonic() + 5
        while not light.state:
            assert time.monotonic() < deadline, "the light did not come back on"
            time.sleep(0.02)


def test_a_run_killed_mid_job_resumes_as_state_unknown_and_moves_nothing(tmp_path):
    """The rig on the pins lives in the process that drives them: killed with
    it, it comes back a new boot, so resume can never take its word for the
    job's state; it says so and sends nothing."""
    import signal

    state = tmp_path / "state"
    run, journal = _moving(tmp_path, "start", "--headless", "--seed", "11", stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    r = _cli(tmp_path, "resume", "--config", str(PI), "--state-dir", str(state))
    assert r.returncode != 0, r.stdout + r.stderr
    said = r.stdout + r.stderr
    assert "the rig has restarted since the job began" in said and "state unknown: scan again" in said, said
    assert "Nothing was moved." in said, said
    assert journal.read_text().strip().splitlines()[-1].endswith('"status":"state unknown: scan again"}')


def test_a_run_killed_between_two_moves_still_resumes_as_state_unknown(mock_pins, tmp_path, capsys):
    """The best case a kill can leave: the journal says the last move was
    made and confirmed, nothing under way. Still not a certain state on the
    pins: the pulses died with the killed process, the servos went limp and
    were free to drift or be moved by hand until now, and nothing senses
    where they are (docs/hardware.md). So resume says "state unknown" and the
    pins take no pulse."""
    from robot.cli.main import main
    from robot.rig.mechanisms.journal import UNKNOWN

    state = tmp_path / "state"
    r = _cli(tmp_path, "dry-run", "R U R' U'", "--config", str(PI), "--port", "gpio://",
             "--state-dir", str(state))
    assert r.returncode == 0, r.stdout + r.stderr
    journal = state / "mechanism-journal.jsonl"
    lines = journal.read_text().splitlines()
    # the journal byte for byte as a kill right after move 3 was confirmed leaves it: append-only,
    # each record flushed before the next move is sent
    cut = [i for i, line in enumerate(lines) if '"type":"done"' in line][2]
    assert '"type":"sent"' in lines[cut + 1], lines[cut + 1]
    journal.write_text("\n".join(lines[:cut + 1]) + "\n")
    assert main(["resume", "--config", str(PI), "--state-dir", str(state)]) != 0
    said = capsys.readouterr().err
    assert "3 of 11 robot moves done" in said and "the rig has restarted since the job began" in said, said
    assert f"{UNKNOWN}. Nothing was moved." in said, said
    assert not [w for w in _widths(mock_pins, 12) + _widths(mock_pins, 13) if w], "resume pulsed a servo"
    assert journal.read_text().splitlines()[-1].endswith(f'"status":"{UNKNOWN}"}}')


def test_a_stop_beside_a_run_in_the_same_process_reaches_the_rig(mock_pins):
    """The panel's stop goes onto the port beside the run's link (robot/rig/link.py estop_beside)."""
    from robot.rig.link import estop_beside

    cfg = load_config(PI)
    c = cfg.servos["cover"]
    with Link(cfg, kind="flipper", port="gpio://?speed=1") as link:
        link.connect()
        _send(link, [P.ServoCommand(0, 1, c.pulse_us(60.0), 5000)])
        estop_beside("gpio://")
        assert _widths(mock_pins, 12)[-1] == 0
        assert link.latch_heard(5.0) and link.status().estop


def test_the_panel_solves_on_the_mock_pins(mock_pins, tmp_path):
    from webserver import Client, panel_server

    with panel_server(tmp_path, cfg=load_config(PI), rig_port="gpio://") as (base, panel, _):
        client = Client(base)
        rig = client.get("/api/status")[1]["rig"]
        assert rig["port"] == "gpio://" and rig["simulated"] is True, rig  # mock pins move a virtual rig
        assert client.post("/api/start", {"seed": 10})[0] == 202
        events = client.events(lambda e: e["kind"] == "finished")
        assert events[-1]["status"] == "solved" and events[-1]["state"] == "done", events[-1]
    assert [w for w in _widths(mock_pins, 13) if w], "the holder's pin never pulsed"


def test_the_panel_says_real_pins_are_not_simulated(monkeypatch):
    """The page's "simulated" follows the pin factory gpiozero would make:
    only its mock pins are a simulation; lgpio's drive real servos."""
    from robot.gpio.board import on_mock_pins

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    assert on_mock_pins()
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    assert not on_mock_pins()


def test_dry_run_on_the_mock_pins(tmp_path):
    r = _cli(tmp_path, "dry-run", "R U R' U'", "--config", str(PI), "--port", "gpio://",
             "--state-dir", str(tmp_path / "state"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on the flipper rig on gpio://" in r.stdout and "final state:" in r.stdout, r.stdout


def test_cubotinos_settings_imported_in_this_process_pass_config_check(tmp_path, capsys):
    """The import and `config check` through robot.cli.main.main in this
    process (the pulses themselves: the test above, through the command)."""
    from robot.cli.main import main

    out = tmp_path / "my-rig.toml"
    assert main(["config", "import-cubotino", str(SETTINGS), "-o", str(out)]) == 0
    said, err = capsys.readouterr()
    assert "written from" in said and "t_servo_read is not used" in err, (said, err)
    assert main(["config", "check", str(out)]) == 0
    assert f"{out}: ok" in capsys.readouterr().out
    cfg = load_config(out)
    assert cfg.rig.kind == "flipper" and cfg.rig.port == "gpio://" and cfg.servos["cover"].pin == 12
