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


def _one_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    return p.stderr


def test_a_config_home_that_is_a_file_is_one_line(tmp_path):
    """Issue 46 P8: XDG_CONFIG_HOME a file was an internal error."""
    (tmp_path / "file").write_text("not a folder\n")
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "file"))
    line = _one_line(cuberobot("service", "install", "--no-start", env=env))
    assert f"{tmp_path / 'file'} is not a folder; set XDG_CONFIG_HOME" in line, line
    assert (tmp_path / "file").read_text() == "not a folder\n"


def test_a_unit_there_already_is_replaced_only_with_force(home):
    """Issue 46: install overwrote an existing unit without asking. The
    same unit again is kept (a re-install after a reboot, say); another one
    is refused, naming what it runs; --force replaces it and says what it
    ran."""
    env = dict(os.environ)
    unit = home / "config" / "systemd" / "user" / "cuberobot.service"
    assert cuberobot("service", "install", "--no-start", env=env).returncode == 0
    first = unit.read_text()
    p = cuberobot("service", "install", "--no-start", env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"{unit} is there already, as this would write it"), p.stdout
    line = _one_line(cuberobot("service", "install", "--no-start", "--port", "8091", env=env))
    assert f"{unit} is there already and runs " in line and "--port 8080: give --force" in line, line
    assert unit.read_text() == first
    p = cuberobot("service", "install", "--no-start", "--port", "8091", "--force", env=env)
    assert p.returncode == 0 and "replacing the unit there (it ran " in p.stdout, p.stdout
    assert "--port 8080)" in p.stdout
    assert "--port 8091" in unit.read_text()


@pytest.mark.parametrize("what", ["symlink", "fifo"])
def test_the_units_tmp_is_never_followed_nor_waited_on(home, what):
    """Issue 46: the unit's .tmp was written through a symbolic link left
    there (to anywhere the user can write); a pipe there would hang the
    install. Either is refused in one line and nothing is written; a unit
    that is a pipe is too, by install, status and uninstall."""
    env = dict(os.environ)
    folder = home / "config" / "systemd" / "user"
    folder.mkdir(parents=True)
    tmp, target = folder / "cuberobot.tmp", home / "elsewhere"
    if what == "symlink":
        tmp.symlink_to(target)
    else:
        os.mkfifo(tmp)
    line = _one_line(cuberobot("service", "install", "--no-start", env=env))
    assert f"{tmp} is " in line and "remove it, then run the command again" in line, line
    assert not target.exists() and not (folder / "cuberobot.service").exists()
    if what == "fifo":
        tmp.unlink()
        os.mkfifo(folder / "cuberobot.service")
        for args in (("install", "--no-start"), ("status",), ("uninstall",)):
            line = _one_line(cuberobot("service", *args, env=env))
            assert "cuberobot.service is not a regular file" in line, line
        assert (folder / "cuberobot.service").exists()


def _stand_in_systemctl(home: Path, answers: dict[str, tuple[int, str]]) -> dict:
    """An environment whose PATH finds first a `systemctl` that logs its arguments to ``home/calls``
    and answers each action (its fourth word: disable, daemon-reload, ...) as ``answers`` says:
    (exit status, what it prints on stderr); any other action succeeds."""
    bin_dir = home / "bin"
    bin_dir.mkdir(exist_ok=True)
    cases = "\n".join(f"  {action}) echo {said!r} >&2; exit {code};;"
                      for action, (code, said) in answers.items())
    script = bin_dir / "systemctl"
    script.write_text(f'#!/bin/sh\necho "$@" >> {str(home / "calls")!r}\ncase "$2" in\n{cases}\n'
                      "  *) exit 0;;\nesac\n")
    script.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_uninstall_checks_systemds_answers(home):
    """Issue 48: uninstall said "stopped and removed" when systemctl could not reach systemd. Now a
    refusal is one line with systemctl's reason, a non-zero exit, and the unit kept (systemd may still
    run it); a reload that fails after the removal is said too; a systemd that answers removes it."""
    unit = home / "config" / "systemd" / "user" / "cuberobot.service"
    assert cuberobot("service", "install", "--no-start", env=dict(os.environ)).returncode == 0
    text = unit.read_text()

    env = _stand_in_systemctl(home, {"disable": (1, "Failed to connect to bus: No medium found")})
    p = cuberobot("service", "uninstall", env=env)
    assert p.returncode == 1 and p.stdout == "" and p.stderr.count("\n") == 1, (p.stdout, p.stderr)
    assert "`systemctl --user disable --now cuberobot.service` failed (Failed to connect to bus: No medium " \
           f"found): {unit} is kept" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert unit.read_text() == text
    assert (home / "calls").read_text().splitlines() == ["--user disable --now cuberobot.service"]

    # install too: a unit written but not started, with systemctl's reason, is no success
    (home / "calls").unlink()
    env = _stand_in_systemctl(home, {"daemon-reload": (1, "Failed to connect to bus: No medium found")})
    p = cuberobot("service", "install", env=env)
    assert p.returncode == 1 and "No medium found" in p.stdout and "started" not in p.stdout, p.stdout

    env = _stand_in_systemctl(home, {"daemon-reload": (1, "Failed to connect to bus: Permission denied")})
    p = cuberobot("service", "uninstall", env=env)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and not unit.exists(), p.stderr
    assert f"stopped, disabled and removed {unit}, but `systemctl --user daemon-reload` failed " \
           "(Failed to connect to bus: Permission denied)" in p.stderr

    assert cuberobot("service", "install", "--no-start", env=dict(os.environ)).returncode == 0
    (home / "calls").unlink()
    p = cuberobot("service", "uninstall", env=_stand_in_systemctl(home, {}))
    assert p.returncode == 0 and p.stdout == f"stopped and removed {unit}\n" and not unit.exists(), p
    assert (home / "calls").read_text().splitlines() == ["--user disable --now cuberobot.service",
                                                         "--user daemon-reload"]
