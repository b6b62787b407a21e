"""The set-up file as a run uses it: the TOML configuration read and checked
(:mod:`.config`) with the settings made on the panel for it on top (the
sticker grid, the colour profile: :mod:`.settings`).

It sits above both because the settings are read with the configuration's
own readers: :mod:`.config` knows nothing of settings, so the two layers
read top-down."""

from __future__ import annotations

import os
from pathlib import Path

from .config import MAX_CONFIG_BYTES, Config, decode_text, default_config_path, parse_config, read_limited
from .settings import apply_settings


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
