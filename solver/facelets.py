"""The facelet level: where each sticker sits in the 54-character string.

Order is Kociemba's: U1..U9 R1..R9 F1..F9 D1..D9 L1..L9 B1..B9, each face read
row by row as drawn in the net below (U above F; L F R B in a row; D below F)::

                 U1 U2 U3
                 U4 U5 U6
                 U7 U8 U9
        L1 L2 L3 F1 F2 F3 R1 R2 R3 B1 B2 B3
        L4 L5 L6 F4 F5 F6 R4 R5 R6 B4 B5 B6
        L7 L8 L9 F7 F8 F9 R7 R8 R9 B7 B8 B9
                 D1 D2 D3
                 D4 D5 D6
                 D7 D8 D9

This module only knows geometry: which string positions form each corner and
edge slot, and the names used in messages.
"""

from __future__ import annotations

FACES = "URFDLB"
"""Face letters in string order; a face's index is its position here."""

OPPOSITE = {"U": "D", "D": "U", "R": "L", "L": "R", "F": "B", "B": "F"}

CENTERS = tuple(9 * f + 4 for f in range(6))
"""String positions of the six centre stickers."""

SOLVED = "".join(f * 9 for f in FACES)

CORNER_NAMES = ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB")
EDGE_NAMES = ("UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR")


def _pos(name: str) -> int:
    """'F3' -> string index."""
    return 9 * FACES.index(name[0]) + int(name[1]) - 1


# For each corner slot, its three stickers, starting with the U/D sticker and
# going clockwise around the corner.
CORNER_FACELETS = tuple(
    tuple(_pos(n) for n in names)
    for names in (
        ("U9", "R1", "F3"), ("U7", "F1", "L3"), ("U1", "L1", "B3"), ("U3", "B1", "R3"),
        ("D3", "F9", "R7"), ("D1", "L9", "F7"), ("D7", "B9", "L7"), ("D9", "R9", "B7"),
    )
)

# For each edge slot, its two stickers, U/D (or F/B for the middle layer) first.
EDGE_FACELETS = tuple(
    tuple(_pos(n) for n in names)
    for names in (
        ("U6", "R2"), ("U8", "F2"), ("U4", "L2"), ("U2", "B2"),
        ("D6", "R8"), ("D2", "F8"), ("D4", "L8"), ("D8", "B8"),
        ("F6", "R4"), ("F4", "L6"), ("B6", "L4"), ("B4", "R6"),
    )
)

# The colours (as face letters) of each corner and edge piece, in the same
# sticker order as its home slot.
CORNER_COLORS = tuple(tuple(n) for n in ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB"))
EDGE_COLORS = tuple(tuple(n) for n in EDGE_NAMES)


def position_name(index: int) -> str:
    """String index -> sticker name such as 'F3'."""
    return f"{FACES[index // 9]}{index % 9 + 1}"
