"""Photos that could be more than one cube (issue 47): stress sets of
symmetric cubes, read by `vision.photos.read_photos` as `cuberobot scan
--images` reads them, against the reader as it was before (given as a file,
e.g. ``git show <commit>:vision/photos.py > /tmp/photos_before.py``).

Cubes: named patterns (solved, checkerboards, stripes, the superflip, dots,
a cross), one turn from solved, two turns from solved, and random cubes as
the control, in turn. Each face is rendered by `tests/photo_render.py` in a
random quarter turn (tilted, on a busy background, in its own light) and
cropped by `tests/photo_sets.py`: "loose" (0.3 to 1.2 sticker pitches of
background round the face's outline), "close" (0 to 0.3) or "tight" (the
border 0 to 0.12 of a pitch inside the outline: on the stickers' edges),
written as PNG. Nothing was tuned on these sets: the families are the
patterns any cube shows, the turns and crops are drawn at random.

Scores per family and crop: read (not refused), right and sure, in doubt
with the right cube read or listed among the alternatives, in doubt
without it, refused (no grid), and sure and wrong (the bar: none). Then one
face at a time (`read_face`): stickers read, sure, sure and wrong. Then the
time to read six 4000x3000 JPEGs, the reader before and after taken in
turns in the same process, and the time of weighing the 4,096 turnings.

    python benchmarks/vision_photo_turns.py --before /tmp/photos_before.py \
        --before-finder /tmp/grid_finder_before.py                                  # 240 cubes
    python benchmarks/vision_photo_turns.py --cubes 24 --rounds 3
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # synthetic photos (test-only)

from photo_render import render_face_photo, rotate_net, write_phone_photos, write_photo  # noqa: E402
from photo_sets import FAMILIES, photo_set, symmetric_cube  # noqa: E402

from solver import random_cube  # noqa: E402
from solver.facelets import FACES  # noqa: E402
from vision import photos  # noqa: E402

CROPS = {"loose": (0.3, 1.2), "close": (0.0, 0.3), "tight": (-0.12, 0.0)}
KEYS = ("read", "right and sure", "doubt, right listed", "doubt, right not listed", "refused",
        "sure and wrong")


def load_before(path: str, name: str = "vision._photos_before") -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def score(reader: ModuleType, paths: dict[str, str], truth: str) -> str:
    try:
        r = reader.read_photos(paths)
    except reader.PhotoError:
        return "refused"
    listed = {r.facelets} | {a.facelets for a in getattr(r, "alternatives", [])}
    if r.ok:
        return "right and sure" if r.facelets == truth else "sure and wrong"
    return "doubt, right listed" if truth in listed else "doubt, right not listed"


def stress(cubes: int, first: int, folder: Path, before: ModuleType | None, verbose: bool
           ) -> dict[str, dict[tuple[str, str], dict[str, int]]]:
    readers = {"after": photos, **({"before": before} if before else {})}
    out: dict[str, dict[tuple[str, str], dict[str, int]]] = {name: {} for name in readers}
    for n in range(cubes):
        rng = np.random.default_rng(first + n)
        family = FAMILIES[n % len(FAMILIES)]
        crop = list(CROPS)[(n // len(FAMILIES)) % len(CROPS)]
        name, truth = symmetric_cube(family, rng)
        pictures, _ = photo_set(truth, rng, margin=CROPS[crop])
        paths = {}
        for face, img in pictures.items():
            paths[face] = str(folder / f"{face}.png")
            cv2.imwrite(paths[face], img)
        for reader_name, reader in readers.items():
            got = score(reader, paths, truth)
            counts = out[reader_name].setdefault((family, crop), dict.fromkeys(KEYS, 0))
            counts[got] += 1
            counts["read"] += got != "refused"
            if verbose and got not in ("right and sure", "doubt, right listed"):
                print(f"cube {first + n} ({family}: {name}, {crop}): {reader_name}: {got}")
    return out


def faces(count: int, first: int, folder: Path) -> dict[str, int]:
    counts = {"faces": 0, "refused": 0, "all nine right": 0, "all nine sure": 0, "stickers": 0,
              "stickers sure": 0, "stickers sure and wrong": 0, "stickers wrong (in doubt)": 0}
    for n in range(count):
        rng = np.random.default_rng(first + n)
        truth = random_cube(first + n).to_facelets()
        k = n % 6
        shot = render_face_photo(truth[9 * k:9 * k + 9], (1280, 960), rng)
        path = str(folder / "face.jpg")
        write_photo(shot.image, path, rng)
        counts["faces"] += 1
        try:
            r = photos.read_face(path, FACES[k])
        except photos.PhotoError:
            counts["refused"] += 1
            continue
        shown = rotate_net(truth[9 * k:9 * k + 9], shot.rotation)
        counts["all nine right"] += r.stickers == shown
        counts["all nine sure"] += r.ok
        for i in range(9):
            if i == 4:
                continue
            counts["stickers"] += 1
            sure = i not in r.suspects
            counts["stickers sure"] += sure
            counts["stickers sure and wrong"] += sure and r.stickers[i] != shown[i]
            counts["stickers wrong (in doubt)"] += (not sure) and r.stickers[i] != shown[i]
    return counts


def timing(rounds: int, folder: Path, before: ModuleType | None) -> dict[str, list[float]]:
    paths = write_phone_photos(random_cube(7).to_facelets(), folder, np.random.default_rng(7))
    readers = {"after": photos, **({"before": before} if before else {})}
    for reader in readers.values():
        reader.read_photos(paths)  # the classifier's compiled matcher is loaded once, as by any first call
    times: dict[str, list[float]] = {name: [] for name in readers}
    for n in range(rounds):
        order = list(readers) if n % 2 == 0 else list(readers)[::-1]  # in turns, each first half the time
        for name in order:
            t0 = time.perf_counter()
            readers[name].read_photos(paths)
            times[name].append(time.perf_counter() - t0)
    return times


def weighing_time(folder: Path) -> list[float]:
    """The turnings weighed alone, on the cube whose labels make the most
    valid turnings (solved: all 4,096) and on a checkerboard."""
    from solver import SOLVED_CUBE

    out = []
    for moves in ("", "R2 L2 U2 D2 F2 B2", "U2 D2"):
        cube = SOLVED_CUBE.apply(moves).to_facelets()
        t0 = time.perf_counter()
        for _ in range(20):
            photos.alternatives(cube, np.zeros(6, int))
        out.append((time.perf_counter() - t0) / 20)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cubes", type=int, default=240)
    ap.add_argument("--first-seed", type=int, default=4_700_000)
    ap.add_argument("--faces", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--before", metavar="FILE", help="the reader before (a copy of vision/photos.py)")
    ap.add_argument("--before-finder", metavar="FILE",
                    help="the grid finder before (a copy of vision/grid_finder.py), for the reader before")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    before = load_before(args.before) if args.before else None
    if before is not None and args.before_finder:
        before.find_grids = load_before(args.before_finder, "vision._grid_finder_before").find_grids
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        times = timing(args.rounds, folder, before)
        weighing = weighing_time(folder)
        results = stress(args.cubes, args.first_seed, folder, before, args.verbose)
        single = faces(args.faces, args.first_seed, folder)
    print(f"photo turns: {args.cubes} cubes from seed {args.first_seed} (python {platform.python_version()},"
          f" load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cpus)")
    bad = 0
    for reader, table in results.items():
        print(f"\n{reader}:")
        print(f"  {'family':10} {'crop':6} " + " | ".join(f"{k:>{max(6, len(k))}}" for k in ("cubes", *KEYS)))
        totals = dict.fromkeys(KEYS, 0)
        for (family, crop), c in sorted(table.items()):
            n = sum(c[k] for k in KEYS[1:])
            print(f"  {family:10} {crop:6} " + " | ".join(f"{v:>{max(6, len(k))}}"
                                                        for k, v in (("cubes", n), *c.items())))
            for k in KEYS:
                totals[k] += c[k]
        n = sum(totals[k] for k in KEYS[1:])
        print(f"  {'all':17} " + " | ".join(f"{v:>{max(6, len(k))}}"
                                             for k, v in (("cubes", n), *totals.items())))
        doubt = totals["doubt, right listed"] + totals["doubt, right not listed"]
        if doubt:
            print(f"  in doubt: the right cube read or listed in {totals['doubt, right listed']} of {doubt}"
                  f" ({100 * totals['doubt, right listed'] / doubt:.1f} %)")
        if reader == "after":
            bad += totals["sure and wrong"]
    print("\none face at a time (read_face, random cubes, each photo in a random turn):")
    for k, v in single.items():
        print(f"  {k}: {v}")
    bad += single["stickers sure and wrong"]
    for name, t in times.items():
        print(f"six 4000x3000 JPEGs, {name}: median {np.median(t):.2f} s, min {min(t):.2f} s,"
              f" max {max(t):.2f} s over {len(t)} rounds (taken in turns)")
    print("the 4,096 turnings weighed (solved, checkerboard, U2 D2): "
          + ", ".join(f"{1000 * t:.1f} ms" for t in weighing))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
