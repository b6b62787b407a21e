"""One scan: capture every view, sample the stickers, classify, annotate."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np

from solver.facelets import FACES, position_name

from .capture import SIM_EXPOSURE, lower_exposure, open_camera
from .classifier import Classification, Colours, classify, exposure_problems, sticker_exposures
from .colour import srgb_to_linear
from .errors import VisionError
from .profile import Profile, apply_gains
from .render import Lighting
from .sample import sample_faces
from .scan_result import ScanResult
from .setup import CameraSpec, ViewSpec

_T = TypeVar("_T")
_R = TypeVar("_R")

GLARE_DOUBT = 0.5  # a sticker mostly covered by glare was not really seen
DARK_DOUBT = 0.05  # nor one whose brightest channel has under 5 % of the scan's light (shadow)
REFLECTION_SURE = 1 - np.exp(-4.0)  # confidence (a 12-nat gap) that lets a piece read through glare


def measure(frames: dict[str, np.ndarray], views: list[ViewSpec], profile: Profile | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames per view name -> (samples (54, 3), spread (54,), glare (54,)),
    with the profile's per-position gains applied."""
    samples = np.full((54, 3), np.nan)
    spread = np.zeros(54)
    glare = np.zeros(54)
    for view in views:
        if view.name not in frames:
            continue
        img = frames[view.name]
        h, w = img.shape[:2]
        for face in view.faces:
            c = np.asarray(face.corners, float)
            if c.shape != (4, 2) or (c < -1).any() or (c[:, 0] > w + 1).any() or (c[:, 1] > h + 1).any():
                raise VisionError(f"view {view.name!r}: face {face.face} corners {face.corners} are not"
                                  f" inside the {w}x{h} image: recalibrate the geometry")
        for f, (rgb, sp, gl) in sample_faces(img, view.faces).items():
            k = FACES.index(f)
            cam = profile.cameras.get(view.camera) if profile else None
            if cam and f in cam.gains:
                rgb = apply_gains(rgb, cam.gains[f])
            samples[9 * k:9 * k + 9] = rgb
            spread[9 * k:9 * k + 9] = sp
            glare[9 * k:9 * k + 9] = gl
            spec = next(x for x in view.faces if x.face == f)
            if not spec.center_visible:
                samples[9 * k + 4] = np.nan
    return samples, spread, glare


def classify_measured(samples: np.ndarray, spread: np.ndarray, glare: np.ndarray, *,
                      centers: Colours | None = None, profile: Profile | None = None,
                      read_through_glare: bool = False, faces_apart: bool = False) -> Classification:
    """Classify, then add the stickers the camera could not really see.

    Glare the picture shows over a sticker makes it doubtful; with
    ``read_through_glare`` only when its piece does not settle it beyond
    doubt (fewer second looks, same safety: the piece logic is exact).
    ``faces_apart``: each face was photographed on its own, in its own
    light (see :func:`vision.classifier.classify`)."""
    result = classify(samples, centers=centers, profile=profile, faces_apart=faces_apart)
    seen = ~np.isnan(samples).any(axis=1)
    brightest = srgb_to_linear(np.clip(np.nan_to_num(samples), 0, 255)).max(axis=1)
    dark = brightest < DARK_DOUBT * sticker_exposures(samples, faces_apart)  # apart: each photo's own light
    centre = np.zeros(54, bool)
    centre[[9 * c + 4 for c in range(6)]] = True
    # a colour that looks washed out is doubtful unless its piece reads it
    # beyond doubt; glare seen in the picture likewise when reading through
    # glare, else always; deep shadow always
    refl = np.zeros(54, bool)
    refl[result.reflections] = True
    unsure = result.confidence < REFLECTION_SURE
    seen_glare = glare > GLARE_DOUBT
    if read_through_glare:
        seen_glare &= unsure
    unreadable = seen & ~centre & ((refl & unsure) | seen_glare | dark)
    extra = [int(i) for i in np.flatnonzero(unreadable) if i not in result.suspects]
    if result.evidence is not None:  # what glare or shadow hid, the camera said nothing about
        result.evidence[unreadable] = 0.0
    if extra:
        result.suspects = sorted(result.suspects + extra)
        result.confidence[extra] = np.minimum(result.confidence[extra], 0.5)
        result.warnings.append(f"{len(extra)} sticker(s) hidden by glare or darkness: "
                               + ", ".join(position_name(i) for i in extra))
    return result


