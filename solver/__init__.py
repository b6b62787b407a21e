"""The cube model and the two-phase solver. Knows nothing about robots."""

from .cubie import MOVE_CUBES, SOLVED_CUBE, Cube
from .errors import CubeError
from .facelets import FACES, SOLVED
from .metrics import axial_cost, group_steps
from .moves import Move, format_moves, htm, invert, parse_moves, qtm, simplify
from .scramble import random_cube, random_scramble
from .solve import Solution, prepare, solve
from .validate import normalize_facelets, parse_facelets

__all__ = [
    "Cube", "CubeError", "FACES", "MOVE_CUBES", "Move", "SOLVED", "SOLVED_CUBE",
    "format_moves", "htm", "invert", "normalize_facelets", "parse_facelets", "parse_moves",
    "qtm", "random_cube", "random_scramble", "simplify",
    "Solution", "axial_cost", "group_steps", "prepare", "solve",
]
