"""Colour spaces for sticker colours.

Stickers are compared in CIELAB (D65) because distances there roughly follow
what a person sees; ΔE here is CIE76 (Euclidean in Lab), which is what the
thresholds in this package are stated in. Light adds and multiplies in
*linear* RGB, so everything that models light goes through
:func:`srgb_to_linear` and :func:`linear_to_srgb`, the one place the sRGB
transfer curve is written down.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

RGB = tuple[float, float, float]

_M_RGB_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375],
     [0.2126729, 0.7151522, 0.0721750],
     [0.0193339, 0.1191920, 0.9503041]]
)
_M_XYZ_RGB = np.linalg.inv(_M_RGB_XYZ)
_WHITE = np.array([0.95047, 1.0, 1.08883])


def rgb_tuple(values: Iterable[float]) -> RGB:
    """Three numbers as an (r, g, b) tuple of floats; ValueError for any other count."""
    r, g, b = (float(v) for v in values)
    return (r, g, b)


def srgb_to_linear(srgb: npt.ArrayLike) -> np.ndarray:
    """sRGB values 0..255 -> linear light 0..1 (IEC 61966-2-1), as float64.

    Any shape; NaN stays NaN. Values outside 0..255 are not clipped: below
    0 the straight segment continues, above 255 the power law does."""
    c = np.asarray(srgb, dtype=np.float64) / 255.0
    # the power branch sees only values it is meant for, so no warnings for
    # negative inputs that np.where evaluates but does not select
    return np.where(c <= 0.04045, c / 12.92, ((np.maximum(c, 0.04045) + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(linear: npt.ArrayLike) -> np.ndarray:
    """Linear light 0..1 -> sRGB 0..255 as float64, the inverse of
    :func:`srgb_to_linear` (not clipped: callers clip to the range they need)."""
    lin = np.asarray(linear, dtype=np.float64)
    c = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * np.maximum(lin, 0.0031308) ** (1 / 2.4) - 0.055)
    return c * 255.0


def rgb_to_lab(rgb: npt.ArrayLike) -> np.ndarray:
    """sRGB 0..255 (any shape ending in 3) -> Lab. NaN stays NaN."""
    lin = srgb_to_linear(rgb)
    xyz = lin @ _M_RGB_XYZ.T / _WHITE
    d = 6.0 / 29.0
    f = np.where(xyz > d**3, np.cbrt(xyz), xyz / (3 * d * d) + 4.0 / 29.0)
    lab = np.empty_like(f)
    lab[..., 0] = 116.0 * f[..., 1] - 16.0
    lab[..., 1] = 500.0 * (f[..., 0] - f[..., 1])
    lab[..., 2] = 200.0 * (f[..., 1] - f[..., 2])
    return lab


def lab_to_rgb(lab: np.ndarray) -> np.ndarray:
    """Lab -> sRGB 0..255 (float, clipped)."""
    lab = np.asarray(lab, dtype=np.float64)
    fy = (lab[..., 0] + 16.0) / 116.0
    fx = fy + lab[..., 1] / 500.0
    fz = fy - lab[..., 2] / 200.0
    f = np.stack([fx, fy, fz], axis=-1)
    d = 6.0 / 29.0
    xyz = np.where(f > d, f**3, 3 * d * d * (f - 4.0 / 29.0)) * _WHITE
    return linear_to_srgb(np.clip(xyz @ _M_XYZ_RGB.T, 0.0, 1.0))


def delta_e(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """CIE76 colour difference between Lab colours."""
    return np.linalg.norm(np.asarray(a, float) - np.asarray(b, float), axis=-1)
