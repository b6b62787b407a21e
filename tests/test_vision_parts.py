"""Profiles, geometry clicking (the parts that need no display), preview drawing."""

import json

import numpy as np
import pytest

from solver import SOLVED, random_cube
from solver.facelets import FACES
from vision.colour import srgb_to_linear
from vision.errors import VisionError
from vision.geometry import geometry_toml, order_corners
from vision.preview import annotate, cycle_letter, sticker_at
from vision.profile import Profile, apply_gains, build_profile, load_profile, save_profile
from vision.render import Lighting
from vision.scanning import capture_frames, measure, scan
from vision.setup import FaceSpec, ViewSpec, default_sim_setup

CAMS, VIEWS = default_sim_setup()


def calibrate(light):
    frames = capture_frames(CAMS, VIEWS, sim_state=SOLVED, sim_seed=1, sim_lighting=light)
    samples, _, _ = measure(frames, VIEWS)
    seen = {v.camera: {f.face: samples[9 * FACES.index(f.face):][:9] for f in v.faces} for v in VIEWS}
    return build_profile("lab", seen, {"A": {"exposure": -5}}), samples


def test_profile_save_load_round_trip(tmp_path):
    prof, _ = calibrate(Lighting())
    path = save_profile(prof, tmp_path)
    assert path == tmp_path / "lab.json"
    back = load_profile("lab", [tmp_path])
    assert back.face_colors == prof.face_colors
    assert back.cameras["A"].gains == prof.cameras["A"].gains
    assert back.cameras["A"].settings == {"exposure": -5}
    assert load_profile(path).name == "lab"
    d, a, b = back.separation()
    assert d > 12 and a != b


def test_profile_errors(tmp_path):
    from vision.profile import ProfileError

    with pytest.raises(ProfileError, match=f"no colour profile 'nope' \\(looked in {tmp_path}\\).*"
                                           "cuberobot calibrate --profile nope") as e:
        load_profile("nope", [tmp_path])
    assert e.value.exit_code == 2
    with pytest.raises(ProfileError, match="no colour profile file"):
        load_profile(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(VisionError, match="cannot read"):
        load_profile("bad", [tmp_path])
    (tmp_path / "short.json").write_text(json.dumps({"name": "short", "face_colors": {"U": [1, 2, 3]}}))
    with pytest.raises(VisionError, match="malformed"):
        load_profile("short", [tmp_path])
    two = {"name": "two", "face_colors": {f: [1, 2, 3] for f in FACES}}
    two["face_colors"]["R"] = [200, 30]
    (tmp_path / "two.json").write_text(json.dumps(two))
    with pytest.raises(VisionError, match="malformed"):
        load_profile("two", [tmp_path])
    for bad in ("../evil", ".hidden", "", "home.json", "a b"):
        with pytest.raises(ProfileError, match="not a plain name"):
            save_profile(Profile(bad, {f: (0.0, 0.0, 0.0) for f in FACES}), tmp_path)
    with pytest.raises(ProfileError, match=f"not a plain name.*found by name in {tmp_path}"):
        load_profile(".hidden", [tmp_path])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "short.json", "two.json"]


def test_profiles_live_in_the_user_data_dir_before_the_repository(tmp_path, monkeypatch):
    import vision.profile as vp

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    repo = tmp_path / "checkout" / "config" / "profiles"
    monkeypatch.setattr(vp, "repo_profile_dir", lambda: repo)
    assert vp.profile_dirs() == [tmp_path / "data" / "cuberobot" / "profiles"]  # no examples folder
    mine = Profile("p", {f: (1.0, 2.0, 3.0) for f in FACES})
    path = save_profile(mine)
    assert path == tmp_path / "data" / "cuberobot" / "profiles" / "p.json"
    example = Profile("p", {f: (9.0, 9.0, 9.0) for f in FACES})
    save_profile(example, repo)
    save_profile(Profile("shipped", example.face_colors), repo)
    assert vp.profile_dirs() == [path.parent, repo]
    assert load_profile("p").face_colors == mine.face_colors  # the user's own wins
    assert load_profile("shipped").face_colors == example.face_colors
    assert load_profile(repo / "p.json").face_colors == example.face_colors
    assert load_profile(str(repo / "p.json")).face_colors == example.face_colors


