"""Image-based tests: rendered frames through the real capture, sampling
and classification code; sticker order against the facelet convention."""

import numpy as np
import pytest

from solver import SOLVED, random_cube
from solver.facelets import CORNER_FACELETS, EDGE_FACELETS, FACES
from vision.capture import Camera, open_camera, write_sim_sequence
from vision.errors import VisionError
from vision.preview import _sticker_geometry
from vision.render import Lighting, render_view
from vision.sample import sample_faces
from vision.scanning import measure, scan
from vision.setup import CameraSpec, FaceSpec, ViewSpec, default_sim_setup

CAMS, VIEWS = default_sim_setup()


def sticker_centres(view):
    out = {}
    for face in view.faces:
        centres, _, size = _sticker_geometry(face)
        for n in range(9):
            out[9 * FACES.index(face.face) + n] = (centres[n], size)
    return out


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.name)
def test_stickers_of_each_piece_meet_in_the_image(view):
    """The convention, face by face: the stickers the solver says form one
    corner (or edge) must sit next to each other where the faces meet."""
    pos = sticker_centres(view)
    checked = 0
    for piece in list(CORNER_FACELETS) + list(EDGE_FACELETS):
        seen = [p for p in piece if p in pos]
        if len(seen) < 2:
            continue
        for a in seen:
            for b in seen:
                if a < b:
                    d = np.linalg.norm(pos[a][0] - pos[b][0])
                    assert d < 1.25 * max(pos[a][1], pos[b][1]), (a, b, d)
                    checked += 1
    # one corner is seen whole from a corner camera
    corners_seen = [c for c in CORNER_FACELETS if all(p in pos for p in c)]
    assert len(corners_seen) == 1 and checked == 9  # URF: 3 pairs; 3 edges; 3 half-seen corners


def test_every_sticker_lands_in_its_place():
    """A cube whose every face shows a different pattern comes back exactly,
    so no face is read rotated or mirrored."""
    for seed in (1, 2, 3):
        truth = random_cube(seed).to_facelets()
        rng = np.random.default_rng(seed)
        frames = {v.name: render_view(truth, v, (1280, 720), lighting=Lighting(), rng=rng) for v in VIEWS}
        samples, _, _ = measure(frames, VIEWS)
        from vision.classifier import classify

        nearest = classify(samples)
        assert nearest.facelets == truth and nearest.ok


def test_rotated_corner_list_reads_the_same():
    """Corners may be listed from any corner as long as top_left says which
    one is the net's top-left."""
    truth = random_cube(5).to_facelets()
    img = render_view(truth, VIEWS[0], (1280, 720), lighting=Lighting(noise=0), rng=np.random.default_rng(0))
    base = sample_faces(img, VIEWS[0].faces)
    for k in range(1, 4):
        faces = [FaceSpec(f.face, tuple(np.roll(np.array(f.corners), k, axis=0).tolist()), k)
                 for f in VIEWS[0].faces]
        again = sample_faces(img, faces)
        for f in "URF":
            assert np.allclose(base[f][0], again[f][0], atol=1.0)


def test_capture_through_an_image_sequence(tmp_path):
    spec = CameraSpec("A", "unused", warmup_frames=2, average_frames=3)
    truth = random_cube(6).to_facelets()
    pattern = write_sim_sequence(tmp_path, truth, VIEWS[0], spec, seed=1)
    cam = Camera(spec, pattern)
    try:
        img = cam.grab()
        img2 = cam.grab()  # the sequence runs out and starts over
    finally:
        cam.close()
    assert img.shape == (720, 1280, 3) and img.dtype == np.uint8 and img2.shape == img.shape
    with pytest.raises(VisionError, match="camera 'A'.*closed"):
        cam.grab()


def test_capture_through_a_video_file(tmp_path):
    import cv2

    path = tmp_path / "cube.avi"
    w = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 360))
    truth = random_cube(7).to_facelets()
    view = ViewSpec("v", "c", tuple(FaceSpec(f.face, tuple((x / 2, y / 2) for x, y in f.corners))
                                    for f in VIEWS[0].faces))
    rng = np.random.default_rng(1)
    for _ in range(6):
        w.write(render_view(truth, view, (640, 360), lighting=Lighting(), rng=rng))
    w.release()
    cam = Camera(CameraSpec("file", str(path), 640, 360, warmup_frames=1, average_frames=2))
    img = cam.grab()
    cam.close()
    got = sample_faces(img, view.faces)
    for f in "URF":
        k = FACES.index(f)
        from vision.colour import delta_e, rgb_to_lab

        clean = render_view(truth, view, (640, 360), lighting=Lighting(noise=0), rng=rng)
        ref = sample_faces(clean, view.faces)
        assert np.median(delta_e(rgb_to_lab(got[f][0]), rgb_to_lab(ref[f][0]))) < 8, k


