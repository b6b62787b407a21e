"""Settings made on the rig (the panel's sticker grid, the colour profile
the panel's or the terminal's calibration put in use, and the serial port
chosen on the panel's Port card) that override the set-up file, kept in the
user's config folder.

The set-up file (``--config``, by default the repository's ``config/rig.toml``
or the packaged copy) may not be writable, may be shared by several people,
and is a file people edit by hand, comments and all: the panel does not
rewrite it. What a person sets on the panel goes instead into a small TOML
file of its own, one for each set-up file::

    ~/.config/cuberobot/setups/rig-1a2b3c4d5e.toml

(``$XDG_CONFIG_HOME``; the name is the set-up file's stem and a hash of its
full path, so two rigs' set-ups never share one.) :func:`robot.rig.loading.load_config`
applies it on top of the set-up file, so the panel after a restart and every
command (``scan``, ``start``, ``calibrate``) use what was set. It holds:

* ``profile``: the colour profile in use (a name in the user's profile
  folder, or the path of its .json file), as ``[vision] profile``;
* ``port``: the rig's serial port chosen on the panel, as ``[rig] port``
  (``--rig`` on a command line still wins over it). Not applied to a set-up
  on the Pi's own pins (``gpio://``): a serial port there would change what
  the rig is, not where it is plugged in;
* ``[[view]]`` tables, as the set-up file's: a view of the same name and
  camera, showing the same faces, takes these corners. A view the set-up
  file no longer has (or that shows other faces) is left out, with a
  warning, rather than failing every command.

Deleting the file undoes the settings.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from .config import MAX_VIEWS, Config, _read_view, _Table, check_toml_shape, decode_text, read_limited
from .errors import UserError
from .gpio_pins import is_gpio_port

if TYPE_CHECKING:
    from vision.setup import ViewSpec


log = logging.getLogger(__name__)

MAX_SETTINGS_BYTES = 256 * 1024
"""A settings file: six views of six faces' corners are a few kilobytes."""

MAX_PORT_CHARS = 256
"""A saved port's name (a /dev/serial/by-id name is under 100 characters)."""


def settings_dir() -> Path:
    """The user's config folder for cuberobot (``~/.config/cuberobot`` on Linux)."""
    return platformdirs.user_config_path("cuberobot", appauthor=False)


def settings_path(setup: Path, directory: Path | None = None) -> Path:
    """The settings file for the set-up file ``setup``."""
    resolved = Path(setup).expanduser().resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return (Path(directory) if directory is not None else settings_dir()) / "setups" / \
        f"{resolved.stem}-{digest}.toml"


@dataclass(frozen=True)
class Override:
    """A settings file in force for a set-up file, and what of it is used:
    what `config check`, `doctor` and the panel's configuration card name."""

    path: Path
    """The settings file."""
    setup: Path
    """The set-up file it belongs to."""
    profile: str | None
    """The colour profile it puts in use instead of the set-up file's (None: it sets none)."""
    views: tuple[str, ...]
    """The views whose corners it sets (those the set-up file still has, showing the same faces)."""
    port: str | None = None
    """The rig's serial port it puts in use instead of the set-up file's (None: it sets none)."""
    own_port: str = ""
    """The set-up file's own ``[rig] port``, which :attr:`port` overrides."""

    def describe(self, own_profile: str | None) -> str:
        """One line: the file, what it overrides (``own_profile``: the set-up
        file's own ``[vision] profile``) and how to undo it."""
        parts = []
        if self.port is not None:
            parts.append(f"[rig] port = {self.port!r} (the set-up file says {self.own_port!r}; chosen on "
                         "the panel's Port card, `--rig` still wins)")
        if self.profile is not None:
            parts.append(f"[vision] profile = {self.profile!r} (the set-up file says "
                         f"{repr(own_profile) if own_profile else 'none'})")
        if self.views:
            parts.append(f"the [[view]] corners of {', '.join(self.views)}")
        what = " and ".join(parts) if parts else "nothing the set-up file still has (its views changed)"
        return (f"{self.path} overrides {what}, saved by the panel or `cuberobot calibrate`; "
                f"delete it to undo (rm {self.path})")


def apply_settings(cfg: Config, directory: Path | None = None) -> Config:
    """``cfg`` with its settings file's profile and view corners, if it has
    one; a UserError naming the file and line when the file is malformed."""
    return settings_in_force(cfg, directory)[0]