def test_gains_flatten_vignetting():
    light = Lighting(vignetting=0.7, gradient=(0.5, 0.6), noise=0.5)
    prof, samples = calibrate(light)
    # the solved cube's faces, corrected, are even
    for v in VIEWS:
        for f in v.faces:
            k = FACES.index(f.face)
            raw = samples[9 * k:9 * k + 9]
            fixed = apply_gains(raw, prof.cameras[v.camera].gains[f.face])
            lum = lambda x: srgb_to_linear(np.clip(x, 0, 255)) @ [0.2126, 0.7152, 0.0722]  # noqa: E731
            assert np.std(lum(fixed)) < 0.5 * np.std(lum(raw)) + 1e-3
    truth = random_cube(3).to_facelets()
    r = scan(CAMS, VIEWS, sim_state=truth, sim_seed=2, sim_lighting=light, profile=prof)
    assert r.facelets == truth


def test_order_corners_from_any_click_order():
    square = [(100, 100), (200, 100), (200, 200), (100, 200)]
    assert order_corners(square) == tuple((float(x), float(y)) for x, y in square)
    # first click is the net's top-left; the others in any order
    got = order_corners([(200, 200), (100, 100), (200, 100), (100, 200)])
    assert got == ((200.0, 200.0), (100.0, 200.0), (100.0, 100.0), (200.0, 100.0))
    with pytest.raises(VisionError):
        order_corners([(0, 0), (1, 1), (2, 2), (3, 3)])
    with pytest.raises(VisionError):
        order_corners([(0, 0), (100, 0)])


def test_geometry_toml_round_trip():
    tomllib = pytest.importorskip("tomllib")
    odd = FaceSpec("F", ((1.5, 2), (3, 2), (3, 4), (1, 4)), 2, False)
    text = geometry_toml(VIEWS + [ViewSpec("h", "A", (odd,), hand_held=True)])
    data = tomllib.loads(text)
    views = [ViewSpec(v["name"], v["camera"],
                      tuple(FaceSpec(f["face"], tuple(tuple(c) for c in f["corners"]), f["top_left"],
                                     f.get("center_visible", True)) for f in v["face"]),
                      v.get("hand_held", False)) for v in data["view"]]
    assert views[:2] == VIEWS
    assert views[2].hand_held and views[2].faces[0].top_left == 2 and not views[2].faces[0].center_visible


def test_annotate_and_click_mapping():
    truth = random_cube(4).to_facelets()
    r = scan(CAMS, VIEWS, sim_state=truth, sim_seed=5, sim_lighting=Lighting(shadow_faces={"F": 0.01}))
    img = annotate(r.frames["A"], VIEWS[0], r)
    assert img.shape == r.frames["A"].shape and (img != r.frames["A"]).any()
    # the stickers of the face in the dark are in doubt and ringed in magenta
    assert set(range(18, 27)) - {22} <= set(r.classification.suspects)
    mask = (img[..., 0] == 255) & (img[..., 1] == 0) & (img[..., 2] == 255)
    assert mask.sum() > 50
    # a click on each sticker's centre finds that sticker
    from vision.preview import _sticker_geometry

    for f in VIEWS[0].faces:
        centres, _, _ = _sticker_geometry(f)
        for n, (x, y) in enumerate(centres):
            assert sticker_at(VIEWS[0], x, y) == 9 * FACES.index(f.face) + n
    assert sticker_at(VIEWS[0], 5, 5) is None
    s = cycle_letter(truth, 0)
    assert s[0] == FACES[(FACES.index(truth[0]) + 1) % 6] and s[1:] == truth[1:]
    assert cycle_letter(truth, 4) == truth


