"""The host's end of the serial link: one command in flight, every wait bounded.

Stop-and-wait with retransmission (docs/protocol.md 1.4, 1.5): a command is
sent, and sent again with the same sequence number until its reply comes;
the firmware answers a repeat from memory instead of executing it twice.
Unsolicited frames (DONE, EVENT, real-time STATUS) are handed to callbacks
as they arrive, whatever the link was waiting for, so no completion is lost
while a command is being sent. Any sign of a firmware reset raises
:class:`RigReset`; the caller decides whether the cube state is still known.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import serial

from . import protocol as P
from .errors import RigError, UserError
from .mechanisms.commands import Commands
from .timing import move_ticks, ticks_to_s

if TYPE_CHECKING:
    from .config import Config

log = logging.getLogger(__name__)

HELLO_INTERVAL_S = 0.2
FAST_TRIES = 5
"""Transmissions of a command at the reply timeout's pace; after them the
line is probably stalled, and a try every ``STALLED_RETRY_S`` is enough."""
STALLED_RETRY_S = 0.25
POLL_SLICE_S = 0.1
"""The longest one read waits, so that :attr:`Link.abort` is seen soon."""
STALL_NOTICE_S = 1.0
"""Silence after which the person is told that the rig is being waited for."""
STOP_HEARD_S = 1.0
"""How long a closing line waits for the rig's word that it latched a stop just sent."""


class LinkLost(RigError):
    """The port went away (cable pulled, device gone)."""


class LinkStalled(RigError):
    """The line stayed silent for longer than ``[rig] stall_timeout_s``."""


class LinkAborted(RigError):
    """The owner of the link gave it up (a server shutting down) while a
    command was waiting: what the rig did is not known from here."""


class RigReset(RigError):
    """The firmware restarted: its queue and session are gone.

    ``refused`` is True when the command being sent provably did not run: the
    restarted firmware answered its first transmission with NO_SESSION."""

    def __init__(self, message: str, refused: bool = False):
        super().__init__(message)
        self.refused = refused


class EstopLatched(RigError):
    """The rig refused a command because its emergency stop is latched
    (``detail``: the refusal's, docs/protocol.md 1.2)."""

    def __init__(self, message: str, detail: int = 0):
        super().__init__(message)
        self.detail = detail


_UNCLEARED = {2: "its emergency-stop switch is still pressed: release it, then clear again",
              4: "a part of the virtual rig is jammed (a move its parts could not make): restart the rig "
                 "(`cuberobot sim-rig`), then scan the cube again"}
"""Why a rig refuses CLEAR_ESTOP, by the refusal's detail (docs/protocol.md 1.2)."""


