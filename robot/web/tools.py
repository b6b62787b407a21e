"""The panel's workshop pages, beside the runs: live camera pictures, colour
calibration, the sticker grid, the last runs' records, and six photos read
into a cube. Each is a thin layer over the function the terminal's command
uses (robot/app/calibrate.py, vision.photos), so both faces do the same.

Nothing here runs while a run holds the rig and cameras (:class:`Busy`):
real cameras cannot be opened twice, and a profile or grid changed under a
scan would make it read the wrong thing."""

from __future__ import annotations

import re
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..rig.errors import UserError
from .panel import Busy, Panel, state_dir_runs

if TYPE_CHECKING:
    from vision.setup import ViewSpec

LIVE_MAX_AGE_S = 0.8
"""A live picture is taken again when older than this (every open page
shares it: two pages do not capture twice as often)."""
JPEG_QUALITY = 80
MAX_RUNS_LISTED = 20
RUN_ID = re.compile(r"^\d{8}-\d{6}(-\d{1,3})?$")
PICTURE_NAME = re.compile(r"^(scan|confirm)-[A-Za-z0-9_.-]{1,64}$")
PHOTO_FACES = "URFDLB"


def jpeg(img: np.ndarray) -> bytes:
    import cv2

    ok, data = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise UserError("could not encode the picture as JPEG")
    return data.tobytes()


def _idle(panel: Panel, what: str) -> None:
    if panel.running():
        raise Busy(f"a run is going on: {what} waits until it ends (the cameras and the rig are in use)")


# ---------------------------------------------------------------- live pictures


class Live:
    """Every view captured and read afresh (at most every LIVE_MAX_AGE_S),
    each drawn with its faces' outlines, the stickers' readings and the
    doubtful ones ringed. During a run the cameras are the run's: the run's
    latest scan pictures are shown instead."""

    def __init__(self, panel: Panel):
        self.panel = panel
        self.lock = threading.Lock()
        self.taken = 0.0
        self.pictures: dict[str, bytes] = {}
        self.reading: dict[str, Any] = {}

    def picture(self, view: str) -> tuple[bytes, str]:
        """(JPEG, "live" or "scan") for ``view``; KeyError if it has none."""
        if self.panel.running():
            return self.panel.images[view], "scan"
        with self.lock:
            self._fresh()
            return self.pictures[view], "live"

    def read(self) -> dict[str, Any]:
        """What the cameras see now: the cube read, the doubtful stickers and
        the views (whose pictures :meth:`picture` gives)."""
        if self.panel.running():
            status = self.panel.snapshot()
            return {"source": "scan", "facelets": status["facelets"], "doubtful": status["doubtful"],
                    "views": status["views"]}
        with self.lock:
            self._fresh()
            return {"source": "live", **self.reading}

    def _fresh(self) -> None:
        if time.monotonic() - self.taken > LIVE_MAX_AGE_S:
            self.capture()

    def capture(self) -> None:
        from solver import SOLVED
        from vision.preview import annotate
        from vision.scanning import (
            ScanResult,
            capture_frames,
            classify_measured,
            expand_views,
            faces_seen_apart,
            measure,
        )

        from ..app.start import _profile

        cfg = self.panel.cfg
        shown = self.panel.status.facelets or SOLVED  # what simulated cameras show: the last cube seen
        flat = expand_views(cfg.views)
        frames = capture_frames(cfg.cameras, cfg.views, sim_state=shown)
        samples, spread, glare = measure(frames, flat, _profile(cfg))
        cls = classify_measured(samples, spread, glare, profile=_profile(cfg),
                                faces_apart=faces_seen_apart(cfg.views))
        low = {i for i in range(54) if cls.confidence[i] < cfg.start.min_confidence}
        doubt = sorted(set(cls.suspects) | low)
        cls.suspects = doubt  # drawn ringed: the engine's own test of doubt
        res = ScanResult(cls.facelets, cls, samples, spread, glare, frames=frames, views=flat)
        self.pictures = {v.name: jpeg(annotate(frames[v.name], v, res)) for v in flat if v.name in frames}
        self.reading = {"facelets": cls.facelets, "valid": bool(cls.valid), "doubtful": doubt,
                        "views": sorted(self.pictures)}
        self.taken = time.monotonic()


# ---------------------------------------------------------------- calibration


def calibrate_colours(panel: Panel, name: str) -> dict[str, Any]:
    """Learn the colours from the solved cube in the rig, save the profile
    and use it for the next runs."""
    from vision.errors import VisionError
    from vision.profile import check_name

    from ..app.calibrate import learn_colours

    try:
        check_name(name)
    except VisionError as e:
        raise UserError(f"'profile': {e}") from None
    _idle(panel, "calibration")
    cfg = panel.cfg
    directory = Path(panel.options.profile_dir) if panel.options.profile_dir else None
    learned = learn_colours(cfg.cameras, cfg.views, name, directory=directory)
    panel.cfg = replace(cfg, profile=str(learned.path))
    d, a, b = learned.closest
    return {"profile": learned.profile.name, "path": str(learned.path),
            "face_colors": {f: [round(float(x)) for x in c] for f, c in learned.profile.face_colors.items()},
            "closest": {"delta_e": round(d, 1), "faces": [a, b]}, "too_close": learned.too_close}


