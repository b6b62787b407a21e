"""Scanning on a rig that moves the cube: one camera, six pictures.

The rig follows the scan plan (robot/rig/mechanisms/scanplan.py), showing
each face in turn to the camera's slot; each picture's nine stickers are
measured in that slot, turned into the face's own reading by the plan's
rotation and put where that face belongs; then the 54 samples are
classified with ``faces_apart``, each face judged in its own picture's
light, as photos are (vision/scanning.py). What shows a face and what takes
the picture are passed in, so the same code scans with the virtual
mechanism's rendered camera and with a real rig's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solver import FACES
from vision.sample import sample_faces
from vision.scanning import ScanResult, classify_measured
from vision.setup import ViewSpec

from ..rig.mechanisms.base import Action
from ..rig.mechanisms.scanplan import CAMERA_SLOT, ScanPlan, rotate_grid

Measured = tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]
"""``(samples (54, 3), spread (54,), glare (54,), frames)``, NaN where no picture showed a sticker."""


def capture_shots(plan: ScanPlan, view: ViewSpec, show: Callable[[Action], None],
                  capture: Callable[[], np.ndarray], slot: int = CAMERA_SLOT) -> Measured:
    """Make the plan's moves and measure its pictures through ``view`` (the
    camera's one face entry: the slot it sees), each face's stickers put in
    the face's own reading."""
    spec = next((f for f in view.faces if f.face == FACES[slot]), None)
    if spec is None:
        raise ValueError(f"view {view.name!r} has no face entry for the camera's slot {FACES[slot]}")
    samples = np.full((54, 3), np.nan)
    spread = np.zeros(54)
    glare = np.zeros(54)
    frames: dict[str, np.ndarray] = {}
    for shot in plan.shots:
        for action in shot.before:
            show(action)
        image = capture()
        rgb, sp, gl = sample_faces(image, [spec])[spec.face]
        where = slice(9 * shot.face, 9 * shot.face + 9)
        samples[where] = np.array(rotate_grid(list(rgb), shot.turns))
        spread[where] = rotate_grid(list(sp), shot.turns)
        glare[where] = rotate_grid(list(gl), shot.turns)
        frames[f"{view.name}:{FACES[shot.face]}:{shot.turns}"] = image
    return samples, spread, glare, frames


def scan_with_plan(plan: ScanPlan, view: ViewSpec, show: Callable[[Action], None],
                   capture: Callable[[], np.ndarray], slot: int = CAMERA_SLOT) -> ScanResult:
    """Make the plan's moves, take its six pictures and read the cube."""
    samples, spread, glare, frames = capture_shots(plan, view, show, capture, slot)
    result = classify_measured(samples, spread, glare, faces_apart=True)
    return ScanResult(result.facelets, result, samples, spread, glare, frames=frames)
