"""One camera on a rig that moves the cube: the scan plan shows every face,
says truly which face each picture shows and how it is turned, and the six
pictures read as separate faces give the cube the virtual rig holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot.app.mechanism_scan import scan_with_plan
from robot.rig.loading import load_config
from robot.rig.mechanisms import cheapest, mechanism_for
from robot.rig.mechanisms.scanplan import rotate_grid, scan_plan
from robot.sim.mechanisms import virtual_mechanism
from solver import random_cube, solve
from vision.render import Lighting, render_view

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("flipper", "two-gripper")


def example(kind: str):
    return load_config(ROOT / "config" / "examples" / f"{kind}.toml")


@pytest.mark.parametrize("kind", KINDS)
def test_the_plan_shows_every_face_as_it_says(kind):
    cfg = example(kind)
    m = mechanism_for(cfg)
    p = scan_plan(m)
    assert sorted(s.face for s in p.shots) == list(range(6))
    f = random_cube(2).to_facelets()
    rig = virtual_mechanism(cfg, f)
    for shot in p.shots:
        for a in shot.before:
            rig.do(a)
        assert "".join(rotate_grid(rig.cube.face(0), shot.turns)) == f[9 * shot.face: 9 * shot.face + 9]
    assert p.seconds > 0 and p.end == m.apply(*_last(m, p)).after


def _last(m, p):
    """The state before the plan's last move, and that move."""
    state = m.start()
    moves = [a for s in p.shots for a in s.before]
    for a in moves[:-1]:
        state = m.apply(state, a).after
    return state, moves[-1]


@pytest.mark.parametrize("kind", KINDS)
def test_scan_solve_turn_confirm_on_the_virtual_rig(kind):
    cfg = example(kind)
    m = mechanism_for(cfg)
    view, cam = cfg.views[0], cfg.cameras[0]
    for seed in range(3):
        cube = random_cube(100 + seed)
        rig = virtual_mechanism(cfg, cube.to_facelets())
        rng = np.random.default_rng(seed)
        light = Lighting.random(rng)

        def picture(rig=rig, light=light, rng=rng):
            return render_view(rig.cube.stickers, view, (cam.width, cam.height), lighting=light, rng=rng)

        first = scan_plan(m)
        scanned = scan_with_plan(first, view, rig.do, picture)
        assert scanned.ok and scanned.facelets == cube.to_facelets()
        s = solve(scanned.facelets, budget_ms=40, candidates=4, workers=1)
        _, p = cheapest([s.moves] + [o.moves for o in s.others], m, start=first.end)
        for a in p.actions:
            rig.do(a)
        confirm = scan_with_plan(scan_plan(m, start=p.end), view, rig.do, picture)
        assert confirm.ok and confirm.facelets == "".join(c * 9 for c in "URFDLB")
        assert rig.is_solved()


@pytest.mark.parametrize("kind", KINDS)
def test_a_rescan_shows_the_faces_asked_for_turned_a_new_way(kind):
    from robot.rig.mechanisms.scanplan import rescan_plan

    cfg = example(kind)
    m = mechanism_for(cfg)
    f = random_cube(8).to_facelets()
    rig = virtual_mechanism(cfg, f)
    first = scan_plan(m)
    for shot in first.shots:
        for a in shot.before:
            rig.do(a)
    shown = {s.face: {s.turns} for s in first.shots if s.face in (1, 2, 5)}
    again = rescan_plan(m, first.end, shown)
    assert sorted(s.face for s in again.shots) == [1, 2, 5]
    for shot in again.shots:
        for a in shot.before:
            rig.do(a)
        assert shot.turns not in shown[shot.face]
        assert "".join(rotate_grid(rig.cube.face(0), shot.turns)) == f[9 * shot.face: 9 * shot.face + 9]
