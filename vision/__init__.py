"""Colour vision: webcam frames to a facelet string. Knows nothing about robots."""

from .errors import VisionError

__all__ = ["Classification", "ScanResult", "VisionError", "classify", "scan"]


def __getattr__(name: str):
    # OpenCV and numba load only when vision is used, not for every CLI command
    if name in ("classify", "Classification"):
        from . import classifier

        return getattr(classifier, name)
    if name in ("scan", "ScanResult"):
        from . import scanning

        return getattr(scanning, name)
    raise AttributeError(f"module 'vision' has no attribute {name!r}")
