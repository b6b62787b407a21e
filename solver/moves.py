"""Face turns in Singmaster notation: parsing, writing, inverting, simplifying.

A move is a face (U R F D L B) and a power: 1 = clockwise quarter turn,
2 = half turn, 3 = anticlockwise quarter turn (written ``'``). ``2'`` and
``3`` are accepted as aliases, and so is the typographic apostrophe that
word processors put into pasted sequences.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import CubeError
from .facelets import FACES, OPPOSITE

_SUFFIX = {"": 1, "1": 1, "2": 2, "2'": 2, "2’": 2, "'": 3, "’": 3, "3": 3, "3'": 1, "3’": 1}
_TOKEN = re.compile(r"[^\s,]+")


@dataclass(frozen=True, order=True)
class Move:
    face: int  # index into FACES
    power: int  # 1, 2 or 3 quarter turns clockwise

    @property
    def index(self) -> int:
        """0..17, the order used by move tables: U U2 U' R R2 R' ..."""
        return 3 * self.face + self.power - 1

    @property
    def letter(self) -> str:
        return FACES[self.face]

    @classmethod
    def from_index(cls, index: int) -> Move:
        return cls(index // 3, index % 3 + 1)

    def inverse(self) -> Move:
        return Move(self.face, 4 - self.power)

    def __str__(self) -> str:
        return FACES[self.face] + ("", "", "2", "'")[self.power]


def _what_is_wrong(face: str, suffix: str) -> str:
    """Why a token is not a move, in the words of the part that is wrong."""
    if face not in FACES:
        hint = " (wide, slice and whole-cube moves are not face turns: write them as face turns)" \
            if face in "urfdlbxyzMES" else ""
        return f"expected a face U R F D L B first{hint}"
    return (f"{suffix!r} after the face is not a turn: expected nothing (a quarter turn clockwise), "
            "' (anticlockwise), 2 (a half turn) or 3 (three quarters, the same as ')")


def parse_moves(text: str | Iterable[Move]) -> list[Move]:
    """Parse ``"R U2 F'"`` (spaces or commas between moves).

    A bad token raises :class:`CubeError` of kind ``moves`` naming the token,
    its number in the sequence and its character offset.
    """
    if not isinstance(text, str):
        return list(text)
    moves: list[Move] = []
    for number, match in enumerate(_TOKEN.finditer(text), start=1):
        token = match.group()
        face, suffix = token[:1], token[1:]
        if face not in FACES or suffix not in _SUFFIX:
            raise CubeError("moves", f"bad move {token!r} (move {number}, character {match.start() + 1}): "
                            f"{_what_is_wrong(face, suffix)}", [match.start()])
        moves.append(Move(FACES.index(face), _SUFFIX[suffix]))
    return moves


def format_moves(moves: Iterable[Move]) -> str:
    return " ".join(str(m) for m in moves)


def invert(moves: str | Iterable[Move]) -> list[Move]:
    """The sequence that undoes ``moves``."""
    return [m.inverse() for m in reversed(parse_moves(moves))]


def simplify(moves: str | Iterable[Move]) -> list[Move]:
    """Merge and cancel turns of the same face, also across a turn of the
    opposite face (which commutes with it): ``U D U'`` becomes ``D``."""
    out: list[Move] = []
    for m in parse_moves(moves):
        target = None
        if out and out[-1].face == m.face:
            target = len(out) - 1
        elif (len(out) >= 2 and out[-1].letter == OPPOSITE[m.letter]
              and out[-2].face == m.face):
            target = len(out) - 2
        if target is None:
            out.append(m)
            continue
        power = (out[target].power + m.power) % 4
        if power:
            out[target] = Move(m.face, power)
        else:
            del out[target]
    return out


def htm(moves: str | Iterable[Move]) -> int:
    """Half-turn metric: every face turn counts 1."""
    return len(parse_moves(moves))


def qtm(moves: str | Iterable[Move]) -> int:
    """Quarter-turn metric: half turns count 2."""
    return sum(2 if m.power == 2 else 1 for m in parse_moves(moves))
