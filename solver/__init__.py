"""The cube model and the two-phase solver. Knows nothing about robots."""

from typing import TYPE_CHECKING, Any

from .cubie import MOVE_CUBES, SOLVED_CUBE, Cube
from .errors import CubeError, SolveError, SolverFault
from .facelets import FACES, SOLVED
from .metrics import Step, axial_cost, check_step, group_steps, parse_steps
from .moves import Move, format_moves, htm, invert, parse_moves, qtm, simplify
from .scramble import random_cube, random_scramble
from .validate import normalize_facelets, parse_facelets
from .workers import MAX_WORKERS, default_workers

MAX_CANDIDATES = 32
"""The most solutions one solve hands back (``solve(candidates=...)``)."""
MAX_SOLUTION_LENGTH = 100
"""The longest ``max_length`` anyone may ask of a solve."""
MAX_BUDGET_MS = 600_000.0
"""The longest time budget anyone may give a solve (10 minutes)."""

__all__ = [
    "MAX_BUDGET_MS", "MAX_CANDIDATES", "MAX_SOLUTION_LENGTH", "MAX_WORKERS",
    "Cube", "CubeError", "SolveError", "SolverFault", "FACES", "MOVE_CUBES", "Move", "SOLVED", "SOLVED_CUBE",
    "format_moves", "htm", "invert", "normalize_facelets", "parse_facelets", "parse_moves",
    "qtm", "random_cube", "random_scramble", "simplify",
    "Solution", "Step", "axial_cost", "check_step", "default_workers", "group_steps", "parse_steps",
    "prepare", "solve",
]

if TYPE_CHECKING:
    from .api import Solution, prepare, solve

_SEARCH = ("Solution", "prepare", "solve")


def __getattr__(name: str) -> Any:
    # The search pulls in numba (half a second to import); code that only
    # needs the cube model should not pay for it.
    if name in _SEARCH:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'solver' has no attribute {name!r}")

