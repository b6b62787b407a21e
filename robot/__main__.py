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
    sys.exit(code)


if __name__ == "__main__":
    run()
