"""The set-up file as a run uses it: the TOML configuration read and checked
(:mod:`.config`) with the settings made on the panel for it on top (the
sticker grid, the colour profile: :mod:`.settings`).

It sits above both because the settings are read with the configuration's
own readers: :mod:`.config` knows nothing of settings, so the two layers
read top-down."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .config import (
    DRIVEN_FACES,
    MAX_CONFIG_BYTES,
    OVERLAP_CLASSES,
    Config,
    decode_text,
    default_config_path,
    parse_config,
    read_limited,
)
from .settings import Override, apply_settings, settings_in_force


def load_config(path: str | os.PathLike | None = None, *, settings: bool = True) -> Config:
    """Read and check a configuration file (the default one when ``path`` is
    None), with the settings made on the panel for it on top unless
    ``settings`` is False."""
    p, text = read_config_text(path)
    cfg = parse_config(text, p)
    return apply_settings(cfg) if settings else cfg


def read_config_text(path: str | os.PathLike | None = None) -> tuple[Path, str]:
    """The set-up file's path (the default one when ``path`` is None) and its
    text, read once (a pipe, ``<(...)``, can be read only once), bounded."""
    p = Path(path) if path is not None else default_config_path()
    return p, decode_text(read_limited(p, str(p), MAX_CONFIG_BYTES, "a TOML set-up file"), str(p))


SET_UP, OVERRIDE, DEFAULT = "set-up file", "override", "default"
"""Where a value in force comes from (:class:`Setting`)."""


@dataclass(frozen=True)
class Setting:
    """One value of the configuration in force, and where it comes from."""

    key: str
    """As the set-up file spells it: ``rig.port``, ``motors.U.max_speed``,
    ``camera.upper.width``, ``view.upper`` (its corners)."""
    value: Any
    """JSON-ready: a number, text, true/false, a list, or None (absent)."""
    source: str
    """:data:`SET_UP`, :data:`OVERRIDE` or :data:`DEFAULT`."""


@dataclass(frozen=True)
class Effective:
    """The configuration in force for a set-up file: what a run, the panel
    and every command use, value by value with its source, and the override
    file applied (none, or the settings file: robot/rig/settings.py)."""

    config: Config
    own_profile: str | None
    """The set-up file's own ``[vision] profile`` (before the override)."""
    override: Override | None
    settings: list[Setting]


def effective_config(path: str | os.PathLike | None = None, *, settings_dir: Path | None = None) -> Effective:
    """Read the set-up file as :func:`load_config` does (its settings file,
    in ``settings_dir`` or the user's config folder, on top) and say where
    each value in force comes from: the set-up file when it sets the key,
    the override when its settings file does, else the built-in default.
    Bounded as the reading is (a set-up file is at most 64 KiB, so is the
    list made from it)."""
    p, text = read_config_text(path)
    own = parse_config(text, p)
    cfg, override = settings_in_force(own, settings_dir)
    data = tomllib.loads(text)  # valid TOML: parse_config has read it
    out: list[Setting] = []

    def table(prefix: str, value: Any, given: Any, skip: tuple[str, ...] = ()) -> None:
        given = given if isinstance(given, dict) else {}
        for f in fields(value):
            if f.name not in skip:
                out.append(Setting(f"{prefix}.{f.name}", _plain(getattr(value, f.name)),
                                   SET_UP if f.name in given else DEFAULT))

    table("rig", cfg.rig, data.get("rig"))
    if override is not None and override.port is not None:  # the port chosen on the panel's Port card
        out = [Setting(s.key, s.value, OVERRIDE) if s.key == "rig.port" else s for s in out]
    for face, motor in cfg.motors.items():
        if face not in DRIVEN_FACES[cfg.rig.kind]:
            continue  # a table the rig's kind never drives (config check notes it): not in force
        table(f"motors.{face}", motor, data.get("motors", {}).get(face), skip=("face",))
    for name, servo in cfg.servos.items():
        given = data.get("servos", {}).get(name, {})
        table(f"servos.{name}", servo, given, skip=("name", "angles"))
        for angle, degrees in servo.angles:
            out.append(Setting(f"servos.{name}.{angle}", degrees, SET_UP if angle in given else DEFAULT))
    cube = data.get("cube", {})
    out.append(Setting("cube.corner_cutting", cfg.cube.corner_cutting,
                       SET_UP if "corner_cutting" in cube else DEFAULT))
    out.append(Setting("cube.half_turns", cfg.cube.half_turns, SET_UP if "half_turns" in cube else DEFAULT))
    for name, degrees in zip(OVERLAP_CLASSES, cfg.cube.overlap.perpendicular, strict=True):
        out.append(Setting(f"cube.{name}_deg", degrees, SET_UP if f"{name}_deg" in cube else DEFAULT))
    out.append(Setting("cube.parallel_deg", cfg.cube.overlap.parallel,
                       SET_UP if "parallel_deg" in cube else DEFAULT))
    table("solver", cfg.solver, data.get("solver"))
    table("start", cfg.start, data.get("start"))
    from_override = override is not None and override.profile is not None
    out.append(Setting("vision.profile", cfg.profile, OVERRIDE if from_override else
                       SET_UP if "profile" in data.get("vision", {}) else DEFAULT))
    cameras = {c.get("name"): c for c in data.get("camera", []) if isinstance(c, dict)}
    for camera in cfg.cameras:
        table(f"camera.{camera.name}", camera, cameras.get(camera.name), skip=("name",))
    for view in cfg.views:
        corners = {f.face: [list(p) for p in f.corners] for f in view.faces}
        source = OVERRIDE if override is not None and view.name in override.views else SET_UP
        out.append(Setting(f"view.{view.name}", corners, source))
    return Effective(cfg, own.profile, override, out)


def _plain(value: Any) -> Any:
    """A configuration value as JSON has it (tuples as lists)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
