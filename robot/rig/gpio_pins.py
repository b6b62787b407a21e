"""A rig on the rig computer's own pins (``port = "gpio://"``): which pins
the set-up file may name, read and checked where the file is read.

CUBOTino drives its two servos straight from a Raspberry Pi's header, with
no Arduino in between. Such a set-up names each servo's pin as the Pi's
GPIO number (BCM numbering, as gpiozero and CUBOTino's own code use), and
optionally a start button, an emergency-stop button and a status light in
``[gpio]``. Nothing here imports gpiozero: a set-up is checked the same on
a laptop as on the Pi (robot/gpio/ drives the pins).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

GPIO_SCHEME = "gpio://"
HEADER_GPIOS = range(2, 28)
"""The GPIO numbers on the Pi's 40-pin header that a rig may use: 2 to 27.
GPIO 0 and 1 are on the header too, but they are the HAT's ID EEPROM lines
(ID_SD, ID_SC), which the firmware reads at boot."""
HEADER_PIN = {2: 3, 3: 5, 4: 7, 5: 29, 6: 31, 7: 26, 8: 24, 9: 21, 10: 19, 11: 23, 12: 32, 13: 33,
              14: 8, 15: 10, 16: 36, 17: 11, 18: 12, 19: 35, 20: 38, 21: 40, 22: 15, 23: 16, 24: 18,
              25: 22, 26: 37, 27: 13}
"""GPIO number -> the header's physical pin, for the wiring a person follows."""
CUBOTINO_PINS = {"cover": 12, "turntable": 13}
"""Where CUBOTino's own code drives its servos (its top cover on GPIO 12, its
cube holder on GPIO 13, the two hardware-PWM channels of the header)."""
GPIO_KEYS = ("start_button", "estop_button", "status_light")


def is_gpio_port(port: str) -> bool:
    return port.startswith(GPIO_SCHEME)


@dataclass(frozen=True)
class GpioConfig:
    """``[gpio]``: the optional inputs and output of a rig on the Pi's pins."""

    start_button: int | None = None
    """A push button to ground (the Pi's pull-up holds it high): pressing it
    is the rig's start button (EVENT BUTTON), as CUBOTino's touch button is."""
    estop_button: int | None = None
    """A latching stop switch to ground: while pressed, the servos get no
    pulses and the rig is latched (docs/protocol.md: the e-stop input)."""
    status_light: int | None = None
    """An LED (with its resistor) to ground: lit while the rig is in a
    session, blinking while its emergency stop is latched."""

    def pins(self) -> dict[str, int]:
        return {k: v for k in GPIO_KEYS if (v := getattr(self, k)) is not None}


class _Table(Protocol):
    data: dict[str, Any]

    def key(self, k: str) -> str: ...
    def fail(self, key: str, what: str) -> Any: ...
    def maybe_integer(self, k: str, lo: int, hi: int) -> int | None: ...
    def done(self, known: tuple[str, ...] | None = None) -> None: ...


def _where(n: int) -> str:
    return f"GPIO{n} (header pin {HEADER_PIN[n]})"


def check_header_pin(t: _Table, key: str, value: int) -> None:
    """A pin the rig computer's header has, in one line if not."""
    if value not in HEADER_GPIOS:
        t.fail(t.key(key), f"GPIO{value} is not a pin a rig may use on a Raspberry Pi's header: give a "
                           f"GPIO number (BCM numbering, as gpiozero's) from {HEADER_GPIOS.start} to "
                           f"{HEADER_GPIOS.stop - 1}, e.g. {CUBOTINO_PINS['cover']} for GPIO12 on header "
                           "pin 32")


def read_gpio(t: _Table | None, top: _Table, port: str, servo_pins: dict[str, int]) -> GpioConfig | None:
    """``[gpio]`` and the servos' pins together: every pin one the header has
    and none used twice. None when the rig is not on the Pi's pins."""
    if not is_gpio_port(port):
        if t is not None:
            t.fail("gpio", f"[gpio] is for a rig on the rig computer's own pins (port = \"{GPIO_SCHEME}\"), "
                           f"not port = \"{port}\": set that port or remove [gpio]")
        return None
    g = GpioConfig()
    if t is not None:
        g = GpioConfig(**{k: t.maybe_integer(k, 0, 99) for k in GPIO_KEYS})
        t.done(GPIO_KEYS)
        for k, v in g.pins().items():
            check_header_pin(t, k, v)
    used: dict[int, str] = {}
    for name, pin in servo_pins.items():
        if pin in used:
            top.fail(f"servos.{name}.pin", f"{_where(pin)} is already servo {used[pin]}'s: give each "
                                           "servo a pin of its own")
        used[pin] = f"{name}"
    for k, pin in g.pins().items():
        if pin in used:
            assert t is not None
            t.fail(t.key(k), f"{_where(pin)} is already used by {used[pin]}: give the {k.replace('_', ' ')} "
                             "a pin of its own")
        used[pin] = f"[gpio] {k}"
    return g
