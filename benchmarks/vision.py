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

from solver import parse_facelets, random_cube  # noqa: E402
from solver.facelets import FACES  # noqa: E402
from vision.classifier import classify  # noqa: E402
from vision.colour import rgb_to_lab  # noqa: E402
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


# ---------------------------------------------------------------- the stress set (#14)

STRESS_CONDITIONS = ("noise", "exposure", "cast", "red~orange", "glare", "low-res", "motion-blur")


def _lit(palette: dict[str, np.ndarray], facelets: str, light: np.ndarray) -> np.ndarray:
    """(54, 6, 3) each colour as it would look at each sticker: the sticker's
    own light (linear, per channel) on each face colour, clipped like a sensor."""
    from vision.colour import linear_to_srgb, srgb_to_linear

    cols = srgb_to_linear(np.array([palette[f] for f in FACES]))  # (6, 3)
    return np.clip(linear_to_srgb(np.clip(light[:, None, :] * cols[None], 0, 1)), 0, 255)


def person_could_tell(samples: np.ndarray, lit: np.ndarray, facelets: str) -> bool:
    """A person who knew the six colours as lit at each sticker would name
    every sticker right: each measured colour is nearer (ΔE) its own colour
    than any other, by at least ΔE 3 (what a careful eye separates)."""
    lab = rgb_to_lab(samples)
    d = np.linalg.norm(rgb_to_lab(lit) - lab[:, None], axis=-1)  # (54, 6)
    own = np.array([FACES.index(c) for c in facelets])
    mine = d[np.arange(54), own]
    d[np.arange(54), own] = np.inf
    return bool((d.min(axis=1) - mine >= 3.0).all())


