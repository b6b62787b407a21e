"""The simulated rig: the virtual rig in this process (``sim://`` ports), the
same rig behind a pseudo-terminal, and the real firmware in simavr.

Importing this package registers the ``sim://`` URL handler with pyserial, so
the rig's driver opens a simulated rig exactly as it opens a serial device;
the driver itself never imports anything from here. :func:`attach` is how the
application finds the simulation behind a port or a firmware file, to see its
cube (what simulated cameras render) and press its button.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import serial

from solver import parse_facelets

from ..rig.errors import UserError
from .protocol_sim import parse_sim_url, rig_for_url
from .pty_rig import SimRigProcess
from .simavr import check_firmware

if __name__ not in serial.protocol_handler_packages:
    serial.protocol_handler_packages.append(__name__)


@dataclass
class SimulatedRig:
    """What the application may do with a simulated rig that it cannot do
    with a real one."""

    port: str
    state: Callable[[], str]
    """The cube as the simulation holds it (facelets)."""
    press: Callable[[], None]
    """Press the rig's start button."""
    put_in: Callable[[str], None]
    """Put a cube (facelets) in, as a person would between runs."""
    close: Callable[[], None] = lambda: None


def attach(config: Any, *, port: str | None, firmware: str | None, scramble: str,
           firmware_speed: str | None = None) -> SimulatedRig | None:
    """The simulated rig behind ``port`` (a ``sim://`` URL) or ``firmware`` (an
    ELF run in simavr), with ``scramble`` put in as if by a person; None when
    the port is not simulated. ``config`` is the rig's configuration;
    ``firmware_speed`` the emulated board's pace (times real time, or
    ``max``; by default real time for six motors, ``max`` for the others)."""
    if firmware:
        check_firmware(firmware)
        args = ["--state", scramble]
        if config.path is not None:
            args += ["--config", str(config.path)]
        if firmware_speed is not None:
            args += ["--speed", firmware_speed]
        elif config.rig.kind != "six-motor":
            args += ["--speed", "max"]  # no live view: the rig's clock is the simulated CPU's
        proc = SimRigProcess(*args, firmware=firmware)
        return SimulatedRig(proc.port, proc.state, proc.press, proc.set_state, proc.close)
    url = port or config.rig.port
    if not url.startswith("sim://"):
        return None
    try:
        _, opts = parse_sim_url(url)
        rig = rig_for_url(url)
    except ValueError as e:
        raise UserError(f"--port {url}: {e}") from None
    def put_in(facelets: str) -> None:
        rig.cube = parse_facelets(facelets)
        rig.adopt_config(config)  # a flipper's or two-gripper's parts hold the cube put in

    if "state" in opts:
        rig.adopt_config(config)
    else:
        put_in(scramble)
    return SimulatedRig(url, rig.facelets, rig.press, put_in)
