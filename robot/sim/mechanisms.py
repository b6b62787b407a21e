"""Virtual flipper and two-gripper rigs: the physics behind the commands.

They take what the wire carries (docs/protocol.md 7: a servo to a pulse
width, a stepper a number of steps) and work out from the positions of the
parts what happens to the cube: the turntable turning while the cover holds
is a layer turn, while it is open a spin; the flipper rising tips the cube;
a closed gripper turning with the other closed turns its layer, with the
other open the whole cube. A command that the parts cannot carry out (a
flip while the cover holds the cube, a turn while the other gripper's jaws
reach into the layer, a gripper opened while the other is open, a part left
between quarter turns) is a fault: the rig stops, keeps the fault, and does
nothing more until it is reset, as a rig with a jammed part would.

Nothing here uses the planner's rules (robot/rig/mechanisms/), only the
config's servo and motor tables: the rules and the physics are written
apart, so the benchmark and the tests catch a rule that allows what the
rig cannot do.
"""

from __future__ import annotations

from typing import NoReturn

from ..rig.config import Config
from ..rig.mechanisms.base import Action, ImpossibleMove
from ..rig.mechanisms.commands import Commands, servo_numbers
from ..rig.mechanisms.orientation import HeldCube
from ..rig.protocol import (
    ConfigServo,
    FrameDecoder,
    Message,
    MoveCommand,
    ServoCommand,
    decode,
    encode,
    next_seq,
)

TOLERANCE_DEG = 2.0
"""How far from a named angle or a quarter turn a part may stop and still count as there."""


class Fault(ImpossibleMove):
    """A command the virtual rig's parts could not carry out."""


class _VirtualMechanism:
    """What both kinds share: servo angles from pulses, the held cube, the fault latch."""

    def __init__(self, config: Config, facelets: str):
        self.config = config
        self.cube = HeldCube(facelets)
        self.names = {i: n for n, i in servo_numbers(config.rig.kind).items() if n in config.servos}
        self.angle = {n: self._rest(n) for n in config.servos}
        self.limits = {n: (sc.min_us, sc.max_us) for n, sc in config.servos.items()}
        self.fault: str | None = None
        self.turns: list[tuple[int, int]] = []
        """Every layer turn the parts made, ``(slot, quarters)``, in order."""
        self.commands = Commands(config)
        self.done = 0
        self._decoder = FrameDecoder()
        self._seq = 0

    def _rest(self, name: str) -> float:
        raise NotImplementedError

    def _near(self, name: str, which: str) -> bool:
        return abs(self.angle[name] - self.config.servos[name].angle(which)) <= TOLERANCE_DEG

    def _fail(self, why: str) -> NoReturn:
        self.fault = why
        raise Fault(why)

    def execute(self, msg: Message) -> None:
        """One command off the wire (refused with :class:`Fault` once faulted)."""
        if self.fault is not None:
            raise Fault(f"stopped on a fault: {self.fault}")
        if isinstance(msg, ConfigServo):
            name = self.names.get(msg.servo)
            if name is None:
                self._fail(f"no servo {msg.servo}")
            self.limits[name] = (msg.min_us, msg.max_us)
        elif isinstance(msg, ServoCommand):
            name = self.names.get(msg.servo)
            if name is None:
                self._fail(f"no servo {msg.servo}")
            lo, hi = self.limits[name]
            if not lo <= msg.pulse_us <= hi:
                self._fail(f"servo {name}: a pulse of {msg.pulse_us} us is outside {lo}-{hi} us")
            sc = self.config.servos[name]
            deg = (msg.pulse_us - sc.min_us) / (sc.max_us - sc.min_us) * sc.range_deg
            self._servo(name, self.angle[name], deg)
            self.angle[name] = deg
        elif isinstance(msg, MoveCommand):
            self._steps(msg)
        else:
            self._fail(f"a {self.config.rig.kind} rig has no {type(msg).__name__}")
        self.done += 1

    def receive(self, data: bytes) -> None:
        """Frames off the wire (docs/protocol.md 1.2), each command executed
        as it completes: the same bytes a firmware would take."""
        for content in self._decoder.feed(data):
            if isinstance(content, bytes):
                _, msg = decode(content)
                self.execute(msg)

    def do(self, action: Action) -> None:
        """A robot move, sent as the host sends it (:class:`Commands`), as
        frames: encoded, decoded and executed."""
        for msg in self.commands.commands(action):
            self._seq = next_seq(self._seq)
            self.receive(encode(msg, self._seq))

    def _servo(self, name: str, before: float, after: float) -> None:
        raise NotImplementedError

    def _turn(self, slot: int, quarters: int) -> None:
        self.cube.turn(slot, quarters)
        self.turns.append((slot, quarters))

    def _steps(self, msg: MoveCommand) -> None:
        self._fail(f"a {self.config.rig.kind} rig has no stepper to MOVE")

    def is_solved(self) -> bool:
        return self.fault is None and self.cube.is_solved()


