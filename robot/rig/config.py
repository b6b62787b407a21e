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
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from solver import FACES
from vision.setup import CameraSpec, FaceSpec, ViewSpec

from .errors import UserError
from .protocol import MAX_STEPS, TICK_HZ
from .timing import Profile, quantize, turn_costs

PACKAGE_DIR = Path(__file__).resolve().parent
_DEFAULT_CANDIDATES = (PACKAGE_DIR.parents[1] / "config" / "rig.toml", PACKAGE_DIR / "default_rig.toml")
MICROSTEPS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
METRICS = ("axial", "htm", "qtm")


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
    idle_ms: int = 2000
    overlap_deg: float = 0.0


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
    max_length: int | None = None


@dataclass(frozen=True)
class StartConfig:
    recaptures: int = 2
    """How many times `start` captures the doubtful views again before asking for help."""
    confirm_scan: bool = True
    """Scan again after the last turn to confirm the cube is solved."""
    min_confidence: float = 0.0
    """Stickers classified with less confidence than this count as doubtful too
    (the classifier already flags what it doubts; raise this to be stricter)."""


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
            hi: float | None = None, choices: Iterable[Any] | None = None, required: bool = False) -> Any:
        self.used.add(k)
        if k not in self.data:
            if required:
                self.fail(self.key(k), "missing (required)")
            return default
        v = self.data[k]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = any(isinstance(v, t) and not (t in (int, float) and isinstance(v, bool)) for t in kinds)
        if float in kinds and isinstance(v, int) and not isinstance(v, bool):
            ok, v = True, float(v)
        if not ok:
            names = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in kinds)
            self.fail(self.key(k), f"expected {names}, got {_describe(v)}")
        if isinstance(v, float) and not math.isfinite(v):
            self.fail(self.key(k), f"expected a finite number, got {v}")
        if choices is not None and v not in choices:
            self.fail(self.key(k), f"expected one of {', '.join(map(repr, choices))}, got {v!r}")
        if lo is not None and v < lo or hi is not None and v > hi:
            rng = f"between {lo} and {hi}" if lo is not None and hi is not None else (
                f"at least {lo}" if lo is not None else f"at most {hi}")
            self.fail(self.key(k), f"expected a value {rng}, got {v}")
        return v

    def sub(self, k: str) -> _Table | None:
        self.used.add(k)
        if k not in self.data:
            return None
        return _Table(self.data[k], self.key(k), self.file)

    def array(self, k: str) -> list[_Table]:
        self.used.add(k)
        v = self.data.get(k, [])
        if not isinstance(v, list):
            self.fail(self.key(k), f"expected an array of tables ([[{k}]]), got {_describe(v)}")
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


def load_config(path: str | os.PathLike | None = None) -> Config:
    """Read and check a configuration file (the default one when ``path`` is None)."""
    p = Path(path) if path is not None else default_config_path()
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"{p}: configuration file not found") from None
    except IsADirectoryError:
        raise UserError(f"{p}: is a directory, expected a TOML file") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{p}: cannot read: {e.strerror}") from None
    return parse_config(text, p)


def parse_config(text: str, path: Path | None = None) -> Config:
    name = str(path) if path is not None else "<config>"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{name}: not valid TOML: {e}") from None
    top = _Table(data, "", name)

    rig = RigConfig()
    if (t := top.sub("rig")) is not None:
        rig = RigConfig(
            port=t.get("port", str, rig.port),
            baud=t.get("baud", int, rig.baud, lo=300, hi=4_000_000),
            boot_wait_s=t.get("boot_wait_s", float, rig.boot_wait_s, lo=0.0, hi=30.0),
            reply_timeout_s=t.get("reply_timeout_s", float, rig.reply_timeout_s, lo=0.001, hi=5.0),
            connect_timeout_s=t.get("connect_timeout_s", float, rig.connect_timeout_s, lo=0.1, hi=300.0),
            stall_timeout_s=t.get("stall_timeout_s", float, rig.stall_timeout_s, lo=0.5, hi=300.0),
            idle_ms=t.get("idle_ms", int, rig.idle_ms, lo=0, hi=65535),
            overlap_deg=t.get("overlap_deg", float, rig.overlap_deg, lo=0.0, hi=45.0),
        )
        if not rig.port.strip():
            t.fail(t.key("port"), "expected a serial port (e.g. /dev/ttyACM0, COM3, a pty path or sim://)")
        t.done()

    motors = _read_motors(top.sub("motors"), name)

    solver = SolverConfig()
    if (t := top.sub("solver")) is not None:
        ml = t.get("max_length", int, None, lo=1, hi=100)
        solver = SolverConfig(
            budget_ms=t.get("budget_ms", int, solver.budget_ms, lo=1, hi=600_000),
            metric=t.get("metric", str, solver.metric, choices=METRICS),
            max_length=ml,
        )
        t.done()

    start = StartConfig()
    if (t := top.sub("start")) is not None:
        start = StartConfig(
            recaptures=t.get("recaptures", int, start.recaptures, lo=0, hi=10),
            confirm_scan=t.get("confirm_scan", bool, start.confirm_scan),
            min_confidence=t.get("min_confidence", float, start.min_confidence, lo=0.0, hi=1.0),
        )
        t.done()

    profile = None
    if (t := top.sub("vision")) is not None:
        profile = t.get("profile", str, None) or None
        t.done()
    if profile is not None and path is not None and _looks_like_a_path(profile):
        profile = str(path.parent / Path(profile).expanduser())  # relative to the set-up file, not the cwd

    cameras = [_read_camera(t) for t in top.array("camera")]
    names = [c.name for c in cameras]
    for i, n in enumerate(names):
        if names.index(n) != i:
            top.fail(f"camera[{i}].name", f"duplicate camera name {n!r}")
    views = [_read_view(t, names) for t in top.array("view")]
    top.done()
    return Config(path=path, rig=rig, motors=motors, cameras=cameras, views=views, profile=profile,
                  solver=solver, start=start)


