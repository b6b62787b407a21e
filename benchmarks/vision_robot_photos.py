"""Real photos from another project's robot: `scan --images` on the face
photos that rubiks-cube-tracker (github.com/dwalton76/rubiks-cube-tracker,
MIT) keeps as test data, six PNGs per cube taken by LEGO robots' fixed
cameras: 320x240 under the robot's lamp, the face framed so tightly that
its bottom edge touches the picture's border, 640x480 or 1920x1080.

That project keeps no cube state beside the photos, only the sticker
colours its own tracker measured in them (square-numbered JSON). So each
cube is read twice, by two paths that share no pixels: our photo reader
(grid found with no help, stickers sampled, `vision.photos.read_photos`)
and our classifier on the colours the other project's tracker measured
(`classify --rgb-json`'s reader). Scores: photo sets read, read sure, and
read the same as the other path.

    git clone https://github.com/dwalton76/rubiks-cube-tracker /tmp/rct
    python benchmarks/vision_robot_photos.py /tmp/rct

Every 3x3 set any commit holds whole (six photos and the colours) is read
once, duplicates dropped. `--stress` then reads every set again made worse
in each of the ways a rig's camera makes photos worse (seeded): each face
turned a random quarter turn, saved as JPEG at quality 40, halved in size,
blurred (sigma 1.5), half as bright, 1.4 times as bright (clipped), and
with sensor grain (sigma 6 grey levels a pixel).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robot.cli.commands.vision import rgb_from_json  # noqa: E402
from solver.facelets import FACES  # noqa: E402
from vision import classify  # noqa: E402
from vision.classifier import Classification  # noqa: E402
from vision.photos import PhotoError, read_photos  # noqa: E402


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True).stdout


def photo_sets(repo: Path) -> list[tuple[str, str, dict[str, bytes], dict]]:
    """(name, commit, face -> PNG bytes, square-numbered colours) of every
    distinct whole 3x3 set in the project's history."""
    found: dict[str, tuple[str, str, dict[str, bytes], dict]] = {}
    for commit in _git(repo, "log", "--all", "--format=%H").decode().split():
        names = _git(repo, "ls-tree", "-r", "--name-only", commit, "test-data").decode().split()
        folders = {n.split("/")[1] for n in names if n.startswith("test-data/3x3x3-") and n.count("/") == 2}
        for name in sorted(folders):
            photos = {f: _git(repo, "show", f"{commit}:test-data/{name}/rubiks-side-{f}.png") for f in FACES}
            text = _git(repo, "show", f"{commit}:test-data/{name}.txt")
            if not all(photos.values()) or not text:
                continue
            key = hashlib.sha256(b"".join(photos[f] for f in FACES) + text).hexdigest()
            found.setdefault(key, (name, commit[:8], photos, json.loads(text)))
    return list(found.values())


def worse(rng: np.random.Generator) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Each way of making a photo worse, by name."""
    def scaled(img: np.ndarray, k: float) -> np.ndarray:
        return np.clip(img.astype(float) * k, 0, 255).astype(np.uint8)

    return {
        "turned": lambda img: np.ascontiguousarray(np.rot90(img, int(rng.integers(1, 4)))),
        "JPEG 40": lambda img: cv2.imdecode(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 40])[1], 1),
        "half size": lambda img: cv2.resize(img, (img.shape[1] // 2, img.shape[0] // 2),
                                            interpolation=cv2.INTER_AREA),
        "blurred": lambda img: cv2.GaussianBlur(img, (5, 5), 1.5),
        "half as bright": lambda img: scaled(img, 0.5),
        "x1.4 bright": lambda img: scaled(img, 1.4),
        "grain 6": lambda img: np.clip(img + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8),
    }


def read_all(sets: list[tuple[str, str, dict[str, bytes], dict]], others: list[Classification], tmp: str,
             change: Callable[[np.ndarray], np.ndarray] | None, verbose: bool) -> dict[str, int]:
    """Each set read from its photos (``change`` made to each first) and
    compared with ``others``, the cubes read from the tracker's colours."""
    counts = {"read": 0, "sure": 0, "the same": 0, "the same and sure": 0, "another and sure": 0}
    for (name, commit, photos, _), other in zip(sets, others):
        paths = {}
        for face, png in photos.items():
            paths[face] = Path(tmp) / f"{face}.png"
            img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
            cv2.imwrite(str(paths[face]), change(img) if change else img)
        try:
            mine = read_photos(paths).classification
        except PhotoError as e:
            if verbose:
                print(f"{name} {commit}: refused: {e}")
            continue
        same = mine.facelets == other.facelets
        counts["read"] += 1
        counts["sure"] += mine.ok
        counts["the same"] += same
        counts["the same and sure"] += same and mine.ok
        counts["another and sure"] += mine.ok and not same
        if verbose:
            print(f"{name} {commit}: {mine.facelets} {'sure' if mine.ok else 'flagged'}; from the tracker's:"
                  f" {'the same' if same else other.facelets} ({'sure' if other.ok else 'flagged'})")
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git clone of dwalton76/rubiks-cube-tracker")
    ap.add_argument("--stress", action="store_true", help="also each set made worse in seven ways")
    args = ap.parse_args()
    sets = photo_sets(args.repo)
    if not sets:
        print(f"no photo sets found in {args.repo}: give a git clone of rubiks-cube-tracker", file=sys.stderr)
        return 2
    conditions: dict[str, Callable[[np.ndarray], np.ndarray] | None] = {"as taken": None}
    if args.stress:
        conditions.update(worse(np.random.default_rng(7)))
    # the cubes from the tracker's colours: read once, the same under every condition
    others = [classify(rgb_from_json(colours, name)) for name, _, _, colours in sets]
    print(f"{len(sets)} photo sets of a LEGO robot from {args.repo}")
    with tempfile.TemporaryDirectory() as tmp:
        for label, change in conditions.items():
            c = read_all(sets, others, tmp, change, verbose=change is None)
            print(f"{label:15s} read {c['read']:2d} / {len(sets)}, sure {c['sure']:2d}, the same cube as"
                  f" from the tracker's colours {c['the same']:2d} ({c['the same and sure']} sure);"
                  f" another cube and sure: {c['another and sure']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
