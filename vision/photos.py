"""Six photos, one per face, to a cube: no clicking, any way up.

Each photo is loaded (bounded in bytes and pixels, JPEGs decoded at a
reduced scale when they are large: 12 megapixels are not needed to see
nine stickers), its sticker grid found (:mod:`vision.grid_finder`) and its
nine stickers sampled (:func:`vision.sample.sample_faces`) in the order the
photo stands. Which way up each face was photographed is then chosen by the
cube itself: of the 4^6 ways to turn the six faces, only the true one
(for almost every cube) gives twenty real pieces. Every arrangement is
scored by how many real pieces it makes from a first, nearest-centre
reading of the colours; the best few are classified properly
(:func:`vision.scanning.classify_measured`), and the first that reads as
sure wins, the README net's own orientation first on ties. When two
arrangements give different cubes that both read as sure, the stickers
where they differ are put in doubt instead of guessed.

The grid finder keeps each photo's next-best grids too. When the best
grids do not read as a sure cube (a steep photo where a side face looked
more like the face, a tiled floor, a window slid by a row), the other
grids are tried one photo at a time, those whose first reading makes the
most real pieces first: a grid that is not the face gives colours that
make no valid cube, so the cube chooses. One sure cube wins; two different
sure cubes put the stickers where they differ in doubt.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from solver.facelets import CORNER_COLORS, CORNER_FACELETS, EDGE_COLORS, EDGE_FACELETS, FACES, position_name

from .classifier import SURE_NATS, Classification, classify, exposure, features
from .errors import VisionError
from .grid_finder import STICKER_REACH, Grid, cut_edges, find_grids
from .sample import robust_colours, warp_face
from .scanning import classify_measured
from .setup import FaceSpec

MAX_PHOTO_BYTES = 64 << 20  # a 50-megapixel JPEG is about 25 MB; a PNG of one can be more
MAX_PHOTO_PIXELS = 64_000_000  # 8000x8000: above every phone camera's ordinary photo mode
MIN_PHOTO_SIDE = 120  # below this nine stickers cannot be told apart
SAMPLE_SIDE = 1000  # large JPEGs are decoded at 1/2, 1/4 or 1/8 while the long side stays above this
MAX_SWAPS = 4  # other grids (one photo's at a time) classified when the photos' best grids do not read sure
CANDIDATES = 8  # arrangements of the faces' turns classified properly, per ranking
RANKINGS = 2  # rankings of the arrangements by the evidence, the second from the best fit of the first
PHOTO_CELL = 32  # warped pixels per sticker when sampling a photo
PHOTO_INNER = 2 * STICKER_REACH  # of each cell (per side) sampled: the grid is fitted to the stickers
# themselves; the finder keeps a grid only when this much of every sticker is inside the picture
PHOTO_CORE = 0.4  # of each cell: the middle, whose glare the rest of the sticker is checked against


class PhotoError(VisionError):
    """A photo the user gave cannot be used (missing, not an image, too big,
    no sticker grid in it). A user mistake: exit status 2."""

    exit_code = 2


@dataclass
class PhotoScan:
    classification: Classification
    samples: np.ndarray  # (54, 3) RGB in facelet order
    rotations: dict[str, int]  # face -> quarter turns clockwise the photo showed it in
    grids: dict[str, Grid]  # face -> the grid found, in the loaded picture's pixels
    images: dict[str, np.ndarray] = field(default_factory=dict)  # face -> the picture as loaded
    scales: dict[str, float] = field(default_factory=dict)  # face -> loaded pixels per original pixel
    alternatives: list[Alternative] = field(default_factory=list)
    """Other valid cubes the photos fit, turned otherwise (see :func:`weigh_turnings`)."""

    @property
    def facelets(self) -> str:
        return self.classification.facelets

    @property
    def ok(self) -> bool:
        return self.classification.ok


ACCEPTED = "JPEG, PNG, WebP or BMP"
"""The formats a photo may come in: those whose size is read from the header
before anything is decoded (see :func:`probe`)."""
MAX_DECODE_BYTES = 160 << 20
"""What decoding one photo may take at once: the decoded picture, or a
progressive JPEG's coefficients. Six photos are decoded one after the other
and kept reduced (:data:`SAMPLE_SIDE`), so this bounds a reading's memory."""
FULL_DECODE = 9
"""Bytes a pixel reading a PNG or a BMP takes at its peak (measured with
OpenCV 5.0 in the server: 6.9 and 8.0, the picture and a copy of it)."""
WEBP_DECODE = 10
"""The same for a WebP (measured: 8.5)."""
COEFFICIENT_OVERHEAD = 1.25
"""A progressive JPEG's peak over its coefficients (measured: 1.17)."""
_REFUSED_KINDS = (
    (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"), (b"II+\x00", "TIFF"), (b"MM\x00+", "TIFF"),
    (b"GIF8", "GIF"), (b"\x00\x00\x00\x0cjP  ", "JPEG 2000"), (b"\xff\x4f\xff\x51", "JPEG 2000"),
    (b"#?RADIANCE", "HDR"), (b"#?RGBE", "HDR"), (b"\x59\xa6\x6a\x95", "Sun raster"),
    (b"v/1\x01", "OpenEXR"),
)
"""Formats OpenCV also decodes but whose size is not checked here: refused
unread (a 9.5 KB TIFF can claim 30000x30000 pixels)."""


@dataclass(frozen=True)
class Probe:
    """What a photo's header says, before decoding: its kind, its size, and
    how many bytes per pixel decoding it takes at full size (0: a JPEG of one
    scan, decoded reduced with no full-size buffer at all)."""

    kind: str
    width: int
    height: int
    bytes_per_pixel: float

    @property
    def max_pixels(self) -> int:
        """The most pixels a photo of this kind may have."""
        if not self.bytes_per_pixel:
            return MAX_PHOTO_PIXELS
        return min(MAX_PHOTO_PIXELS, int(MAX_DECODE_BYTES / self.bytes_per_pixel))


def probe(data: bytes) -> Probe | str:
    """The photo's :class:`Probe`, read from its header alone, or why it
    cannot be read (a sentence): an unknown or refused kind, a damaged
    header. Nothing is decoded, so a small file claiming a gigantic picture
    costs nothing."""
    refused = _refused_kind(data)
    if refused:
        return f"{refused} images are not read here (their size cannot be checked before decoding); " \
               f"give a {ACCEPTED} photo"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return _png(data)
    if data[:3] == b"\xff\xd8\xff":
        return _jpeg(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    if data[:2] == b"BM":
        return _bmp(data)
    return f"not an image this reads; give a {ACCEPTED} photo"


def _refused_kind(data: bytes) -> str:
    """The kind of a picture OpenCV would decode but this refuses, or "".
    Asked first: a file that starts like a BMP or a WebP but also has
    ``ftyp`` where an AVIF has it could be taken for an AVIF by OpenCV."""
    if data[4:8] == b"ftyp":
        return "AVIF or HEIF"
    for magic, kind in _REFUSED_KINDS:
        if data.startswith(magic):
            return kind
    if data[:1] == b"P" and len(data) > 1 and data[1:2] in b"1234567Ff":
        return "PNM or PFM"
    return ""


def _damaged(kind: str) -> str:
    return f"a {kind} whose header is damaged (no size in it); save it again as a {ACCEPTED} photo"


def _png(data: bytes) -> Probe | str:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return _damaged("PNG")
    return Probe("PNG", int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"), FULL_DECODE)


def _jpeg(data: bytes) -> Probe | str:
    """The frame header (SOF) and the first scan (SOS): a progressive JPEG,
    or one whose first scan holds fewer components than the frame, is
    decoded through a coefficient buffer of the whole picture (2 bytes a
    sample, each component at its own sampling) even at a reduced scale; a
    JPEG of one interleaved scan is decoded reduced with nothing of full
    size (0 bytes a pixel)."""
    i, n = 2, len(data)
    frame: tuple[int, int, float, int, bool] | None = None  # see _jpeg_frame
    while i + 4 <= n:
        if data[i] != 0xFF:  # stray bytes between segments: the decoder skips to the next marker too
            i = data.find(b"\xff", i)
            if i < 0:
                break
            continue
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker == 0xD9:
            break
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if frame is not None:
                return _damaged("JPEG")
            frame = _jpeg_frame(data[i + 4:i + 2 + length], progressive=marker in (0xC2, 0xC6, 0xCA, 0xCE))
            if frame is None:
                return _damaged("JPEG")
        if marker == 0xDA:
            if frame is None or i + 5 > n:
                return _damaged("JPEG")
            width, height, coefficients, components, progressive = frame
            whole = progressive or data[i + 4] < components
            return Probe("JPEG", width, height, coefficients * COEFFICIENT_OVERHEAD if whole else 0)
        i += 2 + length
    if frame is None:
        return _damaged("JPEG")
    return Probe("JPEG", frame[0], frame[1], frame[2] * COEFFICIENT_OVERHEAD)  # no scan seen: the worst


def _jpeg_frame(sof: bytes, *, progressive: bool) -> tuple[int, int, float, int, bool] | None:
    """(width, height, coefficient bytes a pixel, components, progressive)
    from a SOF segment's body, or None when it is cut short."""
    if len(sof) < 6:
        return None
    components = sof[5]
    factors = [(sof[7 + 3 * k] >> 4, sof[7 + 3 * k] & 15) for k in range(components) if 8 + 3 * k < len(sof)]
    if not factors or len(factors) < components:
        return None
    hmax, vmax = max(max(h for h, _ in factors), 1), max(max(v for _, v in factors), 1)
    coefficients = 2 * sum(max(h, 1) * max(v, 1) for h, v in factors) / (hmax * vmax)
    width, height = int.from_bytes(sof[3:5], "big"), int.from_bytes(sof[1:3], "big")
    return width, height, coefficients, components, progressive


def _webp(data: bytes) -> Probe | str:
    """The first chunk: VP8X (the canvas, which every frame must fit), VP8
    (a lossy key frame) or VP8L (lossless)."""
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
    elif chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        height = int.from_bytes(data[28:30], "little") & 0x3FFF
    elif chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        width, height = 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    else:
        return _damaged("WebP")
    return Probe("WebP", width, height, WEBP_DECODE)


def _bmp(data: bytes) -> Probe | str:
    if len(data) < 26:
        return _damaged("BMP")
    if int.from_bytes(data[14:18], "little") == 12:  # the old OS/2 header: 16-bit sizes
        return Probe("BMP", int.from_bytes(data[18:20], "little"), int.from_bytes(data[20:22], "little"),
                     FULL_DECODE)
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = int.from_bytes(data[22:26], "little", signed=True)  # negative: stored top-down
    return Probe("BMP", abs(width), abs(height), FULL_DECODE)


def check_size(found: Probe, label: str) -> None:
    """Refuse (:class:`PhotoError`) a photo too big to decode, from its header."""
    if found.width <= 0 or found.height <= 0:
        raise PhotoError(f"{label}: {_damaged(found.kind)}")
    limit = found.max_pixels
    if found.width * found.height > limit:
        how = "" if limit == MAX_PHOTO_PIXELS else f" for a {found.kind} like this one"
        raise PhotoError(f"{label}: {found.width}x{found.height} pixels is too big (at most "
                         f"{limit / 1e6:.0f} megapixels{how}); resize it")


def _read_bytes(name: str, label: str) -> bytes:
    """The bytes of a photo file, checked before reading: opened without
    waiting (O_NONBLOCK: a FIFO would otherwise wait for a writer, for
    ever), then refused unless it is a regular file of at most
    :data:`MAX_PHOTO_BYTES`; read up to that bound whatever its size said."""
    from .limits import read_up_to

    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise PhotoError(f"{label}: file not found") from None
    except IsADirectoryError:
        raise PhotoError(f"{label}: is a folder, not a photo") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL in the name
        raise PhotoError(f"{label}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise PhotoError(f"{label}: is a folder, not a photo")
        if not stat.S_ISREG(st.st_mode):
            what = "a FIFO (a named pipe)" if stat.S_ISFIFO(st.st_mode) else "a device or a socket"
            raise PhotoError(f"{label}: is {what}, not a regular file; give a {ACCEPTED} photo")
        if st.st_size > MAX_PHOTO_BYTES:
            raise PhotoError(f"{label}: {st.st_size} bytes is too big for a photo"
                             f" (at most {MAX_PHOTO_BYTES}); save it smaller")
        data = read_up_to(fd, MAX_PHOTO_BYTES)
    except OSError as e:
        raise PhotoError(f"{label}: cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_PHOTO_BYTES:  # it grew while being read
        raise PhotoError(f"{label}: more than {MAX_PHOTO_BYTES} bytes is too big for a photo; save it "
                         "smaller")
    return data


def _reduction(found: Probe) -> int:
    """1, 2, 4 or 8: the largest that keeps the long side above :data:`SAMPLE_SIDE`."""
    for s in (8, 4, 2):
        if max(found.width, found.height) / s >= SAMPLE_SIDE:
            return s
    return 1


def load_photo(path: str | os.PathLike, label: str) -> tuple[np.ndarray, float]:
    """A photo as BGR and the scale it was read at (1, 1/2, 1/4 or 1/8).
    ``label`` names it in errors ("U photo x.jpg"). Refuses what is not a
    regular file, over :data:`MAX_PHOTO_BYTES` bytes, not of an accepted
    kind, or too big to decode (:func:`probe`, :func:`check_size`): all
    from the header, before decoding. A JPEG is decoded at the reduced
    scale directly; any other kind is decoded whole and then reduced, so
    six photos of any kind are kept at the same small size."""
    data = _read_bytes(os.fspath(path), label)
    found = probe(data)
    if isinstance(found, str):
        raise PhotoError(f"{label}: {found}")
    check_size(found, label)
    reduce = _reduction(found)
    flag = cv2.IMREAD_COLOR
    if found.kind == "JPEG":
        flag = {8: cv2.IMREAD_REDUCED_COLOR_8, 4: cv2.IMREAD_REDUCED_COLOR_4,
                2: cv2.IMREAD_REDUCED_COLOR_2, 1: cv2.IMREAD_COLOR}[reduce]
    try:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), flag)
    except cv2.error:
        img = None
    del data
    if img is None:
        raise PhotoError(f"{label}: not an image OpenCV can read (a damaged {found.kind}?); give a "
                         f"{ACCEPTED} photo")
    if found.kind != "JPEG" and reduce > 1:
        h, w = img.shape[:2]
        img = cv2.resize(img, (max(1, round(w / reduce)), max(1, round(h / reduce))),
                         interpolation=cv2.INTER_AREA)
    if img.shape[0] * img.shape[1] * reduce * reduce > 1.1 * found.max_pixels + 64 * reduce * reduce:
        raise PhotoError(f"{label}: its picture is larger than its header says; save it again")
    if min(img.shape[:2]) * reduce < MIN_PHOTO_SIDE:
        raise PhotoError(f"{label}: {img.shape[1]}x{img.shape[0]} pixels is too small to read stickers from"
                         f" (at least {MIN_PHOTO_SIDE} on each side)")
    return img, 1.0 / reduce


def _net_maps() -> np.ndarray:
    """(4, 9): for a photo showing a face turned r quarter turns clockwise,
    which of its nine grid cells (row-major as the photo stands) holds net
    sticker i."""
    cells = np.arange(9).reshape(3, 3)
    return np.array([np.rot90(cells, r).ravel() for r in range(4)])


_MAPS = _net_maps()
_COMBOS = np.array(list(itertools.product(range(4), repeat=6)))  # (4096, 6) turns of U R F D L B
_COMBOS = _COMBOS[np.lexsort((np.minimum(_COMBOS, 4 - _COMBOS).sum(axis=1),
                              (_COMBOS != 0).sum(axis=1)))]  # the net's orientation first, then fewest turns


def _piece_codes() -> tuple[np.ndarray, np.ndarray]:
    f = {c: k for k, c in enumerate(FACES)}
    corners = [f[a] * 36 + f[b] * 6 + f[c] for a, b, c in
               (tuple(cc[(i + t) % 3] for i in range(3)) for cc in CORNER_COLORS for t in range(3))]
    edges = [f[a] * 6 + f[b] for a, b in (e for ee in EDGE_COLORS for e in (ee, ee[::-1]))]
    return np.array(corners), np.array(edges)


_CORNER_CODES, _EDGE_CODES = _piece_codes()
_ARRANGE = (_MAPS[_COMBOS] + 9 * np.arange(6)[:, None]).reshape(len(_COMBOS), 54)
"""(4096, 54): for each way the faces may be turned, the photo-order sticker at each facelet."""
_CENTRES = tuple(9 * k + 4 for k in range(6))
_CORNER_COLOURS = (_CORNER_CODES[:, None] // np.array([36, 6, 1])) % 6  # (24, 3): a real corner's colours
_EDGE_COLOURS = (_EDGE_CODES[:, None] // np.array([6, 1])) % 6  # (24, 2)


def arrange(shown: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """Per-face values in photo order (54, ...) -> facelet order, for the
    faces photographed turned ``rotations`` (6,) quarter turns clockwise."""
    idx = np.concatenate([9 * k + _MAPS[r] for k, r in enumerate(rotations)])
    return shown[idx]


def rank_rotations(shown_rgb: np.ndarray) -> list[np.ndarray]:
    """The ways the six faces may have been turned, best first: by how many
    of the 20 pieces the first reading of the colours makes real pieces,
    then fewest turned faces (the README net's orientation first)."""
    score = _piece_scores(shown_rgb)
    order = np.argsort(-score, kind="stable")  # stable: keeps the net-first order on ties
    best = score[order[0]]
    return [_COMBOS[i] for i in order if score[i] >= best - 2]


def _piece_scores(shown_rgb: np.ndarray) -> np.ndarray:
    """For each of the 4096 ways the faces may be turned, how many of the 20
    pieces a first, nearest-centre reading of the colours makes real."""
    x = features(shown_rgb, exposure(shown_rgb))
    centres = x[[9 * k + 4 for k in range(6)]]
    labels = np.argmin(((x[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
    per_face = [labels[9 * k + _MAPS] for k in range(6)]  # each (4, 9)
    lab = np.concatenate([per_face[k][_COMBOS[:, k]] for k in range(6)], axis=1)  # (4096, 54)
    cf = np.array(CORNER_FACELETS)
    ef = np.array(EDGE_FACELETS)
    corner = lab[:, cf[:, 0]] * 36 + lab[:, cf[:, 1]] * 6 + lab[:, cf[:, 2]]
    edge = lab[:, ef[:, 0]] * 6 + lab[:, ef[:, 1]]
    score: np.ndarray = np.isin(corner, _CORNER_CODES).sum(axis=1) + np.isin(edge, _EDGE_CODES).sum(axis=1)
    return score


def rank_by_evidence(evidence: np.ndarray) -> np.ndarray:
    """(4096, 6): the ways the faces may be turned, best first, by what the
    camera's evidence (photo order, (54, 6) nats) costs the cheapest real
    piece in every place, each place on its own (a piece may be used twice:
    the proper reading is left to the classifier)."""
    ev = evidence[_ARRANGE]  # (4096, 54, 6)
    cf, ef = np.array(CORNER_FACELETS), np.array(EDGE_FACELETS)
    corners = sum(ev[:, cf[:, i][:, None], _CORNER_COLOURS[:, i][None]] for i in range(3))
    edges = sum(ev[:, ef[:, i][:, None], _EDGE_COLOURS[:, i][None]] for i in range(2))
    cost = corners.min(axis=2).sum(axis=1) + edges.min(axis=2).sum(axis=1)
    return _COMBOS[np.argsort(cost, kind="stable")]


NET_TOP = {"U": "B", "R": "U", "F": "U", "D": "F", "L": "U", "B": "U"}
"""The face beside each face's top edge as the README's net draws it: what
a person looks for in a photo to say which way up it was taken."""
PHOTO_EDGES = ("top", "right", "bottom", "left")
"""Where a face's net top edge lies in a photo that shows it turned 0, 1, 2
or 3 quarter turns clockwise."""
MAX_ALTERNATIVES = 256
"""Other cubes kept when the photos fit several (a cube one or two turns
from solved fits 2 to 8, a half checkerboard 4, the superflip 128): every
one a person could mean, within a bound (the 4,096 turnings could make as
many cubes in principle)."""


@dataclass(frozen=True)
class Alternative:
    """Another valid cube the same readings of the stickers make when some
    photos are taken to stand another way up: the photos alone cannot tell
    it from the cube chosen."""

    facelets: str
    rotations: dict[str, int]
    """Face -> quarter turns clockwise the photo would show it in (as
    :attr:`PhotoScan.rotations`)."""
    turned: dict[str, int]
    """The photos that stand otherwise than in the reading chosen: face ->
    quarter turns clockwise more."""
    differ: list[int]
    """The stickers (facelet indices) where this cube differs from the one chosen."""

    def how(self) -> str:
        """Which way up the photos would stand, in words a person checks
        against the photos: "the F photo with the U side at its right"."""
        return ", ".join(f"the {f} photo with the {NET_TOP[f]} side at its {PHOTO_EDGES[self.rotations[f]]}"
                         for f in FACES if f in self.turned)

    def to_dict(self) -> dict:
        return {"facelets": self.facelets, "rotations": dict(self.rotations), "turned": dict(self.turned),
                "how": self.how(), "differ": list(self.differ),
                "differ_names": [position_name(i) for i in self.differ]}


def _piece_tables() -> tuple[np.ndarray, np.ndarray]:
    """Colour code (a*36+b*6+c, a*6+b) -> which corner or edge it is, -1 for
    colours no piece has: a turning's pieces are each read by one lookup."""
    corner = np.full(216, -1)
    corner[_CORNER_CODES] = np.arange(len(_CORNER_CODES)) // 3
    edge = np.full(36, -1)
    edge[_EDGE_CODES] = np.arange(len(_EDGE_CODES)) // 2
    return corner, edge


_CORNER_PIECE, _EDGE_PIECE = _piece_tables()


def valid_turnings(labels: np.ndarray) -> dict[str, list[int]]:
    """Every valid cube the six faces' labels (photo order, (54,) face
    indices) make, whichever way up each photo stands: facelets -> the
    indices into the 4,096 turnings (:data:`_COMBOS`) that give it. Labels,
    not pixels: all turnings are tried at once in arrays (a millisecond or
    two), and only those whose twenty pieces are real and each there once
    are checked for twist, flip and parity."""
    from solver import CubeError
    from solver.validate import parse_facelets

    lab = np.asarray(labels, int)[_ARRANGE]  # (4096, 54)
    cf, ef = np.array(CORNER_FACELETS), np.array(EDGE_FACELETS)
    corners = _CORNER_PIECE[lab[:, cf[:, 0]] * 36 + lab[:, cf[:, 1]] * 6 + lab[:, cf[:, 2]]]  # (4096, 8)
    edges = _EDGE_PIECE[lab[:, ef[:, 0]] * 6 + lab[:, ef[:, 1]]]  # (4096, 12)
    whole = ((np.sort(corners, axis=1) == np.arange(8)).all(axis=1)
             & (np.sort(edges, axis=1) == np.arange(12)).all(axis=1)
             & (lab[:, list(_CENTRES)] == np.arange(6)).all(axis=1))
    which = np.flatnonzero(whole)
    rows = np.ascontiguousarray(lab[which].astype(np.uint8))
    keys = rows.view(np.dtype((np.void, 54))).ravel()  # a row as one value: the same cube, the same key
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    found = {"".join(FACES[c] for c in rows[i]): which[inverse == k].tolist() for k, i in enumerate(first)}
    for facelets in list(found):
        try:
            parse_facelets(facelets)
        except CubeError:  # a twisted corner, a flipped edge, two pieces swapped: no cube
            del found[facelets]
    return found


def alternatives(facelets: str, rotations: np.ndarray, evidence: np.ndarray | None = None
                 ) -> list[Alternative]:
    """The other valid cubes the photos fit: the cube read (``facelets``,
    with its faces' ``rotations``) labels each photo's stickers; every way of
    turning the six photos is weighed with the same labels, and with what
    the camera alone found likeliest for each sticker (``evidence``, (54, 6)
    facelet order, when given), since a sure reading may lean on the pieces
    of the turning it chose. Each other cube comes with the fewest photos
    turned from the reading that give it."""
    back = arrange(np.arange(54), rotations)  # facelet i shows photo sticker back[i]
    labels = np.empty(54, int)
    labels[back] = [FACES.index(c) for c in facelets]
    sets = [labels]
    if evidence is not None and evidence.shape == (54, 6):
        seen = evidence.any(axis=1)
        camera = labels.copy()
        camera[back[seen]] = np.argmin(evidence[seen], axis=1)
        if (camera != labels).any():
            sets.append(camera)
    found: dict[str, list[int]] = {}
    for lab in sets:
        for cube, which in valid_turnings(lab).items():
            found.setdefault(cube, []).extend(which)
    found.pop(facelets, None)
    out = []
    for cube, which in found.items():
        moved = (_COMBOS[which] != rotations[None]).sum(axis=1)
        rot = _COMBOS[which[int(np.argmin(moved))]]
        turned = {f: int((rot[k] - rotations[k]) % 4) for k, f in enumerate(FACES) if rot[k] != rotations[k]}
        out.append(Alternative(cube, {f: int(r) for f, r in zip(FACES, rot)}, turned,
                               [i for i in range(54) if cube[i] != facelets[i]]))
    out.sort(key=lambda a: (len(a.turned), len(a.differ), a.facelets))
    return out[:MAX_ALTERNATIVES]


def _misfit(cls: Classification) -> float:
    """How much the cube read costs beyond what each sticker looks most like
    (nats): the arrangement of the faces the colours fit best."""
    if cls.evidence is None or "?" in cls.facelets:
        return float("inf")
    assign = np.array([FACES.index(ch) for ch in cls.facelets])
    return float(cls.evidence[np.arange(54), assign].sum())


def read_cube(shown: np.ndarray, spread: np.ndarray, glare: np.ndarray
              ) -> tuple[Classification, np.ndarray, np.ndarray]:
    """Photo-order samples of the six faces -> (classification, facelet-order
    samples, the faces' turns), choosing the turns the cube's pieces allow.
    A first reading (nearest centre colour) picks the likeliest turns; the
    colours the classifier fits there, which do not depend on the turns,
    then rank every way of turning the faces again."""
    tried: list[tuple[np.ndarray, Classification, np.ndarray]] = []
    seen: set[bytes] = set()

    def attempt(rot: np.ndarray) -> None:
        key = np.round(arrange(shown, rot)).tobytes()
        if key in seen:
            return  # turning this face changes nothing (a face of one colour)
        seen.add(key)
        samples = arrange(shown, rot)
        cls = classify_measured(samples, arrange(spread, rot), arrange(glare, rot), faces_apart=True)
        tried.append((rot, cls, samples))

    attempt(rank_rotations(shown)[0])
    for _ in range(RANKINGS):
        best = min(tried, key=lambda t: _misfit(t[1]))
        evidence = np.zeros((54, 6))
        if best[1].evidence is not None:
            evidence[arrange(np.arange(54), best[0])] = best[1].evidence  # back to photo order
        budget = len(tried) + CANDIDATES
        for rot in rank_by_evidence(evidence):
            if len(tried) >= budget:
                break
            attempt(rot)
        if any(t[1].ok for t in tried):
            break
    sure = [t for t in tried if t[1].ok]
    rot, cls, samples = sure[0] if sure else min(tried, key=lambda t: _misfit(t[1]))
    _doubt_where_they_differ(cls, {t[1].facelets for t in sure[1:]}, TURNED_DIFFERENTLY,
                             "photograph each face as drawn in the README's net")
    return cls, samples, rot


def weigh_turnings(shown: np.ndarray, spread: np.ndarray, glare: np.ndarray, cls: Classification,
                   samples: np.ndarray, rot: np.ndarray, *, as_drawn: bool = False
                   ) -> tuple[Classification, np.ndarray, np.ndarray, list[Alternative]]:
    """The cube read, weighed against every other way the photos could be
    turned (:func:`alternatives`): a photo of a face carries no mark of which
    way up it was taken, so when another turning of the same stickers makes
    another valid cube, nothing in the photos can tell them apart and the
    reading is put in doubt where they differ, the others listed for a
    person to choose from. ``as_drawn``: the person took every photo as the
    README's net draws the face, so the photos' own turning is taken when it
    makes a valid cube, read as sure if it is (the others still listed)."""
    if not cls.valid or "?" in cls.facelets:
        return cls, samples, rot, []
    others = alternatives(cls.facelets, rot, cls.evidence)
    if not others:
        return cls, samples, rot, []
    if as_drawn:
        flat = np.zeros(6, int)
        if rot.any() and any(not any(a.rotations.values()) for a in others):
            samples, rot = arrange(shown, flat), flat
            cls = classify_measured(samples, arrange(spread, flat), arrange(glare, flat), faces_apart=True)
            if cls.valid and "?" not in cls.facelets:
                others = alternatives(cls.facelets, rot, cls.evidence)
        if not rot.any():
            cls.warnings.append(f"the photos fit {len(others) + 1} cubes, depending on which way up they were"
                                " taken: the one with every photo as the README's net draws its face is"
                                " taken (photos as drawn)")
            return cls, samples, rot, others
    differ = sorted({i for a in others for i in a.differ})
    cls.warnings = [w for w in cls.warnings if f"one cube, {TURNED_DIFFERENTLY} (" not in w]
    cls.suspects = sorted(set(cls.suspects) | set(differ))
    cls.confidence[differ] = np.minimum(cls.confidence[differ], 0.5)
    cls.warnings.append(
        f"the photos fit {len(others) + 1} cubes, depending on which way up they were taken ("
        + ", ".join(position_name(i) for i in differ[:12]) + (" ..." if len(differ) > 12 else "")
        + "): say which, or take each photo as the README's net draws the face and read them as drawn")
    return cls, samples, rot, others


TURNED_DIFFERENTLY = "turned differently"
"""How :func:`read_cube` says the turnings it classified gave two sure cubes:
:func:`weigh_turnings` then says it with every such cube listed."""


def _doubt_where_they_differ(cls: Classification, others: set[str], how: str, advice: str) -> None:
    """Other cubes the photos read as sure too: the stickers where they
    differ from the one chosen are put in doubt, with why and what to do."""
    others = others - {cls.facelets}
    if not others:
        return
    differ = sorted({i for f in others for i in range(54) if f[i] != cls.facelets[i]})
    cls.suspects = sorted(set(cls.suspects) | set(differ))
    cls.confidence[differ] = np.minimum(cls.confidence[differ], 0.5)
    cls.warnings.append(f"the photos fit more than one cube, {how} ("
                        + ", ".join(position_name(i) for i in differ[:12]) + f"): {advice}")


def sample_photo(img: np.ndarray, grid: Grid, face: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nine sticker colours (RGB), spreads and glare fractions, in the order
    the photo stands. A photo is one look at a face: a lamp's reflection
    over a sticker's middle must not hide it, so more of each sticker is
    sampled than from a rig's camera (the grid was fitted to the stickers,
    not clicked), with the sticker's middle as the glare reference."""
    spec = FaceSpec(face, tuple((float(x), float(y)) for x, y in grid.corners), 0)
    cell = PHOTO_CELL
    warped = warp_face(img, spec, cell).reshape(3, cell, 3, cell, 3).transpose(0, 2, 1, 3, 4)
    warped = warped.reshape(9, cell, cell, 3)
    yy, xx = np.mgrid[0:cell, 0:cell]
    r = np.maximum(np.abs(yy + 0.5 - cell / 2), np.abs(xx + 0.5 - cell / 2)) / cell
    outer, core = r < PHOTO_INNER / 2, r < PHOTO_CORE / 2
    return robust_colours(warped[:, outer], warped[:, outer & ~core])


def _shown(options: list[list[tuple[Grid, tuple[np.ndarray, np.ndarray, np.ndarray]]]],
           choice: list[int]) -> np.ndarray:
    return np.concatenate([options[k][c][1][0] for k, c in enumerate(choice)])


def _read_choice(options: list[list[tuple[Grid, tuple[np.ndarray, np.ndarray, np.ndarray]]]],
                 choice: list[int]) -> tuple[Classification, np.ndarray, np.ndarray]:
    """The cube read with grid ``choice[k]`` of face k's photo."""
    shown = _shown(options, choice)
    spread = np.concatenate([options[k][c][1][1] for k, c in enumerate(choice)])
    glare = np.concatenate([options[k][c][1][2] for k, c in enumerate(choice)])
    return read_cube(shown, spread, glare)


def choose_grids(options: list[list[tuple[Grid, tuple[np.ndarray, np.ndarray, np.ndarray]]]]
                 ) -> tuple[list[int], Classification, np.ndarray, np.ndarray]:
    """Which of each photo's grids (best first, with their samples) shows the
    face: (the choice per face, classification, facelet-order samples,
    turns). The best grid of every photo is read first; when that cube is
    not sure, or a photo's grid did not stand out, each other grid is tried
    in one photo at a time. A grid that is not the face (a side face, a
    window slid by a row, a tiled floor) gives colours that make no valid
    cube, so the cube decides: when exactly one cube reads as sure it wins;
    when several do, the stickers where they differ are put in doubt."""
    base = [0] * len(options)
    cls, samples, rot = _read_choice(options, base)
    doubtful = [k for k, opts in enumerate(options) if not opts[0][0].stands_out]
    if cls.ok and not doubtful:
        return base, cls, samples, rot
    tried = [(base, cls, samples, rot)]
    # a first, cheap reading ranks the other grids: one that is not the face makes fewer real pieces
    # than the face does, so only the grids that make at least as many as the best reading so far
    # are classified properly, the most promising first
    floor = int(_piece_scores(_shown(options, base)).max())
    swaps = []
    for k, opts in enumerate(options):
        for j in range(1, len(opts)):
            choice = base.copy()
            choice[k] = j
            swaps.append((int(_piece_scores(_shown(options, choice)).max()), choice))
    swaps.sort(key=lambda t: -t[0])
    if cls.ok:
        floor = max(floor, 20)  # the photos' best grids read sure: only a grid as good could dispute it
    for score, choice in swaps[:MAX_SWAPS]:
        if score < floor:
            break
        tried.append((choice, *_read_choice(options, choice)))
        if tried[-1][1].ok:
            floor = score  # a sure cube: only grids that read as well could give another one
    sure = [t for t in tried if t[1].ok]
    if not sure:
        if doubtful:
            cls.warnings.append("no sticker grid stands out in the "
                                + ", ".join(FACES[k] for k in doubtful)
                                + f" photo(s): photograph the face square on, {MARGIN_ADVICE}")
        return base, cls, samples, rot
    choice, cls, samples, rot = sure[0]
    _doubt_where_they_differ(cls, {t[1].facelets for t in sure[1:]},
                             "with the grid found in different places",
                             f"photograph each face square on, {MARGIN_ADVICE}")
    return choice, cls, samples, rot


MARGIN_ADVICE = ("the cube a good part of the picture, best with a margin of background all round"
                 " (the face may fill the picture if no sticker is cut off)")
NO_GRID_ADVICE = f"photograph the face square on, in even light, {MARGIN_ADVICE}"
"""The finder looks for the face's outline against what is around it, and
for a face cropped to its stickers, for their edges and the picture's
border (:func:`vision.grid_finder.find_grids`); a margin is still what
makes a face easiest to find, so it is the advice."""


def _no_grid(img: np.ndarray, label: str) -> str:
    """Why a photo has no grid, in one line: part of the stickers cut off by
    the picture's border (which edge), or no grid at all."""
    cut = cut_edges(img)
    if cut:
        return (f"{label}: part of the stickers is cut off at the picture's {' and '.join(cut)} edge"
                f"{'s' if len(cut) > 1 else ''}: take it again with the whole face in the picture")
    return f"{label}: no 3x3 sticker grid found; {NO_GRID_ADVICE}"


def read_photos(paths: Mapping[str, str | os.PathLike], debug_dir: str | Path | None = None, *,
                as_drawn: bool = False) -> PhotoScan:
    """One photo per face (face letter -> file) -> the cube they show.
    Raises :class:`PhotoError` naming the face and file when a photo cannot
    be read or has no sticker grid; in the latter case, with ``debug_dir``,
    the photos are written first with whatever grids were found in each (the
    refusal is when a picture is needed most). When the photos fit other
    cubes turned otherwise, the reading is in doubt and they are listed in
    :attr:`PhotoScan.alternatives`; ``as_drawn`` takes the photos as the
    README's net draws each face instead (:func:`weigh_turnings`)."""
    missing = [f for f in FACES if f not in paths]
    if missing:
        raise PhotoError(f"no photo for face(s) {', '.join(missing)}: give one photo of each of U R F D L B")
    options: list[list[tuple[Grid, tuple[np.ndarray, np.ndarray, np.ndarray]]]] = []
    refused: list[str] = []  # the faces with no grid: every photo is read first, for --save-debug
    images: dict[str, np.ndarray] = {}
    scales: dict[str, float] = {}
    for face in FACES:
        label = f"{face} photo {os.fspath(paths[face])}"
        img, scale = load_photo(paths[face], label)
        found = find_grids(img)
        if not found:
            refused.append(_no_grid(img, label))
        options.append([(g, sample_photo(img, g, face)) for g in found])
        images[face], scales[face] = img, scale
    if refused:
        if debug_dir is not None:
            written = write_refusal_debug(images, {f: [g for g, _ in o] for f, o in zip(FACES, options)},
                                          debug_dir)
            refused[0] += f" (the photos with what was found: {written})"
        raise PhotoError(refused[0])
    choice, cls, samples, rot = choose_grids(options)
    picked = [options[k][c][1] for k, c in enumerate(choice)]
    shown, spread, glare = (np.concatenate([p[i] for p in picked]) for i in range(3))
    cls, samples, rot, others = weigh_turnings(shown, spread, glare, cls, samples, rot, as_drawn=as_drawn)
    grids = {f: options[k][choice[k]][0] for k, f in enumerate(FACES)}
    result = PhotoScan(cls, samples, {f: int(r) for f, r in zip(FACES, rot)}, grids, images, scales, others)
    if debug_dir is not None:
        write_debug(result, debug_dir)
    return result


STANDARD_COLOURS = {"U": (245, 245, 245), "R": (196, 30, 58), "F": (0, 155, 72), "D": (255, 213, 0),
                    "L": (255, 88, 0), "B": (0, 70, 173)}
"""The usual colour scheme (white up, green front, red right; yellow,
blue, orange opposite), in sRGB: one photo shows one face's colour only, so
the other five are told by these unless a profile gives them."""
FACE_SURE_NATS = SURE_NATS
"""One face alone: a sticker is sure when its next likeliest colour costs
this much more, as for a whole cube (:data:`vision.classifier.SURE_NATS`)."""


@dataclass
class FaceReading:
    """One photo of one face, read on its own: the nine stickers as the
    photo stands (which way up it was taken is only settled by the whole
    cube), each with how sure the camera is of it."""

    face: str
    stickers: str
    """Nine face letters, row by row as the photo stands."""
    confidence: np.ndarray
    """(9,) 0..1: one less the odds of the next likeliest colour."""
    suspects: list[int]
    """Stickers (0..8, as :attr:`stickers`) the camera is not sure of."""
    rgb: np.ndarray
    grid: Grid
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.suspects

    def to_dict(self) -> dict:
        return {"face": self.face, "stickers": self.stickers, "order": "as the photo stands",
                "confidence": [round(float(c), 3) for c in self.confidence], "suspects": list(self.suspects),
                "ok": self.ok, "rgb": [[round(float(v), 1) for v in c] for c in self.rgb],
                "warnings": list(self.warnings)}


def read_face(path: str | os.PathLike, face: str, *,
              colours: Mapping[str, tuple[float, float, float]] | None = None) -> FaceReading:
    """One photo of ``face`` (a letter of URFDLB) -> its nine stickers with
    their confidence, bounded and refused as :func:`read_photos` bounds and
    refuses each of its six (:class:`PhotoError`). ``colours``: face ->
    sRGB of the cube's colours (default :data:`STANDARD_COLOURS`). The
    classifier reads the face as one of a cube's six with the other five
    unseen; each sticker's confidence is the camera's own (the gap to its
    next likeliest colour), since one face's stickers settle no pieces."""
    if face not in FACES:
        raise PhotoError(f"face {face[:8]!r}: give one of U R F D L B")
    label = f"{face} photo {os.fspath(path)}"
    img, _ = load_photo(path, label)
    found = find_grids(img)
    if not found:
        raise PhotoError(_no_grid(img, label))
    k = FACES.index(face)
    rgb, _, _ = sample_photo(img, found[0], face)
    samples = np.full((54, 3), np.nan)
    samples[9 * k:9 * k + 9] = rgb
    cls = classify(samples, profile=dict(colours or STANDARD_COLOURS), faces_apart=True)
    evidence = cls.evidence[9 * k:9 * k + 9] if cls.evidence is not None else np.zeros((9, 6))
    picked = np.argmin(evidence, axis=1)
    picked[4] = k  # the centre is the face's colour: it names it
    gap = np.sort(evidence, axis=1)[:, 1]
    gap[4] = np.inf
    confidence = 1.0 - np.exp(-gap)
    suspects = [i for i in range(9) if gap[i] < FACE_SURE_NATS or picked[i] != np.argmin(evidence[i])]
    warnings = [w for w in cls.warnings if "clipped" in w or "dark" in w]
    if not found[0].stands_out:
        suspects = list(range(9))
        warnings.append(f"no sticker grid stands out in the {face} photo: photograph the face square on")
    confidence[suspects] = np.minimum(confidence[suspects], 0.5)
    return FaceReading(face, "".join(FACES[c] for c in picked), confidence, suspects, rgb, found[0], warnings)


def annotate(result: PhotoScan, face: str) -> np.ndarray:
    """The face's photo with the grid found drawn on it and each sticker's
    reading (its net position and letter; red when in doubt)."""
    img = result.images[face].copy()
    grid = result.grids[face]
    side = max(img.shape[:2])
    thick = max(2, side // 400)
    cv2.polylines(img, [np.round(grid.corners).astype(np.int32)], True, (0, 255, 0), thick, cv2.LINE_AA)
    k = FACES.index(face)
    where = _MAPS[result.rotations[face]]  # net sticker i is in grid cell where[i]
    for i in range(9):
        idx = 9 * k + i
        x, y = grid.centres[where[i]]
        doubt = idx in result.classification.suspects
        colour = (0, 0, 255) if doubt else (255, 255, 255)
        text = f"{position_name(idx)} {result.facelets[idx]}"
        draw_label(img, text, (int(x) - 3 * thick * len(text), int(y)), thick / 3, thick, colour)
    return img


def draw_label(img: np.ndarray, text: str, org: tuple[int, int], scale: float, thick: int,
               colour: tuple[int, int, int] = (255, 255, 255)) -> None:
    """``text`` readable on any sticker: a dark box behind it (white, yellow
    and blown-out stickers are as light as white text), then the text."""
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    x, y = org
    pad = max(2, thick)
    cv2.rectangle(img, (x - pad, y - h - pad), (x + w + pad, y + base + pad), (0, 0, 0), -1)
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick, cv2.LINE_AA)


def write_refusal_debug(images: Mapping[str, np.ndarray], found: Mapping[str, list[Grid]],
                        debug_dir: str | Path) -> Path:
    """``photo-U.png`` ... of a refused read: each photo with every grid the
    finder found in it (yellow; none is chosen yet) or, where it found none,
    a line saying so. Returns the folder."""
    d = Path(debug_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        for face, img in images.items():
            out = img.copy()
            thick = max(2, max(out.shape[:2]) // 400)
            for g in found.get(face, []):
                cv2.polylines(out, [np.round(g.corners).astype(np.int32)], True, (0, 255, 255), thick,
                              cv2.LINE_AA)
            note = (f"{face}: {len(found[face])} possible grid(s)" if found.get(face)
                    else f"{face}: no 3x3 sticker grid found - leave a margin round the face")
            draw_label(out, note, (8, 12 * thick + 8), thick / 3, thick, (0, 0, 255) if not found.get(face)
                       else (255, 255, 255))
            if not cv2.imwrite(str(d / f"photo-{face}.png"), out):
                raise OSError("OpenCV could not write the picture")
        return d
    except OSError as e:
        raise VisionError(f"cannot write debug output to {d}: {e}") from None


def write_debug(result: PhotoScan, debug_dir: str | Path) -> list[Path]:
    """``photo-U.png`` ... with the grids drawn, and ``scan.json`` (the
    samples in the ``classify --rgb-json`` format plus the classification)."""
    d = Path(debug_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        out = []
        for face in result.grids:
            p = d / f"photo-{face}.png"
            if not cv2.imwrite(str(p), annotate(result, face)):
                raise OSError("OpenCV could not write the picture")
            out.append(p)
        p = d / "scan.json"
        rgb = [[round(float(v), 1) for v in r] for r in result.samples]
        p.write_text(json.dumps({"rgb": rgb, **result.classification.to_dict(),
                                 "rotations": result.rotations}, indent=1) + "\n")
        out.append(p)
        return out
    except OSError as e:
        raise VisionError(f"cannot write debug output to {d}: {e}") from None
