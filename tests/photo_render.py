"""Synthetic photos of one cube face, as a person takes them with a phone.

The photo reader (:mod:`vision.photos`) must work on real photos, which the
project cannot ship; this renderer makes stand-ins that carry what makes
real photos hard, drawn from a seeded generator so every failure can be
replayed:

* the cube in 3D through a pinhole camera, tilted up to 40 degrees and
  rolled any amount (the face in any of its four rotations), so the
  stickers are perspective quadrilaterals and one or two neighbouring
  faces show, foreshortened, with stickers of their own;
* black plastic between rounded stickers, or a stickerless cube (tiles
  with only a thin dark groove, same-colour tiles nearly touching);
* a busy background: a gradient, random shapes in any colour (cube colours
  included), lines, sometimes a tiled surface, and a skin-coloured hand
  holding the cube from behind;
* light: colour temperature, exposure, a gradient, a soft shadow across
  the picture, darker side faces, specular glare spots on the face,
  sensor noise and blur; the caller writes PNG or JPEG at any quality;
* sizes from 640x480 to 4000x3000, the face 22-70 % of the short side.

* optics and handling: barrel (or slight pincushion) lens distortion, so a
  face's straight rows bend near the picture's edge; motion blur from a
  moving hand; a mottled texture of worn stickers and dust.

What it does not draw (and the docs say so): depth of field, reflections
of the room in the stickers, a finger over a sticker (that sticker cannot
be read: the photo is to be retaken).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.colour import linear_to_srgb, srgb_to_linear
from vision.render import SCHEME, SHADES, kelvin_to_gains

SIZES = [(640, 480), (1280, 720), (1600, 1200), (1920, 1080), (2592, 1944), (3264, 2448), (4000, 3000)]


@dataclass
class FacePhoto:
    image: np.ndarray
    """BGR, uint8."""
    rotation: int
    """Quarter turns clockwise the face is shown in, from the README net's orientation (about)."""
    corners: np.ndarray
    """(4, 2) image points of the face's net corners: top-left, top-right, bottom-right, bottom-left."""


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix about a unit axis (Rodrigues)."""
    a = axis / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


# Each face of the cube (side 3, centred at 0): centre, net "right" and net "down" directions.
# The photographed face is +z; the others carry stickers of random colours.
_FACES = {
    "front": ((0, 0, 1.5), (1, 0, 0), (0, -1, 0)),
    "right": ((1.5, 0, 0), (0, 0, -1), (0, -1, 0)),
    "left": ((-1.5, 0, 0), (0, 0, 1), (0, -1, 0)),
    "top": ((0, 1.5, 0), (1, 0, 0), (0, 0, 1)),
    "bottom": ((0, -1.5, 0), (1, 0, 0), (0, 0, -1)),
}


def _sticker_outline(row: int, col: int, gap: float, roundness: float) -> np.ndarray:
    """A rounded square in cell (row, col) of a 3x3 face (net units 0..3)."""
    t = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    half = 0.5 - gap
    x = np.sign(np.cos(t)) * np.abs(np.cos(t)) ** roundness * half
    y = np.sign(np.sin(t)) * np.abs(np.sin(t)) ** roundness * half
    return np.c_[col + 0.5 + x, row + 0.5 + y]


def _project(p: np.ndarray, pose: np.ndarray, dist: float, focal: float, size: tuple[int, int],
             shift: np.ndarray, k1: float = 0.0) -> np.ndarray:
    """Cube points -> picture pixels through a pinhole camera on the +z
    axis, with radial lens distortion ``k1`` (negative: barrel, as phone
    and webcam wide lenses; in units of the half diagonal)."""
    q = p @ pose.T
    z = dist - q[:, 2]
    x, y = shift[0] + focal * q[:, 0] / z, shift[1] - focal * q[:, 1] / z
    r2 = (x * x + y * y) / ((size[0] / 2) ** 2 + (size[1] / 2) ** 2)
    d = 1 + k1 * r2
    return np.c_[size[0] / 2 + x * d, size[1] / 2 + y * d]


def _densify(quad: np.ndarray, n: int = 12) -> np.ndarray:
    """Points along a closed polygon's sides, so a distorted straight side bends."""
    t = np.linspace(0, 1, n, endpoint=False)[:, None]
    return np.concatenate([a + t * (b - a) for a, b in zip(quad, np.roll(quad, -1, axis=0))])


