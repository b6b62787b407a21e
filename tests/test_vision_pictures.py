"""The annotated scan pictures as saved to disk (headless runs, --save-debug):
no interactive keys on them, and every face of every view named."""

import cv2
import numpy as np
import pytest

from solver import random_cube
from vision.preview import BAR_WITH_KEYS, LABEL_FONT, LABEL_SCALE, LABEL_THICKNESS, annotate
from vision.render import Lighting, net_to_image
from vision.scanning import scan
from vision.setup import CameraSpec, default_sim_setup


def _repo_rig():
    from robot.rig.loading import load_config

    cfg = load_config()
    return cfg.cameras, cfg.views


def _hand_held():
    from vision.handheld import hand_held_view

    cam = CameraSpec("hand", "sim", 640, 480, warmup_frames=1, average_frames=1)
    return [cam], [hand_held_view(cam)]


SETUPS = {"simulated-rig": default_sim_setup, "repo-config": _repo_rig, "hand-held": _hand_held}


@pytest.fixture(scope="module", params=list(SETUPS))
def saved(request, tmp_path_factory):
    """A scan through the simulated cameras (light without glare, so white
    pixels off the cube are text), its saved pictures read back from disk."""
    cams, views = SETUPS[request.param]()
    out = tmp_path_factory.mktemp(request.param)
    result = scan(cams, views, sim_state=random_cube(8).to_facelets(), sim_seed=4,
                  sim_lighting=Lighting(), debug_dir=out)
    pictures = {v.name: cv2.imread(str(out / f"view-{v.name.replace(':', '-')}.png")) for v in result.views}
    assert all(p is not None for p in pictures.values())
    return result, pictures


def _white(img: np.ndarray) -> np.ndarray:
    return (img >= 200).all(axis=-1)


def test_saved_pictures_do_not_show_the_interactive_keys(saved):
    result, pictures = saved
    for view in result.views:
        frame, picture = result.frames[view.name], pictures[view.name]
        # the same scan drawn for the window, keys included: where its key line's text is
        window = annotate(frame, view, result, keys=True)
        keys = np.zeros(frame.shape[:2], bool)
        keys[BAR_WITH_KEYS - 28:BAR_WITH_KEYS] = True
        keys &= _white(window)
        assert keys.sum() > 150, "the window's keys were not drawn where this test looks"
        # nothing of that text is on the saved picture
        assert _white(picture)[keys].mean() < 0.02, view.name
        assert (picture[keys] != window[keys]).any(axis=-1).mean() > 0.9, view.name


def _glyph(letter: str) -> np.ndarray:
    (w, h), base = cv2.getTextSize(letter, LABEL_FONT, LABEL_SCALE, LABEL_THICKNESS)
    img = np.zeros((h + base + 8, w + 8), np.uint8)
    cv2.putText(img, letter, (4, h + 4), LABEL_FONT, LABEL_SCALE, 255, LABEL_THICKNESS, cv2.LINE_AA)
    ys, xs = np.nonzero(img >= 200)
    return img[ys.min():ys.max() + 1, xs.min():xs.max() + 1] >= 200


GLYPHS = {f: _glyph(f) for f in "URFDLB"}


def _read_letter(blob: np.ndarray) -> tuple[str, float]:
    """The face letter a patch of white text pixels best matches, and how well."""
    pad = max(max(g.shape) for g in GLYPHS.values()) + 4
    canvas = np.pad(blob, pad).astype(np.float32)
    scores = {f: float(cv2.matchTemplate(canvas, g.astype(np.float32), cv2.TM_CCOEFF_NORMED).max())
              for f, g in GLYPHS.items()}
    best = max(scores, key=scores.get)
    return best, scores[best]


def test_every_face_of_every_view_is_labelled(saved):
    result, pictures = saved
    for view in result.views:
        picture = pictures[view.name]
        h, w = picture.shape[:2]
        # off the faces (outlines and sticker letters masked out) the only white is the face letters:
        # the status line is green or magenta
        covered = np.zeros((h, w), np.uint8)
        for face in view.faces:
            quad = cv2.perspectiveTransform(np.array([[[0, 0], [3, 0], [3, 3], [0, 3]]], np.float64),
                                            net_to_image(face))[0]
            cv2.fillConvexPoly(covered, np.round(quad).astype(np.int32), 1)
        covered = cv2.dilate(covered, np.ones((7, 7), np.uint8)).astype(bool)
        text = (_white(picture) & ~covered).astype(np.uint8)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(text, np.ones((3, 3), np.uint8)))
        read = []
        for i in range(1, n):
            if stats[i, cv2.CC_STAT_AREA] < 40:
                continue
            x, y, bw, bh = stats[i, :4]
            blob = (labels[y:y + bh, x:x + bw] == i) & text[y:y + bh, x:x + bw].astype(bool)
            letter, score = _read_letter(blob)
            assert score > 0.7, f"{view.name}: unreadable text at ({x}, {y})"
            read.append(letter)
        assert sorted(read) == sorted(f.face for f in view.faces), view.name
