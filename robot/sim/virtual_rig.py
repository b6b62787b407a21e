"""The firmware's behaviour in Python: the rig you can run without a rig.

It speaks the protocol byte for byte (docs/protocol.md), times every move
with the same integer profile as the firmware (:mod:`robot.timing`), and
turns a virtual :class:`solver.Cube` when a move finishes, so tests can ask
the rig what really happened. Time is virtual: a clock runs it in real time,
``speed`` times faster, or event by event (``speed=max``) for tests.

Faults are injected where they happen in the real world: dropped and
corrupted bytes on the line, a cable pulled after N bytes, a firmware reset
at a given time (mid-turn if a move is running), a stalled motor.
"""

from __future__ import annotations

import bisect
import logging
import math
import random
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from solver import SOLVED_CUBE, Cube, CubeError, Move, parse_facelets

from ..rig import protocol as P
from ..rig.timing import Profile, step_ticks
from .mechanisms import Fault, virtual_mechanism

if TYPE_CHECKING:
    from ..rig.config import Config, OverlapModel
    from .mechanisms import VirtualFlipper, VirtualTwoGripper

    VirtualMechanism = VirtualFlipper | VirtualTwoGripper

log = logging.getLogger(__name__)
ESTOP_COLLISION = 3
"""EVENT ESTOP_LATCHED's argument when the virtual rig stopped on a collision."""

QUEUE_CAPACITY = 4
SERVOS = P.SERVOS
"""Servo outputs, as the firmware has (docs/protocol.md 7)."""
SERVO_MIN_US, SERVO_MAX_US, MAX_TRAVEL_MS = P.SERVO_MIN_US, P.SERVO_MAX_US, P.MAX_TRAVEL_MS
ESTOP_JAMMED = 4
"""EVENT ESTOP_LATCHED's argument when a mechanism's part could not carry out a command."""
FW_VERSION = (0, 1, 0)
NEVER = 1 << 62


# ---------------------------------------------------------------- clocks


class RealClock:
    """Virtual seconds = wall-clock seconds × speed."""

    def __init__(self, speed: float = 1.0):
        if not speed > 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._t0 = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self._t0) * self.speed

    def wait(self, until: float | None, real_timeout: float) -> None:
        """Sleep until virtual time ``until`` or for ``real_timeout`` seconds."""
        dt = real_timeout
        if until is not None:
            dt = min(dt, max(0.0, (until - self.now()) / self.speed))
        if dt > 0:
            time.sleep(dt)


class EventClock:
    """Virtual time that only moves when the host waits: it jumps straight to
    the rig's next event. Host computation takes no virtual time, so it
    measures the rig's own timing exactly (and runs as fast as the CPU)."""

    speed = float("inf")

    def __init__(self) -> None:
        self._t = 0.0

    def now(self) -> float:
        return self._t

    def wait(self, until: float | None, real_timeout: float) -> None:
        if until is not None:
            self._t = max(self._t, until)
        else:
            # Nothing scheduled: the host is waiting for bytes that were lost;
            # idle time passes one for one with real time.
            dt = min(real_timeout, 0.002)
            time.sleep(dt)
            self._t += dt


MIN_SPEED, MAX_SPEED = 0.01, 10000.0
"""A virtual rig's pace, in times real time: slower than a hundredth would
turn a short job into hours, faster than ten thousand is what 'max' is for."""


def make_clock(speed: str | float) -> RealClock | EventClock:
    if isinstance(speed, str) and speed.strip().lower() in ("max", "inf", "event"):
        return EventClock()
    try:
        s = float(speed)
    except ValueError:
        s = math.nan
    if not MIN_SPEED <= s <= MAX_SPEED:
        raise ValueError(f"speed must be 'max' or a number from {MIN_SPEED:g} to {MAX_SPEED:g} "
                         f"(times real time), not {speed!r}")
    return RealClock(s)


# ---------------------------------------------------------------- faults


MAX_RESET_S = 86400.0
"""A reset fault later than a day of rig time would never come."""