def geometry(panel: Panel) -> dict[str, Any]:
    """The views whose corners can be set, with their corners as configured."""
    size = {c.name: (c.width, c.height) for c in panel.cfg.cameras}
    return {"views": [{"name": v.name, "camera": v.camera, "size": list(size.get(v.camera, (0, 0))),
                       "faces": [{"face": f.face,
                                  "corners": [list(p) for p in _net_order(f.corners, f.top_left)]}
                                 for f in v.faces]}
                      for v in panel.cfg.views if not v.hand_held]}


def _net_order(corners: Sequence[tuple[float, float]], top_left: int) -> list[tuple[float, float]]:
    """The corners starting at the net's top-left one (the page shows it as 1)."""
    return [corners[(top_left + k) % 4] for k in range(4)]


def geometry_picture(panel: Panel, view_name: str) -> bytes:
    from ..app.calibrate import geometry_frame

    _idle(panel, "the camera picture")
    view = _settable_view(panel, view_name)
    return jpeg(geometry_frame(panel.cfg.cameras, view))


def _settable_view(panel: Panel, name: str) -> ViewSpec:
    for v in panel.cfg.views:
        if v.name == name and not v.hand_held:
            return v
    raise KeyError(name)


def set_geometry(panel: Panel, corners: dict[str, dict[str, list[list[float]]]]) -> dict[str, Any]:
    """New corners for some views' faces: checked, saved as the [[view]]
    TOML `calibrate --geometry` writes (``geometry.toml`` in the state
    folder), and used from the next scan on."""
    from ..app.calibrate import save_geometry, view_from_corners

    _idle(panel, "setting the sticker grid")
    known = {v.name for v in panel.cfg.views if not v.hand_held}
    unknown = sorted(set(corners) - known)
    if unknown:
        raise UserError(f"no view {unknown[0][:40]!r} to set (views: {', '.join(sorted(known))})")
    views = [view_from_corners(v, corners[v.name]) if v.name in corners else v for v in panel.cfg.views]
    out = state_dir_runs(panel.options.state_dir).parent / "geometry.toml"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = save_geometry([v for v in views if not v.hand_held], out)
    panel.cfg = replace(panel.cfg, views=views)
    return {"path": str(out), "toml": text}


# ---------------------------------------------------------------- the last runs


def last_runs(panel: Panel) -> dict[str, Any]:
    """The newest run records (``runs/*/run.json``), newest first, with the
    names of their scan pictures."""
    import json

    base = state_dir_runs(panel.options.state_dir)
    dirs = sorted((d for d in base.glob("*") if RUN_ID.match(d.name) and d.is_dir()), reverse=True)
    runs = []
    for d in dirs[:MAX_RUNS_LISTED]:
        try:
            record = json.loads((d / "run.json").read_text()[:1_000_000])
        except (OSError, ValueError):
            continue  # a run still going on, or a record cut short
        if not isinstance(record, dict):
            continue
        keep = ("status", "message", "started", "facelets", "moves", "length", "turns", "scan_s", "compute_s",
                "turning_s", "total_s", "captures", "start_by", "estop", "scan_correct", "confirmed")
        runs.append({"id": d.name, **{k: record[k] for k in keep if k in record},
                     "pictures": sorted(p.stem for p in d.glob("*.png") if PICTURE_NAME.match(p.stem))})
    return {"runs": runs}


def run_picture(panel: Panel, run_id: str, name: str) -> Path:
    """A run's scan picture; KeyError for a name that is not one."""
    if not RUN_ID.match(run_id) or not PICTURE_NAME.match(name):
        raise KeyError(name)
    path = state_dir_runs(panel.options.state_dir) / run_id / f"{name}.png"
    if not path.is_file():
        raise KeyError(name)
    return path


# ---------------------------------------------------------------- photos


class Photos:
    """Six uploaded photos read into a cube by vision's photo reader (the
    one `cuberobot scan --images` uses); the pictures with the grids found
    are kept for the page until the next upload. One read at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pictures: dict[str, bytes] = {}

    def read(self, photos: dict[str, bytes]) -> dict[str, Any]:
        from vision.errors import VisionError
        from vision.photos import annotate, read_photos

        with self.lock, tempfile.TemporaryDirectory(prefix="cuberobot-photos-") as tmp:
            paths = {}
            for face, data in photos.items():
                paths[face] = Path(tmp) / f"{face}.photo"
                paths[face].write_bytes(data)
            try:
                result = read_photos(paths)
            except VisionError as e:  # the messages name the files: here, temporary ones
                message = str(e)
                for face, path in paths.items():
                    message = message.replace(f"{face} photo {path}", f"the {face} photo")
                raise UserError(message) from None
            self.pictures = {f: jpeg(annotate(result, f)) for f in result.grids}
        cls = result.classification
        return {**cls.to_dict(), "rotations": result.rotations, "pictures": sorted(self.pictures)}
