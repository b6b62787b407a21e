"""The rig protocol's bytes: frames, escaping, CRC and the messages (docs/protocol.md).

Shared by the host driver (:mod:`robot.link`) and the virtual rig
(:mod:`robot.virtual_rig`), so both ends agree by construction; the C
firmware is checked against this module in its simavr tests.
"""

from __future__ import annotations

import binascii
import enum
import struct
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import ClassVar, TypeVar

PROTOCOL_VERSION = 2

FLAG = 0x7E
ESC = 0x7D
RT_ESTOP = 0x18
RT_STATUS = 0x05
ESTOP_RUN = 3
"""The emergency stop is this many ``RT_ESTOP`` bytes in a row, nothing else
between them; a shorter run is line noise and stops nothing (docs/protocol.md 1.1)."""
ESTOP_SEQUENCE = bytes((RT_ESTOP,)) * ESTOP_RUN
ESTOP_REPEATS = 3
"""The host sends ``ESTOP_SEQUENCE`` this many times, so that a byte lost or
damaged on the line cannot cancel the stop."""
_SPECIAL = frozenset((FLAG, ESC, RT_ESTOP, RT_STATUS))

MAX_CONTENT = 24
"""Unescaped type + seq + payload + CRC, at most."""
MIN_CONTENT = 4
MAX_FRAME = 2 + 2 * MAX_CONTENT
NO_MOTOR = 0xFF
NO_ID = 0xFFFF
MAX_STEPS = 30000

TICK_HZ = 25000
Q = 1 << 24


class ErrorCode(enum.IntEnum):
    """ERR frames' codes (docs/protocol.md 2.3)."""

    UNKNOWN_TYPE = 2
    BAD_LENGTH = 3
    BAD_ARG = 4
    NO_SESSION = 5
    NOT_CONFIGURED = 6
    QUEUE_FULL = 7
    ESTOP = 8
    VERSION = 9
    BUSY = 10


class EventCode(enum.IntEnum):
    """EVENT frames' kinds."""

    BOOT = 1
    BUTTON = 2
    ESTOP_LATCHED = 3
    ESTOP_CLEARED = 4


class StatusFlag(enum.IntFlag):
    """STATUS frames' flag bits."""

    SESSION = 1
    ESTOP = 2
    MOVING = 4
    DRIVERS = 8
    BUTTON = 16
    CONFIGURED = 32
    CUT = 64
    """An emergency stop emptied a non-empty queue (a turn may have stopped
    part-way); kept until the next accepted MOVE or a boot, clearing the
    latch does not clear it."""


BOARD_UNO = 1
BOARD_MEGA = 2
BOARD_GPIO = 3
"""The rig computer's own pins (robot/gpio/): the firmware's part played inside cuberobot."""
BOARD_VIRTUAL = 100


class ProtocolError(ValueError):
    """A frame whose content does not fit any message (unknown type, bad length)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def crc16(data: bytes | bytearray) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final
    XOR), the firmware's frame check; the standard library computes it."""
    return binascii.crc_hqx(data, 0xFFFF)


def escape(content: bytes) -> bytes:
    out = bytearray()
    for b in content:
        if b in _SPECIAL:
            out.append(ESC)
            out.append(b ^ 0x20)
        else:
            out.append(b)
    return bytes(out)


def frame(content_without_crc: bytes) -> bytes:
    """Delimit, checksum and escape ``TYPE SEQ PAYLOAD``."""
    crc = crc16(content_without_crc)
    body = content_without_crc + bytes((crc & 0xFF, crc >> 8))
    return bytes((FLAG,)) + escape(body) + bytes((FLAG,))


