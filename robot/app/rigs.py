"""The rig a run drives: its link and, when it is a simulation, what a
simulation offers that a real rig does not.

The press-start engine (start.py) gets a :class:`RigHandle` and asks it for
capabilities, never for what kind of rig it is: a rig whose cube can be seen
(what simulated cameras render, and what a run checks its scan against) and
whose start button can be pressed (for a run nobody attends). This module is
where the application composes the simulation in (``robot.sim``), and only
when the port or a firmware file asks for one: a server or a run on real
hardware never imports it.
"""

from __future__ import annotations

import itertools
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from solver import random_cube

from ..rig.config import Config
from ..rig.errors import UserError
from ..rig.link import Link


class Simulation(Protocol):
    """What a simulated rig offers beyond its serial line."""

    port: str

    def state(self) -> str:
        """The cube as the simulation holds it (facelets)."""

    def press(self) -> None:
        """Press the rig's start button."""

    def put_in(self, facelets: str) -> None:
        """Put a cube in, as a person would between runs."""

    def close(self) -> None:
        """Let the simulation go."""


@dataclass
class RigHandle:
    """The link plus, for a simulated rig, a way to see its cube and press its
    button (what simulated cameras render and headless runs press)."""

    link: Link
    port: str
    simulated: Simulation | None = None

    @property
    def sim_state(self) -> Callable[[], str] | None:
        return self.simulated.state if self.simulated else None

    @property
    def press(self) -> Callable[[], None] | None:
        return self.simulated.press if self.simulated else None

    def close(self) -> None:
        try:
            self.link.close()
        finally:
            if self.simulated is not None:
                self.simulated.close()


def attach_rig(cfg: Config, *, port: str | None, firmware: str | None, seed: int | None,
               kind: str = "six-motor", firmware_speed: str | None = None) -> RigHandle:
    """The configured rig's link, not yet connected: whoever holds it can send
    the emergency stop on it from the moment its port opens, handshake or not.

    A simulated rig (``sim://`` or the firmware in simavr, at
    ``firmware_speed`` if given) gets a randomly scrambled cube, as if
    someone had put one in."""
    url = port or cfg.rig.port
    simulated: Simulation | None = None
    if firmware or url.startswith("sim://"):
        from ..sim import attach  # lazy: the simulation plugs in when asked for

        simulated = attach(cfg, port=port, firmware=firmware, scramble=random_cube(seed).to_facelets(),
                           firmware_speed=firmware_speed)
        if simulated is not None:
            url = simulated.port
    elif url.startswith("gpio://"):
        simulated = _on_pins(cfg, url, random_cube(seed).to_facelets())
    try:
        link = Link(cfg, port=url, kind=kind)
    except BaseException:
        if simulated is not None:
            simulated.close()
        raise
    return RigHandle(link, url, simulated)


def _on_pins(cfg: Config, url: str, scramble: str) -> Simulation | None:
    """A rig on the Pi's own pins (robot/gpio/); on gpiozero's mock pins
    (``GPIOZERO_PIN_FACTORY=mock``) the virtual rig those pins move."""
    from .. import gpio  # noqa: F401  (gpio:// ports; lazy: the Pi's pins plug in when asked for)
    from ..gpio.board import is_mock, pin_factory  # lazy: the Pi's pins plug in when asked for

    if not is_mock(pin_factory()):
        return None
    from ..sim.gpio_pins import attach_pins  # lazy: the simulation and gpiozero, when asked for

    return attach_pins(cfg, url, scramble)


def openable(port: str | None) -> None:
    """Make ``port`` openable by a :class:`Link` when it is a ``sim://`` URL
    (the simulation registers that scheme with pyserial), for links that
    open it before any run has attached the simulation (a panel's idle
    stop, its clear)."""
    if port is not None and port.startswith("sim://"):
        from .. import sim  # noqa: F401  (sim:// ports; lazy: the simulation plugs in when asked for)
    if port is not None and port.startswith("gpio://"):
        from .. import gpio  # noqa: F401  (gpio:// ports; lazy: the Pi's pins plug in when asked for)


def connect_rig(handle: RigHandle) -> RigHandle:
    """Handshake and motion settings; the handle is closed if that fails
    (after the emergency stop, on Ctrl-C)."""
    try:
        handle.link.connect()
    except BaseException as e:
        try:
            if isinstance(e, KeyboardInterrupt):
                handle.link.stop_for_interrupt(e)  # raises the Ctrl-C that says so
        finally:
            handle.close()
        raise
    return handle


_runs = itertools.count(1)


def run_port(cfg: Config, port: str | None) -> str:
    """The rig's port. A ``sim://`` rig runs at full speed (its clock is
    virtual, so planned seconds are still the rig's seconds; the pace a
    person watches is the events' own, ``MechanismEvents.pace`` from the
    URL's ``speed``), and a ``sim://`` with no name (the example configs')
    is a virtual rig of its own for this run; a named one is kept for the
    process's runs and jogs."""
    url = port or cfg.rig.port
    if not url.startswith("sim://"):
        return url
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    query["speed"] = "max"
    name = parts.netloc + parts.path or f"{cfg.rig.kind}-{os.getpid()}-{next(_runs)}"  # no name: its own
    return f"sim://{name}?{urllib.parse.urlencode(query)}"


def pace_of(port: str) -> float | None:
    """How fast a ``sim://`` rig's robot moves go: its ``?speed=`` (times
    real time; 1 when not given, as the six-motor virtual rig; ``max``: no
    waiting, None). None for a port that is no ``sim://`` URL."""
    if not port.startswith("sim://"):
        return None
    from ..sim.protocol_sim import parse_sim_url  # the one door to the simulation (module docstring)

    try:
        speed = parse_sim_url(port)[1].get("speed", "1")
    except ValueError as e:
        raise UserError(str(e)) from None
    if speed.strip().lower() in ("max", "inf", "event"):
        return None
    try:
        pace = float(speed)
    except ValueError:
        raise UserError(f"sim:// speed must be 'max' or a number, not {speed!r}") from None
    if not 0.01 <= pace <= 1000:
        raise UserError(f"sim:// speed must be 'max' or from 0.01 to 1000 times real time, not {speed!r}")
    return pace
