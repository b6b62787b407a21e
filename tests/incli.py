"""`cuberobot ARGV` run in the test's own process, answered as
:func:`subprocess.run` answers (returncode, stdout, stderr).

Starting `python -m robot` costs a second of imports (numpy, numba, OpenCV)
each time, and what it runs is then out of the coverage's sight. Most
command tests are about what a command says and does, not about being a
process: they call :func:`robot.cli.main.main` here, with stdin, stdout,
stderr and the environment of that one call. The tests of what only a
process shows (start-up time, signals, exit on Ctrl-C, the installed
wheel) still start the command (tests/test_cli_startup.py, test_trust.py,
test_wheel.py and the soaks).

The command's warnings are log lines (robot/cli/main.py sets logging up
once per process): the root logger's handlers are set aside for the call,
so that the command's own set-up writes them to the stderr captured here,
as it would in a process of its own.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping

from robot.cli import main as cli

NO_DISPLAY = ("DISPLAY", "WAYLAND_DISPLAY")
"""Taken out of the command's environment unless given: a test that wants a
window says so (tests/test_preview_window.py)."""


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None]) -> Iterator[None]:
    """``os.environ`` with ``env`` applied (None: removed) for the block."""
    saved = dict(os.environ)
    try:
        for name, value in env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _own_logging() -> Iterator[None]:
    """The root logger bare for the block (its handlers and level restored after)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    try:
        yield
    finally:
        for h in root.handlers:
            h.close()
        root.handlers[:] = handlers
        root.setLevel(level)


def cuberobot(*argv: str, stdin: str | bytes | None = None, env: Mapping[str, str | None] | None = None,
              cwd: str | os.PathLike[str] | None = None) -> subprocess.CompletedProcess[str]:
    """The exit code and output of `cuberobot ARGV`, run in this process.
    ``stdin``: what the command reads (nothing by default); ``env``: names
    to set (or, given None, to remove) for the call, beside :data:`NO_DISPLAY`
    removed; ``cwd``: the folder it runs in."""
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    out, err = io.StringIO(), io.StringIO()
    changes: dict[str, str | None] = {name: None for name in NO_DISPLAY}
    changes.update(env or {})
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    try:
        with _environment(changes), contextlib.chdir(cwd or os.getcwd()), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err), _own_logging():
            try:
                code = cli.main([str(a) for a in argv])
            except SystemExit as e:  # argparse's --help and usage errors
                code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
                if isinstance(e.code, str):
                    print(e.code, file=sys.stderr)
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["cuberobot", *map(str, argv)], code, out.getvalue(), err.getvalue())
