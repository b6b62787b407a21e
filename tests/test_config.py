"""Loading and checking the set-up file."""

import os
import subprocess
from pathlib import Path

import pytest
from incli import cuberobot

from robot.rig.config import PACKAGE_DIR, parse_config, rig_turn_costs
from robot.rig.errors import UserError
from robot.rig.loading import load_config

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "config" / "examples").glob("*.toml"))


def test_default_config_is_a_simulated_rig_with_two_simulated_cameras():
    cfg = load_config()
    assert cfg.rig.port.startswith("sim://")
    assert [c.source for c in cfg.cameras] == ["sim", "sim"]
    assert all((c.width, c.height) == (1280, 720) for c in cfg.cameras)
    faces = sorted(f.face for v in cfg.views for f in v.faces)
    assert faces == sorted("URFDLB")
    assert sorted(m.motor for m in cfg.motors.values()) == list(range(6))
    q, h = rig_turn_costs(cfg)
    assert 0 < q < h


def test_packaged_default_is_the_same_file():
    assert (PACKAGE_DIR / "default_rig.toml").read_bytes() == (ROOT / "config" / "rig.toml").read_bytes()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_load(path):
    cfg = load_config(path)
    assert cfg.cameras and cfg.views


def test_examples_exist():
    assert {p.name for p in EXAMPLES} >= {"uno-six-steppers-two-webcams.toml", "handheld-webcam.toml"}


def _err(text: str) -> str:
    with pytest.raises(UserError) as e:
        parse_config(text, Path("my.toml"))
    return str(e.value)


def test_unknown_key_suggests_the_right_one():
    msg = _err("[motors.U]\nmax_sped = 2.0\n")
    assert "my.toml" in msg and "motors.U.max_sped" in msg and "did you mean 'max_speed'" in msg
    assert "'rig'" in _err("[rigg]\nport = 'x'\n")


def test_wrong_type_names_key_and_expectation():
    msg = _err("[rig]\nbaud = '115200'\n")
    assert "rig.baud" in msg and "integer" in msg
    assert "true or false" in _err("[motors.R]\ninvert = 1\n")


def test_out_of_range_and_choices():
    assert "between 0 and 5" in _err("[motors.F]\nmotor = 7\n")
    assert "microsteps" in _err("[motors.F]\nmicrosteps = 3\n")
    assert "'axial'" in _err("[solver]\nmetric = 'fast'\n")


def test_steps_per_quarter_must_be_whole():
    msg = _err("[motors.U]\nsteps_per_rev = 200\nmicrosteps = 1\ngear_ratio = 1.01\n")
    assert "motors.U" in msg and "whole number" in msg


def test_speed_beyond_the_tick_rate_is_refused():
    assert "25000 steps/s" in _err("[motors.U]\nmax_speed = 20.0\n")


def test_duplicate_motor_and_unknown_camera():
    assert "already used" in _err("[motors.U]\nmotor = 1\n")
    text = ("[[camera]]\nname = 'a'\nsource = 0\n[[view]]\nname = 'v'\ncamera = 'b'\n")
    assert "no camera named 'b'" in _err(text)
    bad = ("[[camera]]\nname = 'a'\nsource = 0\n[[view]]\nname = 'v'\ncamera = 'a'\n"
           "[[view.face]]\nface = 'U'\ncorners = [[0, 0], [1, 0]]\n")
    assert "view[0].face[0].corners" in _err(bad)


def test_a_byte_order_mark_in_front_is_read_past(tmp_path):
    # Windows' Notepad may save one; TOML's reader refused it at "line 1, column 1" with no word why
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[rig]\nport = 'sim://'\nbaud = 57600\n")
    assert load_config(path).rig.baud == 57600
    path.write_bytes(b"\xef\xbb\xbf[rig]\nport = 3\n")
    with pytest.raises(UserError, match="rig.port: expected a string"):
        load_config(path)


def test_damaged_saved_settings_say_how_to_get_past_them(tmp_path):
    # the panel's saved settings stop every command reading the set-up file: the refusal names
    # the file the person never wrote and says how to undo it
    from robot.rig.settings import apply_settings, settings_path

    cfg = load_config(settings=False)  # the default set-up file; its settings kept in tmp_path
    assert cfg.path is not None
    view = cfg.views[0]
    saved = settings_path(cfg.path, tmp_path / "settings")
    saved.parent.mkdir(parents=True)
    saved.write_text(f"[[view]]\nname = '{view.name}'\ncamera = '{view.camera}'\n[[view.face]]\nface = 'U'\n"
                     "corners = [[-5000, -5000], [100000, 0], [100000, 100000], [0, 100000]]\n")
    with pytest.raises(UserError) as got:
        apply_settings(cfg, tmp_path / "settings")
    message = str(got.value)
    assert str(saved) in message and "is outside the" in message and "delete the file to undo them" in message
    assert "\n" not in message


