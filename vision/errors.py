"""Errors of the vision library."""


class VisionError(Exception):
    """A camera or image problem the user can act on (missing camera, black
    frames, a geometry that does not fit the image, a bad profile)."""

    exit_code = 1
