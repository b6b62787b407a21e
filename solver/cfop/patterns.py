"""How the rule tables write a case down, and how a cube is read against it.

Three kinds of pattern, each what a teacher's sheet would show:

* OLL: the top view, a picture of which last-layer stickers show the U colour
  (``X``) and which do not (``.``), five rows: the back side stickers, three
  rows of "left side, three top stickers, right side", the front side
  stickers (``XXX/.XXX./.XXX./.XXX./XXX`` would be impossible, the solved top is
  ``.../.XXX./.XXX./.XXX./...``).
* PLL: the twelve side stickers of the last layer, face by face F R B L, each
  face read left to right as you look at it, naming the face whose colour
  each sticker has (solved: ``FFF RRR BBB LLL``).
* F2L: where the front-right pair's corner is and which face its D-colour
  sticker looks at, and where its edge is and which face its F-colour sticker
  looks at: ``("URF", "R", "UB", "U")``.

Each pattern turns into a cube state (:func:`oll_cube`, :func:`pll_cube`,
:func:`f2l_cube`) so a test can apply the rule's algorithm to it, and each
stage reads a cube into a key (:func:`oll_key`, :func:`pll_key`,
:func:`f2l_key`) so the engine can look its case up.
"""

from __future__ import annotations

from ..cubie import SOLVED_CUBE, Cube, permutation_parity
from ..errors import CubeError
from ..facelets import CORNER_FACELETS, CORNER_NAMES, EDGE_FACELETS, EDGE_NAMES, FACES, SOLVED
from ..validate import parse_facelets

_OLL_ROWS = (("B3", "B2", "B1"),
             ("L1", "U1", "U2", "U3", "R3"),
             ("L2", "U4", "U5", "U6", "R2"),
             ("L3", "U7", "U8", "U9", "R1"),
             ("F1", "F2", "F3"))
_PLL_STICKERS = ("F1", "F2", "F3", "R1", "R2", "R3", "B1", "B2", "B3", "L1", "L2", "L3")

F2L_CORNER = 4  # the DFR piece: its home is the front-right slot's corner
F2L_EDGE = 8  # the FR piece


def _pos(name: str) -> int:
    return 9 * FACES.index(name[0]) + int(name[1]) - 1


def oll_picture(cube: Cube) -> str:
    """The top-view picture of a cube whose first two layers are solved."""
    marked = set()
    for slot in range(4):
        marked.add(CORNER_FACELETS[slot][cube.co[slot]])
        marked.add(EDGE_FACELETS[slot][cube.eo[slot]])
    marked.add(_pos("U5"))
    return "/".join("".join("X" if _pos(n) in marked else "." for n in row) for row in _OLL_ROWS)


def oll_cube(picture: str) -> Cube:
    """A cube (first two layers solved, pieces at home) with the picture's
    orientations; a picture that no cube can show raises :class:`CubeError`."""
    rows = picture.split("/")
    if [len(r) for r in rows] != [len(r) for r in _OLL_ROWS] or set(picture) - set("X./"):
        raise CubeError("symbols", f"OLL picture {picture!r}: five rows of 3, 5, 5, 5, 3 of X and .")
    marked = {_pos(n) for row, names in zip(rows, _OLL_ROWS) for ch, n in zip(row, names) if ch == "X"}
    co, eo = [0] * 8, [0] * 12
    for slot in range(4):
        for orient, facelets in ((co, CORNER_FACELETS[slot]), (eo, EDGE_FACELETS[slot])):
            hits = [k for k, f in enumerate(facelets) if f in marked]
            if len(hits) != 1:
                raise CubeError("symbols",
                                f"OLL picture {picture!r}: a piece shows the U colour {len(hits)} times")
            orient[slot] = hits[0]
    if _pos("U5") not in marked or sum(co) % 3 or sum(eo) % 2:
        raise CubeError("corner-twist", f"OLL picture {picture!r} is not a last layer any cube can have")
    return Cube(SOLVED_CUBE.cp, tuple(co), SOLVED_CUBE.ep, tuple(eo))


