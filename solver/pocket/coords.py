"""2x2 positions as numbers, and the move tables on them.

With the DBL corner fixed, a position is the arrangement of the other seven
corners (5040, ranked in lexicographic order) and the twists of six of them
(729; the seventh twist makes the sum a whole turn):
``index = perm * 729 + twist``, 0 for solved, 3,674,160 in all. Only U, R
and F turn (the moves that keep DBL in place): 9 face turns, of which the 6
quarter turns are the QTM moves.
"""

from __future__ import annotations

import itertools
from math import factorial

import numpy as np

from .cube import MOVES, PocketCube
from .facelets import FIXED

N_PERM = factorial(7)
N_TWIST = 3 ** 6
N_POSITIONS = N_PERM * N_TWIST

SLOTS = tuple(s for s in range(8) if s != FIXED)
"""The seven corner slots that move, in coordinate order."""

FACE_MOVES = (0, 1, 2, 3, 4, 5, 6, 7, 8)
"""Indices into :data:`MOVES` of U U2 U' R R2 R' F F2 F' (faces U R F are 0, 1, 2)."""
QUARTER_MOVES = (0, 2, 3, 5, 6, 8)
"""U U' R R' F F'."""


def _column(slot: int) -> int:
    return SLOTS.index(slot)


def all_perms() -> np.ndarray:
    """(5040, 7) int8: row k is the arrangement of rank k (piece columns as SLOTS)."""
    return np.array(list(itertools.permutations(range(7))), dtype=np.int8)


def rank_perms(perms: np.ndarray) -> np.ndarray:
    """Lexicographic rank of each row of a (n, 7) array of arrangements."""
    n = perms.shape[1]
    rank = np.zeros(len(perms), dtype=np.int64)
    for i in range(n):
        smaller_after = (perms[:, i + 1:] < perms[:, i:i + 1]).sum(axis=1)
        rank += smaller_after * factorial(n - 1 - i)
    return rank


def all_twists() -> np.ndarray:
    """(729, 7) int8: the twists of the seven moving slots for each twist number."""
    k = np.arange(N_TWIST)
    digits = np.stack([(k // 3 ** (5 - i)) % 3 for i in range(6)], axis=1)
    last = (-digits.sum(axis=1)) % 3
    return np.concatenate([digits, last[:, None]], axis=1).astype(np.int8)


def rank_twists(twists: np.ndarray) -> np.ndarray:
    weights = np.array([3 ** (5 - i) for i in range(6)], dtype=np.int64)
    return twists[:, :6].astype(np.int64) @ weights


def move_tables() -> tuple[np.ndarray, np.ndarray]:
    """(perm table (5040, 9), twist table (729, 9)), int16: the number after
    each of the 9 face moves, in the order of :data:`FACE_MOVES`."""
    perms, twists = all_perms(), all_twists()
    pm = np.empty((N_PERM, 9), dtype=np.int16)
    tm = np.empty((N_TWIST, 9), dtype=np.int16)
    for k, index in enumerate(FACE_MOVES):
        move = MOVES[index]
        src = [_column(move.cp[s]) for s in SLOTS]  # the moved slot each slot takes its piece from
        pm[:, k] = rank_perms(perms[:, src])
        add = np.array([move.co[s] for s in SLOTS], dtype=np.int8)
        tm[:, k] = rank_twists((twists[:, src] + add) % 3)
    return pm, tm


def to_index(cube: PocketCube) -> int:
    """The number of a cube whose DBL corner is in place and untwisted."""
    if cube.cp[FIXED] != FIXED or cube.co[FIXED]:
        raise ValueError("the DBL corner must be in place: name the colours by it (parse_pocket does)")
    pieces = [_column(cube.cp[s]) for s in SLOTS]
    perm = int(rank_perms(np.array([pieces]))[0])
    twist = int(rank_twists(np.array([[cube.co[s] for s in SLOTS]]))[0])
    return perm * N_TWIST + twist


def from_index(index: int) -> PocketCube:
    perm, twist = divmod(index, N_TWIST)
    pieces = next(itertools.islice(itertools.permutations(range(7)), perm, None))
    twists = all_twists()[twist]
    cp = [FIXED] * 8
    co = [0] * 8
    for column, slot in enumerate(SLOTS):
        cp[slot] = SLOTS[pieces[column]]
        co[slot] = int(twists[column])
    return PocketCube(tuple(cp), tuple(co))