def _background(w: int, h: int, rng: np.random.Generator, palette: list[np.ndarray]) -> np.ndarray:
    """A cluttered scene behind the cube, drawn in sRGB."""
    c0, c1 = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    # the gradient is drawn small and stretched (it is linear, so nothing is lost)
    t = np.linspace(0, 1, 64, dtype=np.float32)[None, :, None] * rng.uniform(0.3, 1) + \
        np.linspace(0, 1, 48, dtype=np.float32)[:, None, None] * rng.uniform(0, 0.7)
    t = np.clip(t, 0, 1)
    img = cv2.resize((c0 * (1 - t) + c1 * t).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    img = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    scale = min(w, h)
    if rng.random() < 0.25:  # a tiled surface (tiles, a keyboard, a chessboard)
        pitch = int(scale * rng.uniform(0.04, 0.12))
        grout = max(1, int(pitch * rng.uniform(0.05, 0.2)))
        tile = rng.integers(0, 256, 3)
        for y in range(0, h, pitch):
            for x in range(0, w, pitch):
                col = tile if rng.random() < 0.7 else rng.integers(0, 256, 3)
                cv2.rectangle(img, (x, y), (x + pitch - grout, y + pitch - grout), [int(v) for v in col], -1)
    for _ in range(int(rng.integers(5, 40))):
        if rng.random() < 0.35:
            col = palette[int(rng.integers(len(palette)))][::-1]
        else:
            col = rng.integers(0, 256, 3)
        colour = [int(v) for v in col]
        kind = rng.integers(4)
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        r = int(scale * rng.uniform(0.01, 0.2))
        if kind == 0:
            cv2.circle(img, (x, y), r, colour, -1, cv2.LINE_AA)
        elif kind == 1:
            box = cv2.boxPoints(((x, y), (r * rng.uniform(0.5, 2), r * rng.uniform(0.5, 2)),
                                 float(rng.uniform(0, 90))))
            cv2.fillConvexPoly(img, np.round(box).astype(np.int32), colour, cv2.LINE_AA)
        elif kind == 2:
            x2, y2 = int(rng.integers(0, w)), int(rng.integers(0, h))
            cv2.line(img, (x, y), (x2, y2), colour, max(1, r // 8), cv2.LINE_AA)
        else:
            cv2.ellipse(img, (x, y), (r, max(1, r // 2)), float(rng.uniform(0, 180)), 0, 360, colour, -1,
                        cv2.LINE_AA)
    return img


def _hand(img: np.ndarray, centre: np.ndarray, size: float, rng: np.random.Generator) -> None:
    """A hand holding the cube from one side (drawn before the cube, so it is behind it)."""
    skin = np.array([rng.uniform(120, 235), rng.uniform(80, 190), rng.uniform(60, 160)])[::-1]
    ang = rng.uniform(0, 2 * np.pi)
    d = np.array([np.cos(ang), np.sin(ang)])
    palm = centre + d * size * rng.uniform(0.7, 1.0)
    colour = [int(v) for v in skin]
    cv2.ellipse(img, (int(palm[0]), int(palm[1])), (int(size * 0.55), int(size * 0.4)),
                float(np.degrees(ang)), 0, 360, colour, -1, cv2.LINE_AA)
    side = np.array([-d[1], d[0]])
    for k in range(4):
        base = palm + side * size * (k - 1.5) * 0.22
        tip = base - d * size * rng.uniform(0.5, 0.9)
        shade = [int(v * rng.uniform(0.85, 1.05)) for v in skin]
        cv2.line(img, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), shade,
                 max(2, int(size * 0.13)), cv2.LINE_AA)


def render_face_photo(stickers: str, size: tuple[int, int], rng: np.random.Generator, *,
                      rotation: int | None = None) -> FacePhoto:
    """A photo of one face whose nine stickers (net order, letters URFDLB)
    are ``stickers``, as BGR of ``size`` (width, height). ``rotation``
    (quarter turns clockwise) is drawn at random when not given."""
    w, h = size
    shades = {f: np.array(SHADES[c][rng.integers(len(SHADES[c]))], float) for f, c in SCHEME.items()}
    palette = list(shades.values())
    k = int(rng.integers(4)) if rotation is None else rotation % 4
    stickerless = rng.random() < 0.3
    gap = rng.uniform(0.015, 0.04) if stickerless else rng.uniform(0.05, 0.12)
    roundness = rng.uniform(0.15, 0.3) if stickerless else rng.uniform(0.2, 0.6)
    body = np.full(3, rng.uniform(25, 70)) if stickerless else np.full(3, rng.uniform(5, 30))

    # the cube's pose: rolled by the rotation (plus a hand's tilt), tilted towards the camera, and
    # framed as a person frames it: the whole face inside the picture
    for _ in range(50):
        roll = np.radians(-90 * k + rng.normal(0, 10))
        a = rng.uniform(0, 2 * np.pi)
        tilt_axis = np.array([np.cos(a), np.sin(a), 0.0])
        pose = _rot(tilt_axis, np.radians(rng.uniform(0, 40))) @ _rot(np.array([0.0, 0, 1]), roll)
        dist = rng.uniform(10, 22)
        span = rng.uniform(0.22, 0.7) * min(w, h)
        focal = span * dist / 3
        shift = np.array([rng.uniform(-0.5, 0.5) * w, rng.uniform(-0.5, 0.5) * h])
        k1 = rng.uniform(-0.15, 0.03)
        face = _project(np.array([[-1.5, 1.5, 1.5], [1.5, 1.5, 1.5], [1.5, -1.5, 1.5], [-1.5, -1.5, 1.5]]),
                        pose, dist, focal, (w, h), shift, k1)
        if (face >= 0.03 * min(w, h)).all() and (face[:, 0] <= w - 0.03 * min(w, h)).all() and \
                (face[:, 1] <= h - 0.03 * min(w, h)).all():
            break
    cam = np.array([0, 0, dist])

    def project(p: np.ndarray) -> np.ndarray:
        return _project(p, pose, dist, focal, (w, h), shift, k1)

    img = _background(w, h, rng, palette)
    if rng.random() < 0.5:
        _hand(img, np.array([w / 2, h / 2]) + shift, span, rng)
    lin_shade = np.ones((h, w), np.float32)
    corners = np.zeros((4, 2))
    for name, frame in _FACES.items():
        c, r, d = (np.asarray(v, float) for v in frame)
        normal = np.cross(d, r)
        if (pose @ normal) @ (cam - pose @ c) <= 0:
            continue  # faces away from the camera
        tl = c - 1.5 * r - 1.5 * d
        src = np.array([[0, 0], [3, 0], [3, 3], [0, 3]], float)
        quad = project(np.array([tl + s * r + t * d for s, t in src]))
        outline = project(np.array([tl + s * r + t * d for s, t in _densify(src)]))
        cv2.fillPoly(img, [np.round(outline * 16).astype(np.int32)], [int(v) for v in body], cv2.LINE_AA, 4)
        for n in range(9):
            row, col = divmod(n, 3)
            if name == "front":
                colour = shades[stickers[n]]
                colour = np.clip(colour * (1 + rng.normal(0, 0.03, 3)), 0, 255)
            else:
                colour = palette[int(rng.integers(6))]
            net = _sticker_outline(row, col, gap, roundness)
            poly = project(tl + net[:, :1] * r + net[:, 1:] * d)
            cv2.fillPoly(img, [np.round(poly * 16).astype(np.int32)], [float(v) for v in colour[::-1]],
                         cv2.LINE_AA, 4)
        if name == "front":
            corners = quad
        else:  # side faces turn away from the light
            cv2.fillPoly(lin_shade, [np.round(outline).astype(np.int32)], float(rng.uniform(0.4, 0.9)))

    # light, in linear RGB
    lin = srgb_to_linear(np.arange(256)).astype(np.float32)[img]
    sw, sh = 48, 36
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u, v = (xx + 0.5) / sw - 0.5, (yy + 0.5) / sh - 0.5
    ang = rng.uniform(0, 2 * np.pi)
    field = 1.0 + rng.uniform(0, 0.6) * (np.cos(ang) * u + np.sin(ang) * v) * 2
    field *= 1.0 - rng.uniform(0, 0.5) * (u * u + v * v) / 0.5
    if rng.random() < 0.4:  # a soft shadow across the picture (a head, a hand, the phone)
        a2 = rng.uniform(0, 2 * np.pi)
        edge = np.cos(a2) * u + np.sin(a2) * v - rng.uniform(-0.3, 0.3)
        field *= np.where(edge > 0, 1.0, rng.uniform(0.35, 0.75)).astype(np.float32)
        field = cv2.GaussianBlur(field, (0, 0), 1.5)
    field = cv2.resize(np.clip(field, 0.05, None).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    # texture: worn, scratched or printed stickers and dust, a mottle of a few per cent at about a
    # sticker's tenth
    coarse = rng.normal(0, 1, (max(2, h * 30 // max(1, int(span))), max(2, w * 30 // max(1, int(span)))))
    grain = cv2.resize(coarse.astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    field *= 1 + float(rng.uniform(0, 0.06)) * grain
    gains = kelvin_to_gains(rng.uniform(2800, 7000)).astype(np.float32)[::-1]  # BGR
    intensity = float(np.exp(rng.uniform(np.log(0.45), np.log(1.3))))
    lin *= (intensity * field * lin_shade)[..., None] * gains[None, None, :]
    for _ in range(int(rng.choice([0, 0, 1, 1, 2]))):  # glare on the face: the lamp's reflection
        p = corners.mean(axis=0) + rng.uniform(-0.35, 0.35, 2) * span
        rad = span * rng.uniform(0.02, 0.07)
        x0, x1 = int(max(0, p[0] - 3 * rad)), int(min(w, p[0] + 3 * rad))
        y0, y1 = int(max(0, p[1] - 3 * rad)), int(min(h, p[1] + 3 * rad))
        if x0 < x1 and y0 < y1:
            gy, gx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
            d2 = ((gx - p[0]) ** 2 + (gy - p[1]) ** 2) / rad**2
            lin[y0:y1, x0:x1] += (rng.uniform(0.3, 1.5) * np.exp(-1.5 * d2))[..., None] * gains / gains.max()
    lut = (linear_to_srgb(np.linspace(0, 1, 4096)) + 0.5).astype(np.uint8)
    out = lut[np.clip(lin * 4095 + 0.5, 0, 4095).astype(np.int32)]
    blur = rng.choice([0.0, 0.0, rng.uniform(0.5, 2.0)]) * max(1.0, min(w, h) / 1000)
    if blur > 0.3:
        out = cv2.GaussianBlur(out, (0, 0), float(blur))
    if rng.random() < 0.3:  # the hand moved while the shutter was open: a streak up to 1 % of the picture
        length = int(rng.uniform(0.002, 0.01) * min(w, h)) | 1
        if length >= 3:
            kernel = np.zeros((length, length), np.float32)
            kernel[length // 2, :] = 1 / length
            mid = length / 2 - 0.5
            turn = cv2.getRotationMatrix2D((mid, mid), float(rng.uniform(0, 180)), 1)
            streak = cv2.warpAffine(kernel, turn, (length, length))
            streak = (streak / max(float(streak.sum()), 1e-6)).astype(np.float32)
            out = cv2.filter2D(out, -1, streak)
    noise = np.empty(out.shape, np.int16)
    cv2.setRNGSeed(int(rng.integers(2**31)))
    cv2.randn(noise, 0.0, float(rng.uniform(1, 6)))  # type: ignore[call-overload]
    out = cv2.add(out, noise, dtype=cv2.CV_8U)
    return FacePhoto(out, k, corners)


def rotate_net(nine: str, quarter_turns: int) -> str:
    """The nine stickers of a face (row-major) as they appear after turning
    the face picture ``quarter_turns`` clockwise."""
    grid = np.array(list(nine)).reshape(3, 3)
    return "".join(np.rot90(grid, -quarter_turns % 4).ravel())


def write_photo(image: np.ndarray, path: str, rng: np.random.Generator) -> None:
    """PNG, or JPEG at a random phone-like quality, by the file's suffix."""
    jpeg = path.lower().endswith((".jpg", ".jpeg"))
    params = [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(60, 96))] if jpeg else []
    if not cv2.imwrite(path, image, params):
        raise OSError(f"could not write {path}")


def render_cube_photos(facelets: str, rng: np.random.Generator, size: tuple[int, int] | None = None
                       ) -> dict[str, FacePhoto]:
    """One photo per face of the cube ``facelets`` (letters URFDLB), each at
    ``size`` or a size drawn from :data:`SIZES`, each in a random rotation."""
    out = {}
    for k, face in enumerate("URFDLB"):
        s = size or SIZES[int(rng.integers(len(SIZES)))]
        out[face] = render_face_photo(facelets[9 * k:9 * k + 9], s, rng)
    return out


def write_phone_photos(facelets: str, folder: Path, rng: np.random.Generator,
                       size: tuple[int, int] = (4000, 3000)) -> dict[str, str]:
    """Six photos of the cube ``facelets`` written into ``folder`` as a
    phone saves them (12 megapixels by default, JPEG): each face's path.
    The benchmarks time reading these, the size a maker's phone gives."""
    paths = {}
    for face, shot in render_cube_photos(facelets, rng, size=size).items():
        paths[face] = str(folder / f"big-{face}.jpg")
        write_photo(shot.image, paths[face], rng)
    return paths
