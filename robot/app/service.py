"""`cuberobot service install|status|uninstall`: `cuberobot serve` as a
systemd *user* service, started at boot and restarted when it fails.

Why a user unit and not a system one: it runs as the person who set the
rig up, with their groups (dialout, video), their set-up file, colour
profiles, journal and runs in their own folders, exactly as `cuberobot
serve` does from their shell; installing, updating and removing it needs no
root. The one thing a user unit needs for a screenless computer is
*lingering* (``loginctl enable-linger USER``), so that the user's services
start at boot without anyone logging in; install says so when it is off.

The unit is never written through a symbolic link (its ``.tmp`` is made
afresh, never followed), and one that is there already and says something
else is replaced only with ``--force``: it may be a hand-edited unit, or
one that runs another set-up, and a re-install that quietly dropped its
lines would change what starts at the next boot.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
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


MAX_UNIT_BYTES = 64 * 1024
"""The most of an existing unit file read (ours is well under a kilobyte)."""


def unit_dir() -> Path:
    """Where systemd looks for a user's own units: ``$XDG_CONFIG_HOME/systemd/user``
    (a relative XDG_CONFIG_HOME is ignored, as the XDG spec says)."""
    base = os.environ.get("XDG_CONFIG_HOME")
    if not base or not os.path.isabs(base):
        base = str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def _not_a_folder(folder: Path) -> Path | None:
    """The first of ``folder`` and the folders above it that is there and is not a folder, if any."""
    for p in [*reversed(folder.parents), folder]:
        try:
            if not stat.S_ISDIR(os.stat(p).st_mode):
                return p
        except OSError:
            return None
    return None


def _make_unit_dir(folder: Path) -> None:
    """``folder`` made if missing; a :class:`UserError` of one line when it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocker = _not_a_folder(folder)
        where = (f"{blocker} is not a folder" if blocker is not None else (e.strerror or str(e)))
        xdg = os.environ.get("XDG_CONFIG_HOME")
        fix = (f"set XDG_CONFIG_HOME (now {xdg!r}) to a folder of yours, or unset it" if xdg
               else "make it a folder of yours")
        raise UserError(f"cannot make {folder} for the unit: {where}; {fix}") from None


def read_unit(path: Path) -> str | None:
    """The text of the unit at ``path`` (None: there is none), read without
    waiting on a pipe; anything but a regular file of at most
    :data:`MAX_UNIT_BYTES` is a :class:`UserError` saying to remove it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"{path} is not a regular file (a folder, a pipe or a device): remove it, then "
                            "run the command again")
        if st.st_size > MAX_UNIT_BYTES:
            raise UserError(f"{path} is {st.st_size} bytes, no unit this command wrote: remove it, then run "
                            "the command again")
        return os.read(fd, MAX_UNIT_BYTES + 1).decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def _exec_line(text: str) -> str:
    """What a unit runs (its ExecStart), for a person."""
    line = next((x for x in text.splitlines() if x.startswith("ExecStart=")), "")
    return line.removeprefix("ExecStart=")[:300] or "no ExecStart"


def _write_unit(path: Path, text: str) -> None:
    """``text`` into ``path`` whole (a ``.tmp`` beside it, then renamed over
    it): the ``.tmp`` made afresh, never through a symbolic link or into a
    pipe left there."""
    tmp = path.with_suffix(".tmp")
    try:
        st = os.lstat(tmp)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UserError(f"cannot write {tmp}: {e.strerror or e}") from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise UserError(f"{tmp} is a symbolic link: the unit is never written through one; remove it, then "
                        "run the command again")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise UserError(f"{tmp} is not a regular file (a folder, a pipe or a device): remove it, then run "
                        "the command again")
    try:
        if st is not None:
            tmp.unlink()  # a file an install cut short left
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if e.errno == errno.EEXIST:  # made between the look and the write: someone else's
            raise UserError(f"{tmp} appeared while the unit was being written: remove it, then run the "
                            "command again") from None
        raise UserError(f"cannot write {path}: {e.strerror or e}") from None


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
    replaced: str | None = None
    """What the unit it replaced ran (``--force``), or None."""
    unchanged: bool = False
    """The unit was there already, word for word."""


def install(text: str, *, start: bool = True, force: bool = False, run: Runner = run_command,
            user: str | None = None, linger: Callable[[str], bool] = _linger) -> Installed:
    """Write the unit; with ``start``, reload systemd and enable and start it.
    A unit there already that says something else is a :class:`UserError`
    naming what it runs, unless ``force``."""
    user = user or _user()
    path = unit_dir() / UNIT
    _make_unit_dir(path.parent)
    old = read_unit(path)
    if old is not None and old != text and not force:
        raise UserError(f"{path} is there already and runs {_exec_line(old)}: give --force to replace it "
                        "(--print shows the new one), or `cuberobot service uninstall` first")
    if old != text:
        _write_unit(path, text)
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
    replaced = _exec_line(old) if old is not None and old != text else None
    return Installed(path, started, notes, replaced, unchanged=old == text)


class SystemdRefused(UserError):
    """systemctl failed or could not reach systemd: the command was right,
    the machine's session was not (exit 1, as a rig that does not answer)."""

    exit_code = 1


