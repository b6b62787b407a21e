"""The first check of any cube string, whatever its size: the right length,
printable symbols, six of them, each on N*N stickers.

Shared by the 2x2 validation and the NxN checks so both explain a bad string
the same way, naming stickers as the README's net does (``F3``)."""

from __future__ import annotations

from collections import Counter

from .errors import CubeError

FACES = "URFDLB"
MAX_NAMED = 12
"""At most this many sticker names in one message; every position is still
returned for a caller to mark."""


def sticker_name(index: int, n: int) -> str:
    """String index -> sticker name: face letter and number in the face, row
    by row from 1 (``F5`` is a 3x3's front centre)."""
    return f"{FACES[index // (n * n)]}{index % (n * n) + 1}"


def _names(positions: list[int], n: int) -> str:
    return ", ".join(sticker_name(p, n) for p in positions[:MAX_NAMED])


def check_stickers(facelets: str, n: int) -> str:
    """``facelets`` stripped, once it has 6*n*n printable symbols, six
    different ones, each n*n times; CubeError (kind length, symbols or count,
    with positions) otherwise."""
    size = 6 * n * n
    if not isinstance(facelets, str):
        raise CubeError("length", f"a {n}x{n} cube is a string of {size} characters,"
                        f" not {type(facelets).__name__}")
    s = facelets.strip()
    if len(s) != size:
        raise CubeError("length", f"a {n}x{n} cube string has {size} characters, this one has {len(s)}")
    bad = [i for i, ch in enumerate(s) if ch.isspace() or not ch.isprintable()]
    if bad:
        raise CubeError("symbols", f"blank or unprintable character at {_names(bad, n)}", bad)
    counts = Counter(s)
    if len(counts) > 6:
        rare = sorted(counts, key=lambda ch: (counts[ch], s.index(ch)))[:len(counts) - 6]
        at = [i for i, ch in enumerate(s) if ch in rare]
        raise CubeError("symbols", f"{len(counts)} different symbols, but a cube has 6;"
                        f" the rarest, {''.join(rare)!r}, at {_names(at, n)}", at)
    wrong = [ch for ch in counts if counts[ch] != n * n]
    if wrong or len(counts) < 6:
        detail = ", ".join(f"{ch!r} {counts[ch]} times" for ch in wrong)
        raise CubeError("count", f"each of 6 colours must appear {n * n} times, but {detail}",
                        [i for i, ch in enumerate(s) if ch in wrong])
    return s
