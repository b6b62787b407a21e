"""When a scan stays doubtful: let the rig look again from somewhere else.

Re-capturing a view sees a doubtful sticker in the same place, under the
same lamp and through the same camera: a reflection or a shadow that made
it doubtful is usually still there. Turning one face moves the sticker to
another place, often before the other camera and always in another light.
So: plan the turn that moves most doubtful stickers into another view (or
at least another place), turn it (journalled like any job), scan again,
and combine both looks at each sticker: what each look's camera said of
each sticker (in nats) is added up, following the sticker through the
turn, and the cube is judged on the sum just as one look is judged
(:func:`vision.classifier.combine_looks`): two half-sure looks that agree
make a sure one, two sure ones that disagree make a doubt. Re-captures of
the same views are combined the same way (:func:`merge_recapture`): a new
picture that is worse than the last adds little, it does not replace it.
The turn is not undone: the cube is solved from where it now is,
which folds the turn into the solution. If one turn is not enough, a
second is tried; only then is a person asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from solver import SOLVED, CubeError, parse_facelets, parse_moves, random_cube
from solver.facelets import FACES, position_name

from ..rig import job, motion  # motion.plan looked up when called (tests replace it)
from ..rig.journal import Journal
from .events import Doubt

if TYPE_CHECKING:
    from vision.scan_result import ScanResult
    from vision.setup import ViewSpec

    from .run import Run

CANDIDATES = [f + s for f in FACES for s in ("", "'", "2")]

MAX_RESCANS = 20
"""A person may ask for a new capture this many times in one scan."""


def doubtful_stickers(result: ScanResult, min_confidence: float) -> list[int]:
    """The stickers a person is asked about: the classifier's suspects and
    every sticker read with less than ``min_confidence``."""
    c = result.classification
    return sorted(set(c.suspects) | {i for i in range(54) if c.confidence[i] < min_confidence})


def trusted(result: ScanResult, min_confidence: float) -> bool:
    """The one rule every kind of rig acts on (``[start] min_confidence``):
    a valid cube, and no sticker a suspect or read with less confidence."""
    return result.classification.valid and not doubtful_stickers(result, min_confidence)


def confirms_solved(result: ScanResult, min_confidence: float) -> bool:
    """The one rule a confirmation scan is judged by, on every kind of rig:
    a trusted scan that reads the solved cube, or one in doubt that the
    solved cube explains (:func:`admits_solved`)."""
    if trusted(result, min_confidence):
        return result.facelets == SOLVED
    return admits_solved(result)


def why_in_doubt(result: ScanResult) -> str:
    """Why a scan is in doubt, in one phrase: not a valid cube (and why),
    the classifier's warnings, or else low confidence."""
    c = result.classification
    reasons = [f"the colours do not make a valid cube ({c.error})"] if c.error is not None else []
    reasons += c.warnings
    return "; ".join(reasons) or "low confidence"


@cache
def facelet_moves(move: str) -> tuple[int, ...]:
    """Where each facelet position goes when ``move`` is turned: found by
    turning a few random cubes and following every sticker."""
    cubes = [random_cube(seed).to_facelets() for seed in range(12)]
    after = [parse_facelets(c).apply(move).to_facelets() for c in cubes]
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
        if m[0] in {t[0] for t in tried}:  # the same face again would only undo or redo that turn
            continue
        dest = facelet_moves(m)
        moved = sum(dest[i] != i for i in doubt)
        other_camera = sum(camera.get(dest[i]) != camera.get(i) for i in doubt)
        score = (other_camera, moved, 0 if m.endswith("2") else 1)
        if moved and (best is None or score > best):
            best, choice = score, m
    return choice


def _stickers_of(views: list[ViewSpec]) -> np.ndarray:
    """(54,) True for the stickers the views show."""
    out = np.zeros(54, bool)
    for v in views:
        for f in v.faces:
            out[9 * FACES.index(f.face):9 * FACES.index(f.face) + 9] = True
    return out


def merge(earlier: ScanResult, moved: tuple[int, ...], later: ScanResult, fresh: np.ndarray) -> ScanResult:
    """``later`` with its classification replaced by both looks' (see
    :func:`vision.classifier.combine_looks`); ``later`` as it is when
    either look has no evidence to add (too few stickers seen)."""
    from vision.classifier import combine_looks  # lazy: loads numba

    a, b = earlier.classification, later.classification
    if a.evidence is None or b.evidence is None or not a.valid or not b.valid:
        return later
    both = combine_looks(a, moved, b, fresh)
    later.classification, later.facelets = both, both.facelets
    return later


def merge_recapture(earlier: ScanResult, later: ScanResult, views: list[ViewSpec]) -> ScanResult:
    """A re-capture of ``views`` combined with the capture before it: the
    stickers those views show were seen twice; the others are the same
    pictures and count once."""
    return merge(earlier, tuple(range(54)), later, _stickers_of(views))


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
        parse_facelets(facelets)
    except Exception:  # noqa: BLE001 - any invalid combination means: not settled
        return None, still or list(range(54))
    return facelets, still


def look_again(run: Run, result: ScanResult, doubt: list[int], *, rescan: Callable[[], ScanResult],
               doubtful: Callable[[ScanResult], list[int]],
               turn: Callable[[Run, str, str], None] | None = None) -> tuple[ScanResult, str] | None:
    """Turn up to ``[start] look_again`` faces to look at the doubtful stickers
    again: (the last scan, the cube as it now is) when that settles it,
    None when a person must (the faces turned are then turned back, and
    ``run.record.look_again_undone`` says which). Only a valid scan is
    acted on: turning a face of a cube read as invalid would journal a
    state nobody knows."""
    if not result.classification.valid:
        return None
    turn = turn or turn_face
    done: list[str] = []
    settled = _turn_and_look(run, result, doubt, turn, rescan, doubtful, done)
    if settled is not None:
        run.record.look_again_turns = done
        return settled
    if done:
        now = parse_facelets(result.facelets).apply(" ".join(done)).to_facelets()
        back = " ".join(_inverse(m) for m in reversed(done))
        run.emit("look-again", "scanning", f"scan: still in doubt after turning {' '.join(done)}; turning "
                 f"{back} to put the cube back", move=back)
        turn(run, now, back)
        run.record.look_again_undone = " ".join(done)
    return None


