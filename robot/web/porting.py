"""The rig's serial port chosen on the page (the Port card): the ports
`cuberobot doctor` lists, and the standing rig moved onto the one chosen.

A maker whose board came up as /dev/ttyUSB0 rather than the set-up file's
/dev/ttyACM0 can connect it from the phone, without a terminal. The choice
lasts while the panel serves (the set-up file is not rewritten: the page
says which line to put in it to keep it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..app.ports import find_port, serial_ports
from ..rig.errors import UserError
from .runs import Panel


class Latched(Exception):
    """The rig's emergency stop is latched: it stays on the line it latched on until cleared."""


def ports(panel: Panel) -> dict[str, Any]:
    """The ports to offer, the one in use and the set-up file's."""
    rig = panel.describe_rig()
    return {"ports": [p.to_json() for p in serial_ports(Path(panel.options.ports_root))],
            "current": rig.get("port", ""), "configured": panel.cfg.rig.port,
            "chosen": panel.options.rig_port or "", "choosable": not panel.options.firmware}


def choose(panel: Panel, wanted: str) -> dict[str, Any]:
    """Move the rig onto the listed port ``wanted`` (its by-id name or its
    node): :class:`UserError` for a port not listed or an emulated rig,
    :class:`~robot.web.runs.Busy` while a run, a jog or a clear holds the rig,
    :class:`Latched` while its emergency stop is latched."""
    if panel.options.firmware:
        raise UserError("the emulated rig (serve --firmware) has no serial port to choose: serve without "
                        "--firmware to drive a board")
    port = find_port(wanted, Path(panel.options.ports_root))
    if port is None:
        listed = ", ".join(p.name for p in serial_ports(Path(panel.options.ports_root))) or "none"
        raise UserError(f"{wanted[:80]!r} is not a serial port of this machine (listed: {listed}); plug the "
                        "board in and list the ports again (`cuberobot doctor` lists them too)")
    with panel.holding("port"):
        if panel.describe_rig().get("estop_latched"):
            raise Latched("the rig's emergency stop is latched: clear it first (Clear emergency stop), then "
                          "choose the port")
        panel.options.rig_port = port.path
        rig = panel.rig.switch(port.path)  # the kept line moved, or latch and hold unknown
    said = f"the rig is on {port.name} ({port.describe})"
    if not panel.kind.keeps_its_line:
        said += ": it is reached at its next run, jog or stop"
    elif rig.get("connected"):
        said += ": connected"
    else:
        why = rig.get("message") or "no answer"
        said += f": not connected ({why}); the panel keeps trying every few seconds"
    return {"port": port.name, "connected": bool(rig.get("connected")), "rig": rig,
            "message": f"{said}. To keep it after a restart, put `port = \"{port.name}\"` under [rig] in "
                       "the set-up file, or serve with --rig."}
