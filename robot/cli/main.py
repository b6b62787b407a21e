"""The `cuberobot` command: argument parsing and turning errors into exit codes.

Exit codes: 0 success; 1 the rig, a camera or the run failed; 2 a user
mistake (bad argument, cube, file or config); 130 interrupted with Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from importlib.metadata import PackageNotFoundError, version

from solver import CubeError
from vision import VisionError

from ..rig.errors import RigError, UserError
from . import commands

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _version() -> str:
    try:
        return version("cuberobot")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cuberobot",
        description="Scan, solve and turn a Rubik's cube with a six-motor robot.",
    )
    parser.add_argument("--version", action="version", version=f"cuberobot {_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv  # also accepted after the command: `cuberobot start --verbose`
    argv = [a for a in argv if a != "--verbose"]
    args = parser.parse_args(argv)
    args.verbose = args.verbose or verbose
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except CubeError as e:
        print(f"cuberobot {args.command}: invalid {'moves' if e.kind == 'moves' else 'cube'}: {e}",
              file=sys.stderr)
        return EXIT_USAGE
    except (UserError, RigError, VisionError) as e:
        print(f"cuberobot {args.command}: {e}", file=sys.stderr)
        return getattr(e, "exit_code", EXIT_FAILED)
    except KeyboardInterrupt:
        print(f"cuberobot {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
