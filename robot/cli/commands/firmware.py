"""`cuberobot firmware build|flash`: the Arduino firmware from the sketch
shipped with cuberobot, onto the board, checked by its handshake."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ...app.limits import check_output_dir, check_port, rig_claims
from ...rig.errors import UserError
from ...rig.loading import load_config
from ..limits import number, path, text
from . import Registry

if TYPE_CHECKING:
    from ...app.firmware import Built

BOARD_NAMES = ("uno", "mega")


def _say(args: argparse.Namespace, line: str) -> None:
    if not args.quiet:
        print(line, flush=True)


def _describe(built: Built) -> str:
    size = f", {built.flash_bytes} bytes of flash, {built.ram_bytes} of RAM" if built.flash_bytes else ""
    return f"{built.board.title}: firmware {built.version} in {built.hex}{size}"


def _out(args: argparse.Namespace) -> Path | None:
    """--out, a folder the build can go into (made if missing), checked before anything is compiled."""
    if not args.out:
        return None
    check_output_dir(args.out, "--out")
    return Path(args.out)


def _build(args: argparse.Namespace) -> int:
    from ...app.firmware import build

    out = _out(args)
    boards = BOARD_NAMES if args.board == "all" else (args.board,)
    for b in boards:
        built = build(b, out, arduino=args.arduino_dir, progress=lambda line: _say(args, line))
        print(_describe(built), flush=True)
    return 0


def _flash(args: argparse.Namespace) -> int:
    from ...app.firmware import AFTER_FLASH_WAIT_S, build, flash, wait_and_check

    port = args.port
    if port is None and args.config:
        port = load_config(args.config).rig.port
    if port is None:
        raise UserError("give the board's port: --port /dev/ttyACM0 (or a /dev/serial/by-id/ name; "
                        "`cuberobot doctor` lists them), or --config FILE with [rig] port")
    check_port(port)
    if "://" in port:
        raise UserError(f"{port} is not a serial port a board can be flashed on")
    built = build(args.board, _out(args), arduino=args.arduino_dir,
                  progress=lambda line: _say(args, line))
    _say(args, _describe(built))
    with rig_claims(port, None, folder=False):
        flash(built, port, progress=lambda line: _say(args, line))
        if args.no_check:
            print(f"flashed {built.board.title} firmware {built.version} on {port}")
            return 0
        wait = AFTER_FLASH_WAIT_S if args.boot_wait is None else args.boot_wait
        line = wait_and_check(built, port, wait)
    print(f"flashed and checked on {port}: {line}")
    return 0


def register(sub: Registry) -> None:
    p = sub.add_parser("firmware",
                       help="build the Arduino firmware, or build and flash it (avr-gcc, avrdude)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    def common(q: argparse.ArgumentParser, boards: tuple[str, ...]) -> None:
        q.add_argument("--board", choices=boards, default="uno", help="which Arduino (default: uno)")
        q.add_argument("--out", metavar="DIR", type=path,
                       help="where the build goes (default: the cache folder, ~/.cache/cuberobot/firmware)")
        q.add_argument("--arduino-dir", metavar="DIR", type=path,
                       help="the Arduino AVR core (default: Debian's "
                            "/usr/share/arduino/hardware/arduino/avr)")

    b = actions.add_parser("build", help="build the firmware (.elf and .hex) with avr-gcc",
                           parents=[sub.common])
    common(b, (*BOARD_NAMES, "all"))
    b.set_defaults(func=_build)
    f = actions.add_parser("flash", help="build, flash with avrdude, then check the handshake and version",
                           parents=[sub.common])
    common(f, BOARD_NAMES)
    f.add_argument("--port", metavar="PORT", type=text("--port"),
                   help="the board's serial port (default: [rig] port of --config)")
    f.add_argument("--config", metavar="FILE", type=path, help="set-up file whose [rig] port to flash")
    f.add_argument("--boot-wait", metavar="S", type=number(0.0, 30.0),
                   help="seconds the board takes to restart after flashing (default 2)")
    f.add_argument("--no-check", action="store_true", help="do not check the handshake after flashing")
    f.set_defaults(func=_flash)
