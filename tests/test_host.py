"""Host status (robot/app/host.py, GET /api/host): the load, the CPU's
temperature where the board has a sensor, the free disk of the state folder.
The temperature is read from a folder laid out as Linux's /sys/class/thermal
is (a Raspberry Pi's one zone, a laptop's several, broken sensors, none),
and the endpoint is asked on a real server, token and all."""

import os
import shutil

from webserver import Client, panel_server

from robot.app.host import cpu_temperature, host_status


def zone(root, n, kind, temp):
    z = root / f"thermal_zone{n}"
    z.mkdir(parents=True)
    (z / "type").write_text(kind + "\n")
    (z / "temp").write_text(f"{temp}\n")


def test_a_pi_s_one_zone_is_read_in_degrees(tmp_path):
    zone(tmp_path, 0, "cpu-thermal", 48_312)
    assert cpu_temperature(tmp_path) == (48.3, "cpu-thermal")


def test_the_processor_s_zone_wins_over_the_others_and_broken_ones_are_skipped(tmp_path):
    zone(tmp_path, 0, "acpitz", 27_800)
    zone(tmp_path, 1, "iwlwifi_1", -273_000)  # a sensor that is not there
    zone(tmp_path, 2, "x86_pkg_temp", 61_000)
    zone(tmp_path, 3, "pch_skylake", "not a number")
    assert cpu_temperature(tmp_path) == (61.0, "x86_pkg_temp")


def test_no_processor_zone_takes_the_first_that_answers(tmp_path):
    zone(tmp_path, 0, "acpitz", 999_999)  # out of any real range
    zone(tmp_path, 1, "acpitz", 35_000)
    assert cpu_temperature(tmp_path) == (35.0, "acpitz")


def test_no_sensor_is_said_so(tmp_path):
    temperature, why = cpu_temperature(tmp_path / "absent")
    assert temperature is None and why.startswith("no sensor")
    (tmp_path / "thermal").mkdir()
    (tmp_path / "thermal" / "cooling_device0").mkdir()
    temperature, why = cpu_temperature(tmp_path / "thermal")
    assert temperature is None and why == "no sensor (no thermal zone answers)"


def test_host_status_reads_the_load_and_the_disk_of_a_state_folder_not_yet_made(tmp_path):
    zone(tmp_path / "sys", 0, "cpu-thermal", 50_000)
    state = tmp_path / "not" / "yet"
    h = host_status(state, tmp_path / "sys")
    assert len(h["load"]) == 3 and all(x >= 0 for x in h["load"]) and h["cpus"] == os.cpu_count()
    assert h["temperature_c"] == 50.0 and h["temperature_source"] == "cpu-thermal"
    usage = shutil.disk_usage(tmp_path)
    assert h["disk"]["path"] == str(state) and h["disk"]["total_bytes"] == usage.total
    assert abs(h["disk"]["free_bytes"] - usage.free) < 64 << 20
    assert 0 <= h["disk"]["free_percent"] <= 100


def test_the_endpoint_needs_the_token_and_answers_the_state_folder_s_disk(tmp_path):
    with panel_server(tmp_path, token="s3cret-token") as (base, _panel, _):
        client = Client(base)
        status, body, _ = client.get("/api/host")
        assert status == 401 and body["error"]["kind"] == "token"
        status, body, r = client.get("/api/host", headers={"Authorization": "Bearer s3cret-token"})
        assert status == 200 and r.getheader("cache-control") == "no-store"
        assert body["disk"]["path"] == str(tmp_path)
        assert set(body) == {"load", "cpus", "temperature_c", "temperature_source", "disk"}
        assert body["temperature_c"] is None or -40 <= body["temperature_c"] <= 150
        assert client.post("/api/host", headers={"Authorization": "Bearer s3cret-token"})[0] == 405
