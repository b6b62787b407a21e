"""`cuberobot start --headless` with the flipper and two-gripper example
configs: one camera, solve, turn, confirm, on the virtual rigs."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from robot.app.mechanism_start import run_mechanism_start
from robot.rig.loading import load_config
from robot.web.workshop import last_runs

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("flipper", "two-gripper")


@pytest.mark.parametrize("kind", KINDS + ("cubotino",))  # cubotino.toml: a flipper whose cover flips
def test_start_command_headless_on_each_kind(kind, tmp_path):
    r = subprocess.run([sys.executable, "-m", "robot", "start", "--headless", "--seed", "3", "--config",
                        str(ROOT / "config" / "examples" / f"{kind}.toml"), "--state-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert f"solved on the {kind.replace('cubotino', 'flipper')} rig" in r.stdout
    assert "confirmed solved" in r.stdout
    records = [json.loads(line) for line in (tmp_path / "mechanism-journal.jsonl").read_text().splitlines()]
    assert records[0]["type"] == "job" and records[-1] == {"type": "end", "job": 1, "status": "done"}
    assert all("orientation" in r for r in records if r["type"] == "done")
    # the run record, where the panel keeps its own runs' and its last-runs list reads them
    panel = SimpleNamespace(options=SimpleNamespace(state_dir=str(tmp_path)))
    [listed] = last_runs(panel)["runs"]  # type: ignore[arg-type]
    assert listed["status"] == "solved" and listed["confirmed"] and listed["scan_correct"]
    assert listed["start_by"] == "no-wait" and listed["moves"] in r.stdout
    assert {p.rsplit("-", 1)[0] for p in listed["pictures"] if p.startswith("scan-")} == {
        f"scan-top-{face}" for face in "URFDLB"}
    assert f"run record and scan images: {tmp_path / 'runs' / listed['id']}" in r.stdout
    record = json.loads((tmp_path / "runs" / listed["id"] / "run.json").read_text())
    assert record["seed"] == 3 and record["turns"] > record["length"]


def test_a_run_that_fails_after_the_scan_keeps_a_record_of_how_far_it_got(tmp_path, monkeypatch):
    import robot.rig.mechanisms as ms  # where the engine's choice of plan (robot/app/solving.py) finds it
    from robot.app.engines import Engine
    from robot.app.events import Face
    from robot.rig.errors import RigError

    def broken(*_args, **_kwargs):
        raise RigError("the rig lost its footing")

    monkeypatch.setattr(ms, "cheapest", broken)
    cfg = load_config(ROOT / "config" / "examples" / "flipper.toml")
    engine = Engine(cfg, Face(), seed=3, state_dir=tmp_path, paced=False)
    with pytest.raises(RigError):
        engine.run()
    [folder] = (tmp_path / "runs").iterdir()
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "failed" and record["message"] == "the rig lost its footing"
    assert record["scan_correct"] is True and len(record["facelets"]) == 54 and "moves" not in record
    assert len(list(folder.glob("scan-*.png"))) == 6


@pytest.mark.parametrize("kind", KINDS)
def test_several_runs_in_process(kind, tmp_path):
    cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
    for seed in (10, 12):  # 12: glare hides stickers until the cube is scanned turned again
        run = run_mechanism_start(cfg, seed=seed, state_dir=tmp_path, out=lambda _line: None)
        assert run.status == "solved" and run.scan_correct and run.confirmed
        assert run.turns and run.turns > run.length


def test_a_real_port_with_a_simulated_camera_and_a_missing_firmware_are_refused_in_one_line(tmp_path):
    cfg = str(ROOT / "config" / "examples" / "flipper.toml")
    for extra, says in ((["--port", "/dev/ttyACM9"], "simulated cameras can only show a simulated rig"),
                        (["--firmware", str(tmp_path / "x.elf")], "firmware file not found"),
                        (["--method", "cfop"], "method cfop (asked for) is for a six-motor rig")):
        r = subprocess.run([sys.executable, "-m", "robot", "start", "--headless", "--config", cfg,
                            "--state-dir", str(tmp_path), *extra],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert r.returncode == 2 and "Traceback" not in r.stderr and says in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_run_turns_the_searchs_plan_when_it_beats_every_candidate(kind, tmp_path, monkeypatch):
    """[solver] search_ms: the start loop hands the solver's candidates to the
    search in the mechanism's metric and turns whichever is cheaper: never a
    plan dearer than the candidates' best, and the search's own when it wins."""
    import robot.rig.mechanisms.search as ms  # where the engine's choice of plan finds it
    from robot.rig.mechanisms import cheapest

    seen = []
    real = ms.best_solution

    def recording(facelets, mech, start, budget_s, *, candidates, workers):
        moves, found = real(facelets, mech, start, budget_s, candidates=candidates, workers=workers)
        seen.append((budget_s, workers, cheapest(candidates, mech, start=start)[1], found))
        return moves, found

    monkeypatch.setattr(ms, "best_solution", recording)
    cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
    assert cfg.solver.search_ms == 1000
    run = run_mechanism_start(cfg, seed=4, state_dir=tmp_path, out=lambda _line: None)
    assert run.status == "solved" and run.confirmed
    [(budget_s, workers, best_candidate, found)] = seen
    assert budget_s == 1.0 and workers == cfg.solver.workers  # [solver] workers: the search's threads too
    turned = min((best_candidate.seconds, best_candidate.moves), (found.seconds, found.moves))
    assert (run.estimated_turning_s, run.turns) == turned
    assert (found.seconds, found.moves) <= (best_candidate.seconds, best_candidate.moves)


def test_search_ms_is_bounded_where_it_is_read(tmp_path):
    from robot.rig.errors import UserError

    text = (ROOT / "config" / "examples" / "flipper.toml").read_text()
    text = text.replace("search_ms = 1000", "search_ms = -1")
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(UserError, match=r"solver.search_ms: expected a value between 0 and 60000, got -1"):
        load_config(tmp_path / "bad.toml")


def _screen_lines(written: str) -> list[tuple[str, str]]:
    """What a terminal shows after each ``\\r``-rewrite of a line: (what was
    written, what the line then reads), for every rewrite in ``written``."""
    shown = []
    for physical in written.split("\n"):
        screen = ""
        for seg in physical.split("\r"):
            screen = seg + screen[len(seg):]
            if seg:
                shown.append((seg.rstrip(), screen.rstrip()))
    return shown


def test_the_terminals_progress_line_leaves_nothing_of_a_longer_line_before_it(tmp_path, capsys):
    from robot.app.engines import Engine
    from robot.app.terminal import TerminalFace

    face = TerminalFace(lambda _line: None, headless=True)
    face.tty = True  # as on a terminal: the line rewritten in place on stderr
    cfg = load_config(ROOT / "config" / "examples" / "flipper.toml")
    cfg = replace(cfg, solver=replace(cfg.solver, search_ms=0))  # the candidates' plan is enough here
    run = Engine(cfg, face, seed=3, state_dir=tmp_path, paced=False).run()
    assert run.status == "solved"
    shown = _screen_lines(capsys.readouterr().err)
    assert len(shown) == run.turns
    widths = [len(written) for written, _ in shown]
    assert any(b < a for a, b in zip(widths, widths[1:])), "no shorter line followed a longer one"
    assert all(screen == written for written, screen in shown)


def test_a_scans_robot_moves_are_told_with_the_cube_as_the_rig_holds_it(tmp_path):
    """Every robot move of a scan is a ``scan-move`` (checked against the one
    schema as it is made): the orientations chain from the cube as put in to
    where the solution's plan starts, and the confirmation scan's from where
    the solution left it."""
    from robot.app.engines import Engine
    from robot.app.events import Face

    class Heard(Face):
        def __init__(self):
            self.events = []

        def emit(self, event):
            self.events.append(event)

    face = Heard()
    cfg = load_config(ROOT / "config" / "examples" / "two-gripper.toml")
    cfg = replace(cfg, solver=replace(cfg.solver, search_ms=0))
    run = Engine(cfg, face, seed=3, state_dir=tmp_path, paced=False).run()
    assert run.status == "solved"
    moves = [e for e in face.events if e.kind == "scan-move"]
    assert len(moves) == run.scan_moves
    assert {e.data["purpose"] for e in moves} == {"scan", "confirmation scan"}
    assert all("move" not in e.data and e.state == "scanning" for e in moves)
    held = "URFDLB"
    for e in face.events:
        if e.kind == "solution":
            assert e.data["orientation"] == held
        if e.kind in ("scan-move", "turn-done"):
            if e.kind == "scan-move" and "rotation" not in e.data:
                assert e.data["orientation"] == held  # a regrip: the cube stays as it is held
            held = e.data["orientation"]
    assert any("rotation" in e.data for e in moves)


@pytest.mark.parametrize("setup", ["rig", "examples/flipper", "examples/two-gripper"])
def test_one_trust_rule_on_every_kind(setup, tmp_path):
    """``[start] min_confidence`` is honoured on every kind (issue 45: one
    rule, app/doubt.py's ``trusted``): with a bar no reading clears, the scan
    is in doubt, and with nobody to ask (and no second look) the run ends
    before any face turns."""
    from robot.app.engines import Engine
    from robot.app.events import Face
    from vision.render import HARD_ORANGE, HARD_RED, Lighting

    cfg = load_config(ROOT / "config" / f"{setup}.toml")
    cfg = replace(cfg, start=replace(cfg.start, min_confidence=0.9999, look_again=False, recaptures=0))
    # a warm lamp on a red and an orange close together: every sticker read right, and sure by the
    # classifier's own rule, but a few short of the bar (their confidence 0.999)
    dim = Lighting(kelvin=2700, intensity=0.6, noise=3.0, shades={"R": HARD_RED, "L": HARD_ORANGE})
    engine = Engine(cfg, Face(), seed=3, state_dir=tmp_path, no_wait=True, paced=False,
                    sim_lighting=lambda _capture: dim)
    with pytest.raises(Exception) as caught:
        record = engine.run()
        assert record.status == "scan-doubtful", record.status  # a rig that ends it without raising
        raise AssertionError("ended as it should")
    record = engine.record
    assert record.status == "scan-doubtful", (record.status, caught.value)
    assert not record.moves and not (tmp_path / "journal.jsonl").exists()
    assert not (tmp_path / "mechanism-journal.jsonl").exists()
