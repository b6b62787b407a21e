"""The panel's workshop pages, beside the runs: live camera pictures, colour
calibration, the sticker grid, the last runs' records, and six photos read
into a cube. Each is a thin layer over the function the terminal's command
uses (robot/app/calibrate.py, vision.photos), so both faces do the same.

Nothing here runs while a run holds the rig and cameras (:class:`Busy`):
real cameras cannot be opened twice, and a profile or grid changed under a
scan would make it read the wrong thing."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from solver import SOLVED
from vision.errors import VisionError
from vision.profile import TOO_CLOSE_DE

from ..app.calibrate import (
    calibrate_and_use,
    geometry_frame,
    put_views_in_use,
    save_geometry,
    view_from_corners,
)
from ..app.start import _profile
from ..rig.errors import UserError
from ..rig.loading import effective_config as read_effective
from .runs import Busy, Panel, state_dir_runs

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
MAX_RECORD_BYTES = 1 << 20
"""A run record: a real one is a few kilobytes."""
MAX_PICTURE_BYTES = 32 << 20
"""A run's scan picture: a real one (a 1280x720 PNG) is about a megabyte."""


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
        from vision.preview import annotate  # lazy: loads OpenCV
        from vision.scanning import (  # lazy: loads OpenCV and numba
            ScanResult,
            capture_frames,
            classify_measured,
            expand_views,
            faces_seen_apart,
            measure,
        )

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
        seen = "".join(sorted({f.face for v in flat for f in v.faces}, key="URFDLB".index))
        whole = len(seen) == 6
        if not whole:
            # One camera that sees one face (a flipper, a two-gripper): the colours it samples are drawn,
            # but no sticker can be named from one face (nor a cube read); a scan shows it all six.
            cls.suspects, doubt = [], []
        res = ScanResult(cls.facelets if whole else "?" * 54, cls, samples, spread, glare, frames=frames,
                         views=flat)
        self.pictures = {v.name: jpeg(annotate(frames[v.name], v, res)) for v in flat if v.name in frames}
        self.reading = {"facelets": cls.facelets if whole else None, "valid": bool(cls.valid) and whole,
                        "doubtful": doubt, "views": sorted(self.pictures)}
        if not whole:
            self.reading["seen"] = seen
        self.taken = time.monotonic()


# ---------------------------------------------------------------- calibration


def calibrate_colours(panel: Panel, name: str | None, replace_old: bool = False) -> dict[str, Any]:
    """Learn the colours from the solved cube in the rig and put the profile
    in use, as `cuberobot calibrate` does (robot/app/calibrate.py's
    :func:`calibrate_and_use`: the same default name, the same refusal to
    overwrite a profile this set-up does not use, the same settings file);
    the panel then reads it from its next scan."""
    _idle(panel, "calibration")
    cfg = panel.cfg
    directory = Path(panel.options.profile_dir) if panel.options.profile_dir else None
    # simulated cameras show the solved cube in the panel's simulated light, as its runs' scans are
    lighting = panel.options.sim_lighting(0) if panel.options.sim_lighting is not None else None
    done = calibrate_and_use(cfg, name, replace=replace_old, profile_dir=directory,
                             settings_dir=_settings_dir(panel), sim_lighting=lighting)
    learned = done.learned
    panel.cfg = replace(cfg, profile=str(learned.path))
    d, a, b = learned.closest
    return {"profile": learned.profile.name, "path": str(learned.path),
            "settings": str(done.settings) if done.settings else None, "replaced": done.replaced,
            "message": done.message,
            "face_colors": {f: [round(float(x)) for x in c] for f, c in learned.profile.face_colors.items()},
            "closest": {"delta_e": round(d, 1), "faces": [a, b]}, "too_close": learned.too_close,
            "too_close_below": TOO_CLOSE_DE}  # the page's verdict says what would be enough


