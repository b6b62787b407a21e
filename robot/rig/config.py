"""The set-up file: TOML in, typed and checked objects out.

Every value is checked where it is read, so a mistake is reported with the
file, the key path and what was expected, before anything moves. Speeds are
in revolutions of the *face* per second, so changing microstepping or gears
does not change how fast the cube turns.
"""

from __future__ import annotations

import difflib
import math
import os
import stat
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

from solver import FACES, MAX_BUDGET_MS, MAX_CANDIDATES, MAX_SOLUTION_LENGTH, MAX_WORKERS
from solver.metrics import METHODS, RIG_METRICS
from vision.setup import LIBCAMERA, CameraSpec, FaceSpec, ViewSpec, libcamera_index

from .errors import UserError
from .gpio_pins import CUBOTINO_PINS, GPIO_SCHEME, GpioConfig, check_header_pin, is_gpio_port, read_gpio
from .protocol import MAX_STEPS, TICK_HZ
from .timing import Profile, quantize, turn_costs

PACKAGE_DIR = Path(__file__).resolve().parent
_DEFAULT_CANDIDATES = (PACKAGE_DIR.parents[1] / "config" / "rig.toml", PACKAGE_DIR / "default_rig.toml")
MICROSTEPS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
"""Solutions the solver may hand over for the ``rig`` metric to choose from."""

# Bounds on the file itself, checked before it is parsed (the default file is
# under 4 KiB and 3 levels deep; these leave room for comments and more views).
MAX_CONFIG_BYTES = 64 * 1024
MAX_LINE_CHARS = 1000
MAX_NESTING = 16
"""Brackets and braces open at once (arrays, inline tables, table headers)."""
MAX_DIGITS = 100
"""Digits in one number (a longer one cannot be a setting, and Python refuses
to convert integers of more than 4300 digits)."""
MAX_TEXT_CHARS = 4096
"""A string setting (port, camera source, profile path)."""
MAX_NAME_CHARS = 100
"""A camera's or view's name."""
MAX_CAMERAS = MAX_VIEWS = 16
MAX_CAMERA_INDEX = 255
MAX_SEARCH_MS = 60_000
"""A mechanism search longer than a minute gains nothing measurable (docs/benchmarks.md)."""
MAX_LIBCAMERA = 15
"""The N of "libcamera:N" (a Raspberry Pi 5 has two camera ports)."""
MAX_COMMAND_ARGS = 64


def default_config_path() -> Path:
    """config/rig.toml of the source tree, or the copy shipped inside the
    package when cuberobot is installed without its source tree."""
    env = os.environ.get("CUBEROBOT_CONFIG")
    if env:
        return Path(env)
    for p in _DEFAULT_CANDIDATES:
        if p.is_file():
            return p
    raise UserError("no default configuration found (looked for "
                    + ", ".join(str(p) for p in _DEFAULT_CANDIDATES) + "); pass --config FILE")


@dataclass(frozen=True)
class RigConfig:
    port: str = "sim://"
    baud: int = 115200
    boot_wait_s: float = 0.0
    reply_timeout_s: float = 0.04
    connect_timeout_s: float = 5.0
    stall_timeout_s: float = 10.0
    reply_limit_s: float = 3.0
    idle_ms: int = 2000
    overlap_deg: float | None = None
    """The old single corner-cutting angle for every perpendicular transition
    (0: off); None (absent): the ``[cube]`` model decides."""
    kind: str = "six-motor"
    """The mechanism (:data:`RIG_KINDS`): which moves the rig has, so which
    planner turns a solution into them (robot/rig/mechanisms/)."""


RIG_KINDS = ("six-motor", "flipper", "two-gripper")
"""``six-motor``: a motor on every face, the cube never moves. ``flipper``:
a turntable holds the bottom layer, a cover holds the rest, a flipper tips
the cube forward (CUBOTino). ``two-gripper``: two grippers at right angles,
each turning the layer it holds or the whole cube, and opening to regrip."""

SERVOS: dict[str, dict[str, tuple[str, ...]]] = {
    "flipper": {"turntable": ("home_deg",), "cover": ("open_deg", "closed_deg"),
                "flipper": ("rest_deg", "flip_deg")},
    "two-gripper": {"grip_D": ("open_deg", "closed_deg"), "grip_L": ("open_deg", "closed_deg")},
}
"""The hobby servos each kind has (``[servos.NAME]``) and the named angles each
one moves between. A two-gripper rig turns its grippers with the steppers of
``[motors.D]`` and ``[motors.L]`` (the slots its grippers hold)."""


@dataclass(frozen=True)
class ServoConfig:
    """A hobby servo: the pulse it takes at either end of its range, and how
    fast it travels, which is what the planner's time of each move comes from
    (a servo reports nothing, so the planned time is the rig's wait)."""

    name: str
    pin: int = 9
    min_us: int = 500
    """Pulse width at 0 degrees."""
    max_us: int = 2500
    """Pulse width at ``range_deg``."""
    range_deg: float = 180.0
    s_per_60deg: float = 0.15
    """Travel time per 60 degrees under load (servo data sheets quote it at no load)."""
    settle_ms: int = 60
    angles: tuple[tuple[str, float], ...] = ()
    """The named angles this servo moves between (``home_deg``, ``open_deg``...)."""

    def angle(self, which: str) -> float:
        return dict(self.angles)[which]

    def pulse_us(self, deg: float) -> int:
        """The pulse width that holds the servo at ``deg``."""
        return round(self.min_us + (self.max_us - self.min_us) * deg / self.range_deg)

    def travel_s(self, deg: float) -> float:
        """Seconds to travel ``deg`` degrees and settle."""
        return abs(deg) / 60.0 * self.s_per_60deg + self.settle_ms / 1000.0


DEFAULT_SERVO_ANGLES = {"home_deg": 90.0, "open_deg": 60.0, "closed_deg": 100.0, "rest_deg": 10.0,
                        "flip_deg": 80.0}
