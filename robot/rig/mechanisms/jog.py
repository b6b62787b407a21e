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
rig is in no state the robot moves' rules know. A servo goes to any angle
in its range, as a real one does, but an angle is refused before anything
moves when the parts would jam there: the turntable turning under a cover
half way down, a flip of a cube left off square, a gripper opening while
the other is open (:class:`ServoParts`). The next job homes the rig as
always (the flipper down, the cover open, the turntable home), which
brings back any servo left between its named angles; the one thing homing
cannot undo, a bottom layer left off square under the closed cover, is
refused too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from solver import Move

from ..config import Config, ServoConfig
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
    """Servo angles set by hand after homing, in order, and what they leave
    between its named angles (for the summing-up line)."""

    angles: tuple[ServoAngle, ...]
    left: tuple[str, ...] = ()
    """Each servo left at an angle the config does not name, as "cover at
    95 degrees (open 70, closed 110)"."""


AT_NAMED_DEG = 2.0
"""How near one of its named angles a servo counts as standing there (the
width a part may miss by and still hold the cube as meant)."""


def _deg(deg: float) -> str:
    """An angle for a person: to a tenth of a degree (a pulse's whole microseconds make 95 into 95.04)."""
    return f"{round(deg, 1):g} degrees"


def _on_rig(sc: ServoConfig, deg: float) -> float:
    """The angle a servo sent ``deg`` holds: the one its pulse (whole
    microseconds) stands for."""
    return (sc.pulse_us(deg) - sc.min_us) / (sc.max_us - sc.min_us) * sc.range_deg


class PartsJam(ValueError):
    """A servo angle the parts could not take where they stand: what would jam, and what to do."""


