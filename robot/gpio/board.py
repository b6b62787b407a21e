"""The Pi's pins through gpiozero: the servos, the buttons and the light of
a rig on the rig computer's own pins.

gpiozero picks the pin factory the board offers (lgpio on current Raspberry
Pi OS and the Pi 5, RPi.GPIO, pigpio, native), or the one
``GPIOZERO_PIN_FACTORY`` names: ``pigpio`` for hardware-timed pulses where
its daemon runs (what CUBOTino uses against jitter), ``mock`` for gpiozero's
mock pins on a machine with no pins (tests, the simulation). Nothing here
knows the protocol; :mod:`robot.gpio.rig` does.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from typing import Any

from ..rig.config import Config
from ..rig.errors import UserError
from ..rig.mechanisms.commands import servo_numbers
from ..rig.owner import Claim, claim_port

FRAME_S = 0.02
"""A hobby servo's frame: a pulse every 20 ms (50 Hz)."""


class PinsUnavailable(UserError):
    """No pin factory works here, or the pins cannot be opened."""


def gpio_fix() -> str:
    return ("add yourself to the gpio group (sudo usermod -aG gpio $USER, then log out and in again); "
            "away from a Pi, GPIOZERO_PIN_FACTORY=mock runs on gpiozero's mock pins")


