"""Random cubes: uniform random states, and random move sequences."""

from __future__ import annotations

import random

from .cubie import Cube, permutation_parity
from .moves import Move


def random_cube(seed: int | None = None) -> Cube:
    """A state drawn uniformly from all 43,252,003,274,489,856,000 reachable ones.

    Corner and edge permutations are drawn independently; when their parities
    disagree, swapping the last two edges fixes it, which maps the bad half of
    the draws one-to-one onto the good half and so keeps the draw uniform.
    Orientations are free except the last, which makes the sums come out right.
    """
    rng = random.Random(seed)
    cp = list(range(8))
    ep = list(range(12))
    rng.shuffle(cp)
    rng.shuffle(ep)
    if permutation_parity(cp) != permutation_parity(ep):
        ep[10], ep[11] = ep[11], ep[10]
    co = [rng.randrange(3) for _ in range(7)]
    co.append(-sum(co) % 3)
    eo = [rng.randrange(2) for _ in range(11)]
    eo.append(sum(eo) % 2)
    return Cube(tuple(cp), tuple(co), tuple(ep), tuple(eo))


def random_scramble(length: int, seed: int | None = None) -> list[Move]:
    """``length`` random face turns, never the same face twice in a row and
    never three on one axis (``U D U``), so that nothing cancels."""
    if length < 0:
        raise ValueError("scramble length must not be negative")
    rng = random.Random(seed)
    moves: list[Move] = []
    while len(moves) < length:
        face = rng.randrange(6)
        if moves and moves[-1].face == face:
            continue
        if (len(moves) >= 2 and moves[-1].face % 3 == face % 3
                and moves[-2].face == face):
            continue
        # keep opposite faces in one order (U before D) so no pair is counted twice
        if moves and moves[-1].face % 3 == face % 3 and moves[-1].face > face:
            continue
        moves.append(Move(face, rng.randrange(1, 4)))
    return moves
