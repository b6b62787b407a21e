"""`cuberobot config check`: a set-up file read as every command reads it,
summarised, with what could mislead a maker said beside the ok."""

from __future__ import annotations

import argparse
from typing import Any

from ...app.kindwork import rig_summary
from ...rig.config import Config
from ...rig.errors import UserError
from ..limits import path
from . import Registry


def _config_check(args: argparse.Namespace) -> int:
    """Read the set-up file as every command does, then say what it sets and
    what a maker could be misled by: a colour profile that is not there (as
    `scan` and `start` would refuse it, but now, before a cube is in place),
    motor tables the rig's kind never drives, and a file that sets nothing."""
    if args.file == "-":
        raise UserError("-: config check reads a set-up file by its path, not standard input; give the "
                        "file's path, e.g. config/rig.toml (a file named - is ./-)")
    import tomllib

    from ...rig.config import parse_config
    from ...rig.loading import read_config_text
    from ...rig.settings import settings_in_force

    # load_config's steps, to keep the text, parsed again as plain TOML for what the file itself sets,
    # and to tell the file's own settings from those the panel saved on top of them.
    file, text = read_config_text(args.file)
    own = parse_config(text, file)
    cfg, override = settings_in_force(own)
    if cfg.rig.port.startswith("sim://"):  # the virtual rig reads its options only when first opened
        from ...sim.protocol_sim import parse_sim_url

        try:
            parse_sim_url(cfg.rig.port)
        except ValueError as e:
            raise UserError(f"{cfg.path}: rig.port: {e}") from None
    profile_line = _profile_summary(cfg, own)
    notes = _config_notes(cfg, tomllib.loads(text))  # valid TOML: parse_config has read it
    print(f"{cfg.path}: ok")
    for line in rig_summary(cfg):
        print(line)
    print(f"  cameras: {', '.join(c.name for c in cfg.cameras) or 'none'}; "
          f"views: {', '.join(v.name for v in cfg.views) or 'none'}")
    print(f"  solver: metric {cfg.solver.metric}, budget {cfg.solver.budget_ms} ms")
    print(profile_line)
    # every override in force, named with how to undo it: a value set on the panel or by `calibrate` that
    # this file does not show must not surprise a maker reading the file
    print(f"  override: {override.describe(own.profile)}" if override is not None else
          "  overrides: none (no settings file saved for this set-up by the panel or `cuberobot calibrate`)")
    for note in notes:
        print(f"  note: {note}")
    return 0


def _profile_summary(cfg: Config, own: Config) -> str:
    """The summary's line for the colour profile. One not made yet is said
    plainly but is no mistake (a maker checks the file before calibrating,
    as the README's steps go; `scan` and `start` refuse it until then); one
    that is there but cannot be read is a UserError naming where it was set.
    ``own`` is the file without the panel's settings, to tell a profile the
    panel saved from the file's own ``[vision] profile``."""
    if not cfg.profile:
        return ("  colour profile: none (each scan learns the colours from its own centre stickers; "
                "`cuberobot calibrate --profile NAME` makes one)")
    from vision.profile import ProfileError, ProfileMissing, open_profile

    if cfg.profile == own.profile:
        where = f"{cfg.path}: vision.profile"
    else:
        from ...rig.settings import settings_path

        assert cfg.path is not None  # settings apply only to a file
        where = (f"{cfg.path}: the colour profile the panel or `cuberobot calibrate` saved for it in "
                 f"{settings_path(cfg.path)}")
    try:
        profile, path = open_profile(cfg.profile)
    except ProfileMissing as e:
        return f"  colour profile: not there yet, so `scan` and `start` will refuse it: {e}"
    except ProfileError as e:
        raise UserError(f"{where}: {e}") from None
    return f"  colour profile: {profile.name} ({path})"


def _config_notes(cfg: Config, data: dict[str, Any]) -> list[str]:
    """What the file (``data``, its TOML) sets that is read but changes
    nothing, so that a maker is not misled by an ok: ``[motors.X]`` tables
    of faces the rig's kind does not drive (only a note: a maker may keep
    them to switch kinds back), and a file that sets nothing at all."""
    from solver import FACES

    from ...rig.config import DRIVEN_FACES

    notes = []
    kind, driven = cfg.rig.kind, DRIVEN_FACES[cfg.rig.kind]
    unused = [f"[motors.{face}]" for face in FACES
              if face in data.get("motors", {}) and face not in driven]
    if unused:
        one = len(unused) == 1
        tables = unused[0] if one else f"{', '.join(unused[:-1])} and {unused[-1]}"
        why = (f"it drives only the steppers of {' and '.join(driven)}" if driven
               else "it turns no face with a stepper; its parts are servos")
        it = "it" if one else "them"
        notes.append(f"{tables} {'is' if one else 'are'} not used by a {kind} rig ({why}): keep {it} for a "
                     f"six-motor rig, or remove {it}")
    if _sets_nothing(data):
        notes.append("the file sets nothing: every setting is its default (a simulated six-motor rig on "
                     "sim://, no cameras)")
    return notes


def _sets_nothing(table: dict[str, Any]) -> bool:
    """True when a TOML table holds no value, only (nested) empty tables or
    nothing at all: an empty file, or one of comments and headers."""
    return all(isinstance(v, dict) and _sets_nothing(v) for v in table.values())


def _import_cubotino(args: argparse.Namespace) -> int:
    """CUBOTino's servo settings as a set-up for its build on the Pi's pins
    (robot/gpio/cubotino.py), checked as `config check` checks it before a
    byte is written."""
    import os

    from ...gpio.cubotino import MAX_SETTINGS_BYTES, import_settings
    from ...rig.config import decode_text, parse_config, read_limited

    label = str(args.settings)
    text = decode_text(read_limited(args.settings, label, MAX_SETTINGS_BYTES, "CUBOTino's servo settings"),
                       label)
    toml, notes = import_settings(text, label)
    parse_config(toml, None)  # what it writes, `config check` accepts
    if args.output is None:
        print(toml, end="")
    else:
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(args.output, flags, 0o644)
        except FileExistsError:
            raise UserError(f"-o {args.output}: already exists: give another name, or remove it "
                            "first") from None
        except OSError as e:
            raise UserError(f"-o {args.output}: cannot write: {e.strerror or e}") from None
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(toml)
        print(f"{args.output}: written from {label}; check it with `cuberobot config check {args.output}`, "
              "then `cuberobot doctor --config` it on the Pi")
    for note in notes:
        print(f"note: {note}", file=__import__("sys").stderr)
    return 0


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def register(sub: Registry) -> None:
    p = sub.add_parser("config", help="configuration files")
    csub = p.add_subparsers(dest="config_command", metavar="ACTION")
    c = csub.add_parser("check", help="check a configuration file and summarise it", parents=[sub.common])
    c.add_argument("file", nargs="?", default=None, type=path,
                   help="TOML file (default: config/rig.toml; at most 64 KiB)")
    c.set_defaults(func=_config_check)
    i = csub.add_parser("import-cubotino", parents=[sub.common],
                        help="turn CUBOTino's Cubotino_T_servo_settings.txt into a set-up for the Pi's pins")
    i.add_argument("settings", type=path, help="CUBOTino's servo settings file (JSON, at most 64 KiB)")
    i.add_argument("-o", "--output", type=path, default=None,
                   help="the set-up file to write (not overwritten); default: print it")
    i.set_defaults(func=_import_cubotino)
    config = p
    config.set_defaults(func=lambda a: _usage(config))
