"""Pictures of a dry run: the cube turning in 3D, and the six motors on a timeline.

The animation follows the rig's own timing: at each frame a turning layer
stands at the angle its motor has reached according to the firmware's step
profile (:mod:`robot.rig.timing`), so what you see accelerates and settles like
the robot will. Drawn with OpenCV (filled polygons, painter's algorithm);
written as video with OpenCV (WebM, or MP4 where OpenCV's build can encode
H.264: browsers play no other MP4), or as GIF by a small encoder here (the
project has no imaging library that writes GIF).
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from solver import FACES, Cube

from ..rig.config import Config
from ..rig.errors import UserError
from ..rig.motion import MotorStep
from ..rig.protocol import TICK_HZ
from ..rig.timing import schedule, step_ticks

# BGR colours of the six faces, the cube's body and the background.
FACE_BGR = {
    "U": (245, 245, 245), "R": (40, 40, 220), "F": (60, 170, 30),
    "D": (30, 220, 240), "L": (0, 130, 255), "B": (200, 90, 20),
}
BODY = (25, 25, 25)
SETTLE_BGR = (70, 70, 70)
BACKGROUND = (70, 60, 55)
NORMALS = {"U": (0, 1, 0), "R": (1, 0, 0), "F": (0, 0, 1), "D": (0, -1, 0), "L": (-1, 0, 0), "B": (0, 0, -1)}


def _sticker_centre(face: str, r: int, c: int) -> tuple[int, int, int]:
    """Cubie coordinates (-1..1) of facelet (row r, column c) of ``face``, as
    the net draws it (U above F; L F R B in a row; D below F)."""
    return {
        "U": (c - 1, 1, r - 1), "R": (1, 1 - r, 1 - c), "F": (c - 1, 1 - r, 1),
        "D": (c - 1, -1, 1 - r), "L": (-1, 1 - r, c - 1), "B": (1 - c, 1 - r, -1),
    }[face]


SLOTS = [(f, _sticker_centre(f, i // 3, i % 3)) for f in FACES for i in range(9)]
"""Facelet index -> (face, cubie position)."""


def _rotation(axis: tuple[int, int, int], angle: float) -> np.ndarray:
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]], float)
    return np.eye(3) + s * k + (1 - c) * (k @ k)


def _turn(face: str, quarters: float) -> np.ndarray:
    """Rotation of ``face``'s layer by ``quarters`` clockwise quarter turns
    (clockwise seen from outside the face: negative about its normal)."""
    return _rotation(NORMALS[face], -quarters * math.pi / 2)


class StickerCube:
    """54 stickers with positions and normals; turns rotate them."""

    def __init__(self, facelets: str):
        self.colour = list(facelets)
        self.pos = np.array([p for _, p in SLOTS], float)
        self.normal = np.array([NORMALS[f] for f, _ in SLOTS], float)

    def layer(self, face: str) -> np.ndarray:
        n = np.array(NORMALS[face], float)
        return (self.pos @ n) > 0.5

    def apply(self, face: str, quarters: int) -> None:
        m = self.layer(face)
        rot = _turn(face, quarters)
        self.pos[m] = np.rint(self.pos[m] @ rot.T)
        self.normal[m] = np.rint(self.normal[m] @ rot.T)

    def facelets(self) -> str:
        out = [""] * 54
        for i, (f, p) in enumerate(SLOTS):
            n = np.array(NORMALS[f], float)
            hit = np.where((np.abs(self.pos - p).sum(1) < 1e-6) & (np.abs(self.normal - n).sum(1) < 1e-6))[0]
            out[i] = self.colour[hit[0]]
        return "".join(out)


Polygon = tuple[np.ndarray, tuple[int, int, int], np.ndarray]
"""Corner points (4x3), BGR colour and normal of one face of a cubie or sticker."""


def _quads(cube: StickerCube, turning: dict[str, float]) -> list[Polygon]:
    """(points 4x3, colour) of every cubie body face and sticker, with the
    turning layers rotated by their current angles."""
    polys = []
    cubies: dict[tuple[int, ...], list] = {}
    for idx in range(54):
        key = tuple(int(v) for v in np.rint(cube.pos[idx]))
        cubies.setdefault(key, [])
        cubies[key].append(idx)
    rots = {f: _turn(f, q) for f, q in turning.items()}
    for key, stickers in cubies.items():
        centre = np.array(key, float)
        rot = np.eye(3)
        for f in rots:
            if np.dot(centre, NORMALS[f]) > 0.5:
                rot = rots[f]
        for axis in range(3):
            for sign in (-1, 1):
                n = np.zeros(3)
                n[axis] = sign
                polys.append((_face_quad(centre, n, 0.5, 0.5) @ rot.T, BODY, n @ rot.T))
        for idx in stickers:
            n = cube.normal[idx]
            quad = _face_quad(centre, n, 0.505, 0.43)
            polys.append((quad @ rot.T, FACE_BGR.get(cube.colour[idx], (128, 128, 128)), n @ rot.T))
    return polys


def _face_quad(centre: np.ndarray, n: np.ndarray, offset: float, half: float) -> np.ndarray:
    axis = int(np.argmax(np.abs(n)))
    u, v = [a for a in range(3) if a != axis]
    pts = []
    for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        p = centre + n * offset
        p = p.copy()
        p[u] += du * half
        p[v] += dv * half
        pts.append(p)
    return np.array(pts)


VIEW = _rotation((1, 0, 0), math.radians(28)) @ _rotation((0, 1, 0), math.radians(-35))


def draw(cube: StickerCube, turning: dict[str, float], size: int = 360) -> np.ndarray:
    img = np.full((size, size, 3), BACKGROUND, np.uint8)
    scale = size / 6.2
    items = []
    for quad, colour, n in _quads(cube, turning):
        q = quad @ VIEW.T
        nv = n @ VIEW.T
        if nv[2] <= 1e-6:
            continue  # facing away
        depth = q[:, 2].mean()
        pts = np.column_stack([size / 2 + q[:, 0] * scale, size / 2 - q[:, 1] * scale])
        items.append((depth, colour, pts))
    items.sort(key=lambda t: t[0])
    for _, colour, pts in items:
        cv2.fillConvexPoly(img, np.rint(pts * 16).astype(np.int32), colour, cv2.LINE_AA, shift=4)
    return img


def _quarters(step: MotorStep, config: Config) -> list[tuple[str, int, int, int]]:
    """(face, signed quarter turns, motor, steps) for each motor of a step."""
    out = []
    for mv, (motor, steps) in zip(step.moves, step.parts):
        out.append((FACES[mv.face], {1: 1, 2: 2, 3: -1}[mv.power], motor, steps))
    return out


def frames(start: Cube, steps: list[MotorStep], config: Config, fps: int = 25,
           size: int = 360) -> Iterator[np.ndarray]:
    """Yield images of the run, one per 1/fps s of rig time (plus a still at each end)."""
    profiles = config.profiles()
    sched = schedule([s.planned() for s in steps], profiles)
    cube = StickerCube(start.to_facelets())
    total = max((d for _, d in sched), default=0)
    hold = fps // 2
    for _ in range(hold):
        yield draw(cube, {}, size)
    done = 0
    n_frames = int(math.ceil(total / TICK_HZ * fps))
    for fi in range(n_frames + 1):
        t = fi * TICK_HZ / fps
        while done < len(steps) and sched[done][1] <= t:
            for face, q, _, _ in _quarters(steps[done], config):
                cube.apply(face, q)
            done += 1
        turning = {}
        if done < len(steps) and sched[done][0] < t:
            s0 = sched[done][0]
            for face, q, motor, n in _quarters(steps[done], config):
                p = profiles[motor]
                ticks = step_ticks(abs(n), p.vmax_q, p.accel_q, p.vmin_q)
                k = int(np.searchsorted(ticks, t - s0, side="right"))
                turning[face] = q * k / abs(n)
        yield draw(cube, turning, size)
    for _ in range(hold):
        yield draw(cube, {}, size)


def timeline(steps: list[MotorStep], config: Config, width: int = 1000) -> np.ndarray:
    """Six rows, one per motor; a bar for each move it makes, over rig time."""
    profiles = config.profiles()
    sched = schedule([s.planned() for s in steps], profiles)
    total = max((d for _, d in sched), default=1)
    row_h, left, top = 40, 70, 30
    h = top + 6 * row_h + 40
    img = np.full((h, width, 3), 255, np.uint8)
    span = width - left - 20

    def x(tick: float) -> int:
        return int(left + span * tick / total)

    for m in range(6):
        face = config.motor_for_index(m).face
        y = top + m * row_h
        cv2.putText(img, f"{face} ({m})", (8, y + 26), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1,
                    cv2.LINE_AA)
        cv2.line(img, (left, y + row_h - 2), (left + span, y + row_h - 2), (220, 220, 220), 1)
    for step, (s, d) in zip(steps, sched):
        for motor, n in step.parts:
            face = config.motor_for_index(motor).face
            p = profiles[motor]
            t_end = s + step_ticks(abs(n), p.vmax_q, p.accel_q, p.vmin_q)[-1]
            y = top + motor * row_h
            bar = ((x(s), y + 6), (max(x(s) + 1, x(t_end)), y + row_h - 8))
            cv2.rectangle(img, *bar, FACE_BGR[face], -1)
            cv2.rectangle(img, *bar, (0, 0, 0), 1)  # outlined, so that U's white shows on white
            cv2.rectangle(img, (x(t_end), y + 18), (max(x(t_end) + 1, x(d)), y + row_h - 20),
                          SETTLE_BGR, -1)
            cv2.putText(img, f"{n:+d}", (x(s) + 2, y + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.33, (0, 0, 0), 1,
                        cv2.LINE_AA)
    seconds = total / TICK_HZ
    ticks_every = max(0.1, round(seconds / 10, 1))
    t = 0.0
    while t <= seconds + 1e-9:
        xx = x(t * TICK_HZ)
        cv2.line(img, (xx, top + 6 * row_h), (xx, top + 6 * row_h + 5), (0, 0, 0), 1)
        cv2.putText(img, f"{t:.1f}s", (xx - 12, top + 6 * row_h + 20), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                    (0, 0, 0), 1, cv2.LINE_AA)
        t += ticks_every
    cv2.putText(img, f"{len(steps)} steps, {seconds:.3f} s (bars: motion, in the face's colour;"
                     " thin dark line: settle)", (left, 18),
                cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1, cv2.LINE_AA)
    return img


# ---------------------------------------------------------------- GIF


def _palette_indices(img: np.ndarray, palette: np.ndarray) -> np.ndarray:
    d = ((img[:, :, None, :].astype(np.int32) - palette[None, None, :, :]) ** 2).sum(-1)
    return d.argmin(-1).astype(np.uint8)


def _lzw(indices: bytes, min_code: int) -> bytes:
    """GIF's variable-width LZW, with a dictionary reset when it fills."""
    clear, end = 1 << min_code, (1 << min_code) + 1
    out = bytearray()
    acc = nbits = 0
    width = min_code + 1

    def emit(code: int) -> None:
        nonlocal acc, nbits
        acc |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8

    table = {bytes([i]): i for i in range(clear)}
    nxt = end + 1
    emit(clear)
    w = b""
    for b in indices:
        wc = w + bytes([b])
        if wc in table:
            w = wc
            continue
        emit(table[w])
        if nxt < 4096:
            table[wc] = nxt
            nxt += 1
            if nxt > (1 << width) and width < 12:
                width += 1
        else:
            emit(clear)
            table = {bytes([i]): i for i in range(clear)}
            nxt, width = end + 1, min_code + 1
        w = bytes([b])
    if w:
        emit(table[w])
    emit(end)
    if nbits:
        out.append(acc & 0xFF)
    return bytes(out)


