"""Finding a cube face's 3x3 sticker grid in a photo, with no help.

A face in a photo is nine stickers (or tiles) that are convex
quadrilaterals of about one size, set on a lattice that a single
homography maps from the face's square to the image. The finder works on a
copy of the picture about 800 pixels across:

1. **Candidates**: colour edges (Canny on lightness and both Lab colour
   axes) cut the picture into regions; the regions that are nearly convex,
   nearly quadrilateral and of a sticker's size are candidate stickers.
   Black plastic, the grooves of a stickerless cube, and a sticker's own
   edge against the background all give such edges.
2. **Lattices**: each candidate's own shape gives two lattice directions,
   roughly (glare and rounded corners skew one sticker's outline), so the
   lattice is first fitted to the candidates of a similar size one pitch
   away and only then extended two pitches each way. Every 3x3 window
   about as full as the fullest is fitted with a homography, which then
   collects the candidates it predicts and is fitted again; the window
   holding the most stickers wins (a stray tile beside the face can fill
   a window slid by a row as well as the face fills its own). A candidate
   in a full grid seeds no other search; one in a grid with holes may.
3. **Choice**: grids are scored by stickers seen, even cells, dark gaps
   between them and the fit, less lattice-aligned candidates just outside
   (a tiled floor, a 4x4 cube). Of the grids scoring about as well as the
   best *on the same cube* (within a few pitches of it), the largest and
   most square-on is the face photographed; a tiled floor across the room
   does not compete. When another grid overlapping it fits about as well
   (a window that could slide), no grid stands out: :func:`find_grids`
   still returns the best few, and the cube as a whole chooses among them
   (:mod:`vision.photos`).

The grid is returned as the face's four outer corners, ordered as the photo
stands: top-left first, clockwise; which way up the face really is, is
settled later by the cube's constraints (:mod:`vision.photos`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

WORK_SIDE = 800  # the long side of the copy the grid is searched in
MIN_STICKERS = 5  # detected stickers a grid needs (the rest are predicted)
MIN_FACE_FRACTION = 0.08  # the face spans at least this much of the picture's short side
TOLERANCE = 0.28  # how far (in pitches) a candidate may sit from its predicted place
ALIGN = 0.35  # how far (per side) a sticker's sides may lean off the lattice's axes (blur skews them)
MAX_RING = 5  # lattice-aligned stickers allowed just outside a grid (clutter; more: a bigger lattice)
EDGE_RING = 0.25  # counted for each cell of the ring that is outside the picture
NEIGHBOUR = 4.5  # pitches between the middles of two faces of one cube seen in a photo, at most
CLOSE_SCORE = 3.0  # grids within this of the best are all faces: the largest is the one photographed
RESIDUAL_WEIGHT = 100.0  # a lattice of real stickers fits a homography to a hundredth of a pitch
MIN_SCORE = 6.5  # stickers seen, less those outside, plus half of each cell that looks like one
SETTLED_MEMBERS = 8  # a grid this full keeps its stickers from seeding other searches
ALTERNATIVES = 3  # grids returned per photo: the best, and the next ones for the cube to choose from
GAP_WEIGHT = 6.0  # score for dark gaps between all the stickers (black plastic, grooves)
GRAINY = 1.5  # grey levels of grain (see _grain) above which the picture is smoothed before its edges
STICKER_REACH = 0.35  # pitches from a cell's middle that a reader samples (vision.photos: 0.7 of each cell)
BORDER_PAD = 0.06  # of the short side: the dark frame put round a picture whose stickers meet its border


@dataclass
class Grid:
    corners: np.ndarray
    """(4, 2) outer corners of the face in the picture's pixels: top-left, top-right, bottom-right,
    bottom-left as the picture stands."""
    centres: np.ndarray
    """(9, 2) sticker centres, row-major in the same orientation."""
    found: int
    """How many of the nine were seen as stickers (the rest follow from the homography)."""
    homography: np.ndarray
    """Lattice (column, row; sticker centres at 0, 1, 2) -> picture pixels."""
    stands_out: bool = True
    """False when another grid in the picture fits about as well (a window that could slide by a
    row, two faces alike): the photo alone does not say which is the face."""


@dataclass
class _Candidate:
    centre: np.ndarray
    u: np.ndarray  # the sticker's two side vectors (image pixels)
    v: np.ndarray
    area: float


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _grain(img: np.ndarray) -> float:
    """How grainy a picture is, in grey levels: the typical amount a 3x3
    median takes away from a pixel (zero on a clean photo, whose flat
    stickers and background a median leaves as they are)."""
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    return 1.4826 * float(np.median(cv2.absdiff(grey, cv2.medianBlur(grey, 3))))


def _edges(img: np.ndarray, smooth: bool) -> np.ndarray:
    if smooth:
        # sensor noise (a cheap webcam in a dim rig) would scatter edges inside the stickers and break
        # them up: a median keeps the stickers' sides and takes the grain out
        img = cv2.medianBlur(img, 5)
    lab = cv2.cvtColor(cv2.GaussianBlur(img, (5, 5), 0), cv2.COLOR_BGR2LAB)
    e: np.ndarray = np.zeros(img.shape[:2], np.uint8)
    for ch, (lo, hi) in zip(cv2.split(lab), [(20, 50), (12, 30), (12, 30)]):
        e = cv2.bitwise_or(e, cv2.Canny(ch, lo, hi))
    return cv2.dilate(e, np.ones((3, 3), np.uint8))


def _quad(contour: np.ndarray) -> np.ndarray | None:
    """Four corners of a convex, nearly quadrilateral contour, or None."""
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    for eps in (0.04, 0.06, 0.08, 0.1):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(float)
    if len(approx) > 4:  # a rounded square: its bounding rectangle's corners
        box = cv2.boxPoints(cv2.minAreaRect(hull))
        return np.asarray(box, float)
    return None


def candidates(img: np.ndarray, smooth: bool) -> list[_Candidate]:
    """Sticker-like regions of a BGR picture (already at working size).
    ``smooth``: take the picture's grain out first."""
    h, w = img.shape[:2]
    short = min(w, h)
    lo_area = (short * MIN_FACE_FRACTION / 3.6) ** 2
    hi_area = (short / 3.0) ** 2
    free = cv2.bitwise_not(_edges(img, smooth))
    n, labels, stats, cents = cv2.connectedComponentsWithStats(free, connectivity=4)
    out = []
    for i in range(1, n):
        x, y, bw, bh, area = stats[i]
        if not lo_area <= area <= hi_area or x == 0 or y == 0 or x + bw >= w or y + bh >= h:
            continue
        if max(bw, bh) > 4 * min(bw, bh):
            continue
        mask = (labels[y:y + bh, x:x + bw] == i).astype(np.uint8)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            continue
        c = max(contours, key=cv2.contourArea)
        # specks of edge inside a sticker (sensor noise, dust, a logo) leave holes, not a smaller sticker
        area = max(area, int(cv2.contourArea(c)))
        hull_area = cv2.contourArea(cv2.convexHull(c))
        if hull_area <= 0 or area / hull_area < 0.85:
            continue
        q = _quad(c)
        if q is None:
            continue
        quad_area = cv2.contourArea(q.astype(np.float32))
        # up to a circle's area over its inscribed square's (pi / 2): a small, very round sticker
        if quad_area <= 0 or not 0.75 < area / quad_area < 1.65:
            continue
        # a rounded square's corners are cut off: grow the quad to the region's area
        centre = q.mean(axis=0)
        q = centre + (q - centre) * np.sqrt(area / quad_area)
        q += (x, y)
        centre = q.mean(axis=0)
        # order around the centre, then the two side vectors
        q = q[np.argsort(np.arctan2(q[:, 1] - centre[1], q[:, 0] - centre[0]))]
        u = ((q[1] - q[0]) + (q[2] - q[3])) / 2
        v = ((q[3] - q[0]) + (q[2] - q[1])) / 2
        if abs(_cross(u, v)) < 0.3 * np.linalg.norm(u) * np.linalg.norm(v):
            continue  # too skewed to be a square seen at a sane angle
        lu, lv = np.linalg.norm(u), np.linalg.norm(v)
        if max(lu, lv) > 2.5 * min(lu, lv):
            continue
        out.append(_Candidate(np.asarray(cents[i], float), u, v, float(area)))
    return out


