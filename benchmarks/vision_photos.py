"""Photos benchmark (issue 14): six synthetic phone photos per cube, read by
`vision.photos.read_photos` exactly as `cuberobot scan --images` does.

Each cube is uniformly random; each face is rendered by
`tests/photo_render.py`'s `render_face_photo` at a size drawn from 640x480 to
4000x3000, in a random quarter turn, tilted, on a busy background, and
written as a real JPEG (70 %) or PNG file. Scores: cubes read right and
sure, cubes where a grid was not found (refused, exit 2), cubes flagged,
and cubes read wrong while sure (the bar: none). Then the time to read six
12-megapixel JPEGs, several rounds, with the spread.

    python benchmarks/vision_photos.py                 # 200 held-out cubes, 7 timing rounds
    python benchmarks/vision_photos.py --cubes 10 --rounds 3
    python benchmarks/vision_photos.py --first-seed 0 --cubes 40   # the set the finder was tuned on

The grid finder was tuned on cubes 0..39, then on the failures of cubes
100000..100199 and of cubes 300000..300199 (earlier held-out sets, which
therefore no longer are). The reading of the colours (each photo in its own
light, the faces' turns ranked by the fitted colours) was then tuned on the
failures of 400000..400199 and 500000..500199. The default set, cubes
600000..600199, was scored once with the reader as it now is and nothing
was changed after seeing it: it stands for photos the project has not seen.
Use a new range for the next round of changes.

"Right" is the issue's bar: all 54 stickers right (sure, or flagged for
a person to confirm); "wrong and sure" must never happen.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # synthetic photos (test-only)

from photo_render import render_cube_photos, write_phone_photos, write_photo  # noqa: E402

from solver import random_cube  # noqa: E402
from vision.photos import PhotoError, read_photos  # noqa: E402


def accuracy(cubes: int, first: int, folder: Path, verbose: bool) -> dict[str, int]:
    counts = {"right (all 54 stickers)": 0, "right and sure": 0, "right but flagged": 0,
              "no grid (refused)": 0, "wrong, flagged": 0, "wrong and sure": 0}
    for seed in range(first, first + cubes):
        rng = np.random.default_rng(10_000 + seed)
        truth = random_cube(seed).to_facelets()
        shots = render_cube_photos(truth, rng)
        paths = {}
        for face, shot in shots.items():
            paths[face] = str(folder / f"{face}.{'jpg' if rng.random() < 0.7 else 'png'}")
            write_photo(shot.image, paths[face], rng)
        try:
            r = read_photos(paths)
        except PhotoError as e:
            counts["no grid (refused)"] += 1
            if verbose:
                print(f"cube {seed}: {e}")
            continue
        right = r.facelets == truth
        counts["right (all 54 stickers)"] += right
        counts["right and sure"] += right and r.ok
        counts["right but flagged"] += right and not r.ok
        counts["wrong, flagged"] += (not right) and not r.ok
        counts["wrong and sure"] += (not right) and r.ok
        if verbose and not (right and r.ok):
            print(f"cube {seed}: {'right' if right else 'WRONG'}, {'sure' if r.ok else 'flagged'}")
    return counts


def timing(rounds: int, folder: Path) -> tuple[list[float], list[float]]:
    paths = write_phone_photos(random_cube(7).to_facelets(), folder, np.random.default_rng(7))
    read_photos(paths)  # loads the classifier's compiled matcher once, as any first call does
    times, cpu = [], []
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        read_photos(paths)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cubes", type=int, default=200)
    ap.add_argument("--first-seed", type=int, default=600_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        times, cpu = timing(args.rounds, folder)
        counts = accuracy(args.cubes, args.first_seed, folder, args.verbose)
    n = args.cubes
    print(f"photos: {n} cubes, {6 * n} photos (python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.2f}, {os.cpu_count()} cpus)")
    for k, v in counts.items():
        print(f"  {k}: {v}/{n} ({100 * v / n:.1f} %)")
    print("  bars: grid found and all 54 stickers right >= 99 %, wrong and sure 0")
    print(f"six 4000x3000 JPEGs read: median {np.median(times):.2f} s, min {min(times):.2f} s,"
          f" max {max(times):.2f} s over {len(times)} rounds   (bar: < 2 s)")
    print(f"  processor time of one read: median {np.median(cpu):.2f} s, min {min(cpu):.2f} s,"
          f" max {max(cpu):.2f} s (the wall time less the waiting for a shared core)")
    right = counts["right (all 54 stickers)"]
    good = counts["wrong and sure"] == 0 and right >= 0.99 * n and np.median(times) < 2
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
