"""Virtual flipper and two-gripper rigs: the physics behind the commands.

They take what the wire carries (docs/protocol.md 7: a servo to a pulse
width, a stepper a number of steps) and work out from the positions of the
parts what happens to the cube: the turntable turning while the cover holds
is a layer turn, while it is open a spin; the flipper rising tips the cube;
a closed gripper turning with the other closed turns its layer, with the
other open the whole cube. A command that the parts cannot carry out (a
flip while the cover holds the cube, a turn while the cover stands half
way or the other gripper's jaws reach into the layer, a gripper opened
while the other is open) is a fault: the rig stops, keeps the fault, and
does nothing more until it is reset, as a rig with a jammed part would.

A servo goes to any angle within its pulse limits, as a real one does (a
maker trying angles with ``cuberobot jog "servo cover 95"``): a part at an
angle the config does not name is where it is, and what it does there is
worked out from where it stands. A turntable stopped between quarter turns
leaves the cube (cover open) or its bottom layer (cover closed) standing
off square; it is square again once the turntable has made up the quarter,
and a flip or a cover closing on a cube off square jams.

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

    def settle(self, name: str, deg: float) -> None:
        """Servo ``name`` read again, more closely, at ``deg`` (a reading of its pulses refined, no
        command: the firmware in simavr): the part was there all along."""
        self.angle[name] = deg

    def _turn(self, slot: int, quarters: int) -> None:
        self.cube.turn(slot, quarters)
        self.turns.append((slot, quarters))

    def _steps(self, msg: MoveCommand) -> None:
        self._fail(f"a {self.config.rig.kind} rig has no stepper to MOVE")

    def is_solved(self) -> bool:
        return self.fault is None and self.cube.is_solved()


class VirtualFlipper(_VirtualMechanism):
    """Turntable and cover, hobby servos, and either a flipper servo or a
    cover whose lifter tips the cube when it rises to its flip angle.

    Where the cube stands on the turntable is kept to the degree: ``skew``,
    how far the whole cube stands turned off square (the turntable turned
    part of a quarter with the cover open), and ``twist``, how far its
    bottom layer stands turned against the two above (the same with the
    cover closed). Whole quarters of either are turns of :attr:`cube`. A
    few degrees (a servo's own error) are taken up as a real rig takes them
    up: the closing cover's guides square the top layers, and top layers
    let go settle onto the bottom one; more than that, and the cover comes
    down on the cube, or the layer stays turned."""

    def __init__(self, config: Config, facelets: str):
        super().__init__(config, facelets)
        self.skew = 0.0
        self.twist = 0.0
        self.tipped = False
        """The flipper (or the cover's lifter) tipped the cube and has not come down since."""
        self._turned_layer = False
        """Whether the turntable's last move turned the bottom layer (else the whole cube)."""

    def _rest(self, name: str) -> float:
        sc = self.config.servos[name]
        return sc.angle({"turntable": "home_deg", "cover": "open_deg", "flipper": "rest_deg"}[name])

    def _along(self, name: str, deg: float, start: str, end: str) -> float:
        """How far ``deg`` lies from servo ``name``'s angle ``start`` towards its angle ``end`` (0 at
        ``start``; negative beyond it, away from ``end``)."""
        sc = self.config.servos[name]
        a, b = sc.angle(start), sc.angle(end)
        return (deg - a) if b >= a else (a - deg)

    def _cover_at(self, deg: float) -> str:
        """Where a cover at ``deg`` stands: ``closed`` (at its closed angle or pressing past it),
        ``open``, ``half`` way between, ``lifted`` (a cover that flips: its lifter past open, against
        the cube) or ``flip`` (its lifter at the flip angle). A cover without a lifter beyond open is
        open wider."""
        sc = self.config.servos["cover"]
        x = self._along("cover", deg, "open_deg", "closed_deg")
        if x >= abs(sc.angle("closed_deg") - sc.angle("open_deg")) - TOLERANCE_DEG:
            return "closed"
        if x >= -TOLERANCE_DEG:
            return "open" if x <= TOLERANCE_DEG else "half"
        if "flipper" in self.config.servos:
            return "open"
        lift = self._along("cover", deg, "open_deg", "flip_deg")
        up = abs(sc.angle("flip_deg") - sc.angle("open_deg"))
        return "flip" if lift >= up - TOLERANCE_DEG else "lifted"

    def _flipper_at(self, deg: float) -> str:
        """Where a flipper at ``deg`` stands: at ``rest`` (or below it), at ``flip`` (or past it) or
        ``raised`` part way, against the cube."""
        sc = self.config.servos["flipper"]
        x = self._along("flipper", deg, "rest_deg", "flip_deg")
        if x <= TOLERANCE_DEG:
            return "rest"
        return "flip" if x >= abs(sc.angle("flip_deg") - sc.angle("rest_deg")) - TOLERANCE_DEG else "raised"

    def _lifted(self) -> str | None:
        """What stands raised against the cube (the flipper, or a cover's
        lifter past open), or None."""
        if "flipper" in self.angle:
            return None if self._flipper_at(self.angle["flipper"]) == "rest" else "the flipper"
        return "the cover's lifter" if self._cover_at(self.angle["cover"]) in ("lifted", "flip") else None

    def _off_square(self) -> str | None:
        """Why the cube cannot be tipped now (it stands off square), or None."""
        if abs(self.skew) > TOLERANCE_DEG:
            return f"the cube stands {abs(self.skew):.0f} degrees off square on the turntable"
        if abs(self.twist) > TOLERANCE_DEG:
            return f"the cube's bottom layer stands {abs(self.twist):.0f} degrees off square"
        return None

    def _tip(self, by: str) -> None:
        """``by`` (the flipper, the cover's lifter) reaching its flip angle: the cube tips forward,
        once until it has come down again."""
        if self.tipped:
            again = "coming back to rest" if by == "the flipper" else "coming down first"
            self._fail(f"{by} rose again without {again}")
        off = self._off_square()
        if off:
            self._fail(f"{by} tipped the cube while {off}: it jams")
        self.tipped = True
        self.cube.rotate(4, 1)  # tipped forward

    def settle(self, name: str, deg: float) -> None:
        """A turntable read more closely carried the cube (or its bottom layer) with it: the
        degrees of the correction go where its last move's went, so that small misreadings do not
        add up over a run."""
        if name == "turntable":
            if self._turned_layer:
                self.twist += deg - self.angle[name]
            else:
                self.skew += deg - self.angle[name]
        super().settle(name, deg)

    def square(self) -> bool:
        """Whether the cube and its layers stand square (no part of a quarter turn made up)."""
        return self._off_square() is None

    def is_solved(self) -> bool:
        return super().is_solved() and self.square()

    def _servo(self, name: str, before: float, after: float) -> None:
        if abs(after - before) < 1e-9:
            return  # sent where it stands: nothing moves
        if name == "turntable":
            self._turntable(after - before)
        elif name == "flipper":
            at = self._flipper_at(after)
            if at == "rest":
                self.tipped = False
            elif at == "flip":
                if self._cover_at(self.angle["cover"]) != "open":
                    self._fail("a flip with the cover not open: it holds the cube down")
                self._tip("the flipper")
        elif name == "cover":
            if "flipper" in self.angle and self._flipper_at(self.angle["flipper"]) != "rest":
                self._fail("the cover moved with the flipper raised")
            at, was = self._cover_at(after), self._cover_at(before)
            if at == "closed" and was != "closed":
                if abs(self.skew) > TOLERANCE_DEG:
                    self._fail(f"the cover came down on the cube standing {abs(self.skew):.0f} degrees off "
                               "square on the turntable: it jams")
                self.twist, self.skew = self.twist + self.skew, 0.0  # its guides square the top layers
            elif was == "closed" and at != "closed" and abs(self.twist) <= TOLERANCE_DEG:
                self.skew, self.twist = self.skew + self.twist, 0.0  # let go, they settle on the bottom one
            if at in ("open", "half", "closed"):
                self.tipped = False  # a cover that flips has come down
            elif at == "flip":
                self._tip("the cover's lifter")

    def _turntable(self, degrees: float) -> None:
        """The turntable turned ``degrees``: the cube with it while the cover is open, its bottom
        layer while the cover holds the two above; a jam when anything else holds it."""
        lifted = self._lifted()
        if lifted:
            self._fail(f"the turntable turned with {lifted} raised against the cube")
        cover = self._cover_at(self.angle["cover"])
        if cover not in ("open", "closed"):
            self._fail(f"the turntable turned with the cover half way (at {self.angle['cover']:.0f} "
                       "degrees): it catches the cube")
        # kept to the degree, never rounded: a few degrees at a time add up, as they do on the rig
        off = (self.twist if cover == "closed" else self.skew) + degrees
        q = round(off / 90.0)
        off -= 90.0 * q
        self._turned_layer = cover == "closed"
        if cover == "closed":
            self.twist = off
            if q:
                self._turn(3, q)
        else:
            self.skew = off
            if q:
                self.cube.rotate(3, q)


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

    def _closed_at(self, name: str, deg: float) -> bool:
        """Whether gripper servo ``name`` at ``deg`` holds the cube: at its closed angle, or pressing
        past it (away from open)."""
        sc = self.config.servos[name]
        o, c = sc.angle("open_deg"), sc.angle("closed_deg")
        return (deg - o if c >= o else o - deg) >= abs(c - o) - TOLERANCE_DEG

    def _closed(self, g: str) -> bool:
        return self._closed_at(f"grip_{g}", self.angle[f"grip_{g}"])

    def _square(self, g: str) -> bool:
        """The jaws lie square: a whole number of half turns from where they started."""
        return self.steps[g] % (2 * self.config.motors[g].steps_per_quarter) == 0

    def _servo(self, name: str, before: float, after: float) -> None:
        g = name[-1]
        other = "L" if g == "D" else "D"
        if abs(after - before) < 1e-9:
            return  # sent where it stands: nothing moves
        if self._closed_at(name, after):
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
