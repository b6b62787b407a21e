"""`cuberobot solve`, run as a user runs it."""

import json

from incli import cuberobot

from solver import SOLVED_CUBE, parse_facelets, random_cube

BAD_TWIST = "UUUUUUUUFURRRRRRRRFFRFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def run(*args, stdin=None):
    """`cuberobot ARGS` in this process (tests/incli.py)."""
    return cuberobot(*args, stdin=stdin)


def test_solve_prints_moves():
    cube = random_cube(11)
    r = run("solve", cube.to_facelets(), "--max-length", "20")
    assert r.returncode == 0, r.stderr
    moves = r.stdout.strip()
    assert cube.apply(moves).is_solved() and len(moves.split()) <= 20


def test_solve_json_fields():
    cube = SOLVED_CUBE.apply("R U F")
    r = run("solve", cube.to_facelets(), "--json", "--metric", "axial", "--budget-ms", "20")
    out = json.loads(r.stdout)
    assert set(out) == {"moves", "length", "cost", "elapsed_ms", "steps"}
    assert cube.apply(out["moves"]).is_solved() and out["length"] == 3


def test_solve_for_the_rig_prices_by_the_rigs_plan():
    """--metric rig: the solution's cost is the time the configured rig's
    plan takes (overlaps and half-turn directions), as `start` would turn it."""
    from robot.rig.loading import load_config
    from robot.rig.motion import estimate_s, plan
    from solver import parse_steps

    cube = random_cube(12)
    r = run("solve", cube.to_facelets(), "--json", "--metric", "rig", "--budget-ms", "30", "--workers", "1")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert cube.apply(out["moves"]).is_solved() and out["metric"] == "rig" and out["planned"] >= 1
    steps = parse_steps(" ".join(s) for s in out["steps"])
    assert sum(len(s) for s in steps) == out["length"]
    assert out["cost"] == round(estimate_s(plan(steps, load_config()), load_config()), 4)
    r = run("solve", cube.to_facelets(), "--metric", "rig", "--budget-ms", "10")
    assert r.returncode == 0 and "s of turning as the rig plans it" in r.stderr
    r = run("solve", "solved", "--metric", "htm", "--config", "config/rig.toml")
    assert r.returncode == 2 and "--config is for --metric rig" in r.stderr


def test_invalid_cube_is_the_validators_error():
    r = run("solve", BAD_TWIST)
    assert r.returncode == 2 and "twisted" in r.stderr and "Traceback" not in r.stderr
    check = run("check", BAD_TWIST)
    assert check.stderr.split(":", 1)[-1].strip() in r.stderr


def test_bad_options():
    r = run("solve", "solved", "--metric", "fast")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = run("solve", "solved", "--budget-ms", "-5")
    assert r.returncode == 2 and "budget" in r.stderr
    r = run("solve")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = run("solve", "--batch", "/nonexistent/cubes.txt")
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_batch_one_line_per_state(tmp_path):
    cubes = [random_cube(s).to_facelets() for s in range(3)]
    lines = [cubes[0], "not a cube", "", cubes[1], BAD_TWIST, cubes[2]]
    f = tmp_path / "cubes.txt"
    f.write_text("\n".join(lines) + "\n")
    r = run("solve", "--batch", str(f), "--max-length", "20")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["line"] for o in out] == [1, 2, 4, 5, 6]
    assert out[1]["error"]["kind"] == "length" and out[3]["error"]["kind"] == "corner-twist"
    for o in (out[0], out[2], out[4]):
        assert parse_facelets(o["cube"]).apply(o["moves"]).is_solved() and o["length"] <= 20


def test_batch_from_stdin_all_good():
    cubes = "\n".join(random_cube(s).to_facelets() for s in (5, 6))
    r = run("solve", "--batch", "-", "--budget-ms", "10", stdin=cubes)
    assert r.returncode == 0
    assert len(r.stdout.splitlines()) == 2


def test_a_max_length_too_short_is_one_line_and_exit_1():
    cube = random_cube(11).to_facelets()
    r = run("solve", cube, "--max-length", "5")
    assert (r.returncode, r.stdout) == (1, ""), r.stderr
    assert r.stderr.count("\n") == 1 and "no solution of at most 5 moves" in r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    r = run("solve", cube, "--max-length", "20", "--metric", "axial", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["length"] <= 20


def test_batch_refusals_are_error_lines_and_the_rest_go_on(tmp_path):
    near = SOLVED_CUBE.apply("R U R' U'").to_facelets()
    cubes = [random_cube(3).to_facelets(), near, SOLVED_CUBE.to_facelets()]
    r = run("solve", "--batch", "-", "--max-length", "4", stdin="\n".join(cubes))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["line"] for o in out] == [1, 2, 3]
    assert out[0]["cube"] == cubes[0] and set(out[0]["error"]) == {"kind", "message"}
    assert out[0]["error"]["kind"] == "max-length" and "at most 4 moves" in out[0]["error"]["message"]
    assert out[1]["length"] == 4 and parse_facelets(near).apply(out[1]["moves"]).is_solved()
    assert out[2]["length"] == 0


def test_start_refuses_before_any_motor_turns(tmp_path):
    """`[solver] max_length` means the same in `start`: a cube it cannot meet
    ends the run with a RigError (one line, exit 1) and nothing moved."""
    from dataclasses import replace

    import pytest

    from robot.app.engines import run_start
    from robot.rig.errors import RigError
    from robot.rig.journal import Journal
    from robot.rig.loading import load_config
    from robot.sim.protocol_sim import forget, rig_for_url, sim_url

    cfg = load_config()
    cfg = replace(cfg, solver=replace(cfg.solver, max_length=5))
    url = sim_url("test-solver-max-length")
    with pytest.raises(RigError, match="no solution of at most 5 moves.*no motor turned"):
        run_start(cfg, port=url, headless=True, state_dir=tmp_path, seed=11, out=lambda _line: None)
    assert rig_for_url(url).record == [] and not rig_for_url(url).cube.is_solved()
    assert Journal(tmp_path).read() == []
    record = json.loads(next((tmp_path / "runs").glob("*/run.json")).read_text())
    assert record["status"] == "failed" and "at most 5 moves" in record["message"]
    forget(url)


def test_workers_option_and_setting():
    """`--workers` and `[solver] workers` are bounded like every input."""
    from robot.rig.config import parse_config
    from robot.rig.errors import UserError

    cube = random_cube(12)
    r = run("solve", cube.to_facelets(), "--workers", "1", "--budget-ms", "20")
    assert r.returncode == 0, r.stderr
    assert cube.apply(r.stdout.strip()).is_solved()
    for bad in ("0", "65", "two"):
        r = run("solve", "solved", "--workers", bad)
        assert r.returncode == 2 and "--workers" in r.stderr and "Traceback" not in r.stderr
    assert parse_config("[solver]\nworkers = 2\n").solver.workers == 2
    assert parse_config("[solver]\nbudget_ms = 50\n").solver.workers is None
    for bad in ("0", "65", "1.5", '"all"'):
        try:
            parse_config(f"[solver]\nworkers = {bad}\n")
        except UserError as e:
            assert "workers" in str(e)
        else:
            raise AssertionError(f"workers = {bad} was accepted")
