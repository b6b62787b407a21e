"""The house's layers, as the interpreter sees them: a running server's
modules import nothing of the command line, and the press-start engine
nothing of the simulation (docs/architecture.md)."""

from __future__ import annotations

import subprocess
import sys


def _imported(code: str) -> set[str]:
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[-1].strip() for line in lines}


def test_the_server_imports_nothing_of_the_command_line_and_the_engine_nothing_of_the_simulation():
    server = _imported("import robot.web.server, robot.web.api, robot.web.runs, robot.web.standing_rig, "
                       "robot.web.workshop")
    assert "robot.web.runs" in server and not {m for m in server if m.startswith("robot.cli")}
    engine = _imported("import robot.app.start, robot.app.solving, robot.app.events, robot.app.rigs")
    assert "robot.app.start" in engine
    assert not {m for m in engine if m.startswith(("robot.sim", "robot.cli", "robot.web"))}


def test_numbas_compiled_code_goes_to_the_users_cache_folder_not_the_package(tmp_path):
    import os

    env = dict(os.environ, CUBEROBOT_CACHE=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-c", "import robot, numba; print(numba.config.CACHE_DIR)"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == str(tmp_path / "numba"), r.stderr