class VirtualFlipper(_VirtualMechanism):
    """Turntable and cover, hobby servos, and either a flipper servo or a
    cover whose lifter tips the cube when it rises to its flip angle."""

    def _rest(self, name: str) -> float:
        sc = self.config.servos[name]
        return sc.angle({"turntable": "home_deg", "cover": "open_deg", "flipper": "rest_deg"}[name])

    def _lifted(self) -> str | None:
        """What stands raised against the cube (the flipper, or a cover at
        its flip angle), or None."""
        if "flipper" in self.angle:
            return None if self._near("flipper", "rest_deg") else "the flipper"
        return "the cover's lifter" if self._near("cover", "flip_deg") else None

    def _servo(self, name: str, before: float, after: float) -> None:
        if name == "turntable":
            quarters = (after - before) / 90.0
            if abs(quarters - round(quarters)) * 90.0 > TOLERANCE_DEG:
                self._fail(f"the turntable stopped {after - before:+.0f} degrees on, between quarter turns")
            q = round(quarters)
            lifted = self._lifted()
            if lifted:
                self._fail(f"the turntable turned with {lifted} raised against the cube")
            if self._near("cover", "closed_deg"):
                self._turn(3, q)
            elif self._near("cover", "open_deg"):
                self.cube.rotate(3, q)
            else:
                self._fail("the turntable turned with the cover half way: it catches the cube")
        elif name == "flipper":
            rising = abs(after - self.config.servos[name].angle("flip_deg")) <= TOLERANCE_DEG
            if rising and not self._near("flipper", "rest_deg"):
                self._fail("the flipper rose again without coming back to rest")
            if rising:
                if not self._near("cover", "open_deg"):
                    self._fail("a flip with the cover not open: it holds the cube down")
                self.cube.rotate(4, 1)  # tipped forward
            elif abs(after - self.config.servos[name].angle("rest_deg")) > TOLERANCE_DEG:
                self._fail(f"the flipper stopped at {after:.0f} degrees, neither at rest nor flipping")
        elif name == "cover":
            if "flipper" in self.angle:
                if not self._near("flipper", "rest_deg"):
                    self._fail("the cover moved with the flipper raised")
            else:
                self._cover_lifter(before, after)

    def _cover_lifter(self, before: float, after: float) -> None:
        """A cover that flips: rising to its flip angle (through open, so it
        lets the top layers go first) tips the cube; from there it comes
        down to open or closed, never rises again before it has."""
        sc = self.config.servos["cover"]
        at = {k: abs(after - sc.angle(k)) <= TOLERANCE_DEG for k in ("open_deg", "closed_deg", "flip_deg")}
        if not any(at.values()):
            self._fail(f"the cover stopped at {after:.0f} degrees, neither open, closed nor flipping")
        if at["flip_deg"]:
            if abs(before - sc.angle("flip_deg")) <= TOLERANCE_DEG:
                self._fail("the cover's lifter rose again without coming down first")
            self.cube.rotate(4, 1)  # tipped forward


class VirtualTwoGripper(_VirtualMechanism):
    """Two grippers: a stepper each for turning ([motors.D], [motors.L]), a
    servo each for opening."""

    SLOT = {"D": 3, "L": 4}

    def __init__(self, config: Config, facelets: str):
        super().__init__(config, facelets)
        self.steps = {"D": 0, "L": 0}
        self.by_motor = {config.motors[g].motor: g for g in ("D", "L")}

    def _rest(self, name: str) -> float:
        return self.config.servos[name].angle("closed_deg")

    def _closed(self, g: str) -> bool:
        return self._near(f"grip_{g}", "closed_deg")

    def _square(self, g: str) -> bool:
        """The jaws lie square: a whole number of half turns from where they started."""
        return self.steps[g] % (2 * self.config.motors[g].steps_per_quarter) == 0

    def _servo(self, name: str, before: float, after: float) -> None:
        g = name[-1]
        other = "L" if g == "D" else "D"
        sc = self.config.servos[name]
        if abs(after - sc.angle("closed_deg")) <= TOLERANCE_DEG:
            if self.steps[g] % self.config.motors[g].steps_per_quarter:
                self._fail(f"gripper {g} closed with its jaws between quarter turns")
        elif not self._closed(other):
            self._fail(f"gripper {g} opened while gripper {other} was open: the cube fell")

    def _steps(self, msg: MoveCommand) -> None:
        for motor, steps in msg.motors():
            g = self.by_motor.get(motor)
            if g is None:
                self._fail(f"motor {motor} turns no gripper")
            mc = self.config.motors[g]
            steps = -steps if mc.invert else steps
            if steps % mc.steps_per_quarter:
                self._fail(f"gripper {g} turned {steps} steps, not whole quarter turns")
            q = steps // mc.steps_per_quarter
            other = "L" if g == "D" else "D"
            if self._closed(g):
                if not self._closed(other):
                    self.cube.rotate(self.SLOT[g], q)
                elif not self._square(other):
                    self._fail(f"gripper {g} turned its layer while gripper {other}'s jaws lay across it")
                else:
                    self._turn(self.SLOT[g], q)
            self.steps[g] += steps


def virtual_mechanism(config: Config, facelets: str) -> VirtualFlipper | VirtualTwoGripper:
    """The virtual rig of the config's kind holding the cube ``facelets``."""
    if config.rig.kind == "flipper":
        return VirtualFlipper(config, facelets)
    if config.rig.kind == "two-gripper":
        return VirtualTwoGripper(config, facelets)
    raise ValueError(f"no virtual mechanism for a {config.rig.kind} rig")