class ServoParts:
    """Where a flipper's or two-gripper's servos stand through a jog of
    servo angles (from home), and the rules a real rig keeps as each moves:
    :meth:`move` raises :class:`PartsJam` for an angle that would jam it.

    A flipper's cover stands open, closed (or pressing past it), half way
    between (it catches the cube if the turntable turns), or, when its
    lifter flips the cube, lifted past open (against the cube) up to its
    flip angle, where the cube tips; a flipper servo stands at rest, raised
    part way, or at its flip angle. The turntable may stop anywhere: part
    of a quarter turned with the cover open leaves the cube off square on
    it, with the cover closed its bottom layer off square under the two
    above; a flip or the cover closing on a cube off square jams. A few
    degrees are taken up (the closing cover squares the top layers, top
    layers let go settle on the bottom one). A gripper stands closed (or
    pressing past it) or open."""

    def __init__(self, config: Config):
        self.config = config
        self.kind = config.rig.kind
        self.servos = config.servos
        home = {"turntable": "home_deg", "cover": "open_deg", "flipper": "rest_deg"}
        # homed: each servo where the pulse for its home angle holds it
        self.angle = {n: _on_rig(sc, sc.angle(home.get(n, "closed_deg"))) for n, sc in self.servos.items()}
        self.skew = 0.0
        """How far the cube stands turned off square on the turntable (degrees)."""
        self.twist = 0.0
        """How far its bottom layer stands turned against the two above."""
        self.tipped = False
        """The cube was tipped and the part that tipped it has not come down since."""

    def _along(self, name: str, deg: float, start: str, end: str) -> float:
        sc = self.servos[name]
        a, b = sc.angle(start), sc.angle(end)
        return deg - a if b >= a else a - deg

    def _span(self, name: str, start: str, end: str) -> float:
        return abs(self.servos[name].angle(end) - self.servos[name].angle(start))

    def cover_at(self, deg: float) -> str:
        """``closed``, ``open``, ``half``, ``lifted`` or ``flip`` (see the class)."""
        x = self._along("cover", deg, "open_deg", "closed_deg")
        if x >= self._span("cover", "open_deg", "closed_deg") - AT_NAMED_DEG:
            return "closed"
        if x >= -AT_NAMED_DEG:
            return "open" if x <= AT_NAMED_DEG else "half"
        if "flipper" in self.servos:
            return "open"  # without a lifter, past open is open wider
        lift = self._along("cover", deg, "open_deg", "flip_deg")
        return "flip" if lift >= self._span("cover", "open_deg", "flip_deg") - AT_NAMED_DEG else "lifted"

    def flipper_at(self, deg: float) -> str:
        """``rest`` (or below it), ``raised`` part way, or ``flip`` (or past it)."""
        x = self._along("flipper", deg, "rest_deg", "flip_deg")
        if x <= AT_NAMED_DEG:
            return "rest"
        return "flip" if x >= self._span("flipper", "rest_deg", "flip_deg") - AT_NAMED_DEG else "raised"

    def gripper_closed(self, name: str, deg: float) -> bool:
        return self._along(name, deg, "open_deg", "closed_deg") >= self._span(name, "open_deg",
                                                                              "closed_deg") - AT_NAMED_DEG

    def _named(self, name: str, which: str) -> str:
        return f"{which.removesuffix('_deg')} ({_deg(self.servos[name].angle(which))})"

    def off_square(self) -> str | None:
        """How the cube stands off square, or None."""
        if abs(self.skew) > AT_NAMED_DEG:
            return f"the cube stands {abs(self.skew):.0f} degrees off square on the turntable"
        if abs(self.twist) > AT_NAMED_DEG:
            return (f"the cube's bottom layer stands turned {abs(self.twist):.0f} degrees against the two "
                    "above")
        return None

    def move(self, name: str, deg: float) -> None:
        """Servo ``name`` to ``deg`` (as its pulse holds it): :class:`PartsJam` when the parts would
        jam; otherwise where they stand afterwards is kept."""
        after = _on_rig(self.servos[name], deg)
        before = self.angle[name]
        if abs(after - before) < 1e-9:
            return
        if self.kind == "two-gripper":
            other = "grip_L" if name == "grip_D" else "grip_D"
            if not self.gripper_closed(name, after) and not self.gripper_closed(other, self.angle[other]):
                raise PartsJam(f"gripper {name[-1]} would open while gripper {other[-1]} is open (at "
                               f"{_deg(self.angle[other])}): the cube would fall; set {other} to "
                               f"{self._named(other, 'closed_deg')} first")
        elif name == "turntable":
            self._turntable(after - before)
        elif name == "flipper":
            self._flipper(after)
        elif name == "cover":
            self._cover(after)
        self.angle[name] = after

    def _raised(self) -> str | None:
        if "flipper" in self.servos:
            if self.flipper_at(self.angle["flipper"]) != "rest":
                return (f"the flipper raised (at {_deg(self.angle['flipper'])}): set it to "
                        f"{self._named('flipper', 'rest_deg')} first")
        elif self.cover_at(self.angle["cover"]) in ("lifted", "flip"):
            return (f"the cover's lifter raised against the cube (at {_deg(self.angle['cover'])}, past "
                    f"open): set the cover to {self._named('cover', 'open_deg')} first")
        return None

    def _turntable(self, degrees: float) -> None:
        raised = self._raised()
        if raised:
            raise PartsJam(f"the turntable would turn with {raised}")
        cover = self.cover_at(self.angle["cover"])
        if cover not in ("open", "closed"):
            raise PartsJam(f"the turntable would turn with the cover at {_deg(self.angle['cover'])}, half "
                           f"way between {self._named('cover', 'open_deg')} and "
                           f"{self._named('cover', 'closed_deg')}: it would catch the cube; set the cover to "
                           "one of them first")
        off = (self.twist if cover == "closed" else self.skew) + degrees  # never rounded: tries add up
        off -= 90.0 * round(off / 90.0)
        if cover == "closed":
            self.twist = off
        else:
            self.skew = off

    def _square_first(self, what: str) -> None:
        off = self.off_square()
        if off:
            raise PartsJam(f"{what} while {off}: it would jam; turn the turntable back to a whole quarter "
                           "turn first")

    def _flipper(self, after: float) -> None:
        at = self.flipper_at(after)
        if at == "rest":
            self.tipped = False
        elif at == "flip":
            if self.cover_at(self.angle["cover"]) != "open":
                raise PartsJam(f"the flipper would tip the cube with the cover at "
                               f"{_deg(self.angle['cover'])}, not open: it holds the cube down; set the "
                               f"cover to {self._named('cover', 'open_deg')} first")
            if self.tipped:
                raise PartsJam(f"the flipper would rise again without coming back to "
                               f"{self._named('flipper', 'rest_deg')} first")
            self._square_first("the flipper would tip the cube")
            self.tipped = True

    def _cover(self, after: float) -> None:
        if "flipper" in self.servos and self.flipper_at(self.angle["flipper"]) != "rest":
            raise PartsJam(f"the cover would move with {self._raised()}")
        at, was = self.cover_at(after), self.cover_at(self.angle["cover"])
        if at == "closed" and was != "closed":
            if abs(self.skew) > AT_NAMED_DEG:
                raise PartsJam(f"the cover would come down on the cube standing {abs(self.skew):.0f} "
                               "degrees off square on the turntable: it would jam; turn the turntable back "
                               "to a whole quarter turn first")
            self.twist, self.skew = self.twist + self.skew, 0.0  # its guides square the top layers
        elif was == "closed" and at != "closed" and abs(self.twist) <= AT_NAMED_DEG:
            self.skew, self.twist = self.skew + self.twist, 0.0  # let go, they settle on the bottom one
        if at in ("open", "half", "closed"):
            self.tipped = False
        elif at == "flip":
            if self.tipped:
                raise PartsJam(f"the cover's lifter would rise again without coming down to "
                               f"{self._named('cover', 'open_deg')} first")
            self._square_first("the cover's lifter would tip the cube")
            self.tipped = True

    def left(self) -> tuple[str, ...]:
        """Each servo standing at an angle none of its named ones is, with those (for the person)."""
        out = []
        for name, deg in self.angle.items():
            named = dict(self.servos[name].angles)
            at = list(named.values())
            if name == "turntable":  # a whole number of quarter turns from home is where it turns to
                at = [named["home_deg"] + 90.0 * q for q in range(-4, 5)]
            if all(abs(deg - v) > AT_NAMED_DEG for v in at):
                names = ", ".join(f"{k.removesuffix('_deg')} {v:g}" for k, v in named.items())
                out.append(f"{name} at {_deg(deg)} ({names})")
        return tuple(out)


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
    parts = ServoParts(config)
    for n, (piece, angle) in enumerate(zip(pieces, angles, strict=True), 1):
        try:
            parts.move(angle.servo, angle.deg)
        except PartsJam as e:
            raise UserError(f"servo angle {n} ({piece[:30]!r}): {e}; nothing was moved") from None
    if kind == "flipper" and abs(parts.twist) > AT_NAMED_DEG:
        raise UserError(f"these servo angles leave the cube's bottom layer turned {abs(parts.twist):.0f} "
                        "degrees against the two above it, which the next job's homing (the cover opened, "
                        "the turntable home) cannot undo: end with the turntable a whole quarter turn from "
                        "where the cover closed on the cube; nothing was moved")
    return ServoJog(tuple(angles), parts.left())


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
