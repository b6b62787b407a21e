"""`cuberobot service install|status|uninstall`: the web panel as a systemd
user service that starts at boot and restarts when it fails."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...rig.config import default_config_path
from ...rig.loading import load_config
from ..limits import path, text, whole
from . import Registry


def _install(args: argparse.Namespace) -> int:
    from ...app.service import install, serve_command, unit_text

    config = Path(args.config).resolve() if args.config else default_config_path().resolve()
    cfg = load_config(config)
    state = Path(args.state_dir).resolve() if args.state_dir else None
    argv, workdir = serve_command(config, args.host, args.port, state)
    text = unit_text(argv, workdir)
    if args.print:
        print(text, end="")
        return 0
    done = install(text, start=not args.no_start, force=args.force)
    if done.unchanged:
        print(f"{done.path} is there already, as this would write it")
    elif done.replaced is not None:
        print(f"wrote {done.path}, replacing the unit there (it ran {done.replaced})")
    else:
        print(f"wrote {done.path}")
    if done.started:
        print("started; it starts again at boot and after a failure (cuberobot service status shows the "
              "panel's address)")
    if cfg.rig.port.startswith("sim://"):
        print(f"note: {config} drives the simulated rig")
    for note in done.notes:
        print(f"note: {note}")
    return 0 if done.started or args.no_start else 1  # systemd not reached: the unit is written, not running


def _status(args: argparse.Namespace) -> int:
    from ...app.service import status

    lines = status()
    for line in lines:
        print(line)
    return 0 if lines[0].startswith("unit:") else 1


def _uninstall(args: argparse.Namespace) -> int:
    """Stop, disable and remove the unit; systemctl's refusal is a one-line
    error and a non-zero exit (robot/app/service.py's uninstall keeps the
    file then), never "removed"."""
    from ...app.service import uninstall

    where, existed = uninstall()
    print(f"stopped and removed {where}" if existed else f"nothing to remove ({where} is absent)")
    return 0


def register(sub: Registry) -> None:
    p = sub.add_parser("service",
                       help="run the web panel as a systemd user service (install, status, uninstall)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    i = actions.add_parser("install", parents=[sub.common],
                           help="write ~/.config/systemd/user/cuberobot.service running `cuberobot serve`, "
                                "enable and start it")
    i.add_argument("--config", metavar="FILE", type=path,
                   help="the set-up file serve uses (default: config/rig.toml, a simulated rig)")
    i.add_argument("--host", default="0.0.0.0", type=text("--host", 255),
                   help="address the panel listens on (default 0.0.0.0: phones on the network, with a token)")
    i.add_argument("--port", type=whole(1, 65535), default=8080, help="the panel's port (default 8080)")
    i.add_argument("--state-dir", metavar="DIR", type=path, help="journal and run records (default: serve's)")
    i.add_argument("--no-start", action="store_true", help="only write the unit file")
    i.add_argument("--print", action="store_true", help="print the unit instead of writing it")
    i.add_argument("--force", action="store_true",
                   help="replace a unit that is there already and says something else (without it, install "
                        "refuses and names what that unit runs: it may be edited by hand, or run another "
                        "set-up); a unit the same word for word is kept either way")
    i.set_defaults(func=_install)
    s = actions.add_parser("status", parents=[sub.common],
                           help="the unit, whether it is enabled and running, the panel's address")
    s.set_defaults(func=_status)
    u = actions.add_parser("uninstall", parents=[sub.common], help="stop, disable and remove the service")
    u.set_defaults(func=_uninstall)