def _fit(lattice: np.ndarray, image: np.ndarray) -> np.ndarray | None:
    """Homography lattice -> image from matched points (affine when few)."""
    if len(lattice) >= 5 and np.linalg.matrix_rank(lattice - lattice.mean(0)) == 2:
        hom, _ = cv2.findHomography(lattice.astype(np.float32), image.astype(np.float32), 0)
        if hom is not None:
            return hom
    return _affine(lattice, image)


def _affine(lattice: np.ndarray, image: np.ndarray) -> np.ndarray | None:
    """Least-squares affine map lattice -> image (as a 3x3 matrix), or None
    when the points do not span the plane."""
    if len(lattice) >= 3 and np.linalg.matrix_rank(lattice - lattice.mean(0)) == 2:
        a, *_ = np.linalg.lstsq(np.c_[lattice, np.ones(len(lattice))], image, rcond=None)
        return np.r_[a.T, [[0, 0, 1]]]
    return None


def _apply(hom: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = pts @ hom[:2, :2].T + hom[:2, 2]
    z = pts @ hom[2, :2] + hom[2, 2]
    # a trial fit may send a point to infinity: it then fails every check that follows (NaN and inf
    # compare false), which is the answer wanted, without a warning on the user's terminal
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = p / z[:, None]
    return out


_WINDOW = np.array([(c, r) for r in range(3) for c in range(3)], float)
_RING = np.array([(c, r) for r in range(-1, 4) for c in range(-1, 4)
                  if not (0 <= c <= 2 and 0 <= r <= 2)], float)


def _around(reach: float) -> np.ndarray:
    """The square ``reach`` pitches beyond the outer cells' middles, as
    lattice points: top-left first, clockwise."""
    return np.array([[-reach, -reach], [2 + reach, -reach], [2 + reach, 2 + reach], [-reach, 2 + reach]])


_OUTLINE = _around(0.5)  # the face's outline: half a gap beyond the outer stickers
_STICKER_AREA = _around(STICKER_REACH)  # what a reader samples of the outer stickers


def _grow(seed: _Candidate, cands: list[_Candidate], centres: np.ndarray, areas: np.ndarray,
          image_size: tuple[int, int]) -> list[tuple[np.ndarray, list[int], float, float]]:
    """The fullest 3x3 grids through ``seed`` (one, or several windows that
    hold as many stickers): (homography, the candidates in it, ring hits,
    residual in pitches) each."""
    basis = np.c_[seed.u, seed.v]
    if abs(np.linalg.det(basis)) < 1e-6:
        return []
    similar = (areas > seed.area / 2.5) & (areas < seed.area * 2.5)
    local = (centres - seed.centre) @ np.linalg.inv(basis).T
    # the pitch (sticker + gap, in sticker sides) from the nearest neighbours along either axis
    near = similar & (np.abs(local).max(axis=1) > 0.8) & (np.abs(local).max(axis=1) < 1.7) & \
        (np.abs(local).min(axis=1) < 0.3)
    if not near.any():
        return []
    pitch = float(np.median(np.abs(local[near]).max(axis=1)))
    lat = local / pitch
    idx = np.round(lat)
    # one sticker's shape gives the directions only roughly (glare, a rounded corner): two pitches
    # away that can be most of a sticker off, so the lattice is first fitted to the seed's nearest
    # neighbours and then extended
    close = similar & (np.abs(lat - idx).max(axis=1) < TOLERANCE) & (np.abs(idx).max(axis=1) <= 1)
    affine = _affine(idx[close], centres[close])
    if affine is not None and abs(np.linalg.det(affine[:2, :2])) > 1e-6:
        lat = (centres - affine[:2, 2]) @ np.linalg.inv(affine[:2, :2]).T
        idx = np.round(lat)
    ok = similar & (np.abs(lat - idx).max(axis=1) < TOLERANCE) & (np.abs(idx).max(axis=1) <= 2)
    if ok.sum() < MIN_STICKERS:
        return []
    windows = []
    for c0 in range(-2, 1):
        for r0 in range(-2, 1):
            inside = ok & (idx[:, 0] >= c0) & (idx[:, 0] <= c0 + 2) & (idx[:, 1] >= r0) \
                & (idx[:, 1] <= r0 + 2)
            windows.append((int(inside.sum()), c0, r0, inside))
    most = max(w[0] for w in windows)
    # windows as well filled are all tried (a stray tile next to the face fills one as well as the
    # face's own): those whose fitted grids then hold the most stickers are all kept, for the scores
    # (and in the end the cube) to choose between
    fits: list[tuple[np.ndarray, list[tuple[int, int]]]] = []
    for count, c0, r0, inside in windows:
        if count < max(MIN_STICKERS, most):
            continue
        fitted = _fit_window(_fit(idx[inside] - (c0, r0), centres[inside]), cands, centres, similar)
        if fitted is not None and all({j for _, j in fitted[1]} != {j for _, j in f[1]} for f in fits):
            fits.append(fitted)
    if not fits:
        return []
    full = max(len(f[1]) for f in fits)
    return [_describe(hom, members, cands, centres, similar, image_size)
            for hom, members in fits if len(members) == full]


def _describe(hom: np.ndarray, members: list[tuple[int, int]], cands: list[_Candidate], centres: np.ndarray,
              similar: np.ndarray, image_size: tuple[int, int]) -> tuple[np.ndarray, list[int], float, float]:
    """(homography, the candidates in the grid, ring hits, residual in
    pitches) of a fitted grid."""
    lat_pts, img_pts = _WINDOW[[k for k, _ in members]], centres[[j for _, j in members]]
    pitch_px = float(np.sqrt(abs(np.linalg.det(_jacobian(hom, np.array([1.0, 1.0]))))))
    residual = float(np.median(np.linalg.norm(_apply(hom, lat_pts) - img_pts, axis=1)))
    inv = np.linalg.inv(hom)
    js = [j for _, j in members]
    cu = np.array([cands[j].u for j in js])
    cv_ = np.array([cands[j].v for j in js])
    a = _apply(inv, centres[js] - cu / 2 - cv_ / 2)
    z = _apply(inv, centres[js] + cu / 2 + cv_ / 2)
    side = float(np.median(np.abs(z - a).mean(axis=1)))
    h, w = image_size
    ring_img = _apply(hom, _RING)
    outside = (ring_img[:, 0] < 0) | (ring_img[:, 1] < 0) | (ring_img[:, 0] >= w) | (ring_img[:, 1] >= h)
    ring_hits = len(_matches(hom, cands, centres, similar, _RING[~outside], (side, 0.15)))
    # where the picture ends, nothing says the lattice stops (nor that it goes on): a quarter hit
    # for each cell beyond it
    return hom, js, ring_hits + EDGE_RING * int(outside.sum()), residual / pitch_px


def _fit_window(hom: np.ndarray | None, cands: list[_Candidate], centres: np.ndarray, similar: np.ndarray
                ) -> tuple[np.ndarray, list[tuple[int, int]]] | None:
    """Collect the candidates a first fit predicts, and fit again (twice):
    (homography, (cell, candidate) members), or None below
    :data:`MIN_STICKERS`."""
    members: list[tuple[int, int]] = []
    for _ in range(2):
        if hom is None:
            return None
        members = _matches(hom, cands, centres, similar, _WINDOW)
        if len(members) < MIN_STICKERS:
            return None
        hom = _fit(_WINDOW[[k for k, _ in members]], centres[[j for _, j in members]])
    return None if hom is None else (hom, members)


def _jacobian(hom: np.ndarray, p: np.ndarray) -> np.ndarray:
    e = 1e-3
    a = _apply(hom, np.array([p, p + (e, 0), p + (0, e)]))
    return np.c_[a[1] - a[0], a[2] - a[0]] / e


def _matches(hom: np.ndarray, cands: list[_Candidate], centres: np.ndarray, similar: np.ndarray,
             cells: np.ndarray, side: tuple[float, float] | None = None) -> list[tuple[int, int]]:
    """(cell, candidate) pairs where a candidate sits in a cell of the grid
    and has the shape the grid predicts there: seen through the inverse
    homography it is a square, aligned with the lattice, of a sticker's size
    (with ``side``, (lattice side, tolerance): of that side and in the
    middle of its cell, as a sticker continuing the grid would be)."""
    try:
        inv = np.linalg.inv(hom)
    except np.linalg.LinAlgError:
        return []
    if not len(cells) or not similar.any():
        return []
    pred = _apply(hom, cells)
    d = np.linalg.norm(centres[None, :, :] - pred[:, None, :], axis=2)
    d[:, ~similar] = np.inf
    js = np.argmin(d, axis=1)
    cen = centres[js]
    u = np.array([cands[j].u for j in js])
    v = np.array([cands[j].v for j in js])
    pts = np.stack([cen, cen - u / 2 - v / 2, cen + u / 2 - v / 2, cen + u / 2 + v / 2, cen - u / 2 + v / 2],
                   axis=1)
    lat = _apply(inv, pts.reshape(-1, 2)).reshape(len(js), 5, 2)
    off = np.abs(lat[:, 0] - cells).max(axis=1)
    q = lat[:, 1:]
    e1 = ((q[:, 1] - q[:, 0]) + (q[:, 2] - q[:, 3])) / 2
    e2 = ((q[:, 3] - q[:, 0]) + (q[:, 2] - q[:, 1])) / 2
    l1, l2 = np.linalg.norm(e1, axis=1), np.linalg.norm(e2, axis=1)
    lo, hi = np.minimum(l1, l2), np.maximum(l1, l2)
    good = (off <= (TOLERANCE if side is None else 0.15)) & (lo > 0.5) & (hi < 1.1) & (hi < 1.4 * lo)
    if side is not None:
        good &= np.maximum(np.abs(lo / side[0] - 1), np.abs(hi / side[0] - 1)) <= side[1]
    # aligned with the lattice (either way round): each side close to an axis
    good &= (np.abs(e1).min(axis=1) <= ALIGN * hi) & (np.abs(e2).min(axis=1) <= ALIGN * hi)
    good &= np.isfinite(d[np.arange(len(js)), js])
    return [(int(k), int(js[k])) for k in np.flatnonzero(good)]


def _uniform_cells(lab: np.ndarray, hom: np.ndarray) -> int:
    """How many cells of the grid look like one sticker (an even colour in
    their middle), whether or not they were found as candidates: a cell of
    black plastic edge and background is not even."""
    cell = 12
    to_img = hom @ np.array([[1 / cell, 0, -0.5], [0, 1 / cell, -0.5], [0, 0, 1]])
    try:
        warped = cv2.warpPerspective(lab, np.linalg.inv(to_img), (3 * cell, 3 * cell), flags=cv2.INTER_LINEAR)
    except (cv2.error, np.linalg.LinAlgError):
        return 0
    g = warped.reshape(3, cell, 3, cell, 3)[:, 3:cell - 3, :, 3:cell - 3].astype(np.float32)
    spread = g.std(axis=(1, 3)).sum(axis=-1)  # (3, 3): L + a + b standard deviations
    return int((spread < 15).sum())


_GAPS = np.array([(c + 0.5, r) for r in range(3) for c in range(2)]
                 + [(c, r + 0.5) for r in range(2) for c in range(3)]
                 + [(c + 0.5, r + 0.5) for r in range(2) for c in range(2)], float)


def _dark_gaps(low: np.ndarray, lightness: np.ndarray, hom: np.ndarray) -> float:
    """The share of the places between the grid's stickers that are dark
    next to them: a cube's black plastic or a stickerless cube's grooves
    (``low`` is the lightness after a minimum filter, so a thin groove
    counts). Tiles with light grout and lattices that straddle a face's
    edge score low."""
    h, w = low.shape
    gaps = np.round(_apply(hom, _GAPS)).astype(int)
    cells = np.round(_apply(hom, _WINDOW)).astype(int)
    inside = ((gaps >= 0) & (gaps < (w, h))).all(axis=1)
    cells_in = ((cells >= 0) & (cells < (w, h))).all(axis=1)
    if not inside.any() or not cells_in.any():
        return 0.0
    sticker = float(np.median(lightness[cells[cells_in, 1], cells[cells_in, 0]]))
    g = low[np.clip(gaps[:, 1], 0, h - 1), np.clip(gaps[:, 0], 0, w - 1)].astype(float)
    dark = inside & (g < 0.7 * sticker) & (g < 110)
    return float(dark.sum() / len(_GAPS))


def _upright(hom: np.ndarray) -> np.ndarray:
    """The same grid with its lattice turned so rows run down the picture
    and columns to the right (the photo's own way up), never mirrored."""
    c = _apply(hom, np.array([[1.0, 1.0], [2.0, 1.0], [1.0, 2.0]]))
    col, row = c[1] - c[0], c[2] - c[0]
    if _cross(col, row) < 0:  # lattice axes swapped: a mirror image of the face's order
        swap = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], float)
        hom = hom @ swap
    # the four quarter turns of the lattice about its centre (1, 1); keep the one whose rows point down
    best, best_hom = -np.inf, hom
    for k in range(4):
        a = np.radians(90 * k)
        rot = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
        rot = np.round(rot)
        shift = np.array([[1, 0, 1], [0, 1, 1], [0, 0, 1]], float) @ rot @ np.array(
            [[1, 0, -1], [0, 1, -1], [0, 0, 1]], float)
        h2 = hom @ shift
        c = _apply(h2, np.array([[1.0, 1.0], [1.0, 2.0]]))
        down = c[1] - c[0]
        score = down[1] / (np.linalg.norm(down) + 1e-9)
        if score > best:
            best, best_hom = score, h2
    return best_hom


