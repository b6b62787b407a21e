"""``python -m cuberobot``: the same as the ``cuberobot`` command."""

import sys

from robot.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