@dataclass
class Faults:
    """``drop:P,corrupt:P,disconnect:N,reset:S,stall:FACE`` (keys may repeat).

    ``disconnect:N``: the cable is pulled after N bytes have crossed it (both
    ways). ``reset:S``: the firmware restarts S seconds of rig time after the
    first MOVE or SERVO arrived. ``stall:F``: face F's motor never completes a move."""

    drop: float = 0.0
    corrupt: float = 0.0
    disconnects: list[int] = field(default_factory=list)
    resets: list[float] = field(default_factory=list)
    stalls: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, spec: str | None) -> Faults:
        f = cls()
        if not spec:
            return f
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            key, _, value = part.partition(":")
            key = key.strip().lower()
            try:
                if key == "drop" or key == "corrupt":
                    p = float(value)
                    if not 0 <= p <= 0.5:
                        raise ValueError
                    setattr(f, key, p)
                elif key == "disconnect":
                    n = int(value)
                    if n < 1:
                        raise ValueError
                    f.disconnects.append(n)
                elif key == "reset":
                    s = float(value)
                    if not 0 <= s <= MAX_RESET_S:
                        raise ValueError
                    f.resets.append(s)
                elif key == "stall":
                    face = value.strip().upper()
                    if len(face) != 1 or face not in "URFDLB":
                        raise ValueError
                    f.stalls.add(face)
                else:
                    raise KeyError(key)
            except KeyError:
                raise ValueError(f"unknown fault {key!r} in {spec!r}: expected drop:P, corrupt:P, "
                                 "disconnect:BYTES, reset:SECONDS or stall:FACE") from None
            except ValueError:
                raise ValueError(f"bad fault {part!r}: drop/corrupt take a probability 0..0.5, "
                                 "disconnect a byte count >= 1, reset seconds >= 0, "
                                 "stall a face letter") from None
        f.disconnects.sort()
        f.resets.sort()
        return f


class Disconnected(Exception):
    """The simulated cable was pulled."""


# ---------------------------------------------------------------- mechanics


@dataclass(frozen=True)
class Mechanics:
    """How each motor index turns the cube: face index, sign, steps per quarter."""

    face: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    sign: tuple[int, ...] = (1,) * 6
    steps_per_quarter: tuple[int, ...] = (400,) * 6
    cube: OverlapModel | None = None
    """What the cube lets overlap; None: no collision check."""

    @classmethod
    def from_config(cls, config: Config) -> Mechanics:
        face, sign, spq = [0] * 6, [1] * 6, [400] * 6
        for i, letter in enumerate("URFDLB"):
            m = config.motors[letter]
            face[m.motor] = i
            sign[m.motor] = -1 if m.invert else 1
            spq[m.motor] = m.steps_per_quarter
        # The cube's limits: the [cube] model, or the old single angle the file vouches for.
        cube = config.cube.overlap if config.rig.overlap_deg is None else config.overlap_model()
        return cls(tuple(face), tuple(sign), tuple(spq), cube)

    def collision(self, prev: P.MoveCommand, steps_done: dict[int, int],
                  nxt: P.MoveCommand) -> Collision | None:
        """A face of ``nxt`` starting now while a face of ``prev`` (with
        ``steps_done`` of its steps made) is farther from aligned than the
        cube allows: the pair that is worst past its class's angle."""
        if self.cube is None:
            return None
        worst: Collision | None = None
        for mp, sp in prev.motors():
            left = abs(sp) - steps_done[mp]
            if left <= 0:
                continue
            fp, qp = self.face[mp], sp * self.sign[mp] / self.steps_per_quarter[mp]
            angle = left / self.steps_per_quarter[mp] * 90.0
            for mn, sn in nxt.motors():
                fn, qn = self.face[mn], sn * self.sign[mn] / self.steps_per_quarter[mn]
                if fp % 3 == fn % 3:
                    allowed = self.cube.parallel
                else:
                    allowed = self.cube.angle(abs(round(qp)) == 2, abs(round(qn)) == 2, (qp > 0) != (qn > 0))
                past = angle - allowed
                if past > 1e-9 and (worst is None or past > worst.angle - worst.allowed):
                    worst = Collision("URFDLB"[fp], angle, "URFDLB"[fn], allowed, prev.move_id, nxt.move_id)
        return worst


