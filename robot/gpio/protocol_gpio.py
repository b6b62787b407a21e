"""``gpio://`` (and ``gpio://?speed=X`` on gpiozero's mock pins): the rig on
this computer's own pins as a pyserial port.

One rig per process, as the pins are the process's: every port opened on
``gpio://`` reaches it, so a reconnect (a run after a jog, the panel's next
job) finds the servos holding their pulses and the same boot id, as an
Arduino's firmware would be found. It is made when the driver hands the
port its set-up (``adopt_config``, before the first byte), each of its pins
claimed for this process, and let go when the process ends.

``speed`` is times real time for the servos' travel (``max``: no waiting),
for gpiozero's mock pins only, where no servo moves and the default is
``max``; on real pins the servos take the time they take (1).
"""

from __future__ import annotations

import atexit
import logging
import math
import threading
import time
import urllib.parse

from serial.serialutil import PortNotOpenError, SerialException

from ..rig.config import Config
from ..rig.errors import UserError
from ..rig.gpio_pins import GPIO_SCHEME, is_gpio_port
from ..rig.inprocess_port import InProcessPort
from .board import Board, is_mock, pin_factory, pins_of
from .remote import Listener
from .rig import GpioRig

log = logging.getLogger(__name__)
_LOCK = threading.Lock()
_rig: GpioRig | None = None
_listener: Listener | None = None
"""Where `cuberobot estop` in another terminal reaches this process's rig (:mod:`.remote`)."""


def parse_gpio_url(url: str) -> float | None | str:
    """The URL's ``speed`` (a factor, None for ``max``, ``"default"`` when not
    given); ValueError with a readable message for anything else."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "gpio":
        raise ValueError(f"not a {GPIO_SCHEME} URL: {url!r}")
    if parts.netloc or parts.path.strip("/"):
        raise ValueError(f"{url!r}: the pins come from the set-up file; write the port as {GPIO_SCHEME}")
    speed: float | None | str = "default"
    for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if k != "speed":
            raise ValueError(f"unknown {GPIO_SCHEME} option {k!r} (known: speed)")
        if v.strip().lower() == "max":
            speed = None
            continue
        try:
            f = float(v)
        except ValueError:
            f = math.nan
        if not 0.01 <= f <= 10000:
            raise ValueError(f"{GPIO_SCHEME} option speed={v!r}: expected max or a number from 0.01 to 10000")
        speed = f
    return speed


def current_rig() -> GpioRig | None:
    """This process's rig on the pins, if it has been made (for the simulation)."""
    return _rig


def rig_for(config: Config, speed: float | None | str) -> GpioRig:
    """This process's rig, made (or remade, when idle, for other pins) from ``config``."""
    global _rig
    pins = pins_of(config)
    with _LOCK:
        rig = _rig
        if rig is not None and pins and rig.board.pins != pins:
            if rig.active is not None or rig.queue:
                raise SerialException(f"{GPIO_SCHEME} is moving servos on other pins for this process; "
                                      "wait for it to finish")
            rig.close()
            rig = _rig = None
        factory = pin_factory()
        mock = is_mock(factory)
        if speed == "default":
            speed = None if mock else 1.0
        elif not mock and speed != 1.0:
            raise SerialException(f"{GPIO_SCHEME}?speed= is for gpiozero's mock pins (GPIOZERO_PIN_FACTORY="
                                  "mock); real servos move at their own pace: write the port as "
                                  f"{GPIO_SCHEME}")
        assert not isinstance(speed, str)
        if rig is None:
            held: list[GpioRig] = []
            board = Board(config, on_start=lambda: held[0].press() if held else None,
                          on_stop=lambda: held[0].stop(2) if held else None)
            rig = GpioRig(board, speed)
            held.append(rig)
            _rig = rig
            _listen()
        else:
            rig.speed = speed
        return rig


