"""The 2x2's distance tables: every position's distance from solved, in
face turns (HTM) and in quarter turns (QTM).

Built by a breadth-first search that takes a whole layer at a time with
numpy (about a second), then stored as distance mod 3 in two bits a
position (918,540 bytes a metric) in the cache directory, as the 3x3's
tables are (:mod:`solver.cache`). Mod 3 is enough to walk down: a move
changes the distance by at most one, so the neighbour whose value is one
less mod 3 is exactly one move nearer.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..cache import load_or_build
from .coords import FACE_MOVES, N_POSITIONS, N_TWIST, QUARTER_MOVES, move_tables

FILE = "pocket.tbl"
VERSION = 1
METRICS = {"htm": FACE_MOVES, "qtm": QUARTER_MOVES}
UNSEEN = 255


def distances(pm: np.ndarray, tm: np.ndarray, moves: tuple[int, ...]) -> np.ndarray:
    """uint8 distance of every position from solved using ``moves`` (columns
    of the move tables), one numpy step per layer of the search."""
    pm32 = pm.astype(np.int32)
    tm32 = tm.astype(np.int32)
    dist = np.full(N_POSITIONS, UNSEEN, dtype=np.uint8)
    dist[0] = 0
    frontier = np.array([0], dtype=np.int32)
    depth = 0
    while len(frontier):
        perm, twist = np.divmod(frontier, N_TWIST)
        reached = np.concatenate([pm32[perm, m] * N_TWIST + tm32[twist, m] for m in moves])
        reached = reached[dist[reached] == UNSEEN]
        depth += 1
        dist[reached] = depth
        frontier = np.flatnonzero(dist == depth).astype(np.int32)  # each new position once
    return dist


def pack(dist: np.ndarray) -> np.ndarray:
    """Distances mod 3, four to a byte (the first in the low bits)."""
    v = (dist % 3).astype(np.uint8).reshape(-1, 4)
    return (v[:, 0] | (v[:, 1] << 2) | (v[:, 2] << 4) | (v[:, 3] << 6)).astype(np.uint8)


def build(say: Callable[[str], None] | None = None) -> dict[str, np.ndarray]:
    """The table file's arrays: the move tables, and for each metric the
    packed distances and how many positions lie at each distance."""
    pm, tm = move_tables()
    arrays = {"perm_moves": pm, "twist_moves": tm}
    for metric, moves in METRICS.items():
        if say is not None:
            say(f"building the 2x2 {metric.upper()} distance table")
        dist = distances(pm, tm, moves)
        arrays[metric] = pack(dist)
        arrays[f"{metric}_counts"] = np.bincount(dist).astype(np.int64)
    return arrays


def load(progress: Callable[[str], None] | None = None) -> dict[str, np.ndarray]:
    """The tables, from the cache directory (built there on first use)."""
    return load_or_build(FILE, VERSION, lambda: build(progress), progress)
