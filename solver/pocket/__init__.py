"""The 2x2 (pocket) cube: its model, validation, and an optimal solver.

The model and validation are plain Python; :func:`solve` loads a distance
table (built once, cached like the 3x3's) and is imported only when used.
"""

from typing import TYPE_CHECKING, Any

from .cube import MOVES, SOLVED_POCKET, PocketCube, random_pocket
from .facelets import CORNER_FACELETS, FIXED, SOLVED, position_name
from .validate import SIZE, normalize_pocket, parse_pocket

__all__ = [
    "CORNER_FACELETS", "FIXED", "MOVES", "SIZE", "SOLVED", "SOLVED_POCKET", "PocketCube",
    "PocketSolution", "normalize_pocket", "parse_pocket", "position_name", "random_pocket", "solve",
]

if TYPE_CHECKING:
    from .optimal import PocketSolution, solve


def __getattr__(name: str) -> Any:
    # the solver needs numpy and the table file; checking or drawing a cube does not
    if name in ("PocketSolution", "solve"):
        from . import optimal as module

        return getattr(module, name)
    raise AttributeError(f"module 'solver.pocket' has no attribute {name!r}")
