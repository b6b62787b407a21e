"""Vision benchmark: seeded synthetic scenes across all lighting conditions.

For each scene a random cube is rendered by both default simulated cameras
(1280x720) under random light, sampled and classified. Reports how many
cubes come out exactly right, whether every wrong one was flagged (invalid
or suspects named), false alarms, time per classification and per
sampling+classification of the two frames, and - as a ratio - how a plain
nearest-centre-colour classifier does on the same samples.

    python benchmarks/vision.py            # 1000 scenes
    python benchmarks/vision.py --scenes 100
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver import random_cube  # noqa: E402
from solver.facelets import FACES  # noqa: E402
from vision.classifier import classify  # noqa: E402
from vision.color import rgb_to_lab  # noqa: E402
from vision.render import HARD_ORANGE, HARD_RED, Lighting, render_view  # noqa: E402
from vision.scanning import classify_measured, measure  # noqa: E402
from vision.setup import default_sim_setup  # noqa: E402


def nearest_centre(samples: np.ndarray) -> str:
    lab = rgb_to_lab(samples)
    centres = lab[[9 * c + 4 for c in range(6)]]
    return "".join(FACES[int(np.argmin(np.linalg.norm(centres - x, axis=1)))] for x in lab)


def stress_samples(seed: int) -> tuple[np.ndarray, str]:
    """Sticker colours made without the renderer, harsher than it: exposure
    from 0.08x to 3x (clipping), any colour temperature, per-face light,
    vignetting across each face, per-sticker variation, noise on the
    samples themselves, and red/orange ΔE 8.9 apart in 30 % of cubes."""
    from vision.render import SCHEME, SHADES, kelvin_to_gains

    rng = np.random.default_rng(seed)
    facelets = random_cube(seed + 5000).to_facelets()
    pal = {k: np.array(SHADES[c][rng.integers(len(SHADES[c]))], float) for k, c in SCHEME.items()}
    if rng.random() < 0.3:
        pal["R"], pal["L"] = np.array(HARD_RED, float), np.array(HARD_ORANGE, float)
    light = np.exp(rng.uniform(np.log(0.08), np.log(3.0)))
    lamp = light * kelvin_to_gains(rng.uniform(2700, 6500))
    lin = (np.array([pal[ch] for ch in facelets]) / 255) ** 2.2 * lamp
    pos = np.arange(54) % 9
    vignette = 1 - rng.uniform(0, 0.6) * ((pos % 3 - 1) ** 2 + (pos // 3 - 1) ** 2) / 2
    lin *= (np.repeat(rng.uniform(0.6, 1.15, 6), 9) * vignette * rng.uniform(0.93, 1.07, 54))[:, None]
    out = np.clip(lin, 0, 1) ** (1 / 2.2) * 255 + rng.normal(0, rng.uniform(1, 6), (54, 3))
    return np.clip(np.round(out), 0, 255), facelets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=int, default=1000)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--stress", type=int, default=500, help="colour-level stress cubes (no renderer)")
    ap.add_argument("--verbose", action="store_true", help="print every wrong or flagged scene")
    args = ap.parse_args()

    cams, views = default_sim_setup()
    size = (cams[0].width, cams[0].height)
    classify(np.full((54, 3), 128.0))  # compile the matcher before timing
    right = flagged_wrong = unflagged_wrong = false_alarm = baseline_right = 0
    read_through_alarm = read_through_unflagged = 0
    t_cls, t_all = [], []
    groups: dict[str, list[int]] = {}
    for seed in range(args.first_seed, args.first_seed + args.scenes):
        truth = random_cube(seed).to_facelets()
        rng = np.random.default_rng(seed)
        light = Lighting.random(rng)
        frames = {v.name: render_view(truth, v, size, lighting=light, rng=rng) for v in views}
        # best of a few runs: this shared machine's other processes are not the code's time
        t_both = []
        for _ in range(2):
            t0 = time.perf_counter()
            samples, spread, glare = measure(frames, views)
            result = classify_measured(samples, spread, glare)
            t_both.append(time.perf_counter() - t0)
        t_one = []
        for _ in range(3):
            t0 = time.perf_counter()
            classify(samples)
            t_one.append(time.perf_counter() - t0)
        t_all.append(min(t_both))
        t_cls.append(min(t_one))
        ok = result.facelets == truth
        lenient = classify_measured(samples, spread, glare, read_through_glare=True)
        read_through_alarm += ok and not lenient.ok
        read_through_unflagged += lenient.facelets != truth and lenient.ok
        right += ok
        baseline_right += nearest_centre(samples) == truth
        if not ok:
            if result.ok:
                unflagged_wrong += 1
            else:
                flagged_wrong += 1
        elif not result.ok:
            false_alarm += 1
        tags = ["all"]
        tags.append("dim" if light.intensity < 0.5 else "bright" if light.intensity > 1.3 else "normal")
        tags.append("warm" if light.kelvin < 3500 else "cold" if light.kelvin > 5500 else "neutral")
        if light.shades["R"] == HARD_RED and light.shades["L"] == HARD_ORANGE:
            tags.append("red~orange")
        if light.vignetting > 0.5:
            tags.append("vignetting")
        if light.glare:
            tags.append("glare")
        for t in tags:
            groups.setdefault(t, [0, 0])
            groups[t][0] += ok
            groups[t][1] += 1
        if args.verbose and (not ok or not result.ok):
            wrong = [i for i in range(54) if result.facelets[i] != truth[i]]
            print(f"seed {seed}: {'right' if ok else 'WRONG'} wrong={wrong} suspects={result.suspects}"
                  f" intensity={light.intensity:.2f} K={light.kelvin:.0f}")
    n = args.scenes
    ms = lambda xs, q: 1000 * float(np.percentile(xs, q))  # noqa: E731
    print(f"scenes: {n}  (python {platform.python_version()}, load {os.getloadavg()[0]:.2f})")
    print(f"exactly right: {right}/{n} = {100 * right / n:.2f}%   (bar: >= 99.5%)")
    print(f"wrong but flagged: {flagged_wrong}   wrong and NOT flagged: {unflagged_wrong}   (bar: 0)")
    print(f"right but flagged for a second look: {false_alarm} ({100 * false_alarm / n:.1f}%)")
    print(f"  with read_through_glare: {read_through_alarm} ({100 * read_through_alarm / n:.1f}%),"
          f" wrong and NOT flagged {read_through_unflagged}")
    print(f"nearest-centre-colour baseline right: {baseline_right}/{n} = {100 * baseline_right / n:.1f}%"
          f"  -> wrong cubes: baseline {n - baseline_right}, ours {n - right}")
    print("times are each scene's best of 2-3 runs")
    print(f"classification: median {ms(t_cls, 50):.1f} ms, p95 {ms(t_cls, 95):.1f} ms,"
          f" max {ms(t_cls, 100):.1f} ms   (bar: < 20 ms)")
    print(f"sampling + classification of two 1280x720 frames: median {ms(t_all, 50):.1f} ms,"
          f" p95 {ms(t_all, 95):.1f} ms, max {ms(t_all, 100):.1f} ms   (bar: < 50 ms)")
    print("by condition (right/scenes): "
          + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(groups.items())))
    s_right = s_unflagged = s_alarm = 0
    for seed in range(args.stress):
        samples, truth = stress_samples(seed)
        r = classify(samples)
        s_right += r.facelets == truth
        s_unflagged += r.facelets != truth and r.ok
        s_alarm += r.facelets == truth and not r.ok
    if args.stress:
        m = args.stress
        print(f"stress colours (no renderer): right {s_right}/{m} = {100 * s_right / m:.1f}%,"
              f" wrong and NOT flagged {s_unflagged}, right but flagged {s_alarm}")
    safe = unflagged_wrong == 0 and read_through_unflagged == 0 and s_unflagged == 0
    return 0 if right >= 0.995 * n and safe else 1


if __name__ == "__main__":
    sys.exit(main())
