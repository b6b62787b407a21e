"""One request, one answer, whichever face asks (issue 45): the terminal,
the panel's API and the engine each send the same request on each example
set-up (six motors, a flipper, two grippers, CUBOTino's build) and get the
same answer or the same refusal, in the same words.

Before, each kind of rig had its own path and they had drifted: the API
started a CFOP run on CUBOTino's build that the terminal refused (and solved
it with two-phase while the status said cfop); ``[solver] max_length`` was
not read on a flipper; ``solve --metric rig`` priced a flipper as if it had
six motors."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from webserver import Client, panel_server

from robot.app.engines import Engine
from robot.app.events import Face
from robot.app.solving import SolveRequest, check_run, for_the_mechanism, planned_solution
from robot.rig.errors import RigError, UserError
from robot.rig.loading import load_config
from robot.rig.mechanisms import mechanism_for, plan
from robot.rig.motion import estimate_s
from solver import SOLVED_CUBE, parse_facelets

ROOT = Path(__file__).resolve().parents[1]
SETUPS = {"six-motor": ROOT / "config" / "rig.toml",
          "flipper": ROOT / "config" / "examples" / "flipper.toml",
          "cubotino": ROOT / "config" / "examples" / "cubotino.toml",
          "two-gripper": ROOT / "config" / "examples" / "two-gripper.toml"}
NEAR = SOLVED_CUBE.apply("R U2 F' L D B2 U'").to_facelets()
"""A cube 7 moves from solved: the solver's answer is the same whoever asks
and however busy the machine is (the search finds it before any budget ends)."""


def _terminal(*args: str) -> tuple[int, str, str]:
    r = subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout, r.stderr


def _with_solver(path: Path, tmp_path: Path, **settings) -> Path:
    """The example set-up with ``[solver]`` settings added, as a person edits it."""
    text = path.read_text()
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
    for key in settings:
        text = re.sub(rf"(?m)^{key} = .*\n", "", text)
    out = tmp_path / path.name
    out.write_text(text.replace("[solver]\n", "[solver]\n" + lines, 1) if "[solver]\n" in text
                   else text + "\n[solver]\n" + lines)
    return out


def _priced(cfg, moves: str) -> float:
    """What ``moves`` take on ``cfg``'s robot, planned from its home (a
    mechanism's plan by the engine's objective: seconds and robot moves)."""
    m = mechanism_for(cfg)
    if m is not None:
        return plan(moves, m, objective="weighed").seconds
    from robot.rig.motion import plan as plan_turns
    from solver import group_steps

    return estimate_s(plan_turns(group_steps(moves), cfg), cfg)


@pytest.mark.parametrize("kind", ["flipper", "cubotino", "two-gripper"])
def test_cfop_on_a_rig_that_cannot_turn_it_is_one_refusal_from_every_face(kind, tmp_path):
    cfg = load_config(SETUPS[kind])
    with pytest.raises(UserError) as refused:
        check_run(cfg, method="cfop")
    said = str(refused.value)
    assert said.startswith("method cfop (asked for) is for a six-motor rig") and cfg.rig.kind in said
    code, out, err = _terminal("start", "--method", "cfop", "--config", str(SETUPS[kind]), "--headless",
                               "--state-dir", str(tmp_path / "t"))
    assert (code, out, err) == (2, "", f"cuberobot start: {said}\n")  # a usage error, as before
    with panel_server(tmp_path / "p", cfg=cfg, speed="max") as (base, _, _):
        status, body, _ = Client(base).post("/api/start", {"method": "cfop"})
        assert status == 400 and body["error"]["message"] == said, body
        assert Client(base).get("/api/status")[1]["run"] == 0  # nothing started


def test_cfop_on_six_motors_runs_from_the_api_as_from_the_engine(tmp_path):
    cfg = load_config(SETUPS["six-motor"])
    assert check_run(cfg, method="cfop").solver.method == "cfop"
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, _, _):
        client = Client(base)
        assert client.post("/api/start", {"method": "cfop", "seed": 4})[0] == 202
        events = client.events(lambda e: e["kind"] == "finished")
        assert events[-1]["status"] == "solved", events[-1]
        assert next(e for e in events if e["kind"] == "solving")["method"] == "cfop"


@pytest.mark.parametrize("kind", ["six-motor", "flipper", "two-gripper"])
def test_a_metric_for_six_motors_is_refused_on_a_mechanism_and_taken_on_six_motors(kind, tmp_path):
    cfg = load_config(SETUPS[kind])
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, panel, _):
        status, body, _ = Client(base).post("/api/start", {"metric": "qtm", "seed": 2})
        if kind == "six-motor":
            assert status == 202 and check_run(cfg, metric="qtm").solver.metric == "qtm"
            Client(base).events(lambda e: e["kind"] == "finished")
            return
        with pytest.raises(UserError) as refused:
            check_run(cfg, metric="qtm")
        assert status == 400 and body["error"]["message"] == str(refused.value), body
        assert "metric qtm is for a six-motor rig" in str(refused.value)


@pytest.mark.parametrize("kind", list(SETUPS))
def test_solve_in_the_rig_metric_prices_the_set_ups_own_robot_from_every_face(kind, tmp_path):
    """The terminal's `solve --metric rig`, the API's and the engine's plan
    give the same moves at the same price, and the price is what those moves
    take on that robot (a flipper's tens of seconds, not six motors' two)."""
    path = _with_solver(SETUPS[kind], tmp_path, search_ms=0)  # the search in the rig's metric is timed
    cfg = load_config(path)
    code, out, err = _terminal("solve", NEAR, "--metric", "rig", "--config", str(path), "--json")
    assert code == 0, err
    terminal = json.loads(out)
    with panel_server(tmp_path / "p", cfg=cfg, speed="max") as (base, _, _):
        status, api, _ = Client(base).post("/api/solve", {"facelets": NEAR, "metric": "rig"})
    assert status == 200, api
    if mechanism_for(cfg) is not None:
        best, _, _ = for_the_mechanism(cfg, NEAR)
        engine = (" ".join(map(str, best.solution)), round(best.seconds, 4))
    else:
        sol, steps = planned_solution(SolveRequest(NEAR, metric="rig"), cfg)
        engine = (sol.moves, round(estimate_s(steps, cfg), 4))
    assert (terminal["moves"], terminal["cost"]) == (api["moves"], api["cost"]) == engine
    assert parse_facelets(NEAR).apply(engine[0]).is_solved()
    assert terminal["cost"] == pytest.approx(_priced(cfg, engine[0]), abs=1e-3)
    assert (terminal["cost"] > 5) == (kind != "six-motor"), terminal  # servos and a turntable are slower


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_max_length_bounds_a_mechanism_run_as_it_bounds_six_motors(kind, tmp_path):
    """``[solver] max_length`` is read on every kind: the engine's run turns
    no longer solution; a bound no solution meets in time ends the run
    before any robot move, naming the setting, as on six motors."""
    cfg = load_config(SETUPS[kind])
    bound = dataclasses.replace(cfg, solver=dataclasses.replace(cfg.solver, max_length=16, search_ms=300))
    engine = Engine(bound, Face(), state_dir=tmp_path / "s", seed=21,
                             paced=False)
    try:
        run = engine.run()
    except RigError as e:
        assert str(e).startswith("no solution of at most 16 moves") and str(e).endswith("no motor turned")
        assert engine.record is not None and not engine.record.turns
        return
    assert run.status == "solved" and 0 < run.length <= 16, (run.status, run.moves)
    best, _, planned = for_the_mechanism(bound, run.facelets)
    assert len(best.solution) <= 16 and all(c.length <= 16 for c in planned)


def test_max_length_set_in_a_flippers_file_bounds_its_start_from_the_terminal(tmp_path):
    """The issue's case: ``max_length = 16`` in flipper.toml, `start` from the terminal."""
    path = _with_solver(SETUPS["flipper"], tmp_path, max_length=16)
    code, out, err = _terminal("start", "--headless", "--config", str(path), "--seed", "5",
                               "--state-dir", str(tmp_path / "s"))
    if code == 1:
        assert "no solution of at most 16 moves" in err and "[solver] max_length in" in err, err
        return
    assert code == 0, err
    length = int(re.search(r"^solution .* \((\d+) moves", out, re.M)[1])
    assert length <= 16, out


def test_every_kind_a_config_may_name_has_its_seam(tmp_path):
    """robot/app/kinds.py answers for every ``[rig] kind``, and the engine
    app/engines.py makes for it runs a whole press-start on that rig (the
    terminal's pace)."""
    from robot.app.engines import engine_for
    from robot.app.kinds import KINDS, kind_of
    from robot.rig.config import RIG_KINDS

    assert tuple(KINDS) == RIG_KINDS
    for name, path in SETUPS.items():
        if name == "cubotino":
            continue
        cfg = load_config(path)
        kind = kind_of(cfg)
        assert kind.name == cfg.rig.kind and set(kind.methods) <= {"two-phase", "cfop"}
        engine = engine_for(cfg, Face(), state_dir=tmp_path / name, seed=3, no_wait=True, paced=False)
        engine.run()
        assert engine.record is not None and engine.record.status == "solved", (name, engine.record)
