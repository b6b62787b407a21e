"""Showing a scan: the annotated picture (usable without a display) and the
interactive window where a click on a sticker cycles its colour."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

from solver.facelets import FACES, position_name

from .errors import VisionError
from .render import net_to_image
from .setup import FaceSpec, ViewSpec

if TYPE_CHECKING:  # scanning pulls in the classifier; drawing does not need it
    from .scan_result import ScanResult

DOUBT = (255, 0, 255)  # magenta: easy to see on every sticker colour
KEYS = "click sticker: change colour | Enter: accept | r: rescan | q/Esc: quit"
"""The interactive window's keys: drawn only there, never on saved pictures."""
BAR = 30  # height of the black status bar at the top (BAR_WITH_KEYS when the keys are shown)
BAR_WITH_KEYS = 56
LABEL_FONT = cv2.FONT_HERSHEY_SIMPLEX
LABEL_SCALE = 0.9  # face letters beside each face
LABEL_THICKNESS = 2


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) or os.name == "nt"


def _sticker_geometry(face: FaceSpec) -> tuple[np.ndarray, np.ndarray, float]:
    """Centres and radii of the 9 stickers of a face in image pixels."""
    h = net_to_image(face)
    pts = np.array([[c + 0.5, r + 0.5, 1.0] for r in range(3) for c in range(3)])
    p = pts @ h.T
    centres = p[:, :2] / p[:, 2:3]
    quad = np.array([[0, 0, 1], [3, 0, 1], [3, 3, 1], [0, 3, 1]], float) @ h.T
    quad = quad[:, :2] / quad[:, 2:3]
    size = float(np.sqrt(abs(cv2.contourArea(quad.astype(np.float32)))) / 3)
    return centres, quad, size


def label_position(quads: list[np.ndarray], k: int, text_size: tuple[int, int],
                   image_size: tuple[int, int], top: int = 0) -> tuple[float, float]:
    """Where face ``k``'s letter goes (the centre of its text box): just
    outside the face, on the line from the middle of the view through the
    middle of the face, so it stands beside the face it names and on no
    face; kept inside the ``image_size`` (width, height) picture and below
    its first ``top`` rows (the status bar). A view of one face gets its
    letter above the face."""
    centres = [q.mean(axis=0) for q in quads]
    c = centres[k]
    d = c - np.mean(centres, axis=0)
    n = float(np.linalg.norm(d))
    d = d / n if n > 1.0 else np.array([0.0, -1.0])
    hw, hh = text_size[0] / 2 + 4, text_size[1] / 2 + 4
    box = np.array([[x, y] for x in (-hw, 0, hw) for y in (-hh, 0, hh)])
    polys = [q.astype(np.float32) for q in quads]
    w, h = image_size
    p = c
    for step in range(0, 2 * max(w, h), 2):
        p = c + step * d
        if all(cv2.pointPolygonTest(q, (float(x), float(y)), True) < -2 for q in polys for x, y in p + box):
            break
    return (float(np.clip(p[0], hw, max(hw, w - hw))), float(np.clip(p[1], top + hh, max(top + hh, h - hh))))