def test_malformed_toml_and_missing_file(tmp_path):
    assert "not valid TOML" in _err("[rig\nport=")
    with pytest.raises(UserError, match="not found"):
        load_config(tmp_path / "nope.toml")


def _cli(*args, input=None, cwd=None, env=None):
    """`cuberobot ARGS` in this process (tests/incli.py); ``env`` the whole
    environment, as a subprocess would have it."""
    changes = None if env is None else {**{k: None for k in os.environ if k not in env}, **env}
    return cuberobot(*args, stdin=input, cwd=cwd, env=changes)


def test_config_check_cli(tmp_path):
    r = _cli("config", "check")
    assert r.returncode == 0 and "ok" in r.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("[motors.U]\nacceleraton = 3\n")
    r = _cli("config", "check", str(bad))
    assert r.returncode == 2
    assert "bad.toml: motors.U.acceleraton: unknown key; did you mean 'acceleration'?" in r.stderr
    assert "Traceback" not in r.stderr
    r = _cli("config", "check", str(tmp_path / "missing.toml"))
    assert r.returncode == 2 and "not found" in r.stderr and "Traceback" not in r.stderr


def _check(file: Path, data_home: Path, **kw) -> subprocess.CompletedProcess:
    """`cuberobot config check FILE` with the user's colour profiles in ``data_home``
    (the person's own are neither read nor written; conftest keeps the panel's settings apart)."""
    env = dict(os.environ, XDG_DATA_HOME=str(data_home))
    return _cli("config", "check", str(file), cwd=ROOT, env=env, **kw)


def _a_profile(name: str, directory: Path) -> Path:
    from vision.profile import Profile, save_profile

    colours = dict(zip("URFDLB", [(240.0, 240.0, 240.0), (200.0, 30.0, 30.0), (30.0, 160.0, 60.0),
                                  (240.0, 220.0, 40.0), (250.0, 120.0, 20.0), (20.0, 60.0, 200.0)],
                       strict=True))
    return save_profile(Profile(name, colours), directory)


def test_config_check_says_a_colour_profile_is_not_there_yet(tmp_path):
    """It said ok and nothing more, and `scan` refused the profile later, with
    the cube in place. Not yet made is no mistake in the file (the README's
    steps check the file before calibrating), but it is said."""
    data = tmp_path / "data"
    setup = tmp_path / "rig.toml"
    setup.write_text('[vision]\nprofile = "nosuch"\n')
    r = _check(setup, data)
    assert r.returncode == 0 and r.stdout.startswith(f"{setup}: ok\n"), r.stdout + r.stderr
    assert ("  colour profile: not there yet, so `scan` and `start` will refuse it: no colour profile "
            f"'nosuch' (looked in {data / 'cuberobot' / 'profiles'}): make it with `cuberobot calibrate "
            "--profile nosuch` (a solved cube in place), or give the path of a profile's .json file\n") \
        in r.stdout, r.stdout
    setup.write_text('[vision]\nprofile = "profiles/gone.json"\n')  # beside the set-up file
    r = _check(setup, data)
    gone = tmp_path / "profiles" / "gone.json"
    assert r.returncode == 0 and f"not there yet, so `scan` and `start` will refuse it: no colour " \
        f"profile file '{gone}'" in r.stdout, r.stdout


def test_config_check_refuses_a_colour_profile_that_cannot_be_read(tmp_path):
    data = tmp_path / "data"
    setup = tmp_path / "rig.toml"
    (tmp_path / "broken.json").write_text("{")
    setup.write_text('[vision]\nprofile = "broken.json"\n')
    r = _check(setup, data)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith(f"cuberobot config: {setup}: vision.profile: cannot read colour profile "
                               f"{tmp_path / 'broken.json'}: "), r.stderr
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    setup.write_text('[vision]\nprofile = "two words"\n')
    r = _check(setup, data)
    assert r.returncode == 2 and "vision.profile: colour profile name 'two words' is not a plain name" \
        in r.stderr, r.stderr


def test_config_check_reads_a_sim_ports_options(tmp_path):
    """A bad option was found only when a run first opened the virtual rig."""
    setup = tmp_path / "rig.toml"
    setup.write_text('[rig]\nport = "sim://?seed=x"\n')
    r = _check(setup, tmp_path / "data")
    assert r.returncode == 2 and r.stderr == (f"cuberobot config: {setup}: rig.port: sim:// option seed='x': "
                                              "expected a whole number from 0 to 4294967295\n"), r.stderr
    setup.write_text('[rig]\nport = "sim://bench?speed=max&state=solved"\n')
    assert _check(setup, tmp_path / "data").returncode == 0