def test_missing_camera_is_named(tmp_path):
    with pytest.raises(VisionError, match="'left'.*no such file"):
        Camera(CameraSpec("left", str(tmp_path / "nothing.avi")))
    with pytest.raises(VisionError, match="'dev'"):
        Camera(CameraSpec("dev", 57, timeout_s=3.0))


def test_black_frames_are_refused(tmp_path):
    import cv2

    for i in range(4):
        cv2.imwrite(str(tmp_path / f"f{i:03d}.png"), np.zeros((720, 1280, 3), np.uint8))
    cam = Camera(CameraSpec("cap-on", str(tmp_path / "f%03d.png"), warmup_frames=1, average_frames=2))
    with pytest.raises(VisionError, match="cap-on.*black"):
        cam.grab()
    cam.close()


def test_wrong_frame_size_is_refused(tmp_path):
    import cv2

    cv2.imwrite(str(tmp_path / "f000.png"), np.full((100, 100, 3), 128, np.uint8))
    cam = Camera(CameraSpec("small", str(tmp_path / "f%03d.png"), warmup_frames=0, average_frames=1))
    with pytest.raises(VisionError, match="100x100"):
        cam.grab()
    cam.close()


def test_sim_camera_without_a_cube_is_an_error():
    with pytest.raises(VisionError, match="simulated"):
        open_camera(CAMS[0])
    with pytest.raises(VisionError, match="simulated"):
        open_camera(CameraSpec("elsewhere", "sim"), sim_state=SOLVED)


def test_sim_camera_defaults_to_the_simulated_rig_view():
    cam = open_camera(CAMS[0], sim_state=SOLVED, sim_seed=1)
    try:
        img = cam.grab()
    finally:
        cam.close()
    got = sample_faces(img, VIEWS[0].faces)
    assert set(got) == {"U", "R", "F"}


@pytest.mark.parametrize("seed", [11, 12])
def test_scan_of_the_simulated_rig(seed, tmp_path):
    truth = random_cube(seed).to_facelets()
    r = scan(CAMS, VIEWS, sim_state=truth, sim_seed=seed, debug_dir=tmp_path)
    assert r.facelets == truth or not r.ok
    assert r.facelets == truth
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scan.json", "view-A.png", "view-B.png"]
    assert set(r.images) == {"A", "B"} and r.images["A"].shape == (720, 1280, 3)


def test_forced_glare_is_seen_and_flagged_or_read_through():
    truth = random_cube(13).to_facelets()
    light = Lighting(glare_stickers={19: 3.0})
    r = scan(CAMS, VIEWS, sim_state=truth, sim_seed=1, sim_lighting=light)
    assert r.glare[19] > 0.5  # the sampler saw the reflection
    assert r.facelets == truth and 19 in r.classification.suspects and not r.ok
    r = scan(CAMS, VIEWS, sim_state=truth, sim_seed=1, sim_lighting=light, read_through_glare=True)
    assert r.facelets == truth
    assert 19 in r.classification.suspects or r.classification.confidence[19] > 0.98


def test_glare_on_two_stickers_of_one_piece_and_elsewhere_is_not_passed_as_sure():
    """Both visible stickers of several edges washed out: which edge is
    where can no longer be told, and the scan must say so."""
    truth = random_cube(17).to_facelets()
    light = Lighting(glare_stickers={5: 3.0, 10: 3.0, 7: 3.0, 19: 3.0, 23: 3.0, 12: 3.0})
    r = scan(CAMS, VIEWS, sim_state=truth, sim_seed=1, sim_lighting=light, read_through_glare=True)
    assert r.facelets == truth or not r.ok


