"""`start --method cfop`: the rig demonstrates the method people learn, and
every face is told which stage each turn belongs to."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from robot.app.engines import Engine
from robot.rig.errors import UserError
from robot.rig.loading import load_config
from robot.sim.protocol_sim import forget, rig_for_url, sim_url
from solver import parse_facelets

STAGES = ["cross", "F2L 1", "F2L 2", "F2L 3", "F2L 4", "OLL", "PLL"]


class Recorder:
    auto_start = True

    def __init__(self) -> None:
        self.events: list = []

    def emit(self, event) -> None:
        self.events.append(event)

    def ask(self, doubt):
        return None

    def pressed(self):
        return None


def _stage_name(label: str) -> str:
    return label.split(":")[0]


@pytest.mark.parametrize("seed", [7, 31])
def test_cfop_run_labels_every_turn_with_its_stage_in_order(tmp_path, seed):
    cfg = load_config()
    cfg = replace(cfg, solver=replace(cfg.solver, method="cfop"))
    url = sim_url(f"test-start-cfop-{seed}")
    face = Recorder()
    record = Engine(cfg, face, port=url, state_dir=tmp_path, seed=seed).run()
    assert record.status == "solved" and rig_for_url(url).cube.is_solved()
    assert 30 <= record.length <= 90  # a CFOP solution, not a two-phase one
    done = [e for e in face.events if e.kind == "turn-done"]
    assert len(done) == record.turns
    names = [_stage_name(e.data["stage"]) for e in done]
    # stages come in the method's order, each a run of turns (a skipped stage has none)
    seen = list(dict.fromkeys(names))
    assert seen == [s for s in STAGES if s in seen] and seen[0] == "cross"
    assert names == sorted(names, key=STAGES.index)
    # every turn event carries the state the rig is in; the last one is solved
    cube = parse_facelets(record.facelets)
    steps = next(e for e in face.events if e.kind == "solution").data["steps"]
    for step, event in zip(steps, done):
        cube = cube.apply(step)
        assert event.data["state_facelets"] == cube.to_facelets()
    assert cube.is_solved()
    forget(url)


def test_start_method_cfop_names_the_stages_on_the_terminal(tmp_path):
    out = subprocess.run([sys.executable, "-m", "cuberobot", "start", "--headless", "--no-wait", "--method",
                          "cfop", "--seed", "11", "--state-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    stage_lines = [line for line in out.stdout.splitlines() if line.startswith("stage ")]
    assert stage_lines[0] == "stage cross"
    assert any(line.startswith("stage PLL") for line in stage_lines)
    assert "solved in" in out.stdout


def test_a_bad_method_in_the_config_is_one_line(tmp_path):
    bad = tmp_path / "rig.toml"
    bad.write_text('[solver]\nmethod = "roux"\n')
    with pytest.raises(UserError) as e:
        load_config(bad)
    assert "method" in str(e.value) and "cfop" in str(e.value)


def test_the_moves_read_are_cancelled_across_the_stages_seams():
    """The solution a person reads (the run's `solution` event: the
    terminal's line and the panel's) is simplified as a whole: where one
    stage ends on a face the next begins with, the two are one move, as
    the two-phase solutions and `cuberobot solve` write them; the rig still
    turns each stage's own steps under its stage's label (#24: the panel
    showed "U2 B B U2")."""
    from robot.app.start import cfop_solution
    from solver import format_moves, random_cube, simplify
    from solver.cfop import solve_cfop

    cube = random_cube(3)  # its stages' seams cancel: 56 moves turned read as 55
    turned = solve_cfop(cube).moves
    assert len(simplify(turned)) < len(turned)
    sol, labels = cfop_solution(cube.to_facelets(), 1.0, 1.5)
    assert sol.moves == format_moves(simplify(turned)) and sol.length == len(sol.moves.split())
    assert cube.apply(sol.moves).is_solved()
    assert [m for step in sol.steps for m in step] == list(turned)
    assert cube.apply([m for step in sol.steps for m in step]).is_solved()
    assert len(labels) == len(sol.steps)
