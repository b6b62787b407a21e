"""The hand-held set-up: one webcam, the user showing each face in turn
inside an on-screen guide that says which face and which way up."""

from __future__ import annotations

import cv2
import numpy as np

from .capture import open_camera
from .errors import VisionError
from .render import Lighting
from .setup import CameraSpec, FaceSpec, ViewSpec

# Which face must be at the top of the picture when showing each face,
# so the stickers come out in net order.
UP_FACE = {"U": "B", "D": "F", "F": "U", "R": "U", "B": "U", "L": "U"}
ORDER = "URFDLB"


def guide_corners(width: int, height: int, fraction: float = 0.6) -> tuple[tuple[float, float], ...]:
    s = fraction * min(width, height)
    x0, y0 = (width - s) / 2, (height - s) / 2
    return ((x0, y0), (x0 + s, y0), (x0 + s, y0 + s), (x0, y0 + s))


def hand_held_view(camera: CameraSpec, name: str = "hand") -> ViewSpec:
    """One view for a hand-held camera: every face in the same guide square."""
    corners = guide_corners(camera.width, camera.height)
    return ViewSpec(name, camera.name, tuple(FaceSpec(f, corners, 0) for f in ORDER), hand_held=True)


def instruction(face: str) -> str:
    return f"Show face {face} in the square, with the {UP_FACE[face]} face on top; Space: capture, q: quit"


def draw_guide(image: np.ndarray, face: FaceSpec) -> np.ndarray:
    """The guide: the square to fill, its 3x3 grid, an arrow to the side
    that must be up, and the instruction."""
    out = image.copy()
    c = np.asarray(face.corners, float)
    c = np.roll(c, -face.top_left, axis=0)
    cv2.polylines(out, [np.round(c).astype(np.int32)], True, (0, 255, 255), 2, cv2.LINE_AA)
    for t in (1 / 3, 2 / 3):
        a, b = c[0] + t * (c[3] - c[0]), c[1] + t * (c[2] - c[1])
        cv2.line(out, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), (0, 255, 255), 1)
        a, b = c[0] + t * (c[1] - c[0]), c[3] + t * (c[2] - c[3])
        cv2.line(out, tuple(np.round(a).astype(int)), tuple(np.round(b).astype(int)), (0, 255, 255), 1)
    top_mid = (c[0] + c[1]) / 2
    tip = top_mid + (top_mid - (c[2] + c[3]) / 2) * 0.15
    cv2.arrowedLine(out, tuple(np.round(top_mid).astype(int)), tuple(np.round(tip).astype(int)),
                    (0, 255, 255), 3, cv2.LINE_AA, tipLength=0.4)
    cv2.putText(out, f"{UP_FACE[face.face]} up", tuple(np.round(tip + [8, 0]).astype(int)),
                cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 255, 255), 2, cv2.LINE_AA)
    cv2.rectangle(out, (0, out.shape[0] - 34), (out.shape[1], out.shape[0]), (0, 0, 0), -1)
    cv2.putText(out, instruction(face.face), (8, out.shape[0] - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                (255, 255, 255), 1, cv2.LINE_AA)
    return out


def capture_hand_held(spec: CameraSpec, view: ViewSpec, *, sim_state: str | None = None,
                      sim_seed: int | None = None, sim_lighting: Lighting | None = None
                      ) -> dict[str, np.ndarray]:
    """One frame per face, named '<view>:<face>'. A simulated camera shows
    each face in the guide by itself; a real one waits for the user."""
    frames = {}
    if spec.source == "sim":
        for i, face in enumerate(view.faces):
            one = ViewSpec(f"{view.name}:{face.face}", view.camera, (face,))
            seed = None if sim_seed is None else sim_seed * 10 + i
            cam = open_camera(spec, sim_state=sim_state, sim_seed=seed, sim_view=one,
                              sim_lighting=sim_lighting)
            try:
                frames[one.name] = cam.grab()
            finally:
                cam.close()
        return frames
    from .preview import has_display

    if not has_display():
        raise VisionError("hand-held scanning needs a display to show the guide (no DISPLAY set)")
    cam = open_camera(spec)
    window = "cuberobot hand-held scan"
    try:
        for face in view.faces:
            while True:
                frame = cam.grab()
                cv2.imshow(window, draw_guide(frame, face))
                key = cv2.waitKey(30) & 0xFF
                if key == 32:
                    frames[f"{view.name}:{face.face}"] = frame
                    break
                if key in (27, ord("q")):
                    raise VisionError("hand-held scan cancelled")
    finally:
        cam.close()
        cv2.destroyWindow(window)
    return frames
