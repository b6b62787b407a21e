"""Robot moves by hand on a flipper or two-gripper rig (``cuberobot jog``):
for a maker checking a part after building or adjusting it.

A jog starts from the rig's home (the state a job starts in, where
:meth:`~.drive.LinkMechanism.home` brings the servos), so every move can be
checked against the rig's rules before anything moves: a turn with the
cover open, a flip with it closed, or a gripper opened while the other is
open is refused with the rule it breaks, and nothing moves. A two-gripper
jog must leave both grippers' jaws square: a stepper has no home switch,
and the next job assumes square jaws.

A jog of servo angles (``servo cover 95``) sets servos to angles the maker
is trying, to find the named angles of ``[servos.*]`` (open, closed, rest,
flip...) on the rig as built: bounded by each servo's range, made after
homing, and on their own, since after an angle the config does not name the
rig is in no state the rules know. The next job homes the rig as always.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..config import Config
from ..errors import UserError
from .base import Action, ImpossibleMove, Mechanism, State
from .grippers import GRIPPERS

MAX_JOG_MOVES = 40
"""The most robot moves one jog may make."""
MAX_JOG_TEXT = 1000
"""The longest list of moves, in characters."""

EXAMPLES = {
    "flipper": "flip, spin +1, close cover, turn -1, open cover",
    "two-gripper": "open D, rotate L +1, close D, rotate D 2",
}
"""An example of each kind's robot moves, for messages."""
WORDS = {"flipper": ("flip", "spin", "turn", "open", "close"), "two-gripper": ("open", "close", "rotate")}
"""The kinds of robot move each kind of rig makes."""


SERVO_EXAMPLE = {"flipper": "servo cover 95", "two-gripper": "servo grip_D 45"}
"""An example of each kind's servo angle jog, for messages."""


@dataclass(frozen=True)
class ServoAngle:
    """One servo set by hand: its name, the angle and the pulse that holds it."""

    servo: str
    deg: float
    pulse_us: int

    def __str__(self) -> str:
        return f"servo {self.servo} {self.deg:g}"


@dataclass(frozen=True)
class ServoJog:
    """Servo angles set by hand after homing, in order."""

    angles: tuple[ServoAngle, ...]


@dataclass(frozen=True)
class Jog:
    """Robot moves checked from the rig's home: each with the state after it."""

    actions: tuple[Action, ...]
    states: tuple[State, ...]
    layer_turns: int


def parse_move(text: str) -> Action:
    """One robot move as people write it and the journal does: a kind, the
    part when there are several (``cover``, ``D``, ``L``) and quarter turns
    with or without a sign (``spin 1``, ``rotate D -2``)."""
    words = text.split()
    if not words or len(words) > 3:
        raise ValueError("a robot move is a kind, maybe a part and quarter turns")
    quarters = 0
    if re.fullmatch(r"[+-]?[0-9]+", words[-1]):
        if len(words[-1].lstrip("+-")) > 2:
            raise ValueError(f"{words[-1][:12]} quarter turns: a move turns 1 or 2 quarters either way")
        quarters = int(words.pop())
    if len(words) > 2:
        raise ValueError("a robot move is a kind, maybe a part and quarter turns")
    part = words[1] if len(words) > 1 else ""
    return Action(words[0].lower(), part.upper() if len(part) == 1 else part.lower(), quarters)


def check_any_jog(config: Config, mech: Mechanism, text: str) -> Jog | ServoJog:
    """Servo angles (``servo cover 95, ...``) or robot moves, checked."""
    first = text.split(",", 1)[0].split()
    if first and first[0].lower() == "servo":
        return check_servo_jog(config, text)
    return check_jog(mech, text)


