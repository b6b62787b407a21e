"""Where each sticker of a 2x2 (pocket) cube sits in its 24-character string.

Order is the 3x3's: four stickers a face, faces U R F D L B, each face read
row by row as the net draws it (U above F; L F R B in a row; D below F)::

              U1 U2
              U3 U4
        L1 L2 F1 F2 R1 R2 B1 B2
        L3 L4 F3 F4 R3 R4 B3 B4
              D1 D2
              D3 D4

A 2x2 has no centres, so nothing says which colour belongs to which face.
The DBL corner (down, back, left) is kept fixed: its D sticker's colour is
called D, its B sticker's colour B, its L sticker's L, and the colours
opposite those U, F and R. The solver then only turns U, R and F, which
never move that corner.
"""

from __future__ import annotations

from ..facelets import CORNER_FACELETS as CORNER_FACELETS_3
from ..facelets import CORNER_NAMES, FACES

__all__ = ["CORNER_FACELETS", "CORNER_NAMES", "FACES", "FIXED", "SOLVED", "position_name"]

SOLVED = "".join(f * 4 for f in FACES)

FIXED = CORNER_NAMES.index("DBL")
"""The corner slot kept fixed: its piece names the colours."""

_CORNER_OF_3 = {0: 0, 2: 1, 6: 2, 8: 3}  # 3x3 sticker in a face -> 2x2 sticker


def _from_3x3(index: int) -> int:
    return 4 * (index // 9) + _CORNER_OF_3[index % 9]


CORNER_FACELETS = tuple(tuple(_from_3x3(p) for p in stickers) for stickers in CORNER_FACELETS_3)
"""For each corner slot, its three stickers: the U/D one first, then
clockwise round the corner (the 3x3's corner order and names)."""


def position_name(index: int) -> str:
    """String index -> sticker name such as 'F3'."""
    return f"{FACES[index // 4]}{index % 4 + 1}"