"""(A cover that flips the cube has no default flip_deg: giving one says it flips.)"""
DEFAULT_SERVO_ANGLES_GRIP = {"open_deg": 40.0, "closed_deg": 90.0}

UNO_DIR_PINS = (8, 9, 10, 11, 12, 14)
"""The Arduino Uno's DIR pin of each motor 0 .. 5 (A0 is pin 14; firmware/cuberobot/pins.h)."""
MEGA_DIR_PINS = (37, 36, 35, 34, 33, 32)
"""The Mega 2560's. The config does not know the board (the rig says it only
at HELLO), so a servo's ``pin`` may be either board's pin for it."""
DRIVEN_FACES = {"six-motor": FACES, "flipper": "", "two-gripper": "DL"}
"""The faces whose ``[motors.X]`` stepper each kind turns (the others' tables are not used)."""


def servo_motor(kind: str, servo: str) -> int:
    """The motor whose DIR pin carries servo ``servo``'s pulses: the firmware
    drives servo i (its place in ``SERVOS[kind]``) on motor i + 1's DIR pin
    (firmware/cuberobot/hal.h), which that motor then cannot step on."""
    return list(SERVOS[kind]).index(servo) + 1


DEFAULT_SERVO_PINS = {name: UNO_DIR_PINS[servo_motor(kind, name)] for kind in SERVOS for name in SERVOS[kind]}
"""turntable 9, cover 10, flipper 11; grip_D 9, grip_L 10: the only pins the firmware drives them on (Uno)."""
SERVO_MIN_US, SERVO_MAX_US = 400, 2600
"""The pulse limits the firmware takes in CONFIG_SERVO (servo.h CR_SERVO_MIN_US and
CR_SERVO_MAX_US; the virtual rig's SERVO_MIN_US and SERVO_MAX_US)."""
MAX_SERVO_TRAVEL_MS = 10_000
"""The longest travel one SERVO command may wait (the firmware's CR_MAX_TRAVEL_MS,
app.cpp; the virtual rig's MAX_TRAVEL_MS)."""
MIN_SERVO_SWING_DEG = 10.0
"""How far apart a servo's two named positions (open/closed, rest/flip) must
be. A hobby servo holds an angle only to within its dead band and the horn's
play (a degree or two; the virtual rig tells positions apart within 2 degrees
either way, robot/sim/mechanisms.py TOLERANCE_DEG), and a jaw, cover or
flipper that moves less than 10 degrees cannot clear or grip a cube's layer;
so two angles closer than that are a typing mistake, not a mechanism."""


TURN_KINDS = ("quarter", "half")
RELATIONS = ("with", "against")
OVERLAP_CLASSES = tuple(f"{a}_{b}_{r}" for a in TURN_KINDS for b in TURN_KINDS for r in RELATIONS)
"""A perpendicular transition's class: what the previous face turned (a
quarter or a half), what the next face turns, and whether the next turn moves
the edge the two faces share the way the previous face is still moving it
(``with``: one face turns clockwise, the other anticlockwise) or the other way
(``against``)."""
MAX_OVERLAP_DEG = 45.0
"""No class may start a face while its neighbour is farther than this from
aligned: at 45 degrees the cube's layers are as far apart as they can be."""
DEFAULT_OVERLAP_DEG = {"with": 20.0, "against": 12.0}
"""Conservative defaults for a stock speed cube (docs/configuration.md says
where they come from); a measured cube can set each class."""


@dataclass(frozen=True)
class OverlapModel:
    """What may overlap on the cube: for each class of transition between
    consecutive steps, how many degrees the previous face may still have to
    turn when the next one starts (0: it must be aligned)."""

    perpendicular: tuple[float, ...] = tuple(DEFAULT_OVERLAP_DEG[c.rsplit("_", 1)[1]]
                                             for c in OVERLAP_CLASSES)
    """Indexed like :data:`OVERLAP_CLASSES`."""
    parallel: float = MAX_OVERLAP_DEG
    """Consecutive steps on one axis with different motors (parallel layers
    share no piece, so the next one may start almost at once)."""

    def angle(self, prev_half: bool, next_half: bool, with_: bool) -> float:
        return self.perpendicular[4 * prev_half + 2 * next_half + (0 if with_ else 1)]

    def raised(self, deg: float) -> OverlapModel:
        """Every angle ``deg`` larger (a too-eager model, for tests)."""
        return OverlapModel(tuple(a + deg for a in self.perpendicular), self.parallel + deg)

    @property
    def off(self) -> bool:
        return not any(self.perpendicular) and not self.parallel

    @classmethod
    def uniform(cls, deg: float) -> OverlapModel:
        """The old ``[rig] overlap_deg``: one angle for every perpendicular
        transition, none between parallel ones."""
        return cls((deg,) * len(OVERLAP_CLASSES), 0.0)


OFF = OverlapModel.uniform(0.0)


@dataclass(frozen=True)
class CubeConfig:
    corner_cutting: bool = True
    overlap: OverlapModel = field(default_factory=OverlapModel)
    half_turns: str = "short"
    """Each half turn's direction: "short" (chosen for the least time) or
    "clockwise" (as written)."""


@dataclass(frozen=True)
class MotorConfig:
    face: str
    motor: int
    steps_per_rev: int = 200
    microsteps: int = 8
    gear_ratio: float = 1.0
    invert: bool = False
    max_speed: float = 3.0
    """Face revolutions per second."""
    acceleration: float = 40.0
    """Face revolutions per second squared."""
    start_speed: float = 0.3
    """Face revolutions per second at which a move starts and ends."""
    settle_ms: int = 20

    @property
    def steps_per_face_rev(self) -> float:
        return self.steps_per_rev * self.microsteps * self.gear_ratio

    @property
    def steps_per_quarter(self) -> int:
        return round(self.steps_per_face_rev / 4)

    def profile(self) -> Profile:
        s = self.steps_per_face_rev
        return quantize(self.max_speed * s, self.acceleration * s, self.start_speed * s, self.settle_ms)