def test_a_hung_camera_read_times_out_with_its_name():
    import time

    from vision.capture import _with_timeout

    t0 = time.monotonic()
    with pytest.raises(VisionError, match="camera 'slow'.*0.2 s"):
        _with_timeout(lambda: time.sleep(5), 0.2, "camera 'slow'")
    assert time.monotonic() - t0 < 2
    with pytest.raises(VisionError, match="camera 'bad': boom"):
        _with_timeout(lambda: (_ for _ in ()).throw(RuntimeError("boom")), 1.0, "camera 'bad'")


def test_order_corners_property():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=60, deadline=None)
    @given(st.floats(50, 600), st.floats(50, 400), st.floats(20, 200), st.floats(0, 6.28),
           st.permutations([1, 2, 3]), st.floats(0.0, 0.25))
    def check(cx, cy, r, angle, rest, skew):
        # a convex quadrilateral, clockwise on screen, starting at the net's top-left
        angs = [angle + k * np.pi / 2 + (skew if k % 2 else -skew) for k in range(4)]
        quad = [(cx + r * np.cos(a), cy + r * np.sin(a)) for a in angs]
        clicks = [quad[0]] + [quad[k] for k in rest]
        got = order_corners(clicks)
        assert np.allclose(got, np.round(quad, 1), atol=0.11)

    check()


def test_calibration_refuses_a_cube_that_is_not_solved(tmp_path):
    from robot.app.calibrate import check_solved
    from robot.rig.errors import UserError

    frames = capture_frames(CAMS, VIEWS, sim_state=random_cube(1).to_facelets(), sim_seed=1,
                            sim_lighting=Lighting())
    with pytest.raises(UserError, match="does not look solved"):
        check_solved(frames, VIEWS, tmp_path)
    assert (tmp_path / "view-A.png").exists()
    frames = capture_frames(CAMS, VIEWS, sim_state=SOLVED, sim_seed=1, sim_lighting=Lighting())
    check_solved(frames, VIEWS)


def test_srgb_curve_known_values_and_round_trip():
    from vision.colour import lab_to_rgb, linear_to_srgb, rgb_to_lab

    # IEC 61966-2-1 reference points: black, the knee, mid grey, white
    expected = [0.0, 0.0030353, 0.2158605, 1.0]
    assert srgb_to_linear([0.0, 10.0, 128.0, 255.0]) == pytest.approx(expected, abs=1e-6)
    levels = np.arange(256.0)
    assert np.abs(linear_to_srgb(srgb_to_linear(levels)) - levels).max() < 1e-9
    assert np.isnan(srgb_to_linear([np.nan, 3.0])[0])
    # Lab goes through the same curve: white is L 100, and Lab -> RGB undoes it
    assert rgb_to_lab(np.array([255.0, 255.0, 255.0]))[0] == pytest.approx(100.0, abs=1e-3)
    rgb = np.random.default_rng(1).uniform(0, 255, (50, 3))
    assert np.abs(lab_to_rgb(rgb_to_lab(rgb)) - rgb).max() < 1e-6


def test_a_clipping_simulated_camera_is_captured_again_at_a_shorter_exposure():
    """The simulated camera honours exposure like a webcam: a scene lit to
    clip is re-captured shorter until no sticker clips, and the exposure
    reached is reported for the next capture."""
    from solver import random_cube
    from vision.render import Lighting
    from vision.scanning import capture_frames, exposure_problems_in
    from vision.setup import default_sim_setup

    cams, views = default_sim_setup()
    f = random_cube(5).to_facelets()
    exposures: dict = {}
    settings: dict = {}
    frames = capture_frames(cams, views, sim_state=f, sim_lighting=Lighting(intensity=2.0),
                            exposures=exposures, settings=settings)
    assert set(exposures) == {"A", "B"} and all(e < 1.0 for e in exposures.values())
    assert all(settings[c]["exposure"] == exposures[c] for c in exposures)
    assert not any(exposure_problems_in(frames[v.name], v)[0] for v in views)