EXPOSURE_RETRIES = 3  # shorter exposures tried when a view clips, before the scan goes on as it is


def camera_exposure(profile: Profile | None, camera: str) -> tuple[float | None, float | None]:
    """(exposure, gain) the profile's calibration found for this camera,
    None for either it did not fix."""
    cam = profile.cameras.get(camera) if profile else None
    settings = cam.settings if cam else {}

    def number(key: str) -> float | None:
        v = settings.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return number("exposure"), number("gain")


def exposure_problems_in(frame: np.ndarray, view: ViewSpec) -> tuple[list[int], list[int]]:
    """Facelet indices of the view's stickers that clip, and of those too
    dark to read (see :func:`vision.classifier.exposure_problems`)."""
    samples = np.full((54, 3), np.nan)
    for f, (rgb, _, _) in sample_faces(frame, view.faces).items():
        k = FACES.index(f)
        samples[9 * k:9 * k + 9] = rgb
    return exposure_problems(samples)


def capture_frames(cameras: list[CameraSpec], views: list[ViewSpec], *, sim_state: str | None = None,
                   sim_seed: int | None = None, sim_lighting: Lighting | None = None,
                   settings: dict[str, dict[str, object]] | None = None,
                   profile: Profile | None = None, exposures: dict[str, float] | None = None
                   ) -> dict[str, np.ndarray]:
    """One averaged frame per view (hand-held views: one per face). The
    settings each camera ran with are put into ``settings`` if given.

    Each camera runs at the exposure and gain in ``exposures`` (camera ->
    exposure) or the profile's calibration, if either fixes one. A view
    whose stickers clip is captured again at a shorter exposure (up to
    :data:`EXPOSURE_RETRIES` times) before anyone is asked; ``exposures``,
    when given, is updated with what each camera ended at, so later
    captures start there.

    Different cameras are read at the same time (OpenCV and numpy let go of
    the interpreter while they work), views of one camera one after another."""
    by_name = {c.name: c for c in cameras}
    for view in views:
        if view.camera not in by_name:
            raise VisionError(f"view {view.name!r} uses camera {view.camera!r}, which is not configured")
    frames: dict[str, np.ndarray] = {}

    def one_camera(items: list[tuple[int, ViewSpec]]) -> dict[str, np.ndarray]:
        got: dict[str, np.ndarray] = {}
        for i, view in items:
            spec = by_name[view.camera]
            seed = None if sim_seed is None else sim_seed * 1000 + i
            if view.hand_held:
                from .handheld import capture_hand_held

                got.update(capture_hand_held(spec, view, sim_state=sim_state, sim_seed=seed,
                                             sim_lighting=sim_lighting))
                continue
            exp, gain = camera_exposure(profile, spec.name)
            if exposures is not None and spec.name in exposures:
                exp = exposures[spec.name]
            first = exp
            best: tuple[int, float | None] | None = None  # (stickers lost, exposure) of the frame kept
            for attempt in range(EXPOSURE_RETRIES + 1):
                cam = open_camera(spec, sim_state=sim_state, sim_seed=seed, sim_view=view,
                                  sim_lighting=sim_lighting, exposure=exp, gain=gain)
                try:
                    frame = cam.grab()
                    used = dict(cam.settings)
                finally:
                    cam.close()
                clipped, crushed = exposure_problems_in(frame, view)
                current = exp if exp is not None else _reported_exposure(spec, used)
                # a glare spot clips whatever the exposure: a shorter one that only darkens the rest
                # loses more stickers than it saves, so the frame that loses fewest is kept
                if best is None or len(clipped) + len(crushed) < best[0]:
                    best = (len(clipped) + len(crushed), current)
                    got[view.name] = frame
                    if settings is not None:
                        settings[spec.name] = used
                if attempt == EXPOSURE_RETRIES or current is None or not clipped:
                    break
                exp = lower_exposure(current)
            if exposures is not None and best is not None and best[1] is not None and best[1] != first:
                exposures[spec.name] = best[1]
        return got

    per_camera: dict[str, list[tuple[int, ViewSpec]]] = {}
    for i, view in enumerate(views):
        per_camera.setdefault(view.camera, []).append((i, view))
    groups = list(per_camera.values())
    if len(groups) == 1 or any(v.hand_held for v in views):  # a person in the loop: one at a time
        results = [one_camera(g) for g in groups]
    else:
        results = _each_at_once(one_camera, groups)
    for r in results:
        frames.update(r)
    return frames


