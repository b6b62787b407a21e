"""The web panel in headless Chromium with a flipper and a two-gripper rig:
Start on the page runs the mechanism loop, and the 3-D cube the page draws
is held the way the run's events say the rig holds it (checked off the
drawing itself: which face's centre is drawn at the top, at the bottom)."""

import time
from pathlib import Path

import pytest
from chromium import HAS_BROWSER, shot
from webserver import panel_server

from robot.rig.loading import load_config

ROOT = Path(__file__).resolve().parents[1]

if not HAS_BROWSER:
    pytest.skip("needs Debian's chromium and chromium-driver (./run-tests installs them)",
                allow_module_level=True)

from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

LISTEN_JS = """
window.__events = [];
window.__listening = false;
const es = new EventSource('/api/events');
es.onopen = () => { window.__listening = true; };
es.onmessage = (m) => window.__events.push(JSON.parse(m.data));
"""


def listen(browser) -> None:
    """The test's own event stream, open (the page says so) before anything starts."""
    browser.execute_script(LISTEN_JS)
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return window.__listening"))


def drawn_at_rest(browser, js: str | None = None) -> dict:
    """What the page draws once it has shown the last event and drawn its last move: waited
    for on the page (the held orientation and the centres drawn as the events say), not for
    an animation's length of time; a page that never gets there fails with what it drew."""
    last: dict = {}

    def at_rest(d) -> bool:
        last.update(d.execute_script(js or DRAWN_JS))
        return bool(not last["rotating"] and last["caught_up"] and last["held"] == last["reported"]
                    and (last["top"], last["bottom"]) == (last["reported"][0], last["reported"][3]))

    try:
        WebDriverWait(browser, 30).until(at_rest)
    except TimeoutException:
        raise AssertionError(f"the page's cube did not come to rest as the events say: {last}") from None
    return last

# What the page draws now: the orientation read back off the cube's rotation, whether a whole-cube
# turn is being drawn, the last orientation the events reported, and which face's centre sticker is
# drawn highest and lowest on the screen (the view looks down on the rig's U slot).
DRAWN_JS = """
const root = document.getElementById('cube3d');
const shown = Number(document.body.dataset.seq || 0);  // the last event the page itself has shown
const heard = window.__events.filter((e) => e.seq <= shown);
const withHeld = heard.filter((e) => e.orientation !== undefined);
const centres = [...root.querySelectorAll('.sticker3d')].filter((el) => el.dataset.index % 9 === 4)
  .map((el) => { const r = el.getBoundingClientRect(); return [el.dataset.face, r.top + r.height / 2]; })
  .sort((a, b) => a[1] - b[1]);
return {held: root.dataset.held, rotating: root.dataset.rotating || '',
        reported: withHeld.length ? withHeld[withHeld.length - 1].orientation : '',
        caught_up: heard.length > 0 && heard[heard.length - 1].seq === shown,
        top: centres[0][0], bottom: centres[5][0], state: document.getElementById('state').dataset.state,
        line: document.getElementById('held').textContent, facelets: root.dataset.facelets,
        finished: window.__events.filter((e) => e.kind === 'finished').map((e) => e.status)};
"""


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_the_page_draws_the_cube_as_the_rig_holds_it(browser, tmp_path, kind):
    cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
    with panel_server(tmp_path, cfg=cfg, speed="1.5") as (base, panel, _):
        browser.get(base)
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "state").text == "idle")
        listen(browser)
        browser.find_element(By.ID, "start").click()
        checked, whole_turns, deadline, starts, scan_turns = set(), set(), time.monotonic() + 180, 1, 0
        pictured = False
        while time.monotonic() < deadline:
            d = browser.execute_script(DRAWN_JS)
            if d["rotating"]:
                whole_turns.add(d["rotating"])
                if d["state"] == "turning" and not pictured and len(whole_turns) > 2:
                    shot(browser, f"web-panel-{kind}.png")
                    pictured = True
                scan_turns += d["state"] == "scanning"  # the scan's flips and spins are drawn too
            elif d["reported"] and d["caught_up"]:
                # no whole-cube turn being drawn: held as the last event the page has shown says
                # (a layer turn being drawn leaves the centres where they are)
                assert d["held"] == d["reported"], d
                assert (d["top"], d["bottom"]) == (d["reported"][0], d["reported"][3]), d
                checked.add(d["reported"])
            if d["finished"] == ["scan-doubtful"] and starts < 3:
                # the page's Start scrambles at random and lights at random: a scan the glare leaves in
                # doubt ends the run before any layer turns (headless: nobody is asked), as it should
                browser.execute_script("window.__events = []")
                WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "start").is_enabled())
                browser.find_element(By.ID, "start").click()
                starts += 1
            elif d["finished"]:
                break
            time.sleep(0.02)
        assert d["finished"] == ["solved"], d
        assert len(checked) >= 3 and whole_turns and scan_turns, (checked, whole_turns, scan_turns)
        assert browser.find_element(By.ID, "state").text == "solved"
        d = drawn_at_rest(browser)
        assert d["facelets"] == "".join(f * 9 for f in "URFDLB")
        assert d["line"].startswith("robot move: ") and "up," in d["line"], d
        assert "robot move" in browser.find_element(By.ID, "turn-line").text
        # the run's time, from the server's clock, on these kinds too (it was left empty)
        elapsed = panel.snapshot()["elapsed_s"]
        shown = browser.find_element(By.ID, "times")
        assert shown.text.startswith("elapsed ")
        assert abs(float(shown.get_attribute("data-elapsed")) - elapsed) < 0.05, (shown.text, elapsed)
        errors = [e for e in browser.get_log("browser")
                  if e["level"] == "SEVERE" and e["source"] == "javascript"]
        assert not errors, errors


