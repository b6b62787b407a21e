"""dry-run --render: the 3D sticker model turns like the cube model, and the
files written can be read back."""

import subprocess
import sys

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robot.app.dryrun_pictures import FACE_BGR, StickerCube, _lzw, draw
from solver import FACES, SOLVED, SOLVED_CUBE, Move, format_moves, group_steps


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


def _dry_run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "robot", "dry-run", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_dry_run_render_writes_webm_gif_and_timeline_into_new_folders(tmp_path):
    for name in ("a/run.webm", "b/c/run.gif"):
        out = tmp_path / name
        r = _dry_run("R U' F2 B", "--render", str(out))
        assert r.returncode == 0, r.stderr
        assert "FFMPEG" not in r.stderr  # OpenCV's codec chatter is kept quiet
        cap = cv2.VideoCapture(str(out))
        if name.endswith(".webm"):
            fourcc = int(cap.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode(errors="replace")
            assert fourcc.lower() in ("vp90", "vp80", "vp09", "vp08"), fourcc
        frames = []
        while True:
            ok, img = cap.read()
            if not ok:
                break
            frames.append(img)
        assert len(frames) > 10
        assert not np.array_equal(frames[0], frames[-1])
        tl = cv2.imread(str(out.with_name("run-timeline.png")))
        assert tl is not None and tl.shape[1] == 1000


def test_mp4_is_h264_or_refused_before_the_run(tmp_path):
    out = tmp_path / "run.mp4"
    r = _dry_run("R U", "--render", str(out))
    if r.returncode == 0:
        cap = cv2.VideoCapture(str(out))
        fourcc = int(cap.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode(errors="replace")
        assert fourcc.lower() in ("avc1", "h264"), fourcc
    else:
        assert r.returncode == 2 and ".webm" in r.stderr and "Traceback" not in r.stderr
        assert "step" not in r.stdout  # refused before any turn
        assert not out.exists()


def test_render_names_that_cannot_work_are_refused_before_the_run(tmp_path):
    r = _dry_run("R", "--render", str(tmp_path / "x.avi"), timeout=60)
    assert r.returncode == 2 and ".gif, .webm or .mp4" in r.stderr and "Traceback" not in r.stderr
    r = _dry_run("R", "--render", "/proc/x.gif", timeout=60)
    assert r.returncode == 2 and "cannot write" in r.stderr and r.stdout == ""


def test_timeline_draws_u_in_white_and_settle_apart_from_every_face(tmp_path):
    from robot.app.dryrun_pictures import SETTLE_BGR, timeline
    from robot.rig.loading import load_config
    from robot.rig.motion import plan

    cfg = load_config(None)
    img = timeline(plan(group_steps("U"), cfg), cfg)
    top = 30 + cfg.motors["U"].motor * 40
    # The bar's fill, above its "+1" label and inside its outline: every pixel U's white (the old
    # grey was (160, 160, 160)); the label's anti-aliased text is greys of its own and not sampled.
    band = img[top + 8:top + 13]
    filled = np.flatnonzero((band == FACE_BGR["U"]).all(axis=2).all(axis=0))
    assert filled.size > 100, "no bar of U's white"
    fill = band[:, filled[0]:filled[-1] + 1]
    assert (fill == FACE_BGR["U"]).all(), "the U bar's fill is not one white"
    row = img[top + 10:top + 30]
    colours = {tuple(int(v) for v in px) for px in row.reshape(-1, 3)}
    assert SETTLE_BGR in colours
    assert all(sum(abs(a - b) for a, b in zip(SETTLE_BGR, c)) > 60 for c in FACE_BGR.values())
