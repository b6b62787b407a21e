"""The simulated camera's renderer: a cube state as a webcam would see it.

Faces are drawn through the same per-face geometry the sampler uses (the
four image corners of each face), so a scene tests the whole chain. The
light is varied the ways that break hobby robots: warm and cold light with
the camera's white balance locked, dim and overexposed scenes, uneven light
and vignetting, specular glare, noise, blur, JPEG artefacts, and sticker
shades from different cube brands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from .colour import linear_to_srgb, srgb_to_linear
from .setup import FaceSpec, ViewSpec

# Sticker shades (sRGB) seen on real cubes of different brands, per colour.
SHADES = {
    "white": [(245, 245, 245), (235, 235, 225), (250, 250, 240), (225, 228, 230)],
    "yellow": [(255, 213, 0), (255, 235, 0), (240, 220, 40), (250, 200, 20), (255, 240, 70)],
    "red": [(196, 30, 58), (185, 0, 0), (220, 20, 40), (160, 10, 30), (205, 45, 35), (200, 40, 30)],
    "orange": [(255, 88, 0), (255, 120, 0), (240, 100, 20), (255, 140, 30), (230, 80, 10), (225, 70, 20)],
    "green": [(0, 155, 72), (0, 200, 80), (20, 170, 90), (60, 180, 60)],
    "blue": [(0, 70, 173), (0, 80, 220), (20, 60, 160), (0, 100, 200)],
}
SCHEME = {"U": "white", "D": "yellow", "F": "green", "B": "blue", "R": "red", "L": "orange"}
# The one brand pair whose red and orange are only a few ΔE apart.
HARD_RED, HARD_ORANGE = (205, 45, 35), (215, 65, 30)


def kelvin_to_gains(kelvin: float) -> np.ndarray:
    """RGB multipliers of a light of this colour temperature for a camera
    white-balanced at 6500 K (Tanner Helland's fit of the Planckian locus)."""

    def rgb(k: float) -> np.ndarray:
        t = k / 100.0
        r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
        if t <= 66:
            g = 99.4708025861 * np.log(t) - 161.1195681661
        else:
            g = 288.1221695283 * (t - 60) ** -0.0755148492
        b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5177312231 * np.log(t - 10) - 305.0447927307)
        return np.clip(np.array([r, g, b]), 1, 255)

    g = rgb(kelvin) / rgb(6500)
    return g / g[1]


def _three_ints(values: np.ndarray) -> tuple[int, int, int]:
    a, b, c = (int(v) for v in values)
    return (a, b, c)


@dataclass
class Lighting:
    kelvin: float = 5500.0
    intensity: float = 1.0  # exposure: 0.3 dim .. 1.8 blown out
    gradient: tuple[float, float] = (0.0, 0.0)  # light falling off across the image: (angle, 0..1)
    vignetting: float = 0.0  # 0..0.8 darkening towards the corners
    face_shade: dict[str, float] = field(default_factory=dict)  # per-face brightness (angle to the lamp)
    glare: list[tuple[float, float, float, float]] = field(default_factory=list)
    """Specular spots: (x, y) as fractions of the image, radius fraction, strength."""
    glare_stickers: dict[int, float] = field(default_factory=dict)  # facelet index -> strength
    shadow_faces: dict[str, float] = field(default_factory=dict)  # face -> brightness factor
    noise: float = 2.0  # sensor noise, sRGB levels
    blur: float = 0.0  # Gaussian sigma in pixels
    jpeg_quality: int | None = None
    shades: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # face -> sRGB sticker colour
    sticker_jitter: float = 0.03  # per-sticker colour variation (printing, wear)
    background: tuple[int, int, int] = (90, 90, 90)

    @classmethod
    def random(cls, rng: np.random.Generator) -> Lighting:
        """Conditions drawn across the whole range, hard cases included."""
        shades = {f: SHADES[c][rng.integers(len(SHADES[c]))] for f, c in SCHEME.items()}
        if rng.random() < 0.15:
            shades["R"], shades["L"] = HARD_RED, HARD_ORANGE
        intensity = float(np.exp(rng.uniform(np.log(0.3), np.log(1.7))))
        n_glare = int(rng.choice([0, 0, 1, 1, 2, 3]))
        glare = [(float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.2, 0.8)),
                  float(rng.uniform(0.01, 0.04)), float(rng.uniform(0.3, 1.5))) for _ in range(n_glare)]
        return cls(
            kelvin=float(rng.uniform(2700, 6500)),
            intensity=intensity,
            gradient=(float(rng.uniform(0, 2 * np.pi)), float(rng.uniform(0, 0.7))),
            vignetting=float(rng.uniform(0, 0.7)),
            face_shade={f: float(rng.uniform(0.7, 1.1)) for f in "URFDLB"},
            glare=glare,
            noise=float(rng.uniform(0.5, 8.0)),
            blur=float(rng.choice([0.0, rng.uniform(0.5, 2.5)])),
            jpeg_quality=int(rng.integers(30, 95)) if rng.random() < 0.6 else None,
            shades=shades,
            sticker_jitter=float(rng.uniform(0.0, 0.06)),
            background=_three_ints(rng.integers(20, 200, 3)),
        )


