"""From an image and a face's corners to nine robust sticker colours.

Each face is warped to a small square so every sticker is a grid cell; only
the inner part of a cell is used, so the black plastic between stickers and
small geometry errors stay out. Within a cell, pixels much brighter and
greyer than the rest (specular glare) or much darker (plastic, shadow) are
dropped before taking the median in CIELAB.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from .colour import lab_to_rgb, rgb_to_lab
from .setup import FaceSpec

CELL = 16  # warped pixels per sticker
INNER = 0.55  # fraction of the cell (per side) that is sampled


def face_to_square(face: FaceSpec, size: int) -> np.ndarray:
    """Homography from image pixels to the face's net square of ``size``."""
    c = np.roll(np.asarray(face.corners, dtype=np.float32), -face.top_left, axis=0)
    dst = np.array([[0, 0], [size, 0], [size, size], [0, size]], dtype=np.float32)
    return cv2.getPerspectiveTransform(c, dst)


def warp_face(image: np.ndarray, face: FaceSpec, cell: int = CELL) -> np.ndarray:
    size = 3 * cell
    return cv2.warpPerspective(image, face_to_square(face, size), (size, size), flags=cv2.INTER_AREA)


def _cells(warped: np.ndarray, cell: int) -> np.ndarray:
    """(9, n, 3) inner pixels of each sticker, net order."""
    m = int(round(cell * (1 - INNER) / 2))
    k = cell - 2 * m
    g = warped.reshape(3, cell, 3, cell, 3)[:, m:m + k, :, m:m + k, :]
    return g.transpose(0, 2, 1, 3, 4).reshape(9, k * k, 3)


def _ring(warped: np.ndarray, cell: int) -> np.ndarray:
    """(9, n, 3) pixels of each sticker just outside the sampled part: the
    reference that shows a reflection covering the whole middle."""
    m = int(round(cell * (1 - INNER) / 2))
    a = max(1, m // 2 + 1)
    g = warped.reshape(3, cell, 3, cell, 3).transpose(0, 2, 1, 3, 4).reshape(9, cell, cell, 3)
    mask = np.zeros((cell, cell), bool)
    mask[a:cell - a, a:cell - a] = True
    mask[m:cell - m, m:cell - m] = False
    return g[:, mask]


def robust_colours(pixels_bgr: np.ndarray, ring_bgr: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(m, n, 3) BGR pixels per sticker -> RGB colour (m, 3), spread in ΔE
    (m,), and the fraction of pixels dropped as glare (m,). Glare is light
    much brighter and greyer than the rest of the sticker or than its rim."""
    lab = rgb_to_lab(pixels_bgr[..., ::-1].astype(np.float64))
    L = lab[..., 0]
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    medL = np.median(L, axis=1, keepdims=True)
    medC = np.median(chroma, axis=1, keepdims=True)
    refL, refC = medL, medC
    if ring_bgr is not None:
        ring = rgb_to_lab(ring_bgr[..., ::-1].astype(np.float64))
        refL = np.minimum(medL, np.median(ring[..., 0], axis=1, keepdims=True))
        refC = np.maximum(medC, np.median(np.hypot(ring[..., 1], ring[..., 2]), axis=1, keepdims=True))
    glare = (L > refL + 12) & (chroma < 0.8 * refC + 5) | (pixels_bgr.min(axis=-1) >= 250) & (medL < 95)
    dark = L < medL - 25
    keep = ~(glare | dark)
    few = keep.sum(axis=1) < 0.2 * keep.shape[1]
    keep[few] = True  # mostly glare: the sticker is unreadable; its spread will say so
    masked = np.where(keep[..., None], lab, np.nan)
    med = np.nanmedian(masked, axis=1)
    spread = np.nanmedian(np.linalg.norm(masked - med[:, None, :], axis=-1), axis=1)
    glare_frac = glare.mean(axis=1)
    return lab_to_rgb(med), spread, glare_frac


def sample_faces(image: np.ndarray, faces: Sequence[FaceSpec]
                 ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """face letter -> (RGB (9, 3), spread (9,), glare fraction (9,)) for each FaceSpec."""
    if not faces:
        return {}
    warped = [warp_face(image, f) for f in faces]
    cells = np.concatenate([_cells(w, CELL) for w in warped], axis=0)
    rings = np.concatenate([_ring(w, CELL) for w in warped], axis=0)
    rgb, spread, glare = robust_colours(cells, rings)
    out = {}
    for k, f in enumerate(faces):
        sl = slice(9 * k, 9 * k + 9)
        out[f.face] = (rgb[sl], spread[sl], glare[sl])
    return out
