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

from solver import Move

from ..config import Config
from ..errors import UserError
from .base import Action, ImpossibleMove, Mechanism, State
from .grippers import GRIPPERS
from .orientation import face_move

MAX_JOG_MOVES = 40
"""The most robot moves one jog may make."""
MAX_JOG_TEXT = 1000
"""The longest list of moves, in characters."""

EXAMPLES = {
    "flipper": "flip, spin +1, close cover, turn -1, open cover",
    "two-gripper": "open D, rotate L +1, close D, open L, rotate L -1, close L, rotate D 2",
}
"""An example of each kind's robot moves, for messages."""


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

    def follow(self, mech: Mechanism, before: State) -> tuple[list[Move], State] | None:
        """What the jog does to the cube from the rig's whole state
        ``before`` it (where the last run or jog left the cube and the
        parts, not necessarily home): the homing first, then these moves.
        The face turns they make, in the cube's own letters, and the state
        they leave; None when homing cannot be followed from ``before``."""
        state = mech.homed(before)
        if state is None:
            return None
        moves: list[Move] = []
        for action in self.actions:
            out = mech.apply(state, action)
            if out.turn is not None:
                moves.append(face_move(mech.orientation(state), *out.turn))
            state = out.after
        return moves, state


QUARTERS = (-2, -1, 1, 2)
"""The quarter turns one robot move makes, on either kind of rig."""
QUARTERS_TEXT = "-2, -1, +1 or +2"


@dataclass(frozen=True)
class _Form:
    """How one kind of robot move is written: the parts it may name (the
    first is the one meant when none is named, if naming one is optional),
    whether it must name one, whether it takes quarter turns, and how to
    write it, for messages."""

    parts: tuple[str, ...]
    part_needed: bool
    quarters: bool
    usage: str


FORMS: dict[str, dict[str, _Form]] = {
    "flipper": {
        "flip": _Form(("", "close"), False, False, "'flip', or 'flip close' where the cover flips the cube"),
        "spin": _Form((), False, True, "'spin' and quarter turns, e.g. 'spin +1'"),
        "turn": _Form((), False, True, "'turn' and quarter turns, e.g. 'turn -1'"),
        "open": _Form(("cover",), False, False, "'open' or 'open cover'"),
        "close": _Form(("cover",), False, False, "'close' or 'close cover'"),
    },
    "two-gripper": {
        "open": _Form(GRIPPERS, True, False, "'open' and a gripper, e.g. 'open D'"),
        "close": _Form(GRIPPERS, True, False, "'close' and a gripper, e.g. 'close D'"),
        "rotate": _Form(GRIPPERS, True, True, "'rotate', a gripper and quarter turns, e.g. 'rotate D -1'"),
    },
}
"""How each kind of rig's robot moves are written."""
WORDS = {kind: tuple(forms) for kind, forms in FORMS.items()}
"""The kinds of robot move each kind of rig makes."""
TURNS = {"flipper": "the turntable", "two-gripper": "a gripper"}
"""What turns by quarters on each kind of rig, for messages."""
SERVO_AMONG_MOVES = ("servo angles are set on their own, not among robot moves (after an angle the rig is in "
                     "no state its rules know)")


class NoSuchMove(ValueError):
    """A robot move of a kind the rig does not make."""


def _is_count(word: str) -> bool:
    """Whether ``word`` was meant as quarter turns (a number, right or wrong)."""
    return word in ("+", "-") or any(c.isdigit() for c in word)


def _shown(word: str) -> str:
    """A word typed by the user, quoted as typed (cut short if very long)."""
    return repr(word if len(word) <= 20 else word[:20] + "...")