GAP = 0.07  # black plastic between stickers, as a fraction of a sticker


def net_to_image(face: FaceSpec) -> np.ndarray:
    """Homography from the face's net square (0..3 x 0..3, x right, y down
    as drawn in the net) to image pixels."""
    c = np.asarray(face.corners, dtype=np.float64)
    c = np.roll(c, -face.top_left, axis=0)
    src = np.array([[0, 0], [3, 0], [3, 3], [0, 3]], dtype=np.float64)
    return cv2.getPerspectiveTransform(src.astype(np.float32), c.astype(np.float32)).astype(np.float64)


def _map(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.c_[pts, np.ones(len(pts))] @ h.T
    return p[:, :2] / p[:, 2:3]


def _sticker_outline(row: int, col: int) -> np.ndarray:
    """A rounded square inside cell (row, col) of the net square."""
    t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    half = 0.5 - GAP
    # superellipse: squarish with rounded corners
    x = np.sign(np.cos(t)) * np.abs(np.cos(t)) ** 0.3 * half
    y = np.sign(np.sin(t)) * np.abs(np.sin(t)) ** 0.3 * half
    return np.c_[col + 0.5 + x, row + 0.5 + y]


# Lookup tables: the renderer converts whole frames, and a table is many
# times faster than the power law per pixel. 65536 linear steps are finer
# than the 8-bit output anywhere on the curve.
_SRGB8_TO_LINEAR = srgb_to_linear(np.arange(256)).astype(np.float32)
_LUT_SIZE = 65536
_LINEAR_TO_SRGB8 = (linear_to_srgb(np.linspace(0.0, 1.0, _LUT_SIZE)) + 0.5).astype(np.uint8)


def _linear_to_srgb8(lin: np.ndarray) -> np.ndarray:
    idx = np.clip(np.asarray(lin, np.float32) * (_LUT_SIZE - 1) + 0.5, 0, _LUT_SIZE - 1).astype(np.int32)
    return _LINEAR_TO_SRGB8[idx]


def render_view(facelets: str, view: ViewSpec, size: tuple[int, int], *, lighting: Lighting | None = None,
                rng: np.random.Generator | None = None) -> np.ndarray:
    """Draw the faces of ``view`` showing cube ``facelets`` (54 letters
    URFDLB), as a BGR image of ``size`` (width, height)."""
    rng = rng if rng is not None else np.random.default_rng()
    lighting = lighting or Lighting()
    w, h = size
    shades = {f: lighting.shades.get(f, SHADES[c][0]) for f, c in SCHEME.items()}
    # reflectance drawn in sRGB (anti-aliased), then light applied in linear space
    canvas = np.empty((h, w, 3), np.uint8)
    canvas[:] = lighting.background[::-1]
    face_mask = np.zeros((h, w), np.uint8)
    centres: dict[int, tuple[float, float, float]] = {}
    for face in view.faces:
        hom = net_to_image(face)
        quad = _map(hom, np.array([[0, 0], [3, 0], [3, 3], [0, 3]], float))
        cv2.fillConvexPoly(canvas, np.round(quad * 16).astype(np.int32), (12, 12, 12), cv2.LINE_AA, 4)
        k = "URFDLB".index(face.face)
        shade = lighting.face_shade.get(face.face, 1.0) * lighting.shadow_faces.get(face.face, 1.0)
        cv2.fillConvexPoly(face_mask, np.round(quad * 16).astype(np.int32), int(min(255, shade * 200)),
                           cv2.LINE_8, 4)
        for n in range(9):
            row, col = divmod(n, 3)
            idx = 9 * k + n
            letter = facelets[idx]
            base = np.array(shades[letter], float)
            base = np.clip(base * (1 + rng.normal(0, lighting.sticker_jitter, 3)), 0, 255)
            if face.face == letter and n == 4:
                base = np.array(shades[letter], float)
            poly = _map(hom, _sticker_outline(row, col))
            cv2.fillPoly(canvas, [np.round(poly * 16).astype(np.int32)], tuple(float(v) for v in base[::-1]),
                         cv2.LINE_AA, 4)
            cx, cy = _map(hom, np.array([[col + 0.5, row + 0.5]]))[0]
            radius = float(np.linalg.norm(_map(hom, np.array([[col + 1.0, row + 0.5]]))[0] - [cx, cy]))
            centres[idx] = (cx, cy, radius)

    lin = _SRGB8_TO_LINEAR[canvas[..., ::-1]]
    # light field at low resolution, then scaled up (it is smooth)
    sw, sh = 64, 36
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u, v = (xx + 0.5) / sw - 0.5, (yy + 0.5) / sh - 0.5
    ang, strength = lighting.gradient
    field_ = 1.0 + strength * (np.cos(ang) * u + np.sin(ang) * v) * 2
    field_ *= 1.0 - lighting.vignetting * (u * u + v * v) / 0.5
    field_ = cv2.resize(np.clip(field_, 0.05, None), (w, h), interpolation=cv2.INTER_LINEAR)
    fm = face_mask.astype(np.float32) / 200.0
    fm[face_mask == 0] = 1.0
    gains = kelvin_to_gains(lighting.kelvin).astype(np.float32)
    light = (lighting.intensity * field_ * fm)[..., None] * gains[None, None, :]
    img = lin * light
    # specular glare: the lamp's own colour, added on top
    spots = list(lighting.glare)
    for idx, strength_ in lighting.glare_stickers.items():
        if idx in centres:
            cx, cy, r = centres[idx]
            spots.append((cx / w, cy / h, r * 0.55 / w, strength_))
    if spots:
        glare = np.zeros((h, w), np.float32)
        for gx, gy, gr, gs in spots:
            rad = max(2.0, gr * w)
            x0, x1 = int(max(0, gx * w - 3 * rad)), int(min(w, gx * w + 3 * rad + 1))
            y0, y1 = int(max(0, gy * h - 3 * rad)), int(min(h, gy * h + 3 * rad + 1))
            if x0 >= x1 or y0 >= y1:
                continue
            gy_, gx_ = np.mgrid[y0:y1, x0:x1].astype(np.float32)
            d2 = ((gx_ - gx * w) ** 2 + (gy_ - gy * h) ** 2) / (rad * rad)
            glare[y0:y1, x0:x1] += gs * np.exp(-d2 * 1.5) * (d2 < 1.6)
        img = img + glare[..., None] * (gains / gains.max())[None, None, :]
    out = _linear_to_srgb8(img)[..., ::-1].copy()
    if lighting.blur > 0.2:
        out = cv2.GaussianBlur(out, (0, 0), lighting.blur)
    return add_sensor_effects(out, lighting, rng)


def add_sensor_effects(image: np.ndarray, lighting: Lighting, rng: np.random.Generator) -> np.ndarray:
    """What changes from one frame to the next: sensor noise and the
    camera's JPEG compression."""
    out = image
    if lighting.noise > 0:
        cv2.setRNGSeed(int(rng.integers(2**31)))  # OpenCV's generator: fast, and still repeatable
        noise = np.empty(out.shape, np.int16)
        # OpenCV takes scalars for the mean and spread; its type stubs list only arrays (which OpenCV
        # also takes, but as arrays they draw different numbers: the seeded scenes would change)
        cv2.randn(noise, 0.0, float(lighting.noise))  # type: ignore[call-overload]
        out = cv2.add(out, noise, dtype=cv2.CV_8U)
    if lighting.jpeg_quality:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(lighting.jpeg_quality)])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is None:
            raise RuntimeError("OpenCV could not JPEG-compress a rendered frame")
        out = decoded
    return out