class FrameDecoder:
    """Incremental receiver: bytes in, checked frame contents (and real-time bytes) out.

    Garbage costs at most the frame it hits: a ``0x7E`` always starts afresh.
    ``realtime=True`` is the firmware side, where 0x18 and 0x05 are real-time
    bytes wherever they appear, handed out one by one (whether 0x18s make an
    emergency stop, a run of ``ESTOP_RUN``, is the receiver's rule); on the
    host side they are just bad bytes.
    """

    def __init__(self, realtime: bool = False):
        self.realtime = realtime
        self._buf = bytearray()
        self._in_frame = False
        self._escaped = False
        self._overflow = False
        self.errors = 0  # bad CRC, bad escape, overflow

    def feed(self, data: bytes) -> list[bytes | int]:
        """Returns the frames completed by ``data`` (content without CRC, as
        bytes) and, with ``realtime``, real-time bytes as ints, in order."""
        out: list[bytes | int] = []
        for b in data:
            if self.realtime and (b == RT_ESTOP or b == RT_STATUS):
                out.append(b)
                continue
            if b == FLAG:
                if self._in_frame:
                    content = self._finish()
                    if content is not None:
                        out.append(content)
                self._in_frame = True
                self._buf.clear()
                self._escaped = False
                self._overflow = False
                continue
            if not self._in_frame:
                continue
            if b == ESC:
                if self._escaped:
                    self._overflow = True  # double escape: a broken frame
                self._escaped = True
                continue
            if self._escaped:
                b ^= 0x20
                self._escaped = False
            elif b in _SPECIAL:
                self._overflow = True  # a byte that must have been escaped
            if len(self._buf) >= MAX_CONTENT:
                self._overflow = True
            else:
                self._buf.append(b)
        return out

    def _finish(self) -> bytes | None:
        buf = self._buf
        if self._overflow:
            self.errors += 1
            return None
        if len(buf) < MIN_CONTENT:
            if buf:
                self.errors += 1
            return None
        if crc16(buf[:-2]) != buf[-2] | (buf[-1] << 8) or self._escaped:
            self.errors += 1
            return None
        return bytes(buf[:-2])


class FirmwareReceiver:
    """The firmware's receive interrupt, for a rig played in Python (the
    virtual rig, the rig on the Pi's own pins): every byte from the host,
    sorted as the firmware sorts it (docs/protocol.md 1.1).

    ``RT_ESTOP`` never reaches the frame decoder and stops only as the last of
    a run of :data:`ESTOP_RUN` (so one stray 0x18 stops nothing); any other
    byte ends the run. ``RT_STATUS`` asks for a real-time status at once; a
    checked frame's content is a command. What each means is the rig's: it
    hands its three handlers in, so the rule lives here once."""

    def __init__(self, estop: Callable[[], None], status: Callable[[], None],
                 command: Callable[[bytes], None]):
        self._estop, self._status, self._command = estop, status, command
        self._frames = FrameDecoder(realtime=True)
        self.estop_run = 0
        """RT_ESTOP bytes in a row, up to :data:`ESTOP_RUN`."""

    @property
    def errors(self) -> int:
        """Frames lost to a bad CRC, a bad escape or an overflow."""
        return self._frames.errors

    def feed(self, data: bytes) -> None:
        """Bytes from the host, in order, each handed to its handler as it completes."""
        for b in data:
            if b == RT_ESTOP:
                self.estop_run = min(self.estop_run + 1, ESTOP_RUN)
                if self.estop_run == ESTOP_RUN:
                    self._estop()
                continue
            self.estop_run = 0
            for item in self._frames.feed(bytes((b,))):
                if isinstance(item, int):
                    self._status()
                else:
                    self._command(item)


SERVOS = 3
"""Servo channels the firmware has (docs/protocol.md 2.2, CONFIG_SERVO)."""
SERVO_MIN_US, SERVO_MAX_US, MAX_TRAVEL_MS = 400, 2600, 10000
"""The widest pulse range a servo may be configured with, and the longest
travel a SERVO command may ask for (the firmware's CR_MAX_TRAVEL_MS)."""


def servo_refusal(msg: ServoCommand, *, latch: int | None, present: bool, configured: bool,
                  limits: tuple[int, int], queue_free: int) -> Err | None:
    """Why a rig played in Python refuses a SERVO command, checked in the
    firmware's order, or None when it is taken. ``latch``: the stop's
    detail while it is latched (None: not latched); ``present``: the rig
    has that servo; ``limits``: its configured pulse range."""
    if latch is not None:
        return Err(ErrorCode.ESTOP, latch)
    if msg.servo >= SERVOS or not present:
        return Err(ErrorCode.BAD_ARG, 0)
    if not configured:
        return Err(ErrorCode.NOT_CONFIGURED, msg.servo)
    if not limits[0] <= msg.pulse_us <= limits[1]:
        return Err(ErrorCode.BAD_ARG, 1)
    if msg.travel_ms > MAX_TRAVEL_MS:
        return Err(ErrorCode.BAD_ARG, 2)
    if queue_free <= 0:
        return Err(ErrorCode.QUEUE_FULL)
    return None


