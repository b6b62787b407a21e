"""The machine cuberobot runs on, at a glance: its load, its temperature
where the board has a sensor, and the free disk of the state folder.

A rig's computer is often a Raspberry Pi in a box, with no screen: a panel
that says it is hot (the Pi slows itself down past 80 °C, and the rig's
timing with it), busy, or that the state folder's disk is nearly full (run
records and pictures stop being written) saves a maker a trip to the
terminal. Everything is read from what Linux already keeps (``os.getloadavg``,
``/sys/class/thermal``, ``statvfs``): cheap enough to read on every request.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

THERMAL = Path("/sys/class/thermal")
MAX_ZONES = 32
"""Thermal zones looked at: a Pi has one, a laptop a dozen."""
MAX_SYSFS_BYTES = 64
"""A sysfs value is one short line; nothing longer is read."""
CPU_ZONE_WORDS = ("cpu", "soc", "x86_pkg", "package", "core")
"""A zone whose type names one of these is the processor's (a Pi's is ``cpu-thermal``)."""


def _read_small(path: Path) -> str | None:
    """A sysfs file's first line, or None when it cannot be read (no
    permission, a zone whose driver refuses to answer)."""
    try:
        with path.open("rb") as f:
            return f.read(MAX_SYSFS_BYTES).decode("ascii", "replace").strip()
    except OSError:
        return None


def cpu_temperature(root: Path = THERMAL) -> tuple[float | None, str]:
    """The processor's temperature in °C and the zone it came from, or
    ``(None, why)`` where the board has no sensor Linux shows. The zone
    whose type names the processor wins; else the first that answers."""
    try:
        zones = sorted(p for p in root.iterdir() if p.name.startswith("thermal_zone"))[:MAX_ZONES]
    except OSError:
        return None, "no sensor (this machine has no /sys/class/thermal)"
    readings: list[tuple[bool, float, str]] = []
    for zone in zones:
        raw = _read_small(zone / "temp")
        try:
            milli = int(raw) if raw is not None else None
        except ValueError:
            milli = None
        if milli is None or not -40_000 <= milli <= 150_000:  # an unplugged or broken sensor
            continue
        kind = _read_small(zone / "type") or zone.name
        readings.append((any(w in kind.lower() for w in CPU_ZONE_WORDS), milli / 1000, kind))
    if not readings:
        return None, "no sensor (no thermal zone answers)"
    best = next((r for r in readings if r[0]), readings[0])
    return round(best[1], 1), best[2]


def host_status(state_dir: Path, thermal: Path = THERMAL) -> dict[str, Any]:
    """The load, the temperature and the free disk of ``state_dir`` (the
    nearest folder of it that exists: before the first run it may not)."""
    load = [round(x, 2) for x in os.getloadavg()]
    temperature, source = cpu_temperature(thermal)
    where = state_dir
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        usage = shutil.disk_usage(where)
        free = round(100 * usage.free / usage.total, 1) if usage.total else 0.0
        disk: dict[str, Any] = {"path": str(state_dir), "free_bytes": usage.free, "total_bytes": usage.total,
                                "free_percent": free}
    except OSError as e:
        disk = {"path": str(state_dir), "free_bytes": None, "total_bytes": None, "free_percent": None,
                "message": f"cannot read its disk: {e.strerror or e}"}
    return {"load": load, "cpus": os.cpu_count() or 1, "temperature_c": temperature,
            "temperature_source": source, "disk": disk}