def _looks_like_a_path(profile: str) -> bool:
    """A profile given by file rather than by name."""
    return profile.endswith(".json") or "/" in profile or "\\" in profile


def _read_motors(t: _Table | None, name: str) -> dict[str, MotorConfig]:
    motors: dict[str, MotorConfig] = {}
    for i, face in enumerate(FACES):
        m = t.sub(face) if t is not None else None
        if m is None:
            motors[face] = MotorConfig(face=face, motor=i)
            continue
        d = MotorConfig(face=face, motor=i)
        mc = MotorConfig(
            face=face,
            motor=m.get("motor", int, i, lo=0, hi=5),
            steps_per_rev=m.get("steps_per_rev", int, d.steps_per_rev, lo=1, hi=100_000),
            microsteps=m.get("microsteps", int, d.microsteps, choices=MICROSTEPS),
            gear_ratio=m.get("gear_ratio", float, d.gear_ratio, lo=0.01, hi=100.0),
            invert=m.get("invert", bool, d.invert),
            max_speed=m.get("max_speed", float, d.max_speed, lo=0.01, hi=100.0),
            acceleration=m.get("acceleration", float, d.acceleration, lo=0.01, hi=100_000.0),
            start_speed=m.get("start_speed", float, d.start_speed, lo=0.001, hi=100.0),
            settle_ms=m.get("settle_ms", int, d.settle_ms, lo=0, hi=2000),
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
    if t is not None:
        t.done(tuple(FACES))
        used: dict[int, str] = {}
        for face, mc in motors.items():
            if mc.motor in used:
                t.fail(f"motors.{face}.motor", f"motor {mc.motor} is already used by face {used[mc.motor]}"
                                               " (each face needs its own motor 0-5)")
            used[mc.motor] = face
    return motors


def _read_camera(t: _Table) -> CameraSpec:
    d = CameraSpec(name="", source=0)
    cam = CameraSpec(
        name=t.get("name", str, required=True),
        source=t.get("source", (str, int), required=True),
        width=t.get("width", int, d.width, lo=16, hi=16384),
        height=t.get("height", int, d.height, lo=16, hi=16384),
        auto_exposure=t.get("auto_exposure", bool, d.auto_exposure),
        auto_white_balance=t.get("auto_white_balance", bool, d.auto_white_balance),
        warmup_frames=t.get("warmup_frames", int, d.warmup_frames, lo=0, hi=1000),
        average_frames=t.get("average_frames", int, d.average_frames, lo=1, hi=100),
        timeout_s=t.get("timeout_s", float, d.timeout_s, lo=0.1, hi=300.0),
    )
    t.done()
    return cam


def _read_view(t: _Table, cameras: list[str]) -> ViewSpec:
    name = t.get("name", str, required=True)
    camera = t.get("camera", str, required=True)
    if camera not in cameras:
        close = difflib.get_close_matches(camera, cameras, n=1)
        t.fail(t.key("camera"), f"no camera named {camera!r}" + (
            f"; did you mean {close[0]!r}?" if close else f" (cameras: {', '.join(cameras) or 'none'})"))
    hand_held = t.get("hand_held", bool, False)
    faces = []
    for f in t.array("face"):
        letter = f.get("face", str, required=True, choices=tuple(FACES))
        corners = f.get("corners", list, required=True)
        if len(corners) != 4 or not all(
                isinstance(c, list) and len(c) == 2
                and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in c)
                for c in corners):
            f.fail(f.key("corners"), "expected four [x, y] pixel points, clockwise in the image")
        faces.append(FaceSpec(
            face=letter,
            corners=tuple((float(x), float(y)) for x, y in corners),
            top_left=f.get("top_left", int, 0, lo=0, hi=3),
            center_visible=f.get("center_visible", bool, True),
        ))
        f.done()
    t.done()
    return ViewSpec(name=name, camera=camera, faces=tuple(faces), hand_held=hand_held)


def rig_turn_costs(config: Config) -> tuple[float, float]:
    """``(quarter_s, half_s)`` for a rig configuration."""
    profiles = config.profiles()
    spq = [config.motor_for_index(i).steps_per_quarter for i in range(6)]
    return turn_costs(profiles, spq)