def write_gif(path: Path, images: list[np.ndarray], fps: int) -> None:
    """Animated GIF with a fixed palette of the cube's colours."""
    colours = [BACKGROUND, BODY, *FACE_BGR.values()]
    palette = np.array(colours + [(0, 0, 0)] * (16 - len(colours)), np.int32)  # BGR
    h, w = images[0].shape[:2]
    data = bytearray(b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF3, 0, 0))
    for b, g, r in palette:
        data += bytes((r, g, b))
    data += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
    delay = max(2, round(100 / fps))
    for img in images:
        idx = _palette_indices(img, palette)
        data += b"\x21\xf9\x04\x00" + struct.pack("<H", delay) + b"\x00\x00"
        data += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0)
        data.append(4)
        lz = _lzw(idx.tobytes(), 4)
        for i in range(0, len(lz), 255):
            chunk = lz[i:i + 255]
            data.append(len(chunk))
            data += chunk
        data.append(0)
    data.append(0x3B)
    path.write_bytes(bytes(data))


VIDEO_CODECS = {".mp4": ("avc1",), ".webm": ("vp09", "vp08")}
"""Codecs a browser plays, by file name suffix, best first: H.264 in MP4 (when
OpenCV's build has an encoder for it), VP9 or VP8 in WebM."""
SUFFIXES = (".gif", *VIDEO_CODECS)


