"""The terminal's face on the press-start engine: lines of text, a live
progress line on a terminal, and (unless headless, where a display exists)
the OpenCV preview window that shows the plan and lets a person fix a
doubtful scan by clicking stickers."""

from __future__ import annotations

import select
import sys
from collections.abc import Callable

import numpy as np

from solver.facelets import position_name

from .events import Answer, Doubt, Event, Face

PRINTED = frozenset(("recapture", "look-again", "solution"))
"""Events whose sentence is printed as it is."""


class TerminalFace(Face):
    """What `cuberobot start` shows. ``out`` prints a line (stdout)."""

    def __init__(self, out: Callable[[str], None], *, headless: bool):
        self.out = out
        self.headless = headless
        self.interactive = sys.stdin is not None and sys.stdin.isatty()
        self.auto_start = headless or not self.interactive
        self.tty = sys.stderr.isatty()
        self.window: str | None = None
        self.scan_image: np.ndarray | None = None
        self.images: dict[str, np.ndarray] = {}
        self.steps: list[str] = []
        self.progress_shown = False
        self.progress_width = 0
        """The length of the progress line on the screen (0: none open)."""
        self.stage: str | None = None

    # -- events ------------------------------------------------------------
    def emit(self, event: Event) -> None:
        kind = event.kind
        if kind in PRINTED:
            self.out(event.text)
        elif kind == "waiting":
            self._waiting(event)
        elif kind == "scan" and event.result is not None:
            self.images = dict(event.result.images)
        elif kind == "fix-invalid":
            print(event.text, file=sys.stderr)
        elif kind == "turn-started":
            self._stage(event)
            if event.data["index"] == 0:
                self._show_plan(0)
        elif kind == "turn-done":
            self._turn_done(event)
        elif kind == "finished" and event.data.get("status") == "already-solved":
            self.out(event.text)
        if kind == "solution":
            self.steps = list(event.data["steps"])

    def _waiting(self, event: Event) -> None:
        if event.data.get("press") == "simulated":
            self.out(event.text)
            return
        self.out(event.text + (" or Enter" if self.interactive else ""))
        if self.headless:
            return
        from vision.preview import has_display  # lazy: loads OpenCV

        if has_display():
            import cv2

            self.window = "cuberobot"
            blank = np.zeros((120, 640, 3), np.uint8)
            cv2.putText(blank, "press SPACE, Enter or the rig's button to start", (10, 65),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1)
            cv2.imshow(self.window, blank)

    def _show_plan(self, done: int) -> None:
        """The scan pictures with the plan under them, in the preview window."""
        if self.headless or not self.images:
            return
        from vision.preview import has_display  # lazy: loads OpenCV

        if not has_display():
            return
        import cv2

        if self.scan_image is None:
            tiles = list(self.images.values())
            height = min(t.shape[0] for t in tiles)
            joined = np.hstack([cv2.resize(t, (t.shape[1] * height // t.shape[0], height)) for t in tiles])
            scale = min(1.0, 1600 / joined.shape[1])
            self.scan_image = cv2.resize(joined, None, fx=scale, fy=scale)
        cv2.imshow("cuberobot", plan_picture(self.scan_image, self.steps, done))
        cv2.waitKey(1)

    def _stage(self, event: Event) -> None:
        """With CFOP, a line as each stage begins: what the rig demonstrates now."""
        stage = event.data.get("stage")
        if stage is None or stage == self.stage:
            return
        self.stage = stage
        self.close()
        self.out(f"stage {stage}")

    def _turn_done(self, event: Event) -> None:
        d = event.data
        self._show_plan(d["index"] + 1)
        if self.tty:
            line = (f"turn {d['index'] + 1} of {d['turns']}  {d['step']:<7} elapsed "
                    f"{d['elapsed_s']:5.1f} s  remaining ~{d['remaining_s']:4.1f} s ")
            # spaces over what a longer line before it left (a flipper's "turn -1 (R')"
            # followed by "flip"): plain padding, which every terminal understands
            sys.stderr.write("\r" + line.ljust(self.progress_width))
            sys.stderr.flush()
            self.progress_width = len(line)
            self.progress_shown = True
            if d["index"] + 1 == d["turns"]:
                self.close()

    def close(self) -> None:
        """End an unfinished progress line."""
        if self.progress_shown:
            sys.stderr.write("\n")
            self.progress_shown = False
        self.progress_width = 0

    # -- the person ----------------------------------------------------------
    def pressed(self) -> str | None:
        if self.interactive and select.select([sys.stdin], [], [], 0)[0]:
            sys.stdin.readline()
            return "enter"
        if self.window is not None:
            import cv2

            if cv2.waitKey(1) & 0xFF == 32:
                return "space"
        return None

    def ask(self, doubt: Doubt) -> Answer | None:
        """The preview window: click stickers to fix them, Enter to accept."""
        if self.headless:
            return None
        from vision.preview import has_display, interactive  # lazy: loads OpenCV

        if not has_display():
            return Answer("stop", message=f"doubtful stickers {_names(doubt.doubtful)} ({doubt.why}) and no "
                          "display to fix them on: run where a preview window can open, or recalibrate the "
                          "colours")
        action, facelets = interactive(doubt.result)
        if action == "quit":
            return Answer("stop", message="scan rejected in the preview; no motor was moved")
        return Answer(action, facelets)


def _names(indices: list[int]) -> str:
    return ", ".join(position_name(i) for i in indices)


def plan_picture(scan_image: np.ndarray, steps: list[str], done: int) -> np.ndarray:
    """The scan with the plan under it: turns done in grey, the next one
    highlighted, the rest in white."""
    import cv2

    h, w = scan_image.shape[:2]
    per_row = 12
    rows = (len(steps) + per_row - 1) // per_row
    band = np.zeros((40 + 34 * rows, w, 3), np.uint8)
    cv2.putText(band, f"turn {min(done + 1, len(steps))} of {len(steps)}", (10, 28),
                cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2)
    cell = max(60, (w - 20) // per_row)
    for i, text in enumerate(steps):
        x, y = 10 + (i % per_row) * cell, 66 + (i // per_row) * 34
        colour = (110, 110, 110) if i < done else ((0, 215, 255) if i == done else (255, 255, 255))
        cv2.putText(band, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.7, colour, 2)
    return np.vstack([scan_image, band])
