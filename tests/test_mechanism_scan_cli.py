"""`cuberobot scan` and `calibrate` on a flipper or two-gripper rig (issue
26: the terminal works for every kind). The one camera sees one face at a
time, so `scan` has the rig show it the six faces by the scan plan, as
`start` does; `calibrate` learns no colours there (each face is read in its
own picture's light) and says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from solver import random_cube

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("flipper", "two-gripper")


def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`cuberobot ARGS` with a home of its own, but the suite's solver cache (with HOME in
    tmp_path, every call built the solver's tables and compiled its search again: 40 s a test)."""
    from solver.cachedir import cache_dir

    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "CUBEROBOT_CACHE": str(cache_dir())}
    return subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)


def _config(kind: str) -> str:
    return str(ROOT / "config" / "examples" / f"{kind}.toml")


@pytest.mark.parametrize("kind", KINDS)
def test_scan_has_the_rig_show_the_camera_each_face(kind, tmp_path):
    debug = tmp_path / "debug"
    for seed in (3, 8):
        r = _cli("scan", "--config", _config(kind), "--seed", str(seed), "--save-debug", str(debug),
                 tmp_path=tmp_path)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
        assert r.stdout == f"{random_cube(seed).to_facelets()} ok\n", r.stdout
        assert "the rig showed the camera the six faces in" in r.stderr
    shown = {p.name.split("-")[2] for p in debug.glob("view-*.png")}
    assert shown == set("URFDLB"), sorted(debug.iterdir())
    assert len(json.loads((debug / "scan.json").read_text())["rgb"]) == 54
    r = _cli("scan", "--config", _config(kind), "--seed", "4", "--json", tmp_path=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["facelets"] == random_cube(4).to_facelets()


@pytest.mark.parametrize("args, says", [
    (["scan", "--profile", "home"], "--profile is for a six-motor set-up's cameras"),
    (["scan", "--sim-state", "solved"], "holds the cube --seed N puts in"),
    (["scan", "--preview"], "add --save-debug DIR for the six pictures"),
    (["calibrate"], "uses no colour profile, so there are no colours to learn"),
])
def test_what_a_one_camera_rig_does_not_take_is_one_line(args, says, tmp_path):
    r = _cli(*args, "--config", _config("flipper"), tmp_path=tmp_path)
    assert r.returncode == 2 and says in r.stderr and r.stdout == "", (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_scan_then_start_on_one_rig_from_the_terminal(kind, tmp_path):
    """`scan --port` has the rig on that port show the camera the faces (a
    sim-rig in its own process, its camera's view shared through
    --sim-view); the scan leaves the rig parked, and a `start` after it on
    the same rig solves. ``--seed`` sets only the simulated camera's light
    here (the rig in the other process holds its own cube): a steady light,
    as a random one is now and then too bright to read, and a run must then
    stop in doubt. The run record's check of the scan is against the cube
    the rig holds, not the one the seed would draw."""
    from robot.sim.pty_rig import SimRigProcess

    view = tmp_path / "view"
    with SimRigProcess("--config", _config(kind), "--speed", "max", "--scramble", "4", "--sim-view",
                       str(view)) as sim:
        held = sim.state()
        r = _cli("scan", "--config", _config(kind), "--port", sim.port, "--sim-view", str(view), "--json",
                 "--seed", "5", tmp_path=tmp_path)
        assert r.returncode == 0, (r.stdout, r.stderr)
        assert json.loads(r.stdout)["facelets"] == held  # read as the rig held it at home
        assert sim.counts()["moves"] > 0 and sim.counts()["fault"] is None
        r = _cli("start", "--headless", "--no-wait", "--config", _config(kind), "--port", sim.port,
                 "--sim-view", str(view), "--state-dir", str(tmp_path / "jobs"), "--seed", "5",
                 tmp_path=tmp_path)
        assert r.returncode == 0 and "confirmed solved" in r.stdout, (r.stdout, r.stderr)
        assert sim.counts()["fault"] is None
    records = list((tmp_path / "jobs").glob("runs/*/run.json"))
    assert len(records) == 1 and json.loads(records[0].read_text())["scan_correct"] is True, records


@pytest.mark.parametrize("flag", ["--port", "--sim-view"])
def test_a_six_motor_scan_takes_no_rig(flag, tmp_path):
    r = _cli("scan", flag, str(tmp_path / "x"), tmp_path=tmp_path)
    assert r.returncode == 2 and "a six-motor rig's scan uses only its cameras" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
