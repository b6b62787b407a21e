"""One calibration story (issue 48): `cuberobot calibrate` and the panel's
Calibrate card name the profile the same way, refuse alike to overwrite one
the set-up does not use, and both put the new profile in use through the
set-up's settings file, saying which file they wrote; `config check` and
`doctor` then name that override with how to undo it. The terminal runs in
this process (tests/incli.py), the panel as a real server (tests/webserver.py),
both in the same user folders."""

from pathlib import Path

import pytest
from incli import cuberobot
from webserver import Client, panel_server

from robot.rig.loading import effective_config, load_config
from robot.rig.settings import settings_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """The user's data and config folders of this test alone, for the
    terminal's commands and the panel alike."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    shipped = (ROOT / "config" / "rig.toml").read_text()  # simulated cameras
    setups = []
    for name in ("bench", "other"):
        path = tmp_path / f"{name}.toml"
        path.write_text(shipped)
        setups.append(path)
    return tmp_path, setups


def _panel_calibrates(state: Path, setup: Path, body: dict) -> tuple[int, dict]:
    with panel_server(state, cfg=load_config(setup)) as (base, panel, _):
        panel.options.settings_dir = None  # the user's config folder, which the terminal's commands read
        status, answer, _ = Client(base).post("/api/calibrate", body)
        return status, answer


def test_terminal_and_panel_name_keep_and_put_in_use_a_profile_alike(folders):
    tmp_path, (bench, other) = folders
    profile = tmp_path / "data" / "cuberobot" / "profiles" / "default.json"
    r = cuberobot("calibrate", "--config", bench, "--seed", "1")
    assert r.returncode == 0, r.stderr
    saved = settings_path(bench)
    assert saved.read_text().count('profile = "default"') == 1  # put in use, as the panel does
    assert (f"profile 'default' saved to {profile}; put in use for {bench} in {saved} (an override of its "
            "[vision] profile") in r.stdout, r.stdout
    assert load_config(bench).profile == "default"

    # the panel on the same set-up: the same default name, the one in use, renewed and said so
    status, body = _panel_calibrates(tmp_path / "state1", bench, {})
    assert status == 200, body
    assert body["profile"] == "default" and body["path"] == str(profile) and body["settings"] is None
    assert body["message"].startswith(f"profile 'default' saved to {profile} (replacing the one of that "
                                      "name made ") and f"{bench} already uses it" in body["message"]

    # another set-up: neither face overwrites the profile the first one uses, and both say it alike
    status, body = _panel_calibrates(tmp_path / "state2", other, {})
    assert status == 409 and body["error"]["kind"] == "exists", body
    refusal = body["error"]["message"]
    assert f"a colour profile 'default' is already saved ({profile}, made " in refusal
    assert "this set-up does not use it (it uses none): give another name" in refusal
    r = cuberobot("calibrate", "--config", other, "--seed", "1")
    assert r.returncode == 2 and r.stdout == "" and r.stderr.strip().endswith(refusal), r.stderr
    assert len(r.stderr.splitlines()) == 1 and not settings_path(other).exists()

    # asked to replace it: done, and the other set-up's override file named
    status, body = _panel_calibrates(tmp_path / "state3", other, {"replace": True})
    assert status == 200, body
    assert body["settings"] == str(settings_path(other)) and str(settings_path(other)) in body["message"]
    status, body = _panel_calibrates(tmp_path / "state4", other, {"replace": "yes"})
    assert status == 400 and "'replace' must be true or false" in body["error"]["message"]
    r = cuberobot("calibrate", "--config", bench, "--profile", "second", "--seed", "2")
    assert r.returncode == 0 and load_config(bench).profile == "second", r.stderr


def test_config_check_and_doctor_name_the_override_and_how_to_undo_it(folders):
    tmp_path, (bench, _) = folders
    r = cuberobot("config", "check", bench)
    assert r.returncode == 0 and "  overrides: none (no settings file saved for this set-up" in r.stdout
    r = cuberobot("doctor", "--config", bench, "--no-handshake", "--root", tmp_path / "empty")
    assert "config  overrides: none (no settings file saved for" in r.stdout, r.stdout
    assert cuberobot("calibrate", "--config", bench, "--seed", "1").returncode == 0
    saved = settings_path(bench)
    named = (f"{saved} overrides [vision] profile = 'default' (the set-up file says none), saved by the "
             f"panel or `cuberobot calibrate`; delete it to undo (rm {saved})")
    r = cuberobot("config", "check", bench)
    assert r.returncode == 0 and f"  override: {named}\n" in r.stdout, r.stdout
    r = cuberobot("doctor", "--config", bench, "--no-handshake", "--root", tmp_path / "empty")
    assert f"config  override: {named}\n" in r.stdout, r.stdout
    r = cuberobot("doctor", "--config", bench, "--no-handshake", "--root", tmp_path / "empty", "--json")
    import json

    found = [f for f in json.loads(r.stdout)["findings"] if f["subject"] == "override"]
    assert found[0]["data"] == {"path": str(saved), "profile": "default", "views": []}
    saved.unlink()  # the undo it names
    assert "  overrides: none" in cuberobot("config", "check", bench).stdout


def test_the_effective_configuration_says_where_each_value_comes_from(folders):
    tmp_path, (bench, _) = folders
    bench.write_text(bench.read_text().replace("budget_ms = 100", "budget_ms = 250", 1))
    assert "budget_ms = 250" in bench.read_text()
    assert cuberobot("calibrate", "--config", bench, "--seed", "1").returncode == 0
    eff = effective_config(bench)
    got = {s.key: (s.value, s.source) for s in eff.settings}
    assert got["solver.budget_ms"] == (250, "set-up file")
    assert got["vision.profile"] == ("default", "override")
    assert got["solver.method"] == ("two-phase", "default")
    assert got["view.upper"][1] == "set-up file"
    assert eff.override is not None and eff.override.path == settings_path(bench)


def test_the_config_endpoint_needs_the_token_and_names_the_override(folders):
    tmp_path, (bench, _) = folders
    assert cuberobot("calibrate", "--config", bench, "--seed", "1").returncode == 0
    token = "s3cret-token-for-tests"
    with panel_server(tmp_path / "state", cfg=load_config(bench), token=token) as (base, panel, _):
        panel.options.settings_dir = None  # the user's config folder, where the terminal saved the profile
        c = Client(base)
        status, body, _ = c.get("/api/config")
        assert status == 401 and body["error"]["kind"] == "token", body
        status, body, _ = c.get("/api/config", headers={"Authorization": f"Bearer {token}"})
        assert status == 200, body
    saved = settings_path(bench)
    assert body["setup"] == str(bench)
    assert body["override"]["path"] == str(saved) and body["override"]["profile"] == "default"
    assert f"rm {saved}" in body["override"]["message"]
    got = {s["key"]: (s["value"], s["source"]) for s in body["settings"]}
    assert got["vision.profile"] == ("default", "override")
    assert got["solver.budget_ms"] == (100, "set-up file")
    assert got["solver.method"] == ("two-phase", "default")
    assert {s["source"] for s in body["settings"]} == {"set-up file", "override", "default"}