@dataclass
class _Scored:
    score: float
    area: float
    hom: np.ndarray  # in the working copy's pixels
    members: int
    ring: float
    residual: float
    uniform: int
    gaps: float


def _work_copy(img: np.ndarray) -> tuple[np.ndarray, float]:
    h, w = img.shape[:2]
    f = min(1.0, WORK_SIDE / max(w, h))
    small = cv2.resize(img, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA) \
        if f < 1 else img
    return small, f


def grids(small: np.ndarray, smooth: bool) -> list[_Scored]:
    """Every 3x3 lattice of sticker-like regions in the working copy, scored
    (refused ones included, with ``score`` -inf), one per distinct grid.
    ``smooth`` as for :func:`candidates`."""
    cands = candidates(small, smooth)
    if len(cands) < MIN_STICKERS:
        return []
    centres = np.array([c.centre for c in cands])
    areas = np.array([c.area for c in cands])
    results = []
    used = np.zeros(len(cands), bool)
    seen: set[frozenset[int]] = set()
    for i in np.argsort(-areas):
        if used[i]:
            continue
        for g in _grow(cands[i], cands, centres, areas, small.shape[:2]):
            key = frozenset(g[1])
            if key in seen:
                continue  # the same stickers found again from another seed of the same grid
            seen.add(key)
            results.append(g)
            # a candidate already in a full grid would only find that grid again; one in a grid with
            # holes (perhaps slid by a row onto background tiles) may still seed the right one
            if len(g[1]) >= SETTLED_MEMBERS:
                used[g[1]] = True
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    lightness = cv2.medianBlur(np.ascontiguousarray(lab[..., 0]), 5)
    low = cv2.erode(lab[..., 0], np.ones((5, 5), np.uint8))
    out = []
    for hom, js, ring, residual in results:
        uniform = _uniform_cells(lab, hom)
        gaps = _dark_gaps(low, lightness, hom)
        score = len(js) - ring + 0.5 * uniform + GAP_WEIGHT * gaps - RESIDUAL_WEIGHT * residual
        if ring > MAX_RING or residual > 0.15:
            score = -np.inf
        area = float(cv2.contourArea(_apply(hom, _OUTLINE).astype(np.float32)))
        out.append(_Scored(score, area, hom, len(js), ring, residual, uniform, gaps))
    return out


