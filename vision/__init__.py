"""Colour vision: webcam frames to a facelet string. Knows nothing about robots."""

from typing import TYPE_CHECKING

from .errors import VisionError
from .limits import cap_decoders

cap_decoders()  # before anything loads OpenCV: see vision/limits.py

if TYPE_CHECKING:  # what the lazy imports below give, for type checkers
    from .classifier import Classification, classify
    from .scanning import ScanResult, scan

__all__ = ["Classification", "ScanResult", "VisionError", "classify", "scan"]


def __getattr__(name: str) -> object:
    # OpenCV and numba load only when vision is used, not for every CLI command
    if name in ("classify", "Classification"):
        from . import classifier

        return getattr(classifier, name)
    if name in ("scan", "ScanResult"):
        from . import scanning

        return getattr(scanning, name)
    raise AttributeError(f"module 'vision' has no attribute {name!r}")
