"""Robot moves as protocol commands: what the host sends a flipper or a
two-gripper rig (docs/protocol.md 7).

The protocol stays small and the host plans everything, as Klipper's does:
a servo is told a pulse width and how long its travel takes (``SERVO``),
a stepper the steps it turns (``MOVE``), both queued in the one queue and
reported ``DONE`` in order. The rig does no kinematics; it does not know
what a flip is. This module is the one place where a robot move becomes
pulses and steps, from the config's servo and motor tables.
"""

from __future__ import annotations

from ..config import SERVOS, Config
from ..protocol import NO_MOTOR, ConfigServo, Message, MoveCommand, ServoCommand
from .base import Action, ImpossibleMove


def servo_numbers(kind: str) -> dict[str, int]:
    """Each servo's number on the wire: its place in the kind's table."""
    return {name: i for i, name in enumerate(SERVOS.get(kind, {}))}


class Commands:
    """Turns the robot moves of one job into commands, in order. It keeps
    where the turntable stands and whether the cover is closed (the
    positions a servo command needs that the move alone does not give)."""

    def __init__(self, config: Config, turntable_quarters: int = 0, cover_closed: bool = False):
        self.config = config
        self.kind = config.rig.kind
        self.numbers = servo_numbers(self.kind)
        self.turntable = turntable_quarters
        self.cover_closed = cover_closed
        """Where a cover that flips stands, which its flip's travel depends on."""

    def setup(self) -> list[Message]:
        """The servos' pulse limits, sent once after HELLO."""
        return [ConfigServo(self.numbers[name], sc.min_us, sc.max_us)
                for name, sc in self.config.servos.items()]

    def _servo(self, name: str, deg: float, seconds: float) -> ServoCommand:
        sc = self.config.servos[name]
        # the field is 16 bits; a pulse the servo cannot take is sent as it is
        # and refused by the rig (CONFIG_SERVO's limits), never bent into range here
        pulse = min(0xFFFF, max(0, sc.pulse_us(deg)))
        return ServoCommand(0, self.numbers[name], pulse, min(0xFFFF, max(1, round(seconds * 1000))))

    def angle(self, name: str, deg: float) -> ServoCommand:
        """Servo ``name`` to ``deg`` from wherever it stands (a jog's angle):
        given the time to travel its whole range."""
        sc = self.config.servos[name]
        return self._servo(name, deg, sc.travel_s(sc.range_deg))

    def home(self) -> list[Message]:
        """The servos to where a job starts (the mechanism's start state),
        in an order that is safe from any state they may have been left in:
        the flipper down before the cover moves, the cover open before the
        turntable goes home (so it spins the cube, never turns a layer);
        both grippers closed. A gripper's jaws cannot be brought square
        this way: its stepper has no home."""
        s = self.config.servos
        if self.kind == "flipper":
            c, t = s["cover"], s["turntable"]
            self.turntable, self.cover_closed = 0, False
            flip: list[Message] = []
            far = c.angle("closed_deg") - c.angle("open_deg")
            if "flipper" in s:
                f = s["flipper"]
                flip.append(self._servo("flipper", f.angle("rest_deg"),
                                        f.travel_s(f.angle("flip_deg") - f.angle("rest_deg"))))
            else:  # the cover flips: it may stand at its flip angle
                far = max(abs(far), abs(c.angle("flip_deg") - c.angle("open_deg")))
            cover = c.travel_s(far)
            return flip + [self._servo("cover", c.angle("open_deg"), cover),
                           self._servo("turntable", t.angle("home_deg"), t.travel_s(90.0))]
        if self.kind == "two-gripper":
            return [self._servo(f"grip_{g}", s[f"grip_{g}"].angle("closed_deg"),
                                s[f"grip_{g}"].travel_s(s[f"grip_{g}"].angle("closed_deg")
                                                        - s[f"grip_{g}"].angle("open_deg")))
                    for g in ("D", "L")]
        return []

    def commands(self, action: Action) -> list[Message]:
        """The commands for one robot move (``move_id`` 0: the job numbers them)."""
        s = self.config.servos
        if self.kind == "flipper":
            if action.kind in ("open", "close") and action.part == "cover":
                self.cover_closed = action.kind == "close"
                c = s["cover"]
                deg = c.angle("open_deg" if action.kind == "open" else "closed_deg")
                return [self._servo("cover", deg, c.travel_s(c.angle("closed_deg") - c.angle("open_deg")))]
            if action.kind == "flip" and "flipper" not in s:
                return self._cover_flip(action.part == "close")
            if action.kind == "flip" and not action.part:
                f = s["flipper"]
                t = f.travel_s(f.angle("flip_deg") - f.angle("rest_deg"))
                return [self._servo("flipper", f.angle("flip_deg"), t),
                        self._servo("flipper", f.angle("rest_deg"), t)]
            if action.kind in ("spin", "turn"):
                tt = s["turntable"]
                self.turntable += action.quarters
                deg = tt.angle("home_deg") + 90.0 * self.turntable
                return [self._servo("turntable", deg, tt.travel_s(90.0 * abs(action.quarters)))]
        elif self.kind == "two-gripper":
            g = action.part
            if action.kind in ("open", "close") and g in ("D", "L"):
                sc = s[f"grip_{g}"]
                deg = sc.angle("open_deg" if action.kind == "open" else "closed_deg")
                travel = sc.travel_s(sc.angle("closed_deg") - sc.angle("open_deg"))
                return [self._servo(f"grip_{g}", deg, travel)]
            if action.kind == "rotate" and g in ("D", "L"):
                mc = self.config.motors[g]
                steps = action.quarters * mc.steps_per_quarter
                return [MoveCommand(0, mc.motor, -steps if mc.invert else steps, NO_MOTOR, 0, 0)]
        raise ImpossibleMove(f"a {self.kind} rig has no move {action}")

    def _cover_flip(self, comes_down_closed: bool) -> list[Message]:
        """A flip by the cover's lifter: up past open to its flip angle, then
        down open or closed."""
        c = self.config.servos["cover"]
        start = c.angle("closed_deg" if self.cover_closed else "open_deg")
        end = c.angle("closed_deg" if comes_down_closed else "open_deg")
        self.cover_closed = comes_down_closed
        return [self._servo("cover", c.angle("flip_deg"), c.travel_s(c.angle("flip_deg") - start)),
                self._servo("cover", end, c.travel_s(c.angle("flip_deg") - end))]
