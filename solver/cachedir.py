"""Where the solver keeps what it builds once (its tables, and numba's compiled
code): a module of its own, light enough for a command's start-up to ask
without loading the tables' machinery."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    """``$CUBEROBOT_CACHE`` if set, else the user's cache directory for
    cuberobot as :mod:`platformdirs` finds it: ``$XDG_CACHE_HOME/cuberobot``
    or ``~/.cache/cuberobot`` on Linux, ``~/Library/Caches/cuberobot`` on
    macOS, ``%LOCALAPPDATA%\\cuberobot\\Cache`` on Windows."""
    env = os.environ.get("CUBEROBOT_CACHE")
    if env:
        return Path(env).expanduser()
    return platformdirs.user_cache_path("cuberobot", appauthor=False)
