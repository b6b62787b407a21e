"""What the vision code needs to know about the set-up: cameras and views.

These are plain data; the robot's configuration loader validates the TOML
and builds them, and the vision code only reads them.

A *view* is one camera frame showing one or more faces. For each face the
four corners are given in image pixels, in order around the face
(clockwise as seen in the image), and ``top_left`` says which of the four is
the face's top-left sticker corner as drawn in the net (U above F; L F R B in
a row; D below F), so stickers come out in facelet order whatever way up the
camera sees the face.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CameraSpec:
    name: str
    source: str | int
    """A device index (0), a V4L2 device path ('/dev/video0',
    '/dev/v4l/by-id/...'), 'libcamera' (or 'libcamera:N') for a camera
    driven by libcamera, read as MJPEG from rpicam-vid, a video file, an
    image sequence ('frames/%03d.png'), or 'sim' for the simulated camera.
    Ignored when ``command`` is given."""
    width: int = 1280
    height: int = 720
    auto_exposure: bool = False
    auto_white_balance: bool = False
    warmup_frames: int = 5
    average_frames: int = 3
    timeout_s: float = 5.0
    command: tuple[str, ...] = ()
    """A program and its arguments that write MJPEG (JPEG after JPEG) to
    their standard output; when given, frames are read from it."""


CAMERA_KINDS = ("index", "device", "libcamera", "command", "sim", "file")

LIBCAMERA = "libcamera"


def camera_kind(spec: CameraSpec) -> str:
    """How a camera is opened: one of :data:`CAMERA_KINDS`."""
    if spec.command:
        return "command"
    src = spec.source
    if isinstance(src, int) or src.isascii() and src.isdigit():
        return "index"
    if src == "sim":
        return "sim"
    if src == LIBCAMERA or src.startswith(LIBCAMERA + ":"):
        return "libcamera"
    if src.startswith("/dev/"):
        return "device"
    return "file"


def libcamera_index(spec: CameraSpec) -> int:
    """The N of ``libcamera:N`` (0 for plain ``libcamera``); -1 when N is not a number."""
    _, _, n = str(spec.source).partition(":")
    return int(n) if n.isascii() and n.isdigit() and len(n) < 6 else (0 if not n else -1)


@dataclass(frozen=True)
class FaceSpec:
    face: str  # one of "URFDLB"
    corners: tuple[tuple[float, float], ...]  # four (x, y) image points, clockwise in the image
    top_left: int = 0  # index into corners of the net's top-left corner
    center_visible: bool = True


@dataclass(frozen=True)
class ViewSpec:
    name: str
    camera: str  # CameraSpec.name
    faces: tuple[FaceSpec, ...] = field(default_factory=tuple)
    hand_held: bool = False
    """One face at a time shown to the camera inside an on-screen guide; the
    view then has one FaceSpec per face, all with the guide's corners."""


# --- the default simulated rig --------------------------------------------

# Each face as drawn in the net: its top-left corner in cube coordinates
# (x towards R, y towards U, z towards F, the cube spanning -1.5..1.5) and
# the directions of the net's "right" and "down".
NET_FRAMES = {
    "U": ((-1.5, 1.5, -1.5), (1, 0, 0), (0, 0, 1)),
    "R": ((1.5, 1.5, 1.5), (0, 0, -1), (0, -1, 0)),
    "F": ((-1.5, 1.5, 1.5), (1, 0, 0), (0, -1, 0)),
    "D": ((-1.5, -1.5, 1.5), (1, 0, 0), (0, 0, -1)),
    "L": ((-1.5, 1.5, -1.5), (0, 0, 1), (0, -1, 0)),
    "B": ((1.5, 1.5, -1.5), (-1, 0, 0), (0, -1, 0)),
}


def project_face(face: str, position: Sequence[float], up: Sequence[float], *, focal: float,
                 size: tuple[int, int]) -> FaceSpec:
    """The FaceSpec a pinhole camera at ``position`` looking at the cube's
    centre would see (corners in net order, so ``top_left`` is 0)."""
    import numpy as np

    pos = np.asarray(position, float)
    fwd = -pos / np.linalg.norm(pos)
    right = np.cross(fwd, np.asarray(up, float))
    right /= np.linalg.norm(right)
    true_up = np.cross(right, fwd)
    tl, r, d = (np.asarray(v, float) for v in NET_FRAMES[face])
    pts = []
    for p in (tl, tl + 3 * r, tl + 3 * r + 3 * d, tl + 3 * d):
        rel = p - pos
        z = rel @ fwd
        pts.append((round(float(size[0] / 2 + focal * (rel @ right) / z), 2),
                    round(float(size[1] / 2 - focal * (rel @ true_up) / z), 2)))
    return FaceSpec(face=face, corners=tuple(pts), top_left=0)


def default_sim_setup() -> tuple[list[CameraSpec], list[ViewSpec]]:
    """Two simulated 1280x720 cameras at opposite corners of the cube: A
    sees U, R, F from the URF corner, B sees D, L, B from the DBL corner."""
    size = (1280, 720)
    cams = [CameraSpec("A", "sim", *size), CameraSpec("B", "sim", *size)]
    d = 12.0
    views = [
        ViewSpec("A", "A", tuple(project_face(f, (d, d, d), (0, 1, 0), focal=2100, size=size)
                                 for f in "URF")),
        ViewSpec("B", "B", tuple(project_face(f, (-d, -d, -d), (0, -1, 0), focal=2100, size=size)
                                 for f in "DLB")),
    ]
    return cams, views