def settings_in_force(cfg: Config, directory: Path | None = None) -> tuple[Config, Override | None]:
    """:func:`apply_settings`, and the :class:`Override` it applied (None
    when the set-up file has no settings file)."""
    if cfg.path is None:
        return cfg, None
    path = settings_path(cfg.path, directory)
    if not path.is_file():
        return cfg, None
    profile, port, views = _read(path, cfg)
    if port is not None and is_gpio_port(cfg.rig.port):
        log.warning("%s: port %r is not used: the set-up file drives the rig from this computer's own "
                    "pins (%s)", path, port, cfg.rig.port)
        port = None
    by_name = {v.name: v for v in views}
    kept = []
    for v in cfg.views:
        new = by_name.pop(v.name, None)
        if new is not None and (new.camera != v.camera or sorted(f.face for f in new.faces)
                                != sorted(f.face for f in v.faces) or new.hand_held != v.hand_held):
            log.warning("%s: view %r no longer matches the set-up file's (camera or faces changed): its "
                        "corners are not used", path, v.name)
            new = None
        kept.append(new or v)
    for name in by_name:
        log.warning("%s: the set-up file has no view %r: its corners are not used", path, name)
    used = [v.name for v, old in zip(kept, cfg.views, strict=True) if v is not old]
    log.info("the settings in %s: profile %s; the corners of %s%s", path, profile or "(the set-up file's)",
             ", ".join(used) or "no view", f"; port {port}" if port else "")
    override = Override(path, Path(cfg.path), profile or None, tuple(used), port or None, cfg.rig.port)
    rig = replace(cfg.rig, port=port) if port else cfg.rig
    return replace(cfg, rig=rig, views=kept, profile=profile if profile else cfg.profile), override


def saved_port(cfg: Config, directory: Path | None = None) -> tuple[Path | None, str | None]:
    """The settings file for ``cfg``'s set-up file and the port it keeps
    (None when it keeps none, or the configuration was read from no file);
    a UserError when the file is malformed, as for every command."""
    if cfg.path is None:
        return None, None
    path = settings_path(cfg.path, directory)
    if not path.is_file():
        return path, None
    return path, _read(path, cfg)[1]


def _read(path: Path, cfg: Config) -> tuple[str | None, str | None, list[ViewSpec]]:
    """The file's profile, port and views; a fault in it names the file and the
    line, and says that deleting the file undoes the panel's settings (a
    command refusing a file the person never wrote must say how to get
    past it)."""
    name = str(path)
    try:
        text = decode_text(read_limited(path, name, MAX_SETTINGS_BYTES, "cuberobot's settings (TOML)"), name)
        check_toml_shape(text, name)
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError, ValueError) as e:
            raise UserError(f"{name}: not valid TOML: {e}") from None
        top = _Table(data, "", name)
        top.maybe_text("setup")  # what it is for, as a person reading it sees
        profile = top.maybe_text("profile")
        port = top.maybe_text("port")
        if port is not None and (not port.strip() or len(port) > MAX_PORT_CHARS or is_gpio_port(port)):
            top.fail("port", f"expected the serial port chosen on the panel (e.g. /dev/ttyACM0, at most "
                     f"{MAX_PORT_CHARS} characters), not {port[:40]!r}")
        views = [_read_view(t, list(cfg.cameras)) for t in top.array("view", MAX_VIEWS)]
        top.done()
    except UserError as e:
        raise UserError(f"{e} (the settings the panel or `cuberobot calibrate` saved for {cfg.path}: "
                        "mend the line, or delete the file to undo them)") from None
    return profile, port, views


def save_settings(cfg: Config, *, views: list[ViewSpec] | None = None, profile: str | None = None,
                  port: str | None = None, directory: Path | None = None) -> Path:
    """Write the settings for ``cfg``'s set-up file: ``views`` (their
    corners), ``profile`` and ``port`` replace what it held, the rest is kept; the
    file's path. The file is written whole and then renamed into place, so
    a command reading it never sees half of it."""
    from vision.geometry import geometry_toml  # lazy: loads OpenCV

    if cfg.path is None:
        raise UserError("these settings belong to a set-up file, and this configuration was read from none")
    path = settings_path(cfg.path, directory)
    old_profile: str | None = None
    old_port: str | None = None
    old_views: list[ViewSpec] = []
    if path.is_file():
        try:
            old_profile, old_port, old_views = _read(path, cfg)
        except UserError as e:
            log.warning("%s; it is written afresh", e)
    if views is not None:
        names = {v.name for v in views}
        views = [v for v in old_views if v.name not in names] + list(views)
    else:
        views = old_views
    profile = profile if profile is not None else old_profile
    port = port if port is not None else old_port
    setup = str(Path(cfg.path).expanduser().resolve())
    lines = [f"# cuberobot's settings for the set-up file {setup},",
             "# written by the panel (`cuberobot serve`) or `cuberobot calibrate`. They override that file's",
             "# [rig] port, [vision] profile and [[view]] corners for the panel and for every command",
             "# that reads it (scan, start, calibrate); `cuberobot config check` names this file.",
             "# Delete it to undo them.",
             f"setup = {_string(setup)}"]
    if port:
        lines.append(f"port = {_string(port)}")
    if profile:
        lines.append(f"profile = {_string(profile)}")
    text = "\n".join(lines) + "\n\n" + geometry_toml(views)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        raise UserError(f"cannot save the settings to {path}: {e.strerror or e}") from None
    return path


def _string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; no surrogates reach here)."""
    return json.dumps(text, ensure_ascii=False)