def _frontal_size(r: _Scored) -> float:
    """How large and how square-on a grid is seen: its area times the
    square of its foreshortening (the ratio of the lattice's short to long
    axis at its middle). The face photographed faces the camera more than
    the side faces, which at a steep tilt can be nearly as large."""
    sv = np.linalg.svd(_jacobian(r.hom, np.array([1.0, 1.0])), compute_uv=False)
    return r.area * float(sv[-1] / max(sv[0], 1e-9)) ** 2


def _choose(scored: list[_Scored]) -> _Scored | None:
    """Of the grids that look best, the largest (the face photographed is the
    most frontal one, and side faces are foreshortened); None when another
    grid overlapping it fits about as well (a window that could slide)."""
    scored = [r for r in scored if r.score >= MIN_SCORE]
    if not scored:
        return None
    top = max(scored, key=lambda r: r.score)
    top_centre = _apply(top.hom, np.array([[1.0, 1.0]]))[0]
    top_pitch = float(np.sqrt(abs(np.linalg.det(_jacobian(top.hom, np.array([1.0, 1.0]))))))

    def same_cube(r: _Scored) -> bool:  # the best grid's neighbouring faces, not tiles across the room
        centre = _apply(r.hom, np.array([[1.0, 1.0]]))[0]
        return bool(np.linalg.norm(centre - top_centre) < NEIGHBOUR * top_pitch)

    # as face-like as the best: as well supported and with gaps as dark (a cube of one body colour)
    best = max((r for r in scored if r.score >= top.score - CLOSE_SCORE and r.gaps >= top.gaps - 0.3
                and same_cube(r)), key=_frontal_size)
    centre = _apply(best.hom, np.array([[1.0, 1.0]]))[0]
    pitch = float(np.sqrt(abs(np.linalg.det(_jacobian(best.hom, np.array([1.0, 1.0]))))))
    for other in scored:
        d = np.linalg.norm(_apply(other.hom, np.array([[1.0, 1.0]]))[0] - centre)
        if 0.5 * pitch < d < 2.5 * pitch and other.score >= best.score - 0.5 and other.area > 0.8 * best.area:
            return None
    return best


