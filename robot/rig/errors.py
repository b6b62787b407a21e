"""Errors that mean the user (or their set-up) has to change something.

The CLI turns these into a message on stderr and an exit code, never a
traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the command line, a file, or the set-up. Exit code 2."""

    exit_code = 2


class RigError(Exception):
    """The rig or a camera failed at run time (missing, not answering,
    emergency stop). Exit code 1: the command was fine, the world was not."""

    exit_code = 1
