"""`cuberobot service`: the systemd user unit that runs `cuberobot serve`,
checked by systemd's own `systemd-analyze verify`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from robot.app import service

ROOT = Path(__file__).resolve().parents[1]


def cuberobot(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def verify(unit: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return subprocess.run(["systemd-analyze", "--user", "verify", str(unit)], capture_output=True, text=True,
                          env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)), timeout=60)


def test_install_writes_a_unit_systemd_accepts(home):
    folder = home / "my rig 100%"
    folder.mkdir()
    config = folder / "rig $1.toml"
    config.write_text((ROOT / "config" / "examples" / "uno-six-steppers-two-webcams.toml").read_text())
    p = cuberobot("service", "install", "--config", str(config), "--no-start", "--port", "8090",
                  env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    unit = home / "config" / "systemd" / "user" / "cuberobot.service"
    assert p.stdout.splitlines()[0] == f"wrote {unit}"
    text = unit.read_text()
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    exec_line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    quoted = f'"{home}/my rig 100%%/rig $$1.toml"'
    assert exec_line == (f"ExecStart={sys.executable} -m robot serve --config {quoted} --host 0.0.0.0 "
                         "--port 8090")
    v = verify(unit, home)
    assert v.returncode == 0 and not v.stdout.strip() and not v.stderr.strip(), v.stdout + v.stderr


def test_systemd_analyze_catches_a_broken_unit(home):
    unit = home / "cuberobot.service"
    unit.write_text(service.unit_text(["relative/python", "-m", "robot", "serve"], None))
    assert verify(unit, home).returncode != 0


def test_install_enables_and_starts_and_says_what_boot_needs(home):
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, ""
    done = service.install("[Unit]\n", run=run, user="pi", linger=lambda u: False)
    assert done.started and done.path.read_text() == "[Unit]\n"
    assert calls == [["systemctl", "--user", "daemon-reload"],
                     ["systemctl", "--user", "enable", "cuberobot.service"],
                     ["systemctl", "--user", "restart", "cuberobot.service"]]
    assert done.notes == ["to start at boot without a login: sudo loginctl enable-linger pi"]
    failed = service.install("[Unit]\n", run=lambda argv: (1, "Failed to connect to bus: No medium found"),
                             user="pi", linger=lambda u: True)
    assert not failed.started and len(failed.notes) == 1
    assert "No medium found" in failed.notes[0] and "systemctl --user enable --now" in failed.notes[0]


def test_status_and_uninstall(home):
    def run(argv):
        if argv[:2] == ["journalctl", "--user"]:
            return 0, "the panel listens on 0.0.0.0: open the address above once\nhttp://192.0.2.7:8080/?token=abc"
        return 0, {"is-enabled": "enabled", "is-active": "active"}.get(argv[2], "")
    assert service.status(run=run)[0].startswith("not installed")
    service.install(service.unit_text(["/usr/bin/python3", "-m", "robot", "serve"], None), start=False,
                    user="pi", linger=lambda u: True)
    lines = service.status(run=run, user="pi", linger=lambda u: True)
    assert lines[1] == "runs: /usr/bin/python3 -m robot serve"
    assert lines[2:] == ["enabled: enabled", "active: active", "panel: http://192.0.2.7:8080/?token=abc",
                         "starts at boot without a login"]
    calls = []
    path, existed = service.uninstall(run=lambda argv: calls.append(argv) or (0, ""))
    assert existed and not path.exists() and calls[0] == ["systemctl", "--user", "disable", "--now",
                                                         "cuberobot.service"]
    assert service.uninstall(run=lambda argv: (0, ""))[1] is False


def test_a_bad_config_writes_no_unit(home):
    bad = home / "bad.toml"
    bad.write_text("[rig]\nbaud = 'fast'\n")
    p = cuberobot("service", "install", "--config", str(bad), "--no-start", env=dict(os.environ))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "rig.baud" in p.stderr
    assert not (home / "config" / "systemd").exists()
