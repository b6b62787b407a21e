"""What can be checked of a cube string of any size, and its colours
named by face.

For the 2x2 and the 3x3 this is their full validation
(:mod:`solver.pocket.validate`, :mod:`solver.validate`). For bigger cubes:
the length, the symbols, each colour on N*N stickers, for an odd N the six
centres all different (they name the colours), for an even N the colours
named by the DBL corner as on a 2x2, and the eight corners real, distinct
pieces whose twists add up to whole turns (the corners of any cube move as
a 2x2's do). Edges and inner centres are not checked: a sticker string
does not say which of a big cube's look-alike pieces is which.
"""

from __future__ import annotations

from ..errors import CubeError
from ..pocket.validate import name_colours, parse_corners, parse_pocket
from ..stickers import check_stickers
from ..validate import normalize_facelets, parse_facelets
from .model import FACES, check_size, position_name


def corner_positions(n: int) -> list[int]:
    """The big cube's string position of each 2x2 sticker position."""
    m = n - 1
    return [f * n * n + (r * n + c) for f in range(6) for r, c in ((0, 0), (0, m), (m, 0), (m, m))]


def centre_positions(n: int) -> list[int]:
    """The middle sticker of each face (odd ``n`` only)."""
    return [f * n * n + (n * n) // 2 for f in range(6)]


def normalize(facelets: str, n: int) -> str:
    """Validate ``facelets`` as an ``n``-cube (see the module) and return it
    in face letters URFDLB, named by the centres or the DBL corner: the
    canonical string (:mod:`solver.nxn.canonical`), which this returns
    unchanged; CubeError says what is wrong and where."""
    check_size(n)
    if n == 2:
        parse_pocket(facelets)
        from ..pocket.validate import normalize_pocket

        return normalize_pocket(facelets)
    if n == 3:
        parse_facelets(facelets)
        return normalize_facelets(facelets)
    s = check_stickers(facelets, n)
    corners = corner_positions(n)

    def label(p: int) -> str:
        return position_name(p, n)

    if n % 2:
        to_face = _by_centres(s, n)
    else:
        named = name_colours("".join(s[p] for p in corners), corners.__getitem__, label)
        to_face = {s[p]: named[k] for k, p in enumerate(corners)}
    letters = "".join(to_face[ch] for ch in s)
    parse_corners("".join(letters[p] for p in corners), corners.__getitem__, label)
    return letters


def _names(positions: list[int], n: int) -> str:
    return ", ".join(position_name(p, n) for p in positions)


def _by_centres(s: str, n: int) -> dict[str, str]:
    centres = centre_positions(n)
    symbols = [s[c] for c in centres]
    if len(set(symbols)) != 6:
        dup = [c for c in centres if symbols.count(s[c]) > 1]
        raise CubeError("centers", "the six centres must all differ, but "
                        + "; ".join(f"{position_name(c, n)} is {s[c]!r}" for c in dup), dup)
    return {sym: FACES[k] for k, sym in enumerate(symbols)}
