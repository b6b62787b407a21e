"""The flipper's and the two-gripper's ``[servos.*]``, ``[motors.*]`` and
``[solver]``: what the firmware and the virtual rig would refuse later (a
servo pin it does not drive, a pulse or a travel beyond its limits, a
stepper on a servo's DIR pin, cfop) is refused when the file is read, in
one line that names the file and the key."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from robot.rig import config as C
from robot.rig.config import parse_config
from robot.rig.errors import UserError
from robot.rig.loading import load_config
from robot.rig.mechanisms.commands import Commands
from robot.sim import mechanisms as sim_mechanisms
from robot.sim import virtual_rig

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware" / "cuberobot"
FLIPPER = '[rig]\nkind = "flipper"\n'
GRIPPER = '[rig]\nkind = "two-gripper"\n'


def _err(text: str) -> str:
    with pytest.raises(UserError) as e:
        parse_config(text, Path("rig.toml"))
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("rig.toml: ")
    return msg


def _define(path: Path, name: str) -> int:
    m = re.search(rf"#define {name} (\d+)", path.read_text())
    assert m, f"{name} not in {path}"
    return int(m.group(1))


# ------------------------------------------------ the firmware's own numbers


def test_the_limits_are_the_firmwares_and_the_virtual_rigs():
    assert (C.SERVO_MIN_US, C.SERVO_MAX_US) == (_define(FIRMWARE / "servo.h", "CR_SERVO_MIN_US"),
                                                _define(FIRMWARE / "servo.h", "CR_SERVO_MAX_US"))
    assert (C.SERVO_MIN_US, C.SERVO_MAX_US) == (virtual_rig.SERVO_MIN_US, virtual_rig.SERVO_MAX_US)
    travel_ms = _define(FIRMWARE / "app.cpp", "CR_MAX_TRAVEL_MS")
    assert C.MAX_SERVO_TRAVEL_MS == travel_ms == virtual_rig.MAX_TRAVEL_MS
    # the virtual rig must be able to tell the two named positions apart
    assert C.MIN_SERVO_SWING_DEG > 2 * sim_mechanisms.TOLERANCE_DEG


def test_the_servo_pins_are_the_uno_dir_pins_of_motors_1_to_3():
    pins = (FIRMWARE / "pins.h").read_text()
    uno = pins[pins.index("Arduino Uno"):]
    m = re.search(r"DIR U R F D L B = (D\d+) (D\d+) (D\d+) (D\d+) (D\d+) (A\d)", uno)
    assert m is not None
    arduino = [int(p[1:]) if p[0] == "D" else 14 + int(p[1:]) for p in m.groups()]
    assert list(C.UNO_DIR_PINS) == arduino
    assert "servo i drives the DIR pin of motor i + 1" in (FIRMWARE / "hal.h").read_text()
    assert C.DEFAULT_SERVO_PINS == {"turntable": 9, "cover": 10, "flipper": 11, "grip_D": 9, "grip_L": 10}


# ------------------------------------------------------------ pin


@pytest.mark.parametrize("text, key, drives", [
    (FLIPPER + "[servos.cover]\npin = 3\n", "servos.cover.pin", 10),
    (FLIPPER + "[servos.turntable]\npin = 10\n[servos.cover]\npin = 9\n", "servos.turntable.pin", 9),
    (FLIPPER + "[servos.flipper]\npin = 36\n", "servos.flipper.pin", 11),
    (GRIPPER + "[servos.grip_D]\npin = 10\n", "servos.grip_D.pin", 9),
    (GRIPPER + "[servos.grip_L]\npin = 11\n", "servos.grip_L.pin", 10),
])
def test_a_pin_the_firmware_does_not_drive_is_refused(text, key, drives):
    msg = _err(text)
    assert f"rig.toml: {key}: " in msg
    assert f"drives servo {key.split('.')[1]} on pin {drives}" in msg and "leave pin out" in msg


def test_the_driven_pin_or_none_is_accepted():
    cfg = parse_config(FLIPPER + "[servos.turntable]\npin = 9\n[servos.cover]\npin = 10\n"
                                 "[servos.flipper]\nmin_us = 600\n")
    assert [cfg.servos[n].pin for n in ("turntable", "cover", "flipper")] == [9, 10, 11]
    # a Mega 2560's pins for them (its DIR pins of motors 1, 2, 3): the config does not know the board
    cfg = parse_config(FLIPPER + "[servos.turntable]\npin = 36\n[servos.cover]\npin = 35\n"
                                 "[servos.flipper]\npin = 34\n")
    assert [cfg.servos[n].pin for n in ("turntable", "cover", "flipper")] == [36, 35, 34]


# ------------------------------------------------------------ pulses


@pytest.mark.parametrize("key, value", [("min_us", 399), ("min_us", 300), ("max_us", 2601), ("max_us", 3000)])
def test_pulse_limits_are_the_firmwares(key, value):
    msg = _err(GRIPPER + f"[servos.grip_D]\n{key} = {value}\n")
    assert f"servos.grip_D.{key}: expected a value between 400 and 2600, got {value}" in msg


def test_the_widest_pulse_limits_are_accepted():
    cfg = parse_config(GRIPPER + "[servos.grip_D]\nmin_us = 400\nmax_us = 2600\n")
    assert (cfg.servos["grip_D"].min_us, cfg.servos["grip_D"].max_us) == (400, 2600)


# ------------------------------------------------------------ travel


def test_a_travel_longer_than_one_servo_command_is_refused():
    msg = _err(FLIPPER + "[servos.turntable]\nrange_deg = 360\nhome_deg = 180\ns_per_60deg = 2.0\n")
    assert "servos.turntable.s_per_60deg: " in msg
    assert "range_deg (360)" in msg and "s_per_60deg (2)" in msg and "settle_ms (60)" in msg
    assert "12060 ms" in msg and "10000 ms" in msg


def test_a_travel_of_exactly_the_limit_is_accepted_and_sent_as_it_is():
    cfg = parse_config(FLIPPER + "[servos.cover]\nrange_deg = 300\ns_per_60deg = 2.0\nsettle_ms = 0\n")
    assert Commands(cfg).angle("cover", 300.0).travel_ms == C.MAX_SERVO_TRAVEL_MS
    assert "10001 ms" in _err(FLIPPER + "[servos.cover]\nrange_deg = 300\ns_per_60deg = 2.0\nsettle_ms = 1\n")


# ------------------------------------------------------------ steppers on a servo's pin


@pytest.mark.parametrize("face, motor, servo", [("D", 1, "grip_D"), ("L", 2, "grip_L"), ("L", 1, "grip_D")])
def test_a_gripper_stepper_on_a_servo_pin_is_refused(face, motor, servo):
    msg = _err(GRIPPER + f"[motors.{face}]\nmotor = {motor}\n")
    assert f"motors.{face}.motor: motor {motor}'s DIR pin" in msg and f"servo {servo}'s pulses" in msg
    assert "use motor 0, 3, 4 or 5" in msg


def test_only_the_faces_the_kind_drives_must_differ():
    cfg = parse_config(GRIPPER + "[motors.D]\nmotor = 0\n[motors.L]\nmotor = 5\n")
    assert (cfg.motors["D"].motor, cfg.motors["L"].motor) == (0, 5)
    assert sorted(m.motor for m in cfg.motors.values()) == list(range(6))  # every motor still has a face
    assert len(cfg.profiles()) == 6
    msg = _err(GRIPPER + "[motors.D]\nmotor = 5\n[motors.L]\nmotor = 5\n")
    assert "motors.L.motor: motor 5 is already used by face D" in msg
    # a flipper drives no stepper: its motor tables are not checked against each other
    cfg = parse_config(FLIPPER + "[motors.U]\nmotor = 2\n")
    assert sorted(m.motor for m in cfg.motors.values()) == list(range(6))
    # a six-motor rig still needs a motor on every face
    assert "motors.R.motor: motor 1 is already used by face U" in _err("[motors.U]\nmotor = 1\n")


# ------------------------------------------------------------ named angles


@pytest.mark.parametrize("text, key", [
    (FLIPPER + "[servos.cover]\nopen_deg = 40\nclosed_deg = 41\n", "servos.cover.closed_deg"),
    (FLIPPER + "[servos.flipper]\nrest_deg = 10\nflip_deg = 19.5\n", "servos.flipper.flip_deg"),
    (GRIPPER + "[servos.grip_L]\nopen_deg = 50\nclosed_deg = 41\n", "servos.grip_L.closed_deg"),
])
def test_named_angles_closer_than_ten_degrees_are_refused(text, key):
    msg = _err(text)
    assert f"{key}: " in msg and "at least 10 degrees" in msg


def test_named_angles_ten_degrees_apart_are_accepted():
    cfg = parse_config(GRIPPER + "[servos.grip_D]\nopen_deg = 40\nclosed_deg = 50\n")
    assert cfg.servos["grip_D"].angle("closed_deg") == 50


def test_a_turntable_under_180_degrees_blames_its_range():
    msg = _err(FLIPPER + "[servos.turntable]\nrange_deg = 170\n")
    assert "servos.turntable.range_deg: " in msg and "170" in msg and "at least 180" in msg
    assert "home_deg" in _err(FLIPPER + "[servos.turntable]\nrange_deg = 200\nhome_deg = 120\n")


# ------------------------------------------------------------ solver


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_cfop_is_refused_on_a_mechanism(kind):
    msg = _err(f'[rig]\nkind = "{kind}"\n[solver]\nmethod = "cfop"\n')
    assert "solver.method: " in msg and f"a {kind} rig solves with two-phase" in msg


def test_cfop_stays_on_a_six_motor_rig_and_two_phase_everywhere():
    assert parse_config('[solver]\nmethod = "cfop"\n').solver.method == "cfop"
    assert parse_config(FLIPPER + '[solver]\nmethod = "two-phase"\n').solver.method == "two-phase"


# ------------------------------------------------------------ the shipped files


CONFIGS = sorted([*(ROOT / "config").glob("*.toml"), *(ROOT / "config" / "examples").glob("*.toml")])


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_the_shipped_configs_load(path):
    cfg = load_config(path)
    assert sorted(m.motor for m in cfg.motors.values()) == list(range(6))


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_the_mechanism_examples_pass_config_check(kind):
    r = subprocess.run([sys.executable, "-m", "robot", "config", "check",
                        str(ROOT / "config" / "examples" / f"{kind}.toml")],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert load_config(ROOT / "config" / "examples" / f"{kind}.toml").rig.kind == kind