def _to_grid(r: _Scored, f: float, size: tuple[int, int], stands_out: bool) -> Grid | None:
    """A scored grid in the working copy -> a :class:`Grid` in the picture's
    pixels (the working copy was scaled by ``f``), None when a sticker
    leaves the picture. The outline, half a gap beyond the stickers, may be
    cut by the border: a robot's fixed camera often frames the face that
    tightly, and nothing is read from the gaps."""
    h, w = size
    hom = np.diag([1 / f, 1 / f, 1.0]) @ _upright(r.hom)
    reach = _apply(hom, _STICKER_AREA)
    slack = 0.01 * max(w, h)
    if (reach < -slack).any() or (reach[:, 0] > w + slack).any() or (reach[:, 1] > h + slack).any():
        return None
    return Grid(_apply(hom, _OUTLINE), _apply(hom, _WINDOW), r.members, hom, stands_out)


def _same_place(a: _Scored, b: _Scored) -> bool:
    """Two grids over the same stickers (found from different seeds)."""
    pitch = float(np.sqrt(abs(np.linalg.det(_jacobian(a.hom, np.array([1.0, 1.0]))))))
    d = np.linalg.norm(_apply(a.hom, np.array([[1.0, 1.0]]))[0] - _apply(b.hom, np.array([[1.0, 1.0]]))[0])
    return bool(d < 0.3 * pitch and 0.8 < a.area / max(b.area, 1e-9) < 1.25)


