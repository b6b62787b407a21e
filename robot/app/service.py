"""`cuberobot service install|status|uninstall`: `cuberobot serve` as a
systemd *user* service, started at boot and restarted when it fails.

Why a user unit and not a system one: it runs as the person who set the
rig up, with their groups (dialout, video), their set-up file, colour
profiles, journal and runs in their own folders, exactly as `cuberobot
serve` does from their shell; installing, updating and removing it needs no
root. The one thing a user unit needs for a screenless computer is
*lingering* (``loginctl enable-linger USER``), so that the user's services
start at boot without anyone logging in; install says so when it is off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..rig.errors import UserError

UNIT = "cuberobot.service"
RESTART_SEC = 5
COMMAND_TIMEOUT_S = 30.0

Runner = Callable[[list[str]], tuple[int, str]]


def run_command(argv: list[str]) -> tuple[int, str]:
    """(status, output) of a command; status 127 when it is not installed."""
    if shutil.which(argv[0]) is None:
        return 127, f"{argv[0]}: not installed"
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, str(e)
    return p.returncode, (p.stdout + p.stderr).strip()


def unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def quote(arg: str) -> str:
    """One ExecStart argument as systemd reads it: quoted when it has spaces
    or quotes, with its specifiers (%) and variables ($) kept literal."""
    if any(c in arg for c in "\0\n\r"):
        raise UserError(f"{arg!r}: a path with a line break or NUL cannot go into a systemd unit")
    out = arg.replace("%", "%%").replace("$", "$$")
    if any(c.isspace() or c in "\"'\\;" for c in out) or not out:
        out = '"' + out.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return out


def serve_command(config: Path, host: str, port: int,
                  state_dir: Path | None) -> tuple[list[str], Path | None]:
    """The command the unit runs (this Python, so this install's cuberobot),
    and the folder to run it in: a checkout's own folder, so that its code is
    the one imported; none for an installed package."""
    rest = ["serve", "--config", str(config), "--host", host, "--port", str(port)]
    if state_dir is not None:
        rest += ["--state-dir", str(state_dir)]
    home = Path(__file__).resolve().parents[2]
    installed = any(part in ("site-packages", "dist-packages") for part in home.parts)
    return [sys.executable, "-m", "robot", *rest], None if installed else home


def unit_text(argv: list[str], workdir: Path | None) -> str:
    lines = [
        "# Written by `cuberobot service install`; `cuberobot service uninstall` removes it.",
        "[Unit]",
        "Description=cuberobot web panel (cuberobot serve)",
        "After=network-online.target",
        "Wants=network-online.target",
        "StartLimitIntervalSec=300",
        "StartLimitBurst=10",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(quote(a) for a in argv),
    ]
    if workdir is not None:
        lines.append("WorkingDirectory=" + quote(str(workdir)))
    lines += [
        "Environment=PYTHONUNBUFFERED=1",
        "Restart=on-failure",
        f"RestartSec={RESTART_SEC}",
        "# serve answers Ctrl-C and SIGTERM within about 1.5 s",
        "TimeoutStopSec=20",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def _linger(user: str) -> bool:
    return Path("/var/lib/systemd/linger", user).exists()


@dataclass
class Installed:
    path: Path
    started: bool
    notes: list[str]


def install(text: str, *, start: bool = True, run: Runner = run_command, user: str | None = None,
            linger: Callable[[str], bool] = _linger) -> Installed:
    """Write the unit; with ``start``, reload systemd and enable and start it."""
    user = user or _user()
    path = unit_dir() / UNIT
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    notes = []
    started = False
    if start:
        for argv in (["systemctl", "--user", "daemon-reload"],
                     ["systemctl", "--user", "enable", UNIT],
                     ["systemctl", "--user", "restart", UNIT]):
            code, said = run(argv)
            if code != 0:
                notes.append(f"`{' '.join(argv)}` failed ({said.splitlines()[-1] if said else code}): run "
                             f"`systemctl --user enable --now {UNIT}` in a login session of {user}")
                break
        else:
            started = True
    if not linger(user):
        notes.append(f"to start at boot without a login: sudo loginctl enable-linger {user}")
    return Installed(path, started, notes)


def uninstall(*, run: Runner = run_command) -> tuple[Path, bool]:
    """Stop, disable and remove the unit: (its path, whether there was one)."""
    path = unit_dir() / UNIT
    if not path.exists():
        return path, False
    run(["systemctl", "--user", "disable", "--now", UNIT])
    path.unlink()
    run(["systemctl", "--user", "daemon-reload"])
    return path, True


def status(*, run: Runner = run_command, user: str | None = None,
           linger: Callable[[str], bool] = _linger) -> list[str]:
    """One line each: the unit file and what it runs, enabled, active, the
    panel's last address, lingering."""
    user = user or _user()
    path = unit_dir() / UNIT
    if not path.exists():
        return [f"not installed ({path} is absent): cuberobot service install --config FILE"]
    exec_line = next((line for line in path.read_text().splitlines() if line.startswith("ExecStart=")), "")
    lines = [f"unit: {path}", f"runs: {exec_line.removeprefix('ExecStart=')}"]
    for what in ("is-enabled", "is-active"):
        code, said = run(["systemctl", "--user", what, UNIT])
        lines.append(f"{what.removeprefix('is-')}: {said.splitlines()[-1] if said else code}")
    code, said = run(["journalctl", "--user", "-u", UNIT, "-n", "200", "-o", "cat", "--no-pager"])
    address = next((line.strip() for line in reversed(said.splitlines()) if line.strip().startswith("http")),
                   None) if code == 0 else None
    lines.append(f"panel: {address}" if address else "panel: no address in the journal yet "
                 f"(journalctl --user -u {UNIT})")
    lines.append("starts at boot without a login" if linger(user) else
                 f"starts only once {user} logs in: sudo loginctl enable-linger {user}")
    return lines


def _user() -> str:
    import getpass

    return getpass.getuser()
