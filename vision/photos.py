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

from .classifier import Classification, exposure, features
from .errors import VisionError
from .grid_finder import Grid, find_grids
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
PHOTO_INNER = 0.7  # of each cell (per side) sampled: the grid is fitted to the stickers themselves
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

    @property
    def facelets(self) -> str:
        return self.classification.facelets

    @property
    def ok(self) -> bool:
        return self.classification.ok


def _header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG header, read before decoding so a
    small file claiming a gigantic picture is refused; None for other kinds."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                i += 1
                continue
            marker = data[i + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
                i += 1 if marker == 0xFF else 2
                continue
            length = int.from_bytes(data[i + 2:i + 4], "big")
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
            i += 2 + length
    return None


def load_photo(path: str | os.PathLike, label: str) -> tuple[np.ndarray, float]:
    """A photo as BGR and the scale it was decoded at (1, 1/2, 1/4 or 1/8).
    ``label`` names it in errors ("U photo x.jpg"). Refuses what is not a
    regular file, over :data:`MAX_PHOTO_BYTES` bytes or
    :data:`MAX_PHOTO_PIXELS` pixels, or not an image OpenCV can read."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise PhotoError(f"{label}: not a regular file; give a PNG or JPEG photo")
            if st.st_size > MAX_PHOTO_BYTES:
                raise PhotoError(f"{label}: {st.st_size} bytes is too big for a photo"
                                 f" (at most {MAX_PHOTO_BYTES}); save it smaller")
            data = fh.read(MAX_PHOTO_BYTES + 1)
    except FileNotFoundError:
        raise PhotoError(f"{label}: file not found") from None
    except IsADirectoryError:
        raise PhotoError(f"{label}: is a folder, not a photo") from None
    except OSError as e:
        raise PhotoError(f"{label}: cannot read: {e.strerror or e}") from None
    size = _header_size(data)
    if size is not None and size[0] * size[1] > MAX_PHOTO_PIXELS:
        raise PhotoError(f"{label}: {size[0]}x{size[1]} pixels is too big"
                         f" (at most {MAX_PHOTO_PIXELS // 10**6} megapixels); resize it")
    buf = np.frombuffer(data, np.uint8)
    flag, scale = cv2.IMREAD_COLOR, 1.0
    if data[:2] == b"\xff\xd8" and size is not None:
        for f, s in ((cv2.IMREAD_REDUCED_COLOR_8, 8), (cv2.IMREAD_REDUCED_COLOR_4, 4),
                     (cv2.IMREAD_REDUCED_COLOR_2, 2)):
            if max(size) / s >= SAMPLE_SIDE:
                flag, scale = f, 1.0 / s
                break
    try:
        img = cv2.imdecode(buf, flag) if len(buf) else None
    except cv2.error:
        img = None
    if img is None:
        raise PhotoError(f"{label}: not an image OpenCV can read; give a PNG or JPEG photo")
    if size is None and img.shape[0] * img.shape[1] > MAX_PHOTO_PIXELS:
        raise PhotoError(f"{label}: {img.shape[1]}x{img.shape[0]} pixels is too big; resize it")
    if min(img.shape[:2]) * (1 / scale) < MIN_PHOTO_SIDE:
        raise PhotoError(f"{label}: {img.shape[1]}x{img.shape[0]} pixels is too small to read stickers from"
                         f" (at least {MIN_PHOTO_SIDE} on each side)")
    return img, scale


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
    _doubt_where_they_differ(cls, {t[1].facelets for t in sure[1:]}, "turned differently",
                             "photograph each face as drawn in the README's net")
    return cls, samples, rot


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
                                + " photo(s): photograph the face filling more of the picture")
        return base, cls, samples, rot
    choice, cls, samples, rot = sure[0]
    _doubt_where_they_differ(cls, {t[1].facelets for t in sure[1:]},
                             "with the grid found in different places",
                             "photograph each face filling more of the picture")
    return choice, cls, samples, rot


def read_photos(paths: Mapping[str, str | os.PathLike], debug_dir: str | Path | None = None) -> PhotoScan:
    """One photo per face (face letter -> file) -> the cube they show.
    Raises :class:`PhotoError` naming the face and file when a photo cannot
    be read or has no sticker grid."""
    missing = [f for f in FACES if f not in paths]
    if missing:
        raise PhotoError(f"no photo for face(s) {', '.join(missing)}: give one photo of each of U R F D L B")
    options: list[list[tuple[Grid, tuple[np.ndarray, np.ndarray, np.ndarray]]]] = []
    images: dict[str, np.ndarray] = {}
    scales: dict[str, float] = {}
    for face in FACES:
        label = f"{face} photo {os.fspath(paths[face])}"
        img, scale = load_photo(paths[face], label)
        found = find_grids(img)
        if not found:
            raise PhotoError(f"{label}: no 3x3 sticker grid found; photograph the face filling a good part of"
                             " the picture, square on, in even light")
        options.append([(g, sample_photo(img, g, face)) for g in found])
        images[face], scales[face] = img, scale
    choice, cls, samples, rot = choose_grids(options)
    grids = {f: options[k][choice[k]][0] for k, f in enumerate(FACES)}
    result = PhotoScan(cls, samples, {f: int(r) for f, r in zip(FACES, rot)}, grids, images, scales)
    if debug_dir is not None:
        write_debug(result, debug_dir)
    return result


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
        cv2.putText(img, text, (int(x) - 3 * thick * len(text), int(y)), cv2.FONT_HERSHEY_SIMPLEX, thick / 3,
                    (0, 0, 0), thick * 3, cv2.LINE_AA)
        cv2.putText(img, text, (int(x) - 3 * thick * len(text), int(y)), cv2.FONT_HERSHEY_SIMPLEX, thick / 3,
                    colour, thick, cv2.LINE_AA)
    return img


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