def test_a_dry_run_on_a_flipper_from_the_page(browser, tmp_path):
    from solver import Cube

    cfg = load_config(ROOT / "config" / "examples" / "flipper.toml")
    with panel_server(tmp_path, cfg=cfg) as (base, panel, _):
        browser.get(base)
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "state").text == "idle")
        listen(browser)
        browser.execute_script("document.getElementById('dry-area').scrollIntoView()")
        moves = "R U F'"
        browser.find_element(By.ID, "dry-moves").send_keys(moves)
        browser.execute_script("document.getElementById('dry-speed').value = '4'")
        browser.find_element(By.ID, "dry-run").click()
        WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "dry-state").text == "done")
        # in its own card: its cube, held as the dry run's rig holds it, and its robot moves
        d = drawn_at_rest(browser, DRY_DRAWN_JS)
        assert d["reported"] != "URFDLB", d
        assert d["facelets"] == Cube().apply(moves).to_facelets()
        assert "holds" in d["line"], d
        steps = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#dry-steps li")]
        assert len(steps) > 3 and "turn +1 (R)" in steps and any(s.startswith("flip") for s in steps)
        # the run's cards are the rig's: the dry run left them alone, and the rig is idle
        assert not browser.find_elements(By.CSS_SELECTOR, "#steps li")
        assert browser.find_element(By.ID, "state").text == "idle"
        assert "elapsed" in browser.find_element(By.ID, "dry-times").text
        WebDriverWait(browser, 20).until(lambda d: d.execute_script(
            "const i = document.getElementById('dry-timeline'); return i.complete && i.naturalWidth > 0"))
        errors = [e for e in browser.get_log("browser")
                  if e["level"] == "SEVERE" and e["source"] == "javascript"]
        assert not errors, errors


def test_a_jog_after_a_run_turns_and_tips_the_pages_cube_as_the_rig(browser, tmp_path):
    """The rig's cube is moved by hand after a run: the page's 3-D cube and
    the line under it follow, as the virtual rig's own stickers do; once
    servo angles are set by hand the line says the hold is not known, and
    a page opened afresh says so too."""
    from mechanism_kinds import as_held
    from webserver import Client, rig_for_url

    cfg = load_config(ROOT / "config" / "examples" / "flipper.toml")
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, panel, rig_url):
        browser.get(base)
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "state").text == "idle")
        listen(browser)
        client = Client(base)
        assert client.post("/api/start", {"seed": 6})[0] == 202
        assert client.wait_state("done", "failed", "stopped")["result"] == "solved"
        browser.execute_script("document.getElementById('jog-area').scrollIntoView()")
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "jog-moves-row").is_displayed())
        browser.find_element(By.ID, "jog-moves").send_keys("flip, close cover, turn +1, open cover, spin -1")
        browser.find_element(By.ID, "jog-moves-go").click()
        WebDriverWait(browser, 60).until(
            lambda d: d.find_element(By.ID, "jog-message").text.startswith("made 5 robot move(s)"))
        status = client.get("/api/status")[1]
        held = status["orientation"]
        WebDriverWait(browser, 10).until(lambda d: d.execute_script(DRAWN_JS)["held"] == held)
        d = drawn_at_rest(browser)
        assert d["reported"] == status["orientation"] and (d["top"], d["bottom"]) == (
            status["orientation"][0], status["orientation"][3]), d
        assert d["facelets"] == status["facelets"] and "holds" in d["line"], d
        assert as_held(d["facelets"], d["held"]) == rig_for_url(rig_url).mechanism.cube.stickers
        box = browser.find_element(By.ID, "jog-moves")
        box.clear()
        box.send_keys("servo flipper 10")
        browser.find_element(By.ID, "jog-moves-go").click()
        WebDriverWait(browser, 60).until(lambda d: "not known" in d.execute_script(DRAWN_JS)["line"])
        browser.refresh()
        WebDriverWait(browser, 30).until(lambda d: "not known" in d.execute_script(
            "return document.getElementById('held').textContent"))
        errors = [e for e in browser.get_log("browser")
                  if e["level"] == "SEVERE" and e["source"] == "javascript"]
        assert not errors, errors