def _inverse(move: str) -> str:
    return move[0] + ("'" if len(move) == 1 else "" if move.endswith("'") else "2")


def _turn_and_look(run: Run, result: ScanResult, doubt: list[int], turn: Callable[[Run, str, str], None],
                   rescan: Callable[[], ScanResult], doubtful: Callable[[ScanResult], list[int]],
                   done: list[str]) -> tuple[ScanResult, str] | None:
    for _ in range(run.cfg.start.look_again):
        move = plan_turn(doubt, run.cfg.views, set(done))
        if move is None:
            return None
        done.append(move)
        names = ", ".join(position_name(i) for i in doubt[:8])
        run.emit("look-again", "scanning", f"scan: {len(doubt)} sticker(s) still in doubt ({names}); "
                 f"turning {move} to look again", move=move, doubtful=doubt)
        turn(run, result.facelets, move)
        second = rescan()
        if result.classification.evidence is not None and second.classification.evidence is not None:
            second = merge(result, facelet_moves(move), second, np.ones(54, bool))
            still = doubtful(second)
            if second.classification.valid and not still:
                return second, second.facelets
        else:  # no evidence to add up (too few stickers seen in a look): each look as it was
            facelets, still = combine(result, doubt, second, doubtful(second), move)
            if facelets is not None and not still:
                return second, facelets
            if facelets is None:
                return None
            second.facelets = facelets
        if not second.classification.valid:
            return None
        result, doubt = second, still
    return None


def turn_face(run: Run, facelets: str, move: str) -> None:
    """Turn ``move`` as a journalled job (the journal of the run's state
    folder), from the cube ``facelets`` as the scan reads it; each move a
    step of its own."""
    link = run.rig.link
    steps = motion.plan([(m,) for m in parse_moves(move)], link.config)
    with Journal(run.state_dir) as journal:
        job.run(link, journal, parse_facelets(facelets), steps)


def admits_solved(result: ScanResult | None) -> bool:
    """A doubtful confirmation scan that the solved cube explains: every
    sticker's evidence leaves its own face's colour plausible (the camera
    said nothing, or that colour costs at most
    :data:`vision.classifier.PLAUSIBLE_NATS` more than the best). The rig
    turned a solution it had checked; what the scan cannot rule out it has
    no reason to doubt. A scan that rules the solved cube out is not this."""
    from vision.classifier import PLAUSIBLE_NATS  # lazy: loads numba

    if result is None or result.classification.evidence is None:
        return False
    ev = result.classification.evidence
    own = ev[np.arange(54), np.arange(54) // 9]
    return bool((own - ev.min(axis=1) <= PLAUSIBLE_NATS).all())


def fixed_cube(facelets: str, emit: Callable[..., None]) -> str | None:
    """The cube a person fixed and accepted, when it is a valid one; else
    None, and ``emit`` tells the page why (``fix-invalid``) so that they can
    fix it again: the scan's question stays open."""
    try:
        parse_facelets(facelets)
    except CubeError as e:
        emit("fix-invalid", "needs_help", f"still not a valid cube: {e}", error=e.to_dict())
        return None
    return facelets


@dataclass(frozen=True)
class Asked:
    """What became of a scan put to a person: the scan as it stands, the
    cube to solve (None: not trusted), and why not (``nobody``: there is
    nobody to ask; ``stop``: they stopped, ``message`` their words;
    ``rescans``: they asked for new captures :data:`MAX_RESCANS` times;
    ``message`` says so)."""

    result: ScanResult
    facelets: str | None
    ended: str = ""
    message: str = ""


def ask_a_person(run: Run, purpose: str, result: ScanResult, *, trusted: Callable[[ScanResult], bool],
                 rescan: Callable[[], ScanResult], min_confidence: float) -> Asked:
    """A scan in doubt goes to a person, on every kind of rig alike (the
    panel; a headless terminal has nobody to ask): they fix stickers and
    accept, have the rig capture the cube again (``rescan``: the kind's way,
    new pictures of the views, or the faces shown to its camera again), or
    stop. ``trusted``: the kind's test of a scan that needs nobody."""
    rescans = 0
    while not trusted(result):
        doubt, why = doubtful_stickers(result, min_confidence), why_in_doubt(result)
        names = ", ".join(position_name(i) for i in doubt)
        run.emit("doubt", "needs_help", f"{purpose}: {len(doubt)} doubtful sticker(s) ({names}): {why}",
                 purpose=purpose, facelets=result.facelets, doubtful=doubt, why=why)
        while True:
            answer = run.face.ask(Doubt(purpose, result, doubt, why))
            run.check_stop()
            if answer is None:
                return Asked(result, None, "nobody")
            run.emit("answer", "scanning", action=answer.action)
            if answer.action == "stop":
                return Asked(result, None, "stop", answer.message)
            if answer.action == "rescan":
                if rescans == MAX_RESCANS:
                    return Asked(result, None, "rescans", f"still doubtful after {rescans} new captures")
                rescans += 1
                result = rescan()
                break
            fixed = fixed_cube(answer.facelets, run.emit)
            if fixed is not None:
                return Asked(result, fixed)
    return Asked(result, result.facelets)