def _each_at_once(work: Callable[[_T], _R], items: list[_T]) -> list[_R]:
    """``[work(item) for item in items]``, each on a thread of its own at
    the same time; the first item's exception, if any, is raised. Threads of
    their own rather than a pool's: a pool's workers are joined when the
    interpreter exits, so a capture that a server gives up as it shuts down
    (its run's thread, a daemon, abandoned) held the exit up until its frames
    were rendered, a second on a busy machine; these are daemons when their
    caller is, and are not waited for then."""
    import threading

    results: dict[int, _R] = {}
    errors: list[BaseException | None] = [None] * len(items)

    def one(i: int) -> None:
        try:
            results[i] = work(items[i])
        except BaseException as e:  # noqa: BLE001 - raised in the caller's thread below
            errors[i] = e

    threads = [threading.Thread(target=one, args=(i,), name=f"capture-{i}") for i in range(len(items))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
    return [results[i] for i in range(len(items))]


def _reported_exposure(spec: CameraSpec, settings: dict[str, object]) -> float | None:
    """The exposure a camera ran at, to shorten from: the simulated one's
    default, or what a webcam's driver reports (None when it reports none)."""
    if spec.source == "sim":
        return SIM_EXPOSURE
    v = settings.get("reported_exposure")
    return float(v) if isinstance(v, (int, float)) and v not in (0, -1) else None


def expand_views(views: list[ViewSpec]) -> list[ViewSpec]:
    """Hand-held views become one single-face view per face (one frame each)."""
    out: list[ViewSpec] = []
    for v in views:
        if v.hand_held:
            out.extend(replace(v, name=f"{v.name}:{f.face}", faces=(f,), hand_held=False) for f in v.faces)
        else:
            out.append(v)
    return out


def faces_seen_apart(views: list[ViewSpec]) -> bool:
    """Every face in a picture of its own (a camera or a still photo per
    face, or shown by hand one at a time): each picture has its own
    exposure, and often its own light, so the classifier judges each face
    against its own brightness (``faces_apart``). Faces sharing a camera's
    frame share its exposure: not apart."""
    fixed = [v.camera for v in views if not v.hand_held]
    return (bool(views) and all(v.hand_held or len(v.faces) == 1 for v in views)
            and len(fixed) == len(set(fixed)))


def scan(cameras: list[CameraSpec], views: list[ViewSpec], *, profile: Profile | None = None,
         sim_state: str | None = None, sim_seed: int | None = None, sim_lighting: Lighting | None = None,
         centers: Colours | None = None, debug_dir: str | Path | None = None,
         read_through_glare: bool = False) -> ScanResult:
    """Capture, sample and classify every view. ``sim_state`` is the cube
    simulated cameras show; ``debug_dir`` gets annotated PNGs and the samples."""
    from .preview import annotate

    frames = capture_frames(cameras, views, sim_state=sim_state, sim_seed=sim_seed, sim_lighting=sim_lighting,
                            profile=profile)
    flat = expand_views(views)
    samples, spread, glare = measure(frames, flat, profile)
    result = classify_measured(samples, spread, glare, centers=centers, profile=profile,
                               read_through_glare=read_through_glare, faces_apart=faces_seen_apart(views))
    sr = ScanResult(result.facelets, result, samples, spread, glare, frames=frames, views=flat)
    sr.images = {v.name: annotate(frames[v.name], v, sr) for v in flat if v.name in frames}
    if debug_dir is not None:
        write_debug(sr, debug_dir)
    return sr


def write_debug(result: ScanResult, debug_dir: str | Path) -> list[Path]:
    d = Path(debug_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, img in result.images.items():
            p = d / f"view-{name.replace(':', '-')}.png"
            cv2.imwrite(str(p), img)
            paths.append(p)
        p = d / "scan.json"
        rgb = [None if np.isnan(r).any() else [round(float(v), 1) for v in r] for r in result.samples]
        p.write_text(json.dumps({"rgb": rgb, **result.classification.to_dict()}, indent=1) + "\n")
        paths.append(p)
        return paths
    except OSError as e:
        raise VisionError(f"cannot write debug output to {d}: {e}") from None