DRY_DRAWN_JS = DRAWN_JS.replace("'cube3d'", "'dry-cube3d'").replace("'held'", "'dry-held'")
"""What the dry-run card draws (its own cube and hold line), read as :data:`DRAWN_JS` reads the run's."""


CHOICES_JS = """
const say = (id) => ({disabled: document.getElementById(id).disabled,
                      title: document.getElementById(id).closest('label').title,
                      shows: document.getElementById(id).selectedOptions[0].textContent});
return {method: say('method'), metric: say('metric'), dry: document.getElementById('dry-run').disabled,
        start: document.getElementById('start').disabled,
        line: document.getElementById('rig-line').textContent,
        why: document.getElementById('choices-why').hidden ? ''
          : document.getElementById('choices-why').textContent};
"""


@pytest.mark.parametrize("kind", ["flipper", "two-gripper", "six-motor"])
def test_the_method_and_metric_are_disabled_where_the_rig_ignores_them(browser, tmp_path, kind):
    """A rig that moves the cube plans its own robot moves: the selectors say
    so on their labels and cannot be changed; Start and the dry run stay."""
    cfg = load_config(ROOT / "config" / ("rig.toml" if kind == "six-motor" else f"examples/{kind}.toml"))
    with panel_server(tmp_path, cfg=cfg) as (base, _panel, _):
        browser.get(base)
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "state").text == "idle")
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "rig-line").text)
        d = browser.execute_script(CHOICES_JS)
    assert not d["start"] and not d["dry"], d
    # the rig line in each kind's own words ("the virtual rig rig: ... one robot move at a time" was the
    # flipper's wording on a six-motor rig)
    assert d["line"].startswith(f"the virtual {kind} rig: ") and "rig rig" not in d["line"], d
    assert ("one robot move at a time" in d["line"]) == (kind != "six-motor"), d
    for choice in ("method", "metric"):
        if kind == "six-motor":
            assert d[choice]["disabled"] is False and d[choice]["title"] == "", d
        else:
            assert d[choice]["disabled"] and f"a {kind} rig" in d[choice]["title"], d
            assert "do not apply" in d[choice]["title"], d
            # greyed, they show what applies (not "two-phase (shortest)"), and the rule is on the page
            assert "robot move" in d[choice]["shows"] and "shortest" not in d[choice]["shows"], d
    assert d["method"]["shows"] == ("two-phase (shortest)" if kind == "six-motor"
                                    else "two-phase, planned in robot moves"), d
    assert d["why"].startswith(f"A {kind} rig solves") if kind != "six-motor" else not d["why"], d


def test_scan_only_from_the_page_on_a_flipper(browser, tmp_path):
    """The page's Scan only, enabled on a flipper rig: the rig shows its one
    camera the six faces and the page says what it read."""
    from solver import random_cube

    cfg = load_config(ROOT / "config" / "examples" / "flipper.toml")
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, panel, _):
        browser.get(base)
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "state").text == "idle")
        button = browser.find_element(By.ID, "scan")
        assert button.is_enabled()
        listen(browser)
        button.click()
        WebDriverWait(browser, 120).until(
            lambda d: browser.execute_script(DRAWN_JS)["finished"] == ["scanned"])
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "state").get_attribute(
            "data-state") == "done")
        read = random_cube(int(panel.engine.seed)).to_facelets()  # the virtual rig's cube
        assert read in browser.find_element(By.ID, "message").text
