"""What `cuberobot doctor` says about a rig on the Pi's pins: the pin
factory gpiozero uses here, each pin the set-up gives the rig (and whether
another process holds it), and whether this user may open the GPIO chip,
with the exact fix when not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rig.config import Config
from ..rig.gpio_pins import HEADER_PIN
from ..rig.owner import describe_holder, port_holder
from .board import PinsUnavailable, factory_name, pin_factory, pins_of

if TYPE_CHECKING:
    from ..app.doctor import Finding, Machine

GPIO_DEVICES = ("/dev/gpiochip0", "/dev/gpiochip4", "/dev/gpiomem")
"""What gpiozero's factories open: the GPIO character device (lgpio; the
Pi 5's header is gpiochip4 on older kernels) and the register window
(RPi.GPIO, native). Raspberry Pi OS gives them to the ``gpio`` group."""


def gpio_findings(m: Machine, config: Config) -> list[Finding]:
    from ..app.doctor import Finding, _access

    out: list[Finding] = []
    try:
        factory = pin_factory()
    except PinsUnavailable as e:
        out.append(Finding("gpio", "problem", "pin factory", str(e)))
        factory = None
    if factory is not None:
        name = factory_name(factory)
        said = {"mock": "gpiozero's mock pins: nothing real moves (GPIOZERO_PIN_FACTORY=mock)",
                "pigpio": "pigpio: hardware-timed pulses through the pigpiod daemon",
                "lgpio": "lgpio (software-timed pulses; GPIOZERO_PIN_FACTORY=pigpio with pigpiod running "
                         "for hardware timing against jitter)"}.get(name, name)
        out.append(Finding("gpio", "ok", "pin factory", said, {"factory": name}))
    for what, pin in pins_of(config).items():
        holder = port_holder(f"gpio://GPIO{pin}")
        where = f"GPIO{pin} (header pin {HEADER_PIN.get(pin, '?')})"
        if holder is not None:
            out.append(Finding("gpio", "info", what, f"{where}, in use by {describe_holder(holder)}",
                               {"pin": pin, "holder": holder}))
        else:
            out.append(Finding("gpio", "ok", what, where, {"pin": pin}))
    for dev in GPIO_DEVICES:
        if m.real(dev).exists() and (f := _access(m, dev, "GPIO device", "gpio")) is not None:
            out.append(f)
    return out
