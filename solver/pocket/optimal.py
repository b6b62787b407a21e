"""Optimal 2x2 solutions: walk down the distance table.

From the cube's position, some move leads to a position one nearer solved;
the table (distance mod 3) says which, so the walk takes exactly the
cube's distance in moves: an optimal answer in face turns (HTM, at most
11) or quarter turns (QTM, at most 14). The work is a few dozen table
reads: well under a millisecond once the table is loaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..errors import SolveError, SolverFault
from ..metrics import cost, group_steps
from ..moves import Move, format_moves, simplify
from ..solution import Solution as PocketSolution
from .coords import FACE_MOVES, N_TWIST, to_index
from .validate import parse_pocket

GODS_NUMBER = {"htm": 11, "qtm": 14}
"""The longest optimal 2x2 solution in each metric."""


class _Walker:
    """The loaded table of one metric as plain Python data, which reads
    faster one entry at a time than numpy does."""

    def __init__(self, tables: dict, metric: str):
        self.packed = bytes(tables[metric])
        self.perm_moves = tables["perm_moves"].tolist()
        self.twist_moves = tables["twist_moves"].tolist()
        moves = (0, 2, 3, 5, 6, 8) if metric == "qtm" else tuple(range(9))
        self.moves = [(column, FACE_MOVES[column]) for column in moves]

    def value(self, index: int) -> int:
        return (self.packed[index >> 2] >> ((index & 3) * 2)) & 3

    def walk(self, index: int, limit: int) -> list[int]:
        """Move indices from ``index`` down to solved (``limit`` steps at most)."""
        path: list[int] = []
        while index:
            if len(path) >= limit:
                raise SolverFault("the 2x2 table walk did not reach solved: the table is damaged")
            want = (self.value(index) - 1) % 3
            perm, twist = divmod(index, N_TWIST)
            for column, move in self.moves:
                nxt = self.perm_moves[perm][column] * N_TWIST + self.twist_moves[twist][column]
                if self.value(nxt) == want:
                    index = nxt
                    path.append(move)
                    break
            else:
                raise SolverFault("no move leads nearer solved in the 2x2 table: the table is damaged")
        return path


_walkers: dict[str, _Walker] = {}


def prepare(progress: Callable[[str], None] | None = None, metric: str = "htm") -> None:
    """Load (on first use: build, a second or two) the table of ``metric``."""
    if metric not in _walkers:
        from .tables import load

        _walkers[metric] = _Walker(load(progress), metric)


def solve(cube: str, *, metric: str = "htm", max_length: int | None = None) -> PocketSolution:
    """An optimal solution of a 2x2 (24 symbols, any six) in ``metric``
    (``htm`` or ``qtm``), turning only U, R and F so that the DBL corner,
    which names the colours, stays put. ``max_length``: SolveError if the
    optimal answer is longer. Every answer is applied to the cube before it
    is returned (SolverFault if it does not solve it)."""
    if metric not in GODS_NUMBER:
        raise ValueError(f"a 2x2 is solved in htm or qtm, not {metric!r}")
    prepare(metric=metric)
    t1 = time.perf_counter()
    parsed = parse_pocket(cube)
    path = [Move.from_index(m) for m in _walkers[metric].walk(to_index(parsed), GODS_NUMBER[metric])]
    path = simplify(path)  # in QTM a half turn is walked as two quarter turns: R R is written R2
    if not parsed.apply(path).is_solved():
        raise SolverFault(f"the 2x2 solution {format_moves(path)} does not solve the cube")
    if max_length is not None and len(path) > max_length:
        raise SolveError("max-length", f"the shortest solution has {len(path)} moves, more than"
                         f" --max-length {max_length}")
    return PocketSolution(format_moves(path), len(path), cost(path, metric),
                          (time.perf_counter() - t1) * 1000.0,
                          group_steps(path), metric)
