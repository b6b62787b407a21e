"""Sticker colours -> the most likely valid cube, with doubts named.

The classifier calibrates itself from the scan: a cube shows each colour 9
times, and the centres (when seen) say which colour is which face. Starting
from the centre colours (or given colours, or a profile), it alternates
between (1) fitting a robust Gaussian per face colour, plus a light offset
per face, in log linear-light RGB (see :func:`features`) and (2) finding the
cheapest *solvable* cube under those models
(:mod:`vision.pieces`: whole pieces, each once, twist/flip/parity right).
Because whole pieces are matched, a red sticker that looks orange is pulled
back by the other colours on its piece, and by the fact that there is only
one red-green edge.

Confidence per sticker is the cost gap (in nats of the fitted model) between
the best solvable cube and the best one with that sticker a different colour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from solver import CubeError
from solver.facelets import FACES, OPPOSITE, position_name
from solver.validate import parse_facelets

from .color import RGB, delta_e, lab_to_rgb, rgb_to_lab, rgb_tuple, srgb_to_linear
from .pieces import Solution, best_cube
from .profile import Profile

Colours = Mapping[str, Sequence[float]]
"""Face letter -> an RGB colour (0..255)."""

NU = 4.0  # Student-t degrees of freedom: one glare-struck sticker costs a bounded amount
PRIOR_SIGMA = 6.0  # per-axis spread (feature units) assumed before the scan says otherwise
PRIOR_WEIGHT = 4.0  # how many pseudo-samples the prior spread is worth
SUSPECT_GAP = 6.0  # nats: a sticker whose best alternative costs less than this is in doubt
OUTLIER_D2 = 100.0  # squared Mahalanobis distance to every colour beyond which a sticker looks like none
OVERRULED_NATS = 4.0  # how much worse than its best-looking colour a sticker may be made to be
DRIFT_DE = 18.0  # ΔE between a scanned face colour and the profile's that means the light changed
CLOSE_DE = 10.0  # ΔE under which two face colours are hard to tell apart
ITERATIONS = 4


@dataclass
class Classification:
    facelets: str
    confidence: np.ndarray
    suspects: list[int]
    valid: bool
    error: CubeError | None = None
    warnings: list[str] = field(default_factory=list)
    colors: dict[str, RGB] = field(default_factory=dict)
    """The fitted RGB colour of each face, as the scan saw it."""
    reflections: list[int] = field(default_factory=list)
    """Stickers that looked like their colour washed out by added light and
    were read from their pieces; not counted as doubtful here (the pieces
    are sure), but a scan that can see the picture may decide otherwise."""

    @property
    def ok(self) -> bool:
        """Safe to act on: a valid cube with no sticker in doubt."""
        return self.valid and not self.suspects

    def to_dict(self) -> dict:
        return {
            "facelets": self.facelets,
            "confidence": [round(float(c), 3) for c in self.confidence],
            "suspects": list(self.suspects),
            "suspect_names": [position_name(i) for i in self.suspects],
            "valid": self.valid,
            "ok": self.ok,
            "error": self.error.to_dict() if self.error else None,
            "warnings": list(self.warnings),
            "reflections": list(self.reflections),
        }


LOG_EPS = 0.01  # linear-light floor (relative to the scan's exposure): keeps near-black channels' logs finite
LOG_SCALE = 20.0  # log units -> roughly ΔE-sized units, the units the spreads and priors here are in
INTENSITY_WEIGHT = 0.3
"""Brightness counts less than chromaticity: vignetting, dim light and glare
move a sticker's brightness far more than its hue."""


def exposure(rgb: np.ndarray) -> float:
    """The scan's brightness in linear light (90th percentile of each
    sticker's brightest channel): the log floor is set relative to it, so a
    dim scan keeps its colour differences instead of sinking into the floor."""
    lin = srgb_to_linear(np.clip(rgb[~np.isnan(rgb).any(axis=1)], 0, 255))
    return float(max(np.percentile(lin.max(axis=1), 90), 0.01)) if len(lin) else 1.0