def oll_key(cube: Cube) -> tuple[int, ...]:
    """What OLL looks at: the twist of each top corner and flip of each top edge."""
    return cube.co[:4] + cube.eo[:4]


def pll_pattern(cube: Cube) -> str:
    """The side stickers of an oriented last layer, grouped F R B L."""
    f = cube.to_facelets()
    s = "".join(f[_pos(n)] for n in _PLL_STICKERS)
    return " ".join(s[i:i + 3] for i in range(0, 12, 3))


def pll_cube(pattern: str) -> Cube:
    """The cube (first two layers solved, top oriented) with those side stickers."""
    letters = pattern.replace(" ", "")
    if len(letters) != 12:
        raise CubeError("length", f"PLL pattern {pattern!r}: twelve side stickers, F R B L")
    f = list(SOLVED)
    for n, ch in zip(_PLL_STICKERS, letters):
        f[_pos(n)] = ch
    return parse_facelets("".join(f))


def pll_key(cube: Cube) -> tuple[int, ...]:
    """What PLL looks at: which top piece is in each top slot."""
    return cube.cp[:4] + cube.ep[:4]


def f2l_cube(pattern: tuple[str, str, str, str], rest: Cube = SOLVED_CUBE) -> Cube:
    """A cube with the front-right pair where the pattern puts it.

    The other first-two-layer pieces stay as in ``rest`` (solved by default)
    where they can; the top layer takes whatever pieces are left, twisted and
    flipped so that the cube is a real one.
    """
    corner_slot, corner_face, edge_slot, edge_face = pattern
    cs, es = CORNER_NAMES.index(corner_slot), EDGE_NAMES.index(edge_slot)
    co_target = [FACES[f // 9] for f in CORNER_FACELETS[cs]].index(corner_face)
    eo_target = [FACES[f // 9] for f in EDGE_FACELETS[es]].index(edge_face)
    cp, co, ep, eo = list(rest.cp), list(rest.co), list(rest.ep), list(rest.eo)
    _place(cp, co, F2L_CORNER, cs, co_target)
    _place(ep, eo, F2L_EDGE, es, eo_target)
    # The top layer absorbs what the placement broke: twist, flip, parity.
    co[0 if cs != 0 else 1] = 0
    co[0 if cs != 0 else 1] = -sum(co) % 3
    fix = 0 if es != 0 else 1
    eo[fix] = 0
    eo[fix] = sum(eo) % 2
    if permutation_parity(cp) != permutation_parity(ep):
        a, b = [s for s in range(4) if s != es][:2]
        ep[a], ep[b] = ep[b], ep[a]
        eo[a], eo[b] = eo[b], eo[a]
    return Cube(tuple(cp), tuple(co), tuple(ep), tuple(eo))


def _place(perm: list[int], orient: list[int], piece: int, slot: int, twist: int) -> None:
    """Put ``piece`` into ``slot`` by swapping it with what is there."""
    old = perm.index(piece)
    perm[old], perm[slot] = perm[slot], perm[old]
    orient[old], orient[slot] = orient[slot], twist


def f2l_key(cube: Cube) -> tuple[int, int, int, int]:
    """Where the front-right pair is: corner slot, its twist, edge slot, its flip."""
    cs, es = cube.cp.index(F2L_CORNER), cube.ep.index(F2L_EDGE)
    return cs, cube.co[cs], es, cube.eo[es]


def f2l_pattern(key: tuple[int, int, int, int]) -> tuple[str, str, str, str]:
    """The pattern written for a key (the inverse of reading :func:`f2l_cube`)."""
    cs, co, es, eo = key
    return (CORNER_NAMES[cs], FACES[CORNER_FACELETS[cs][co] // 9],
            EDGE_NAMES[es], FACES[EDGE_FACELETS[es][eo] // 9])
