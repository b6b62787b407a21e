"""`cuberobot doctor`: the cameras, serial ports and permissions this
computer has, the firmware's handshake on a port, and the set-up file
checked against them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ...app.limits import check_port
from ...rig.errors import UserError
from ...rig.loading import load_config
from ..limits import path, text
from . import Registry

MAX_PORTS = 8
"""``--port`` given at most this many times: each is a handshake of up to the
set-up's connect time (5 s), and a machine has a few serial ports."""


def _doctor(args: argparse.Namespace) -> int:
    from ...app.doctor import Finding, Machine, diagnose
    from ...rig.settings import settings_in_force

    if len(args.port or []) > MAX_PORTS:
        raise UserError(f"--port is given {len(args.port)} times; at most {MAX_PORTS} (each is a handshake "
                        "of up to a few seconds): give the ports to try, or none to try every one that looks "
                        "like an Arduino")
    for p in args.port or []:
        check_port(p)
    # with no --config, the default set-up is checked: the one `cuberobot start` runs with none
    own = load_config(args.config, settings=False)
    cfg, override = settings_in_force(own)
    machine = Machine(root=Path(args.root)) if args.root else Machine()
    report = diagnose(machine, cfg, ports=args.port, handshakes=not args.no_handshake)
    # the settings file the panel or `calibrate` saved for this set-up: named, with how to undo it
    report.findings.append(Finding("config", "info", "override", override.describe(own.profile),
                                   {"path": str(override.path), "profile": override.profile,
                                    "views": list(override.views)}) if override is not None else
                           Finding("config", "info", "overrides", "none (no settings file saved for "
                                   f"{cfg.path} by the panel or `cuberobot calibrate`)"))
    if args.json:
        print(json.dumps(report.as_json(), indent=1))
    else:
        for f in report.findings:
            print(f.line(), flush=True)
        if not args.quiet:
            hint = "" if args.config else (
                f" with the default set-up ({cfg.path}: a virtual rig and simulated cameras, which need no "
                "webcam or board); on your robot give --config FILE, and its cameras and port are checked")
            print(f"doctor: {report.problems or 'no'} problem{'' if report.problems == 1 else 's'}{hint}")
    return 1 if report.problems else 0


def register(sub: Registry) -> None:
    p = sub.add_parser("doctor", help="list cameras, serial ports and permissions; check the firmware and a "
                                      "set-up file against them")
    p.add_argument("--config", metavar="FILE", type=path,
                   help="also check this set-up's cameras and rig port against what is found")
    p.add_argument("--port", metavar="PORT", action="append", type=text("--port"),
                   help="also try the firmware's handshake on this port (may be given more than once; "
                        "default: the set-up's port, or every port that looks like an Arduino)")
    p.add_argument("--no-handshake", action="store_true", help="do not open any serial port")
    p.add_argument("--json", action="store_true", help="the findings and what was found, as JSON")
    p.add_argument("--root", metavar="DIR", type=path, help=argparse.SUPPRESS)  # a fake /dev and /sys (tests)
    p.set_defaults(func=_doctor)