@dataclass(frozen=True)
class SolverConfig:
    budget_ms: int = 100
    metric: str = "axial"
    candidates: int = 8
    """With ``metric = "rig"``: how many of the solver's cheapest solutions
    are planned to find the one the rig finishes first."""
    max_length: int | None = None
    workers: int | None = None
    """Threads the search uses; None: one to the first solution, then every
    core (chosen by benchmarks/threads.py, see docs/benchmarks.md)."""
    method: str = "two-phase"
    """How `start` solves: "two-phase" (short, for speed) or "cfop" (the
    stages a person would turn, for a demonstration)."""
    search_ms: int = 1000
    """On a flipper or two-gripper rig: how long the search in the
    mechanism's own metric may look for a solution cheaper to make than the
    candidates' best (0: the candidates' best)."""




@dataclass(frozen=True)
class StartConfig:
    recaptures: int = 2
    """How many times `start` captures the doubtful views again before asking for help."""
    confirm_scan: bool = True
    """Scan again after the last turn to confirm the cube is solved."""
    min_confidence: float = 0.0
    """Stickers classified with less confidence than this count as doubtful too
    (the classifier already flags what it doubts; raise this to be stricter)."""
    look_again: int = 2
    """Faces the rig may turn to see doubtful stickers elsewhere before a person
    is asked (0: ask at once)."""


@dataclass(frozen=True)
class Config:
    path: Path | None
    rig: RigConfig = field(default_factory=RigConfig)
    motors: dict[str, MotorConfig] = field(default_factory=dict)
    """Keyed by face letter."""
    cameras: list[CameraSpec] = field(default_factory=list)
    views: list[ViewSpec] = field(default_factory=list)
    profile: str | None = None
    solver: SolverConfig = field(default_factory=SolverConfig)
    start: StartConfig = field(default_factory=StartConfig)
    cube: CubeConfig = field(default_factory=CubeConfig)
    servos: dict[str, ServoConfig] = field(default_factory=dict)
    """Keyed by name (:data:`SERVOS` of the rig's kind); empty on a six-motor rig."""
    gpio: GpioConfig | None = None
    """The rig on the rig computer's own pins (``port = "gpio://"``): its
    buttons and light (robot/rig/gpio_pins.py); None for a rig on a line."""

    def overlap_model(self) -> OverlapModel:
        """What the planner may overlap: ``[rig] overlap_deg`` when the file
        sets it (the old single angle), else the ``[cube]`` model, or nothing
        when ``[cube] corner_cutting = false``."""
        if self.rig.overlap_deg is not None:
            return OverlapModel.uniform(self.rig.overlap_deg)
        return self.cube.overlap if self.cube.corner_cutting else OFF

    def motor_for_index(self, index: int) -> MotorConfig:
        for m in self.motors.values():
            if m.motor == index:
                return m
        raise KeyError(index)

    def profiles(self) -> list[Profile]:
        """Firmware motion settings indexed by motor number."""
        return [self.motor_for_index(i).profile() for i in range(6)]


# ---------------------------------------------------------------- reading


class _Table:
    """One TOML table being read: remembers which keys were used so the rest
    can be reported as unknown, with a suggestion."""

    def __init__(self, data: Any, path: str, file: str):
        self.file = file
        self.path = path
        if not isinstance(data, dict):
            self.fail(path, f"expected a table, got {_describe(data)}")
        self.data = data
        self.used: set[str] = set()

    def key(self, k: str) -> str:
        return f"{self.path}.{k}" if self.path else k

    def fail(self, key: str, what: str) -> NoReturn:
        raise UserError(f"{self.file}: {key or '(top level)'}: {what}")

    def get(self, k: str, kind: type | tuple, default: Any = None, *, lo: float | None = None,
            hi: float | None = None, choices: Iterable[Any] | None = None, required: bool = False,
            max_chars: int = MAX_TEXT_CHARS) -> Any:
        """The value of ``k``, checked: its type (an integer where a number is
        expected becomes a float), then, as they apply, its text, its choices
        and its range; ``default`` when it is missing and not ``required``."""
        self.used.add(k)
        if k not in self.data:
            if required:
                self.fail(self.key(k), "missing (required)")
            return default
        v = self._typed(k, self.data[k], kind if isinstance(kind, tuple) else (kind,))
        if isinstance(v, str):
            self._check_text(k, v, max_chars)
        if choices is not None and v not in choices:
            self.fail(self.key(k), f"expected one of {', '.join(map(repr, choices))}, got {v!r}")
        if isinstance(v, (int, float)):
            self._check_range(k, v, lo, hi)
        return v

    # Typed getters: what a section reads, with the bounds that say what makes
    # sense, as each section's reader names them (``get`` is the one check).
    def integer(self, k: str, default: int, lo: int, hi: int, *,
                choices: Iterable[int] | None = None) -> int:
        return int(self.get(k, int, default, lo=lo, hi=hi, choices=choices))

    def maybe_integer(self, k: str, lo: int, hi: int) -> int | None:
        """An integer that may be left out (None: the reader decides)."""
        v = self.get(k, int, None, lo=lo, hi=hi)
        return None if v is None else int(v)

    def number(self, k: str, default: float, lo: float, hi: float) -> float:
        return float(self.get(k, float, default, lo=lo, hi=hi))

    def maybe_number(self, k: str, lo: float, hi: float) -> float | None:
        v = self.get(k, float, None, lo=lo, hi=hi)
        return None if v is None else float(v)

    def text(self, k: str, default: str, *, choices: Iterable[str] | None = None) -> str:
        return str(self.get(k, str, default, choices=choices))

    def maybe_text(self, k: str) -> str | None:
        """Text that may be left out; an empty string counts as left out."""
        v = self.get(k, str, None)
        return str(v) if v else None

    def required_text(self, k: str, *, choices: Iterable[str] | None = None,
                      max_chars: int = MAX_TEXT_CHARS) -> str:
        return str(self.get(k, str, required=True, choices=choices, max_chars=max_chars))

    def flag(self, k: str, default: bool) -> bool:
        return bool(self.get(k, bool, default))

    def _typed(self, k: str, v: Any, kinds: tuple[type, ...]) -> Any:
        """``v`` if it is one of ``kinds`` (a bool is no number), an int taken
        as a float where a float is expected, and finite."""
        if float in kinds and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not any(isinstance(v, t) and not (t in (int, float) and isinstance(v, bool)) for t in kinds):
            names = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in kinds)
            self.fail(self.key(k), f"expected {names}, got {_describe(v)}")
        if isinstance(v, float) and not math.isfinite(v):
            self.fail(self.key(k), f"expected a finite number, got {v}")
        return v

    def _check_text(self, k: str, v: str, max_chars: int) -> None:
        if len(v) > max_chars:
            self.fail(self.key(k), f"a string of {len(v)} characters; at most {max_chars}")
        if not v.isprintable():
            self.fail(self.key(k), f"expected printable text, got {v[:40]!r}")

    def _check_range(self, k: str, v: float, lo: float | None, hi: float | None) -> None:
        if (lo is None or v >= lo) and (hi is None or v <= hi):
            return
        rng = f"between {lo} and {hi}" if lo is not None and hi is not None else (
            f"at least {lo}" if lo is not None else f"at most {hi}")
        self.fail(self.key(k), f"expected a value {rng}, got {v}")

    def sub(self, k: str) -> _Table | None:
        self.used.add(k)
        if k not in self.data:
            return None
        return _Table(self.data[k], self.key(k), self.file)

    def array(self, k: str, limit: int) -> list[_Table]:
        self.used.add(k)
        v = self.data.get(k, [])
        if not isinstance(v, list):
            self.fail(self.key(k), f"expected an array of tables ([[{k}]]), got {_describe(v)}")
        if len(v) > limit:
            self.fail(self.key(k), f"{len(v)} of them; at most {limit}")
        return [_Table(item, f"{self.key(k)}[{i}]", self.file) for i, item in enumerate(v)]

    def done(self, known: tuple[str, ...] | None = None) -> None:
        known = tuple(self.used) if known is None else known
        for k in self.data:
            if k not in known:
                close = difflib.get_close_matches(k, known, n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else (
                    f"; known keys: {', '.join(sorted(known))}" if known else "")
                self.fail(self.key(k), f"unknown key{hint}")


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
               list: "an array", dict: "a table"}


