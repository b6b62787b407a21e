"""Six photos of a cube, one per face, read with no geometry given: real
image files written by the synthetic photo renderer, through the library
and the real `cuberobot scan --images` command."""

import json
import os
import struct
import subprocess
import sys
import zlib

import cv2
import numpy as np
import pytest

from solver import random_cube
from vision.grid_finder import Grid, find_grids
from vision.photo_render import render_cube_photos, render_face_photo, rotate_net, write_photo
from vision.photos import (
    PhotoError,
    arrange,
    choose_grids,
    load_photo,
    rank_rotations,
    read_photos,
    sample_photo,
)

CUBE_SEED, PHOTO_SEED = 1, 501  # a cube whose six photos (faces turned 0, 0, 3, 2, 2, 1) all read


def run(*args):
    e = dict(os.environ)
    e.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True, env=e,
                          timeout=120)


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    d = tmp_path_factory.mktemp("photos")
    truth = random_cube(CUBE_SEED).to_facelets()
    shots = render_cube_photos(truth, np.random.default_rng(PHOTO_SEED), size=(1280, 960))
    rng = np.random.default_rng(0)
    paths = {}
    for face, shot in shots.items():
        paths[face] = str(d / f"{face}.{'png' if face in 'UD' else 'jpg'}")
        write_photo(shot.image, paths[face], rng)
    return truth, paths, {f: s.rotation for f, s in shots.items()}


def test_the_library_reads_six_photos_turned_any_way(photos, tmp_path):
    truth, paths, turns = photos
    assert any(turns.values())  # some faces were photographed turned: the pieces chose the turns
    r = read_photos(paths, debug_dir=tmp_path / "dbg")
    assert r.facelets == truth and r.ok
    assert r.rotations == turns
    for face in "URFDLB":
        assert cv2.imread(str(tmp_path / "dbg" / f"photo-{face}.png")) is not None
    saved = json.loads((tmp_path / "dbg" / "scan.json").read_text())
    assert saved["facelets"] == truth and len(saved["rgb"]) == 54


def test_the_renderer_and_the_reader_agree_on_turns():
    net = "ABCDEFGHI"
    assert rotate_net(net, 1) == "GDAHEBIFC"  # one quarter turn clockwise: the left column goes on top
    shown = np.arange(54, dtype=float)[:, None].repeat(3, axis=1)
    # a face shown turned clockwise once is put back in net order by the reader
    turned = np.array([ord(c) for c in rotate_net(net, 1)], float)
    rows = np.tile(turned[:, None], (6, 3))
    back = arrange(rows, np.array([1] * 6))
    assert "".join(chr(int(v)) for v in back[:9, 0]) == net
    assert arrange(shown, np.zeros(6, int)).tolist() == shown.tolist()


def _slid(grid, rows):
    """The same lattice moved by ``rows`` rows: a window that slid onto the
    face's edge and what lies beyond it, as the finder can mistake."""
    hom = grid.homography @ np.array([[1, 0, 0], [0, 1, rows], [0, 0, 1]], float)
    pts = np.array([[-0.5, -0.5], [2.5, -0.5], [2.5, 2.5], [-0.5, 2.5]])
    corners = cv2.perspectiveTransform(pts[None], hom)[0]
    cells = np.array([[(c, r) for r in range(3) for c in range(3)]], float)
    centres = cv2.perspectiveTransform(cells, hom)[0]
    return Grid(corners, centres, 9, hom, False)


def test_the_cube_chooses_between_a_photos_grids(photos):
    truth, paths, _ = photos
    options = []
    for face in "URFDLB":
        img, _ = load_photo(paths[face], face)
        true = find_grids(img)[0]
        wrong = _slid(true, 1)
        # the F photo's best guess is the slid window: only the cube can tell the face from it
        order = [wrong, true] if face == "F" else [true]
        options.append([(g, sample_photo(img, g, face)) for g in order])
    choice, cls, _, _ = choose_grids(options)
    assert choice == [0, 0, 1, 0, 0, 0]
    assert cls.facelets == truth and cls.ok
    # with only the slid window to go by, the cube is not read as sure
    options[2] = options[2][:1]
    _, cls, _, _ = choose_grids(options)
    assert not cls.ok and any("stands out" in w for w in cls.warnings)


def test_a_solved_cube_reads_solved_whatever_way_up():
    rgb = np.repeat(np.array([(245, 245, 245), (196, 30, 58), (0, 155, 72), (255, 213, 0), (255, 88, 0),
                              (0, 70, 173)], float), 9, axis=0)
    best = rank_rotations(rgb)[0]
    assert best.tolist() == [0] * 6  # every turn fits: the net's own orientation is preferred


def test_scan_images_prints_the_classify_json(photos, tmp_path):
    truth, paths, turns = photos
    args = [f"{f}={p}" for f, p in paths.items()]
    r = run("scan", "--images", *args, "--json", "--save-debug", str(tmp_path / "dbg"))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for key in ("facelets", "confidence", "suspects", "suspect_names", "valid", "ok", "error", "warnings"):
        assert key in out
    assert out["facelets"] == truth and out["ok"] and out["rotations"] == turns
    assert (tmp_path / "dbg" / "photo-F.png").exists()
    folder = os.path.dirname(paths["U"])
    r = run("scan", "--images", folder)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [truth, "ok"]


def _png_header_claiming(width, height):
    """A PNG whose header says width x height (and nothing else real)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))


def test_scan_images_refuses_bad_photos_in_one_line(photos, tmp_path):
    _, paths, _ = photos
    (tmp_path / "notes.jpg").write_text("not a photo")
    (tmp_path / "huge.png").write_bytes(_png_header_claiming(20000, 20000))
    blank = np.full((480, 640, 3), 128, np.uint8)
    cv2.imwrite(str(tmp_path / "blank.png"), blank)
    cases = {
        "missing.jpg": "file not found",
        "notes.jpg": "not an image",
        "huge.png": "too big",
        "blank.png": "no 3x3 sticker grid",
    }
    for name, why in cases.items():
        given = dict(paths, F=str(tmp_path / name))
        r = run("scan", "--images", *[f"{f}={p}" for f, p in given.items()])
        assert r.returncode == 2, (name, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "F photo" in r.stderr and name in r.stderr and why in r.stderr, r.stderr
    for bad in (["U=a.jpg"], ["X=a.jpg"] + [f"{f}={p}" for f, p in paths.items() if f != "U"],
                [str(tmp_path / "nowhere")], [f"{f}={p}" for f, p in paths.items()] + ["U=again.jpg"]):
        r = run("scan", "--images", *bad)
        assert r.returncode == 2 and "Traceback" not in r.stderr and "--images" in r.stderr, (bad, r.stderr)


def test_a_photo_with_no_cube_is_a_photo_error(tmp_path):
    rng = np.random.default_rng(3)
    shot = render_face_photo("UUUUUUUUU", (640, 480), rng)
    p = tmp_path / "U.png"
    noise = rng.integers(0, 256, shot.image.shape, dtype=np.uint8)
    cv2.imwrite(str(p), noise)
    with pytest.raises(PhotoError, match="U photo .*no 3x3 sticker grid"):
        read_photos({f: str(p) for f in "URFDLB"})
