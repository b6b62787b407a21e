"""One module per group of `cuberobot` subcommands.

Each module defines ``register(sub: Registry)``, which adds its subcommands and
sets ``func`` (taking the parsed arguments, returning an exit code) on each.
The CLI discovers the modules here, so adding a command touches no other file.
Modules import only the standard library, numpy and the cube model at their
top, so that every command starts quickly; the rest loads in the handlers.
"""

from __future__ import annotations

import argparse
from typing import Any


class Registry:
    """Where commands register: each parser gets the options every command
    shares (``common``: -v, -q)."""

    def __init__(self, action: Any, common: argparse.ArgumentParser):
        self._action = action
        self.common = common

    def add_parser(self, name: str, **kw: Any) -> argparse.ArgumentParser:
        kw["parents"] = [*kw.get("parents", []), self.common]
        parser: argparse.ArgumentParser = self._action.add_parser(name, **kw)
        return parser
