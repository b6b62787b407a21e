"""``python -m robot`` and the ``cuberobot`` command's entry point."""

import sys

EXIT_INTERRUPTED = 130


def run() -> None:
    """The command, with Ctrl-C during start-up (imports, the parser) an
    "interrupted" line like Ctrl-C at any later moment, never a traceback."""
    sys.excepthook = sys.__excepthook__  # from here Ctrl-C is caught below (robot/__init__.py's hook)
    try:
        from .cli.main import main

        code = main(command=True)
    except KeyboardInterrupt:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # this line stays the only one (main.say_interrupted)
        print("cuberobot: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    _exit(code)


def _exit(code: int) -> None:
    """Leave with ``code``. Once numba has loaded LLVM, the interpreter's
    own finalisation (tearing down every module with full garbage
    collections, then LLVM's static destructors) takes about 0.3 s, a third
    of a warm `cuberobot solve`, and a second or more on a busy machine. So
    the command ends as the usual exit begins (threading's exit callbacks,
    then every thread that is not a daemon joined: `serve`'s worker threads
    ending as its event loop closed, say), then the exit handlers and
    logging are run, the output flushed, and the process ends at once; what
    is left are daemon threads, which the usual exit abandons too. Without
    numba, or off the main thread, it exits the usual way."""
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # what the interpreter's exit calls first
    if ("numba" not in sys.modules or shutdown is None
            or threading.current_thread() is not threading.main_thread()):
        sys.exit(code)
    try:
        shutdown()
    except KeyboardInterrupt:
        pass  # Ctrl-C again while threads were ending: end now
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
