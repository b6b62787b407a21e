"""``python -m robot``: the ``cuberobot`` command."""

import sys

from .cli.main import main

sys.exit(main())
