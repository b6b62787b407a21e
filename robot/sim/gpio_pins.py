"""The virtual CUBOTino moved by gpiozero's mock pins (``gpio://`` with
``GPIOZERO_PIN_FACTORY=mock``).

As the firmware in simavr moves the virtual parts by its pins' edges
(robot/sim/pulsed_mechanism.py), here the rig on the pins (robot/gpio/)
moves them by what its gpiozero servos put on gpiozero's mock pins: every
change of a servo pin's PWM is a pulse width (duty cycle x frame), handed
to the virtual mechanism's physics (robot/sim/mechanisms.py) as the servo
command it amounts to, in the order the pins changed. A pin with no pulses
(a servo detached by the emergency stop) moves nothing. So the simulated
camera sees the cube as the pins moved it, and a part the pins drive wrong
is a fault there, never a cube quietly right.

The start button is pressed on its mock pin (driven low, then high), so a
headless run's press goes through gpiozero's Button as a person's would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from gpiozero.pins.mock import MockPWMPin

from ..gpio.board import is_mock, pin_factory
from ..gpio.protocol_gpio import current_rig
from ..rig.config import Config
from ..rig.mechanisms.commands import servo_numbers
from ..rig.protocol import ServoCommand
from .mechanisms import Fault, VirtualFlipper, VirtualTwoGripper, virtual_mechanism


@dataclass
class _Watch:
    mech: VirtualFlipper | VirtualTwoGripper
    servo_of_pin: dict[int, int]
    widths: list[tuple[int, float]] = field(default_factory=list)
    """Every pulse width a servo pin took, ``(servo, us)``, in order (0: no pulses)."""


_watch: _Watch | None = None
_watch_lock = threading.Lock()


class WatchedPin(MockPWMPin):
    """gpiozero's mock PWM pin that tells the virtual mechanism each change."""

    def _change_state(self, value: Any) -> bool:
        changed = bool(super()._change_state(value))
        if changed:
            _seen(self, value)
        return changed


def _seen(pin: WatchedPin, value: Any) -> None:
    w = _watch
    if w is None:
        return
    number = pin.info.name
    gpio = int(number[4:]) if isinstance(number, str) and number.startswith("GPIO") else None
    servo = w.servo_of_pin.get(gpio) if gpio is not None else None
    if servo is None:
        return
    freq = pin.frequency
    width = float(value) / freq * 1e6 if freq and value else 0.0
    with _watch_lock:
        w.widths.append((servo, width))
        if not 300 <= width <= 3000:
            return  # no pulses: the servo holds nothing, the part stays where it is
        try:
            w.mech.execute(ServoCommand(0, servo, int(round(width)), 0))
        except Fault:
            pass  # latched in the mechanism: it stops there, as a jammed rig does


@dataclass
class PinnedRig:
    """The :class:`robot.app.rigs.Simulation` of a rig on mock pins."""

    port: str
    config: Config
    watch: _Watch

    def state(self) -> str:
        with _watch_lock:
            return self.watch.mech.cube.stickers

    def press(self) -> None:
        g = self.config.gpio
        if g is not None and g.start_button is not None:
            pin = pin_factory().pin(g.start_button)
            pin.drive_low()  # pressed: the button pulls its pin to ground
            pin.drive_high()
            return
        rig = current_rig()
        if rig is not None:
            rig.press()

    def put_in(self, facelets: str) -> None:
        with _watch_lock:
            self.watch.mech.cube.stickers = facelets

    def close(self) -> None:
        pass

    @property
    def fault(self) -> str | None:
        return self.watch.mech.fault


def attach_pins(config: Config, port: str, scramble: str) -> PinnedRig | None:
    """The virtual rig behind ``port`` when gpiozero's pins are its mock
    ones (None on real pins), holding the cube ``scramble``."""
    global _watch
    factory = pin_factory()
    if not is_mock(factory):
        return None
    if not issubclass(factory.pin_class, WatchedPin):
        factory.pin_class = WatchedPin
    numbers = servo_numbers(config.rig.kind)
    watch = _Watch(virtual_mechanism(config, scramble),
                   {sc.pin: numbers[name] for name, sc in config.servos.items()})
    _watch = watch
    return PinnedRig(port, config, watch)


def watching() -> _Watch | None:
    """What the pins have done so far (tests)."""
    return _watch
