"""The code base stays ruff-clean, mypy-clean and ESLint-clean."""

import json
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


def test_eslint_clean():
    """ESLint with eslint.config.js over the web panel's JavaScript: no
    error and no warning. ESLint is the version pinned in package.json and
    package-lock.json, which ./run-tests installs into node_modules with
    ``npm ci``. Skipped only where there is no node at all."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed, so the panel's JavaScript is not linted:"
                    " install Node.js 18.18 or newer with npm, then ./run-tests")
    installed = ROOT / "node_modules" / "eslint" / "package.json"
    if not installed.exists():
        pytest.fail("ESLint is not installed: run ./run-tests (or npm ci in the repository)")
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["eslint"]
    version = json.loads(installed.read_text())["version"]
    if version != pinned:
        pytest.fail(f"node_modules has ESLint {version}, package.json pins {pinned}:"
                    " run ./run-tests (or npm ci)")
    r = subprocess.run([node, str(installed.with_name("bin") / "eslint.js"), "--max-warnings", "0", "."],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