def stress_cube(condition: str, seed: int
                ) -> tuple[np.ndarray, str, bool, np.ndarray | None, np.ndarray | None]:
    """One cube of the stress set: (samples, truth, a person could tell
    the colours apart, spread, glare) - spread and glare for rendered ones.

    Colour-level conditions start from sticker shades of real cubes (several
    brands) under a random lamp and per-sticker light, then perturb them the
    way the condition does; rendered ones go through the renderer and the
    sampler (glare spots, a low-resolution camera, motion blur)."""
    import cv2

    from vision.render import SCHEME, SHADES, kelvin_to_gains
    from vision.sample import sample_faces  # noqa: F401  (the sampler is what measure uses)

    rng = np.random.default_rng(seed * 7 + STRESS_CONDITIONS.index(condition))
    truth = random_cube(900_000 + seed * 7 + STRESS_CONDITIONS.index(condition)).to_facelets()
    if condition in ("glare", "low-res", "motion-blur"):
        cams, views = default_sim_setup()
        size = (cams[0].width, cams[0].height)
        light = Lighting.random(rng)
        if condition == "glare":
            light.glare = [(float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.2, 0.8)),
                            float(rng.uniform(0.01, 0.05)), float(rng.uniform(0.5, 2.0))) for _ in range(4)]
            light.glare_stickers = {int(i): float(rng.uniform(0.5, 3.0))
                                    for i in rng.choice(54, 3, replace=False) if i % 9 != 4}
        frames = {}
        for v in views:
            img = render_view(truth, v, size, lighting=light, rng=rng)
            if condition == "low-res":  # a 320x180 (or 427x240) webcam, stretched to the set-up's size
                f = float(rng.choice([4.0, 3.0]))
                small = cv2.resize(img, (int(size[0] / f), int(size[1] / f)), interpolation=cv2.INTER_AREA)
                img = cv2.resize(small, size, interpolation=cv2.INTER_LINEAR)
            elif condition == "motion-blur":  # the cube or camera moving during the exposure
                n = int(rng.integers(9, 31))
                k = np.zeros((n, n), np.float32)
                k[n // 2] = 1.0 / n
                rot = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), float(rng.uniform(0, 180)), 1.0)
                k = cv2.warpAffine(k, rot, (n, n))
                img = cv2.filter2D(img, -1, k / max(k.sum(), 1e-6))
            frames[v.name] = img
        samples, spread, glare = measure(frames, views)
        pal = {f: np.array(light.shades[f], float) for f in FACES}
        sep = min(float(np.linalg.norm(rgb_to_lab(pal[a]) - rgb_to_lab(pal[b])))
                  for i, a in enumerate(FACES) for b in FACES[i + 1:])
        tell = sep >= 10.0 and bool((glare < 0.5).all())
        return samples, truth, tell, spread, glare
    pal = {k: np.array(SHADES[c][rng.integers(len(SHADES[c]))], float) for k, c in SCHEME.items()}
    if condition == "red~orange":
        r = np.array([rng.uniform(185, 215), rng.uniform(25, 50), rng.uniform(25, 45)])
        pal["R"], pal["L"] = r, r + [rng.uniform(0, 15), rng.uniform(8, 30), rng.uniform(-10, 0)]
    level = float(np.exp(rng.uniform(np.log(0.5), np.log(1.2))))
    kelvin = float(rng.uniform(4500, 6500))
    if condition == "exposure":
        level = float(np.exp(rng.uniform(np.log(0.08), np.log(3.0))))
    if condition == "cast":
        kelvin = float(rng.choice([rng.uniform(2200, 3200), rng.uniform(7000, 12000)]))
    lamp = level * kelvin_to_gains(kelvin)
    if condition == "cast" and rng.random() < 0.5:  # a green or magenta cast (fluorescent, LED)
        lamp = lamp * np.array([1.0, rng.choice([0.75, 1.3]), 1.0])
    pos = np.arange(54) % 9
    vignette = 1 - rng.uniform(0, 0.4) * ((pos % 3 - 1) ** 2 + (pos // 3 - 1) ** 2) / 2
    per = np.repeat(rng.uniform(0.75, 1.1, 6), 9) * vignette * rng.uniform(0.95, 1.05, 54)
    light_at = per[:, None] * lamp[None, :]
    lit = _lit(pal, truth, light_at)
    clean = lit[np.arange(54), [FACES.index(c) for c in truth]]
    sigma = float(rng.uniform(8, 14)) if condition == "noise" else float(rng.uniform(1, 4))
    samples = np.clip(np.round(clean + rng.normal(0, sigma, (54, 3))), 0, 255)
    return samples, truth, person_could_tell(samples, lit, truth), None, None


def stress_set(per_condition: int, conditions: tuple[str, ...] = STRESS_CONDITIONS) -> int:
    """Score the stress set: wrong-and-sure (bar 0), right-and-sure where a
    person could tell the colours apart (bar >= 90 %), time per cube. The
    seeds of wrong-and-sure cubes, and of cubes a person could tell but we
    flagged, are printed to look at."""
    print(f"stress set: {per_condition} cubes x {len(conditions)} conditions", flush=True)
    total_ws = 0
    all_tell = all_tell_sure = 0
    times: list[float] = []
    for cond in conditions:
        n = right = sure = wrong_sure = tell = tell_sure = flagged = 0
        seeds_ws: list[int] = []
        seeds_unsure: list[int] = []
        for seed in range(per_condition):
            samples, truth, can_tell, spread, glare = stress_cube(cond, seed)
            best = np.inf
            for _ in range(3):  # best of three: the shared machine's other processes are not the code's time
                t0 = time.perf_counter()
                if spread is not None and glare is not None:
                    r = classify_measured(samples, spread, glare)
                else:
                    r = classify(samples)
                best = min(best, time.perf_counter() - t0)
            times.append(best)
            ok = r.facelets == truth
            n += 1
            right += ok
            sure += r.ok
            wrong_sure += r.ok and not ok
            flagged += not r.ok
            tell += can_tell
            tell_sure += can_tell and ok and r.ok
            if r.ok and not ok:
                seeds_ws.append(seed)
            elif can_tell and not (ok and r.ok):
                seeds_unsure.append(seed)
        total_ws += wrong_sure
        all_tell += tell
        all_tell_sure += tell_sure
        print(f"  {cond:<12} right {right}/{n}, sure {sure}, WRONG AND SURE {wrong_sure}, flagged {flagged};"
              f" a person could tell: {tell}, of them right and sure {tell_sure}"
              f" ({100 * tell_sure / max(tell, 1):.1f} %)", flush=True)
        if seeds_ws:
            print(f"    wrong and sure, seeds: {seeds_ws}")
        if seeds_unsure:
            print(f"    a person could tell, not right and sure, seeds: {seeds_unsure[:40]}")
    ms = 1000 * np.array(times)
    print(f"  all: wrong and sure {total_ws} (bar 0); right and sure where a person could tell"
          f" {all_tell_sure}/{all_tell} = {100 * all_tell_sure / max(all_tell, 1):.1f} % (bar >= 90 %)")
    print(f"  classification: median {np.median(ms):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms"
          " (bar < 20 ms)")
    return total_ws == 0 and all_tell_sure >= 0.9 * all_tell


def noise_sigma_8(n: int) -> int:
    """Per-sticker Gaussian noise, sigma 8 on each channel, on real-like
    measured colours: rendered scenes under random light (no glare spots),
    sampled as a scan samples them. Bar: 0 wrong and sure."""
    cams, views = default_sim_setup()
    size = (cams[0].width, cams[0].height)
    right = sure = wrong_sure = 0
    for seed in range(n):
        rng = np.random.default_rng(500_000 + seed)
        truth = random_cube(500_000 + seed).to_facelets()
        light = Lighting.random(rng)
        light.glare = []
        samples, _, _ = measure({v.name: render_view(truth, v, size, lighting=light, rng=rng) for v in views},
                                views)
        r = classify(np.clip(samples + rng.normal(0, 8, samples.shape), 0, 255))
        right += r.facelets == truth
        sure += r.ok
        wrong_sure += r.ok and r.facelets != truth
    print(f"per-sticker noise sigma 8, {n} cubes: right {right}, sure {sure},"
          f" WRONG AND SURE {wrong_sure} (bar 0)")
    return wrong_sure == 0


def two_looks(n: int) -> int:
    """The rig's second look (#14 item 3): a cube read, one face turned, read
    again under other light, both looks' evidence added up
    (:func:`vision.classifier.combine_looks`). Scenes are rendered under
    random light as the simulated rig's captures are, half of them with
    sigma-8 noise on each sticker so that many single looks are in doubt.
    Bar: 0 wrong and sure after combining; reported: how many cubes in doubt
    after one look the second settles."""
    from robot.app.doubt import CANDIDATES, facelet_moves
    from vision.classifier import combine_looks

    cams, views = default_sim_setup()
    size = (cams[0].width, cams[0].height)
    wrong_sure = doubtful_first = settled = 0

    def look(facelets: str, rng: np.random.Generator, noisy: bool) -> object:
        light = Lighting.random(rng)
        samples, spread, glare = measure({v.name: render_view(facelets, v, size, lighting=light, rng=rng)
                                          for v in views}, views)
        if noisy:
            samples = np.clip(samples + rng.normal(0, 8, samples.shape), 0, 255)
        return classify_measured(samples, spread, glare)

    for seed in range(n):
        rng = np.random.default_rng(700_000 + seed)
        truth = random_cube(700_000 + seed).to_facelets()
        move = CANDIDATES[int(rng.integers(len(CANDIDATES)))]
        after = parse_facelets(truth).apply(move).to_facelets()
        noisy = seed % 2 == 1
        first, second = look(truth, rng, noisy), look(after, rng, noisy)
        both = combine_looks(first, facelet_moves(move), second, np.ones(54, bool))
        wrong_sure += both.ok and both.facelets != after
        if not first.ok:
            doubtful_first += 1
            settled += both.ok and both.facelets == after
    print(f"two looks with a turn between, {n} cubes: in doubt after the first look {doubtful_first},"
          f" settled by the second {settled}, WRONG AND SURE after combining {wrong_sure} (bar 0)")
    return wrong_sure == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=int, default=1000)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--stress", type=int, default=500, help="colour-level stress cubes (no renderer)")
    ap.add_argument("--verbose", action="store_true", help="print every wrong or flagged scene")
    ap.add_argument("--stress-set", type=int, default=300, metavar="N",
                    help="cubes per condition of the #14 stress set (7 conditions)")
    ap.add_argument("--conditions", nargs="+", choices=STRESS_CONDITIONS, default=STRESS_CONDITIONS,
                    help="only these conditions of the stress set")
    ap.add_argument("--two-looks", type=int, default=400, metavar="N",
                    help="cubes looked at twice with a face turned between")
    ap.add_argument("--noise8", type=int, default=1000, metavar="N", help="cubes with sigma-8 sticker noise")
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
    if n:
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
    if args.noise8:
        safe &= noise_sigma_8(args.noise8)
    if args.two_looks:
        safe &= two_looks(args.two_looks)
    if args.stress_set:
        safe &= stress_set(args.stress_set, tuple(args.conditions))
    return 0 if right >= 0.995 * n and safe else 1


if __name__ == "__main__":
    sys.exit(main())
