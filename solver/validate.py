"""From a facelet string to a :class:`~solver.cubie.Cube`, explaining every
way the string can fail to describe a real, solvable cube.

Checks run from the coarsest to the finest, so the first error reported is
the most basic thing wrong: length, symbols, centres, colour counts, each
corner and edge a real piece, each piece exactly once, then the three
invariants of a cube that can be solved by turning faces (corner twist,
edge flip, permutation parity).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from .cubie import Cube
from .errors import CubeError
from .facelets import (
    CENTERS,
    CORNER_COLORS,
    CORNER_FACELETS,
    CORNER_NAMES,
    EDGE_COLORS,
    EDGE_FACELETS,
    EDGE_NAMES,
    FACES,
    position_name,
)


def _names(positions: Iterable[int]) -> str:
    return ", ".join(position_name(p) for p in positions)


def normalize_facelets(facelets: str) -> str:
    """Translate any six symbols to face letters, the centres deciding which
    symbol is which face. Checks length, symbols, centres and counts."""
    if not isinstance(facelets, str):
        raise CubeError("length", f"a cube is a string of 54 characters, not {type(facelets).__name__}")
    s = facelets.strip()
    if len(s) != 54:
        raise CubeError("length", f"a cube string has 54 characters, this one has {len(s)}")
    centre_symbols = [s[c] for c in CENTERS]
    bad_ws = [i for i, ch in enumerate(s) if ch.isspace() or not ch.isprintable()]
    if bad_ws:
        raise CubeError("symbols", f"blank or unprintable character at {_names(bad_ws)}", bad_ws)
    if len(set(centre_symbols)) != 6:
        dup = [c for c in CENTERS if centre_symbols.count(s[c]) > 1]
        raise CubeError(
            "centers",
            "the six centres must all differ, but "
            + "; ".join(f"{position_name(c)} is {s[c]!r}" for c in dup),
            dup,
        )
    distinct = set(s)
    if len(distinct) > 6:
        unknown = [i for i, ch in enumerate(s) if ch not in centre_symbols]
        symbols = "".join(sorted(set(s[i] for i in unknown)))
        raise CubeError(
            "symbols",
            f"{len(distinct)} different symbols, but a cube has 6; {symbols!r} is on no centre"
            f" (at {_names(unknown)})",
            unknown,
        )
    to_face = {sym: FACES[k] for k, sym in enumerate(centre_symbols)}
    counts = Counter(s)
    wrong = [sym for sym in centre_symbols if counts[sym] != 9]
    if wrong:
        positions = [i for i, ch in enumerate(s) if ch in wrong]
        detail = ", ".join(f"{sym!r} (face {to_face[sym]}) {counts[sym]} times" for sym in wrong)
        raise CubeError("count", f"each colour must appear 9 times: {detail}", positions)
    return "".join(to_face[ch] for ch in s)


def parse_facelets(facelets: str) -> Cube:
    """Validate ``facelets`` and return the cube it describes."""
    f = normalize_facelets(facelets)
    cp, co = _corners(f)
    ep, eo = _edges(f)
    cube = Cube(tuple(cp), tuple(co), tuple(ep), tuple(eo))
    _check_invariants(cube)
    return cube


def _corners(f: str) -> tuple[list[int], list[int]]:
    lookup = {}
    for piece, colours in enumerate(CORNER_COLORS):
        for ori in range(3):
            # colours read clockwise starting at the sticker in the slot's first position
            lookup[tuple(colours[(n - ori) % 3] for n in range(3))] = (piece, ori)
    cp: list[int] = []
    co: list[int] = []
    where: dict[int, list[int]] = {}
    for slot, stickers in enumerate(CORNER_FACELETS):
        seen = tuple(f[p] for p in stickers)
        if seen not in lookup:
            raise CubeError(
                "corner-impossible",
                f"corner {CORNER_NAMES[slot]} ({_names(stickers)}) shows {', '.join(seen)}:"
                " no corner piece has these colours in this order",
                stickers,
            )
        piece, ori = lookup[seen]
        where.setdefault(piece, []).append(slot)
        cp.append(piece)
        co.append(ori)
    _check_once("corner", where, CORNER_NAMES, CORNER_FACELETS, 8)
    return cp, co


def _edges(f: str) -> tuple[list[int], list[int]]:
    lookup = {}
    for piece, colours in enumerate(EDGE_COLORS):
        lookup[colours] = (piece, 0)
        lookup[colours[::-1]] = (piece, 1)
    ep: list[int] = []
    eo: list[int] = []
    where: dict[int, list[int]] = {}
    for slot, stickers in enumerate(EDGE_FACELETS):
        seen = tuple(f[p] for p in stickers)
        if seen not in lookup:
            raise CubeError(
                "edge-impossible",
                f"edge {EDGE_NAMES[slot]} ({_names(stickers)}) shows {', '.join(seen)}:"
                " no edge piece has these colours",
                stickers,
            )
        piece, ori = lookup[seen]
        where.setdefault(piece, []).append(slot)
        ep.append(piece)
        eo.append(ori)
    _check_once("edge", where, EDGE_NAMES, EDGE_FACELETS, 12)
    return ep, eo


def _check_once(kind: str, where: dict[int, list[int]], names: Sequence[str],
                facelets: Sequence[Sequence[int]], n: int) -> None:
    for piece, slots in sorted(where.items()):
        if len(slots) > 1:
            missing = [names[p] for p in range(n) if p not in where]
            positions = [p for s in slots for p in facelets[s]]
            raise CubeError(
                "duplicate-piece",
                f"the {names[piece]} {kind} appears {len(slots)} times"
                f" (in {', '.join(names[s] for s in slots)}) and {', '.join(missing)} not at all",
                positions,
            )


def _check_invariants(cube: Cube) -> None:
    if sum(cube.co) % 3:
        twisted = [s for s in range(8) if cube.co[s]]
        positions = [p for s in twisted for p in CORNER_FACELETS[s]]
        raise CubeError(
            "corner-twist",
            "a corner is twisted: the corner twists add up to "
            f"{sum(cube.co) % 3}/3 of a turn; twisted corners: "
            + ", ".join(CORNER_NAMES[s] for s in twisted),
            positions,
        )
    if sum(cube.eo) % 2:
        flipped = [s for s in range(12) if cube.eo[s]]
        positions = [p for s in flipped for p in EDGE_FACELETS[s]]
        raise CubeError(
            "edge-flip",
            "an edge is flipped: an odd number of edges are flipped; flipped edges: "
            + ", ".join(EDGE_NAMES[s] for s in flipped),
            positions,
        )
    if cube.corner_parity() != cube.edge_parity():
        moved = [s for s in range(12) if cube.ep[s] != s]
        positions = [p for s in moved for p in EDGE_FACELETS[s]]
        raise CubeError(
            "parity",
            "permutation parity is wrong: two pieces are swapped"
            " (corner and edge permutations must be both even or both odd)",
            positions,
        )
