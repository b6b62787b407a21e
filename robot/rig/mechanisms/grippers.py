"""The two-gripper rig (Otvinta-style arms, SolveCube, Cuboth).

Two grippers at right angles hold the cube: one at the bottom (slot D), one
at the left (slot L). Each turns with a stepper ([motors.D], [motors.L]) and
opens and closes with a hobby servo ([servos.grip_D], [servos.grip_L]).

- Both closed: a gripper turns the layer it holds while the other holds the
  rest. The other's jaws must lie *square* (parallel to the turning layer);
  turned a quarter, they reach into that layer and block it.
- One closed, the other open: the closed gripper turns the whole cube.
- Open: a gripper turns its jaws alone (to square them again), and may open
  only while the other holds the cube.

Each rotation turns that gripper's jaws too; jaws are two plates, alike
after a half turn, so a jaw lies square or across. The state is
``(orientation, (D closed, D across), (L closed, L across))``.
"""

from __future__ import annotations

from ..config import Config, MotorConfig, ServoConfig
from ..timing import move_ticks, ticks_to_s
from .base import Action, ImpossibleMove, Mechanism, Outcome, State
from .orientation import HOME, name, rotate

GRIPPERS = ("D", "L")
SLOTS = {"D": 3, "L": 4}


class TwoGripper(Mechanism):
    """The rules and the timing table of a two-gripper rig."""

    kind = "two-gripper"

    def __init__(self, motors: dict[str, MotorConfig], servos: dict[str, ServoConfig]):
        self.turn_s: dict[tuple[str, int], float] = {}
        for g in GRIPPERS:
            mc = motors[g]
            profile = mc.profile()
            for q in (1, 2):
                self.turn_s[g, q] = ticks_to_s(sum(move_ticks([(0, q * mc.steps_per_quarter)], [profile])))
        self.grip_s = {g: servos[f"grip_{g}"].travel_s(servos[f"grip_{g}"].angle("closed_deg")
                                                       - servos[f"grip_{g}"].angle("open_deg"))
                       for g in GRIPPERS}
        self.servos = servos

    @classmethod
    def from_config(cls, config: Config) -> TwoGripper:
        return cls(config.motors, config.servos)

    def start(self) -> State:
        """As the cube is put in: home orientation, both grippers closed and square."""
        return (HOME, (True, 0), (True, 0))

    def actions(self, state: State) -> tuple[Action, ...]:
        out: list[Action] = []
        for i, g in enumerate(GRIPPERS):
            out.append(Action("open" if state[1 + i][0] else "close", g))
            out.extend(Action("rotate", g, q) for q in (1, -1, 2, -2))
        return tuple(out)

    def apply(self, state: State, action: Action) -> Outcome:
        o = state[0]
        if action.part not in GRIPPERS:
            raise ImpossibleMove(f"no gripper {action.part!r} (grippers: {', '.join(GRIPPERS)})")
        i = GRIPPERS.index(action.part)
        mine, other = state[1 + i], state[2 - i]
        g = action.part

        def new(m: tuple[bool, int], oo: object = o) -> State:
            return (oo, m, other) if i == 0 else (oo, other, m)

        if action.kind == "close":
            if mine[0]:
                raise ImpossibleMove(f"gripper {g} is already closed")
            return Outcome(new((True, mine[1])), self.grip_s[g])
        if action.kind == "open":
            if not mine[0]:
                raise ImpossibleMove(f"gripper {g} is already open")
            if not other[0]:
                raise ImpossibleMove(f"open gripper {g} while the other is open: the cube would fall")
            return Outcome(new((False, mine[1])), self.grip_s[g])
        if action.kind == "rotate":
            q = action.quarters
            if q not in (1, -1, 2, -2):
                raise ImpossibleMove(f"a gripper turns 1 or 2 quarters either way, not {q}")
            seconds = self.turn_s[g, abs(q)]
            jaws = (mine[0], (mine[1] + q) % 2)
            if not mine[0]:
                return Outcome(new(jaws), seconds)
            if not other[0]:
                return Outcome(new(jaws, rotate(o, SLOTS[g], q)), seconds)
            if other[1]:
                raise ImpossibleMove(f"turn with gripper {g} while the other's jaws lie across: they hold "
                                     "the layer it would turn")
            return Outcome(new(jaws), seconds, (SLOTS[g], q))
        raise ImpossibleMove(f"a two-gripper rig has no move {action}")

    def homing(self, state: State) -> tuple[Action, ...] | None:
        """Both grippers close; a gripper's jaws left across stay so (its
        stepper has no home), and where the cube then is is not known."""
        if any(jaws for _, jaws in state[1:]):
            return None
        return tuple(Action("close", g) for g, (closed, _) in zip(GRIPPERS, state[1:]) if not closed)

    def describe(self, state: State) -> str:
        o = state[0]
        parts = [f"{g} {'closed' if s[0] else 'open'}{' across' if s[1] else ''}"
                 for g, s in zip(GRIPPERS, state[1:])]
        return f"orientation {name(o)}, " + ", ".join(parts)