def check_servo_jog(config: Config, text: str) -> ServoJog:
    """The angles of ``text`` (``servo NAME DEGREES``, separated by commas),
    each within its servo's range; a :class:`UserError` naming the first
    that is not."""
    kind = config.rig.kind
    names = {n.lower(): n for n in config.servos}
    if len(text) > MAX_JOG_TEXT:
        raise UserError(f"the servo angles are {len(text)} characters; at most {MAX_JOG_TEXT}")
    pieces = [p.strip() for p in text.split(",")]
    if len(pieces) > MAX_JOG_MOVES:
        raise UserError(f"{len(pieces)} servo angles: a jog sets at most {MAX_JOG_MOVES}")
    angles = []
    for n, piece in enumerate(pieces, 1):
        where = f"servo angle {n} ({piece[:30]!r})"
        words = piece.split()
        if not words or words[0].lower() != "servo":
            raise UserError(f"{where}: servo angles are set on their own, not among robot moves (after an "
                            "angle the rig is in no state its rules know); send the robot moves as a jog of "
                            "their own")
        if len(words) != 3:
            raise UserError(f"{where}: a servo angle is 'servo NAME DEGREES', e.g. "
                            f"{SERVO_EXAMPLE.get(kind)!r}")
        name = names.get(words[1].lower())
        if name is None:
            raise UserError(f"{where}: a {kind} rig has the servos {', '.join(config.servos)}")
        sc = config.servos[name]
        try:
            deg = float(words[2].removesuffix("°"))
        except ValueError:
            deg = math.nan
        if not math.isfinite(deg) or not 0.0 <= deg <= sc.range_deg:
            raise UserError(f"{where}: the angle must be a number of degrees from 0 to {sc.range_deg:g} "
                            f"(the servo's range_deg)")
        angles.append(ServoAngle(name, deg, sc.pulse_us(deg)))
    return ServoJog(tuple(angles))


def check_jog(mech: Mechanism, text: str) -> Jog:
    """The moves of ``text`` (separated by commas) made from ``mech``'s home,
    each checked by its rules; a :class:`UserError` naming the first move
    that is not one, or that the rig cannot make there, and why."""
    example = EXAMPLES.get(mech.kind, "")
    if len(text) > MAX_JOG_TEXT:
        raise UserError(f"the robot moves are {len(text)} characters; at most {MAX_JOG_TEXT}")
    pieces = [p.strip() for p in text.split(",")]
    if len(pieces) > MAX_JOG_MOVES:
        raise UserError(f"{len(pieces)} robot moves: a jog makes at most {MAX_JOG_MOVES}")
    state, layers = mech.start(), 0
    actions: list[Action] = []
    states: list[State] = []
    for n, piece in enumerate(pieces, 1):
        where = f"robot move {n} ({piece[:30]!r})"
        try:
            action = parse_move(piece)
            if action.kind == "servo":
                raise ValueError("servo angles are set on their own, not among robot moves (after an angle "
                                 "the rig is in no state its rules know)")
            if action.kind not in WORDS.get(mech.kind, ()):
                raise ValueError(f"a {mech.kind} rig has no move {action.kind!r}")
        except ValueError as e:
            raise UserError(f"{where}: {e}; on a {mech.kind} rig for example: {example}") from None
        if mech.kind == "flipper" and action.kind in ("open", "close") and not action.part:
            action = Action(action.kind, "cover")  # the flipper's one part that opens
        try:
            out = mech.apply(state, action)
            if action not in mech.actions(state):  # a part the rig does not have, say
                raise ImpossibleMove(f"a {mech.kind} rig has no move {action}")
        except ImpossibleMove as e:
            raise UserError(f"{where}: the rig cannot make it after {_after(actions)}: {e}; nothing was "
                            "moved") from None
        state = out.after
        actions.append(action)
        states.append(state)
        layers += out.turn is not None
    if mech.kind == "two-gripper":
        across = [g for g, s in zip(GRIPPERS, state[1:], strict=True) if s[1]]
        if across:
            raise UserError(f"these robot moves leave gripper {' and '.join(across)}'s jaws across: the "
                            "next job needs them square (the stepper has no home), so end with another "
                            "odd rotation of it; nothing was moved")
    return Jog(tuple(actions), tuple(states), layers)


def _after(actions: list[Action]) -> str:
    """The moves before the one refused, the last three of them."""
    if not actions:
        return "homing"
    return ("..., " if len(actions) > 3 else "") + ", ".join(str(a) for a in actions[-3:])
