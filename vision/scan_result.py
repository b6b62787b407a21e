"""What one scan found: the cube read, how sure of each sticker, and the
pictures. Apart from :mod:`vision.scanning`, which makes it, so that the
modules that show a scan (:mod:`vision.preview`) need not import the one
that captures it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .classifier import Classification
from .setup import ViewSpec


@dataclass
class ScanResult:
    facelets: str
    classification: Classification
    samples: np.ndarray  # (54, 3) RGB, NaN where not seen
    spread: np.ndarray  # (54,) ΔE spread within each sticker
    glare: np.ndarray  # (54,) fraction of each sticker's pixels lost to glare
    images: dict[str, np.ndarray] = field(default_factory=dict)  # annotated, per view
    frames: dict[str, np.ndarray] = field(default_factory=dict)  # as captured, per view
    views: list[ViewSpec] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.classification.ok
