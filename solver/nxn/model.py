"""A cube of any size from 2x2 to 7x7 as 6*N*N stickers, and its moves.

Stickers are in the 3x3's order: faces U R F D L B, each read row by row as
the net draws it (U above F; L F R B in a row; D below F). Moves are WCA
notation: an outer turn ``R``, a wide turn of two layers ``Rw`` or of k
layers ``kRw``, a single inner layer ``kR`` (``2R`` is the layer next to R),
each with ``'`` (anticlockwise) or ``2`` (half turn), and the whole-cube
rotations ``x`` (as R), ``y`` (as U) and ``z`` (as F).

Each move is a permutation of the sticker positions, worked out once per
size from the geometry (each sticker a point in space, each move a quarter
turn of some of them about an axis) and kept; a sequence is applied by
composing those index arrays with numpy.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import CubeError

FACES = "URFDLB"
MIN_SIZE, MAX_SIZE = 2, 7
AXES = {"U": (0, 1, 0), "R": (1, 0, 0), "F": (0, 0, 1), "D": (0, -1, 0), "L": (-1, 0, 0), "B": (0, 0, -1)}
ROTATIONS = {"x": "R", "y": "U", "z": "F"}
_SUFFIX = {"": 1, "'": 3, "’": 3, "2": 2, "2'": 2, "2’": 2}
_TOKEN = re.compile(r"[^\s,]+")
_MOVE = re.compile(r"(?:([xyz])|(\d{1,2})?([URFDLB])(w)?)(2'|2’|2|'|’)?")


def check_size(n: int) -> int:
    """``n`` if it is a size this model handles, else ValueError."""
    if isinstance(n, bool) or not isinstance(n, int) or not MIN_SIZE <= n <= MAX_SIZE:
        raise ValueError(f"a cube size is a whole number from {MIN_SIZE} to {MAX_SIZE}, not {n!r}")
    return n


def solved(n: int) -> str:
    return "".join(f * (check_size(n) ** 2) for f in FACES)


def position_name(index: int, n: int) -> str:
    """String index -> sticker name: face letter and number in the face,
    row by row from 1 (``F5`` is a 3x3's front centre)."""
    return f"{FACES[index // (n * n)]}{index % (n * n) + 1}"


@dataclass(frozen=True)
class Turn:
    """Layers ``first`` to ``last`` (1 = the face itself) of ``face`` turned
    ``power`` quarter turns clockwise as seen from that face; ``face`` is
    x, y or z for a whole-cube rotation."""

    face: str
    first: int
    last: int
    power: int

    def inverse(self) -> Turn:
        return Turn(self.face, self.first, self.last, 4 - self.power)

    def __str__(self) -> str:
        suffix = ("", "", "2", "'")[self.power]
        if self.face in ROTATIONS:
            return self.face + suffix
        if self.first == self.last:
            return (str(self.first) if self.first > 1 else "") + self.face + suffix
        return (str(self.last) if self.last > 2 else "") + self.face + "w" + suffix


def parse_turns(text: str, n: int) -> list[Turn]:
    """Parse WCA moves for an ``n``-cube; a bad token raises CubeError
    (kind ``moves``) naming it, its number and its character offset."""
    check_size(n)
    turns: list[Turn] = []
    for number, match in enumerate(_TOKEN.finditer(text), start=1):
        token = match.group()
        m = _MOVE.fullmatch(token)
        where = f"move {number}, character {match.start() + 1}"
        if m is None:
            raise CubeError("moves", f"bad move {token!r} ({where}): expected a face U R F D L B, a wide turn"
                            " such as Rw or 3Rw, a layer such as 2R, or x y z, optionally followed by ' or 2",
                            [match.start()])
        rotation, layers, face, wide, suffix = m.groups()
        power = _SUFFIX[suffix or ""]
        if rotation:
            turns.append(Turn(rotation, 1, n, power))
            continue
        depth = int(layers) if layers else (2 if wide else 1)
        if not 1 <= depth <= n:
            raise CubeError("moves", f"bad move {token!r} ({where}): a {n}x{n} has layers 1 to {n}",
                            [match.start()])
        turns.append(Turn(face, 1, depth, power) if wide else Turn(face, depth, depth, power))
    return turns


def format_turns(turns: Iterable[Turn]) -> str:
    return " ".join(str(t) for t in turns)


def invert_turns(turns: Iterable[Turn]) -> list[Turn]:
    return [t.inverse() for t in reversed(list(turns))]


@functools.cache
def _geometry(n: int) -> tuple[np.ndarray, np.ndarray, dict[tuple[int, ...], int]]:
    """Each sticker's place (doubled coordinates: a face at +-n, a sticker's
    centre at odd offsets) and outward normal, and the index of each
    (place, normal). x points right (R), y up (U), z to the front (F)."""
    places, normals = [], []
    for face in FACES:
        for r in range(n):
            for c in range(n):
                a, b = 2 * c - (n - 1), 2 * r - (n - 1)  # across the face as drawn, down the face
                places.append({
                    "U": (a, n, b), "D": (a, -n, -b), "F": (a, -b, n),
                    "B": (-a, -b, -n), "R": (n, -b, -a), "L": (-n, -b, a),
                }[face])
                normals.append(AXES[face])
    p, q = np.array(places), np.array(normals)
    index = {tuple(p[i]) + tuple(q[i]): i for i in range(len(p))}
    return p, q, index


@functools.cache
def _quarter(n: int, face: str, first: int, last: int) -> np.ndarray:
    """The permutation (``new = old[perm]``) of a clockwise quarter turn."""
    places, normals, index = _geometry(n)
    axis = np.array(AXES[face])
    along = places @ axis
    layer = (n - 1 - np.clip(along, -(n - 1), n - 1)) // 2 + 1
    moving = (layer >= first) & (layer <= last)

    def turn(v: np.ndarray) -> np.ndarray:  # a quarter turn clockwise seen from the +axis side
        return -np.cross(axis, v) + axis * (v @ axis)[..., None]

    perm = np.arange(len(places))
    new_places, new_normals = turn(places[moving]), turn(normals[moving])
    for old, p, q in zip(np.flatnonzero(moving), new_places, new_normals, strict=True):
        perm[index[tuple(p) + tuple(q)]] = old
    return perm


@functools.cache
def permutation(n: int, turn: Turn) -> np.ndarray:
    """The sticker permutation of ``turn`` on an ``n``-cube (``new = old[perm]``)."""
    face = ROTATIONS.get(turn.face, turn.face)
    q = _quarter(n, face, turn.first, turn.last)
    perm = q
    for _ in range(turn.power - 1):
        perm = perm[q]
    perm.setflags(write=False)
    return perm


def sequence_permutation(n: int, turns: Iterable[Turn]) -> np.ndarray:
    """One permutation for a whole sequence, first turn first."""
    total = np.arange(6 * n * n)
    for t in turns:
        total = total[permutation(n, t)]
    return total


def apply_turns(facelets: str, n: int, turns: str | Iterable[Turn]) -> str:
    """The stickers after ``turns`` (WCA text or parsed). The stickers are
    moved as they are, whatever the symbols; the string must have 6*n*n."""
    check_size(n)
    if len(facelets) != 6 * n * n:
        raise CubeError("length", f"a {n}x{n} cube string has {6 * n * n} characters, this one has"
                        f" {len(facelets)}")
    parsed = parse_turns(turns, n) if isinstance(turns, str) else list(turns)
    perm = sequence_permutation(n, parsed)
    return "".join(np.array(list(facelets))[perm])


def scramble_length(n: int) -> int:
    """Moves in a default random-move scramble: 11 for the 2x2 up to 100 for
    the 7x7, as long as the usual competition scrambles of each size."""
    return {2: 11, 3: 25, 4: 40, 5: 60, 6: 80, 7: 100}[check_size(n)]


def random_turns(n: int, count: int, seed: int | None = None) -> list[Turn]:
    """``count`` random outer and wide turns (up to half the cube deep), never
    two in a row on one axis, so that nothing cancels."""
    check_size(n)
    if count < 0:
        raise ValueError("scramble length must not be negative")
    rng = random.Random(seed)
    turns: list[Turn] = []
    axis_of = {f: FACES.index(f) % 3 for f in FACES}
    while len(turns) < count:
        face = rng.choice(FACES)
        if turns and axis_of[turns[-1].face] == axis_of[face]:
            continue
        depth = rng.randint(1, max(1, n // 2))
        turns.append(Turn(face, 1, depth, rng.randint(1, 3)))
    return turns
