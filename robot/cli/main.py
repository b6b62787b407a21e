"""The `cuberobot` command: argument parsing and turning errors into exit codes.

Exit codes: 0 success; 1 the rig, a camera or the run failed; 2 a user
mistake (bad argument, cube, file or config); 3 a scan that could not be
trusted (no motor moved); 130 interrupted with Ctrl-C.

Start-up is kept short: command modules import only the standard library,
numpy and the cube model at their top; the solver's search (numba), OpenCV
and the rig's driver load inside the handlers that use them.
"""

from __future__ import annotations

import argparse
import importlib
import io
import logging
import pkgutil
import signal
import sys
import threading
from typing import NoReturn

from solver.errors import CubeError
from vision.errors import VisionError

from ..rig.errors import RigError, UserError, storage_advice
from . import commands
from .commands import Registry

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
MAX_MESSAGE_CHARS = 1000

log = logging.getLogger(__name__)


def one_line(message: str) -> str:
    """A message as one printable line of bounded length (an error may quote
    what the user gave: control characters and newlines are escaped)."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(message))
    if len(text) > MAX_MESSAGE_CHARS:
        cut = f"... ({len(text)} characters)"
        text = text[:MAX_MESSAGE_CHARS - len(cut)] + cut
    return text


class Parser(argparse.ArgumentParser):
    """Usage mistakes are one line too: what is wrong and where to look."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {one_line(message)} (see {self.prog} --help)\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # 20 ms: only for --version

    try:
        return version("cuberobot")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """``--version``, looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: object):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"cuberobot {_version()}")
        parser.exit()


COMMAND_MODULES = {
    "apply": "cube", "check": "cube", "scramble": "cube", "show": "cube",
    "doctor": "doctor", "firmware": "firmware",
    "config": "config", "dry-run": "rig", "estop": "rig", "jog": "rig", "resume": "rig", "sim-rig": "rig",
    "serve": "serve", "service": "service", "solve": "solve", "start": "start",
    "calibrate": "vision", "classify": "vision", "scan": "vision",
}
"""Which module of :mod:`robot.cli.commands` registers each command (a test
checks it against what the modules register): a command line that names one
builds the parser of that module alone, which spares a quick command the
imports and set-up of the other modules (a tenth of a second)."""

HELP_ORDER = ("start", "serve", "rig", "vision", "solve", "config", "doctor", "firmware", "service", "cube")
"""The order ``cuberobot --help`` lists the modules' commands in: a maker's
evening (the job, the panel, the rig by hand, the cameras, the solver, then
set-up and tools), not the modules' names. A module missing here comes last."""


def common_options(suppress: bool) -> argparse.ArgumentParser:
    """-v and -q, accepted before the command and after it. After it, the
    defaults are suppressed so that a subcommand does not overwrite what was
    given before it."""
    parent = Parser(add_help=False)
    default = argparse.SUPPRESS if suppress else False
    group = parent.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="store_true", default=default,
                       help="log what happens to stderr")
    group.add_argument("-q", "--quiet", action="store_true", default=default,
                       help="print only results, warnings and errors (no progress lines)")
    return parent


def _named_module(argv: list[str] | None) -> str | None:
    """The module of the command ``argv`` names (its first word that is not
    an option: the options before a command take no values), or None when
    it names none or one this map does not know (a typo: the whole parser
    then says what the commands are)."""
    for word in argv or ():
        if word == "--":
            return None
        if not word.startswith("-"):
            return COMMAND_MODULES.get(word)
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with ``argv`` that names a known
    command only of the module that has it (see :data:`COMMAND_MODULES`)."""
    parser = Parser(
        prog="cuberobot",
        description="Scan, solve and turn a Rubik's cube with a robot: six motors, a flipper and turntable, "
                    "or two grippers.",
        parents=[common_options(suppress=False)],
    )
    parser.add_argument("--version", action=_Version)
    sub = Registry(parser.add_subparsers(dest="command", metavar="COMMAND"), common_options(suppress=True))
    named = _named_module(argv)
    names = [named] if named is not None else sorted(
        (info.name for info in pkgutil.iter_modules(commands.__path__)),
        key=lambda name: (HELP_ORDER.index(name) if name in HELP_ORDER else len(HELP_ORDER), name))
    for name in names:
        module = importlib.import_module(f"{commands.__name__}.{name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None, *, command: bool = False) -> int:
    """The command line ``argv`` (default: this process's), its exit code.
    ``command``: this process is the `cuberobot` command, which ends when
    this returns; once it has said it was interrupted, a further Ctrl-C
    (a second press landing in the shutdown or the exit) is ignored, so
    that the one line stays the only one, with no traceback."""
    try:
        return _main(argv, command)
    except KeyboardInterrupt:  # before the command ran (building the parser, the imports)
        say_interrupted("cuberobot: interrupted", command)
        return EXIT_INTERRUPTED


def say_interrupted(line: str, command: bool) -> None:
    """``line`` to stderr; for the command itself, Ctrl-C ignored from here on
    (a Python handler would be reset to the default, which kills, while the
    interpreter finalises; an ignored signal stays ignored)."""
    if command and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(line, file=sys.stderr)


def _main(argv: list[str] | None, command: bool = False) -> int:
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not UTF-8 (a byte the terminal's encoding lacks) is printed escaped
        # rather than ending the command with an encoding error.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    level = logging.DEBUG if args.verbose else logging.ERROR if args.quiet else logging.WARNING
    # Warnings are lines for a person (a stalled line, drifting colours); -v adds where and when.
    fmt = "%(asctime)s %(name)s %(levelname)s: %(message)s" if args.verbose else "cuberobot: %(message)s"
    logging.basicConfig(level=level, format=fmt)
    # numba's own debug lines (its compiler's internals, 100 000 of them on a cold cache) are not ours.
    logging.getLogger("numba").setLevel(max(level, logging.WARNING))
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except CubeError as e:
        what = "moves" if e.kind == "moves" else "cube"
        print(one_line(f"cuberobot {args.command}: invalid {what}: {e}"), file=sys.stderr)
        return EXIT_USAGE
    except (UserError, RigError, VisionError) as e:
        print(one_line(f"cuberobot {args.command}: {e}"), file=sys.stderr)
        return getattr(e, "exit_code", EXIT_FAILED)
    except KeyboardInterrupt as e:  # with what to do next when it stopped the rig (robot/rig/link.py)
        say_interrupted(one_line(f"cuberobot {args.command}: interrupted{'; ' + str(e) if e.args else ''}"),
                        command)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:
        advice = storage_advice(e)
        if advice is None:
            return _internal_error(args, e)
        where = e.filename or "a file"
        print(one_line(f"cuberobot {args.command}: cannot write {where}: {advice}; "
                       "then run the command again"), file=sys.stderr)
        return EXIT_FAILED
    except Exception as e:
        return _internal_error(args, e)


def _internal_error(args: argparse.Namespace, e: Exception) -> int:
    """A bug: still one line, the traceback with -v."""
    log.debug("internal error", exc_info=True)
    print(one_line(f"cuberobot {args.command}: internal error (a bug, please report it; -v shows "
                   f"where): {type(e).__name__}: {e}"), file=sys.stderr)
    return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