class Link:
    """A session with the rig over any pyserial URL or device path."""

    def __init__(self, config: Config, port: str | None = None, *, kind: str = "six-motor",
                 stop_on_interrupt: bool = True):
        """``stop_on_interrupt``: Ctrl-C inside the ``with`` sends the
        emergency stop; off for a session that only asks (``doctor``'s
        handshake), where a stop would latch a rig nothing moved on."""
        if config.rig.kind != kind:
            # a six-motor plan (a dry run, a jog, the six-motor engine) sent to a
            # flipper or two-gripper rig would drive the wrong parts, and the other way round
            raise UserError(f"[rig] kind = \"{config.rig.kind}\": this command drives {kind} rigs; a "
                            f"{config.rig.kind} rig runs with `cuberobot start` and `cuberobot resume`"
                            if kind == "six-motor" else
                            f"[rig] kind = \"{config.rig.kind}\", not {kind}")
        self.config = config
        self.port = port or config.rig.port
        self.stop_on_interrupt = stop_on_interrupt
        self.ser: serial.SerialBase | None = None
        self.seq = 0
        self.hello: P.HelloOk | None = None
        self.queue_free = 0
        self.last_status: P.Status | None = None
        self.event_seq: int | None = None
        self.events_lost = False
        self.buttons = 0
        self.estop_latched = False
        self.reset_seen: str | None = None
        self.on_done: Callable[[P.Done], None] | None = None
        self.on_stall: Callable[[str], None] = log.warning
        """Told, in words, when the line goes quiet and when it is back."""
        self.stall_timeout_s = config.rig.stall_timeout_s
        self.reply_limit_s = config.rig.reply_limit_s
        self.abort = threading.Event()
        """Set from another thread (a server shutting down): every wait ends
        with :class:`LinkAborted` within one slice of reading."""
        self.last_heard = 0.0
        self.retransmissions = 0
        self.completion_margin_s = 0.2
        self.hello_interval_s = HELLO_INTERVAL_S
        self.time_scale = 1.0
        self._decoder = P.FrameDecoder()
        self._pending: dict[int, P.Message] = {}

    # -- opening ---------------------------------------------------------
    def open(self) -> None:
        try:
            ser = serial.serial_for_url(self.port, baudrate=self.config.rig.baud, timeout=0,
                                        write_timeout=2.0, exclusive=None)
        except (serial.SerialException, OSError, ValueError) as e:
            raise RigError(f"cannot open the rig's port {self.port!r}: {_open_failure(e)}") from None
        self.ser = ser
        try:
            ser.reset_input_buffer()  # stale bytes from before we opened
        except Exception as e:  # noqa: BLE001 - termios.error and the like: the port is unusable
            self.close()
            raise RigError(f"cannot use the rig's port {self.port!r}: {_reason(e)} (did the device "
                           "or the program behind it go away?)") from None
        self.time_scale = getattr(self.ser, "time_scale", 1.0)
        if self.time_scale > 1:
            # A virtual rig running faster than real time: its margins shrink
            # with it (down to what host scheduling jitter needs).
            self.completion_margin_s = max(0.02, 0.2 / self.time_scale)
            self.hello_interval_s = max(0.02, HELLO_INTERVAL_S / self.time_scale)
        # A port that stands in for a rig (a simulated one) may model the rig
        # from its configuration; a real port has no such hook.
        adopt = getattr(self.ser, "adopt_config", None)
        if adopt is not None:
            adopt(self.config)

    def _open_port(self) -> serial.SerialBase:
        if self.ser is None:
            raise RigError("the link is not open")
        return self.ser

    def close(self) -> None:
        if self.ser is not None:
            try:
                self.ser.close()
            except Exception:  # noqa: BLE001 - closing a dead port must not hide the real error
                pass
            self.ser = None

    def __enter__(self) -> Link:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """Ctrl-C anywhere inside the ``with`` (a handshake, a request that
        hangs) sends the emergency stop before the line closes."""
        try:
            if isinstance(exc[0], KeyboardInterrupt) and self.stop_on_interrupt:
                self.stop_for_interrupt(exc[0])
        finally:
            self.close()

    def connect(self) -> P.HelloOk:
        """Open, wait for the bootloader, handshake, send the motion settings."""
        if self.ser is None:
            self.open()
        if self.config.rig.boot_wait_s:
            time.sleep(self.config.rig.boot_wait_s)
        return self.handshake()

    def hello_only(self) -> P.HelloOk:
        """HELLO until HELLO_OK (within ``connect_timeout_s``): the rig's
        protocol, firmware version, board and queue, and nothing changed on it."""
        rig = self.config.rig
        deadline = time.monotonic() + rig.connect_timeout_s
        self.reset_seen = None
        hello = None
        while hello is None:
            self.seq = P.next_seq(self.seq)
            self._write(P.encode(P.Hello(), self.seq))
            reply = self._wait_reply(self.seq, min(deadline, time.monotonic() + self.hello_interval_s))
            if isinstance(reply, P.Err) and reply.code == P.ErrorCode.VERSION:
                raise RigError(f"the rig on {self.port} speaks protocol version {reply.detail}, this "
                               f"cuberobot speaks version {P.PROTOCOL_VERSION}: update the firmware "
                               "or cuberobot so that they match")
            if isinstance(reply, P.HelloOk):
                hello = reply
            elif time.monotonic() >= deadline:
                raise RigError(f"no answer from a rig on {self.port} within {rig.connect_timeout_s:g} s "
                               "(is it the right port, is the firmware flashed, is the baud rate "
                               f"{rig.baud}?)")
        if hello.version != P.PROTOCOL_VERSION:
            raise RigError(f"the rig on {self.port} speaks protocol version {hello.version}, this "
                           f"cuberobot speaks version {P.PROTOCOL_VERSION}")
        self.hello = hello
        self.reset_seen = None
        self.queue_free = hello.queue_capacity
        return hello

    def handshake(self) -> P.HelloOk:
        rig = self.config.rig
        hello = self.hello_only()
        # A reconnect may find the rig still finishing queued moves; settings
        # can only change while it is idle (ERR_BUSY otherwise).
        wait_deadline = time.monotonic() + rig.connect_timeout_s + 4 * self._longest_move_s()
        while self.status().moving:
            if time.monotonic() > wait_deadline:
                raise RigError(f"the rig on {self.port} keeps moving and does not finish its queued "
                               "moves (a stalled motor?)")
            self.poll(0.02)
        for i, p in enumerate(self.config.profiles()):
            self.request(P.ConfigMotor(i, p.vmax_q, p.accel_q, p.vmin_q, p.settle_ms))
        self.request(P.ConfigGlobal(rig.idle_ms))
        if self.config.servos:
            # A flipper's or two-gripper's servos: their pulse limits, so the
            # rig refuses a pulse the servo cannot take (docs/protocol.md 7).
            # A pulse the rig already holds stays (a regripped cube must not drop).
            for msg in Commands(self.config).setup():
                self.request(msg)
        st = self.status()
        if st.estop:
            self.estop_latched = True
        return hello

    def _longest_move_s(self) -> float:
        profiles = self.config.profiles()
        longest = max(sum(move_ticks([(m, 2 * self.config.motor_for_index(m).steps_per_quarter)], profiles))
                      for m in range(6))
        return ticks_to_s(longest) * 1.5 / self.time_scale

    # -- bytes -----------------------------------------------------------
    def _write(self, data: bytes) -> None:
        try:
            self._open_port().write(data)
        except (serial.SerialException, OSError) as e:
            raise LinkLost(f"lost the connection to the rig on {self.port}: {_reason(e)}") from None

    def _read(self, timeout: float) -> bytes:
        try:
            ser = self._open_port()
            ser.timeout = max(0.0, timeout)
            n = ser.in_waiting
            data = bytes(ser.read(n if n else 1))
            if data:
                self.last_heard = time.monotonic()
            return data
        except (serial.SerialException, OSError) as e:
            raise LinkLost(f"lost the connection to the rig on {self.port}: {_reason(e)}") from None

    def poll(self, timeout: float) -> bool:
        """Read and handle frames for up to ``timeout`` s; True if any came."""
        if self.abort.is_set():
            raise LinkAborted(f"the link to the rig on {self.port} was given up")
        data = self._read(min(timeout, POLL_SLICE_S))
        if not data:
            return False
        got = False
        for content in self._decoder.feed(data):
            if isinstance(content, int):
                continue  # a real-time byte: the host's decoder is not asked for them
            try:
                seq, msg = P.decode(content)
            except P.ProtocolError as e:
                log.debug("undecodable frame: %s", e)
                continue
            got = True
            self._handle(seq, msg)
        return got

    def _handle(self, seq: int, msg: P.Message) -> None:
        """A frame as it arrives: what the rig says unasked (DONE, EVENT,
        realtime STATUS) is taken in at once and its numbering checked; a
        reply waits for the command that asked for it."""
        if not isinstance(msg, (P.Done, P.Event, P.RealtimeStatus)):
            self._pending[seq] = msg
            return
        if self.event_seq is not None and seq != P.next_seq(self.event_seq):
            self.events_lost = True
        self.event_seq = seq
        match msg:
            case P.Done():
                self.queue_free = msg.queue_free
                if self.on_done is not None:
                    self.on_done(msg)
            case P.Event(event=P.EventCode.BOOT):
                self.reset_seen = "the rig announced a restart (EVENT BOOT)"
            case P.Event(event=P.EventCode.BUTTON):
                self.buttons += 1
            case P.Event(event=P.EventCode.ESTOP_LATCHED):
                self.estop_latched = True
            case P.Event(event=P.EventCode.ESTOP_CLEARED):
                self.estop_latched = False
            case P.RealtimeStatus():
                self._check_status(msg)

    def _check_status(self, st: P.Status) -> None:
        if self.hello is not None and st.boot_id != self.hello.boot_id:
            self.reset_seen = "the rig's boot id changed"
        elif self.last_status is not None and st.uptime_ms < self.last_status.uptime_ms \
                and st.boot_id == self.last_status.boot_id and self.last_status.uptime_ms < 0xF0000000:
            self.reset_seen = "the rig's uptime went backwards"
        if not st.session and self.hello is not None:
            self.reset_seen = self.reset_seen or "the rig lost its session"
        self.estop_latched = st.estop
        self.last_status = st

    def _wait_reply(self, seq: int, deadline: float) -> P.Message | None:
        self._pending.clear()
        while True:
            reply = self._pending.pop(seq, None)
            if reply is not None:
                return reply
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.poll(remaining)

    # -- commands --------------------------------------------------------
    def request(self, msg: P.Message) -> P.Message:
        """Send one command until its reply arrives; ERR replies raise
        RigError, except ERR_QUEUE_FULL which is returned.

        A line that goes quiet is waited for (the rig goes on with its queue
        meanwhile) up to ``stall_timeout_s`` of silence, with a word to the
        person after a second; past that, :class:`LinkStalled`."""
        if self.ser is None:
            raise RigError("the link is not open")
        self.seq = P.next_seq(self.seq)
        seq = self.seq
        frame = P.encode(msg, seq)
        per_try = self.config.rig.reply_timeout_s + len(frame) * 10 / self.config.rig.baud
        started = time.monotonic()
        talking_since: float | None = None  # the rig has sent bytes, but no reply, since then
        noticed = False
        attempt = 0
        while True:
            if attempt:
                self.retransmissions += 1
            self._write(frame)
            wait = per_try if attempt < FAST_TRIES else max(per_try, STALLED_RETRY_S)
            reply = self._wait_reply(seq, time.monotonic() + wait)
            if isinstance(reply, P.Err) and reply.code == P.ErrorCode.NO_SESSION:
                self.reset_seen = self.reset_seen or "the rig answered NO_SESSION"
                raise RigReset(f"the rig on {self.port} was reset ({self.reset_seen})", refused=attempt == 0)
            if self.reset_seen:
                raise RigReset(f"the rig on {self.port} was reset ({self.reset_seen})")
            if reply is None:
                attempt += 1
                now = time.monotonic()
                silent = now - max(self.last_heard, started)
                # Bytes without a reply count against the reply limit; a silence
                # (the stall rule's) starts that count again.
                if silent >= STALL_NOTICE_S or self.last_heard <= started:
                    talking_since = None
                elif talking_since is None:
                    talking_since = self.last_heard
                if talking_since is not None and now - talking_since >= self.reply_limit_s:
                    raise LinkStalled(f"the rig on {self.port} sends but does not answer: no reply to "
                                      f"{type(msg).__name__} in {now - talking_since:.1f} s of traffic "
                                      f"({attempt} tries): is it cuberobot's firmware, at "
                                      f"{self.config.rig.baud} baud? Check the port and reset the rig")
                if silent >= self.stall_timeout_s:
                    raise LinkStalled(f"the rig on {self.port} has not answered for {silent:.0f} s (no reply "
                                      f"to {type(msg).__name__} after {attempt} tries): check the cable and "
                                      "the rig's power")
                if silent >= STALL_NOTICE_S and not noticed:
                    noticed = True
                    self.on_stall(f"the rig on {self.port} has been silent for {silent:.1f} s; waiting up to "
                                  f"{self.stall_timeout_s:g} s for it (it carries on with its queued turns)")
                continue
            if noticed:
                self.on_stall(f"the rig on {self.port} answers again")
            return self._accept(msg, reply)

    def _accept(self, msg: P.Message, reply: P.Message) -> P.Message:
        """A command's reply: errors raised, what it tells about the rig kept."""
        match reply:
            case P.Err(code=P.ErrorCode.QUEUE_FULL):
                self.queue_free = 0
            case P.Err(code=P.ErrorCode.ESTOP):
                self.estop_latched = True
                raise EstopLatched(f"the rig is in emergency stop; check it is safe, then run "
                                   f"{self.clear_command}", reply.detail)
            case P.Err():
                raise RigError(f"the rig refused {type(msg).__name__}: {reply.name} (detail {reply.detail})")
            case P.Ack():
                self.queue_free = reply.queue_free
            case P.Status():
                self._check_status(reply)
                if self.reset_seen:
                    raise RigReset(f"the rig on {self.port} was reset ({self.reset_seen})")
        return reply

    def status(self) -> P.Status:
        reply = self.request(P.StatusQuery())
        if not isinstance(reply, P.Status):
            raise RigError(f"the rig answered STATUS with {type(reply).__name__}")
        self.events_lost = False
        return reply

    def move(self, cmd: P.MoveCommand) -> P.Message:
        return self.request(cmd)

    def clear_estop(self) -> None:
        try:
            self.request(P.ClearEstop())
        except EstopLatched as e:  # the rig will not clear: say why, not "clear it"
            why = _UNCLEARED.get(e.detail, f"it refused (detail {e.detail}): check the rig, then clear again")
            raise RigError(f"the rig on {self.port} is still latched: {why}") from None
        self.estop_latched = False

    def clear_latch(self) -> None:
        """Clear the emergency stop and ask the rig whether it is clear: RigError
        when its STATUS still says latched (the stop pressed again, or held),
        so that nothing says "cleared" while the rig is not."""
        self.clear_estop()
        if self.status().estop:
            self.estop_latched = True
            raise RigError(f"the rig on {self.port} is still latched after CLEAR_ESTOP (the emergency stop "
                           "pressed again, or held): release it and clear again")

    def latch_heard(self, wait_s: float = 0.0) -> bool:
        """Whether the rig says its emergency stop is latched, its word waited
        for up to ``wait_s`` (after a stop was sent: a run or jog that stopped
        between two moves closes its line at once); never raises."""
        deadline = time.monotonic() + wait_s
        try:
            while not self.estop_latched and time.monotonic() < deadline:
                self.poll(0.05)
        except RigError:
            pass
        return self.estop_latched

    @contextlib.contextmanager
    def estop_on_interrupt(self) -> Iterator[Link]:
        """Ctrl-C inside: the emergency stop goes out before anything else."""
        try:
            yield self
        except KeyboardInterrupt as e:
            self.stop_for_interrupt(e)
            raise

    @property
    def clear_command(self) -> str:
        """The command that clears this rig's emergency stop, as a person
        types it (with the port, which a command's --port may have given)."""
        if self.port.startswith(("sim://", "gpio://")):  # a rig inside this process: cleared here
            return "`cuberobot estop --clear`"
        return f"`cuberobot estop --clear --port {shlex.quote(self.port)}`"

    def stop_for_interrupt(self, interrupt: BaseException) -> None:
        """Ctrl-C: the emergency stop; when it went to a rig of its own (not
        an in-process sim://, which ends with the process), a Ctrl-C that
        says so and what to do next is raised in place of ``interrupt``, for
        the one line the command prints."""
        sent = self.estop()
        if sent and isinstance(interrupt, KeyboardInterrupt) and not interrupt.args \
                and not self.port.startswith(("sim://", "gpio://")):
            raise KeyboardInterrupt(f"the rig on {self.port} was sent the emergency stop: check it is safe, "
                                    f"then run {self.clear_command} (and `cuberobot resume` if a job was "
                                    "under way)") from interrupt

    def estop(self) -> bool:
        """Emergency stop, outside the command stream (no lock, no reply
        awaited, whatever another thread's request is doing); never raises.
        True when the bytes were handed to the port.

        The rig stops on a run of ``P.ESTOP_RUN`` RT_ESTOP bytes; the run goes
        out ``P.ESTOP_REPEATS`` times, so that one damaged byte cannot cancel it."""
        ser = self.ser
        if ser is None:
            return False
        data = P.ESTOP_SEQUENCE * P.ESTOP_REPEATS  # one write: nothing can come between
        fd = getattr(ser, "fd", None)
        try:
            if isinstance(fd, int):
                # A device or pty: straight to its descriptor. pyserial's write waits on its own
                # pipes after the bytes are out, and a thread that closes the port meanwhile (the run
                # ending on this very stop) made it raise though the rig had the stop.
                _write_all(fd, data)
            else:
                ser.write(data)
        except Exception as e:  # noqa: BLE001 - an estop attempt must never raise
            log.warning("the emergency stop could not be written to %s: %s", self.port, e)
            return False
        try:
            ser.flush()  # handed to the port above: a failed wait for the line to drain does not undo that
        except Exception as e:  # noqa: BLE001
            log.warning("the emergency stop was written to %s; waiting for it to go out failed: %s",
                        self.port, e)
        return True


