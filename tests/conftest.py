"""Test-wide settings.

Hypothesis's per-example deadline measures wall time, which on a shared or
loaded CI machine says more about the neighbours than about the code; speed
is measured in benchmarks/, so the deadline is off. Health checks stay on.
"""

import sys
from pathlib import Path

from hypothesis import settings

settings.register_profile("cuberobot", deadline=None)
settings.load_profile("cuberobot")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests' helper modules (fwtools, ptyproxy)