def find_grids(img: np.ndarray, limit: int = ALTERNATIVES) -> list[Grid]:
    """The face's sticker grid in a BGR picture of any size, and the next
    most likely grids after it (at most ``limit`` in all; empty when there
    is no grid at all). The first one has ``stands_out`` False when another
    grid fits about as well: then only the cube as a whole can tell which
    is the face (:mod:`vision.photos` tries them). Works on a copy about
    :data:`WORK_SIDE` across."""
    small, f = _work_copy(img)
    grainy = _grain(small) > GRAINY
    scored = grids(small, grainy)
    chosen = _choose(scored)
    if chosen is None and not grainy:
        # stickers mottled with colour texture too coarse to count as grain (an over-exposed camera's
        # clipped channels, heavy compression) break up into pieces: look again with it smoothed out
        again = grids(small, smooth=True)
        if (found := _choose(again)) is not None:
            scored, chosen = again, found
    if chosen is None:
        # a face cropped to its stickers: the outer stickers run into the picture's border, where no edge
        # closes them, so they are no candidates; with a dark frame round the picture (as black plastic
        # would be) the border becomes their edge
        framed = _framed(small, grainy)
        if (found := _choose(framed)) is not None:
            scored, chosen = framed, found
    viable = sorted((r for r in scored if r.score >= MIN_SCORE and r is not chosen), key=lambda r: -r.score)
    ranked: list[_Scored] = []
    for r in ([chosen] if chosen is not None else []) + viable:
        if not any(_same_place(r, k) for k in ranked):
            ranked.append(r)
    out = []
    for r in ranked:
        g = _to_grid(r, f, img.shape[:2], stands_out=r is chosen)
        if g is not None:
            out.append(g)
        if len(out) >= limit:
            break
    return out


