"""Algorithm notation as people write it, turned into plain face turns.

Teachers' tables use wide turns (``r``, ``Rw``), slice turns (``M E S``) and
whole-cube rotations (``x y z``) because they are easy for hands. A robot (and
:class:`solver.Cube`, whose centres never move) only has the six face turns,
so each of these is rewritten as face turns plus a change of *frame*: which
real face now sits in each position (U R F D L B). Later turns are turned by
the face that is in their position, so ``y R`` becomes ``B``, and ``r`` (the
right two layers) becomes ``L`` with the frame turned as by ``x``.

The pieces end up relative to the centres exactly as on a hand-held cube; only
which way the whole cube faces may differ, and that is not a cube state.
"""

from __future__ import annotations

import re

from ..errors import CubeError
from ..moves import Move, simplify

FACES = "URFDLB"

# A rotation as "position -> the position whose face moves into it".
_ROTATIONS = {
    "x": {"U": "F", "F": "D", "D": "B", "B": "U"},
    "y": {"F": "R", "R": "B", "B": "L", "L": "F"},
    "z": {"U": "L", "L": "D", "D": "R", "R": "U"},
}

# Each wide or slice quarter turn as (face turns in the current frame, rotation).
# r = L x because x = R M' L' turns all three layers; M = R L' x', and so on.
_COMPOUND: dict[str, tuple[tuple[str, ...], str]] = {
    "r": (("L",), "x"), "l": (("R",), "x'"),
    "u": (("D",), "y"), "d": (("U",), "y'"),
    "f": (("B",), "z"), "b": (("F",), "z'"),
    "M": (("R", "L'"), "x'"), "E": (("U", "D'"), "y'"), "S": (("F'", "B"), "z"),
}

_TOKEN = re.compile(r"([URFDLBxyzMESurfdlb])(w?)(2'|2|'|3|)$")
_POWER = {"": 1, "2": 2, "2'": 2, "'": 3, "3": 3}


def _rotate(frame: dict[str, str], axis: str, times: int) -> dict[str, str]:
    for _ in range(times % 4):
        cycle = _ROTATIONS[axis]
        frame = {pos: frame[cycle.get(pos, pos)] for pos in FACES}
    return frame


def to_face_turns(alg: str) -> list[Move]:
    """Face turns (merged where they meet) doing what ``alg`` does.

    Accepts ``R U' R2``, ``r``/``Rw``/``Rw'``, ``M E S``, ``x y z`` with ``'``
    and ``2``; anything else raises :class:`CubeError` naming the token.
    """
    frame = {f: f for f in FACES}
    out: list[Move] = []

    def turn(face: str, power: int) -> None:
        out.append(Move(FACES.index(frame[face]), power % 4 or 4))

    for number, token in enumerate(alg.split(), start=1):
        m = _TOKEN.match(token)
        if m is None or (m.group(2) and m.group(1) not in FACES):
            raise CubeError("moves", f"bad move {token!r} (move {number}) in algorithm {alg!r}")
        letter, wide, suffix = m.groups()
        power = _POWER[suffix]
        if wide:
            letter = letter.lower()
        if letter in "xyz":
            frame = _rotate(frame, letter, power)
        elif letter in FACES:
            turn(letter, power)
        else:
            faces, rotation = _COMPOUND[letter]
            for _ in range(power):
                for f in faces:
                    turn(f[0], 3 if f.endswith("'") else 1)
                frame = _rotate(frame, rotation[0], 3 if rotation.endswith("'") else 1)
    return [m for m in simplify(out) if m.power]
