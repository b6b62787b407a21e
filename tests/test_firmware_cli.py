"""`cuberobot firmware build|flash`: the firmware built from the sketch the
package ships, flashed by a stand-in avrdude that checks its arguments and
the .hex, then the handshake checked against the firmware in simavr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fwtools import BUILD, make

from robot.app import firmware
from robot.rig.errors import UserError
from robot.sim.pty_rig import SimRigProcess

ROOT = Path(__file__).resolve().parents[1]
STANDIN = Path(__file__).resolve().parent / "standins" / "avrdude.py"


def cuberobot(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=timeout)


@pytest.fixture
def avrdude(tmp_path):
    """An environment whose PATH starts with the stand-in avrdude; its calls logged."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "avrdude"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    exe.chmod(0o755)
    log = tmp_path / "avrdude.jsonl"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", AVRDUDE_STANDIN_LOG=str(log))
    return env, log


def test_the_shipped_sketch_is_the_firmware_folder():
    sketch = ROOT / "firmware" / "cuberobot"
    assert sorted(p.name for p in firmware.SKETCH_DIR.iterdir()) == sorted(p.name for p in sketch.iterdir())
    text = (sketch / "constants.h").read_text()
    assert firmware.sketch_version() == ".".join(
        line.split()[-1] for line in text.splitlines() if line.startswith("#define CR_FW_"))


def test_build_gives_the_same_hex_as_make_and_is_reused(tmp_path):
    make("uno", "mega")
    lines = []
    for board in ("uno", "mega"):
        built = firmware.build(board, tmp_path, progress=lines.append)
        assert not built.reused and built.hex == tmp_path / board / "cuberobot.hex"
        assert built.hex.read_bytes() == (BUILD / board / "cuberobot.hex").read_bytes()
        assert firmware.check_hex(built.hex) == built.flash_bytes
    assert any("compiling the Arduino core" in line for line in lines)
    again = firmware.build("uno", tmp_path, progress=lines.append)
    assert again.reused and lines[-1] == "Arduino Uno: up to date"


def test_flash_runs_avrdude_right_and_the_handshake_passes_on_the_firmware_in_simavr(tmp_path, avrdude):
    env, log = avrdude
    make("sim")
    built = cuberobot("firmware", "build", "--out", str(tmp_path / "fw"), env=env)
    assert built.returncode == 0, built.stderr
    assert "Arduino Uno: firmware 1.1.0 in" in built.stdout
    elf = tmp_path / "fw" / "uno" / "cuberobot.elf"
    with SimRigProcess("--speed", "max", firmware=str(elf)) as rig:
        p = cuberobot("firmware", "flash", "--port", rig.port, "--out", str(tmp_path / "fw"),
                      "--boot-wait", "0.2", env=env)
    assert p.returncode == 0, p.stderr
    hexfile = tmp_path / "fw" / "uno" / "cuberobot.hex"
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call == ["-p", "atmega328p", "-c", "arduino", "-b", "115200", "-P", rig.port, "-U",
                    f"flash:w:{hexfile}:i"]
    last = p.stdout.strip().splitlines()[-1]
    assert last == (f"flashed and checked on {rig.port}: cuberobot firmware 1.1.0 (protocol 2) on an Arduino "
                    "Uno, queue of 4: the handshake passes")


def test_a_mega_is_flashed_with_its_own_programmer(tmp_path, avrdude):
    env, log = avrdude
    port = tmp_path / "ttyACM0"
    port.write_text("")
    p = cuberobot("firmware", "flash", "--board", "mega", "--port", str(port), "--out", str(tmp_path / "fw"),
                  "--no-check", env=env)
    assert p.returncode == 0, p.stderr
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call[:9] == ["-p", "atmega2560", "-c", "wiring", "-b", "115200", "-D", "-P", str(port)]
    assert p.stdout.strip().endswith(f"flashed Arduino Mega 2560 firmware 1.1.0 on {port}")


def test_problems_are_one_line_naming_the_fix(tmp_path, avrdude):
    env, _ = avrdude
    port = tmp_path / "ttyACM0"
    port.write_text("")
    out = ["--out", str(tmp_path / "fw")]
    p = cuberobot("firmware", "flash", "--port", str(port), *out,
                  env=dict(env, AVRDUDE_STANDIN_FAIL="avrdude: stk500_recv(): programmer is not responding"))
    assert p.returncode == 1 and p.stderr.count("\n") == 1
    assert "avrdude failed on" in p.stderr and "is another program using" in p.stderr
    # A PATH with the compiler's tools but no avrdude (on Debian both live in /usr/bin).
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in firmware.TOOLS:
        if name != "avrdude" and shutil.which(name):
            (tools / name).symlink_to(shutil.which(name))
    no_avrdude = dict(os.environ, PATH=str(tools))
    p = cuberobot("firmware", "flash", "--port", str(port), *out, env=no_avrdude)
    assert p.returncode == 2 and p.stderr.strip() == (
        "cuberobot firmware: avrdude is not installed: sudo apt install avrdude")
    p = cuberobot("firmware", "build", *out, env=dict(os.environ, PATH=str(tmp_path / "nothing")))
    assert p.returncode == 2 and p.stderr.strip() == (
        "cuberobot firmware: avr-gcc is not installed: sudo apt install gcc-avr avr-libc arduino-core-avr")
    p = cuberobot("firmware", "build", *out, "--arduino-dir", str(tmp_path))
    assert p.returncode == 2 and "sudo apt install arduino-core-avr" in p.stderr
    p = cuberobot("firmware", "flash", *out)
    assert p.returncode == 2 and "give the board's port" in p.stderr
    p = cuberobot("firmware", "flash", "--port", "sim://", *out)
    assert p.returncode == 2 and "not a serial port" in p.stderr


def test_a_damaged_hex_is_refused(tmp_path):
    bad = tmp_path / "x.hex"
    bad.write_text(":100000000C9434000C9446000C9446000C944600FF\n:00000001FF\n")
    with pytest.raises(UserError, match="checksum"):
        firmware.check_hex(bad)
    bad.write_text(":100000000C9434000C9446000C9446000C9446006A\n")
    with pytest.raises(UserError, match="no end-of-file"):
        firmware.check_hex(bad)


def test_a_cached_hex_cut_short_is_built_again_and_never_flashed(tmp_path, avrdude):
    env, log = avrdude
    port = tmp_path / "ttyACM0"
    port.write_text("")
    built = firmware.build("uno", tmp_path / "fw")
    whole = built.hex.read_bytes()
    built.hex.write_bytes(whole[: len(whole) // 2])  # a full disk, a pulled card
    with pytest.raises(UserError, match="bad length|not an Intel HEX|no end-of-file"):
        firmware.flash(built, str(port))
    assert not log.exists() or not log.read_text().strip()  # avrdude never ran
    lines = []
    again = firmware.build("uno", tmp_path / "fw", progress=lines.append)
    assert not again.reused and "damaged; building it again" in lines[0]
    assert again.hex.read_bytes() == whole and firmware.check_hex(again.hex) == again.flash_bytes
