"""The vision commands, run as a user would (in this process: tests/incli.py)."""

import json
from pathlib import Path

import numpy as np
from incli import cuberobot

from solver import random_cube

STD = {"U": (245, 245, 245), "R": (196, 30, 58), "F": (0, 155, 72), "D": (255, 213, 0),
       "L": (255, 88, 0), "B": (0, 70, 173)}


ROOT = Path(__file__).resolve().parents[1]


def run(*args, env=None):
    """`cuberobot ARGS` in this process (tests/incli.py), with no display."""
    return cuberobot(*args, env=env)


def write_rgb(path, facelets, hide=()):
    rng = np.random.default_rng(0)
    rgb = [[float(np.clip(c + rng.normal(0, 3), 0, 255)) for c in STD[ch]] for ch in facelets]
    for i in hide:
        rgb[i] = None
    path.write_text(json.dumps({"rgb": rgb}))


def test_classify_good_files(tmp_path):
    a, b = random_cube(1).to_facelets(), random_cube(2).to_facelets()
    write_rgb(tmp_path / "a.json", a)
    write_rgb(tmp_path / "b.json", b, hide=[0, 30])
    r = run("classify", "--rgb-json", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == [f"{tmp_path / 'a.json'}: {a} ok", f"{tmp_path / 'b.json'}: {b} ok"]
    r = run("classify", "--rgb-json", str(tmp_path / "a.json"), "--json")
    d = json.loads(r.stdout)
    assert d["facelets"] == a and d["valid"] and d["suspects"] == [] and len(d["confidence"]) == 54


def test_classify_doubtful_scan_exits_1_and_names_stickers(tmp_path):
    f = random_cube(3).to_facelets()
    write_rgb(tmp_path / "a.json", f)
    d = json.loads((tmp_path / "a.json").read_text())
    other = next(ch for ch in "BFR" if ch != f[1] and ch != f[46])  # a colour, not a washed-out one
    d["rgb"][1] = list(STD[other])
    (tmp_path / "a.json").write_text(json.dumps(d))
    r = run("classify", "--rgb-json", str(tmp_path / "a.json"), "--json")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert 1 in out["suspects"] and not out["ok"]


def test_classify_bad_input(tmp_path):
    cases = {  # each file, and what its one line says is wrong
        "notjson.json": ("{oops", "notjson.json:1: not JSON"),
        "shape.json": (json.dumps({"rgb": [[1, 2, 3]] * 53}), '"rgb" has 53 sticker(s), a cube has 54'),
        "value.json": (json.dumps({"rgb": [[1, 2, 300]] * 54}), "sticker 0 (U1) must be [r, g, b]"),
        "type.json": (json.dumps({"rgb": [["a", 2, 3]] * 54}), "sticker 0 (U1) must be [r, g, b]"),
        "nokey.json": (json.dumps([1, 2]), "the file holds an array, not an object"),
        "other.json": (json.dumps({"colours": []}), 'no "rgb" field'),
        "string.json": (json.dumps({"rgb": "red"}), '"rgb" is a string, not an array'),
    }
    for name, (text, says) in cases.items():
        (tmp_path / name).write_text(text)
        r = run("classify", "--rgb-json", str(tmp_path / name))
        assert r.returncode == 2, (name, r.stderr)
        assert "Traceback" not in r.stderr and name in r.stderr and says in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = run("classify", "--rgb-json", str(tmp_path / "missing.json"))
    assert r.returncode == 2 and "missing.json: cannot read: file not found" in r.stderr


def _as_squares(rgb):
    """rubiks-color-resolver's numbering, written out here apart from the
    command's table: U 1-9, L 10-18, F 19-27, R 28-36, B 37-45, D 46-54."""
    first = {"U": 0, "R": 9, "F": 18, "D": 27, "L": 36, "B": 45}
    return {str(9 * k + j + 1): rgb[first[face] + j] for k, face in enumerate("ULFRBD") for j in range(9)}


def test_classify_reads_the_square_numbered_form_as_the_facelet_form(tmp_path):
    for seed in (4, 5, 6):
        f = random_cube(seed).to_facelets()
        write_rgb(tmp_path / "a.json", f)
        rgb = json.loads((tmp_path / "a.json").read_text())["rgb"]
        (tmp_path / "b.json").write_text(json.dumps(_as_squares(rgb)))
        r = run("-q", "classify", "--rgb-json", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == [f"{tmp_path / 'a.json'}: {f} ok", f"{tmp_path / 'b.json'}: {f} ok"]


def test_classify_names_what_is_wrong_with_a_square_numbered_file(tmp_path):
    good = _as_squares([[10 * (i % 9), 100, 200] for i in range(54)])
    missing = {k: v for k, v in good.items() if k not in ("17", "40")}
    cases = {
        "missing.json": (missing, "2 square(s) missing (17, 40)"),
        "extra.json": ({**good, "55": [1, 2, 3]}, "square numbers 55 are not a 3x3 cube's 1 to 54"),
        "twice.json": ({**good, "07": [1, 2, 3]}, "square numbers written twice"),
        "huge.json": ({**good, "9" * 30: [1, 2, 3]}, "square numbers 99999999... (30 digits) are not a 3x3"),
        "value.json": ({**good, "28": [1, 2]}, "square 28 (R1) must be [r, g, b] with values 0..255, not"),
    }
    for name, (data, says) in cases.items():
        (tmp_path / name).write_text(json.dumps(data))
        r = run("classify", "--rgb-json", str(tmp_path / name))
        assert r.returncode == 2, (name, r.stderr)
        assert "Traceback" not in r.stderr and name in r.stderr and says in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_scan_and_calibrate_on_the_simulated_rig(tmp_path):
    truth = random_cube(9).to_facelets()
    r = run("scan", "--sim-state", truth, "--seed", "3", "--save-debug", str(tmp_path / "dbg"))
    assert r.returncode in (0, 1), r.stderr
    assert r.stdout.split()[0] == truth
    assert (tmp_path / "dbg" / "view-upper.png").exists()  # the default config names its views
    config_home = tmp_path / "config"  # the profile is put in use for the default set-up: not the session's
    r = run("calibrate", "--profile", "cli", "--dir", str(tmp_path / "p"), "--seed", "1",
            "--save-debug", str(tmp_path / "cal"), env={"XDG_CONFIG_HOME": str(config_home)})
    assert r.returncode == 0, r.stderr
    settings = next(config_home.rglob("*.toml"))  # saved outside the profile folder: in use by its path
    assert f'profile = "{tmp_path / "p" / "cli.json"}"' in settings.read_text()
    assert f"put in use for {ROOT / 'config' / 'rig.toml'} in {settings}" in r.stdout, r.stdout
    assert json.loads((tmp_path / "cal" / "scan.json").read_text())["facelets"] == "U" * 9 + "R" * 9 + \
        "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9
    assert "smallest colour difference" in r.stdout and (tmp_path / "p" / "cli.json").exists()
    saved = json.loads((tmp_path / "p" / "cli.json").read_text())
    assert saved["cameras"]["upper"]["settings"]["width"] == 1280
    assert len(saved["cameras"]["lower"]["gains"]["D"]) == 9


def test_scan_bad_arguments():
    r = run("scan", "--sim-state", "UUU")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_a_missing_or_misnamed_profile_is_a_user_mistake(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path)}
    r = run("scan", "--profile", "nosuchprofile", env=env)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert "no colour profile 'nosuchprofile'" in lines[0]
    assert f"looked in {tmp_path / 'cuberobot' / 'profiles'}" in lines[0]
    assert "cuberobot calibrate --profile nosuchprofile" in lines[0]
    r = run("scan", "--profile", str(tmp_path / "gone.json"), env=env)
    assert r.returncode == 2 and "no colour profile file" in r.stderr and str(tmp_path) in r.stderr
    for bad in (".hidden", "a b"):
        r = run("scan", "--profile", bad, env=env)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert f"colour profile name {bad!r} is not a plain name" in r.stderr
        assert "cuberobot calibrate --profile" in r.stderr and str(tmp_path) in r.stderr
    r = run("calibrate", "--profile", "../escape", "--save-debug", str(tmp_path / "dbg"), env=env)
    assert r.returncode == 2 and "'../escape' is not a plain name" in r.stderr, r.stderr
    assert not any(tmp_path.rglob("*.json")) and not (tmp_path / "dbg").exists()  # refused before capturing
    for name, text in (("broken", "{not json"), ("wrong", '{"name": "wrong", "face_colors": {"U": [1]}}'),
                       ("binary", "\udcff")):
        path = tmp_path / f"{name}.json"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        r = run("scan", "--profile", str(path), env=env)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, (name, r.stderr)
        assert str(path) in r.stderr and "Traceback" not in r.stderr


def test_calibrate_saves_into_the_user_data_dir_and_scan_finds_it_by_name(tmp_path):
    from pathlib import Path

    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    shipped = Path(__file__).resolve().parents[1] / "config" / "profiles" / "cli-data-dir.json"
    r = run("calibrate", "--profile", "cli-data-dir", "--seed", "1", env=env)
    assert r.returncode == 0, r.stderr
    path = tmp_path / "data" / "cuberobot" / "profiles" / "cli-data-dir.json"
    assert path.is_file() and not shipped.exists()
    assert f"saved to {path}" in r.stdout
    # put in use, as the panel's Calibrate card does: by its name, in the set-up's settings file
    settings = next((tmp_path / "config").rglob("*.toml"))
    assert 'profile = "cli-data-dir"' in settings.read_text() and f"in {settings}" in r.stdout, r.stdout
    assert json.loads(path.read_text())["name"] == "cli-data-dir"
    r = run("scan", "--profile", "cli-data-dir", "--seed", "4", env=env)
    assert r.returncode in (0, 1) and "no colour profile" not in r.stderr, r.stderr
    assert r.stdout.split()[0] == random_cube(4).to_facelets()
    # found there and nowhere else: another user's data directory does not have it
    r = run("scan", "--profile", "cli-data-dir", "--seed", "4", env={"XDG_DATA_HOME": str(tmp_path)})
    assert r.returncode == 2 and "no colour profile 'cli-data-dir'" in r.stderr


def test_geometry_without_display_says_so_and_points_to_the_web_panel():
    r = run("calibrate", "--geometry")
    assert r.returncode == 1 and "needs a display" in r.stderr and "Traceback" not in r.stderr
    assert "cuberobot serve" in r.stderr and "Calibrate card" in r.stderr and len(r.stderr.splitlines()) == 1


def test_calibrating_the_profile_a_config_names_says_the_config_already_uses_it(tmp_path):
    """The README's step 4 on the example's profile name: calibrate saves it and
    the config that names it reads it (the example and the README agree)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = (Path(__file__).resolve().parents[1] / "config" / "examples" /
               "uno-six-steppers-two-webcams.toml").read_text()
    # the README's step names no profile: calibrate makes the one the set-up names (`workshop` there)
    assert 'profile = "workshop"' in example and "`cuberobot calibrate --config my-rig.toml`" in readme
    assert "names, `workshop` in the example" in readme
    assert '--profile home' not in readme
    cfg = tmp_path / "rig.toml"
    shipped = (Path(__file__).resolve().parents[1] / "config" / "rig.toml").read_text()  # simulated cameras
    cfg.write_text(shipped.replace('# profile = "daylight"', 'profile = "workshop"'))
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    r = run("calibrate", "--config", str(cfg), "--seed", "1", env=env)  # the name: the one the set-up uses
    assert r.returncode == 0, r.stderr
    assert f"profile 'workshop' saved to {tmp_path / 'data'}" in r.stdout, r.stdout
    assert f"{cfg} already uses it" in r.stdout
    assert not (tmp_path / "config").exists()  # nothing to override: no settings file written
    r = run("scan", "--config", str(cfg), "--seed", "4", env=env)
    assert r.returncode in (0, 1) and "no colour profile" not in r.stderr, r.stderr


def test_scan_with_a_missing_config_file_is_a_user_error(tmp_path):
    r = run("scan", "--config", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_scan_reads_the_simulated_cube_from_stdin_and_says_there_is_no_display():
    truth = random_cube(21).to_facelets()
    r = cuberobot("scan", "--sim-state", "-", "--seed", "2", "--preview", stdin=truth + "\n")
    assert r.returncode in (0, 1) and r.stdout.split()[0] == truth
    assert "no display for the preview" in r.stderr


def test_classify_min_confidence(tmp_path):
    f = random_cube(7).to_facelets()
    write_rgb(tmp_path / "a.json", f)
    assert run("classify", "--rgb-json", str(tmp_path / "a.json"), "--min-confidence", "0.5").returncode == 0
    r = run("classify", "--rgb-json", str(tmp_path / "a.json"), "--min-confidence", "1", "--json")
    assert r.returncode == 1 and not json.loads(r.stdout)["ok"]
    r = run("classify", "--rgb-json", str(tmp_path / "a.json"), "--min-confidence", "2")
    assert r.returncode == 2 and "from 0 to 1" in r.stderr and "Traceback" not in r.stderr