@contextlib.contextmanager
def _quiet_opencv() -> Iterator[None]:
    """OpenCV's FFmpeg back end writes every codec it tries and falls back
    from straight to file descriptor 2; while a writer is opened, that goes
    to /dev/null (the outcome is reported by the caller)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _video_writer(path: Path, fps: int, size: int) -> cv2.VideoWriter | None:
    """A writer for ``path`` with the first codec of its suffix that this
    OpenCV build can encode, or None."""
    with _quiet_opencv():
        for codec in VIDEO_CODECS[path.suffix.lower()]:
            writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*codec), fps, (size, size))
            if writer.isOpened():
                return writer
            writer.release()
    return None


def check_path(path: str | Path) -> Path:
    """Refuse an unusable --render name before anything runs. Missing folders
    are created (as for every output folder of cuberobot's); the file itself
    must be creatable, and a video format must have an encoder here."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserError(f"--render {path}: the animation is written as .gif, .webm or .mp4; "
                        f"got {suffix or 'no suffix'}")
    existed = path.exists()
    if existed and not path.is_file():  # a folder, a device or a pipe (opening one could block)
        raise UserError(f"--render {path}: not a file that can be written")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab"):
            pass
    except (OSError, RecursionError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else "too many folders deep"
        raise UserError(f"--render {path}: cannot write there ({why})") from None
    if suffix in VIDEO_CODECS:
        writer = _video_writer(path, 25, 64)
        if writer is not None:
            writer.release()
        if not existed:
            path.unlink(missing_ok=True)
        if writer is None:
            other = "a .webm (VP9, plays in browsers)" if suffix == ".mp4" else "a .gif"
            raise UserError(f"--render {path}: this OpenCV build has no encoder for {suffix} files that "
                            f"browsers play; use {other} or a .gif name")
    elif not existed:
        path.unlink(missing_ok=True)
    return path


def render(path: str | Path, start: Cube, steps: list[MotorStep], config: Config, fps: int = 25,
           size: int = 360) -> list[Path]:
    """Write the animation to ``path`` (.gif, .webm or .mp4) and the timeline next to
    it (``NAME-timeline.png``); returns the files written."""
    path = check_path(path)
    suffix = path.suffix.lower()
    if suffix == ".gif":
        gif_fps = min(fps, 20)
        write_gif(path, list(frames(start, steps, config, fps=gif_fps, size=min(size, 300))), gif_fps)
    else:
        writer = _video_writer(path, fps, size)
        if writer is None:
            raise UserError(f"--render {path}: OpenCV cannot write {suffix} here; try a .gif name")
        try:
            for img in frames(start, steps, config, fps=fps, size=size):
                writer.write(img)
        finally:
            writer.release()
    tl = path.with_name(path.stem + "-timeline.png")
    if not cv2.imwrite(str(tl), timeline(steps, config)):
        raise UserError(f"cannot write {tl}")
    return [path, tl]