def _framed(small: np.ndarray, smooth: bool) -> list[_Scored]:
    """:func:`grids` of the working copy with a dark frame round it (see
    :data:`BORDER_PAD`), in the working copy's own pixels."""
    pad = max(4, round(BORDER_PAD * min(small.shape[:2])))
    framed = cv2.copyMakeBorder(small, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(0, 0, 0))
    back = np.array([[1, 0, -pad], [0, 1, -pad], [0, 0, 1]], float)
    return [replace(r, hom=back @ r.hom) for r in grids(framed, smooth)]


def cut_edges(img: np.ndarray) -> list[str]:
    """The borders of a picture ("top", "right", "bottom", "left") that cut
    into the part of the face's stickers a reader samples, for a picture in
    which :func:`find_grids` found no grid: the face as found with the
    picture's border taken as an edge (:func:`_framed`). Empty when no face
    is found that way either."""
    small, f = _work_copy(img)
    chosen = _choose(_framed(small, _grain(small) > GRAINY))
    if chosen is None:
        return []
    h, w = img.shape[:2]
    reach = _apply(np.diag([1 / f, 1 / f, 1.0]) @ chosen.hom, _STICKER_AREA)
    slack = 0.01 * max(w, h)
    cuts = {"top": reach[:, 1] < -slack, "right": reach[:, 0] > w + slack,
            "bottom": reach[:, 1] > h + slack, "left": reach[:, 0] < -slack}
    return [edge for edge, out in cuts.items() if out.any()]


def find_grid(img: np.ndarray) -> Grid | None:
    """The face's sticker grid in a BGR picture of any size, or None when
    no grid stands out."""
    found = find_grids(img, 1)
    return found[0] if found and found[0].stands_out else None