def _settings_dir(panel: Panel) -> Path | None:
    return Path(panel.options.settings_dir) if panel.options.settings_dir else None


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
    TOML `calibrate --geometry` writes, into the settings file for the rig's
    set-up file (robot/rig/settings.py), which the panel after a restart and
    every command that reads that set-up file apply; in use from the next
    scan on."""
    _idle(panel, "setting the sticker grid")
    known = {v.name for v in panel.cfg.views if not v.hand_held}
    unknown = sorted(set(corners) - known)
    if unknown:
        raise UserError(f"no view {unknown[0][:40]!r} to set (views: {', '.join(sorted(known))})")
    sizes = {c.name: (c.width, c.height) for c in panel.cfg.cameras}
    for v in panel.cfg.views:
        for face, points in corners.get(v.name, {}).items():
            _inside(f"view {v.name!r}, face {face[:8]!r}", points, v.camera, sizes[v.camera])
    views = [view_from_corners(v, corners[v.name]) if v.name in corners else v for v in panel.cfg.views]
    changed = [v for v in views if v.name in corners]
    out, message = put_views_in_use(panel.cfg, changed, settings_dir=_settings_dir(panel))
    text = save_geometry([v for v in views if not v.hand_held], None)
    panel.cfg = replace(panel.cfg, views=views)
    return {"path": str(out), "toml": text, "message": message}


def _inside(where: str, points: list[list[float]], camera: str, size: tuple[int, int]) -> None:
    """Every corner inside the camera's picture, as the set-up file's reader
    wants them: a corner outside, once saved, would stop every command
    reading the set-up file."""
    width, height = size
    for k, (x, y) in enumerate(points):
        if not (0 <= x <= width and 0 <= y <= height):
            raise UserError(f"{where}: corner {k + 1} [{x:g}, {y:g}] is outside camera {camera!r}'s "
                            f"{width}x{height} picture: give corners with 0 <= x <= {width} and "
                            f"0 <= y <= {height}")


# ---------------------------------------------------------------- the last runs


def last_runs(panel: Panel) -> dict[str, Any]:
    """The newest run records (``runs/*/run.json``), newest first, with the
    names of their scan pictures. Only real folders and files count: a link
    inside ``runs/`` is not followed (it could lead anywhere on the disk)."""
    base = state_dir_runs(panel.options.state_dir)
    runs = []
    for d in _run_folders(base)[:MAX_RUNS_LISTED]:
        record = _run_record(d)
        if record is None:
            continue  # a run still going on, a record cut short, or not a file of its own
        keep = ("status", "message", "started", "facelets", "moves", "length", "turns", "scan_s", "compute_s",
                "turning_s", "total_s", "captures", "start_by", "estop", "scan_correct", "confirmed")
        runs.append({"id": d.name, **{k: record[k] for k in keep if k in record}, "pictures": _pictures(d)})
    return {"runs": runs}


def _run_folders(base: Path) -> list[Path]:
    """The folders in ``base`` named like a run, newest first (links left out)."""
    try:
        with os.scandir(base) as entries:
            return sorted((Path(e.path) for e in entries
                           if RUN_ID.match(e.name) and e.is_dir(follow_symlinks=False)), reverse=True)
    except OSError:
        return []


def _pictures(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name[:-4] for e in entries if e.name.endswith(".png")
                          and PICTURE_NAME.match(e.name[:-4]) and e.is_file(follow_symlinks=False))
    except OSError:
        return []


def _run_record(folder: Path) -> dict[str, Any] | None:
    """``run.json`` as an object, or None: missing, not JSON, or not a
    regular file of at most :data:`MAX_RECORD_BYTES` (a link, a FIFO, a
    device are not opened for reading at all)."""
    data = read_run_file(folder, "run.json", MAX_RECORD_BYTES)
    if data is None:
        return None
    try:
        record = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def read_run_file(folder: Path, name: str, limit: int) -> bytes | None:
    """The bytes of ``folder/name`` when both are what they seem: the folder
    not a link, the file a regular file (not a link) of at most ``limit``
    bytes; otherwise None. Opened without following links and without
    blocking (a FIFO would wait for a writer)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        folder_fd = os.open(folder, flags | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fd = os.open(name, flags, dir_fd=folder_fd)
    except OSError:
        return None
    finally:
        os.close(folder_fd)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        data = fh.read(limit + 1)
    return data if len(data) <= limit else None


def run_picture(panel: Panel, run_id: str, name: str) -> bytes:
    """A run's scan picture (PNG bytes); KeyError for a name that is not
    one, or a picture that is not a regular file of the run's own."""
    if not RUN_ID.match(run_id) or not PICTURE_NAME.match(name):
        raise KeyError(name)
    data = read_run_file(state_dir_runs(panel.options.state_dir) / run_id, f"{name}.png", MAX_PICTURE_BYTES)
    if data is None:
        raise KeyError(name)
    return data


# ---------------------------------------------------------------- photos


class Photos:
    """Six uploaded photos read into a cube by vision's photo reader (the
    one `cuberobot scan --images` uses); the pictures with the grids found
    are kept for the page until the next upload. One read at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pictures: dict[str, bytes] = {}

    def read(self, photos: dict[str, Path], as_drawn: bool = False) -> dict[str, Any]:
        """The cube in six uploaded photos (face -> its file, which the photo
        reader bounds and checks before decoding: vision/photos.py), with
        the other cubes they fit when turned otherwise (``alternatives``);
        ``as_drawn``: the photos were taken as the README's net draws each
        face (``scan --photos-as-drawn``)."""
        from vision.photos import annotate, read_photos  # lazy: loads OpenCV and numba

        with self.lock:
            try:
                result = read_photos(photos, as_drawn=as_drawn)
            except VisionError as e:  # the messages name the files: here, temporary ones
                message = str(e)
                for face, path in photos.items():
                    message = message.replace(f"{face} photo {path}", f"the {face} photo")
                raise UserError(message) from None
            self.pictures = {f: jpeg(annotate(result, f)) for f in result.grids}
        cls = result.classification
        return {**cls.to_dict(), "rotations": result.rotations, "pictures": sorted(self.pictures),
                "alternatives": [a.to_dict() for a in result.alternatives]}

    def read_face(self, face: str, photo: Path) -> dict[str, Any]:
        """One uploaded photo of one face, read on its own as it is taken
        (``scan --face``): its nine stickers as the photo stands, each with
        its confidence, so a bad one is retaken before the next."""
        from vision.photos import read_face  # lazy: loads OpenCV and numba

        with self.lock:
            try:
                return read_face(photo, face).to_dict()
            except VisionError as e:
                raise UserError(str(e).replace(f"{face} photo {photo}", f"the {face} photo")) from None


# ---------------------------------------------------------------- the configuration in force


def effective_config(panel: Panel) -> dict[str, Any]:
    """The configuration in force for the panel's set-up file, read afresh
    as every command reads it (the set-up file, then the settings file the
    panel and `cuberobot calibrate` keep for it), each value with its source,
    and the override file named with how to undo it. Read-only: the page
    shows it, nothing here changes it."""
    if panel.cfg.path is None:
        raise UserError("the panel was given a configuration read from no file: there is nothing to show")
    eff = read_effective(panel.cfg.path, settings_dir=_settings_dir(panel))
    override = eff.override
    return {"setup": str(panel.cfg.path),
            "override": None if override is None else {
                "path": str(override.path), "profile": override.profile, "views": list(override.views),
                "port": override.port,
                "message": override.describe(eff.own_profile)},
            "settings": [{"key": s.key, "value": s.value, "source": s.source} for s in eff.settings]}
