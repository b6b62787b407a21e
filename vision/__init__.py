"""Colour vision: webcam frames to a facelet string. Knows nothing about robots."""

from .errors import VisionError

__all__ = ["VisionError"]