def features(rgb: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Sticker colour -> the space colours are compared in: the log of
    linear-light RGB (``scale`` is the scan's :func:`exposure`), as two
    chromaticities (log R/G, log B/G) and a down-weighted log intensity.

    A change in the light's brightness or colour multiplies linear RGB, so
    here it is a *shift* - the same for every colour - which a per-face
    offset absorbs exactly, and red against orange differs by a fixed
    amount whether the scan is dim or bright."""
    rgb = np.asarray(rgb, dtype=np.float64)
    lin = srgb_to_linear(np.clip(rgb, 0, 255))
    lg = np.log(lin / scale + LOG_EPS)
    out = np.empty_like(lg)
    out[..., 0] = lg[..., 0] - lg[..., 1]
    out[..., 1] = lg[..., 2] - lg[..., 1]
    out[..., 2] = INTENSITY_WEIGHT * lg.mean(axis=-1)
    return out * LOG_SCALE


def _face_colours_from(profile: Profile | Colours | None) -> dict[str, np.ndarray]:
    if profile is None:
        return {}
    colours = profile.face_colors if isinstance(profile, Profile) else profile
    return {f: np.asarray(colours[f], float) for f in FACES if f in colours}


def _initial_means(rgb: np.ndarray, centers: Colours | None, profile: Profile | Colours | None) -> np.ndarray:
    """RGB means per face: seen centre, else given centre colour, else profile,
    else NaN (to be found by clustering)."""
    means = np.full((6, 3), np.nan)
    given = {k: np.asarray(v, float) for k, v in (centers or {}).items()}
    prof = _face_colours_from(profile)
    for c, f in enumerate(FACES):
        centre = rgb[9 * c + 4]
        if not np.isnan(centre).any():
            means[c] = centre
        elif f in given:
            means[c] = given[f]
        elif f in prof:
            means[c] = prof[f]
    return means


def _cluster_missing(x: np.ndarray, means: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Fill unknown face colours by farthest-point seeding and k-means over
    the seen stickers; which cluster is which face is settled afterwards by
    the piece matcher (it tries the assignments of clusters to faces)."""
    known = ~np.isnan(means).any(axis=1)
    pts = x[seen]
    seeds = [m for m in means[known]]
    while len(seeds) < 6:
        d = np.min([np.linalg.norm(pts - c, axis=1) for c in seeds], axis=0) if seeds else \
            np.linalg.norm(pts - pts.mean(0), axis=1)
        seeds.append(pts[int(np.argmax(d))])
    centres = np.array(seeds)
    fixed = len(means[known])
    for _ in range(10):
        lab_ = np.argmin(np.linalg.norm(pts[:, None] - centres[None], axis=2), axis=1)
        for k in range(fixed, 6):
            if np.any(lab_ == k):
                centres[k] = np.median(pts[lab_ == k], axis=0)
    out = means.copy()
    out[~known] = centres[fixed:]
    return out


def _costs(x: np.ndarray, seen: np.ndarray, mu: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Student-t negative log-likelihood of each sticker under each face
    colour; unseen stickers cost nothing anywhere (the pieces decide)."""
    inv = np.linalg.inv(cov)
    _, logdet = np.linalg.slogdet(cov)
    d = x[:, None, :] - mu[None, :, :]
    d2 = np.einsum("nca,cab,ncb->nc", d, inv, d)
    d2 = np.where(seen[:, None], d2, 0.0)
    cost = 0.5 * (NU + 3) * np.log1p(d2 / NU) + 0.5 * logdet[None, :]
    cost[~seen] = 0.0
    return cost, d2


def _fit(x: np.ndarray, seen: np.ndarray, assign: np.ndarray, prior_mu: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray]:
    mu = prior_mu.copy()
    cov = np.empty((6, 3, 3))
    prior = np.eye(3) * PRIOR_SIGMA**2
    for c in range(6):
        pts = x[seen & (assign == c)]
        if len(pts):
            mu[c] = np.median(pts, axis=0) if len(pts) >= 3 else pts.mean(0)
            d = pts - mu[c]
            # Huber-like damping so one glare-struck sticker does not inflate the spread
            w = 1.0 / np.maximum(1.0, np.linalg.norm(d, axis=1) / (3 * PRIOR_SIGMA))
            s = (d * w[:, None]).T @ (d * w[:, None])
            cov[c] = (s + PRIOR_WEIGHT * prior) / (len(pts) + PRIOR_WEIGHT)
        else:
            cov[c] = prior * 4
    return mu, cov


FACE_OF = np.arange(54) // 9
BETA_SIGMA = 4.0  # typical per-face light difference (feature units) the model allows without cost


def _kmeans_from(x0: np.ndarray, seen: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Means after a few k-means steps from the centre colours: a second
    start that does not trust any single centre sticker (glare on a centre
    would otherwise pull its whole colour off)."""
    m = mu.copy()
    pts = x0[seen]
    for _ in range(6):
        lab_ = np.argmin(((pts[:, None] - m[None]) ** 2).sum(-1), axis=1)
        for c in range(6):
            sel = pts[lab_ == c]
            if len(sel) >= 3:
                m[c] = np.median(sel, axis=0)
    return m


def _em(x0: np.ndarray, seen: np.ndarray, mu: np.ndarray, unknown: np.ndarray
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Solution]:
    """Alternate fitting the colour models (and each face's light offset)
    and finding the best solvable cube; returns the fit and its solution."""
    cov = np.repeat((np.eye(3) * PRIOR_SIGMA**2 * 4)[None], 6, axis=0)
    beta = np.zeros((6, 3))
    prev = None
    for it in range(ITERATIONS):
        cost, _ = _costs(x0 - beta[FACE_OF], seen, mu, cov)
        if unknown.any() and it == 0 and unknown.sum() <= 4:  # more: ambiguous anyway (flagged)
            cost = _resolve_unknown_faces(cost, unknown)
        f = best_cube(cost, marginals=False).facelets()
        if f == prev:
            break
        prev = f
        assign = np.array([FACES.index(ch) for ch in f])
        for _ in range(2):
            mu, cov = _fit(x0 - beta[FACE_OF], seen, assign, mu)
            beta = _face_offsets(x0, seen, assign, mu, cov)
    cost, d2 = _costs(x0 - beta[FACE_OF], seen, mu, cov)
    cost = cost + _beta_penalty(beta) / 54.0
    sol = best_cube(cost, marginals=False)
    return mu, cov, beta, cost, d2, sol


def _face_offsets(x0: np.ndarray, seen: np.ndarray, assign: np.ndarray, mu: np.ndarray, cov: np.ndarray
                  ) -> np.ndarray:
    """Each face's shift in colour space (it faces the lamp differently),
    shrunk towards zero, with the mean shift fixed at zero."""
    r = x0 - mu[assign]
    beta = np.zeros((6, 3))
    var = np.array([np.trace(c) / 3 for c in cov])
    for f in range(6):
        sel = seen & (FACE_OF == f)
        if sel.sum() >= 4:
            med = np.median(r[sel], axis=0)
            lam = np.mean(var[assign[sel]]) / BETA_SIGMA**2
            beta[f] = med * sel.sum() / (sel.sum() + lam)
    return beta - beta.mean(axis=0)


def _beta_penalty(beta: np.ndarray) -> float:
    return float(0.5 * (beta**2).sum() / BETA_SIGMA**2)


def _doubtful(sol: Solution, cost: np.ndarray) -> bool:
    """Any sticker close to changing, or any overruled by its piece."""
    f = sol.facelets()
    assign = np.array([FACES.index(ch) for ch in f])
    marg = sol.marginals.copy()
    marg[np.arange(54), assign] = np.inf
    gap = marg.min(axis=1) - sol.total
    gap[[9 * c + 4 for c in range(6)]] = np.inf
    forced = cost[np.arange(54), assign] - cost.min(axis=1)
    return bool((gap < 2 * SUSPECT_GAP).any() or (forced > OVERRULED_NATS).any())


def _glare_like(rgb: np.ndarray, seen: np.ndarray, assign: np.ndarray) -> np.ndarray:
    """Stickers that look like their colour plus added light (brighter in
    every channel): a reflection, which the pieces may overrule without doubt."""
    lin = srgb_to_linear(np.clip(np.nan_to_num(rgb), 0, 255))
    out = np.zeros(54, bool)
    for c in range(6):
        sel = seen & (assign == c)
        if sel.sum() < 3:
            continue
        m = np.median(lin[sel], axis=0)
        o = lin[sel]
        out[sel] = (o >= 0.8 * m - 0.01).all(axis=1) & (o.sum(axis=1) > 1.3 * m.sum())
    return out


def classify(samples: npt.ArrayLike, *, centers: Colours | None = None,
             profile: Profile | Colours | None = None) -> Classification:
    """The most likely valid cube for 54 RGB sticker colours (facelet order,
    NaN rows for stickers not seen). ``centers`` gives face -> RGB for
    hidden centres; ``profile`` (a :class:`vision.profile.Profile` or a
    face -> RGB mapping) seeds the colours and is checked for drift."""
    rgb = np.asarray(samples, dtype=np.float64)
    if rgb.shape != (54, 3):
        raise ValueError(f"samples must have shape (54, 3), not {rgb.shape}")
    seen = np.asarray(~np.isnan(rgb).any(axis=1))
    warnings: list[str] = []
    if seen.sum() < 9:
        return Classification("?" * 54, np.zeros(54), list(range(54)), False,
                              CubeError("length", f"only {int(seen.sum())} stickers seen"),
                              ["too few stickers seen to read the cube"])
    rgb = np.where(seen[:, None], np.clip(rgb, 0, 255), np.nan)
    scale = exposure(rgb)
    x = features(np.nan_to_num(rgb), scale)
    x[~seen] = np.nan
    means_rgb = _initial_means(rgb, centers, profile)
    unknown = np.isnan(means_rgb).any(axis=1)
    mu = features(np.nan_to_num(means_rgb), scale)
    mu[unknown] = np.nan
    if unknown.any():
        mu = _cluster_missing(x, mu, seen)
    x0 = np.where(seen[:, None], x, 0.0)
    mu, cov, beta, cost, d2, sol = _em(x0, seen, mu, unknown)
    sol = best_cube(cost)  # now with the min-marginals
    if not unknown.any() and _doubtful(sol, cost):
        # a second start that trusts no single centre; keep whichever explains the scan better
        fit = _em(x0, seen, _kmeans_from(x0, seen, mu), unknown)
        if fit[-1].total < sol.total - 1e-9:
            mu, cov, beta, cost, d2, _ = fit
            sol = best_cube(cost)
    facelets = sol.facelets()
    assign = np.array([FACES.index(ch) for ch in facelets])

    marg = sol.marginals.copy()
    marg[np.arange(54), assign] = np.inf
    gap = np.maximum(marg.min(axis=1) - sol.total, 0.0)
    confidence = 1.0 - np.exp(-gap / 3.0)
    nearest_d2 = d2.min(axis=1)
    # the pieces overruled what the camera saw: the sticker looks clearly like another colour
    overruled = seen & (cost[np.arange(54), assign] - cost.min(axis=1) > OVERRULED_NATS)
    reflections = overruled & _glare_like(rgb, seen, assign)
    overruled &= ~reflections
    suspect = (gap < SUSPECT_GAP) | (seen & ((nearest_d2 > OUTLIER_D2) | overruled))
    for c in range(6):
        suspect[9 * c + 4] = False
    confidence[suspect] = np.minimum(confidence[suspect], 0.5)
    known = [FACES[c] for c in range(6) if not unknown[c]]
    if not any(b not in (a, OPPOSITE[a]) for a in known for b in known):
        # no two neighbouring centres known: a whole-cube turn of the colours fits as well
        suspect |= seen
        for c in range(6):
            suspect[9 * c + 4] = False
        warnings.append("which colour belongs to which face cannot be told: the centres were not seen"
                        " and no centre colours or profile were given")
    suspects = [int(i) for i in np.flatnonzero(suspect)]

    error = None
    valid = True
    try:
        parse_facelets(facelets)
    except CubeError as e:  # cannot happen for the matcher's output; kept as the contract's guard
        valid, error = False, e

    fitted_lab = np.zeros((6, 3))
    for c in range(6):
        sel = seen & (assign == c)
        fitted_lab[c] = np.median(rgb_to_lab(rgb[sel]), axis=0) if sel.any() else rgb_to_lab(
            np.nan_to_num(means_rgb[c], nan=128.0))
    colors = {f: rgb_tuple(lab_to_rgb(fitted_lab[c])) for c, f in enumerate(FACES)}
    prof = _face_colours_from(profile)
    if prof:
        drift = {f: float(delta_e(fitted_lab[c], rgb_to_lab(prof[f])))
                 for c, f in enumerate(FACES) if f in prof}
        far = {f: d for f, d in drift.items() if d > DRIFT_DE}
        if far:
            warnings.append("colours have drifted from the calibration profile ("
                            + ", ".join(f"{f} ΔE {d:.0f}" for f, d in sorted(far.items()))
                            + "): the light changed, recalibrate")
    de = delta_e(fitted_lab[:, None], fitted_lab[None])
    for a in range(6):
        for b in range(a + 1, 6):
            if de[a, b] < CLOSE_DE:
                warnings.append(f"faces {FACES[a]} and {FACES[b]} look alike (ΔE {de[a, b]:.1f})")
    if suspects:
        warnings.append(f"{len(suspects)} sticker(s) in doubt: "
                        + ", ".join(position_name(i) for i in suspects[:12])
                        + ("..." if len(suspects) > 12 else ""))
    refl = [int(i) for i in np.flatnonzero(reflections) if not suspect[i]]
    return Classification(facelets, confidence, suspects, valid, error, warnings, colors, refl)


def _resolve_unknown_faces(cost: np.ndarray, unknown: np.ndarray) -> np.ndarray:
    """Clusters found without a centre are not yet tied to a face: try every
    way of giving them to the unknown faces and keep the one whose best
    solvable cube is cheapest."""
    from itertools import permutations

    idx = np.flatnonzero(unknown)

    def given(perm: tuple[np.integer, ...]) -> np.ndarray:
        c = cost.copy()
        c[:, idx] = cost[:, list(perm)]
        return c

    # min keeps the first of equally cheap ones, the identity when nothing is better
    return min((given(perm) for perm in permutations(idx)), key=lambda c: best_cube(c, marginals=False).total)