def parse_move(text: str, kind: str) -> Action:
    """One robot move of a ``kind`` rig as people write it and the journal
    does: a kind, the part when there are several (``cover``, ``D``, ``L``)
    and quarter turns with or without a sign (``spin 1``, ``rotate D -2``).
    Words match in any case. A :class:`ValueError` names what is wrong,
    quoting the words as typed; the quarters' value is checked here, the
    rest of the rig's rules by the mechanism."""
    forms = FORMS.get(kind, {})
    words = text.split()
    if not words:
        raise ValueError("there is no move here")
    head, rest = words[0], words[1:]
    if head.lower() == "servo":
        raise ValueError(SERVO_AMONG_MOVES)
    form = forms.get(head.lower())
    if form is None:
        raise NoSuchMove(f"a {kind} rig has no move {_shown(head)}")
    part = form.parts[0] if form.parts and not form.part_needed else ""
    # a part that may be left out is named when the word is one (a flip's
    # "close"), or taken as the one meant when the form has a default one
    optional = form.parts and rest and not _is_count(rest[0]) and (
        bool(form.parts[0]) or rest[0].lower() in form.parts)
    if form.part_needed or optional:
        parts = {p.lower(): p for p in form.parts}
        if not rest:
            raise ValueError(f"{_shown(head)} needs a gripper, {' or '.join(form.parts)}: write {form.usage}")
        if rest[0].lower() in parts:
            part = parts[rest.pop(0).lower()]
        elif not form.part_needed:
            raise ValueError(f"a {kind} rig {head.lower()}s only its {part}, not {_shown(rest[0])}: write "
                             f"{form.usage}")
        elif form.quarters and _is_count(rest[0]):
            raise ValueError(f"{_shown(head)} needs a gripper, {' or '.join(form.parts)}, before the "
                             f"quarters: write {form.usage}")
        else:
            raise ValueError(f"no gripper {_shown(rest[0])}: the grippers are {' and '.join(form.parts)}; "
                             f"write {form.usage}")
    quarters = 0
    if form.quarters:
        said = " ".join(words[: len(words) - len(rest)])
        if not rest:
            raise ValueError(f"{_shown(said)} needs quarter turns, {QUARTERS_TEXT}, e.g. "
                             f"{_shown(said + ' +1')}")
        if rest[0] in ("+", "-") and len(rest) > 1:
            raise ValueError(f"the sign goes against the number: {_shown(rest[0] + rest[1])}, not "
                             f"{_shown(rest[0] + ' ' + rest[1])}")
        if len(rest) > 1 and not _is_count(rest[0]) and _is_count(rest[1]):
            raise ValueError(f"{_shown(head)} names no part, not {_shown(rest[0])}: write {form.usage}")
        q = rest.pop(0)
        if not re.fullmatch(r"[+-]?[0-9]+", q):
            raise ValueError(f"the quarters must be a whole number: {QUARTERS_TEXT}, not {_shown(q)}")
        if len(q.lstrip("+-")) > 2:
            raise ValueError(f"{q[:12]}{'...' if len(q) > 12 else ''} quarter turns: a move turns 1 or 2 "
                             f"quarters either way: {QUARTERS_TEXT}")
        quarters = int(q)
        if quarters not in QUARTERS:
            raise ValueError(f"{TURNS.get(kind, 'a move')} turns 1 or 2 quarters either way, not {q}: write "
                             f"{QUARTERS_TEXT}")
    if rest:
        said = " ".join(words[: len(words) - len(rest)])
        raise ValueError(f"too many words: {_shown(' '.join(rest))} after {_shown(said)}; a robot move is a "
                         f"kind, maybe a part and quarter turns: write {form.usage}, and put a comma between "
                         "moves")
    return Action(head.lower(), part, quarters)


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
        if not words:
            raise UserError(f"{where}: {_empty(n, len(pieces), 'servo angle')}; e.g. "
                            f"{SERVO_EXAMPLE.get(kind)!r}")
        if words[0].lower() != "servo":
            raise UserError(f"{where}: {SERVO_AMONG_MOVES}; send the robot moves as a jog of their own")
        if len(words) != 3:
            raise UserError(f"{where}: a servo angle is 'servo NAME DEGREES', e.g. "
                            f"{SERVO_EXAMPLE.get(kind)!r}")
        name = names.get(words[1].lower())
        if name is None:
            raise UserError(f"{where}: no servo {_shown(words[1])}: a {kind} rig has the servos "
                            f"{', '.join(config.servos)}")
        sc = config.servos[name]
        try:
            deg = float(words[2].removesuffix("°"))
        except ValueError:
            deg = math.nan
        if not math.isfinite(deg) or not 0.0 <= deg <= sc.range_deg:
            raise UserError(f"{where}: the angle must be a number of degrees from 0 to {sc.range_deg:g} "
                            f"(the servo's range_deg), not {_shown(words[2])}")
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
        if not piece:
            raise UserError(f"{where}: {_empty(n, len(pieces), 'move')}; on a {mech.kind} rig for example: "
                            f"{example}")
        try:
            action = parse_move(piece, mech.kind)
        except NoSuchMove as e:
            raise UserError(f"{where}: {e}; on a {mech.kind} rig for example: {example} (its moves: "
                            f"{', '.join(WORDS.get(mech.kind, ()))})") from None
        except ValueError as e:
            raise UserError(f"{where}: {e}; on a {mech.kind} rig for example: {example}") from None
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


def _empty(n: int, of: int, what: str) -> str:
    """Why item ``n`` of ``of`` (separated by commas) is empty: no ``what`` there."""
    if of == 1:
        return f"there is no {what}: write one, or several separated by commas"
    where = ("before the first comma" if n == 1 else "after the last comma" if n == of
             else "between two commas")
    return f"there is no {what} {where}: remove the extra comma"


def _after(actions: list[Action]) -> str:
    """The moves before the one refused, the last three of them."""
    if not actions:
        return "homing"
    return ("..., " if len(actions) > 3 else "") + ", ".join(str(a) for a in actions[-3:])
