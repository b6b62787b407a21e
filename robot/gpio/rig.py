"""The firmware's part, played inside cuberobot for a rig on the Pi's own pins.

The host talks to it exactly as to the Arduino (docs/protocol.md, the same
bytes through :mod:`robot.rig.protocol`): HELLO, CONFIG_SERVO, SERVO with
its move id and a DONE when the travel is over, STATUS, the emergency stop
run and its latch, the start button's EVENT. So the journal, the emergency
stop, resume and the planner work unchanged; only the transport differs.

As on the firmware, commands go into one queue of four and run in order:
a SERVO sets its servo's pulse when it starts and reports DONE
``travel_ms`` later (a servo says nothing, the host's timing table says how
long it travels). A thread of its own plays the firmware's main loop, so a
queued move starts on time whatever the host is doing. The emergency stop
is taken in the caller's thread the moment its bytes are written: the
queue emptied, every servo's pulses stopped, the latch set.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass

from ..rig import protocol as P
from .board import Board

QUEUE_CAPACITY = 4
SERVOS, SERVO_MIN_US, SERVO_MAX_US, MAX_TRAVEL_MS = P.SERVOS, P.SERVO_MIN_US, P.SERVO_MAX_US, P.MAX_TRAVEL_MS
"""The firmware's limits (servo.h, app.cpp), so both rigs refuse the same."""
FW_VERSION = (0, 1, 0)
ESTOP_INPUT = 2
"""EVENT ESTOP_LATCHED's argument and ERR_ESTOP's detail for the e-stop switch."""


@dataclass
class _Active:
    cmd: P.ServoCommand
    end: float  # monotonic seconds when its travel is over
    ticks: int


