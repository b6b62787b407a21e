"""The serial ports a rig may be on, as `cuberobot doctor` finds them, for
a face to offer (the panel's Port card): each USB serial port (ttyACM*,
ttyUSB*) with its stable ``/dev/serial/by-id`` name, what the USB device
says it is, and the board it looks like.

Only a port in this list may be chosen from the page: a request cannot make
the server open any other file as the rig's line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .doctor import Machine, find_ports


@dataclass(frozen=True)
class SerialPort:
    """One port: ``name`` as a person types it (its by-id link where it has
    one: that name stays the same when the board is plugged in elsewhere),
    ``node`` the /dev node, ``path`` the file to open (the same, outside a
    test's tree laid out as / is)."""

    name: str
    node: str
    path: str
    describe: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "node": self.node, "describe": self.describe}


def serial_ports(root: Path = Path("/")) -> list[SerialPort]:
    """The USB serial ports of the machine under ``root``, as doctor finds them."""
    machine = Machine(root=root)
    out = []
    for p in find_ports(machine):
        what = ", ".join(x for x in (p.board and f"looks like an {p.board}", p.product,
                                     p.usb and f"usb {p.usb}") if x) or "a USB serial port"
        name = p.by_id[0] if p.by_id else p.node
        out.append(SerialPort(name=name, node=p.node, path=str(machine.real(name)), describe=what))
    return out


def find_port(wanted: str, root: Path = Path("/")) -> SerialPort | None:
    """The listed port named ``wanted`` (its by-id name or its node), or None."""
    return next((p for p in serial_ports(root) if wanted in (p.name, p.node)), None)
