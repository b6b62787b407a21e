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

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CameraSpec:
    name: str
    source: str | int
    """A device index (0), a video file, an image sequence ('frames/%03d.png'),
    or 'sim' for the simulated camera."""
    width: int = 1280
    height: int = 720
    auto_exposure: bool = False
    auto_white_balance: bool = False
    warmup_frames: int = 5
    average_frames: int = 3
    timeout_s: float = 5.0


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