def _describe(v: Any) -> str:
    if isinstance(v, bool):
        return f"{str(v).lower()} (a boolean)"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return f"an array of {len(v)}"
    return f"{v!r} ({_TYPE_NAMES.get(type(v), type(v).__name__).split()[-1]})"


def read_up_to(fd: int, limit: int) -> bytes:
    """What ``fd`` holds up to its end, but never more than ``limit + 1`` bytes:
    the caller refuses the file when it gets more than ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, limit + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_limited(path: str | os.PathLike, label: str, limit: int, kind: str) -> bytes:
    """The bytes of a file a user named, at most ``limit`` of them: a
    directory, a device (``/dev/zero``) or a socket, a missing or unreadable
    file and a larger one are each a :class:`UserError` of one line that
    starts with ``label`` (the file, or the option that named it) and says
    what was expected (``kind``: "a TOML file"). A pipe (``<(...)``) is read
    like a file; a pipe with no writer reads as empty rather than blocking."""
    name = os.fspath(path)
    if "\0" in name:
        raise UserError(f"{label}: a file name cannot contain a NUL character")
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserError(f"{label}: cannot read: file not found (expected {kind})") from None
    except IsADirectoryError:
        raise UserError(f"{label}: is a directory, expected {kind}") from None
    except OSError as e:
        raise UserError(f"{label}: cannot read: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise UserError(f"{label}: is a directory, expected {kind}")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise UserError(f"{label}: is a device or a socket, not a file; expected {kind}")
        if st.st_size > limit:
            raise UserError(f"{label}: {st.st_size} bytes is too big for {kind} (at most {limit}); "
                            "is it the right file?")
        if stat.S_ISFIFO(st.st_mode) and hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # opened without waiting for a writer; now wait for its data
        data = read_up_to(fd, limit)
    except OSError as e:
        raise UserError(f"{label}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UserError(f"{label}: more than {limit} bytes is too big for {kind}; is it the right file?")
    return data


def decode_text(data: bytes, label: str) -> str:
    """``data`` as UTF-8 text (a byte-order mark in front, as Windows'
    Notepad may save it, dropped: TOML's reader refuses it at "line 1,
    column 1" with no word of why); otherwise a UserError naming the line
    of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise UserError(f"{label}:{line}: not UTF-8 text ({e.reason} at byte {e.start}); "
                        "save the file as UTF-8") from None


def check_toml_shape(text: str, name: str) -> None:
    """Refuse, with the line, what would make the TOML parser slow or blow its
    stack: a line longer than MAX_LINE_CHARS, brackets nested deeper than
    MAX_NESTING and a number of more than MAX_DIGITS digits. A linear scan that
    skips strings and comments; what it lets through, tomllib still checks."""
    if len(text) > MAX_CONFIG_BYTES:
        raise UserError(f"{name}: {len(text)} characters is too big for a set-up file "
                        f"(at most {MAX_CONFIG_BYTES})")
    for number, row in enumerate(text.split("\n"), start=1):
        if len(row) > MAX_LINE_CHARS:
            raise UserError(f"{name}:{number}: a line of {len(row)} characters; a set-up file's lines "
                            f"are at most {MAX_LINE_CHARS} characters long")
    i, n, line, depth, digits = 0, len(text), 1, 0, 0
    while i < n:
        c = text[i]
        if c in "0123456789_":
            digits += 1
            if digits > MAX_DIGITS:
                raise UserError(f"{name}:{line}: a number of more than {MAX_DIGITS} digits; no setting "
                                "needs one")
            i += 1
            continue
        digits = 0
        if c == "\n":
            line += 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c in "[{":
            depth += 1
            if depth > MAX_NESTING:
                raise UserError(f"{name}:{line}: arrays or tables nested more than {MAX_NESTING} deep; "
                                "a set-up file needs 2 (corners = [[x, y], ...])")
        elif c in "]}":
            depth = max(0, depth - 1)
        elif c in "\"'":
            i, line = _skip_string(text, i, line)
            continue
        i += 1


def _skip_string(text: str, i: int, line: int) -> tuple[int, int]:
    """(index after the TOML string that starts at ``i``, line there)."""
    c = text[i]
    quote = c * 3 if text.startswith(c * 3, i) else c
    i += len(quote)
    n = len(text)
    while i < n:
        if text.startswith(quote, i):
            return i + len(quote), line
        ch = text[i]
        if ch == "\n":
            if len(quote) == 1:
                return i, line  # an unterminated one-line string: tomllib will say so
            line += 1
        elif ch == "\\" and c == '"':
            i += 1  # the escaped character (a newline after it is a line continuation)
            if text[i:i + 1] == "\n":
                line += 1
        i += 1
    return n, line


def parse_config(text: str, path: Path | None = None) -> Config:
    name = str(path) if path is not None else "<config>"
    check_toml_shape(text, name)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{name}: not valid TOML: {e}") from None
    except (RecursionError, ValueError) as e:  # what check_toml_shape did not foresee
        raise UserError(f"{name}: not a set-up file TOML can read ({type(e).__name__}: {e})") from None
    top = _Table(data, "", name)

    rig = RigConfig()
    if (t := top.sub("rig")) is not None:
        rig = RigConfig(
            port=t.text("port", rig.port),
            baud=t.integer("baud", rig.baud, 300, 4_000_000),
            boot_wait_s=t.number("boot_wait_s", rig.boot_wait_s, 0.0, 30.0),
            reply_timeout_s=t.number("reply_timeout_s", rig.reply_timeout_s, 0.001, 5.0),
            connect_timeout_s=t.number("connect_timeout_s", rig.connect_timeout_s, 0.1, 300.0),
            stall_timeout_s=t.number("stall_timeout_s", rig.stall_timeout_s, 0.5, 300.0),
            reply_limit_s=t.number("reply_limit_s", rig.reply_limit_s, 0.2, 300.0),
            idle_ms=t.integer("idle_ms", rig.idle_ms, 0, 65535),
            overlap_deg=t.maybe_number("overlap_deg", 0.0, MAX_OVERLAP_DEG),
            kind=t.text("kind", rig.kind, choices=RIG_KINDS),
        )
        if not rig.port.strip():
            t.fail(t.key("port"), "expected a serial port (e.g. /dev/ttyACM0, COM3, a pty path or sim://)")
        t.done()

    motors = _read_motors(top.sub("motors"), rig.kind)
    servos = _read_servos(top.sub("servos"), rig.kind, name, on_pins=is_gpio_port(rig.port))
    gpio = read_gpio(top.sub("gpio"), top, rig.port, {n: sc.pin for n, sc in servos.items()})
    if gpio is not None and rig.kind != "flipper":
        top.fail("rig.port", f"{GPIO_SCHEME} drives hobby servos from the Pi's pins, and a {rig.kind} rig "
                             "has steppers: give it an Arduino (port = \"/dev/ttyACM0\")")
    cube = _read_cube(top.sub("cube"), rig)

    solver = SolverConfig()
    if (t := top.sub("solver")) is not None:
        ml = t.maybe_integer("max_length", 1, MAX_SOLUTION_LENGTH)
        solver = SolverConfig(
            budget_ms=t.integer("budget_ms", solver.budget_ms, 1, int(MAX_BUDGET_MS)),
            metric=t.text("metric", solver.metric, choices=RIG_METRICS),
            candidates=t.integer("candidates", solver.candidates, 1, MAX_CANDIDATES),
            max_length=ml,
            method=t.text("method", solver.method, choices=METHODS),
            workers=t.maybe_integer("workers", 1, MAX_WORKERS),
            search_ms=t.integer("search_ms", solver.search_ms, 0, MAX_SEARCH_MS),
        )
        t.done()
        if solver.method == "cfop" and rig.kind != "six-motor":
            # as `start --method cfop` is refused there (robot/cli/commands/start.py)
            t.fail(t.key("method"), f"\"cfop\" is for a six-motor rig: a {rig.kind} rig solves with "
                                    "two-phase and turns the plan cheapest in its own robot moves; remove "
                                    "method or set it to \"two-phase\"")

    start = StartConfig()
    if (t := top.sub("start")) is not None:
        start = StartConfig(
            recaptures=t.integer("recaptures", start.recaptures, 0, 10),
            confirm_scan=t.flag("confirm_scan", start.confirm_scan),
            min_confidence=t.number("min_confidence", start.min_confidence, 0.0, 1.0),
            look_again=t.integer("look_again", start.look_again, 0, 4),
        )
        t.done()

    profile = None
    if (t := top.sub("vision")) is not None:
        profile = t.maybe_text("profile")
        t.done()
    if profile is not None and path is not None and _looks_like_a_path(profile):
        profile = str(path.parent / Path(profile).expanduser())  # relative to the set-up file, not the cwd

    cameras = [_read_camera(t) for t in top.array("camera", MAX_CAMERAS)]
    names = [c.name for c in cameras]
    for i, n in enumerate(names):
        if names.index(n) != i:
            top.fail(f"camera[{i}].name", f"duplicate camera name {n!r}")
    views = [_read_view(t, cameras) for t in top.array("view", MAX_VIEWS)]
    top.done()
    return Config(path=path, rig=rig, motors=motors, cameras=cameras, views=views, profile=profile,
                  solver=solver, start=start, cube=cube, servos=servos, gpio=gpio)


def _read_servos(t: _Table | None, kind: str, file: str, *, on_pins: bool = False) -> dict[str, ServoConfig]:
    """``[servos.NAME]``: each servo the rig's kind has, defaults for a
    missing one, every angle inside its range, every pulse the firmware
    takes and every travel one SERVO command may wait. A six-motor rig has
    none, so a ``[servos]`` table there is a mistake in ``[rig] kind`` more
    likely than a leftover."""
    names = SERVOS.get(kind)
    if names is None:
        if t is not None:
            t.fail("servos", f"a {kind} rig has no servos; set [rig] kind = \"flipper\" or "
                             "\"two-gripper\", or remove the [servos] tables")
        return {}
    names = dict(names)
    cover = t.sub("cover") if t is not None and kind == "flipper" else None
    if cover is not None and "flip_deg" in cover.data:
        # the cover's lifter tips the cube (CUBOTino): there is no flipper servo
        if t is not None and "flipper" in t.data:
            t.fail("servos.flipper", "servos.cover.flip_deg says the cover flips the cube, so the rig has "
                                     "no flipper servo; remove [servos.flipper], or remove flip_deg if a "
                                     "servo of its own flips the cube")
        del names["flipper"]
        names["cover"] = names["cover"] + ("flip_deg",)
    out: dict[str, ServoConfig] = {}
    for servo, angle_keys in names.items():
        d = ServoConfig(name=servo, pin=DEFAULT_SERVO_PINS[servo])
        defaults = DEFAULT_SERVO_ANGLES_GRIP if servo.startswith("grip") else DEFAULT_SERVO_ANGLES
        m = t.sub(servo) if t is not None else None
        if on_pins and (m is None or "pin" not in m.data):
            # the Pi's pins have no default wiring to fall back on (CUBOTino's: cover 12, turntable 13)
            where = f" (CUBOTino's is GPIO{CUBOTINO_PINS[servo]})" if servo in CUBOTINO_PINS else ""
            (m or t or _Table({}, "", file)).fail(f"servos.{servo}.pin", "missing: a servo on the Pi's "
                                                  f"pins needs its GPIO number{where}")
        if m is None:
            out[servo] = ServoConfig(name=servo, pin=d.pin,
                                     angles=tuple((k, defaults[k]) for k in angle_keys))
            continue
        sc = ServoConfig(
            name=servo,
            pin=m.integer("pin", d.pin, 0, 69),
            min_us=m.integer("min_us", d.min_us, SERVO_MIN_US, SERVO_MAX_US),
            max_us=m.integer("max_us", d.max_us, SERVO_MIN_US, SERVO_MAX_US),
            range_deg=m.number("range_deg", d.range_deg, 90.0, 360.0),
            s_per_60deg=m.number("s_per_60deg", d.s_per_60deg, 0.01, 2.0),
            settle_ms=m.integer("settle_ms", d.settle_ms, 0, 2000),
            angles=tuple((k, m.number(k, defaults[k], 0.0, 360.0)) for k in angle_keys),
        )
        m.done()
        if on_pins:
            check_header_pin(m, "pin", sc.pin)
        _check_servo(m, kind, sc, on_pins=on_pins)
        out[servo] = sc
    if t is not None:
        t.done(tuple(names))
    return out


def _check_servo(m: _Table, kind: str, sc: ServoConfig, *, on_pins: bool = False) -> None:
    """What one servo's keys must agree on, each refused in one line naming the key."""
    motor = servo_motor(kind, sc.name)
    if not on_pins and sc.pin not in (UNO_DIR_PINS[motor], MEGA_DIR_PINS[motor]):
        # the wire carries no pin: the firmware drives servo i on motor i + 1's DIR pin
        pin = DEFAULT_SERVO_PINS[sc.name]
        other = [n for n in SERVOS[kind] if sc.pin in (UNO_DIR_PINS[servo_motor(kind, n)],
                                                       MEGA_DIR_PINS[servo_motor(kind, n)])]
        taken = f"pin {sc.pin} is already used by servo {other[0]}: " if other else ""
        m.fail(m.key("pin"), f"{taken}the firmware drives servo {sc.name} on pin {pin} of an Uno (motor "
                             f"{motor}'s DIR pin; {MEGA_DIR_PINS[motor]} on a Mega), not {sc.pin}; wire its "
                             f"signal there and set pin = {pin} (or {MEGA_DIR_PINS[motor]}), or leave pin "
                             "out")
    if sc.min_us >= sc.max_us:
        m.fail(m.key("max_us"), f"expected more than min_us ({sc.min_us}), got {sc.max_us}")
    if sc.name == "turntable" and sc.range_deg < 180.0:
        m.fail(m.key("range_deg"), f"a turntable of {sc.range_deg:g} degrees cannot reach a quarter turn "
                                   "either way from any home_deg; it needs a servo of at least 180 degrees "
                                   "(range_deg = 180)")
    for k, v in sc.angles:
        if v > sc.range_deg:
            m.fail(m.key(k), f"{v:g} degrees is outside the servo's range_deg ({sc.range_deg:g}); "
                             "lower it or raise range_deg")
    if sc.name == "turntable":
        home = sc.angle("home_deg")
        if home < 90.0 - 1e-9 or home + 90.0 > sc.range_deg + 1e-9:
            m.fail(m.key("home_deg"), f"the turntable must reach a quarter turn either way from "
                                      f"home_deg ({home:g}); expected 90 to {sc.range_deg - 90:g}")
    for a, b in (("open_deg", "closed_deg"), ("rest_deg", "flip_deg"), ("open_deg", "flip_deg")):
        if {a, b} <= dict(sc.angles).keys() and abs(sc.angle(a) - sc.angle(b)) < MIN_SERVO_SWING_DEG:
            m.fail(m.key(b), f"{b} ({sc.angle(b):g}) must be at least {MIN_SERVO_SWING_DEG:g} degrees from "
                             f"{a} ({sc.angle(a):g}); measure both with `cuberobot jog \"servo {sc.name} "
                             "DEGREES\"`")
    if sc.name == "cover" and "flip_deg" in dict(sc.angles):
        opened, closed, flip = sc.angle("open_deg"), sc.angle("closed_deg"), sc.angle("flip_deg")
        if (flip - opened) * (opened - closed) <= 0:
            m.fail(m.key("flip_deg"), f"the cover rises from closed ({closed:g}) past open ({opened:g}) to "
                                      f"flip the cube, so flip_deg must lie beyond open_deg, away from "
                                      f"closed_deg; got {flip:g}")
    # a jog's SERVO waits the travel of the whole range: the longest any command waits
    travel_ms = round(sc.travel_s(sc.range_deg) * 1000)
    if travel_ms > MAX_SERVO_TRAVEL_MS:
        m.fail(m.key("s_per_60deg"), f"range_deg ({sc.range_deg:g}) at s_per_60deg ({sc.s_per_60deg:g}) "
                                     f"plus settle_ms ({sc.settle_ms}) is a travel of {travel_ms} ms; the "
                                     f"rig waits at most {MAX_SERVO_TRAVEL_MS} ms for one servo command, so "
                                     "lower s_per_60deg, range_deg or settle_ms")


def _read_cube(t: _Table | None, rig: RigConfig) -> CubeConfig:
    """``[cube]``: whether and how far turns may overlap (the corner-cutting
    model), each angle checked against the one physical bound."""
    if t is None:
        return CubeConfig()
    if rig.overlap_deg is not None:
        t.fail(t.path, "[rig] overlap_deg and a [cube] table both set corner cutting; keep the [cube] "
                       "table (one angle per class of transition) and remove overlap_deg")
    d = OverlapModel()
    angles = tuple(t.number(f"{c}_deg", d.perpendicular[i], 0.0, MAX_OVERLAP_DEG)
                   for i, c in enumerate(OVERLAP_CLASSES))
    cube = CubeConfig(corner_cutting=t.flag("corner_cutting", True),
                      half_turns=t.text("half_turns", "short", choices=("short", "clockwise")),
                      overlap=OverlapModel(angles, t.number("parallel_deg", d.parallel, 0.0,
                                                            MAX_OVERLAP_DEG)))
    t.done()
    return cube


def _looks_like_a_path(profile: str) -> bool:
    """A profile given by file rather than by name."""
    return profile.endswith(".json") or "/" in profile or "\\" in profile


def _read_motors(t: _Table | None, kind: str) -> dict[str, MotorConfig]:
    """``[motors.X]``: each face's stepper. Only the faces the kind drives
    (:data:`DRIVEN_FACES`) need their own motor, one whose DIR pin carries no
    servo; the others keep a motor number each (a free one where theirs is
    taken), since the firmware is sent a profile for every motor 0 .. 5."""
    motors: dict[str, MotorConfig] = {}
    for i, face in enumerate(FACES):
        m = t.sub(face) if t is not None else None
        if m is None:
            motors[face] = MotorConfig(face=face, motor=i)
            continue
        d = MotorConfig(face=face, motor=i)
        mc = MotorConfig(
            face=face,
            motor=m.integer("motor", i, 0, 5),
            steps_per_rev=m.integer("steps_per_rev", d.steps_per_rev, 1, 100_000),
            microsteps=m.integer("microsteps", d.microsteps, 1, max(MICROSTEPS), choices=MICROSTEPS),
            gear_ratio=m.number("gear_ratio", d.gear_ratio, 0.01, 100.0),
            invert=m.flag("invert", d.invert),
            max_speed=m.number("max_speed", d.max_speed, 0.01, 100.0),
            acceleration=m.number("acceleration", d.acceleration, 0.01, 100_000.0),
            start_speed=m.number("start_speed", d.start_speed, 0.001, 100.0),
            settle_ms=m.integer("settle_ms", d.settle_ms, 0, 2000),
        )
        m.done()
        spr = mc.steps_per_face_rev
        if abs(spr / 4 - round(spr / 4)) > 1e-9 or round(spr / 4) < 1:
            m.fail(m.path, f"steps_per_rev * microsteps * gear_ratio / 4 = {spr / 4:g} steps per quarter "
                           "turn; it must be a whole number")
        if 2 * mc.steps_per_quarter > MAX_STEPS:
            m.fail(m.path, f"a half turn would be {2 * mc.steps_per_quarter} steps; the protocol allows "
                           f"at most {MAX_STEPS} per move (lower microsteps)")
        if mc.max_speed * spr > TICK_HZ:
            m.fail(m.key("max_speed"), f"{mc.max_speed:g} rev/s is {mc.max_speed * spr:.0f} steps/s; the "
                                       f"firmware steps at most {TICK_HZ} steps/s, so at most "
                                       f"{TICK_HZ / spr:.3g} rev/s with this motor")
        if mc.start_speed > mc.max_speed:
            m.fail(m.key("start_speed"), f"expected at most max_speed ({mc.max_speed:g}), got "
                                         f"{mc.start_speed:g}")
        motors[face] = mc
    if t is None:
        return motors  # the defaults suit every kind
    t.done(tuple(FACES))
    driven = DRIVEN_FACES[kind]
    servo_on = {servo_motor(kind, s): s for s in SERVOS.get(kind, {})}
    used: dict[int, str] = {}
    for face in driven:
        mc = motors[face]
        key = f"motors.{face}.motor"
        if mc.motor in servo_on:
            free = [str(i) for i in range(6) if i not in servo_on]
            t.fail(key, f"motor {mc.motor}'s DIR pin (D{UNO_DIR_PINS[mc.motor]} on an Uno) carries servo "
                        f"{servo_on[mc.motor]}'s pulses on a {kind} rig, so the firmware will not step it; "
                        f"use motor {', '.join(free[:-1])} or {free[-1]}")
        if mc.motor in used:
            where = "each face" if kind == "six-motor" else f"each gripper of a {kind} rig"
            t.fail(key, f"motor {mc.motor} is already used by face {used[mc.motor]} ({where} needs its own "
                        "motor 0-5)")
        used[mc.motor] = face
    # The faces the kind does not drive: theirs where it is free, else a free one.
    later = []
    for face in FACES:
        if face not in driven:
            if motors[face].motor in used:
                later.append(face)
            else:
                used[motors[face].motor] = face
    free_motors = iter(i for i in range(6) if i not in used)
    for face in later:
        motors[face] = replace(motors[face], motor=next(free_motors))
    return motors


def _read_camera(t: _Table) -> CameraSpec:
    d = CameraSpec(name="", source=0)
    name = t.required_text("name", max_chars=MAX_NAME_CHARS)
    command = _read_command(t)
    if command and "source" in t.data:
        t.fail(t.path, "give source or command, not both (command is a program writing MJPEG; source "
                       "everything else)")
    source = "command" if command else t.get("source", (str, int), required=True, lo=0, hi=MAX_CAMERA_INDEX)
    if isinstance(source, str) and not command:
        _check_camera_source(t, source)
    cam = CameraSpec(
        name=name,
        source=source,
        command=command,
        width=t.integer("width", d.width, 16, 16384),
        height=t.integer("height", d.height, 16, 16384),
        auto_exposure=t.flag("auto_exposure", d.auto_exposure),
        auto_white_balance=t.flag("auto_white_balance", d.auto_white_balance),
        warmup_frames=t.integer("warmup_frames", d.warmup_frames, 0, 1000),
        average_frames=t.integer("average_frames", d.average_frames, 1, 100),
        timeout_s=t.number("timeout_s", d.timeout_s, 0.1, 300.0),
    )
    t.done()
    return cam


def _check_camera_source(t: _Table, source: str) -> None:
    key = t.key("source")
    if not source.strip():
        t.fail(key, "expected a camera: an index (0), /dev/videoN, a /dev/v4l/by-id/... path, "
                    "\"libcamera\", a file or \"sim\"")
    if source.startswith(("/dev/tty", "/dev/serial/", "/dev/cu.")):
        t.fail(key, f"{source} is a serial port, not a camera (cameras are /dev/videoN or "
                    "/dev/v4l/by-id/...; `cuberobot doctor` lists them)")
    if source.isdigit() and not (source.isascii() and int(source) <= MAX_CAMERA_INDEX):
        t.fail(key, f"expected a camera index from 0 to {MAX_CAMERA_INDEX}, got {source[:20]!r}")
    number = libcamera_index(CameraSpec("", source))
    if source.startswith(LIBCAMERA + ":") and not 0 <= number <= MAX_LIBCAMERA:
        t.fail(key, f"expected \"libcamera\" or \"libcamera:N\" with N from 0 to {MAX_LIBCAMERA} (the "
                    f"camera's number in rpicam-hello --list-cameras), got {source!r}")


def _read_command(t: _Table) -> tuple[str, ...]:
    """A camera's ``command``: a program and its arguments, as an array of strings."""
    if "command" not in t.data:
        t.used.add("command")
        return ()
    argv = t.get("command", list)
    key = t.key("command")
    if not argv or len(argv) > MAX_COMMAND_ARGS:
        t.fail(key, f"expected a program and its arguments, 1 to {MAX_COMMAND_ARGS} strings, as "
                    "[\"rpicam-vid\", \"--codec\", \"mjpeg\", \"-o\", \"-\"]; got an array of "
                    f"{len(argv)}")
    for i, a in enumerate(argv):
        if not isinstance(a, str):
            t.fail(f"{key}[{i}]", f"expected a string, got {_describe(a)}")
        if len(a) > MAX_TEXT_CHARS or not a.isprintable() or "\0" in a:
            t.fail(f"{key}[{i}]", f"expected printable text of at most {MAX_TEXT_CHARS} characters")
    if not argv[0].strip():
        t.fail(f"{key}[0]", "expected the program's name or path, got an empty string")
    return tuple(argv)


def _read_view(t: _Table, cameras: list[CameraSpec]) -> ViewSpec:
    name = t.required_text("name", max_chars=MAX_NAME_CHARS)
    camera = t.required_text("camera", max_chars=MAX_NAME_CHARS)
    by_name = {c.name: c for c in cameras}
    if camera not in by_name:
        close = difflib.get_close_matches(camera, list(by_name), n=1)
        t.fail(t.key("camera"), f"no camera named {camera!r}" + (
            f"; did you mean {close[0]!r}?" if close else f" (cameras: {', '.join(by_name) or 'none'})"))
    width, height = by_name[camera].width, by_name[camera].height
    hand_held = t.flag("hand_held", False)
    faces = []
    for f in t.array("face", len(FACES)):
        letter = f.required_text("face", choices=tuple(FACES))
        corners = f.get("corners", list, required=True)
        if len(corners) != 4 or not all(
                isinstance(c, list) and len(c) == 2
                and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in c)
                for c in corners):
            f.fail(f.key("corners"), "expected four [x, y] pixel points, clockwise in the image")
        for j, (x, y) in enumerate(corners):
            if not (math.isfinite(x) and math.isfinite(y) and 0 <= x <= width and 0 <= y <= height):
                f.fail(f"{f.key('corners')}[{j}]",
                       f"[{x}, {y}] is outside the {width}x{height} image of camera {camera!r}: "
                       f"expected 0 <= x <= {width}, 0 <= y <= {height}")
        faces.append(FaceSpec(
            face=letter,
            corners=tuple((float(x), float(y)) for x, y in corners),
            top_left=f.integer("top_left", 0, 0, 3),
            center_visible=f.flag("center_visible", True),
        ))
        f.done()
    t.done()
    return ViewSpec(name=name, camera=camera, faces=tuple(faces), hand_held=hand_held)


def rig_turn_costs(config: Config) -> tuple[float, float]:
    """``(quarter_s, half_s)`` for a rig configuration."""
    profiles = config.profiles()
    spq = [config.motor_for_index(i).steps_per_quarter for i in range(6)]
    return turn_costs(profiles, spq)
