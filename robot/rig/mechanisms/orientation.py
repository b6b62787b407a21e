"""The cube held in a rig: its 24 orientations, whole-cube rotations and
layer turns, at the sticker level.

A six-motor rig never moves the cube, so the solver's faces are the rig's
faces. A flipper or a two-gripper rig turns the whole cube to bring a face
to the one place it can turn it, so the planner must know which of the
cube's faces sits in each of the rig's six places (*slots*). That is an
:data:`Orientation`: ``o[slot]`` is the cube face (by its centre) in that
slot, slots and faces both numbered like :data:`solver.FACES` (U R F D L B).

The geometry is computed, not tabulated: every sticker is a cubie position
and an outward normal in the rig's frame (x to R, y to U, z to F), a
rotation is an integer matrix, and a layer turn rotates the stickers of one
layer. The tests check the layer turns against the solver's own move
tables, so the two models cannot drift apart.
"""

from __future__ import annotations

from functools import cache

from solver import FACES, Move

Vec = tuple[int, int, int]
Orientation = tuple[int, int, int, int, int, int]
"""``o[slot]``: the cube face in each slot of the rig."""

HOME: Orientation = (0, 1, 2, 3, 4, 5)
"""The orientation the cube was scanned in: every face in its own slot."""

NORMALS: tuple[Vec, ...] = ((0, 1, 0), (1, 0, 0), (0, 0, 1), (0, -1, 0), (-1, 0, 0), (0, 0, -1))
"""Outward normal of each slot U R F D L B."""


def _sticker(face: int, r: int, c: int) -> tuple[Vec, Vec]:
    """Cubie position and normal of sticker (row r, column c) of ``face``, read
    as in the net of :mod:`solver.facelets`."""
    a, b = r - 1, c - 1
    pos: Vec = [(b, 1, a), (1, -a, -b), (b, -a, 1), (b, -1, -a), (-1, -a, b), (-b, -a, -1)][face]
    return pos, NORMALS[face]


STICKERS: tuple[tuple[Vec, Vec], ...] = tuple(_sticker(f, i // 3, i % 3) for f in range(6) for i in range(9))
_INDEX = {s: i for i, s in enumerate(STICKERS)}

Matrix = tuple[Vec, Vec, Vec]


def _mul(m: Matrix, v: Vec) -> Vec:
    return (sum(m[0][k] * v[k] for k in range(3)), sum(m[1][k] * v[k] for k in range(3)),
            sum(m[2][k] * v[k] for k in range(3)))


@cache
def clockwise(slot: int) -> Matrix:
    """A quarter turn clockwise as seen from outside ``slot`` (a rotation of
    -90 degrees about its normal, by the right-hand rule)."""
    n = NORMALS[slot]
    # R v = (v.n) n - n x v  for a rotation of -90 degrees about unit axis n
    cols = []
    for e in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
        d = sum(n[k] * e[k] for k in range(3))
        cross = (n[1] * e[2] - n[2] * e[1], n[2] * e[0] - n[0] * e[2], n[0] * e[1] - n[1] * e[0])
        cols.append(tuple(d * n[k] - cross[k] for k in range(3)))
    return ((cols[0][0], cols[1][0], cols[2][0]), (cols[0][1], cols[1][1], cols[2][1]),
            (cols[0][2], cols[1][2], cols[2][2]))


@cache
def sticker_perm(slot: int, quarters: int, whole: bool) -> tuple[int, ...]:
    """Where each sticker goes when ``slot`` turns ``quarters`` clockwise:
    its layer only, or the ``whole`` cube about that slot's axis.
    ``new[perm[i]] = old[i]``."""
    m = clockwise(slot)
    n = NORMALS[slot]
    out = []
    for pos, nor in STICKERS:
        if whole or sum(pos[k] * n[k] for k in range(3)) == 1:
            for _ in range(quarters % 4):
                pos, nor = _mul(m, pos), _mul(m, nor)
        out.append(_INDEX[(pos, nor)])
    return tuple(out)


def permute(stickers: str, perm: tuple[int, ...]) -> str:
    new = [""] * 54
    for i, j in enumerate(perm):
        new[j] = stickers[i]
    return "".join(new)


@cache
def rotate(o: Orientation, slot: int, quarters: int) -> Orientation:
    """The orientation after the whole cube turns ``quarters`` clockwise as
    seen from outside ``slot``."""
    m = clockwise(slot)
    new = list(o)
    for s in range(6):
        v = NORMALS[s]
        for _ in range(quarters % 4):
            v = _mul(m, v)
        new[NORMALS.index(v)] = o[s]
    return tuple(new)  # type: ignore[return-value]


@cache
def all_orientations() -> tuple[Orientation, ...]:
    """The 24 orientations, reached from :data:`HOME` by whole-cube turns."""
    seen = {HOME}
    todo = [HOME]
    while todo:
        o = todo.pop()
        for slot in range(3):
            n = rotate(o, slot, 1)
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return tuple(sorted(seen))


def face_move(o: Orientation, slot: int, quarters: int) -> Move:
    """The solver's move that a layer turn of ``slot`` by ``quarters``
    (clockwise seen from outside, signed) makes on the cube held in ``o``:
    clockwise is the same seen from outside whichever way the cube is held."""
    return Move(o[slot], quarters % 4)


def name(o: Orientation) -> str:
    """``o`` as text: the cube face in each slot U R F D L B (``URFDLB`` at home)."""
    return "".join(FACES[f] for f in o)


def parse(text: str) -> Orientation:
    """The inverse of :func:`name`; ValueError for a text that is no orientation."""
    if len(text) != 6 or set(text) != set(FACES):
        raise ValueError(f"not an orientation: {text!r} (six face letters, each once, e.g. URFDLB)")
    o = tuple(FACES.index(c) for c in text)
    if o not in all_orientations():
        raise ValueError(f"not an orientation a cube can be held in: {text!r} (a mirror image)")
    return o  # type: ignore[return-value]


class HeldCube:
    """The cube's stickers in the rig's frame (what a camera in a slot sees),
    changed by layer turns and whole-cube turns exactly as the rig changes
    them. The check of every plan, and the virtual mechanisms' cube."""

    def __init__(self, facelets: str):
        if len(facelets) != 54:
            raise ValueError("a cube is 54 stickers")
        self.stickers = facelets

    def turn(self, slot: int, quarters: int) -> None:
        self.stickers = permute(self.stickers, sticker_perm(slot, quarters % 4, False))

    def rotate(self, slot: int, quarters: int) -> None:
        self.stickers = permute(self.stickers, sticker_perm(slot, quarters % 4, True))

    def face(self, slot: int) -> str:
        """The nine stickers of the face in ``slot``, read as the net reads that slot."""
        return self.stickers[9 * slot: 9 * slot + 9]

    def is_solved(self) -> bool:
        return all(len(set(self.face(s))) == 1 for s in range(6))