def test_config_check_names_a_broken_profile_the_panel_saved_as_the_panels(tmp_path):
    from robot.rig.settings import settings_path

    data = tmp_path / "data"
    (data / "cuberobot" / "profiles").mkdir(parents=True)
    (data / "cuberobot" / "profiles" / "broken.json").write_text("[]")
    setup = tmp_path / "rig.toml"
    setup.write_text("[solver]\nbudget_ms = 50\n")
    saved = settings_path(setup)  # in the tests' own config folder (conftest), which the CLI inherits
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text('profile = "broken"\n')
    try:
        r = _check(setup, data)
    finally:
        saved.unlink()
    assert r.returncode == 2, r.stdout
    assert f"{setup}: the colour profile the panel or `cuberobot calibrate` saved for it in {saved}: " \
        in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_config_check_names_the_colour_profile_it_loads_or_says_there_is_none(tmp_path):
    data = tmp_path / "data"
    by_name = _a_profile("home", data / "cuberobot" / "profiles")
    beside = _a_profile("bench", tmp_path / "profiles")
    setup = tmp_path / "rig.toml"
    for value, line in (("home", f"  colour profile: home ({by_name})\n"),
                        ("profiles/bench.json", f"  colour profile: bench ({beside})\n")):
        setup.write_text(f'[vision]\nprofile = "{value}"\n')
        r = _check(setup, data)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"{setup}: ok\n") and line in r.stdout, r.stdout
    r = _check(ROOT / "config" / "rig.toml", data)  # sets no profile
    assert r.returncode == 0, r.stderr
    assert ("  colour profile: none (each scan learns the colours from its own centre stickers; "
            "`cuberobot calibrate --profile NAME` makes one)\n") in r.stdout


@pytest.mark.parametrize(("kind", "tables", "note"), [
    ("flipper", "[motors.U]\nmax_speed = 2.0\n",
     "[motors.U] is not used by a flipper rig (it turns no face with a stepper; its parts are servos): keep "
     "it for a six-motor rig, or remove it"),
    ("flipper", "[motors.B]\n[motors.U]\n",
     "[motors.U] and [motors.B] are not used by a flipper rig (it turns no face with a stepper; its parts "
     "are servos): keep them for a six-motor rig, or remove them"),
    ("two-gripper", "[motors.D]\nmotor = 3\n[motors.U]\ninvert = true\n",
     "[motors.U] is not used by a two-gripper rig (it drives only the steppers of D and L): keep it for a "
     "six-motor rig, or remove it"),
])
def test_config_check_notes_motor_tables_the_rig_kind_does_not_drive(tmp_path, kind, tables, note):
    # read and silently unused before; still ok, as a maker may switch kinds and keep the tables
    setup = tmp_path / "rig.toml"
    setup.write_text(f'[rig]\nkind = "{kind}"\n{tables}')
    r = _check(setup, tmp_path / "data")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{setup}: ok\n") and f"\n  note: {note}\n" in r.stdout, r.stdout
    assert r.stdout.count("note:") == 1


def test_config_check_has_no_note_for_the_tables_a_rig_drives(tmp_path):
    r = _check(ROOT / "config" / "examples" / "two-gripper.toml", tmp_path / "data")
    assert r.returncode == 0 and "note:" not in r.stdout, r.stdout + r.stderr
    r = _check(ROOT / "config" / "rig.toml", tmp_path / "data")  # six motors, six tables
    assert r.returncode == 0 and "note:" not in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("text", ["", "# my rig, to be filled in\n\n", "[rig]\n[motors.U]\n"])
def test_config_check_notes_a_file_that_sets_nothing(tmp_path, text):
    setup = tmp_path / "rig.toml"
    setup.write_text(text)
    r = _check(setup, tmp_path / "data")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{setup}: ok\n  rig: sim:// at 115200 baud; "
                               "motors U:0, R:1, F:2, D:3, L:4, B:5\n"), r.stdout
    assert r.stdout.endswith("  note: the file sets nothing: every setting is its default (a simulated "
                             "six-motor rig on sim://, no cameras)\n"), r.stdout


