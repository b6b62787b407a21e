"""What OpenCV may decode in this process, shared by every face that
decodes a picture (the panel's uploads, a command camera's frames, the
photos of ``scan --images``), and a bounded read of a picture file.

OpenCV reads ``OPENCV_IO_MAX_IMAGE_PIXELS`` once, when it is loaded, and
by default lets a picture claim a billion pixels (3 GB of BGR). Importing
:mod:`vision` sets the cap before OpenCV is loaded; what reads a picture
checks its size from the header first (vision/photos.py, vision/stream.py),
and the cap is the second net, for a picture a decoder sizes differently.
This module imports nothing heavy, so the panel's server can set the cap
before anything loads OpenCV."""

from __future__ import annotations

import os
import sys

MAX_DECODED_PIXELS = 64_000_000
"""8000 x 8000: the largest photo vision/photos.py accepts
(MAX_PHOTO_PIXELS), and far above any camera's frame."""


def cap_decoders() -> bool:
    """Set OpenCV's pixel cap for this process, lowering any larger one
    given; True when it takes effect (OpenCV not loaded yet)."""
    given = os.environ.get("OPENCV_IO_MAX_IMAGE_PIXELS", "")
    if not given.isdigit() or int(given) > MAX_DECODED_PIXELS:
        os.environ["OPENCV_IO_MAX_IMAGE_PIXELS"] = str(MAX_DECODED_PIXELS)
    return "cv2" not in sys.modules


def read_up_to(fd: int, limit: int) -> bytes:
    """What ``fd`` holds up to its end, but never more than ``limit + 1``
    bytes: the caller refuses the file when it gets more than ``limit`` (a
    file that grew after its size was looked at). The robot's own files are
    read by robot/rig/config.py's twin of this; vision knows nothing of the
    robot."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, min(limit + 1 - size, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