class GpioRig(P.FirmwareSession):
    """The rig's side of the protocol, driving ``board``'s pins.

    ``speed``: times real time for the servos' travel (None: no wait at all),
    only ever other than 1 on gpiozero's mock pins, where no servo moves."""

    def __init__(self, board: Board, speed: float | None = 1.0):
        self.board = board
        self.speed = speed
        self.lock = threading.RLock()
        self._cond = threading.Condition(self.lock)
        self.to_host = bytearray()
        self.listeners: list[threading.Event] = []
        self.conn: object = None
        """The port that reads :attr:`to_host` (the newest opened)."""
        self._closed = False
        self.boot_id = 0
        self._boot()
        self._thread = threading.Thread(target=self._main_loop, name="cuberobot-gpio-rig", daemon=True)
        self._thread.start()

    # -- life --------------------------------------------------------------
    def _boot(self) -> None:
        self.boot_id = secrets.randbelow(0x10000)
        self.t0 = time.monotonic()
        self.session = False
        self.estop = self.board.estop_held
        self.cut = False
        self.queue: deque[P.ServoCommand] = deque()
        self.active: _Active | None = None
        self.last_done_id = P.NO_ID
        self.last_seq = 0
        self.last_reply = b""
        self.event_seq = 0
        self.rx = P.FirmwareReceiver(lambda: self.stop(1), self._realtime_status, self._command)
        self.configured: set[int] = set()
        self._emit(P.Event(P.EventCode.BOOT, 1))
        self._light()

    def close(self) -> None:
        """The process lets the pins go: no more pulses, devices closed."""
        with self.lock:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=2.0)
        self.board.stop()
        self.board.close()

    # -- the main loop ---------------------------------------------------------
    def _main_loop(self) -> None:
        with self._cond:
            while not self._closed:
                a = self.active
                now = time.monotonic()
                if a is not None and now >= a.end:
                    self._finish(a)
                    continue
                self._cond.wait(None if a is None else a.end - now)

    def _start_next(self) -> None:
        if self.active is not None or not self.queue or self.estop:
            return
        cmd = self.queue.popleft()
        self.board.pulse(cmd.servo, cmd.pulse_us)
        travel = cmd.travel_ms / 1000.0
        wait = 0.0 if self.speed is None else travel / self.speed
        self.active = _Active(cmd, time.monotonic() + wait, cmd.travel_ms * P.TICK_HZ // 1000)
        self._cond.notify_all()

    def _finish(self, a: _Active) -> None:
        self.active = None
        self.last_done_id = a.cmd.move_id
        self._start_next()
        self._emit(P.Done(a.cmd.move_id, a.ticks, self._queue_free()))

    def _queue_free(self) -> int:
        return QUEUE_CAPACITY - len(self.queue) - (self.active is not None)

    # -- bytes ---------------------------------------------------------------
    def _emit(self, msg: P.Message, seq: int | None = None) -> bytes:
        if seq is None:
            self.event_seq = P.next_seq(self.event_seq)
            seq = self.event_seq
        data = P.encode(msg, seq)
        self.to_host += data
        for ev in self.listeners:
            ev.set()
        return data

    def receive(self, data: bytes) -> None:
        """Bytes from the host, taken as the firmware takes them (:class:`P.FirmwareReceiver`)."""
        with self.lock:
            self.rx.feed(data)

    def _realtime_status(self) -> None:
        self._emit(P.RealtimeStatus(*self._status_fields()))

    def stop(self, arg: int) -> None:
        """The emergency stop: pulses off at once, the queue emptied, latched."""
        with self.lock:
            if self.queue or self.active is not None:
                self.cut = True
            self.board.stop()
            self.queue.clear()
            self.active = None
            already = self.estop
            self.estop = True
            if not already:
                self._emit(P.Event(P.EventCode.ESTOP_LATCHED, arg))
            self._light()
            self._cond.notify_all()

    def clear_latch(self) -> P.Ack | P.Err:
        """CLEAR_ESTOP, from the host's session or from `cuberobot estop
        --clear` in another terminal (:mod:`.remote`): refused while the
        stop switch is held, as the firmware refuses it."""
        with self.lock:
            if self.board.estop_held:
                return P.Err(P.ErrorCode.ESTOP, ESTOP_INPUT)
            if self.estop:
                self.estop = False
                self._emit(P.Event(P.EventCode.ESTOP_CLEARED, 0))
                self._light()
            return P.Ack(self._queue_free())

    def press(self) -> None:
        """The start button, pressed (debounced by gpiozero)."""
        with self.lock:
            self._emit(P.Event(P.EventCode.BUTTON, 0))

    def _light(self) -> None:
        self.board.show("blink" if self.estop else "on" if self.session else "off")

    def _status_fields(self) -> tuple[int, ...]:
        flags = ((P.StatusFlag.SESSION if self.session else 0) | (P.StatusFlag.ESTOP if self.estop else 0)
                 | (P.StatusFlag.MOVING if self.active is not None else 0)
                 | (P.StatusFlag.DRIVERS if self.board.attached() else 0)
                 | (P.StatusFlag.BUTTON if self.board.start_held else 0)
                 | (P.StatusFlag.CONFIGURED if self.configured else 0)
                 | (P.StatusFlag.CUT if self.cut else 0))
        active = self.active.cmd.move_id if self.active is not None else P.NO_ID
        uptime = int((time.monotonic() - self.t0) * 1000)
        return (self.boot_id, flags, self.last_done_id, active, len(self.queue) + (self.active is not None),
                uptime & 0xFFFFFFFF, min(255, self.rx.errors))

    BOARD = P.BOARD_GPIO
    FIRMWARE = FW_VERSION
    CAPACITY = QUEUE_CAPACITY

    def _resend(self, reply: bytes) -> None:
        self.to_host += reply

    def _opened(self) -> None:
        self._light()  # the status light says a host holds a session

    def _execute(self, msg: P.Message) -> P.Message:
        match msg:
            case P.ConfigMotor():
                # no steppers on the pins: taken so that the handshake is the Arduino's
                return P.Err(P.ErrorCode.BAD_ARG, msg.motor) if msg.motor > 5 else P.Ack(self._queue_free())
            case P.ConfigGlobal():
                return P.Ack(self._queue_free())
            case P.MoveCommand():
                return P.Err(P.ErrorCode.BAD_ARG)  # a rig on the Pi's pins has servos only
            case P.ConfigServo():
                return self._config_servo(msg)
            case P.ServoCommand():
                return self._servo(msg)
            case P.ClearEstop():
                return self.clear_latch()
            case P.Release() if self.active is not None:
                return P.Err(P.ErrorCode.BUSY)
            case P.Release():
                return P.Ack(self._queue_free())  # a servo's pulse is held: a released cover drops the cube
        return P.Err(P.ErrorCode.UNKNOWN_TYPE, msg.TYPE)

    def _config_servo(self, msg: P.ConfigServo) -> P.Message:
        if self.queue or self.active is not None:
            return P.Err(P.ErrorCode.BUSY)
        if msg.servo >= SERVOS or not self.board.has_servo(msg.servo):
            return P.Err(P.ErrorCode.BAD_ARG, 0)
        if not SERVO_MIN_US <= msg.min_us < msg.max_us <= SERVO_MAX_US:
            return P.Err(P.ErrorCode.BAD_ARG, 1)
        self.board.configure(msg.servo, msg.min_us, msg.max_us)
        self.configured.add(msg.servo)
        return P.Ack(self._queue_free())

    def _servo(self, msg: P.ServoCommand) -> P.Message:
        present = msg.servo < SERVOS and self.board.has_servo(msg.servo)
        latch = (ESTOP_INPUT if self.board.estop_held else 0) if self.estop else None
        refused = P.servo_refusal(msg, latch=latch,
                                  present=present, configured=msg.servo in self.configured,
                                  limits=self.board.limits[msg.servo] if present else (0, 0),
                                  queue_free=self._queue_free())
        if refused is not None:
            return refused
        self.queue.append(msg)
        self.cut = False
        self._start_next()
        return P.Ack(self._queue_free())
