"""Colour profiles: what a solved cube looked like to each camera under
the light of the day, so later scans can be corrected and checked for drift.

A profile stores, per camera, each face's colour, a per-sticker-position
brightness gain (flattening vignetting or a lamp on one side), and the
camera settings in force. It is JSON, one file per profile name, saved in
the user's data directory; the repository's ``config/profiles`` may hold
examples.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import platformdirs

from solver.facelets import FACES

from .colour import RGB, delta_e, linear_to_srgb, rgb_to_lab, rgb_tuple, srgb_to_linear
from .errors import VisionError

GAIN_LIMITS = (0.4, 2.5)
TOO_CLOSE_DE = 12.0  # below this, two faces' colours are not reliably told apart


@dataclass
class CameraProfile:
    face_colors: dict[str, RGB] = field(default_factory=dict)
    gains: dict[str, list[float]] = field(default_factory=dict)
    """face -> 9 brightness multipliers, sticker order."""
    settings: dict = field(default_factory=dict)


@dataclass
class Profile:
    name: str
    face_colors: dict[str, RGB]
    cameras: dict[str, CameraProfile] = field(default_factory=dict)

    def separation(self) -> tuple[float, str, str]:
        """Smallest ΔE between two faces' colours, and which two."""
        labs = {f: rgb_to_lab(np.asarray(c, float)) for f, c in self.face_colors.items()}
        best = (float("inf"), "", "")
        keys = [f for f in FACES if f in labs]
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                d = float(delta_e(labs[a], labs[b]))
                if d < best[0]:
                    best = (d, a, b)
        return best

    def to_dict(self) -> dict:
        return {"name": self.name, "face_colors": self.face_colors,
                "cameras": {k: asdict(v) for k, v in self.cameras.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> Profile:
        if not isinstance(d, dict):
            raise ProfileError("colour profile is malformed: it is not a JSON object; make it again with "
                               "`cuberobot calibrate`")
        try:
            faces = {f: rgb_tuple(d["face_colors"][f]) for f in FACES}
            cams = {}
            for name, c in d.get("cameras", {}).items():
                gains = {f: [float(g) for g in v] for f, v in c.get("gains", {}).items()}
                if any(len(v) != 9 for v in gains.values()):
                    raise ValueError("each face needs 9 gains")
                cams[name] = CameraProfile({f: rgb_tuple(col)
                                            for f, col in c.get("face_colors", {}).items()},
                                           gains, dict(c.get("settings", {})))
            return cls(str(d["name"]), faces, cams)
        except KeyError as e:
            raise ProfileError(f"colour profile is malformed: it has no {e.args[0]!r} entry; make it again "
                               "with `cuberobot calibrate`") from None
        except (AttributeError, TypeError, ValueError) as e:
            raise ProfileError(f"colour profile is malformed: a value is not of the kind a profile holds "
                               f"({e}); make it again with `cuberobot calibrate`") from None


MAX_PROFILE_BYTES = 256 * 1024
"""A profile is a few KiB; a file much larger is not one."""


class ProfileError(VisionError):
    """A colour profile that is not there, cannot be read, is malformed, or a
    name that cannot be one: the user's mistake, told with what to do about it."""

    exit_code = 2


class ProfileMissing(ProfileError):
    """No profile of that name, or no file at that path: not made yet, or a
    typing mistake (which the two cannot be told apart)."""


def user_profile_dir() -> Path:
    """Where ``cuberobot calibrate`` saves profiles: the user's data
    directory (``~/.local/share/cuberobot/profiles`` on Linux)."""
    return platformdirs.user_data_path("cuberobot") / "profiles"


def repo_profile_dir() -> Path:
    """The repository's ``config/profiles``: examples shipped with a
    checkout (an installed package has none)."""
    return Path(__file__).resolve().parents[1] / "config" / "profiles"


def profile_dirs() -> list[Path]:
    """Where a profile is looked up by name, in order."""
    repo = repo_profile_dir()
    return [user_profile_dir()] + ([repo] if repo.is_dir() else [])


_NAME = re.compile(r"\w[\w.-]*")


def _is_path(name_or_path: str | Path) -> bool:
    text = str(name_or_path)
    return isinstance(name_or_path, Path) or text.endswith(".json") or "/" in text or os.sep in text


def check_name(name: str) -> str:
    """``name`` if it can be a profile's name (and file name), else a ProfileError."""
    if not _NAME.fullmatch(name) or name.endswith(".json"):
        raise ProfileError(f"colour profile name {name!r} is not a plain name: use letters, digits, '-', '_'"
                           " and '.' (not first), without .json, e.g. `cuberobot calibrate --profile home`")
    return name


def save_profile(profile: Profile, directory: Path | None = None) -> Path:
    """Write the profile as ``NAME.json`` into ``directory``, by default
    :func:`user_profile_dir`."""
    d = Path(directory) if directory is not None else user_profile_dir()
    path = d / f"{check_name(profile.name)}.json"
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(profile.to_dict(), indent=1) + "\n")
        tmp.replace(path)
    except OSError as e:
        raise VisionError(f"cannot save colour profile {profile.name!r} to {d}: {e.strerror or e}") from None
    return path


def find_profile(name_or_path: str | Path, directories: list[Path] | None = None) -> Path | None:
    """The file :func:`load_profile` would read, or None when there is none
    (not made yet, or a path that is not there); a ProfileError for a name
    that cannot be a profile's."""
    if _is_path(name_or_path):
        path = Path(name_or_path).expanduser()
        return path if path.is_file() else None
    name = str(name_or_path)
    dirs = profile_dirs() if directories is None else list(directories)
    try:
        check_name(name)
    except ProfileError as e:
        raise ProfileError(f"{e}; profiles are found by name in {', '.join(map(str, dirs))}"
                           " or by the path of their .json file") from None
    return next((d / f"{name}.json" for d in dirs if (d / f"{name}.json").is_file()), None)


def load_profile(name_or_path: str | Path, directories: list[Path] | None = None) -> Profile:
    """Load a profile by file path (anything ending in .json or with a
    directory in it) or by name from ``directories``, by default
    :func:`profile_dirs` (the user's first, then the repository's)."""
    return open_profile(name_or_path, directories)[0]


def open_profile(name_or_path: str | Path, directories: list[Path] | None = None) -> tuple[Profile, Path]:
    """:func:`load_profile`, with the file it was read from (which a check
    names, without looking it up again)."""
    path = find_profile(name_or_path, directories)
    if path is None and _is_path(name_or_path):
        shown = str(Path(name_or_path).expanduser())
        raise ProfileMissing(f"no colour profile file {shown!r}: check the path, or make a profile with "
                             "`cuberobot calibrate --profile NAME`")
    if path is None:
        dirs = profile_dirs() if directories is None else list(directories)
        raise ProfileMissing(f"no colour profile {str(name_or_path)!r} (looked in "
                             f"{', '.join(map(str, dirs))}): make it with `cuberobot calibrate --profile "
                             f"{name_or_path}` (a solved cube in place), or give the path of a profile's "
                             ".json file")
    try:
        raw = _read_regular(path, MAX_PROFILE_BYTES + 1)
        if len(raw) > MAX_PROFILE_BYTES:
            raise ValueError(f"larger than {MAX_PROFILE_BYTES // 1024} KiB, which no profile is")
        data = json.loads(raw.decode("utf-8"))
        return Profile.from_dict(data), path
    except (OSError, ValueError, RecursionError) as e:  # JSON, UTF-8 and number-size errors are ValueErrors
        raise ProfileError(f"cannot read colour profile {path}: {e}") from None
    except ProfileError as e:
        raise ProfileError(f"{path}: {e}") from None


def build_profile(name: str, seen: dict[str, dict[str, np.ndarray]], settings: dict | None = None) -> Profile:
    """A profile from a solved cube: ``seen[camera][face]`` is that face's
    9 RGB samples as the camera saw them."""
    cams: dict[str, CameraProfile] = {}
    all_cols: dict[str, list[np.ndarray]] = {}
    for cam, faces in seen.items():
        cp = CameraProfile(settings=dict((settings or {}).get(cam, {})))
        for f, rgb in faces.items():
            rgb = np.asarray(rgb, float)
            ok = ~np.isnan(rgb).any(axis=1)
            if ok.sum() < 3:
                continue
            ref = np.median(rgb[ok], axis=0)
            # brightness gain per position in linear light: vignetting multiplies
            lin = srgb_to_linear(np.clip(rgb, 1, 255))
            lin_ref = srgb_to_linear(np.clip(ref, 1, 255))
            y = lin @ [0.2126, 0.7152, 0.0722]
            g = np.where(ok, (lin_ref @ [0.2126, 0.7152, 0.0722]) / np.maximum(y, 1e-4), 1.0)
            cp.gains[f] = [float(v) for v in np.clip(g, *GAIN_LIMITS)]
            cp.face_colors[f] = rgb_tuple(ref)
            all_cols.setdefault(f, []).append(ref)
        cams[cam] = cp
    missing = [f for f in FACES if f not in all_cols]
    if missing:
        raise VisionError(f"calibration saw no stickers of face(s) {', '.join(missing)}: check the views")
    face_colors = {f: rgb_tuple(np.median(all_cols[f], axis=0)) for f in FACES}
    return Profile(name, face_colors, cams)


def apply_gains(rgb: np.ndarray, gains: list[float]) -> np.ndarray:
    """Correct 9 samples of one face by the profile's per-position gains."""
    lin = srgb_to_linear(np.clip(np.asarray(rgb, float), 0, 255))
    out = linear_to_srgb(np.clip(lin * np.asarray(gains, float)[:, None], 0, 1))
    return np.where(np.isnan(rgb), np.nan, out)


def _read_regular(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path`` if it is a regular file (a FIFO, a
    device or a link to one would block or never end: a ValueError instead)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        return os.read(fd, limit)
    finally:
        os.close(fd)
