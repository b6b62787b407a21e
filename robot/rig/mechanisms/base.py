"""What every mechanism offers the planner and the virtual rigs: its state,
its moves, and the one rulebook that says which move is possible where.

A mechanism's state is a hashable tuple whose first element is the cube's
:data:`~.orientation.Orientation`; the rest is the mechanism's own (where the
turntable stands, whether the cover holds, which gripper is closed and how
its jaws lie). :meth:`Mechanism.apply` is the rulebook: it gives the state
after a move, the seconds the move takes from the config's timing table,
and the layer turn it makes (if any), or raises :class:`ImpossibleMove`
naming why the real rig could not do it. The planner searches through it
and the virtual rigs refuse through it, so the two cannot disagree about
what is possible; what a move *does to the cube* is checked apart from it,
on :class:`~.orientation.HeldCube`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from solver import Move

from .orientation import Orientation, face_move

State = tuple[Any, ...]
"""``(orientation, ...the mechanism's own parts)``."""


def state_from_json(value: Any) -> Any:
    """JSON's lists back into the tuples a state is made of (the journal and
    the note of parts left keep states as JSON)."""
    return tuple(state_from_json(x) for x in value) if isinstance(value, list) else value


class ImpossibleMove(Exception):
    """A move the mechanism cannot make in its present state (a turn with the
    cover open, a flip while a gripper holds): a planner bug on the host, a
    fault on a rig."""


@dataclass(frozen=True)
class Action:
    """One robot move: ``kind`` (``flip``, ``spin``, ``turn``, ``open``,
    ``close``, ``rotate``), the part that makes it (a servo or a gripper's
    slot letter, or ``""``) and, for a rotation, signed quarter turns
    (clockwise seen from outside the slot that turns, positive)."""

    kind: str
    part: str = ""
    quarters: int = 0

    def __str__(self) -> str:
        q = f" {self.quarters:+d}" if self.quarters else ""
        return f"{self.kind}{' ' + self.part if self.part else ''}{q}"

    @classmethod
    def parse(cls, text: str) -> Action:
        """The inverse of ``str()``: ``"turn +1"``, ``"rotate D -2"``, ``"flip"``."""
        words = text.split()
        if not words or len(words) > 3:
            raise ValueError(f"not a robot move: {text!r}")
        kind, rest = words[0], words[1:]
        quarters = 0
        if rest and rest[-1][:1] in "+-":
            quarters = int(rest.pop())
        return cls(kind, rest[0] if rest else "", quarters)


@dataclass(frozen=True)
class Outcome:
    """What a possible move does: the state after it, its seconds, and the
    layer turn it makes as ``(slot, signed quarters)`` (None: no layer turns)."""

    after: State
    seconds: float
    turn: tuple[int, int] | None = None


@dataclass(frozen=True)
class Graph:
    """A mechanism's reachable states and moves, numbered (:attr:`Mechanism.graph`)."""

    states: tuple[State, ...]
    number: dict[State, int]
    edges: tuple[tuple[tuple[Action, int, float, Move | None], ...], ...]


class Mechanism:
    """A kind of rig: its starting state, the moves to try in a state, and
    the rules (:meth:`apply`)."""

    kind = ""

    def start(self) -> State:
        raise NotImplementedError

    def actions(self, state: State) -> tuple[Action, ...]:
        """Every move worth trying in ``state`` (some may be impossible;
        :meth:`apply` says which)."""
        raise NotImplementedError

    def apply(self, state: State, action: Action) -> Outcome:
        """The move's outcome, or :class:`ImpossibleMove`."""
        raise NotImplementedError

    def describe(self, state: State) -> str:
        """The state in a few words, for the journal and for messages."""
        raise NotImplementedError

    def homing(self, state: State) -> tuple[Action, ...] | None:
        """What homing the rig (:meth:`~robot.rig.mechanisms.commands.Commands.home`,
        before every job and jog) does from ``state``, as robot moves: it
        sends the servos home in an order that never turns a layer, but a
        part away from home may take the cube with it. None where homing
        cannot bring the parts home (where the cube then is, is not known)."""
        raise NotImplementedError

    def homed(self, state: State) -> State | None:
        """The state :meth:`homing` leaves from ``state``: the parts home,
        the cube where they took it; None where that is not known."""
        homing = self.homing(state)
        if homing is None:
            return None
        try:
            for action in homing:
                state = self.apply(state, action).after
        except ImpossibleMove:
            return None
        return state if state[1:] == self.start()[1:] else None

    @cached_property
    def _steps(self) -> dict[State, tuple[tuple[Action, Outcome], ...]]:
        return {}

    def steps(self, state: State) -> tuple[tuple[Action, Outcome], ...]:
        """The possible moves from ``state`` with their outcomes (cached: the
        planner asks for the same few hundred states over and over)."""
        got = self._steps.get(state)
        if got is None:
            out = []
            for a in self.actions(state):
                try:
                    out.append((a, self.apply(state, a)))
                except ImpossibleMove:
                    pass
            got = self._steps[state] = tuple(out)
        return got

    @cached_property
    def graph(self) -> Graph:
        """Every state the mechanism can reach from :meth:`start`, numbered,
        with its possible moves as ``(action, next state's number, seconds,
        the solver move its layer turn makes or None)``: what the planner
        searches, built once (a few hundred states)."""
        states = [self.start()]
        number = {states[0]: 0}
        edges: list[list[tuple[Action, int, float, Move | None]]] = []
        k = 0
        while k < len(states):
            state = states[k]
            row = []
            for action, out in self.steps(state):
                if out.after not in number:
                    number[out.after] = len(states)
                    states.append(out.after)
                made = None if out.turn is None else face_move(self.orientation(state), *out.turn)
                row.append((action, number[out.after], out.seconds, made))
            edges.append(row)
            k += 1
        return Graph(tuple(states), number, tuple(tuple(r) for r in edges))

    @staticmethod
    def orientation(state: State) -> Orientation:
        return state[0]  # type: ignore[no-any-return]
