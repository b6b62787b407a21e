"""Showing each face to one fixed camera: the scan plan of a flipper or a
two-gripper rig.

A six-motor rig needs cameras that see every face; a rig that moves the
cube needs one, looking at one slot, and the rig shows it each face in
turn. Which face is in the camera's slot after each move, and how it is
turned in the picture, follows from the orientation the rig holds; the
plan is the cheapest sequence of moves (by the mechanism's timing table)
after which every face has been in front of the camera, found by the same
kind of shortest-path search as the solve plan, over (state, faces seen).

Each :class:`Shot` says which cube face the picture shows and by how many
quarter turns it is rotated from the face's own reading (the net of
:mod:`solver.facelets`), so the nine stickers measured in the camera's slot
can be put where they belong. The six pictures are then read as separate
faces (``faces_apart``: each in its own exposure), as photos are.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from .base import Action, Mechanism, State
from .orientation import HOME, HeldCube, Orientation, rotate
from .planner import apply_to_cube

CAMERA_SLOT = 0
"""The slot both example rigs' cameras look at: the top (U)."""


@dataclass(frozen=True)
class Shot:
    """One picture: the moves made before it, the cube face it shows and
    that face's rotation in the picture (clockwise quarter turns that bring
    the slot's reading to the face's own)."""

    before: tuple[Action, ...]
    face: int
    turns: int


@dataclass(frozen=True)
class ScanPlan:
    shots: tuple[Shot, ...]
    seconds: float
    end: State
    """The state the rig is in after the last picture: where the solve's plan starts."""


def rotate_grid(nine: list[int] | str, quarters: int) -> list:
    """A face's nine stickers turned ``quarters`` clockwise (as read row by row)."""
    g = list(nine)
    for _ in range(quarters % 4):
        g = [g[6], g[3], g[0], g[7], g[4], g[1], g[8], g[5], g[2]]
    return g


@cache
def _labels() -> str:
    return "".join(chr(0x100 + i) for i in range(54))


def _orient(mech: Mechanism, start: State | None) -> str:
    """Labelled stickers as the cube lies in ``start``: each sticker labelled
    with its place on the cube (the faces named by where they were at the
    mechanism's start, as the solver names them)."""
    if start is None:
        return HeldCube(_labels()).stickers
    return _orient_to(mech.orientation(start))


def seen(mech: Mechanism, path: tuple[Action, ...], slot: int = CAMERA_SLOT,
         start: State | None = None) -> tuple[int, int]:
    """``(face, turns)``: what the camera in ``slot`` sees after ``path`` from
    ``start`` (the mechanism's start when None), worked out on labelled
    stickers (not from the orientation arithmetic). The face is the one
    that was in that slot at the mechanism's start: the cube as scanned."""
    held: HeldCube = apply_to_cube(_orient(mech, start), path, mech, start)
    shown = [ord(c) - 0x100 for c in held.face(slot)]
    face = shown[4] // 9
    for q in range(4):
        if rotate_grid(shown, q) == list(range(9 * face, 9 * face + 9)):
            return face, q
    raise AssertionError("a face seen mirrored")  # pragma: no cover - rotations keep handedness


def _cheapest_showing(mech: Mechanism, start: State, progress: frozenset[int],
                      advance: Callable[[State, frozenset[int]], frozenset[int]],
                      finished: Callable[[frozenset[int]], bool],
                      ) -> tuple[list[tuple[tuple[State, frozenset[int]], Action]], float, State]:
    """The cheapest moves that turn no layer (Dijkstra by the mechanism's
    own timing) from ``start`` until ``finished(progress)``, where each
    state reached makes ``progress = advance(state, progress)``: the faces
    shown so far, or those still to show. Each step comes with the node it
    reaches, then the time they take and the state they end in."""
    first = (start, progress)
    best = {first: 0.0}
    back: dict = {}
    tie = itertools.count()
    heap = [(0.0, next(tie), first)]
    goal = None
    while heap:
        c, _, node = heapq.heappop(heap)
        if best[node] < c:
            continue
        state, got = node
        if finished(got):
            goal = node
            break
        for action, out in mech.steps(state):
            if out.turn is not None:
                continue  # a scan turns no layer
            nxt = (out.after, advance(out.after, got))
            if c + out.seconds < best.get(nxt, float("inf")):
                best[nxt] = c + out.seconds
                back[nxt] = (node, action)
                heapq.heappush(heap, (c + out.seconds, next(tie), nxt))
    assert goal is not None, "every mechanism can show every face, at every rotation"
    path: list[tuple[tuple[State, frozenset[int]], Action]] = []
    node = goal
    while node != first:
        prev, action = back[node]
        path.append((node, action))
        node = prev
    path.reverse()
    return path, best[goal], goal[0]


