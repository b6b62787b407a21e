"""Cubes of any size from 2x2 to 7x7: stickers, WCA moves, and the checks
that hold for every size."""

from .canonical import scrambled, turn
from .check import centre_positions, corner_positions, normalize
from .model import (
    MAX_SIZE,
    MIN_SIZE,
    Turn,
    apply_turns,
    check_size,
    format_turns,
    invert_turns,
    parse_turns,
    permutation,
    position_name,
    random_turns,
    scramble_length,
    sequence_permutation,
    solved,
)

__all__ = [
    "MAX_SIZE", "MIN_SIZE", "Turn", "apply_turns", "centre_positions", "check_size", "corner_positions",
    "format_turns", "invert_turns", "normalize", "parse_turns", "permutation", "position_name",
    "random_turns", "scramble_length", "scrambled", "sequence_permutation", "solved", "turn",
]
