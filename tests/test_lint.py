"""The code base stays ruff-clean and mypy-clean."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.fail("ruff is not installed: install the project's dev extra")
    r = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_clean():
    """``python -m mypy`` with the settings in pyproject.toml ([tool.mypy]: solver, vision, robot)."""
    r = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    if "No module named mypy" in r.stderr:
        pytest.fail("mypy is not installed: install the project's dev extra")
    assert r.returncode == 0, r.stdout + r.stderr
