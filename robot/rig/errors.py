"""Errors that mean the user (or their set-up) has to change something.

The CLI turns these into a message on stderr and an exit code, never a
traceback.
"""

from __future__ import annotations

import errno


class UserError(Exception):
    """A mistake in the command line, a file, or the set-up. Exit code 2."""

    exit_code = 2


class RigError(Exception):
    """The rig or a camera failed at run time (missing, not answering,
    emergency stop). Exit code 1: the command was fine, the world was not."""

    exit_code = 1


_STORAGE_ADVICE = {
    errno.ENOSPC: "the disk is full: free some space",
    errno.EDQUOT: "the disk quota is used up: free some space",
    errno.EROFS: "the folder is read-only: give a writable --state-dir (or --out)",
    errno.EACCES: "no permission: give a folder you can write (--state-dir or --out)",
    errno.EPERM: "no permission: give a folder you can write (--state-dir or --out)",
    errno.EFBIG: "the file is too large for this file system",
}


def storage_advice(e: OSError) -> str | None:
    """What the user can do about a file that could not be written, or
    ``None`` when the error is not one of storage (then it is not theirs to
    fix, and whoever caught it reports it as it is). One table, so that the
    journal and the command line give the same advice in the same words."""
    return _STORAGE_ADVICE.get(e.errno or 0)
