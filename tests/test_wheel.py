"""The package as a rig computer gets it: a wheel built with ``python -m
build``, installed into a fresh venv outside the checkout (its dependencies
from the package index, as `pip install` on a Raspberry Pi fetches them),
runs the whole job and builds the firmware from its own package data.

A real venv, not one that sees the development venv's packages: a missing
dependency or package-data entry shows here and nowhere else. The price is
the install, one to two minutes of downloads, so the module is marked slow
(it runs in the full suite, which CI runs, not in ``--quick``). The
solver's tables come from the user's cache (they depend on the solver's
table version, not on where the package lives); numba compiles the installed
copy into a cache folder of the test's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "dist", "*.egg-info", "__pycache__",
                              ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis")


def _run(argv: list[str | Path], cwd: Path, env: dict[str, str], timeout: float) -> str:
    r = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    said = f"{r.stdout[-3000:]}{r.stderr[-3000:]}"
    assert r.returncode == 0, f"{' '.join(map(str, argv))}: exit {r.returncode}\n{said}"
    return r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc (gcc-avr)")
def test_a_wheel_installs_into_a_fresh_venv_and_runs_start_and_firmware_build(tmp_path):
    pytest.importorskip("build", reason="needs the build package (the dev extra has it)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "NUMBA_CACHE_DIR")}
    # a copy of the checkout: building writes build/ and *.egg-info beside the sources
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=SKIP, symlinks=True)
    # isolated, as pip and CI build it: pyproject's [build-system] must be enough
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", tmp_path / "dist"], src, env, 600)
    (wheel,) = (tmp_path / "dist").glob("cuberobot-*.whl")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    venv = tmp_path / "venv"
    _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv], elsewhere, env, 120)
    _run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
          f"{wheel}[web]"], elsewhere, env, 900)

    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               NUMBA_CACHE_DIR=str(tmp_path / "numba"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    where = _run([venv / "bin" / "python", "-c", "import robot, solver, vision; print(robot.__file__)"],
                 elsewhere, env, 60)
    assert where.strip().startswith(str(venv)), where  # the installed copy, not the checkout

    out = _run([venv / "bin" / "cuberobot", "start", "--headless", "--seed", "3"], elsewhere, env, 600)
    assert "solved in " in out, out

    out = _run([venv / "bin" / "cuberobot", "firmware", "build", "--out", tmp_path / "fw"],
               elsewhere, env, 600)
    assert (tmp_path / "fw" / "uno" / "cuberobot.hex").is_file(), out
    assert not list(elsewhere.iterdir())  # nothing written into the working directory
