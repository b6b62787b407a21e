"""The cubie level: which piece sits in which slot, and how it is turned.

A :class:`Cube` holds, for each of the 8 corner slots, the piece in it (``cp``)
and its twist (``co``, 0..2), and for each of the 12 edge slots the piece
(``ep``) and its flip (``eo``, 0..1). Slot and piece numbering follow
:data:`solver.facelets.CORNER_NAMES` and :data:`~solver.facelets.EDGE_NAMES`.

This is the level at which moves are composed; the facelet string is only a
way of writing a cube down.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .facelets import CORNER_COLORS, CORNER_FACELETS, EDGE_COLORS, EDGE_FACELETS, FACES, SOLVED

if TYPE_CHECKING:
    from .moves import Move


@dataclass(frozen=True)
class Cube:
    """An immutable cube state at the cubie level."""

    cp: tuple[int, ...] = tuple(range(8))
    co: tuple[int, ...] = (0,) * 8
    ep: tuple[int, ...] = tuple(range(12))
    eo: tuple[int, ...] = (0,) * 12

    # -- composition -----------------------------------------------------
    def __mul__(self, other: Cube) -> Cube:
        """``self * other``: first ``self``, then ``other``."""
        cp = tuple(self.cp[other.cp[i]] for i in range(8))
        co = tuple((self.co[other.cp[i]] + other.co[i]) % 3 for i in range(8))
        ep = tuple(self.ep[other.ep[i]] for i in range(12))
        eo = tuple((self.eo[other.ep[i]] + other.eo[i]) % 2 for i in range(12))
        return Cube(cp, co, ep, eo)

    def inverse(self) -> Cube:
        cp = [0] * 8
        co = [0] * 8
        for i, p in enumerate(self.cp):
            cp[p] = i
        for i, p in enumerate(cp):
            co[i] = (-self.co[p]) % 3
        ep = [0] * 12
        eo = [0] * 12
        for i, p in enumerate(self.ep):
            ep[p] = i
        for i, p in enumerate(ep):
            eo[i] = self.eo[p]
        return Cube(tuple(cp), tuple(co), tuple(ep), tuple(eo))

    def apply(self, moves: str | Iterable[Move]) -> Cube:
        """The state after a move sequence (string or parsed moves)."""
        from .moves import parse_moves

        cube = self
        for m in parse_moves(moves) if isinstance(moves, str) else moves:
            cube = cube * MOVE_CUBES[m.index]
        return cube

    # -- facelets --------------------------------------------------------
    def to_facelets(self) -> str:
        f = list(SOLVED)
        for slot in range(8):
            piece, ori = self.cp[slot], self.co[slot]
            for n in range(3):
                f[CORNER_FACELETS[slot][(n + ori) % 3]] = CORNER_COLORS[piece][n]
        for slot in range(12):
            piece, ori = self.ep[slot], self.eo[slot]
            for n in range(2):
                f[EDGE_FACELETS[slot][(n + ori) % 2]] = EDGE_COLORS[piece][n]
        return "".join(f)

    def __str__(self) -> str:
        return self.to_facelets()

    # -- properties ------------------------------------------------------
    def is_solved(self) -> bool:
        return self == SOLVED_CUBE

    def corner_parity(self) -> int:
        return permutation_parity(self.cp)

    def edge_parity(self) -> int:
        return permutation_parity(self.ep)


def permutation_parity(perm: Sequence[int]) -> int:
    """0 for an even permutation, 1 for an odd one."""
    seen = [False] * len(perm)
    parity = 0
    for start in range(len(perm)):
        if seen[start]:
            continue
        length = 0
        i = start
        while not seen[i]:
            seen[i] = True
            i = perm[i]
            length += 1
        parity ^= (length - 1) & 1
    return parity


SOLVED_CUBE = Cube()

# The six clockwise quarter turns, as "piece that moves into slot i" tables.
_BASIC = {
    "U": Cube((3, 0, 1, 2, 4, 5, 6, 7), (0,) * 8,
              (3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11), (0,) * 12),
    "R": Cube((4, 1, 2, 0, 7, 5, 6, 3), (2, 0, 0, 1, 1, 0, 0, 2),
              (8, 1, 2, 3, 11, 5, 6, 7, 4, 9, 10, 0), (0,) * 12),
    "F": Cube((1, 5, 2, 3, 0, 4, 6, 7), (1, 2, 0, 0, 2, 1, 0, 0),
              (0, 9, 2, 3, 4, 8, 6, 7, 1, 5, 10, 11), (0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0)),
    "D": Cube((0, 1, 2, 3, 5, 6, 7, 4), (0,) * 8,
              (0, 1, 2, 3, 5, 6, 7, 4, 8, 9, 10, 11), (0,) * 12),
    "L": Cube((0, 2, 6, 3, 4, 1, 5, 7), (0, 1, 2, 0, 0, 2, 1, 0),
              (0, 1, 10, 3, 4, 5, 9, 7, 8, 2, 6, 11), (0,) * 12),
    "B": Cube((0, 1, 3, 7, 4, 5, 2, 6), (0, 0, 1, 2, 0, 0, 2, 1),
              (0, 1, 2, 11, 4, 5, 6, 10, 8, 9, 3, 7), (0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1)),
}


def _move_cubes() -> tuple[Cube, ...]:
    out = []
    for face in FACES:
        c = SOLVED_CUBE
        for _ in range(3):
            c = c * _BASIC[face]
            out.append(c)
    return tuple(out)


MOVE_CUBES = _move_cubes()
"""Index 3*face + (power-1): U, U2, U', R, R2, R', ..."""
