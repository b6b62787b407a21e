"""What a new user tripped over on the command line, each checked the way they
met it: through the real `cuberobot` command in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from incli import cuberobot

from solver import SOLVED


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`cuberobot ARGS` in this process (tests/incli.py)."""
    return cuberobot(*args, stdin=stdin)


def test_dry_run_with_a_bad_speed_is_a_user_mistake_that_names_the_option(tmp_path):
    for speed in ("abc", "0", "1e-9", "nan"):
        r = run("dry-run", "R", "--speed", speed, "--state-dir", str(tmp_path))
        assert r.returncode == 2, (speed, r.stderr)
        assert r.stderr.count("\n") == 1 and "--speed" in r.stderr and "sim://" not in r.stderr
    r = run("sim-rig", "--speed", "abc")
    assert r.returncode == 2 and "speed" in r.stderr


def test_check_reads_solved_from_stdin_as_it_does_from_the_argument():
    r = run("check", "-", stdin="solved\n")
    assert (r.returncode, r.stdout) == (0, "valid\n"), r.stderr
    r = run("check", "-", stdin="  \n")
    assert r.returncode == 2 and "standard input" in r.stderr


def test_solving_a_solved_cube_says_so_without_building_tables(tmp_path):
    cache = tmp_path / "cache"
    r = subprocess.run([sys.executable, "-m", "robot", "solve", "solved"], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "CUBEROBOT_CACHE": str(cache)})
    assert r.returncode == 0 and r.stdout.strip() == ""
    assert "already solved" in r.stderr
    assert not cache.exists()  # nothing to search for: no table built or loaded
    r = run("solve", "solved", "--json")
    assert json.loads(r.stdout) == {"moves": "", "length": 0, "cost": 0.0, "elapsed_ms": 0.0, "steps": []}


def test_estop_on_a_per_command_simulated_rig_does_not_claim_a_latch():
    r = run("estop")
    assert r.returncode == 2 and "latched" not in r.stdout
    assert "sim-rig" in r.stderr and "--port" in r.stderr


def test_save_debug_creates_missing_folders_as_render_does(tmp_path):
    out = tmp_path / "not" / "yet"
    r = run("scan", "--headless", "--seed", "3", "--save-debug", str(out))
    assert r.returncode in (0, 1), r.stderr
    assert any(out.glob("*.png"))
    r = run("dry-run", "R", "--render", str(tmp_path / "new" / "dir" / "r.gif"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "new" / "dir" / "r.gif").is_file()


def test_verbose_and_quiet_work_for_every_command_before_or_after_it():
    for argv in (["-v", "check", "solved"], ["check", "solved", "-v"], ["check", "-q", "solved"],
                 ["-q", "apply", "solved", "R"], ["config", "check", "-v"]):
        r = run(*argv)
        assert r.returncode == 0, (argv, r.stderr)
    r = run("-v", "-q", "check", "solved")
    assert r.returncode == 2 and "not allowed with" in r.stderr


def test_python_dash_m_cuberobot_is_the_command():
    r = subprocess.run([sys.executable, "-m", "cuberobot", "check", "solved"], capture_output=True, text=True,
                       timeout=60)
    assert (r.returncode, r.stdout) == (0, "valid\n"), r.stderr
    r = subprocess.run([sys.executable, "-m", "cuberobot", "apply", "solved", "R", "R'"], capture_output=True,
                       text=True, timeout=60)
    assert r.stdout.strip() == SOLVED


def _cache_missing_the_move_tables(tmp_path):
    """A cache holding the built pruning tables but not the move tables, so
    that a command rebuilds a small part and reports it (a whole build takes
    half a minute)."""
    import os

    import solver
    from solver.cache import cache_dir

    solver.prepare()
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("phase1.tbl", "phase2.tbl"):
        os.symlink(cache_dir() / name, cache / name)
    return cache


def test_a_table_build_shows_progress_off_a_terminal_and_q_silences_it(tmp_path):
    import os

    env = {**os.environ, "CUBEROBOT_CACHE": str(_cache_missing_the_move_tables(tmp_path))}
    r = subprocess.run([sys.executable, "-m", "robot", "start", "--headless", "--seed", "5", "--state-dir",
                        str(tmp_path / "state")], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "solver's tables" in line]
    assert lines and all("(once; cached in " in line for line in lines), r.stderr
    assert "step 1 of 2" in lines[0] and "step 2 of 2" in lines[-1]
    assert "solver tables built in" in r.stderr
    assert "\r" not in r.stderr  # off a terminal, one line per message
    (tmp_path / "cache" / "moves.tbl").unlink()
    r = subprocess.run([sys.executable, "-m", "robot", "solve", "solved", "-q"], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0 and "tables" not in r.stderr, r.stderr


def test_what_the_fuzzing_found_below_the_command_line_is_refused_where_it_lives(tmp_path):
    import os

    import pytest

    from robot.app.dryrun_pictures import check_path
    from robot.rig.errors import UserError
    from robot.sim.virtual_rig import Faults
    from vision.profile import ProfileError, load_profile

    fifo = tmp_path / "pipe.gif"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="not a file"):
        check_path(fifo)  # opening a pipe with no reader would block for ever
    with pytest.raises(ValueError):
        Faults.parse("reset:inf")
    big = tmp_path / "big.json"
    big.write_text('{"name": "x", "face_colors": {"U": [1' + "0" * 5000 + ", 1, 1]}}")
    with pytest.raises(ProfileError, match="big.json"):
        load_profile(big)
    r = run("dry-run", "R U " * 300, "--port", "sim://slow?speed=0.01", "--state-dir", str(tmp_path))
    assert r.returncode == 2 and "hour" in r.stderr and "--port" in r.stderr, r.stderr