def scan_plan(mech: Mechanism, slot: int = CAMERA_SLOT, start: State | None = None) -> ScanPlan:
    """The cheapest moves that show the camera in ``slot`` all six faces."""
    s0 = mech.start() if start is None else start
    path, seconds, end = _cheapest_showing(mech, s0, frozenset({mech.orientation(s0)[slot]}),
                                           lambda state, faces: faces | {mech.orientation(state)[slot]},
                                           lambda faces: len(faces) == 6)
    shots = [Shot((), *seen(mech, (), slot, s0))]
    pending: list[Action] = []
    done: list[Action] = []
    got = {shots[0].face}
    for (state, _faces), action in path:
        pending.append(action)
        done.append(action)
        face = mech.orientation(state)[slot]
        if face not in got:
            got.add(face)
            shots.append(Shot(tuple(pending), *seen(mech, tuple(done), slot, s0)))
            pending = []
    return ScanPlan(tuple(shots), seconds, end)


@cache
def view_from(o: Orientation, slot: int = CAMERA_SLOT) -> tuple[int, int]:
    """``(face, turns)`` the camera in ``slot`` sees when the cube is held in
    ``o``: the whole rotation, hence the picture's, follows from the
    orientation alone (worked out on labelled stickers)."""
    held = HeldCube(_orient_to(o))
    shown = [ord(c) - 0x100 for c in held.face(slot)]
    face = shown[4] // 9
    for q in range(4):
        if rotate_grid(shown, q) == list(range(9 * face, 9 * face + 9)):
            return face, q
    raise AssertionError("a face seen mirrored")  # pragma: no cover


def _orient_to(target: Orientation) -> str:
    labels = HeldCube(_labels())
    paths: dict[Orientation, tuple[tuple[int, int], ...]] = {HOME: ()}
    todo = [HOME]
    while todo:
        cur = todo.pop(0)
        for s in range(3):
            n = rotate(cur, s, 1)
            if n not in paths:
                paths[n] = paths[cur] + ((s, 1),)
                todo.append(n)
    for s, q in paths[target]:
        labels.rotate(s, q)
    return labels.stickers


def rescan_plan(mech: Mechanism, start: State, shown: dict[int, set[int]],
                slot: int = CAMERA_SLOT) -> ScanPlan:
    """The cheapest moves that show the camera each face of ``shown`` turned
    in the picture a way it has not been shown yet (``shown[face]``: the
    turns already seen): glare and shadow that sit at one place in the
    picture then fall on other stickers of it."""
    def wanted(state: State, left: frozenset[int]) -> frozenset[int]:
        face, turns = view_from(mech.orientation(state), slot)
        return left - {face} if face in left and turns not in shown[face] else left

    path, seconds, end = _cheapest_showing(mech, start, wanted(start, frozenset(shown)), wanted,
                                           lambda left: not left)
    shots: list[Shot] = []
    pending: list[Action] = []
    to_show = set(shown)
    face, turns = view_from(mech.orientation(start), slot)
    if face in to_show and turns not in shown[face]:
        shots.append(Shot((), face, turns))
        to_show.discard(face)
    for (state, _), action in path:
        pending.append(action)
        face, turns = view_from(mech.orientation(state), slot)
        if face in to_show and turns not in shown[face]:
            shots.append(Shot(tuple(pending), face, turns))
            to_show.discard(face)
            pending = []
    return ScanPlan(tuple(shots), seconds, end)
