"""Showing a scan: the annotated picture (usable without a display) and the
interactive window where a click on a sticker cycles its colour."""

from __future__ import annotations

import os

import cv2
import numpy as np

from solver.facelets import FACES, position_name

from .errors import VisionError
from .render import net_to_image

DOUBT = (255, 0, 255)  # magenta: easy to see on every sticker colour
KEYS = "click sticker: change colour | Enter: accept | r: rescan | q/Esc: quit"


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) or os.name == "nt"


def _sticker_geometry(face):
    """Centres and radii of the 9 stickers of a face in image pixels."""
    h = net_to_image(face)
    pts = np.array([[c + 0.5, r + 0.5, 1.0] for r in range(3) for c in range(3)])
    p = pts @ h.T
    centres = p[:, :2] / p[:, 2:3]
    quad = np.array([[0, 0, 1], [3, 0, 1], [3, 3, 1], [0, 3, 1]], float) @ h.T
    quad = quad[:, :2] / quad[:, 2:3]
    size = float(np.sqrt(abs(cv2.contourArea(quad.astype(np.float32)))) / 3)
    return centres, quad, size


def annotate(image: np.ndarray, view, result) -> np.ndarray:
    """The camera image with face outlines, each sticker's measured colour
    and letter, doubtful stickers ringed in magenta, and the keys."""
    out = image.copy()
    facelets = result.facelets if hasattr(result, "facelets") else result.classification.facelets
    cls = getattr(result, "classification", result)
    suspects = set(cls.suspects)
    samples = getattr(result, "samples", None)
    for face in view.faces:
        k = FACES.index(face.face)
        centres, quad, size = _sticker_geometry(face)
        cv2.polylines(out, [np.round(quad).astype(np.int32)], True, (255, 255, 255), 2, cv2.LINE_AA)
        tl = quad[0]
        cv2.putText(out, face.face, (int(tl[0]) - 18, int(tl[1]) - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.8,
                    (255, 255, 255), 2, cv2.LINE_AA)
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
    status = "OK" if cls.ok else (f"{len(cls.suspects)} in doubt: "
                                  + " ".join(position_name(i) for i in sorted(suspects)[:10]))
    cv2.rectangle(out, (0, 0), (out.shape[1], 56), (0, 0, 0), -1)
    cv2.putText(out, f"{view.name}: {status}", (8, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                (0, 255, 0) if cls.ok else DOUBT, 1, cv2.LINE_AA)
    cv2.putText(out, KEYS, (8, 46), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def sticker_at(view, x: float, y: float) -> int | None:
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


def interactive(result, *, window: str = "cuberobot scan") -> tuple[str, str]:
    """Show the scan; returns (action, facelets) with action 'accept',
    'rescan' or 'quit'. Needs a display."""
    if not has_display():
        raise VisionError("the preview needs a display (no DISPLAY set): use --save-debug DIR instead")
    state = {"facelets": result.facelets}
    views = result.views
    frames = result.frames
    widths = [frames[v.name].shape[1] for v in views]
    offsets = np.cumsum([0] + widths[:-1])

    def on_mouse(event, x, y, flags, param):
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
            shown = type(result)(**{**result.__dict__, "facelets": state["facelets"]})
            tiles = [annotate(frames[v.name], v, shown) for v in views]
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
