"""Calibration, shared by `cuberobot calibrate` and the web panel: learning
the colours from a solved cube, and the sticker grid (each face's corners)
as the configuration stores it.

Both faces ask for the same thing in their own way (the terminal with
options and an OpenCV window to click in, the page with a button and
corners dragged on a picture); what is captured, checked and saved is
decided here once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from solver import SOLVED
from solver.facelets import FACES, position_name
from vision.errors import VisionError
from vision.profile import (
    TOO_CLOSE_DE,
    ProfileError,
    build_profile,
    check_name,
    find_profile,
    save_profile,
    user_profile_dir,
)
from vision.setup import FaceSpec, ViewSpec

from ..rig.errors import UserError
from ..rig.settings import save_settings
from .kinds import KINDS

if TYPE_CHECKING:
    from vision.profile import Profile
    from vision.render import Lighting
    from vision.setup import CameraSpec

    from ..rig.config import Config


MIN_CLEAR_STICKERS = 6
"""A face's colour is learned from at least this many of its 9 stickers read
beyond doubt; the others (a lamp's reflection, a shadow) are left out."""


def check_solved(frames: dict[str, np.ndarray], views: list[ViewSpec],
                 debug_dir: str | None = None) -> list[int]:
    """Calibration learns each face's colour from a solved cube: make sure
    it is one (and the geometry fits) before storing anything. The stickers
    read as solved but in doubt (glare, shadow) are returned, to be left out
    of the colours learned; a face with too few clear stickers is refused."""
    from vision.preview import annotate  # lazy: loads OpenCV
    from vision.scanning import (  # lazy: loads OpenCV and numba
        ScanResult,
        classify_measured,
        measure,
        write_debug,
    )

    samples, spread, glare = measure(frames, views)
    cls = classify_measured(samples, spread, glare)
    result = ScanResult(cls.facelets, cls, samples, spread, glare, frames=frames, views=views)
    result.images = {v.name: annotate(frames[v.name], v, result) for v in views}
    if debug_dir:
        write_debug(result, debug_dir)
    doubtful = sorted(set(cls.suspects))
    per_face = [sum(1 for i in doubtful if i // 9 == k) for k in range(6)]
    if cls.facelets != SOLVED or not cls.valid or max(per_face) > 9 - MIN_CLEAR_STICKERS:
        wrong = [position_name(i) for i in range(54) if cls.facelets[i] != SOLVED[i]] or [
            position_name(i) for i in doubtful]
        raise UserError("the cube does not look solved (" + " ".join(wrong[:12])
                        + "): put a solved cube in place, check the geometry and the light"
                        + (f"; see {debug_dir}" if debug_dir else "; --save-debug DIR shows what was seen"))
    return doubtful


@dataclass
class Learned:
    """A colour profile just made and saved, and how well its faces part."""

    profile: Profile
    path: Path
    closest: tuple[float, str, str]
    """The smallest ΔE between two faces' colours, and which two."""
    exposures: list[str]
    """What each camera's exposure and gain were fixed at ("camera upper:
    exposure 0.8"), for the person to see."""

    @property
    def too_close(self) -> bool:
        return self.closest[0] < TOO_CLOSE_DE


def check_learns_colours(kind: str) -> None:
    """A flipper or two-gripper rig reads each face in its own picture's
    light (``faces_apart``) and uses no colour profile: learning colours
    there would save a profile nothing reads, so it is refused in one line
    that says what does need calibrating."""
    if not KINDS[kind].learns_colours:
        raise UserError(f"a {kind} rig reads each face in its own picture's light and uses no colour "
                        "profile, so there are no colours to learn; only the camera's sticker grid needs "
                        "setting (`cuberobot calibrate --geometry`, or the panel's corners)")


def learn_colours(cameras: list[CameraSpec], views: list[ViewSpec], name: str, *,
                  directory: Path | None = None, seed: int | None = None,
                  debug_dir: str | None = None, sim_lighting: Lighting | None = None) -> Learned:
    """Capture every view of a solved cube (simulated cameras show one, in
    ``sim_lighting``, by default a light drawn at random), check it is
    solved, and save each camera's view of each face's colour as the profile
    ``name``."""
    from vision.scanning import capture_frames, expand_views, measure  # lazy: loads OpenCV and numba

    check_name(name)
    settings: dict = {}
    exposures: dict[str, float] = {}  # lowered until the solved cube's whites do not clip
    frames = capture_frames(cameras, views, sim_state=SOLVED, sim_seed=seed, settings=settings,
                            exposures=exposures, sim_lighting=sim_lighting)
    fixed = fix_exposures(cameras, settings)
    flat = expand_views(views)
    seen: dict[str, dict[str, np.ndarray]] = {}
    for v in flat:
        samples, _, _ = measure({v.name: frames[v.name]}, [v])
        for f in v.faces:
            k = FACES.index(f.face)
            seen.setdefault(v.camera, {})[f.face] = samples[9 * k:9 * k + 9].copy()
    for i in check_solved(frames, flat, debug_dir):  # a reflection or a shadow teaches no colour
        for faces in seen.values():
            if FACES[i // 9] in faces:
                faces[FACES[i // 9]][i % 9] = np.nan
    profile = build_profile(name, seen, settings)
    path = save_profile(profile, directory)
    return Learned(profile, path, profile.separation(), fixed)


def fix_exposures(cameras: list[CameraSpec], settings: dict) -> list[str]:
    """Every camera's exposure and gain as the calibration ran them go into
    the profile (``settings``, changed in place), so `start` runs at the
    same ones with auto exposure off; one line a setting, saying which."""
    from vision.capture import SIM_EXPOSURE  # lazy: loads OpenCV

    lines = []
    for spec in cameras:
        used = settings.get(spec.name)
        if used is None:
            continue
        for key in ("exposure", "gain"):
            reported = used.get(f"reported_{key}")
            if key not in used and isinstance(reported, (int, float)) and reported not in (0, -1):
                used[key] = float(reported)
        if spec.source == "sim":
            used.setdefault("exposure", SIM_EXPOSURE)
        lines += [f"camera {spec.name}: {key} {used[key]:g}" for key in ("exposure", "gain") if key in used]
    return lines


def geometry_frame(cameras: list[CameraSpec], view: ViewSpec, *, seed: int | None = None) -> np.ndarray:
    """The picture a view's corners are set on: a frame from its camera (a
    simulated camera shows a solved cube where the configuration puts it)."""
    from vision.capture import open_camera  # lazy: loads OpenCV
    from vision.scanning import capture_frames  # lazy: loads OpenCV and numba

    by_name = {c.name: c for c in cameras}
    if view.camera not in by_name:
        raise UserError(f"view {view.name!r} uses camera {view.camera!r}, which is not configured")
    camera = by_name[view.camera]
    if camera.source == "sim":
        return capture_frames(cameras, [view], sim_state=SOLVED, sim_seed=seed)[view.name]
    cam = open_camera(camera)
    try:
        return cam.grab()
    finally:
        cam.close()


def view_from_corners(view: ViewSpec, corners: Mapping[str, Sequence[Sequence[float]]]) -> ViewSpec:
    """``view`` with each face's four corners as given, the first being the
    face's net top-left corner (the rest in any order); a face missing from
    ``corners`` keeps the ones it had. A UserError names a face whose
    corners do not make a convex face."""
    from vision.geometry import order_corners  # lazy: loads OpenCV

    unknown = set(corners) - {f.face for f in view.faces}
    if unknown:
        raise UserError(f"view {view.name!r} shows no face {', '.join(sorted(unknown))} "
                        f"(it shows {''.join(f.face for f in view.faces)})")
    faces = []
    for f in view.faces:
        if f.face not in corners:
            faces.append(f)
            continue
        try:
            faces.append(FaceSpec(f.face, order_corners(corners[f.face]), 0, f.center_visible))
        except VisionError as e:
            raise UserError(f"view {view.name!r}, face {f.face}: {e}") from None
    return ViewSpec(view.name, view.camera, tuple(faces), view.hand_held)


def save_geometry(views: list[ViewSpec], output: str | Path | None) -> str:
    """The views as the configuration's ``[[view]]`` TOML, written to
    ``output`` when given; the text."""
    from vision.geometry import geometry_toml  # lazy: loads OpenCV

    text = geometry_toml(views)
    if output:
        try:
            Path(output).write_text(text)
        except OSError as e:
            raise UserError(f"cannot write {output}: {e.strerror or e}") from None
    return text


# ---------------------------------------------------------------- one calibration, both faces


class ProfileExists(UserError):
    """A profile of the name asked for is already saved and this set-up does
    not use it: made for another set-up, or by hand. Replacing it would
    change what that other set-up reads, so it is refused unless asked for."""


@dataclass
class Calibrated:
    """What :func:`calibrate_and_use` did, for a face to present."""

    learned: Learned
    in_use: str
    """The profile as the settings name it: its name, or its file's path when
    it is saved outside the user's profile folder."""
    settings: Path | None
    """The override file written to put it in use; None when the set-up
    already used it and nothing needed writing."""
    replaced: str | None
    """When the profile file of that name that was there before was made, or None."""
    message: str
    """One paragraph saying all of the above, the same from both faces."""


def default_profile_name(cfg: Config) -> str:
    """The name a calibration saves under when none is given: the profile the
    set-up uses now, when that is a plain name (a recalibration renews it),
    else ``default``. The terminal and the panel both ask here."""
    if cfg.profile:
        try:
            return check_name(cfg.profile)
        except ProfileError:  # a path: its file is the set-up's own, not a name to save under
            pass
    return "default"


def calibrate_and_use(cfg: Config, name: str | None = None, *, replace: bool = False,
                      profile_dir: Path | None = None, settings_dir: Path | None = None,
                      seed: int | None = None, debug_dir: str | None = None,
                      sim_lighting: Lighting | None = None) -> Calibrated:
    """Learn the colours of the solved cube in the rig, save them as the
    profile ``name`` (by default :func:`default_profile_name`) and put it in
    use for ``cfg``'s set-up file through its settings file
    (robot/rig/settings.py), which every command and the panel read.

    `cuberobot calibrate` and the panel's Calibrate card both call this, so
    a profile made in one is named, kept and used as one made in the other.
    A profile of that name that this set-up does not use is not overwritten
    unless ``replace``: :class:`ProfileExists` says so before any camera
    opens."""
    check_learns_colours(cfg.rig.kind)
    name = name or default_profile_name(cfg)
    try:
        check_name(name)
    except VisionError as e:
        raise UserError(f"profile: {e}") from None
    folder = Path(profile_dir) if profile_dir is not None else user_profile_dir()
    target = folder / f"{name}.json"
    current = _profile_file(cfg.profile)
    replaced = None
    if target.is_file():
        made = _made(target)
        if current is None or current.resolve() != target.resolve():
            if not replace:
                uses = f"it uses {cfg.profile!r}" if cfg.profile else "it uses none"
                raise ProfileExists(
                    f"a colour profile {name!r} is already saved ({target}, made {made}) and this set-up "
                    f"does not use it ({uses}): give another name, or say to replace it (`calibrate "
                    "--replace`, or the panel's Replace it)")
        replaced = f"made {made}"
    learned = learn_colours(cfg.cameras, cfg.views, name, directory=folder, seed=seed, debug_dir=debug_dir,
                            sim_lighting=sim_lighting)
    in_use = learned.profile.name if learned.path.parent == user_profile_dir() else str(learned.path)
    setup = cfg.path
    current = _profile_file(cfg.profile)  # again: a name the set-up gave before it was made is found now
    if current is not None and current.resolve() == learned.path.resolve():
        settings = None
        use = f"{setup} already uses it: the panel and every command read it from the next scan on"
    else:
        settings = save_settings(cfg, profile=in_use, directory=settings_dir)
        use = (f"put in use for {setup} in {settings} (an override of its [vision] profile, which the panel "
               "and every command read; delete that file to undo it)")
    renewed = f" (replacing the one of that name {replaced})" if replaced else ""
    message = f"profile {name!r} saved to {learned.path}{renewed}; {use}"
    return Calibrated(learned, in_use, settings, replaced, message)


def _profile_file(profile: str | None) -> Path | None:
    """The file the set-up's profile is read from, or None (none set, not
    made yet, or a name no file can have)."""

    if not profile:
        return None
    try:
        return find_profile(profile)
    except VisionError:
        return None


def _made(path: Path) -> str:
    """When a file was last written, in the machine's local time, to the minute."""
    import time

    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
    except OSError:
        return "at an unknown time"


def put_views_in_use(cfg: Config, views: Sequence[ViewSpec], *, settings_dir: Path | None = None
                     ) -> tuple[Path, str]:
    """Put new corners for ``views`` in use for ``cfg``'s set-up file: into
    its settings file (robot/rig/settings.py), which the panel and every
    command read; the file, and one line saying so, the same whether the
    corners were clicked at the terminal (`calibrate --geometry`) or dragged
    on the panel."""
    path = save_settings(cfg, views=list(views), directory=settings_dir)
    names = ", ".join(v.name for v in views) or "no view"
    return path, (f"the corners of {names} saved to {path} and put in use for {cfg.path} (an override "
                  "of its [[view]] corners, which the panel and every command read; delete that file to undo "
                  "it)")
