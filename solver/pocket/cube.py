"""The 2x2 at the cubie level: which corner piece is in each slot, and its twist.

A 2x2 is the corners of a 3x3, so its face turns are the corner parts of
the 3x3's (:data:`solver.cubie.MOVE_CUBES`), and its twist convention is
the 3x3's: 0 when the piece's U/D sticker faces U or D.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from ..cubie import MOVE_CUBES
from ..facelets import CORNER_COLORS
from ..moves import Move, parse_moves
from .facelets import CORNER_FACELETS, FIXED, SOLVED


@dataclass(frozen=True)
class PocketCube:
    """An immutable 2x2 state: ``cp[slot]`` is the piece there, ``co[slot]`` its twist."""

    cp: tuple[int, ...] = tuple(range(8))
    co: tuple[int, ...] = (0,) * 8

    def __mul__(self, other: PocketCube) -> PocketCube:
        """``self * other``: first ``self``, then ``other``."""
        cp = tuple(self.cp[other.cp[i]] for i in range(8))
        co = tuple((self.co[other.cp[i]] + other.co[i]) % 3 for i in range(8))
        return PocketCube(cp, co)

    def apply(self, moves: str | Iterable[Move]) -> PocketCube:
        """The state after face turns (any of the 18, in Singmaster notation)."""
        cube = self
        for m in parse_moves(moves):
            cube = cube * MOVES[m.index]
        return cube

    def to_facelets(self) -> str:
        f = list(SOLVED)
        for slot in range(8):
            piece, ori = self.cp[slot], self.co[slot]
            for n in range(3):
                f[CORNER_FACELETS[slot][(n + ori) % 3]] = CORNER_COLORS[piece][n]
        return "".join(f)

    def is_solved(self) -> bool:
        return self == SOLVED_POCKET

    def __str__(self) -> str:
        return self.to_facelets()


SOLVED_POCKET = PocketCube()

MOVES = tuple(PocketCube(m.cp, m.co) for m in MOVE_CUBES)
"""Index 3*face + (power-1), as :attr:`solver.moves.Move.index`."""


def random_pocket(seed: int | None = None) -> PocketCube:
    """A state drawn uniformly from the 3,674,160 positions with the DBL
    corner in place: any arrangement of the other seven, any twists whose
    sum is a whole turn."""
    rng = random.Random(seed)
    others = [p for p in range(8) if p != FIXED]
    rng.shuffle(others)
    cp = others[:FIXED] + [FIXED] + others[FIXED:]
    co = [rng.randrange(3) for _ in range(8)]
    co[FIXED] = 0
    last = 7 if FIXED != 7 else 6
    co[last] = 0
    co[last] = -sum(co) % 3
    return PocketCube(tuple(cp), tuple(co))