def _write_all(fd: int, data: bytes, timeout_s: float = 1.0) -> None:
    """``data`` onto a descriptor that may be non-blocking (pyserial opens
    ports so), within ``timeout_s``; OSError or TimeoutError otherwise."""
    import os
    import select

    deadline = time.monotonic() + timeout_s
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the port took no more bytes") from None
            select.select([], [fd], [], left)


def estop_beside(port: str) -> None:
    """The emergency stop onto a port that another process holds open: the
    stop run written on a descriptor of our own, the line's settings left as
    its owner set them, nothing read (its replies are the owner's). A port
    that is not a device path goes through pyserial."""
    sequence = P.ESTOP_SEQUENCE * P.ESTOP_REPEATS
    if "://" in port:
        try:
            with serial.serial_for_url(port, do_not_open=False, write_timeout=1.0) as ser:
                ser.write(sequence)
                ser.flush()
        except (serial.SerialException, OSError, ValueError) as e:
            raise RigError(f"cannot send the emergency stop to {port!r}: {_reason(e)}") from None
        return
    import os

    try:
        fd = os.open(port, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise RigError(f"cannot send the emergency stop to {port!r}: {_reason(e)}: cut the motors' "
                       "power if they must stop") from None
    try:
        os.write(fd, sequence)
    except OSError as e:
        raise RigError(f"cannot send the emergency stop to {port!r}: {_reason(e)}: cut the motors' "
                       "power if they must stop") from None
    finally:
        os.close(fd)


def _open_failure(e: BaseException) -> str:
    """Why a port would not open, and what to do: the commonest mistakes
    on a maker's evening (the board unplugged or given the wrong name, a
    user not in dialout, the Arduino IDE's serial monitor holding it, a
    path that is not a serial port) said in words, not pyserial's."""
    errno_ = getattr(e, "errno", None)
    text = str(e)
    lister = "`cuberobot doctor` lists the serial ports it finds"
    if isinstance(e, IsADirectoryError) or errno_ == errno.EISDIR or "Is a directory" in text:
        return f"a folder, not a serial port: give the rig's device ({lister})"
    if isinstance(e, FileNotFoundError) or errno_ == errno.ENOENT or "No such file or directory" in text:
        return f"no such device: is the board plugged in, and is this its name? ({lister})"
    if isinstance(e, PermissionError) or errno_ == errno.EACCES or "Permission denied" in text:
        return ("permission denied: add yourself to the dialout group "
                "(sudo usermod -aG dialout $USER, then log out and in again)")
    if errno_ == errno.EBUSY or "Device or resource busy" in text:
        return "busy: another program holds it (the Arduino IDE's serial monitor?); close it and try again"
    if errno_ == errno.ENOTTY or "Inappropriate ioctl" in text:
        return f"not a serial port: give the rig's device ({lister})"
    return _reason(e)


def _reason(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text.replace("[Errno 2] ", "").replace("[Errno 13] ", "")
