"""When a scan stays doubtful: let the rig look again from somewhere else.

Re-capturing a view sees a doubtful sticker in the same place, under the
same lamp and through the same camera: a reflection or a shadow that made
it doubtful is usually still there. Turning one face moves the sticker to
another place, often before the other camera and always in another light.
So: plan the turn that moves most doubtful stickers into another view (or
at least another place), turn it (journalled like any job), scan again,
and combine both looks at each sticker: a sticker is named by whichever
look was sure of it, and the two looks must agree wherever both were
sure. The turn is not undone: the cube is solved from where it now is,
which folds the turn into the solution. If one turn is not enough, a
second is tried; only then is a person asked.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from solver import Cube, random_cube
from solver.facelets import FACES

if TYPE_CHECKING:
    from vision.scanning import ScanResult
    from vision.setup import ViewSpec

    from .start import Run

MAX_TURNS = 2  # faces turned to look again before a person is asked
CANDIDATES = [f + s for f in FACES for s in ("", "'", "2")]


@cache
def facelet_moves(move: str) -> tuple[int, ...]:
    """Where each facelet position goes when ``move`` is turned: found by
    turning a few random cubes and following every sticker."""
    cubes = [random_cube(seed).to_facelets() for seed in range(12)]
    after = [Cube.from_facelets(c).apply(move).to_facelets() for c in cubes]
    dest = []
    for i in range(54):
        options = [j for j in range(54) if all(a[j] == c[i] for c, a in zip(cubes, after, strict=True))]
        dest.append(options[0])
    return tuple(dest)


def _view_of(views: list[ViewSpec]) -> dict[int, str]:
    out = {}
    for v in views:
        for f in v.faces:
            for n in range(9):
                out[9 * FACES.index(f.face) + n] = v.camera
    return out


def plan_turn(doubt: list[int], views: list[ViewSpec], tried: set[str]) -> str | None:
    """The face turn that moves the most doubtful stickers before another
    camera (ties: the most to another place at all; then quarter turns,
    which are quicker). None when no turn moves any doubtful sticker."""
    camera = _view_of(views)
    best: tuple[int, int, int] | None = None
    choice = None
    for m in CANDIDATES:
        if m in tried:
            continue
        dest = facelet_moves(m)
        moved = sum(dest[i] != i for i in doubt)
        other_camera = sum(camera.get(dest[i]) != camera.get(i) for i in doubt)
        score = (other_camera, moved, 0 if m.endswith("2") else 1)
        if moved and (best is None or score > best):
            best, choice = score, m
    return choice


def combine(first: ScanResult, first_doubt: list[int], second: ScanResult, second_doubt: list[int],
            move: str) -> tuple[str | None, list[int]]:
    """Both looks at each sticker, in the cube as it is after ``move``:
    (facelets, still doubtful positions); facelets None when the looks
    disagree where both were sure, or the combination is not a valid cube."""
    dest = facelet_moves(move)
    before = first.facelets
    sure_before = {dest[i]: before[i] for i in range(54) if i not in set(first_doubt)}
    out = list(second.facelets)
    still = []
    doubtful_now = set(second_doubt)
    for p in range(54):
        if p in doubtful_now:
            if p in sure_before:
                out[p] = sure_before[p]
            else:
                still.append(p)
        elif p in sure_before and sure_before[p] != out[p]:
            return None, [p]  # the two looks contradict each other: something else is wrong
    facelets = "".join(out)
    try:
        Cube.from_facelets(facelets)
    except Exception:  # noqa: BLE001 - any invalid combination means: not settled
        return None, still or list(range(54))
    return facelets, still


def resolve(run: Run, result: ScanResult, doubt: list[int], *,
            turn: Callable[[Run, str, str], None] | None = None,
            rescan: Callable[[Run], ScanResult] | None = None,
            doubtful: Callable[[ScanResult], list[int]] | None = None) -> tuple[ScanResult, str] | None:
    """Turn up to :data:`MAX_TURNS` faces to look at the doubtful stickers
    again; (the last scan, the cube as it now is) when that settles it,
    None when a person must. Only a valid scan is acted on: turning a face
    of a cube read as invalid would journal a state nobody knows."""
    if not result.classification.valid:
        return None
    turn = turn or _turn
    rescan = rescan or _rescan
    doubtful = doubtful or _doubtful
    tried: set[str] = set()
    done: list[str] = []
    settled = _look_again(run, result, doubt, turn, rescan, doubtful, tried, done)
    if settled is not None:
        return settled
    if done:
        now = Cube.from_facelets(result.facelets).apply(" ".join(done)).to_facelets()
        back = " ".join(_inverse(m) for m in reversed(done))
        run.out(f"scan: still in doubt after turning {' '.join(done)}; turning {back} to put the cube back")
        turn(run, now, back)
    return None


def _inverse(move: str) -> str:
    return move[0] + ("'" if len(move) == 1 else "" if move.endswith("'") else "2")


def _look_again(run: Run, result: ScanResult, doubt: list[int], turn: Callable[[Run, str, str], None],
                rescan: Callable[[Run], ScanResult], doubtful: Callable[[ScanResult], list[int]],
                tried: set[str], done: list[str]) -> tuple[ScanResult, str] | None:
    for _ in range(MAX_TURNS):
        move = plan_turn(doubt, run.cfg.views, tried)
        if move is None:
            return None
        tried.add(move)
        done.append(move)
        names = ", ".join(_name(i) for i in doubt[:8])
        run.out(f"scan: {len(doubt)} sticker(s) still in doubt ({names}); turning {move} to look again")
        turn(run, result.facelets, move)
        second = rescan(run)
        second_doubt = doubtful(second)
        facelets, still = combine(result, doubt, second, second_doubt, move)
        if facelets is not None and not still:
            run.record.setdefault("doubt_turns", []).append(move)
            return second, facelets
        if facelets is None or not second.classification.valid:
            return None
        result, doubt = second, still
        result.facelets = facelets
    return None


def _name(i: int) -> str:
    from solver.facelets import position_name

    return position_name(i)


def _doubtful(result: ScanResult) -> list[int]:
    from .start import _doubtful as start_doubtful

    return start_doubtful(result, 0.0)


def _turn(run: Run, facelets: str, move: str) -> None:
    """Turn one face as a journalled job of one step."""
    from ..rig import job
    from ..rig.journal import Journal

    state_dir = run.record.get("state_dir")
    with Journal(state_dir) as journal:
        job.run(run.rig.link, journal, Cube.from_facelets(facelets), [[m] for m in move.split()])


def _rescan(run: Run) -> ScanResult:
    """Capture every view of the cube as it now is and classify."""
    from vision.preview import annotate
    from vision.scanning import ScanResult, capture_frames, classify_measured, expand_views, measure

    from .start import _lighting, _profile

    cfg = run.cfg
    profile = _profile(cfg)
    state = run.rig.sim_state() if run.rig.sim_state else None
    flat = expand_views(cfg.views)
    frames = capture_frames(cfg.cameras, cfg.views, sim_state=state, sim_lighting=_lighting(run),
                            sim_seed=None if run.seed is None else run.seed * 7919 + run.captures,
                            profile=profile)
    run.captures += 1
    samples, spread, glare = measure(frames, flat, profile)
    cls = classify_measured(samples, spread, glare, profile=profile)
    res = ScanResult(cls.facelets, cls, samples, spread, glare, frames=frames, views=flat)
    res.images = {v.name: annotate(frames[v.name], v, res) for v in flat if v.name in frames}
    return res
