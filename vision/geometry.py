"""Setting a rig's geometry by clicking each face's corners in the live
image, and writing it as TOML for the configuration file."""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from .errors import VisionError
from .setup import CameraSpec, FaceSpec, ViewSpec


def order_corners(points: npt.ArrayLike) -> tuple[tuple[float, float], ...]:
    """Four clicked points, the first being the face's net top-left corner,
    -> the four in clockwise order on screen starting with that one.
    Rejects points that do not make a proper quadrilateral."""
    p = np.asarray(points, dtype=float)
    if p.shape != (4, 2) or not np.isfinite(p).all():
        raise VisionError("a face needs exactly four corner points")
    centre = p.mean(axis=0)
    ang = np.arctan2(p[:, 1] - centre[1], p[:, 0] - centre[0])  # image y is down: increasing = clockwise
    order = list(np.argsort(ang))
    k = order.index(0)
    order = order[k:] + order[:k]
    q = p[order]
    edges = np.roll(q, -1, axis=0) - q
    cross = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    if (cross <= 0).any() or min(np.linalg.norm(edges, axis=1)) < 10:
        raise VisionError("the four corners do not form a convex face at least 10 pixels across:"
                          " click them again")
    return tuple((round(float(x), 1), round(float(y), 1)) for x, y in q)


def _toml_value(v: object) -> str:
    """One value in TOML's own spelling (the standard library reads TOML but
    does not write it); only the kinds a view holds."""
    match v:
        case bool():
            return "true" if v else "false"
        case float() if math.isinf(v):
            return "inf"
        case int() | float():
            return repr(v)
        case str():
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        case list() | tuple():
            return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(type(v))


def geometry_toml(views: list[ViewSpec]) -> str:
    """The views as ``[[view]]`` tables with ``[[view.face]]`` entries, ready
    to paste into the rig's configuration."""
    lines = []
    for v in views:
        lines += ["[[view]]", f"name = {_toml_value(v.name)}", f"camera = {_toml_value(v.camera)}"]
        if v.hand_held:
            lines.append("hand_held = true")
        for f in v.faces:
            lines += ["", "[[view.face]]", f"face = {_toml_value(f.face)}",
                      f"corners = {_toml_value([list(c) for c in f.corners])}",
                      f"top_left = {f.top_left}"]
            if not f.center_visible:
                lines.append("center_visible = false")
        lines.append("")
    return "\n".join(lines)


def click_geometry(camera: CameraSpec, view_name: str, faces: str, *,
                   frame: np.ndarray | None = None) -> ViewSpec:
    """Interactive: the user clicks the four corners of each face, starting
    at the corner that is top-left in the net (U above F; L F R B; D below F),
    then around the face. Backspace undoes a click. Needs a display."""
    from .capture import open_camera
    from .preview import has_display

    if not has_display():
        raise VisionError("clicking the corners needs a display (no DISPLAY set): on a headless machine run"
                          " `cuberobot serve` and use the web panel's Calibrate card (drag each face's"
                          " corners, then save), or write the corners into the config (docs/vision.md)")
    if frame is None:
        cam = open_camera(camera)
        try:
            frame = cam.grab()
        finally:
            cam.close()
    window = f"cuberobot geometry: {view_name}"
    clicks: list[tuple[float, float]] = []
    done: list[FaceSpec] = []
    cv2.namedWindow(window, cv2.WINDOW_NORMAL)
    def on_mouse(event: int, x: int, y: int, *_: object) -> None:
        if event == cv2.EVENT_LBUTTONDOWN:
            clicks.append((float(x), float(y)))

    cv2.setMouseCallback(window, on_mouse)
    try:
        while len(done) < len(faces):
            face = faces[len(done)]
            img = frame.copy()
            for f in done:
                cv2.polylines(img, [np.round(np.array(f.corners)).astype(np.int32)], True, (0, 255, 0), 2)
            for x, y in clicks:
                cv2.circle(img, (int(x), int(y)), 5, (0, 255, 255), -1)
            msg = (f"face {face}: click corner {len(clicks) + 1} of 4 (first: net top-left, then clockwise)"
                   " | Backspace: undo | q: quit")
            cv2.putText(img, msg, (8, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 255, 255), 2, cv2.LINE_AA)
            cv2.imshow(window, img)
            key = cv2.waitKey(30) & 0xFF
            if key == 8 and clicks:
                clicks.pop()
            elif key in (27, ord("q")):
                raise VisionError("geometry calibration cancelled")
            if len(clicks) >= 4:
                try:
                    done.append(FaceSpec(face, order_corners(clicks[:4]), 0))
                except VisionError as e:
                    print(e)
                clicks.clear()
    finally:
        cv2.destroyWindow(window)
    return ViewSpec(view_name, camera.name, tuple(done))