@dataclass(frozen=True)
class Collision:
    """A face started while a perpendicular neighbour was too far from aligned."""

    still: str  # the face still turning
    angle: float  # degrees it had to go
    started: str  # the face that started
    allowed: float  # what the cube allows for this transition
    still_id: int
    started_id: int

    def __str__(self) -> str:
        return (f"collision: {self.started} started while {self.still} was {self.angle:.1f} degrees from "
                f"aligned (the cube allows {self.allowed:g} for this transition; moves {self.still_id} "
                f"and {self.started_id})")


@dataclass(frozen=True)
class _ServoMove(P.MoveCommand):
    """A SERVO in the queue: it runs in turn like a MOVE, steps no motor."""

    servo: P.ServoCommand | None = None

    def motors(self) -> list[tuple[int, int]]:
        return []


@dataclass
class _Active:
    cmd: P.MoveCommand
    start: int  # absolute tick before its first tick
    motion: int  # ticks until the last motor's last step
    settle: int
    steps: dict[int, tuple[int, ...]]  # motor -> step ticks (relative)
    stalled: bool = False
    no_settle: bool = False
    cut_at: int | None = None

    @property
    def done_tick(self) -> int:
        if self.stalled:
            return NEVER
        if self.cut_at is not None:
            return self.cut_at
        return self.start + self.motion + (0 if self.no_settle else self.settle)

    def steps_done(self, motor: int, tick: int) -> int:
        return bisect.bisect_right(self.steps[motor], tick - self.start)


@dataclass(frozen=True)
class TurnRecord:
    """What the virtual rig did with one move."""

    move_id: int
    moves: tuple[Move, ...]  # face turns applied to the cube
    complete: bool  # False: interrupted (reset or estop), turned to the nearest quarter
    tick: int  # when it ended
    start: int  # the tick before its first tick