def _last_line(said: str, code: int) -> str:
    """What a command said last (systemctl's reason is its last line), or its exit status."""
    return said.strip().splitlines()[-1][:300] if said.strip() else f"exit status {code}"


def uninstall(*, run: Runner = run_command, user: str | None = None) -> tuple[Path, bool]:
    """Stop, disable and remove the unit: (its path, whether there was one).

    systemd's answers are checked. When it cannot stop and disable the unit
    (no systemctl, no user session bus to reach: a shell without a login,
    ``sudo``, a container) the unit file is kept, so that what systemd
    still runs or starts at boot is not left without its file, and a
    :class:`SystemdRefused` says what systemctl answered and how to finish.
    When only the reload after the removal fails, the unit is gone and
    stopped, and the SystemdRefused says that systemd lists it until reloaded."""
    path = unit_dir() / UNIT
    if not os.path.lexists(path):
        return path, False
    if not os.path.islink(path):
        read_unit(path)  # a folder or a pipe there is not ours to remove
    disable = ["systemctl", "--user", "disable", "--now", UNIT]
    code, said = run(disable)
    if code != 0:
        raise SystemdRefused(f"`{' '.join(disable)}` failed ({_last_line(said, code)}): {path} is kept; "
                             f"run `cuberobot service uninstall` again in a login session of "
                             f"{user or _user()}, where systemctl --user reaches systemd (on a machine "
                             f"without systemd: rm {path})")
    try:
        path.unlink()
    except FileNotFoundError:
        pass  # removed meanwhile: what was asked is done
    except OSError as e:
        raise UserError(f"stopped and disabled the service, but cannot remove {path}: {e.strerror or e}") \
            from None
    reload = ["systemctl", "--user", "daemon-reload"]
    code, said = run(reload)
    if code != 0:
        raise SystemdRefused(f"stopped, disabled and removed {path}, but `{' '.join(reload)}` failed "
                             f"({_last_line(said, code)}): systemd lists the unit until it reloads; run that "
                             f"command in a login session of {user or _user()}")
    return path, True


def status(*, run: Runner = run_command, user: str | None = None,
           linger: Callable[[str], bool] = _linger) -> list[str]:
    """One line each: the unit file and what it runs, enabled, active, the
    panel's last address, lingering."""
    user = user or _user()
    path = unit_dir() / UNIT
    text = read_unit(path)
    if text is None:
        return [f"not installed ({path} is absent): cuberobot service install --config FILE"]
    exec_line = next((line for line in text.splitlines() if line.startswith("ExecStart=")), "")
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
