"""CUBOTino's own servo settings turned into a set-up for its build on the
Pi's pins (``cuberobot config import-cubotino``).

CUBOTino keeps its servo settings in ``Cubotino_T_servo_settings.txt``: a
JSON object whose values are numbers written as strings. The positions are
gpiozero ``Servo`` values, -1 to 1 across the pulse range it gives
(``t_min_pulse_width`` .. ``t_max_pulse_width``, in milliseconds): for the
top cover ``t_servo_close``, ``t_servo_open``, ``t_servo_read`` and
``t_servo_flip``; for the cube holder ``b_servo_CCW``, ``b_home`` and
``b_servo_CW``. Its timers are seconds it waits for each kind of travel.

The mapping (docs/hardware.md says it for a person):

* pulses: ``min_us``/``max_us`` = the pulse widths x 1000, unchanged, so a
  value v is the pulse gpiozero would send for it.
* the cover: its servo's whole range (v from -1 to 1) is 180 degrees, so
  v is at (v + 1) / 2 x 180 degrees: ``closed_deg``, ``open_deg`` and
  ``flip_deg`` from close, open and flip.
* the cube holder: CCW and CW are a quarter turn either side of home, so
  the servo's range is whatever makes (CW - CCW) / 2 a quarter turn
  (``range_deg`` = 180 / that), and ``home_deg`` is midway between them;
  ``b_home`` is said beside it when it is not midway.
* times: ``settle_ms`` from the release times (``t_rel_time``,
  ``b_rel_time``), and ``s_per_60deg`` the least that makes every one of
  CUBOTino's travel timers (open/close, flip/open, close/flip, flip/close;
  spin and rotate) no shorter here than there.
* not taken: ``t_servo_read`` (cuberobot reads with the cover open), the
  small release moves (``t_servo_rel_delta``, ``b_rel_*``,
  ``b_extra_*``: cuberobot goes straight to each position).
* pins: CUBOTino's code, not its file, sets them: the cover on GPIO12, the
  holder on GPIO13, the touch button on GPIO26.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..rig.config import MAX_SERVO_TRAVEL_MS, SERVO_MAX_US, SERVO_MIN_US
from ..rig.errors import UserError

MAX_SETTINGS_BYTES = 64 * 1024
COVER_KEYS = ("t_min_pulse_width", "t_max_pulse_width", "t_servo_close", "t_servo_open", "t_servo_flip",
              "t_open_close_time", "t_flip_open_time", "t_close_to_flip_time", "t_flip_to_close_time")
HOLDER_KEYS = ("b_min_pulse_width", "b_max_pulse_width", "b_servo_CCW", "b_home", "b_servo_CW",
               "b_spin_time", "b_rotate_time")


class _Settings:
    def __init__(self, data: Any, name: str):
        if not isinstance(data, dict):
            raise UserError(f"{name}: expected CUBOTino's servo settings (a JSON object of \"key\": "
                            "\"value\"), got a JSON " + type(data).__name__)
        self.data, self.name = data, name

    def number(self, key: str, lo: float, hi: float, *, required: bool = True) -> float | None:
        if key not in self.data:
            if required:
                raise UserError(f"{self.name}: {key}: missing; is it CUBOTino's "
                                "Cubotino_T_servo_settings.txt?")
            return None
        raw = self.data[key]
        try:
            v = float(raw) if isinstance(raw, (str, int, float)) and not isinstance(raw, bool) else math.nan
        except ValueError:
            v = math.nan
        if not math.isfinite(v) or not lo <= v <= hi:
            raise UserError(f"{self.name}: {key}: expected a number from {lo:g} to {hi:g}, got {raw!r}")
        return v

    def value(self, key: str) -> float:
        v = self.number(key, -1.0, 1.0)
        assert v is not None
        return v

    def seconds(self, key: str, *, required: bool = True) -> float | None:
        return self.number(key, 0.0, MAX_SERVO_TRAVEL_MS / 1000, required=required)

    def pulses(self, prefix: str) -> tuple[int, int]:
        lo_ms, hi_ms = SERVO_MIN_US / 1000, SERVO_MAX_US / 1000
        lo = self.number(f"{prefix}_min_pulse_width", lo_ms, hi_ms)
        hi = self.number(f"{prefix}_max_pulse_width", lo_ms, hi_ms)
        assert lo is not None and hi is not None
        if hi <= lo:
            raise UserError(f"{self.name}: {prefix}_max_pulse_width: expected more than "
                            f"{prefix}_min_pulse_width ({lo:g} ms), got {hi:g} ms")
        return round(lo * 1000), round(hi * 1000)


def _speed(pairs: list[tuple[float, float]], settle_s: float) -> float:
    """The least seconds per 60 degrees for which every ``(degrees, seconds)``
    travel takes at least its seconds with ``settle_s`` added."""
    need = [(t - settle_s) * 60.0 / deg for deg, t in pairs if deg > 0 and t > settle_s]
    return math.ceil(max([0.01, *need]) * 1000 - 1e-9) / 1000  # up: never shorter than CUBOTino's


def import_settings(text: str, name: str) -> tuple[str, list[str]]:
    """The set-up file (TOML text) for CUBOTino's settings ``text``, and the
    notes a person should read about it."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise UserError(f"{name}: not CUBOTino's settings file (JSON): {e}") from None
    s = _Settings(data, name)
    notes: list[str] = []

    t_min, t_max = s.pulses("t")
    deg = {k: round((s.value(f"t_servo_{k}") + 1.0) / 2.0 * 180.0, 1) for k in ("close", "open", "flip")}
    beyond = (deg["flip"] - deg["open"]) * (deg["open"] - deg["close"]) > 0
    if abs(deg["open"] - deg["close"]) < 10 or not beyond:
        raise UserError(f"{name}: t_servo_flip: the cover rises from close past open to flip, so open must "
                        "lie between close and flip, at least 0.11 from close; got close "
                        f"{s.value('t_servo_close'):g}, open {s.value('t_servo_open'):g}, flip "
                        f"{s.value('t_servo_flip'):g}")
    t_settle = s.seconds("t_rel_time", required=False) or 0.1
    cover_pairs = [(abs(deg["close"] - deg["open"]), s.seconds("t_open_close_time")),
                   (abs(deg["flip"] - deg["open"]), s.seconds("t_flip_open_time")),
                   (abs(deg["flip"] - deg["close"]), s.seconds("t_close_to_flip_time")),
                   (abs(deg["flip"] - deg["close"]), s.seconds("t_flip_to_close_time"))]
    t_speed = _speed([(d, t) for d, t in cover_pairs if t is not None], t_settle)

    b_min, b_max = s.pulses("b")
    ccw, home, cw = s.value("b_servo_CCW"), s.value("b_home"), s.value("b_servo_CW")
    quarter = (cw - ccw) / 2.0
    if not 0.5 <= quarter <= 1.0:
        raise UserError(f"{name}: b_servo_CW: CCW ({ccw:g}) and CW ({cw:g}) must be a quarter turn either "
                        "side of home, which on a servo of 180 to 360 degrees is 1 to 2 apart in gpiozero's "
                        f"values; got {cw - ccw:g}")
    b_range = round(180.0 / quarter, 1)
    b_home = round(((ccw + cw) / 2.0 + 1.0) / 2.0 * b_range, 1)
    off = (home - (ccw + cw) / 2.0) / quarter * 90.0
    if abs(off) >= 1.0:
        notes.append(f"b_home ({home:g}) is not midway between b_servo_CCW and b_servo_CW: home_deg is taken "
                     f"midway, {off:+.0f} degrees from it; check it with `cuberobot jog \"spin +1\"`")
    b_settle = s.seconds("b_rel_time", required=False) or 0.1
    b_speed = _speed([(90.0, t) for t in (s.seconds("b_spin_time"), s.seconds("b_rotate_time"))
                      if t is not None], b_settle)
    if "t_servo_read" in s.data:
        notes.append("t_servo_read is not used: cuberobot reads the cube with the cover open (open_deg)")

    shown = "".join(ch if ch.isprintable() else " " for ch in name)[:200]
    toml = f"""# CUBOTino on the Raspberry Pi's own pins, from its servo settings ({shown})
# by `cuberobot config import-cubotino`; docs/hardware.md says how each value was taken.
# Pins are CUBOTino's wiring (its code's, not its file's): cover GPIO12, holder GPIO13, button GPIO26.

[rig]
kind = "flipper"
port = "gpio://"

[servos.turntable]         # the cube holder: b_servo_CCW {ccw:g}, b_home {home:g}, b_servo_CW {cw:g}
pin = 13
min_us = {b_min}
max_us = {b_max}
range_deg = {b_range}
home_deg = {b_home}
s_per_60deg = {b_speed}
settle_ms = {round(b_settle * 1000)}

[servos.cover]             # the top cover: t_servo_close, t_servo_open, t_servo_flip
pin = 12
min_us = {t_min}
max_us = {t_max}
range_deg = 180.0
closed_deg = {deg["close"]}
open_deg = {deg["open"]}
flip_deg = {deg["flip"]}
s_per_60deg = {t_speed}
settle_ms = {round(t_settle * 1000)}

[gpio]
start_button = 26          # CUBOTino's touch button

[solver]
metric = "htm"
search_ms = 1000

# CUBOTino's Pi camera on the top cover, looking down at the cube. Set the
# sticker grid's corners on the panel (its Camera card) once the rig stands.
[[camera]]
name = "top"
source = "libcamera"
width = 640
height = 480

[[view]]
name = "top"
camera = "top"

[[view.face]]
face = "U"
corners = [[200.0, 120.0], [440.0, 120.0], [440.0, 360.0], [200.0, 360.0]]
"""
    return toml, notes