def test_config_check_refuses_standard_input_and_asks_for_the_path(tmp_path):
    # it said "-: cannot read: file not found"
    r = _cli("config", "check", "-", cwd=tmp_path, input="[rig]\n")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("cuberobot config: -: config check reads a set-up file by its path, not standard "
                        "input; give the file's path, e.g. config/rig.toml (a file named - is ./-)\n")
    (tmp_path / "-").write_text("[solver]\nbudget_ms = 50\n")
    r = _cli("config", "check", "./-", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("-: ok\n"), r.stdout + r.stderr


def test_a_profile_file_is_found_beside_the_setup_file_and_a_name_stays_a_name(tmp_path):
    base = (ROOT / "config" / "rig.toml").read_text()
    (tmp_path / "sub").mkdir()
    for value, expected in (("profiles/home.json", str(tmp_path / "sub" / "profiles" / "home.json")),
                            ("/abs/home.json", "/abs/home.json"), ("home", "home")):
        f = tmp_path / "sub" / "rig.toml"
        f.write_text(base.replace("[vision]", f'[vision]\nprofile = "{value}"', 1) if "[vision]" in base
                     else base + f'\n[vision]\nprofile = "{value}"\n')
        assert load_config(f).profile == expected


# ---------------------------------------------------------------- bounds (issue #13)


def _with(key_line: str, value: str) -> str:
    """The default file with the first line starting with ``key_line`` set to ``value``."""
    lines = (ROOT / "config" / "rig.toml").read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith(key_line))
    lines[i] = f"{key_line} = {value}"
    return "\n".join(lines)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "[[nan, 100.0], [1, 1], [1, 1], [1, 1]]",
                                   "[[1e400, 100.0], [1, 1], [1, 1], [1, 1]]",
                                   "[[-1, 100.0], [1, 1], [1, 1], [1, 1]]",
                                   "[[640.0, 721.0], [1, 1], [1, 1], [1, 1]]"])
def test_every_number_is_finite_and_in_range_corners_included(value):
    if value.startswith("["):
        msg = _err(_with("corners", value))
        assert "view[0].face[0].corners[0]" in msg and "1280x720" in msg
    else:
        for key in ("max_speed", "boot_wait_s", "min_confidence", "gear_ratio"):
            msg = _err(_with(key, value))
            assert key in msg and ("finite" in msg or "between" in msg), msg


def test_deep_nesting_long_lines_and_huge_numbers_are_refused_with_the_line():
    deep = "arrays or tables nested more than 16 deep"
    assert f"my.toml:2: {deep}" in _err("x = 1\na = " + "[" * 400 + "]" * 400)
    assert f"my.toml:17: {deep}" in _err("a = [\n" * 20 + "]\n" * 20)  # nesting that spans lines
    assert "my.toml:3: a line of" in _err("\n\n" + "a" + ".a" * 1000 + " = 1")
    assert "my.toml:2: a number of more than 100 digits" in _err("[rig]\nbaud = " + "1" * 150)
    # brackets, digits and quotes inside strings and comments are text, not structure
    text = '[rig]\nport = "[[[[[[[[[[[[[[[[[[[[ \\" ' + "1" * 200 + '"\n# ' + "{" * 50 + "\n"
    assert parse_config(text).rig.port.startswith("[[[[")
    assert parse_config('[rig]\nport = """\n' + "[" * 30 + '\\\n"""\n').rig.port == "[" * 30


def test_strings_and_arrays_are_bounded():
    assert "at most 4096" in _err(_with("port", '"""' + ("a" * 900 + "\\\n") * 5 + '"""'))
    assert "printable" in _err(_with("port", '"a\\u0000b"'))
    assert "at most 100" in _err(_with("name", '"' + "n" * 101 + '"'))
    assert "at most 16" in _err("[[camera]]\nname = 'c'\nsource = 0\n" * 0 + "".join(
        f"[[camera]]\nname = 'c{i}'\nsource = {i}\n" for i in range(17)))
    assert "between 0 and 255" in _err("[[camera]]\nname = 'c'\nsource = -1\n")


def test_the_file_itself_is_bounded_before_it_is_parsed(tmp_path):
    import os
    import time

    big = tmp_path / "big.toml"
    big.write_bytes(b"# " + b"x" * (50 << 20))
    t = time.monotonic()
    with pytest.raises(UserError, match="too big for a TOML set-up file"):
        load_config(big)
    assert time.monotonic() - t < 1
    for path, what in (("/dev/zero", "is a device"), (str(tmp_path), "is a directory"),
                       (str(big / "x"), "Not a directory")):
        with pytest.raises(UserError, match=what):
            load_config(path)
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"[rig]\n\nport = '\xff'\n")
    with pytest.raises(UserError, match=r"bad.toml:3: not UTF-8 text"):
        load_config(bad)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # no writer: read as empty (the defaults), not waited on
    assert load_config(fifo).rig.port == "sim://"
