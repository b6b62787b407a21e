"""The one way a cube of any size is written: its colours named by the
piece that names them, whatever has been turned.

A cube string is the cube as it is held, its stickers in the face order of
:mod:`solver.nxn.model`. Its symbols are colours, and the letters a command
prints name those colours by one rule (:func:`solver.nxn.normalize`):

* an odd cube by its centres: the colour of the centre that is on U is
  called U, and so on;
* an even cube, which has no fixed centres, by the corner that is at DBL
  (down, back, left): the colour of its D sticker is called D, of its B
  sticker B, of its L sticker L, and the colours opposite those U, F and R.

Every command reads a cube by that rule and prints it by the same rule, so
the printed string is canonical: reading it again changes nothing. When a
move carries the naming piece away (D, L or B on an even cube; a rotation or
a middle layer on an odd one), the next string names the colours by the
piece that has come to its place.

Why name again rather than turn the whole cube back until the old piece is
home: naming is a relabelling of colours and a move is a permutation of
places, and the two commute. So turning in two calls is turning in one,
``turn(turn(S, A), B) == turn(S, A + B)``, for every move, wide turn, slice
and rotation, and in particular a sequence followed by its inverse gives
back the very string it started from. Turning the cube back after a move
changes which layer the *next* move's letter means (after ``D``, ``R``
would turn the old front): either the moves stop meaning what WCA notation
says, or, turned back only at the end, a sequence's inverse no longer undoes
it (of 300 random cases of sizes 2 to 7, 169 did not).
"""

from __future__ import annotations

from collections.abc import Iterable

from .check import normalize
from .model import Turn, apply_turns, solved


def turn(facelets: str, n: int, turns: str | Iterable[Turn]) -> str:
    """The canonical string of the ``n``-cube ``facelets`` (any six symbols,
    checked as :func:`normalize` checks) after ``turns`` (WCA text or
    parsed). CubeError if the cube or the moves are wrong."""
    return normalize(apply_turns(normalize(facelets, n), n, turns), n)


def scrambled(n: int, turns: str | Iterable[Turn]) -> str:
    """The canonical string of a solved ``n``-cube after ``turns``: what
    ``scramble`` prints, and what ``apply`` gives for the same moves."""
    return turn(solved(n), n, turns)