class VirtualRig(P.FirmwareSession):
    """Firmware behaviour; feed it host bytes, collect its bytes, ask it the truth."""

    def __init__(self, *, clock: RealClock | EventClock | None = None, faults: Faults | None = None,
                 seed: int | None = 0,
                 cube: Cube = SOLVED_CUBE, mechanics: Mechanics | None = None,
                 protocol_version: int = P.PROTOCOL_VERSION):
        self.protocol_version = protocol_version
        self.clock = clock or RealClock(1.0)
        self.faults = faults or Faults()
        self.rng = random.Random(seed)
        self._boot_salt = secrets.randbelow(0x10000)
        """Mixed into every boot id: two rigs (two runs of `cuberobot sim-rig`,
        a rig made again after a "power cut") never share their boot ids by
        sharing a seed, as two boots of the firmware do not; within one rig
        the ids still follow the seed."""
        self.cube = cube
        self.mechanics = mechanics
        self.mechanism: VirtualMechanism | None = None
        """A flipper's or two-gripper's parts (robot/sim/mechanisms.py): the
        rig then takes CONFIG_SERVO and SERVO, and its cube is the one they hold."""
        self.servo_configured: set[int] = set()
        self.record: list[TurnRecord] = []
        self.collisions: list[Collision] = []
        self.counts_turns = [0] * 6
        self.counts_steps = [0] * 6
        self.lock = threading.RLock()
        self.boots = 0
        self._resets = deque(self.faults.resets)
        self._reset_base: int | None = None  # tick of the first MOVE or SERVO: reset times count from it
        self.tick = 0
        self._hold_after: int | None = None
        self._held_at: int | None = None  # the tick the rig's time stands at while held
        self._lag = 0  # ticks the rig's time stood still, behind its clock's
        self._conn: Connection | None = None
        self._boot(cause=1)

    # -- life cycle ------------------------------------------------------
    def _boot(self, cause: int) -> None:
        self.boots += 1
        self.boot_id = self.rng.randrange(0, 0x10000) ^ self._boot_salt
        self.boot_tick = self.tick
        self.session = False
        self.profiles: list[Profile | None] = [None] * 6
        self.servo_configured = set()
        self.idle_ms = 0
        self.estop = False
        self.cut = False  # an e-stop emptied a non-empty queue (protocol 3.2)
        self.queue: deque[P.MoveCommand] = deque()
        self.active: list[_Active] = []
        self.last_done_id = P.NO_ID
        self.last_done_tick = -1  # the tick of the last DONE (DONE.ticks counts from it)
        self._jam: tuple[int, Collision] | None = None  # a collision to come: its tick, what meets
        self.last_seq = 0
        self.last_reply = b""
        self.event_seq = 0
        self.rx = P.FirmwareReceiver(lambda: self._do_estop(1), self._realtime_status, self._command)
        self.rx_errors = 0
        self.drivers = False
        self.last_motion_tick = self.tick
        self.button_held = False
        self._emit(P.Event(P.EventCode.BOOT, cause))

    def adopt_config(self, config: Config) -> None:
        """The rig's mechanics (and a flipper's or two-gripper's parts) from
        the configuration, unless it has them already."""
        with self.lock:
            if self.mechanics is None:
                self.mechanics = Mechanics.from_config(config)
            if self.mechanism is None and config.rig.kind != "six-motor":
                self.mechanism = virtual_mechanism(config, self.cube.to_facelets())

    def facelets(self) -> str:
        """The cube as the rig holds it (a mechanism's: in the rig's frame, as a camera sees it)."""
        with self.lock:
            return self.mechanism.cube.stickers if self.mechanism is not None else self.cube.to_facelets()

    def set_facelets(self, facelets: str) -> None:
        """A person puts another cube in (checked as a cube first)."""
        with self.lock:
            if self.mechanism is not None:  # in the rig's frame: the centres may stand anywhere
                if len(facelets) != 54 or set(facelets) - set("URFDLB"):
                    raise CubeError("length", "expected 54 stickers of URFDLB")
                self.mechanism.cube.stickers = facelets
            else:
                self.cube = parse_facelets(facelets)

    def connect(self) -> Connection:
        """A new cable to the rig (the old one, if any, stops carrying bytes)."""
        with self.lock:
            self._conn = Connection(self, self.faults, self.rng)
            return self._conn

    # -- time ------------------------------------------------------------
    def now_tick(self) -> int:
        if self._held_at is not None:
            return self._held_at
        return int(self.clock.now() * P.TICK_HZ) - self._lag

    def next_event_time(self) -> float | None:
        """Virtual seconds (on the rig's clock) of the next thing the rig will do by itself."""
        with self.lock:
            if not self.active or self._held_at is not None:
                return None  # idle (or held): nothing to jump to, a due reset fires as time passes
            t = self.active[0].done_tick
            t = min(t, self._next_reset(), self._jam[0] if self._jam else NEVER)
            return None if t >= NEVER else (t + 1 + self._lag) / P.TICK_HZ

    # -- a hold, for tests ----------------------------------------------------
    def hold_after(self, moves: int) -> None:
        """For tests that must act while the rig is in the middle of a job
        (press the emergency stop mid-solve, mid-jog), whatever the machine's
        load: once the rig has recorded ``moves`` moves in all (finished, or
        cut short), its time stands still until :meth:`release`. A move under
        way stays under way (the rig says it is moving), the queue waits,
        commands are still answered and an emergency stop still latches at
        once. A host reading this rig's line in this process (a ``sim://``
        port) waits with it while nothing comes, as if it were paused too:
        its own deadlines for a move, which would stop a rig that never
        finishes, do not run out while the test holds the rig."""
        with self.lock:
            self.advance()
            self._hold_after = moves
            self._hold_if_due()

    @property
    def held(self) -> bool:
        """The rig's time stands still (:meth:`hold_after`)."""
        return self._held_at is not None

    def release(self, until: int | None = None) -> None:
        """The rig's time goes on from where it stood (a hold not yet
        reached is dropped too); with ``until``, only until it has recorded
        that many moves in all, when it stands still again (no move slips
        past in between, as it could between a release and a new hold)."""
        with self.lock:
            self._hold_after = None
            if self._held_at is not None:
                self._lag = int(self.clock.now() * P.TICK_HZ) - self._held_at
                self._held_at = None
            if until is not None:
                self._hold_after = until
                self._hold_if_due()

    def _hold_if_due(self) -> bool:
        if self._hold_after is None or len(self.record) < self._hold_after:
            return False
        self._hold_after = None
        self._held_at = self.tick
        return True

    def _next_reset(self) -> int:
        if not self._resets or self._reset_base is None:
            return NEVER
        return self._reset_base + int(self._resets[0] * P.TICK_HZ)

    def advance(self, to_tick: int | None = None) -> None:
        """Run the rig up to ``to_tick`` (now, by default)."""
        with self.lock:
            if self._held_at is not None:
                return
            target = self.now_tick() if to_tick is None else to_tick
            while True:
                # Moves report DONE in the order they started.
                done = self.active[0] if self.active else None
                t_done = done.done_tick if done else NEVER
                t_reset = self._next_reset()
                t_jam = self._jam[0] if self._jam else NEVER
                if min(t_done, t_reset, t_jam) > target:
                    break
                if t_jam <= min(t_done, t_reset):
                    self.tick = max(self.tick, t_jam)
                    self._collide()
                elif t_reset <= t_done:
                    self.tick = max(self.tick, t_reset)
                    self._resets.popleft()
                    self._interrupt_all()
                    self._boot(cause=2)
                elif done is not None:
                    self.tick = max(self.tick, t_done)
                    self._finish(done)
                if self._hold_if_due():
                    return  # held: the rig's time stands at this tick
            self.tick = max(self.tick, target)

    # -- moves -----------------------------------------------------------
    def _start_next(self, at: int) -> None:
        """Start queued moves that may run now (section 4.2/4.3)."""
        while self.queue:
            cmd = self.queue[0]
            if not self.active:
                start = at
            elif len(self.active) == 1 and cmd.overlap > 0 and self._disjoint(self.active[0].cmd, cmd) \
                    and not isinstance(self.active[0].cmd, _ServoMove):
                prev = self.active[0]
                if at >= prev.start + prev.motion:
                    # Queued while the previous move settles: it starts at the
                    # next tick and the previous one reports DONE now.
                    prev.cut_at = at
                    self.queue.popleft()
                    self.active.append(self._activate(cmd, at))
                    return
                release = 0
                for m, s in prev.cmd.motors():
                    n = abs(s)
                    if cmd.overlap < n:
                        release = max(release, prev.steps[m][n - cmd.overlap - 1])
                start = max(at, prev.start + release)
                prev.no_settle = True
                mech = self.mechanics or Mechanics()
                done = {m: prev.steps_done(m, start) for m, _ in prev.cmd.motors()}
                hit = mech.collision(prev.cmd, done, cmd)
                if hit is not None:
                    self._jam = (start, hit)  # the faces meet when the move starts
                    return
            else:
                return
            self.queue.popleft()
            self.active.append(self._activate(cmd, start))

    def _collide(self) -> None:
        """The faces jam: everything stops where it is (as an emergency stop
        does, so the host hears the latch and the run stops)."""
        assert self._jam is not None
        hit = self._jam[1]
        self._jam = None
        log.warning("virtual rig: %s", hit)
        self.collisions.append(hit)
        self._do_estop(ESTOP_COLLISION)

    @staticmethod
    def _disjoint(a: P.MoveCommand, b: P.MoveCommand) -> bool:
        return not ({m for m, _ in a.motors()} & {m for m, _ in b.motors()})

    def _activate(self, cmd: P.MoveCommand, start: int) -> _Active:
        steps = {}
        motion = 0
        settle = 0
        stalled = False
        for m, s in cmd.motors():
            p = self.profiles[m]
            assert p is not None, "MOVE on an unconfigured motor is refused before it is activated"
            steps[m] = step_ticks(abs(s), p.vmax_q, p.accel_q, p.vmin_q)
            motion = max(motion, steps[m][-1])
            settle = max(settle, p.settle_ms * 25)
            if self.mechanics and "URFDLB"[self.mechanics.face[m]] in self.faults.stalls:
                stalled = True
        if isinstance(cmd, _ServoMove) and cmd.servo is not None:
            motion = max(1, cmd.servo.travel_ms * P.TICK_HZ // 1000)
        else:
            self.drivers = True
        return _Active(cmd, start, motion, settle, steps, stalled)

    def _turns(self, motor: int, steps: int) -> Move | None:
        mech = self.mechanics or Mechanics()
        q = steps * mech.sign[motor] / mech.steps_per_quarter[motor]
        quarters = round(q) % 4
        return Move(mech.face[motor], quarters) if quarters else None

    def _apply(self, a: _Active, steps_by_motor: dict[int, int], complete: bool) -> None:
        if self.mechanism is not None:
            self._apply_mechanism(a, steps_by_motor, complete)
            return
        moves = []
        for m, s in steps_by_motor.items():
            mv = self._turns(m, s)
            self.counts_steps[m] += abs(s)
            if mv is not None:
                moves.append(mv)
                self.counts_turns[m] += 1
        self.cube = self.cube.apply(moves)
        self.record.append(TurnRecord(a.cmd.move_id, tuple(moves), complete, self.tick, a.start))

    def _apply_mechanism(self, a: _Active, steps_by_motor: dict[int, int], complete: bool) -> None:
        """A servo's pulse (set when its move started, so it goes there even
        when the move is cut short) or a gripper's steps, to the parts."""
        assert self.mechanism is not None
        moving = {m: s for m, s in steps_by_motor.items() if s}
        for m, s in moving.items():
            self.counts_steps[m] += abs(s)
        try:
            if isinstance(a.cmd, _ServoMove) and a.cmd.servo is not None:
                self.mechanism.execute(a.cmd.servo)
            for m, s in moving.items():
                self.mechanism.execute(P.MoveCommand(a.cmd.move_id, m, s))
        except Fault as e:
            log.warning("virtual %s rig: %s", self.mechanism.config.rig.kind, e)
        self.record.append(TurnRecord(a.cmd.move_id, (), complete, self.tick, a.start))

    def _finish(self, a: _Active) -> None:
        self.active.remove(a)
        self._apply(a, dict(a.cmd.motors()), True)
        if self.mechanism is not None and self.mechanism.fault is not None:
            self._do_estop(ESTOP_JAMMED)  # a jammed part: everything stops, no DONE
            return
        self.last_done_id = a.cmd.move_id
        # The rig's time this move added: from its start, or from the previous
        # DONE when it started before that (an overlap), to its own DONE.
        ticks = a.done_tick - max(a.start, self.last_done_tick)
        self.last_done_tick = a.done_tick
        self.last_motion_tick = self.tick
        self._start_next(self.tick)
        self._emit(P.Done(a.cmd.move_id, ticks, self._queue_free()))

    def _interrupt_all(self) -> None:
        """Power cut or estop: motors stop where they are; the cube keeps the
        nearest quarter turn (a half-done turn is where the truth is lost)."""
        for a in sorted(self.active, key=lambda a: a.start):
            done = {}
            for m, s in a.cmd.motors():
                n = 0 if a.stalled else a.steps_done(m, self.tick)
                n = min(n, abs(s))
                done[m] = n if s > 0 else -n
            self._apply(a, done, False)
        self.active.clear()
        self.queue.clear()
        self._jam = None

    def _queue_free(self) -> int:
        return QUEUE_CAPACITY - len(self.queue) - len(self.active)

    # -- bytes -----------------------------------------------------------
    def _emit(self, msg: P.Message, seq: int | None = None) -> bytes:
        if seq is None:
            self.event_seq = P.next_seq(self.event_seq)
            seq = self.event_seq
        data = P.encode(msg, seq)
        if self._conn is not None:
            self._conn.from_rig(data)
        return data

    def receive(self, data: bytes) -> None:
        """Bytes from the host, arriving now, taken as the firmware takes them
        (:class:`P.FirmwareReceiver`)."""
        with self.lock:
            self.advance()
            self.rx.feed(data)
            self.rx_errors = min(255, self.rx.errors)

    def _realtime_status(self) -> None:
        self._emit(P.RealtimeStatus(*self._status_fields()))

    def _do_estop(self, arg: int) -> None:
        if self.queue or self.active:
            self.cut = True
        self._interrupt_all()
        self.drivers = False
        already = self.estop
        self.estop = True
        if not already:
            self._emit(P.Event(P.EventCode.ESTOP_LATCHED, arg))

    def press(self) -> None:
        """The start button, pressed and released."""
        with self.lock:
            self.advance()
            self._emit(P.Event(P.EventCode.BUTTON, 0))

    def reset(self) -> None:
        """The board's reset button, as the firmware in simavr has it: the
        moves under way stop where they are, the firmware restarts (a new
        boot id) and the cube stays. For tests that reset the rig at a point
        of the job the rig itself reports, where ``reset:S`` counts rig time."""
        with self.lock:
            self.advance()
            self._interrupt_all()
            self._boot(cause=2)

    def _status_fields(self) -> tuple:
        moving = bool(self.active)
        idle = self.idle_ms and self.tick - self.last_motion_tick > self.idle_ms * 25
        if not moving and idle:
            self.drivers = False
        flags = ((P.StatusFlag.SESSION if self.session else 0) | (P.StatusFlag.ESTOP if self.estop else 0)
                 | (P.StatusFlag.MOVING if moving else 0) | (P.StatusFlag.DRIVERS if self.drivers else 0)
                 | (P.StatusFlag.BUTTON if self.button_held else 0)
                 | (P.StatusFlag.CONFIGURED if all(self.profiles) else 0)
                 | (P.StatusFlag.CUT if self.cut else 0))
        active = min(self.active, key=lambda a: a.start).cmd.move_id if self.active else P.NO_ID
        uptime = (self.tick - self.boot_tick) * 1000 // P.TICK_HZ
        return (self.boot_id, flags, self.last_done_id, active, len(self.queue) + len(self.active),
                uptime & 0xFFFFFFFF, self.rx_errors)

    BOARD = P.BOARD_VIRTUAL
    FIRMWARE = FW_VERSION
    CAPACITY = QUEUE_CAPACITY

    def _resend(self, reply: bytes) -> None:
        if self._conn is not None:
            self._conn.from_rig(reply)

    def _execute(self, msg: P.Message) -> P.Message:
        """One command of a session, as the firmware takes it (docs/protocol.md 2)."""
        if not self.session:
            return P.Err(P.ErrorCode.NO_SESSION)
        match msg:
            case P.ConfigMotor():
                return self._config_motor(msg)
            case P.ConfigGlobal():
                self.idle_ms = msg.idle_ms
                return P.Ack(self._queue_free())
            case P.MoveCommand():
                return self._move(msg)
            case P.ConfigServo() if self.mechanism is not None:
                return self._config_servo(msg)
            case P.ServoCommand() if self.mechanism is not None:
                return self._servo(msg)
            case P.ClearEstop():
                if self.mechanism is not None and self.mechanism.fault is not None:
                    return P.Err(P.ErrorCode.ESTOP, ESTOP_JAMMED)  # a jammed part stays jammed
                if self.estop:
                    self.estop = False
                    self._emit(P.Event(P.EventCode.ESTOP_CLEARED, 0))
                return P.Ack(self._queue_free())
            case P.Release() if self.active:
                return P.Err(P.ErrorCode.BUSY)
            case P.Release():
                self.drivers = False
                return P.Ack(self._queue_free())
        return P.Err(P.ErrorCode.UNKNOWN_TYPE)  # a reply type, or a servo's command: no servos here

    def _config_motor(self, msg: P.ConfigMotor) -> P.Message:
        if msg.motor > 5 or not (1 <= msg.vmin_q <= msg.vmax_q < P.Q) or msg.accel_q < 1:
            return P.Err(P.ErrorCode.BAD_ARG, msg.motor)
        if self.active:
            return P.Err(P.ErrorCode.BUSY)
        self.profiles[msg.motor] = Profile(msg.vmax_q, msg.accel_q, msg.vmin_q, msg.settle_ms)
        return P.Ack(self._queue_free())

    def _config_servo(self, msg: P.ConfigServo) -> P.Message:
        """As the firmware: servo 0..2, limits within 400..2600 us, only while idle."""
        assert self.mechanism is not None
        if self.queue or self.active:
            return P.Err(P.ErrorCode.BUSY)
        if msg.servo >= SERVOS:
            return P.Err(P.ErrorCode.BAD_ARG, 0)
        if not SERVO_MIN_US <= msg.min_us < msg.max_us <= SERVO_MAX_US:
            return P.Err(P.ErrorCode.BAD_ARG, 1)
        name = self.mechanism.names.get(msg.servo)
        if name is not None:
            self.mechanism.limits[name] = (msg.min_us, msg.max_us)
        self.servo_configured.add(msg.servo)
        return P.Ack(self._queue_free())

    def _servo(self, msg: P.ServoCommand) -> P.Message:
        assert self.mechanism is not None
        name = self.mechanism.names.get(msg.servo)
        refused = P.servo_refusal(msg, latch=0 if self.estop else None, present=True,
                                  configured=msg.servo in self.servo_configured,
                                  limits=self.mechanism.limits[name] if name is not None else
                                  (P.SERVO_MIN_US, P.SERVO_MAX_US), queue_free=self._queue_free())
        if refused is not None:
            return refused
        self.queue.append(_ServoMove(msg.move_id, P.NO_MOTOR, 0, servo=msg))
        self.cut = False
        if self._reset_base is None:  # a servo's travel is a move too: a flipper has no MOVE at all
            self._reset_base = self.tick
        self._start_next(self.tick)
        return P.Ack(self._queue_free())

    def _move(self, msg: P.MoveCommand) -> P.Message:
        if self.estop:
            return P.Err(P.ErrorCode.ESTOP)
        parts = msg.motors()
        motors = [m for m, _ in parts]
        if (any(m > 5 for m in motors) or len(set(motors)) != len(motors)
                or any(s == 0 or abs(s) > P.MAX_STEPS for _, s in parts)
                or any(m - 1 in self.servo_configured for m in motors)):  # that DIR pin drives a servo
            return P.Err(P.ErrorCode.BAD_ARG)
        if any(self.profiles[m] is None for m in motors):
            return P.Err(P.ErrorCode.NOT_CONFIGURED, next(m for m in motors if self.profiles[m] is None))
        if self._queue_free() <= 0:
            return P.Err(P.ErrorCode.QUEUE_FULL)
        self.queue.append(msg)
        self.cut = False
        if self._reset_base is None:
            self._reset_base = self.tick
        self._start_next(self.tick)
        return P.Ack(self._queue_free())


class Connection:
    """One cable between the host and the rig, with its faults."""

    def __init__(self, rig: VirtualRig, faults: Faults, rng: random.Random):
        self.rig = rig
        self.faults = faults
        self.rng = rng
        self.to_host = bytearray()
        self.broken = False
        self.bytes = 0

    def _line(self, data: bytes) -> bytes:
        f = self.faults
        if f.disconnects:
            self.bytes += len(data)
            if self.bytes >= f.disconnects[0]:
                f.disconnects.pop(0)
                self.broken = True
                return b""
        if not (f.drop or f.corrupt):
            return data
        out = bytearray()
        rnd = self.rng.random
        for b in data:
            if f.drop and rnd() < f.drop:
                continue
            if f.corrupt and rnd() < f.corrupt:
                b ^= self.rng.randrange(1, 256)
            out.append(b)
        return bytes(out)

    def from_rig(self, data: bytes) -> None:
        if self.broken or self.rig._conn is not self:
            return
        self.to_host += self._line(data)

    def write(self, data: bytes) -> None:
        if self.broken:
            raise Disconnected()
        data = self._line(data)
        if self.broken:
            raise Disconnected()
        self.rig.receive(data)