class FirmwareSession:
    """The firmware's session rules (docs/protocol.md 2), for a rig played in
    Python: what a checked frame's content does before the command itself.

    A frame that does not decode is answered ERR with its type as the detail,
    as the firmware answers; a status query is answered in or out of a
    session; HELLO of the right version opens one and is remembered; a
    command that repeats the last one's sequence number is answered from
    memory and not run again (the host resends when a reply was lost); any
    other command needs a session, and its reply is remembered.

    The virtual rig and the rig on the Pi's own pins inherit these rules and
    give what is theirs: :meth:`_emit` (a reply onto their line),
    :meth:`_resend`, :meth:`_status_fields`, :meth:`_execute`, their
    :attr:`BOARD` and what follows a HELLO (:meth:`_opened`)."""

    BOARD: int = 0
    """The board number HELLO_OK gives."""
    FIRMWARE: tuple[int, int, int] = (0, 1, 0)
    """The firmware version HELLO_OK gives."""
    CAPACITY: int = 4
    """The queue's capacity HELLO_OK gives."""
    protocol_version: int = PROTOCOL_VERSION
    """The protocol this rig speaks (a test rig may speak another)."""
    boot_id: int
    session: bool = False
    last_seq: int = 0
    last_reply: bytes = b""

    def _emit(self, msg: Message, seq: int | None = None) -> bytes:
        raise NotImplementedError

    def _resend(self, reply: bytes) -> None:
        """``reply`` onto the line again, as it was."""
        raise NotImplementedError

    def _status_fields(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _execute(self, msg: Message) -> Message:
        raise NotImplementedError

    def _opened(self) -> None:
        """What the rig does once a HELLO opened a session (nothing by default)."""

    def _command(self, content: bytes) -> None:
        """One checked frame's content from the host (:class:`FirmwareReceiver`)."""
        seq = content[1]
        try:
            _, msg = decode(content)
        except ProtocolError as e:
            self._emit(Err(e.code, content[0]), seq)
            return
        if isinstance(msg, StatusQuery):
            self._emit(Status(*self._status_fields()), seq)
            return
        if isinstance(msg, Hello):
            if msg.version != self.protocol_version:
                self._emit(Err(ErrorCode.VERSION, self.protocol_version), seq)
                return
            self.session = True
            self.last_seq = seq
            self.last_reply = self._emit(HelloOk(PROTOCOL_VERSION, *self.FIRMWARE, self.BOARD, self.CAPACITY,
                                                 self.boot_id, TICK_HZ), seq)
            self._opened()
            return
        if seq == self.last_seq and self.last_reply:
            self._resend(self.last_reply)  # a repeat: answered from memory, not run again
            return
        if not self.session:
            self._emit(Err(ErrorCode.NO_SESSION), seq)  # not remembered: nothing was run
            return
        reply = self._execute(msg)
        self.last_seq = seq
        self.last_reply = self._emit(reply, seq)


# ---------------------------------------------------------------- messages


@dataclass(frozen=True)
class Message:
    TYPE: ClassVar[int] = 0
    FORMAT: ClassVar[str] = ""

    def payload(self) -> bytes:
        return struct.pack("<" + self.FORMAT, *(getattr(self, f.name) for f in fields(self)))


M = TypeVar("M", bound="Message")


def _msg(type_: int, fmt: str) -> Callable[[type[M]], type[M]]:
    def wrap(cls: type[M]) -> type[M]:
        cls.TYPE = type_
        cls.FORMAT = fmt
        return cls
    return wrap


# Host -> firmware
@_msg(0x01, "B")
@dataclass(frozen=True)
class Hello(Message):
    version: int = PROTOCOL_VERSION


@_msg(0x02, "BIIIH")
@dataclass(frozen=True)
class ConfigMotor(Message):
    motor: int
    vmax_q: int
    accel_q: int
    vmin_q: int
    settle_ms: int


@_msg(0x03, "H")
@dataclass(frozen=True)
class ConfigGlobal(Message):
    idle_ms: int


@_msg(0x04, "HBhBhH")
@dataclass(frozen=True)
class MoveCommand(Message):
    move_id: int
    motor_a: int
    steps_a: int
    motor_b: int = NO_MOTOR
    steps_b: int = 0
    overlap: int = 0

    def motors(self) -> list[tuple[int, int]]:
        """``(motor, steps)`` for each motor of the move."""
        out = [(self.motor_a, self.steps_a)]
        if self.motor_b != NO_MOTOR:
            out.append((self.motor_b, self.steps_b))
        return out


@_msg(0x05, "")
@dataclass(frozen=True)
class StatusQuery(Message):
    pass


@_msg(0x06, "")
@dataclass(frozen=True)
class ClearEstop(Message):
    pass


@_msg(0x07, "")
@dataclass(frozen=True)
class Release(Message):
    pass


@_msg(0x08, "BHH")
@dataclass(frozen=True)
class ConfigServo(Message):
    """A hobby servo's pulse limits (docs/protocol.md 7): the firmware never
    sends a pulse outside them, whatever a SERVO asks."""

    servo: int
    min_us: int
    max_us: int


@_msg(0x09, "HBHH")
@dataclass(frozen=True)
class ServoCommand(Message):
    """Queued like a MOVE: servo ``servo`` to ``pulse_us``, reported DONE
    ``travel_ms`` later (a servo says nothing; the host's timing table
    says how long it travels)."""

    move_id: int
    servo: int
    pulse_us: int
    travel_ms: int


# Firmware -> host
@_msg(0x80, "B")
@dataclass(frozen=True)
class Ack(Message):
    queue_free: int


@_msg(0x81, "BBBBBBHH")
@dataclass(frozen=True)
class HelloOk(Message):
    version: int
    fw_major: int
    fw_minor: int
    fw_patch: int
    board: int
    queue_capacity: int
    boot_id: int
    tick_hz: int


@_msg(0x82, "BB")
@dataclass(frozen=True)
class Err(Message):
    code: int
    detail: int = 0

    @property
    def name(self) -> str:
        try:
            return ErrorCode(self.code).name
        except ValueError:
            return f"error {self.code}"


@_msg(0x85, "HBHHBIB")
@dataclass(frozen=True)
class Status(Message):
    boot_id: int
    flags: int
    last_done_id: int
    active_id: int
    queue_len: int
    uptime_ms: int
    rx_errors: int

    @property
    def session(self) -> bool:
        return bool(self.flags & StatusFlag.SESSION)

    @property
    def estop(self) -> bool:
        return bool(self.flags & StatusFlag.ESTOP)

    @property
    def moving(self) -> bool:
        return bool(self.flags & StatusFlag.MOVING)

    @property
    def cut(self) -> bool:
        return bool(self.flags & StatusFlag.CUT)


@_msg(0x86, "HBHHBIB")
@dataclass(frozen=True)
class RealtimeStatus(Status):
    pass


@_msg(0x90, "HIB")
@dataclass(frozen=True)
class Done(Message):
    move_id: int
    ticks: int
    queue_free: int


@_msg(0x91, "BB")
@dataclass(frozen=True)
class Event(Message):
    event: int
    arg: int = 0


MESSAGES: dict[int, type[Message]] = {
    cls.TYPE: cls for cls in (Hello, ConfigMotor, ConfigGlobal, MoveCommand, StatusQuery, ClearEstop,
                              Release, ConfigServo, ServoCommand, Ack, HelloOk, Err, Status, RealtimeStatus,
                              Done, Event)
}
_SIZES = {t: struct.calcsize("<" + cls.FORMAT) for t, cls in MESSAGES.items()}


def encode(msg: Message, seq: int) -> bytes:
    """The complete frame for ``msg`` with sequence number ``seq``."""
    return frame(bytes((msg.TYPE, seq & 0xFF)) + msg.payload())


def decode(content: bytes) -> tuple[int, Message]:
    """``(seq, message)`` from a checked frame content (CRC already removed).

    Raises :class:`ProtocolError` with the error code the firmware would send.
    """
    type_, seq = content[0], content[1]
    cls = MESSAGES.get(type_)
    if cls is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type 0x{type_:02X}")
    if len(content) - 2 != _SIZES[type_]:
        raise ProtocolError(ErrorCode.BAD_LENGTH, f"{cls.__name__} with {len(content) - 2} payload bytes, "
                                            f"expected {_SIZES[type_]}")
    return seq, cls(*struct.unpack("<" + cls.FORMAT, content[2:]))


def next_seq(seq: int) -> int:
    """1..255, skipping 0."""
    return seq % 255 + 1
