"""From a 24-character string to a :class:`~solver.pocket.cube.PocketCube`,
saying what is wrong and where when the string is not a real 2x2.

Checks run from the coarsest to the finest, as for the 3x3
(:mod:`solver.validate`): length, symbols, colour counts, each corner a real
piece, each piece once, and the corner twists adding up to whole turns. The
errors are :class:`~solver.errors.CubeError` with the 3x3's kinds and
positions that index the 24-character string.

With no centres, the colours are named by the fixed DBL corner (see
:mod:`solver.pocket.facelets`); the other three colours are the ones
opposite, and of the six ways to call them U, R and F the one under which
most corners are real pieces is taken, so that an error points at the
corners that are actually wrong.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from ..errors import CubeError
from ..facelets import CORNER_COLORS, OPPOSITE
from ..stickers import check_stickers
from .cube import PocketCube
from .facelets import CORNER_FACELETS, CORNER_NAMES, FACES, FIXED, position_name

SIZE = 24

# colours read from a slot's first sticker clockwise -> (piece, twist)
_LOOKUP = {tuple(colours[(n - ori) % 3] for n in range(3)): (piece, ori)
           for piece, colours in enumerate(CORNER_COLORS) for ori in range(3)}
_PIECE_SETS = {frozenset(c) for c in CORNER_COLORS}


def _names(positions: Iterable[int]) -> str:
    return ", ".join(position_name(p) for p in positions)


def normalize_pocket(facelets: str) -> str:
    """The cube in face letters, named by the fixed DBL corner. Checks
    length, symbols, counts and that every corner is a real piece."""
    s = check_stickers(facelets, 2)
    return name_colours(s)


def parse_pocket(facelets: str) -> PocketCube:
    """Validate ``facelets`` (any six symbols) and return the cube, named by
    the fixed DBL corner so that the DBL slot holds the DBL piece untwisted."""
    return parse_corners(normalize_pocket(facelets))


def parse_corners(named: str, place: Callable[[int], int] = int,
                  label: Callable[[int], str] = position_name) -> PocketCube:
    """The cube of 24 stickers already in face letters (by the fixed corner,
    or for a bigger cube by its centres): each corner a real piece, each
    piece once, twists adding up to whole turns. ``place`` maps a 2x2
    position to the one an error reports, ``label`` names a reported one
    (a bigger cube's corners report their own stickers)."""
    cp: list[int] = []
    co: list[int] = []
    where: dict[int, list[int]] = {}

    def at(slot: int) -> list[int]:
        return [place(p) for p in CORNER_FACELETS[slot]]

    for slot, stickers in enumerate(CORNER_FACELETS):
        seen = [named[p] for p in stickers]
        if tuple(seen) not in _LOOKUP:
            raise CubeError("corner-impossible",
                            f"corner {CORNER_NAMES[slot]} ({', '.join(label(p) for p in at(slot))}) shows"
                            f" {', '.join(seen)}: " + _why_impossible(seen), at(slot))
        piece, ori = _LOOKUP[tuple(seen)]
        where.setdefault(piece, []).append(slot)
        cp.append(piece)
        co.append(ori)
    for piece, slots in sorted(where.items()):
        if len(slots) > 1:
            missing = [CORNER_NAMES[p] for p in range(8) if p not in where]
            raise CubeError(
                "duplicate-piece",
                f"the {CORNER_NAMES[piece]} corner appears {len(slots)} times"
                f" (in {', '.join(CORNER_NAMES[s] for s in slots)}) and {', '.join(missing)} not at all",
                [p for s in slots for p in at(s)],
            )
    if sum(co) % 3:
        twisted = [s for s in range(8) if co[s]]
        raise CubeError(
            "corner-twist",
            f"a corner is twisted: the corner twists add up to {sum(co) % 3}/3 of a turn;"
            " twisted corners: " + ", ".join(CORNER_NAMES[s] for s in twisted),
            [p for s in twisted for p in at(s)],
        )
    return PocketCube(tuple(cp), tuple(co))


def name_colours(s: str, place: Callable[[int], int] = int,
                 label: Callable[[int], str] = position_name) -> str:
    """The 24 corner stickers ``s`` (six symbols, four of each) in face
    letters, named by the fixed DBL corner; CubeError if a corner cannot be
    a real piece under any naming. ``place`` and ``label`` as for
    :func:`parse_corners`."""

    def names(slot: int) -> str:
        return ", ".join(label(place(p)) for p in CORNER_FACELETS[slot])

    def at(slot: int) -> list[int]:
        return [place(p) for p in CORNER_FACELETS[slot]]

    d, b, l = (s[p] for p in CORNER_FACELETS[FIXED])
    if len({d, b, l}) < 3:
        raise CubeError("corner-impossible",
                        f"corner {CORNER_NAMES[FIXED]} ({names(FIXED)}) shows {d}, {b}, {l}: a corner has"
                        " three different colours (this corner names the colours, as it is kept fixed)",
                        at(FIXED))
    rest = [ch for ch in dict.fromkeys(s) if ch not in (d, b, l)]
    if len(rest) != 3:
        raise CubeError("count", f"the corners show {len(rest) + 3} colours, not 6",
                        [place(p) for p in range(SIZE)])
    best: str | None = None
    best_bad: list[int] = []
    for u, r, f in itertools.permutations(rest):
        to_face = {d: "D", b: "B", l: "L", u: "U", r: "R", f: "F"}
        named = "".join(to_face[ch] for ch in s)
        bad = [slot for slot, st in enumerate(CORNER_FACELETS) if tuple(named[p] for p in st) not in _LOOKUP]
        if best is None or len(bad) < len(best_bad):
            best, best_bad = named, bad
    assert best is not None
    if best_bad:
        slot = best_bad[0]
        seen = [best[p] for p in CORNER_FACELETS[slot]]
        symbol = {best[p]: s[p] for p in range(SIZE)}
        shown = ", ".join(s[p] for p in CORNER_FACELETS[slot])
        raise CubeError("corner-impossible",
                        f"corner {CORNER_NAMES[slot]} ({names(slot)}) shows {shown}: "
                        + _why_impossible(seen, symbol),
                        at(slot))
    return best


def _why_impossible(seen: list[str], symbol: dict[str, str] | None = None) -> str:
    """Why a corner showing faces ``seen`` is no piece; ``symbol`` gives the
    symbol the user wrote for each face letter, to speak of what they gave."""
    if any(ch not in FACES for ch in seen) or len(set(seen)) < 3:
        return "a corner has three different colours"
    for a, b in itertools.combinations(seen, 2):
        if OPPOSITE[a] == b:
            if symbol is not None:
                a, b = symbol[a], symbol[b]
            return f"two opposite colours ({a} and {b}) on one corner"
    if frozenset(seen) in _PIECE_SETS:
        return "its colours go round it in the wrong turning order (a mirror-image corner)"
    return "no corner piece has these colours"


__all__ = ["FACES", "SIZE", "name_colours", "normalize_pocket", "parse_corners", "parse_pocket"]