def annotate(image: np.ndarray, view: ViewSpec, result: ScanResult, *, keys: bool = False) -> np.ndarray:
    """The camera image with face outlines, each face's letter beside it,
    each sticker's measured colour and letter, doubtful stickers ringed in
    magenta, and a status line; ``keys`` adds the interactive window's keys
    (for that window only: a saved picture cannot be clicked)."""
    out = image.copy()
    facelets = result.facelets  # the shown letters: the window's may differ from the classification's
    cls = result.classification
    suspects = set(cls.suspects)
    samples = result.samples
    quads = []
    for face in view.faces:
        k = FACES.index(face.face)
        centres, quad, size = _sticker_geometry(face)
        quads.append(quad)
        cv2.polylines(out, [np.round(quad).astype(np.int32)], True, (255, 255, 255), 2, cv2.LINE_AA)
        r = max(4, int(size * 0.22))
        for n in range(9):
            idx = 9 * k + n
            cx, cy = (int(round(v)) for v in centres[n])
            if samples is not None and not np.isnan(samples[idx]).any():
                rgb = samples[idx]
                cv2.circle(out, (cx, cy), r, tuple(float(v) for v in rgb[::-1]), -1, cv2.LINE_AA)
            cv2.circle(out, (cx, cy), r, (0, 0, 0), 1, cv2.LINE_AA)
            letter = facelets[idx] if idx < len(facelets) else "?"
            scale = max(0.35, size / 90)
            (tw, th), _ = cv2.getTextSize(letter, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
            org = (cx - tw // 2, cy + th // 2)
            cv2.putText(out, letter, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.putText(out, letter, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1, cv2.LINE_AA)
            if idx in suspects:
                cv2.circle(out, (cx, cy), int(size * 0.45), DOUBT, 3, cv2.LINE_AA)
    bar = BAR_WITH_KEYS if keys else BAR
    status = "OK" if cls.ok else (f"{len(cls.suspects)} in doubt: "
                                  + " ".join(position_name(i) for i in sorted(suspects)[:10]))
    cv2.rectangle(out, (0, 0), (out.shape[1], bar), (0, 0, 0), -1)
    cv2.putText(out, f"{view.name}: {status}", (8, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                (0, 255, 0) if cls.ok else DOUBT, 1, cv2.LINE_AA)
    if keys:
        cv2.putText(out, KEYS, (8, 46), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    # the face letters last, so no sticker, outline or bar covers one
    for k, face in enumerate(view.faces):
        (tw, th), _ = cv2.getTextSize(face.face, LABEL_FONT, LABEL_SCALE, LABEL_THICKNESS)
        x, y = label_position(quads, k, (tw, th), (out.shape[1], out.shape[0]), bar)
        org = (int(round(x - tw / 2)), int(round(y + th / 2)))
        cv2.putText(out, face.face, org, LABEL_FONT, LABEL_SCALE, (0, 0, 0), LABEL_THICKNESS + 3, cv2.LINE_AA)
        cv2.putText(out, face.face, org, LABEL_FONT, LABEL_SCALE, (255, 255, 255), LABEL_THICKNESS,
                    cv2.LINE_AA)
    return out


def sticker_at(view: ViewSpec, x: float, y: float) -> int | None:
    """The facelet index under image point (x, y), if any."""
    for face in view.faces:
        h = np.linalg.inv(net_to_image(face))
        p = h @ [x, y, 1.0]
        u, v = p[0] / p[2], p[1] / p[2]
        if 0 <= u < 3 and 0 <= v < 3:
            return 9 * FACES.index(face.face) + 3 * int(v) + int(u)
    return None


def cycle_letter(facelets: str, index: int) -> str:
    """The manual fix: the clicked sticker takes the next face's colour."""
    if index % 9 == 4:
        return facelets  # centres define the colours; they do not change
    nxt = FACES[(FACES.index(facelets[index]) + 1) % 6]
    return facelets[:index] + nxt + facelets[index + 1:]


def interactive(result: ScanResult, *, window: str = "cuberobot scan") -> tuple[str, str]:
    """Show the scan; returns (action, facelets) with action 'accept',
    'rescan' or 'quit'. Needs a display."""
    if not has_display():
        raise VisionError("the preview needs a display (no DISPLAY set): use --save-debug DIR instead")
    state = {"facelets": result.facelets}
    views = result.views
    frames = result.frames
    widths = [frames[v.name].shape[1] for v in views]
    offsets = np.cumsum([0] + widths[:-1])

    def on_mouse(event: int, x: int, y: int, flags: int, param: object) -> None:
        if event != cv2.EVENT_LBUTTONDOWN:
            return
        for v, off in zip(views, offsets):
            idx = sticker_at(v, x - off, y)
            if idx is not None:
                state["facelets"] = cycle_letter(state["facelets"], idx)
                return

    cv2.namedWindow(window, cv2.WINDOW_NORMAL)
    cv2.setMouseCallback(window, on_mouse)
    try:
        while True:
            shown = replace(result, facelets=state["facelets"])
            tiles = [annotate(frames[v.name], v, shown, keys=True) for v in views]
            hmax = max(t.shape[0] for t in tiles)
            tiles = [np.pad(t, ((0, hmax - t.shape[0]), (0, 0), (0, 0))) for t in tiles]
            cv2.imshow(window, np.hstack(tiles))
            key = cv2.waitKey(50) & 0xFF
            if key in (13, 10, 32):
                return "accept", state["facelets"]
            if key == ord("r"):
                return "rescan", state["facelets"]
            if key in (27, ord("q")):
                return "quit", state["facelets"]
    finally:
        cv2.destroyWindow(window)
