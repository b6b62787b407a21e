"""Real photos from another project's robot: `scan --images` on the face
photos that rubiks-cube-tracker (github.com/dwalton76/rubiks-cube-tracker,
MIT) keeps as test data, six 320x240 PNGs per cube taken by a LEGO robot's
fixed camera under its own lamp, the face framed so tightly that its
bottom edge touches the picture's border.

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
once, duplicates dropped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robot.cli.commands.vision import rgb_from_json  # noqa: E402
from solver.facelets import FACES  # noqa: E402
from vision import classify  # noqa: E402
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git clone of dwalton76/rubiks-cube-tracker")
    args = ap.parse_args()
    sets = photo_sets(args.repo)
    if not sets:
        print(f"no photo sets found in {args.repo}: give a git clone of rubiks-cube-tracker", file=sys.stderr)
        return 2
    read = sure = same = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, commit, photos, colours in sets:
            paths = {}
            for face, png in photos.items():
                paths[face] = Path(tmp) / f"{face}.png"
                paths[face].write_bytes(png)
            other = classify(rgb_from_json(colours, name))
            try:
                scan = read_photos(paths)
            except PhotoError as e:
                print(f"{name} {commit}: refused: {e}")
                continue
            mine = scan.classification
            read += 1
            sure += mine.ok
            same += mine.facelets == other.facelets
            print(f"{name} {commit}: {mine.facelets} {'sure' if mine.ok else 'flagged'}; from the tracker's:"
                  f" {'the same' if mine.facelets == other.facelets else other.facelets}"
                  f" ({'sure' if other.ok else 'flagged'})")
    print(f"{len(sets)} photo sets: read {read}, sure {sure}, the same as from the tracker's colours {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
