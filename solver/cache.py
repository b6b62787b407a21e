"""Table files in the user's cache directory.

The pruning tables take tens of seconds to compute and tens of megabytes to
hold, so they are computed once and then memory-mapped by every later
process. A file holds a header (format version, array names, dtypes, shapes
and a SHA-256 of the data) followed by the raw arrays. It is written to a
temporary file in the same directory and renamed into place, so a reader sees
either no file or a complete one; a file that is short, has a bad hash or
an older version is treated as missing and rebuilt. A hash proves only that
the file holds what was written, so the caller can also hand in a probe that
checks a few entries against what they must be (:mod:`solver.tables` checks
the distances against the move tables): a file that a faulty build or a
hand-made edit filled with wrong numbers under a matching hash is rebuilt
too, with a line saying why. The whole hash is checked once per version of
a file: a stamp beside it (``NAME.verified``) records the file's inode,
size and times at that check, and a later process that finds them unchanged
skips the hashing (a tenth of a second for every quick command). A lock file makes a second
process wait for the first one's build instead of repeating it; where locking
is unavailable the atomic rename alone keeps the file whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from .cachedir import cache_dir

log = logging.getLogger(__name__)

MAGIC = b"CUBEROBOT-TABLES"
_ALIGN = 64


Probe = Callable[[dict[str, np.ndarray]], str | None]
"""Checks a file's arrays: what is wrong with them in a few words, or None."""


def _hash_file(path: Path, start: int, size: int) -> str:
    """SHA-256 of a stretch of a file, read in chunks: unlike a memory map this
    leaves nothing resident in the process, so checking a file costs time
    (about 1 ms a megabyte) but no memory."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(start)
        left = size
        while left > 0:
            chunk = f.read(min(left, 1 << 22))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _identity(path: Path, sha256: str) -> str:
    """What must not have changed since a file's hash was checked: its
    device, inode, size, modification and change times (a write in place, a
    copy or a rename over it changes one of them) and the hash it claims."""
    st = os.stat(path)
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {sha256}"


def _verified_before(path: Path, sha256: str) -> bool:
    """True when this very file (see :func:`_identity`) had its whole hash
    checked by an earlier process. Hashing the 100 MB of tables costs every
    quick command over a tenth of a second; the stamp beside the file spares
    that while the file is untouched, and the probes still check entries."""
    try:
        return _stamp_path(path).read_text() == _identity(path, sha256)
    except (OSError, UnicodeDecodeError):
        return False


def _note_verified(path: Path, sha256: str) -> None:
    """Leave the stamp of :func:`_verified_before` (not where the cache is
    read-only: the hash is then checked each time, as before)."""
    try:
        stamp = _stamp_path(path)
        tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
        tmp.write_text(_identity(path, sha256))
        os.replace(tmp, stamp)
    except OSError:
        pass


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
            digest = hashlib.sha256()
            f.seek(header_room)
            for arr in arrays.values():
                arr = np.ascontiguousarray(arr)
                view = arr.reshape(-1).view(np.uint8).data
                for k in range(0, len(view), 1 << 22):
                    chunk = view[k:k + (1 << 22)]
                    digest.update(chunk)
                    f.write(chunk)
                pad = -arr.nbytes % _ALIGN
                digest.update(b"\0" * pad)
                f.write(b"\0" * pad)
            header = json.dumps({"version": version, "arrays": entries, "size": offset,
                                 "sha256": digest.hexdigest(), "start": header_room}).encode()
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
    return inspect_tables(path, version)[0]


MISSING = "missing"
"""What :func:`inspect_tables` says of a file that is not there."""


def inspect_tables(path: Path, version: int,
                   probe: Probe | None = None) -> tuple[dict[str, np.ndarray] | None, str]:
    """(the arrays, memory-mapped read-only, "") or (None, what is wrong with
    the file): :data:`MISSING`, another version, a wrong size, a hash that
    does not match, an unreadable header, or what ``probe`` found."""
    try:
        with open(path, "rb") as f:
            magic = f.read(len(MAGIC))
            if magic != MAGIC:
                return None, "not a table file"
            (n,) = struct.unpack("<Q", f.read(8))
            if n > 1 << 16:
                return None, "a damaged header"
            header = json.loads(f.read(n))
        if header.get("version") != version:
            log.info("%s: table version %s, want %s", path, header.get("version"), version)
            return None, f"table format {header.get('version')}, this version uses {version}"
        start = int(header["start"])
        size = int(header["size"])
        if os.path.getsize(path) != start + size:
            return None, "the wrong size (cut short?)"
        if not _verified_before(path, header["sha256"]):
            if _hash_file(path, start, size) != header["sha256"]:
                return None, "its SHA-256 hash does not match its contents"
            _note_verified(path, header["sha256"])
        raw = np.memmap(path, dtype=np.uint8, mode="r", offset=start, shape=(size,))
        out = {}
        for e in header["arrays"]:
            dt = np.dtype(e["dtype"])
            count = int(np.prod(e["shape"])) if e["shape"] else 1
            a = np.frombuffer(raw, dtype=dt, count=count, offset=int(e["offset"]))
            out[e["name"]] = a.reshape(e["shape"])
    except FileNotFoundError:
        return None, MISSING
    except (OSError, ValueError, KeyError, TypeError, struct.error) as e:
        return None, f"unreadable ({type(e).__name__})"
    wrong = probe(out) if probe is not None else None
    if wrong is not None:
        return None, wrong
    return out, ""


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
                  progress: Callable[[str], None] | None = None,
                  probe: Probe | None = None) -> dict[str, np.ndarray]:
    """Load ``name`` from the cache directory, building and storing it first
    if it is missing or damaged (its hash or ``probe`` fails). ``progress``
    hears, as one line each, why a damaged file is rebuilt, about waiting
    for another process's build and about a cache directory that cannot be
    used (``build`` reports on its own work); without ``progress`` a damaged
    file is logged as a warning."""
    path = cache_dir() / name

    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    tables, wrong = inspect_tables(path, version, probe)
    if tables is not None:
        return tables
    if wrong != MISSING and not wrong.startswith("table format"):
        line = f"the solver's table file {path} is damaged ({wrong}): building it again"
        if progress is not None:
            progress(line)
        else:
            log.warning("%s", line)

    try:
        with _lock(path, lambda: say(f"waiting for another process to finish building {path}")):
            tables = inspect_tables(path, version, probe)[0]  # another process may have built it meanwhile
            if tables is not None:
                return tables
            log.info("building %s (first use)", path)
            arrays = build()
            wrong_built = probe(arrays) if probe is not None else None
            if wrong_built is not None:
                raise RuntimeError(f"the solver built faulty tables for {path} ({wrong_built})")
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
