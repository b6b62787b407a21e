"""dry-run --render: the 3D sticker model turns like the cube model, and the
files written can be read back."""

import subprocess
import sys

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robot.app.render import FACE_BGR, StickerCube, _lzw, draw
from solver import FACES, SOLVED, SOLVED_CUBE, Move, format_moves


@settings(max_examples=40, deadline=None)
@given(st.lists(st.builds(Move, st.integers(0, 5), st.integers(1, 3)), max_size=12))
def test_sticker_model_turns_like_the_cube_model(moves):
    c = StickerCube(SOLVED)
    for m in moves:
        c.apply(FACES[m.face], {1: 1, 2: 2, 3: -1}[m.power])
    assert c.facelets() == SOLVED_CUBE.apply(format_moves(moves)).to_facelets()


def test_drawing_shows_the_three_front_faces():
    img = draw(StickerCube(SOLVED), {})
    pixels = {tuple(int(v) for v in p) for p in img.reshape(-1, 3)[::7]}
    for face in "UFR":
        assert FACE_BGR[face] in pixels
    for face in "DLB":
        assert FACE_BGR[face] not in pixels


def _lzw_decode(data: bytes, min_code: int) -> bytes:
    clear, end = 1 << min_code, (1 << min_code) + 1
    width, pos, out = min_code + 1, 0, bytearray()
    table = None
    prev = None
    bits = int.from_bytes(data, "little")
    total = len(data) * 8
    while pos + width <= total:
        code = (bits >> pos) & ((1 << width) - 1)
        pos += width
        if code == clear:
            table = [bytes([i]) for i in range(clear)] + [b"", b""]
            width, prev = min_code + 1, None
            continue
        if code == end:
            break
        entry = table[code] if code < len(table) else table[prev] + table[prev][:1]
        out += entry
        if prev is not None:
            table.append(table[prev] + entry[:1])
        prev = code
        if len(table) == (1 << width) and width < 12:
            width += 1
    return bytes(out)


@settings(max_examples=30, deadline=None)
@given(st.binary(min_size=1, max_size=6000).map(lambda b: bytes(x % 16 for x in b)))
def test_gif_lzw_round_trips(data):
    assert _lzw_decode(_lzw(data, 4), 4) == data


def test_dry_run_render_writes_mp4_gif_and_timeline(tmp_path):
    for name in ("run.mp4", "run.gif"):
        out = tmp_path / name
        r = subprocess.run([sys.executable, "-m", "robot", "dry-run", "R U' F2 B", "--render", str(out)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        cap = cv2.VideoCapture(str(out))
        frames = []
        while True:
            ok, img = cap.read()
            if not ok:
                break
            frames.append(img)
        assert len(frames) > 10
        assert not np.array_equal(frames[0], frames[-1])
        tl = cv2.imread(str(tmp_path / "run-timeline.png"))
        assert tl is not None and tl.shape[1] == 1000
    r = subprocess.run([sys.executable, "-m", "robot", "dry-run", "R", "--render", str(tmp_path / "x.avi")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and ".mp4 or .gif" in r.stderr and "Traceback" not in r.stderr
