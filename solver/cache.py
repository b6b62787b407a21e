"""Table files in the user's cache directory.

The pruning tables take tens of seconds to compute and tens of megabytes to
hold, so they are computed once and then memory-mapped by every later
process. A file holds a header (format version, array names, dtypes, shapes
and a CRC-32 of the data) followed by the raw arrays. It is written to a
temporary file in the same directory and renamed into place, so a reader sees
either no file or a complete one; a file that is short, has a bad checksum or
an older version is treated as missing and rebuilt. A lock file makes a second
process wait for the first one's build instead of repeating it; where locking
is unavailable the atomic rename alone keeps the file whole.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import platformdirs

log = logging.getLogger(__name__)

MAGIC = b"CUBEROBOT-TABLES"
_ALIGN = 64


def cache_dir() -> Path:
    """``$CUBEROBOT_CACHE`` if set, else the user's cache directory for
    cuberobot as :mod:`platformdirs` finds it: ``$XDG_CACHE_HOME/cuberobot``
    or ``~/.cache/cuberobot`` on Linux, ``~/Library/Caches/cuberobot`` on
    macOS, ``%LOCALAPPDATA%\\cuberobot\\Cache`` on Windows."""
    env = os.environ.get("CUBEROBOT_CACHE")
    if env:
        return Path(env).expanduser()
    return platformdirs.user_cache_path("cuberobot", appauthor=False)


def _crc_file(path: Path, start: int, size: int) -> int:
    """CRC-32 of a stretch of a file, read in chunks: unlike a memory map this
    leaves nothing resident in the process, so checking a file costs time but
    no memory."""
    crc = 0
    with open(path, "rb") as f:
        f.seek(start)
        left = size
        while left > 0:
            chunk = f.read(min(left, 1 << 22))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    return crc


def write_tables(path: Path, version: int, arrays: dict[str, np.ndarray]) -> None:
    """Write atomically: temporary file in the same directory, then rename.
    Arrays are streamed out one by one (no second copy of the data in memory);
    the header with the checksum goes in last, at the front."""
    entries = []
    offset = 0
    for name, arr in arrays.items():
        entries.append({"name": name, "dtype": arr.dtype.str, "shape": list(arr.shape), "offset": offset})
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    header_room = 1 << 16
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            crc = 0
            f.seek(header_room)
            for arr in arrays.values():
                arr = np.ascontiguousarray(arr)
                view = arr.reshape(-1).view(np.uint8).data
                for k in range(0, len(view), 1 << 22):
                    chunk = view[k:k + (1 << 22)]
                    crc = zlib.crc32(chunk, crc)
                    f.write(chunk)
                pad = -arr.nbytes % _ALIGN
                crc = zlib.crc32(b"\0" * pad, crc)
                f.write(b"\0" * pad)
            header = json.dumps({"version": version, "arrays": entries, "size": offset,
                                 "crc32": crc, "start": header_room}).encode()
            head = MAGIC + struct.pack("<Q", len(header)) + header
            if len(head) > header_room:
                raise ValueError("table header too large")
            f.seek(0)
            f.write(head + b"\0" * (header_room - len(head)))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a cache is fine to share read-only
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_tables(path: Path, version: int) -> dict[str, np.ndarray] | None:
    """The arrays, memory-mapped read-only, or None if the file is missing,
    truncated, corrupt or of another version."""
    try:
        with open(path, "rb") as f:
            magic = f.read(len(MAGIC))
            if magic != MAGIC:
                return None
            (n,) = struct.unpack("<Q", f.read(8))
            if n > 1 << 16:
                return None
            header = json.loads(f.read(n))
        if header.get("version") != version:
            log.info("%s: table version %s, want %s", path, header.get("version"), version)
            return None
        start = int(header["start"])
        size = int(header["size"])
        if os.path.getsize(path) != start + size:
            log.info("%s: wrong size", path)
            return None
        if _crc_file(path, start, size) != header["crc32"]:
            log.info("%s: checksum mismatch", path)
            return None
        raw = np.memmap(path, dtype=np.uint8, mode="r", offset=start, shape=(size,))
        out = {}
        for e in header["arrays"]:
            dt = np.dtype(e["dtype"])
            count = int(np.prod(e["shape"])) if e["shape"] else 1
            a = np.frombuffer(raw, dtype=dt, count=count, offset=int(e["offset"]))
            out[e["name"]] = a.reshape(e["shape"])
        return out
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None


@contextlib.contextmanager
def _lock(path: Path, waiting: Callable[[], None]) -> Iterator[None]:
    """Hold the lock file of ``path``; ``waiting`` is called first if another
    process holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: rely on the atomic rename
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def load_or_build(name: str, version: int, build: Callable[[], dict[str, np.ndarray]],
                  progress: Callable[[str], None] | None = None) -> dict[str, np.ndarray]:
    """Load ``name`` from the cache directory, building and storing it first
    if it is missing or damaged. ``progress`` hears, as one line each, about
    waiting for another process's build and about a cache directory that
    cannot be used (``build`` reports on its own work)."""
    path = cache_dir() / name
    tables = read_tables(path, version)
    if tables is not None:
        return tables

    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    try:
        with _lock(path, lambda: say(f"waiting for another process to finish building {path}")):
            tables = read_tables(path, version)  # another process may have built it meanwhile
            if tables is not None:
                return tables
            log.info("building %s (first use)", path)
            arrays = build()
            try:
                write_tables(path, version, arrays)
            except OSError as e:
                log.warning("cannot store %s (%s); keeping tables in memory", path, e)
                say(f"cannot store {path} ({e}): the tables are kept in memory and built again next time")
                return arrays
    except OSError as e:  # unwritable cache directory: build in memory
        log.warning("cache directory unusable (%s); building tables in memory", e)
        say(f"cache directory unusable ({e}): building the tables in memory, again next time")
        return build()
    tables = read_tables(path, version)
    return tables if tables is not None else arrays
