"""``python -m robot`` and the ``cuberobot`` command's entry point."""

import sys

EXIT_INTERRUPTED = 130


def run() -> None:
    """The command, with Ctrl-C during start-up (imports, the parser) an
    "interrupted" line like Ctrl-C at any later moment, never a traceback."""
    try:
        from .cli.main import main

        code = main()
    except KeyboardInterrupt:
        print("cuberobot: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    _exit(code)


def _exit(code: int) -> None:
    """Leave with ``code``. Once numba has loaded LLVM, the interpreter's
    own finalisation (tearing down every module, then LLVM's static
    destructors) takes about 0.3 s, a third of a warm `cuberobot solve`:
    when the command is over and nothing else runs (no thread but this one),
    the exit handlers and logging are run, the output flushed, and the
    process ends at once. Anything else exits the usual way."""
    import threading

    if "numba" not in sys.modules or threading.active_count() > 1:
        sys.exit(code)
    import atexit
    import logging
    import os

    try:
        atexit._run_exitfuncs()
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass  # a reader that went away: the answer was not wanted
    os._exit(code)


if __name__ == "__main__":
    run()