def _why(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    if isinstance(e, PermissionError) or getattr(e, "errno", None) in (errno.EACCES, errno.EPERM) \
            or "ermission" in text:
        return f"{text}: {gpio_fix()}"
    return text


def pin_factory() -> Any:
    """gpiozero's pin factory for this process (made on first use, as
    gpiozero makes it: ``GPIOZERO_PIN_FACTORY`` or the first that works).
    Under the mock factory the pins are PWM-capable ones, since a servo needs
    PWM (``GPIOZERO_MOCK_PIN_CLASS=mockpwmpin`` says the same)."""
    try:
        import warnings

        from gpiozero import Device
        from gpiozero.pins.mock import MockFactory, MockPWMPin
    except ImportError:
        raise PinsUnavailable("gpiozero is not installed: pip install 'cuberobot[pi]' (or pip install "
                              "gpiozero) on the Raspberry Pi") from None
    if Device.pin_factory is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # gpiozero's fall-back chatter: the error below says it
                Device.pin_factory = Device._default_pin_factory()
        except Exception as e:  # noqa: BLE001 - BadPinFactory, ImportError, OSError: all one answer
            raise PinsUnavailable(f"no GPIO pin factory works here ({_why(e)}); on a Raspberry Pi install "
                                  "lgpio (sudo apt install python3-lgpio), or set GPIOZERO_PIN_FACTORY; "
                                  "away from a Pi, GPIOZERO_PIN_FACTORY=mock runs on gpiozero's mock "
                                  "pins") from None
    factory = Device.pin_factory
    if isinstance(factory, MockFactory) and not issubclass(factory.pin_class, MockPWMPin):
        factory.pin_class = MockPWMPin
    return factory


def factory_name(factory: Any) -> str:
    """How a person names the factory (``GPIOZERO_PIN_FACTORY``'s word)."""
    name = type(factory).__name__
    return {"LGPIOFactory": "lgpio", "RPiGPIOFactory": "rpigpio", "PiGPIOFactory": "pigpio",
            "NativeFactory": "native", "MockFactory": "mock"}.get(name, name)


def is_mock(factory: Any) -> bool:
    from gpiozero.pins.mock import MockFactory

    return isinstance(factory, MockFactory)


def on_mock_pins() -> bool:
    """Whether this process's pins are gpiozero's mock ones, so a rig on them
    is a simulation (what the panel tells the page). Asked without making a
    factory: the one gpiozero has, else the one ``GPIOZERO_PIN_FACTORY``
    would make; never raises (a machine without gpiozero has no mock pins)."""
    try:
        from gpiozero import Device
    except ImportError:
        return False
    if Device.pin_factory is not None:
        return is_mock(Device.pin_factory)
    return os.environ.get("GPIOZERO_PIN_FACTORY", "").strip().lower() == "mock"


def pins_of(config: Config) -> dict[str, int]:
    """Every pin the set-up gives the rig: ``servo NAME`` and the ``[gpio]`` keys."""
    out = {f"servo {n}": sc.pin for n, sc in config.servos.items()}
    if config.gpio is not None:
        out.update(config.gpio.pins())
    return out


class Board:
    """The devices on the pins, each made from the set-up: a servo per
    servo number of the kind (its pulse limits come with CONFIG_SERVO, as
    the firmware's do), the buttons and the light. Each pin is claimed for
    this process first (robot/rig/owner.py), so two processes never drive
    one pin."""

    def __init__(self, config: Config, *, on_start: Callable[[], None], on_stop: Callable[[], None]):
        self.factory = pin_factory()
        self.config = config
        self.pins = pins_of(config)
        self._claims: list[Claim] = []
        self.servos: dict[int, Any] = {}
        self.limits: dict[int, tuple[int, int]] = {}
        self.numbers = {i: n for n, i in servo_numbers(config.rig.kind).items() if n in config.servos}
        self.start_button: Any = None
        self.estop_button: Any = None
        self.light: Any = None
        try:
            for what, pin in self.pins.items():
                held = claim_port(f"gpio://GPIO{pin}", details={"pin": what})
                if held is not None:
                    self._claims.append(held)
            self._make_inputs(on_start, on_stop)
        except BaseException:
            self.close()
            raise

    def _make_inputs(self, on_start: Callable[[], None], on_stop: Callable[[], None]) -> None:
        from gpiozero import LED, Button

        g = self.config.gpio
        if g is None:
            return
        try:
            if g.start_button is not None:
                self.start_button = Button(g.start_button, pull_up=True, bounce_time=0.05,
                                           pin_factory=self.factory)
                self.start_button.when_pressed = on_start
            if g.estop_button is not None:
                self.estop_button = Button(g.estop_button, pull_up=True, pin_factory=self.factory)
                self.estop_button.when_pressed = on_stop
            if g.status_light is not None:
                self.light = LED(g.status_light, pin_factory=self.factory)
        except Exception as e:  # noqa: BLE001 - gpiozero's many pin errors: one line each
            raise PinsUnavailable(f"cannot open the [gpio] pins: {_why(e)}") from None

    @property
    def estop_held(self) -> bool:
        return bool(self.estop_button is not None and self.estop_button.is_pressed)

    @property
    def start_held(self) -> bool:
        return bool(self.start_button is not None and self.start_button.is_pressed)

    def has_servo(self, number: int) -> bool:
        return number in self.numbers

    def configure(self, number: int, min_us: int, max_us: int) -> None:
        """Servo ``number``'s pulse limits; a servo already made with these
        keeps its pulse (a reconnect must not drop the cube)."""
        if self.limits.get(number) == (min_us, max_us):
            return
        from gpiozero import Servo

        old = self.servos.pop(number, None)
        if old is not None:
            old.close()
        name = self.numbers[number]
        pin = self.config.servos[name].pin
        try:
            self.servos[number] = Servo(pin, initial_value=None, min_pulse_width=min_us / 1e6,
                                        max_pulse_width=max_us / 1e6, frame_width=FRAME_S,
                                        pin_factory=self.factory)
        except Exception as e:  # noqa: BLE001
            raise PinsUnavailable(f"cannot drive servo {name} on GPIO{pin}: {_why(e)}") from None
        self.limits[number] = (min_us, max_us)

    def pulse(self, number: int, pulse_us: int) -> None:
        """Servo ``number`` to ``pulse_us`` (within its limits, checked by the caller)."""
        lo, hi = self.limits[number]
        value = (pulse_us - lo) / (hi - lo) * 2.0 - 1.0
        self.servos[number].value = min(1.0, max(-1.0, value))

    def stop(self) -> None:
        """No more pulses on any servo, at once (the emergency stop): a
        servo without pulses stops driving where it stands."""
        for s in self.servos.values():
            with contextlib.suppress(Exception):
                s.detach()

    def attached(self) -> bool:
        return any(s.value is not None for s in self.servos.values())

    def show(self, state: str) -> None:
        """The status light: ``on``, ``blink`` or ``off``."""
        if self.light is None:
            return
        with contextlib.suppress(Exception):
            if state == "on":
                self.light.on()
            elif state == "blink":
                self.light.blink(on_time=0.25, off_time=0.25)
            else:
                self.light.off()

    def close(self) -> None:
        for dev in [*self.servos.values(), self.start_button, self.estop_button, self.light]:
            if dev is not None:
                with contextlib.suppress(Exception):
                    dev.close()
        self.servos.clear()
        self.limits.clear()
        for c in self._claims:
            c.release()
        self._claims.clear()
