"""Photo sets that stand for the hard cases of issue 47, for the tests and
``benchmarks/vision_photo_turns.py``: cubes whose faces look alike when
turned (solved, one or two turns from solved, checkerboards, stripes, the
superflip, crosses), each face rendered by :mod:`photo_render` in a random
quarter turn and cropped from loose (a pitch of background round the face)
to tight (the picture's border on the stickers' black edge, or cutting
them). Nothing here is tuned to one set of photos: the families are the
symmetric patterns any cube shows, the turns and crops are drawn at random."""

from __future__ import annotations

import numpy as np
from photo_render import render_face_photo, rotate_net

from solver import SOLVED_CUBE, random_cube

MOVES = [f + s for f in "URFDLB" for s in ("", "'", "2")]
PATTERNS = {
    "solved": "",
    "checkerboard": "R2 L2 U2 D2 F2 B2",
    "half checkerboard": "R2 L2 U2 D2",
    "stripes R L'": "R L'",
    "stripes U D'": "U D'",
    "stripes R2 L2": "R2 L2",
    "stripes F2 B2": "F2 B2",
    "superflip": "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2",
    "dots": "R L' U D' F B' R L'",
    "cross": "R2 L' D F2 R' D' R' L U' D R D B2 R' U D2",
}
FAMILIES = ("pattern", "one turn", "two turns", "random")


def symmetric_cube(family: str, rng: np.random.Generator) -> tuple[str, str]:
    """(name, facelets) of a cube of ``family``: a named pattern, one or two
    turns from solved, or (the control) a random cube."""
    if family == "pattern":
        name = list(PATTERNS)[int(rng.integers(len(PATTERNS)))]
        return name, SOLVED_CUBE.apply(PATTERNS[name]).to_facelets()
    if family == "one turn":
        move = MOVES[int(rng.integers(len(MOVES)))]
        return move, SOLVED_CUBE.apply(move).to_facelets()
    if family == "two turns":
        a, b = (MOVES[int(i)] for i in rng.integers(len(MOVES), size=2))
        return f"{a} {b}", SOLVED_CUBE.apply(f"{a} {b}").to_facelets()
    seed = int(rng.integers(2**31))
    return f"random {seed}", random_cube(seed).to_facelets()


def crop(image: np.ndarray, corners: np.ndarray, margin: float) -> np.ndarray:
    """The picture cut to the face's outline (``corners``, (4, 2)) plus
    ``margin`` sticker pitches all round (negative: into the face)."""
    pitch = float(np.mean(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1))) / 3
    h, w = image.shape[:2]
    lo = np.floor(corners.min(axis=0) - margin * pitch).astype(int)
    hi = np.ceil(corners.max(axis=0) + margin * pitch).astype(int)
    x0, y0 = max(0, lo[0]), max(0, lo[1])
    x1, y1 = min(w, hi[0]), min(h, hi[1])
    return np.ascontiguousarray(image[y0:y1, x0:x1])


def photo_set(facelets: str, rng: np.random.Generator, margin: float | tuple[float, float] = (0.0, 1.2),
              size: tuple[int, int] = (1280, 960)) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """Six pictures (BGR) of the cube ``facelets``, each face in a random
    quarter turn and cropped ``margin`` pitches round its outline (a range:
    drawn for each photo), and the turns drawn."""
    pictures, turns = {}, {}
    for k, face in enumerate("URFDLB"):
        turns[face] = int(rng.integers(4))
        shot = render_face_photo(facelets[9 * k:9 * k + 9], size, rng, rotation=turns[face])
        m = margin if isinstance(margin, float) else float(rng.uniform(*margin))
        pictures[face] = crop(shot.image, shot.corners, m)
    return pictures, turns


__all__ = ["FAMILIES", "PATTERNS", "crop", "photo_set", "rotate_net", "symmetric_cube"]