def _listen() -> None:
    """This process drives the pins: it answers `cuberobot estop` from another
    terminal from now on (a warning, and the run goes on, where it cannot)."""
    global _listener
    if _listener is not None:
        return
    try:
        _listener = Listener(current_rig)
    except OSError as e:
        log.warning("`cuberobot estop` in another terminal cannot reach this command's rig on %s (%s); "
                    "Ctrl-C, the panel's Stop or the [gpio] estop_button still stop it",
                    GPIO_SCHEME, e.strerror or e)


@atexit.register
def _let_go() -> None:
    """The process ends: the servos' pulses stop, the pins are given back
    and nobody is told any more that this process drives them."""
    global _rig, _listener
    listener, _listener = _listener, None
    if listener is not None:
        listener.close()
    rig, _rig = _rig, None
    if rig is not None:
        rig.close()


class Serial(InProcessPort):
    """A pyserial port whose other end is this process's :class:`GpioRig`."""

    is_open: bool

    def open(self) -> None:
        if self.is_open:
            raise SerialException("Port is already open.")
        try:
            self._speed = parse_gpio_url(self.port)
        except ValueError as e:
            raise SerialException(f"could not open {self.port}: {e}") from None
        self.rig: GpioRig | None = None
        self._heard = threading.Event()
        speed = self._speed
        if speed == "default":
            try:
                speed = None if is_mock(pin_factory()) else 1.0
            except UserError as e:
                raise SerialException(str(e)) from None
        self.time_scale = math.inf if speed is None else float(speed)
        self.is_open = True

    def adopt_config(self, config: Config) -> None:
        """The driver's hook, before any byte: the rig is made from the set-up
        (its servos' pins, its buttons and light)."""
        if config.servos and not is_gpio_port(config.rig.port):
            raise SerialException(f"{config.path or 'the set-up'} is for a rig on port = "
                                  f"\"{config.rig.port}\", its servo pins an Arduino's; a rig on the Pi's "
                                  f"pins needs a set-up with port = \"{GPIO_SCHEME}\" and GPIO numbers "
                                  "(config/examples/cubotino-pi.toml)")
        try:
            rig = rig_for(config, self._speed)
        except UserError as e:
            raise SerialException(str(e)) from None
        with rig.lock:
            self.rig = rig
            rig.conn = self  # the newest port gets the rig's words, as a new cable would
            rig.listeners.append(self._heard)
            rig.to_host.clear()
        self.time_scale = math.inf if rig.speed is None else rig.speed

    def close(self) -> None:
        rig = getattr(self, "rig", None)
        if rig is not None:
            with rig.lock:
                if self._heard in rig.listeners:
                    rig.listeners.remove(self._heard)
        self.rig = None
        self.is_open = False
        super().close()

    def _the_rig(self) -> GpioRig:
        if not self.is_open:
            raise PortNotOpenError()
        if self.rig is None and _rig is not None:
            return _rig  # a port opened beside this process's run (a panel's stop): the same rig
        if self.rig is None:
            # another process drives the pins: its rig takes orders through robot/gpio/remote.py, not bytes
            raise SerialException(f"the rig on {GPIO_SCHEME} lives inside the process that drives its pins; "
                                  "`cuberobot estop` reaches it from here (or its Ctrl-C, the panel's Stop, "
                                  "the [gpio] estop_button)")
        return self.rig

    def _reconfigure_port(self, *args: object) -> None:
        pass

    @property
    def in_waiting(self) -> int:
        rig = self._the_rig()
        return len(rig.to_host) if rig.conn is self else 0

    def read(self, size: int = 1) -> bytes:
        rig = self._the_rig()
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        while True:
            with rig.lock:
                self._heard.clear()
                if rig.to_host and rig.conn is self:
                    data = bytes(rig.to_host[:size])
                    del rig.to_host[:size]
                    return data
            remaining = 1.0 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return b""
            self._heard.wait(min(remaining, 0.05))

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._the_rig().receive(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def reset_input_buffer(self) -> None:
        rig = self.rig
        if rig is not None and rig.conn is self:
            with rig.lock:
                rig.to_host.clear()

