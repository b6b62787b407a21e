"""The rig's serial port chosen on the page (the Port card): the ports
`cuberobot doctor` lists, and the standing rig moved onto the one chosen.

A maker whose board came up as /dev/ttyUSB0 rather than the set-up file's
/dev/ttyACM0 can connect it from the phone, without a terminal. The choice
is kept where the panel keeps its other settings for the set-up file (the
sticker grid, the colour profile: robot/rig/settings.py), not in the
set-up file itself, which a person edits by hand and the panel never
rewrites: the panel after a restart and every command (`start`, `jog`)
then use it, `config check` and the Config card name it as an override,
and deleting its ``port`` line (or choosing again) undoes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..app.ports import find_port, serial_ports
from ..rig.errors import UserError
from ..rig.settings import save_settings, saved_port
from .runs import Panel


class Latched(Exception):
    """The rig's emergency stop is latched: it stays on the line it latched on until cleared."""


def _settings_dir(panel: Panel) -> Path | None:
    return Path(panel.options.settings_dir) if panel.options.settings_dir else None


def ports(panel: Panel) -> dict[str, Any]:
    """The ports to offer, the one in use, the set-up file's, and the one
    saved on this page with the file it is kept in (a malformed settings
    file is said in ``saved_error`` rather than hiding the ports)."""
    rig = panel.describe_rig()
    saved: dict[str, Any] = {"saved": None, "kept_in": None}
    try:
        kept_in, port = saved_port(panel.cfg, _settings_dir(panel))
        saved = {"saved": port, "kept_in": str(kept_in) if port and kept_in else None}
    except UserError as e:
        saved["saved_error"] = str(e)
    configured = panel.cfg.rig.port
    if saved["saved"] and configured == saved["saved"]:  # the panel's set-up read with the override on top
        try:
            from ..rig.loading import load_config

            configured = load_config(panel.cfg.path, settings=False).rig.port
        except UserError:
            pass
    return {"ports": [p.to_json() for p in serial_ports(Path(panel.options.ports_root))],
            "current": rig.get("port", ""), "configured": configured,
            "chosen": panel.options.rig_port or "", "choosable": not panel.options.firmware, **saved}


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
            **_keep(panel, port.path, port.name, said)}


def _keep(panel: Panel, path: str, name: str, said: str) -> dict[str, Any]:
    """Save the chosen port for the panel's set-up file and say where: the
    answer's ``kept_in`` and the end of its ``message``. A port that
    cannot be saved stays chosen while the panel serves, and the message
    says why it is not kept and how to keep it by hand."""
    by_hand = f"put `port = \"{name}\"` under [rig] in the set-up file, or serve with --rig"
    if panel.cfg.path is None:
        return {"kept_in": None, "message": f"{said}. Not kept after a restart (the panel's configuration "
                                            f"was read from no file): {by_hand}."}
    try:
        kept_in = save_settings(panel.cfg, port=path, directory=_settings_dir(panel))
    except UserError as e:
        return {"kept_in": None, "message": f"{said}. Not kept after a restart ({e}): {by_hand}."}
    return {"kept_in": str(kept_in),
            "message": f"{said}. Kept for the next start in {kept_in} (over the set-up file's port, which "
                       "is not rewritten; `cuberobot config check` names it; choose again, or delete its "
                       "`port` line to go back)."}
