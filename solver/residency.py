"""Giving back the memory of library code that is no longer run.

Numba needs LLVM (``libllvmlite.so``, about 180 MB on disk) to load the
search's cached machine code; loading touches some 70 MB of it, which then
stays in the process's resident set although solving never runs it again.
Those pages are clean, read-only file pages: dropping them from this
process (``madvise(MADV_DONTNEED)``) loses nothing, since the kernel reads
them back from the page cache if they are ever needed. Mappings that hold
private modified pages (relocated data) are left alone, because dropping
those would lose the modifications.

The same goes for the table files' pages that the load-time probes touch:
they are dropped again so that they do not sit beside LLVM's at the
process's peak (the search maps the tables in after LLVM is released).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import re
import sys
from collections.abc import Callable

import numpy as np

MADV_DONTNEED = 4
_HEAD = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")


def _mappings(path_part: str) -> list[tuple[int, int]]:
    """(start, end) of the read-only mappings of files whose path contains
    ``path_part`` and that hold no private modified pages."""
    out = []
    cur = None
    with open("/proc/self/smaps") as f:
        for line in f:
            m = _HEAD.match(line)
            if m:
                start, end, perms, path = m.groups()
                ok = path_part in path and "w" not in perms and perms.endswith("p")
                cur = (int(start, 16), int(end, 16)) if ok else None
            elif cur is not None and line.startswith("Anonymous:"):
                if int(line.split()[1]) == 0:
                    out.append(cur)
                cur = None
    return out


def release(path_part: str) -> int:
    """Drop the clean resident pages of matching library mappings; bytes of
    address space advised (0 where this is not Linux or not possible)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        spans = _mappings(path_part)
    except OSError:
        return 0
    madvise = _madvise()
    if madvise is None:
        return 0
    done = 0
    for start, end in spans:
        if madvise(start, end - start, MADV_DONTNEED) == 0:
            done += end - start
    return done


def drop(array: np.ndarray) -> int:
    """Drop the resident pages of a read-only memory-mapped array (clean file
    pages: read back from the page cache when next touched); bytes advised.
    Only whole pages inside the array are advised, so nothing next to it is
    lost."""
    if not sys.platform.startswith("linux") or array.flags.writeable or array.nbytes == 0:
        return 0
    page = mmap.PAGESIZE
    start = -(-array.ctypes.data // page) * page
    end = (array.ctypes.data + array.nbytes) // page * page
    if end <= start:
        return 0
    madvise = _madvise()
    if madvise is None:
        return 0
    return end - start if madvise(start, end - start, MADV_DONTNEED) == 0 else 0


@functools.cache
def _madvise() -> Callable[[int, int, int], int] | None:
    """libc's madvise(addr, length, advice), or None when libc cannot be
    loaded. Found once a process, in the symbols the process already has
    (libc is always loaded): ``ctypes.util.find_library`` runs ``ldconfig``
    in a subprocess, which cost a quick command a quarter of a second when
    it was asked for every table."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise  # noqa: B018 - the look-up raises AttributeError where it is missing
    except (OSError, AttributeError):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        except OSError:
            return None
    madvise = libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise
