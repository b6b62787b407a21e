"""The rig's serial port chosen and connected from the panel (issue 48, item
10): GET /api/ports lists the ports `cuberobot doctor` finds, POST /api/port
moves the standing rig onto one. The machine is a folder laid out as / is
(sysfs and /dev, as tests/test_doctor.py builds it) whose ttyACM0 node is a
link to a real sim-rig's pty: the panel opens it and the rig answers."""

import os
import time
from pathlib import Path

import pytest
from webserver import Client, panel_server, rig_for_url

from robot.sim.pty_rig import SimRigProcess

ROOT = Path(__file__).resolve().parents[1]
UNO = "/dev/serial/by-id/usb-Arduino__www.arduino.cc__0043_7583-if00"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def machine(root: Path, rig_pty: str) -> Path:
    """An Uno on ttyACM0 (its node a link to ``rig_pty``, its by-id link to the node) and a CH340 on
    ttyUSB0 with nothing behind it."""
    for n, (node, vendor, product, maker, name) in enumerate(
            [("ttyACM0", "2341", "0043", "Arduino (www.arduino.cc)", ""),
             ("ttyUSB0", "1a86", "7523", "", "USB Serial")]):
        usb = root / "sys/devices/pci0000:00/usb1" / f"1-{n + 1}"
        for key, value in (("idVendor", vendor), ("idProduct", product), ("manufacturer", maker),
                           ("product", name)):
            _write(usb / key, value)
        tty = usb / f"1-{n + 1}:1.0" / "tty" / node
        tty.mkdir(parents=True)
        (tty / "device").symlink_to("../..")
        (root / "sys/class/tty").mkdir(parents=True, exist_ok=True)
        (root / "sys/class/tty" / node).symlink_to(os.path.relpath(tty, root / "sys/class/tty"))
    (root / "dev").mkdir(exist_ok=True)
    (root / "dev/ttyACM0").symlink_to(rig_pty)
    (root / "dev/ttyUSB0").symlink_to(root / "nothing-plugged-in")
    return root


def test_the_ports_doctor_lists_and_the_rig_moved_onto_one(tmp_path):
    with SimRigProcess("--speed", "max") as sim, \
            panel_server(tmp_path / "state", speed="max") as (base, panel, rig_url):
        panel.options.ports_root = str(machine(tmp_path / "root", sim.port))
        client = Client(base)
        status, body, _ = client.get("/api/ports")
        assert status == 200, body
        assert [p["node"] for p in body["ports"]] == ["/dev/ttyACM0", "/dev/ttyUSB0"]
        assert "looks like an Arduino Uno" in body["ports"][0]["describe"]
        assert body["current"] == rig_url and body["choosable"] is True  # the virtual rig, for now

        # refused while a run goes on, in one line
        rig = rig_for_url(rig_url)
        rig.hold_after(1)
        assert client.post("/api/start")[0] == 202
        try:
            client.wait_state("turning")
            status, body, _ = client.post("/api/port", {"port": "/dev/ttyACM0"})
            assert status == 409 and body["error"]["kind"] == "busy", body
            assert "\n" not in body["error"]["message"]
        finally:
            rig.release()
        client.wait_state("done", "failed", "stopped")

        # a port not listed: a one-line 400 naming the ones there are
        status, body, _ = client.post("/api/port", {"port": "/dev/sda"})
        assert status == 400 and "'/dev/sda' is not a serial port" in body["error"]["message"], body
        assert "/dev/ttyACM0" in body["error"]["message"]
        assert client.post("/api/port", {"port": 3})[0] == 400
        assert client.post("/api/port", {"prot": "/dev/ttyACM0"})[0] == 400

        # the Uno: connected, and the rig answers on it (its STATUS, through the panel)
        status, body, _ = client.post("/api/port", {"port": "/dev/ttyACM0"})
        assert status == 200 and body["connected"] is True, body
        assert body["rig"]["port"] == str(tmp_path / "root/dev/ttyACM0")
        assert f"Kept for the next start in {tmp_path / 'state/settings/setups'}" in body["message"]
        status, snap, _ = client.get("/api/status")
        assert snap["rig"]["connected"] and snap["rig"]["port"] == body["rig"]["port"]

        # its emergency stop latches on that line; choosing a port is then refused until it is cleared
        assert client.post("/api/estop")[1]["sent"] is True
        for _ in range(200):
            if client.get("/api/status")[1]["rig"]["estop_latched"]:
                break
            panel.rig.standing._closed.wait(0.05)
        status, body, _ = client.post("/api/port", {"port": "/dev/ttyUSB0"})
        assert status == 409 and body["error"]["kind"] == "estop-latched", body
        assert client.post("/api/estop/clear")[0] == 200

        # nothing behind ttyUSB0: chosen, not connected, and the answer says why in one line
        status, body, _ = client.post("/api/port", {"port": "/dev/ttyUSB0"})
        assert status == 200 and body["connected"] is False, body
        assert "not connected" in body["message"] and "\n" not in body["message"]



def on_a_phone(browser, has_browser: bool) -> None:
    """The browser at a phone's size (390x844), or the test skipped without one."""
    if not has_browser:
        pytest.skip("needs Debian's chromium and chromium-driver (./run-tests installs them)")
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})


def test_the_port_card_on_a_phone_connects_the_rig_and_is_off_while_the_stop_is_latched(browser, tmp_path):
    from chromium import HAS_BROWSER
    from selenium.webdriver.support.ui import Select, WebDriverWait

    on_a_phone(browser, HAS_BROWSER)
    with SimRigProcess("--speed", "max") as sim, \
            panel_server(tmp_path / "state", speed="max") as (base, panel, _):
        panel.options.ports_root = str(machine(tmp_path / "root", sim.port))
        browser.get(base)
        until = WebDriverWait(browser, 60, poll_frequency=0.05).until
        until(lambda d: d.find_element("id", "state").text == "idle")
        browser.execute_script("document.querySelector(\"#tool-tabs button[data-tab='port-area']\").click()")
        until(lambda d: len(d.find_elements("css selector", "#port-select option")) == 2)
        options = [o.text for o in browser.find_elements("css selector", "#port-select option")]
        assert options[0].startswith("/dev/ttyACM0 (looks like an Arduino Uno"), options
        Select(browser.find_element("id", "port-select")).select_by_value("/dev/ttyACM0")
        browser.execute_script("document.getElementById('port-connect').click()")
        until(lambda d: "connected" in d.find_element("id", "port-message").text)
        message = browser.find_element("id", "port-message")
        assert ": connected." in message.text and "error" not in message.get_attribute("class"), message.text
        path = str(tmp_path / "root/dev/ttyACM0")
        until(lambda d: path in d.find_element("id", "rig-line").text)  # the rig line says where it is now
        box = browser.find_element("id", "port-area").rect
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        # the stop latched on that line: the card's Connect is off and says why
        browser.execute_script("document.getElementById('estop').click()")
        until(lambda d: d.find_element("tag name", "body").get_attribute("data-latched") == "yes")
        until(lambda d: not d.find_element("id", "port-connect").is_enabled()
              and d.find_element("id", "port-latched").is_displayed())
        errors = [e for e in browser.get_log("browser")
                  if e["level"] == "SEVERE" and e["source"] == "javascript"]
        assert not errors, errors


def test_a_flipper_is_reached_on_the_chosen_port_at_its_next_stop(tmp_path):
    """A rig that keeps no line between runs takes the port at its next run, jog or stop: here the
    emergency stop, which latches the sim-rig behind the chosen port."""
    from robot.rig.loading import load_config

    path = ROOT / "config" / "examples" / "flipper.toml"
    with SimRigProcess("--config", str(path), "--speed", "max") as sim, \
            panel_server(tmp_path / "state", cfg=load_config(path), speed="max") as (base, panel, _):
        panel.options.ports_root = str(machine(tmp_path / "root", sim.port))
        client = Client(base)
        status, body, _ = client.post("/api/port", {"port": "/dev/ttyACM0"})
        assert status == 200 and body["connected"] is False, body
        assert "reached at its next run, jog or stop" in body["message"]
        chosen = str(tmp_path / "root/dev/ttyACM0")
        assert body["rig"]["port"] == chosen
        status, body, _ = client.post("/api/estop")
        assert status == 200 and body["sent"] is True, body
        rig = client.get("/api/status")[1]["rig"]
        assert rig["port"] == chosen and rig["connected"] and rig["estop_latched"], rig
        status, body, _ = client.post("/api/port", {"port": "/dev/ttyUSB0"})
        assert status == 409 and body["error"]["kind"] == "estop-latched", body
        assert client.post("/api/estop/clear")[0] == 200
        assert client.get("/api/status")[1]["rig"]["estop_latched"] is False


def test_the_chosen_port_is_kept_for_the_next_start_and_named_as_an_override(tmp_path):
    """The port chosen on the page outlives the panel: kept beside the panel's other settings for the
    set-up file (the file itself untouched), in use at the next start, and named where the overrides are
    named (GET /api/ports, the Config card, `config check`)."""
    from incli import cuberobot
    from webserver import sim_url

    from robot.rig.loading import load_config
    from robot.rig.settings import settings_path

    own = sim_url(f"own-port-{tmp_path.name}")
    setup = tmp_path / "rig.toml"
    setup.write_text((ROOT / "config" / "rig.toml").read_text().replace('port = "sim://"', f'port = "{own}"'))
    before = setup.read_bytes()
    kept = settings_path(setup)
    with SimRigProcess("--speed", "max") as sim:
        root = machine(tmp_path / "root", sim.port)
        chosen = str(root / "dev/ttyACM0")
        with panel_server(tmp_path / "state", cfg=load_config(setup), as_served=True) as (base, panel, _):
            panel.options.ports_root = str(root)
            client = Client(base)
            status, body, _ = client.get("/api/ports")
            assert status == 200 and body["current"] == own and body["saved"] is None, body
            status, body, _ = client.post("/api/port", {"port": "/dev/ttyACM0"})
            assert status == 200 and body["connected"] is True, body
            assert body["kept_in"] == str(kept) and f"Kept for the next start in {kept}" in body["message"]
        assert setup.read_bytes() == before  # the maker's file is not rewritten
        assert f'port = "{chosen}"' in kept.read_text()

        # the next start: on the kept port from the first, with where it is kept said
        with panel_server(tmp_path / "state", cfg=load_config(setup), as_served=True) as (base, panel, _):
            panel.options.ports_root = str(root)
            client = Client(base)
            rig = client.get("/api/status")[1]["rig"]
            deadline = time.monotonic() + 20  # the panel connects its kept line as it starts
            while not rig["connected"] and time.monotonic() < deadline:
                time.sleep(0.05)
                rig = client.get("/api/status")[1]["rig"]
            assert rig["port"] == chosen and rig["connected"], rig
            status, body, _ = client.get("/api/ports")
            assert status == 200, body
            assert (body["current"], body["saved"], body["kept_in"], body["configured"]) == \
                (chosen, chosen, str(kept), own), body
            status, body, _ = client.get("/api/config")
            assert status == 200 and chosen in body["override"]["message"], body
            assert [(s["value"], s["source"]) for s in body["settings"] if s["key"] == "rig.port"] == \
                [(chosen, "override")]

    # `config check` says the saved port overrides the file's, and where it is kept
    r = cuberobot("config", "check", str(setup))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("  override:"))
    assert f"[rig] port = {chosen!r} (the set-up file says {own!r}" in line and str(kept) in line, line

    # a kept port that is no serial port: every command refuses it in one line naming the file and the key
    kept.write_text(kept.read_text().replace(f'port = "{chosen}"', 'port = "gpio://"'))
    r = cuberobot("config", "check", str(setup))
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"{kept}: port: expected the serial port chosen on the panel" in r.stderr


WIDEST = """const wide = [];
for (const e of document.querySelectorAll('body *')) {
  const r = e.getBoundingClientRect();
  if (r.width && r.height && r.right > innerWidth + 0.5) wide.push(`${e.tagName}#${e.id}: ${r.right}`);
}
return [document.documentElement.scrollWidth, innerWidth, wide];"""


def test_a_long_error_on_a_phone_wraps_and_folds_to_its_first_sentence(browser, tmp_path):
    """Issue 48: messages written for a terminal overflowed a 390x844 phone. A long error with long
    paths in it (a port with nothing behind it, and where the choice is kept) wraps inside the phone's
    width, shows its first sentence, and the rest on a tap; no element is wider than the phone, folded
    or unfolded, and the message is the element's whole text either way."""
    from chromium import HAS_BROWSER, wait

    on_a_phone(browser, HAS_BROWSER)
    with SimRigProcess("--speed", "max") as sim, \
            panel_server(tmp_path / "state", speed="max") as (base, panel, _):
        panel.options.ports_root = str(machine(tmp_path / "root", sim.port))
        browser.get(base)
        wait(browser, lambda d: d.find_element("id", "state").text == "idle")
        browser.execute_script("document.querySelector(\"#tool-tabs button[data-tab='port-area']\").click()")
        wait(browser, lambda d: len(d.find_elements("css selector", "#port-select option")) == 2)
        browser.execute_script("const s = document.getElementById('port-select'); s.value = '/dev/ttyUSB0';"
                               "document.getElementById('port-connect').click()")
        message = browser.find_element("id", "port-message")
        wait(browser, lambda d: "not connected" in message.text and message.find_elements("css selector",
                                                                                           "button.more"))
        whole = message.get_attribute("textContent")
        assert len(whole) > 200 and str(tmp_path) in whole and "Kept for the next start" in whole, whole
        shown = message.text
        first = whole[:whole.index("seconds.") + len("seconds.")]
        assert shown.startswith(first) and "Kept for the next start" not in shown, shown
        assert "error" in message.get_attribute("class")
        scroll, width, wide = browser.execute_script(WIDEST)
        assert width == 390 and scroll <= width and not wide, (scroll, wide)
        more = message.find_element("css selector", "button.more")
        more.click()
        wait(browser, lambda d: "Kept for the next start" in message.text)
        assert more.get_attribute("aria-expanded") == "true"
        assert message.get_attribute("textContent") == whole
        scroll, width, wide = browser.execute_script(WIDEST)
        assert scroll <= width and not wide, (scroll, wide)
        # a short message replaces it whole, unfolded
        browser.execute_script("document.querySelector(\"#tool-tabs button[data-tab='port-area']\").click();"
                               "document.querySelector(\"#tool-tabs button[data-tab='port-area']\").click()")
        browser.execute_script("document.getElementById('port-list').click()")
        wait(browser, lambda d: not message.get_attribute("textContent"))
        assert not browser.find_elements("css selector", "#port-message button.more")
        errors = [e for e in browser.get_log("browser")
                  if e["level"] == "SEVERE" and e["source"] == "javascript"]
        assert not errors, errors


def test_the_port_card_names_the_kept_port_and_where_it_is_kept(browser, tmp_path):
    """At the next start the Port card says which port is in use, that it was chosen on the page, and
    the file it is kept in, beside the set-up file's own port (the file kept as a panel before left it)."""
    from chromium import HAS_BROWSER, wait
    from webserver import sim_url

    from robot.rig.loading import load_config
    from robot.rig.settings import save_settings

    on_a_phone(browser, HAS_BROWSER)
    own = sim_url(f"own-port-{tmp_path.name}")
    setup = tmp_path / "rig.toml"
    setup.write_text((ROOT / "config" / "rig.toml").read_text().replace('port = "sim://"', f'port = "{own}"'))
    with SimRigProcess("--speed", "max") as sim:
        root = machine(tmp_path / "root", sim.port)
        chosen = str(root / "dev/ttyACM0")
        kept = save_settings(load_config(setup), port=chosen)
        with panel_server(tmp_path / "state", cfg=load_config(setup), as_served=True) as (base, panel, _):
            panel.options.ports_root = str(root)
            browser.get(base)
            wait(browser, lambda d: d.find_element("id", "state").text == "idle")
            browser.execute_script("document.querySelector(\"#tool-tabs [data-tab='port-area']\").click()")
            line = wait(browser, lambda d: d.find_element("id", "port-kept").text)
            assert line.startswith(f"{chosen} was chosen on this page and is kept in {kept}"), line
            current = browser.find_element("id", "port-current").text
            assert current == f"in use: {chosen} · the set-up file says {own}", current
            box = browser.find_element("id", "port-area").rect
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390