def test_hidden_centres_use_the_profile():
    from vision.profile import build_profile
    from vision.scanning import capture_frames

    frames = capture_frames(CAMS, VIEWS, sim_state=SOLVED, sim_seed=3, sim_lighting=Lighting())
    samples, _, _ = measure(frames, VIEWS)
    prof = build_profile("t", {"A": {f: samples[9 * FACES.index(f):][:9] for f in "URF"},
                               "B": {f: samples[9 * FACES.index(f):][:9] for f in "DLB"}})
    hidden = [ViewSpec(v.name, v.camera,
                       tuple(FaceSpec(f.face, f.corners, f.top_left, False) for f in v.faces))
              for v in VIEWS]
    truth = random_cube(14).to_facelets()
    r = scan(CAMS, hidden, sim_state=truth, sim_seed=4, sim_lighting=Lighting(), profile=prof)
    assert np.isnan(r.samples[[9 * c + 4 for c in range(6)]]).all()
    assert r.facelets == truth and r.ok


def test_hand_held_scan_with_the_guide():
    from vision.handheld import draw_guide, hand_held_view

    cam = CameraSpec("hand", "sim", 640, 480, warmup_frames=1, average_frames=1)
    view = hand_held_view(cam)
    truth = random_cube(15).to_facelets()
    r = scan([cam], [view], sim_state=truth, sim_seed=2, sim_lighting=Lighting())
    assert r.facelets == truth and r.ok
    assert set(r.frames) == {f"hand:{f}" for f in FACES}
    shown = draw_guide(r.frames["hand:F"], view.faces[2])
    assert shown.shape == r.frames["hand:F"].shape and (shown != r.frames["hand:F"]).any()
    # the guide drawn over the picture does not change what is read inside it
    again = sample_faces(shown, (view.faces[2],))
    assert np.allclose(again["F"][0], sample_faces(r.frames["hand:F"], (view.faces[2],))["F"][0], atol=25)


def test_saved_photos_read_through_the_camera_code():
    """Two saved JPEGs (dim 2900 K light, vignetting, a reflection, red and
    orange ΔE 8.9 apart) read as still-image cameras, with the geometry
    from the TOML next to them."""
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    data = Path(__file__).parent / "data"
    cfg = tomllib.loads((data / "warm-dim.toml").read_text())
    views = [ViewSpec(v["name"], v["camera"], tuple(FaceSpec(f["face"], tuple(map(tuple, f["corners"])),
                                                             f["top_left"]) for f in v["face"]))
             for v in cfg["view"]]
    cams = [CameraSpec(v.name, str(data / f"warm-dim-{v.name}.jpg"), 640, 360, warmup_frames=1,
                       average_frames=2) for v in views]
    frames = {}
    for cam, view in zip(cams, views):
        c = Camera(cam)
        try:
            frames[view.name] = c.grab()
        finally:
            c.close()
    from vision.scanning import classify_measured

    samples, spread, glare = measure(frames, views)
    r = classify_measured(samples, spread, glare)
    assert r.facelets == cfg["truth"]


def _six_still_cameras(folder, seed):
    """One photo per face, each a still-image camera with its face's corners
    given by hand (as a person sets up six photos in a config): the
    renderer's photos, each in a light of its own."""
    from photo_render import render_cube_photos, write_photo

    rng = np.random.default_rng(seed)
    truth = random_cube(seed).to_facelets()
    cams, views = [], []
    for face, shot in render_cube_photos(truth, rng, size=(1280, 960)).items():
        path = str(folder / f"{face}.png")
        write_photo(shot.image, path, rng)
        cams.append(CameraSpec(f"cam-{face}", path, 1280, 960, warmup_frames=0, average_frames=1))
        corners = tuple((float(x), float(y)) for x, y in shot.corners)
        views.append(ViewSpec(f"photo-{face}", f"cam-{face}", (FaceSpec(face, corners, 0),)))
    return truth, cams, views


def test_six_still_photos_as_cameras_are_judged_each_in_its_own_light(tmp_path):
    from vision.scanning import faces_seen_apart

    assert not faces_seen_apart(VIEWS)  # the rig's cameras: three faces each, one lamp
    # cube 12: the B photo is dim; judged against the brightest photo, B2 was "hidden by darkness"
    truth, cams, views = _six_still_cameras(tmp_path, 12)
    assert faces_seen_apart(views)
    shared = [ViewSpec(v.name, "cam-U", v.faces) for v in views]
    assert not faces_seen_apart(shared)  # one camera's frame, one exposure
    r = scan(cams, views)
    assert r.facelets == truth and r.ok, r.classification.warnings
