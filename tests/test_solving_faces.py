"""One solving service (robot/app/solving.py) behind every face: the same
request gives the same answer and the same refusal from `cuberobot solve`,
from ``POST /api/solve`` on a real server, and from the service the engine
calls."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from webserver import Client, panel_server

from robot.app.solving import SolveRequest, answer, check
from robot.cli.main import main
from robot.rig.errors import UserError
from solver import Cube, parse_facelets, random_cube

CUBE = random_cube(2024).to_facelets()


def _cli(req: dict) -> tuple[int, str]:
    args = ["solve", req["facelets"], "--json"]
    for key, flag in (("method", "--method"), ("metric", "--metric"), ("max_length", "--max-length"),
                      ("budget_ms", "--budget-ms"), ("size", "--size")):
        if key in req:
            args += [flag, str(req[key])]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue() if code == 0 else err.getvalue().strip()


def _service(req: dict) -> SolveRequest:
    return SolveRequest(req["facelets"], size=req.get("size", 3), method=req.get("method", "two-phase"),
                        metric=req.get("metric"), max_length=req.get("max_length"),
                        budget_ms=req.get("budget_ms"))


ANSWERS = [
    {"facelets": CUBE, "method": "cfop"},
    {"facelets": Cube().apply("R U F' L2 D B'").to_facelets(), "max_length": 6, "budget_ms": 0},
    {"facelets": CUBE, "metric": "qtm", "budget_ms": 20},
    {"facelets": "solved"},
]
REFUSALS = [
    {"facelets": CUBE, "method": "cfop", "metric": "qtm"},
    {"facelets": CUBE, "method": "cfop", "max_length": 20},
    {"facelets": CUBE, "method": "cfop", "budget_ms": 50},
]


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with panel_server(tmp_path_factory.mktemp("state")) as (base, panel, rig_url):
        yield Client(base)


def _name(req: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in req.items() if k != "facelets")


@pytest.mark.parametrize("req", ANSWERS, ids=_name)
def test_the_terminal_the_api_and_the_service_answer_alike(req, api):
    facelets = Cube().to_facelets() if req["facelets"] == "solved" else req["facelets"]
    code, out = _cli(req)
    assert code == 0, out
    terminal = json.loads(out)
    status, web, _ = api.post("/api/solve", {**req, "facelets": facelets})
    assert status == 200, web
    service = answer(_service({**req, "facelets": facelets}))
    for got in (terminal, web, service):
        assert parse_facelets(facelets).apply(got["moves"]).is_solved()
        if "max_length" in req:
            assert got["length"] <= req["max_length"]
    if req.get("method") == "cfop" or req["facelets"] == "solved":  # no search: the very same answer
        keys = set(terminal) - {"elapsed_ms"}
        assert {k: terminal[k] for k in keys} == {k: web[k] for k in keys} == {k: service[k] for k in keys}
    assert set(terminal) - {"elapsed_ms"} == set(web) - {"elapsed_ms"} == set(service) - {"elapsed_ms"}


@pytest.mark.parametrize("req", REFUSALS, ids=_name)
def test_the_terminal_the_api_and_the_service_refuse_alike(req, api):
    with pytest.raises(UserError) as refused:
        check(_service(req))
    message = str(refused.value)
    code, err = _cli(req)
    assert code == 2 and err == f"cuberobot solve: {message}", err
    status, web, _ = api.post("/api/solve", req)
    assert status == 400 and web["error"]["message"] == message, web


def test_cfop_reads_the_same_simplified_moves_from_the_service_and_the_engine():
    """Where one CFOP stage ends with a move the next begins with, the whole
    reads simplified (no "U2 B B U2") from every face, and still solves."""
    from robot.app.start import cfop_solution
    from solver import parse_moves, simplify
    from solver.cfop import solve_cfop

    seams = 0
    for seed in range(40):
        cube = random_cube(5000 + seed)
        facelets = cube.to_facelets()
        stages = solve_cfop(cube).moves
        out = answer(SolveRequest(facelets, method="cfop"))
        engine, _ = cfop_solution(facelets, 1.0, 1.5)
        assert out["moves"] == engine.moves and out["length"] == len(parse_moves(out["moves"]))
        assert parse_facelets(facelets).apply(out["moves"]).is_solved()
        seams += len(simplify(stages)) < len(stages)
    assert seams, "no cube in the sample had moves to cancel across a seam"
