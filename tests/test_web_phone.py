"""The panel on a phone (issue #24): Debian's headless Chromium emulating a
390x844 phone against a real panel server with the simulated rig. What a
person watching a run must see is measured from the elements' bounding
rectangles, not judged from a picture.

The screenshots in docs/images/ are taken here too (CUBEROBOT_SCREENSHOTS=1)."""

from __future__ import annotations

from typing import Any

import pytest
from chromium import shot
from selenium.webdriver.common.by import By
from test_web_browser import desktop, no_script_errors, open_page, state_text, wait
from webserver import panel_server

from solver import parse_facelets

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}


def phone(driver: Any) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)


def cube_at_rest(driver: Any, cube: str = "cube3d") -> bool:
    """No layer of the page's cube (or the dry-run card's, ``dry-cube3d``) is turning."""
    return not driver.execute_script(f"return document.getElementById('{cube}').dataset.turning")


def attr(driver: Any, element_id: str, name: str) -> str:
    return driver.find_element(By.ID, element_id).get_attribute(name)


ON_SCREEN_JS = r"""
const vw = window.innerWidth, vh = window.innerHeight, out = {};
for (const [name, sel] of Object.entries(arguments[0])) {
  // the union of every element matched: the cube is 54 stickers around an element of no size
  const rects = [...document.querySelectorAll(sel)].map((el) => el.getBoundingClientRect());
  if (!rects.length) { out[name] = 'missing'; continue; }
  const r = { left: Math.min(...rects.map((x) => x.left)), top: Math.min(...rects.map((x) => x.top)),
              right: Math.max(...rects.map((x) => x.right)),
              bottom: Math.max(...rects.map((x) => x.bottom)) };
  r.width = r.right - r.left; r.height = r.bottom - r.top;
  out[name] = (r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= vh && r.right <= vw)
    ? 'in' : `out: ${[r.left, r.top, r.right, r.bottom].map(Math.round).join(',')}`;
}
out.height = document.documentElement.scrollHeight;
out.scrolled = window.scrollY;
out.state = document.getElementById('state').dataset.state;
const turn = /^turn (\d+) of/.exec(document.getElementById('turn-line').textContent);
out.turn = turn ? Number(turn[1]) : 0;
return out;
"""

WATCHED = {"cube": "#viewport", "cube model": "#cube3d .sticker3d", "turn line": "#turn-line",
           "current turn": "#steps li.current", "progress": "#progress", "e-stop": "#estop"}


@pytest.mark.parametrize("method", ["two-phase", "cfop"])
def test_a_run_on_a_phone_shows_the_cube_the_turn_and_the_estop(browser, tmp_path, method):
    """While the rig turns, without any scrolling: the cube, the turn line,
    the highlighted turn, the progress card and the e-stop lie inside the
    390x844 viewport, and the whole page is shorter than two screens; with
    CFOP too, whose solution line is three times longer and whose stage is
    named above the turns."""
    from selenium.webdriver.support.ui import Select

    with panel_server(tmp_path, speed="1") as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            Select(browser.find_element(By.ID, "method")).select_by_value(method)
            browser.find_element(By.ID, "start").click()
            seen = []
            for k in (3, 8):
                # measured in the same call that finds the turn (a turn shows for ~0.2 s: a second
                # look could land after it, or after the run)
                where = wait(browser, lambda d, k=k: (lambda w: w if w["turn"] >= k or w["state"] == "done"
                                                      else None)(d.execute_script(ON_SCREEN_JS, WATCHED)))
                if where["state"] != "turning":
                    break
                seen.append(where)
                assert where["scrolled"] == 0, where
                assert all(where[name] == "in" for name in WATCHED), where
                assert where["height"] < 2 * PHONE["height"], where
                if method == "cfop":  # a stage's explanation folds to two lines (its length is the cube's)
                    lines = browser.execute_script(
                        "const s = document.getElementById('stage');"
                        " const line = parseFloat(getComputedStyle(s).lineHeight) || 20;"
                        " return s.getBoundingClientRect().height / line")
                    assert lines < 2.5, lines
                if k == 3 and method == "two-phase":
                    shot(browser, "web-panel-phone-run.png")
            assert seen, "the run ended before turn 3 was shown"
            wait(browser, lambda d: state_text(d) == "solved", timeout=90)
            no_script_errors(browser)
        finally:
            desktop(browser)


def test_the_tools_are_tabs_on_a_phone(browser, tmp_path):
    """On a phone the tools are closed until their tab is pressed, one at a
    time; on a wide screen every tool shows and there are no tabs."""
    with panel_server(tmp_path) as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            tools = ["cameras-area", "dry-area", "photos-area", "calibrate-area", "pocket-area", "runs-area",
                     "jog-area", "config-area"]
            assert not any(browser.find_element(By.ID, t).is_displayed() for t in tools)
            for t in tools:
                browser.find_element(By.CSS_SELECTOR, f"#tool-tabs button[data-tab='{t}']").click()
                shown = [x for x in tools if browser.find_element(By.ID, x).is_displayed()]
                assert shown == [t]
                # each tool fits the phone's width: nothing scrolls sideways
                assert browser.execute_script("return document.documentElement.scrollWidth") <= 390, t
            browser.find_element(By.CSS_SELECTOR, f"#tool-tabs button[data-tab='{tools[-1]}']").click()
            assert not any(browser.find_element(By.ID, t).is_displayed() for t in tools)
        finally:
            desktop(browser)
        open_page(browser, base)
        assert not browser.find_element(By.ID, "tool-tabs").is_displayed()
        assert all(browser.find_element(By.ID, t).is_displayed() for t in tools)
        no_script_errors(browser)


# ---------------------------------------------------------------- the cube turns as solid layers

WATCH_CUBE_JS = """
const root = document.getElementById('cube3d');
const seen = window.__seen = { shown: [], turning: [], server: [], scanned: null };
// one event from the server is one task, its changes to the cube one batch here: at most one turn begun
new MutationObserver((changes) => {
  // each value set: the old value of the next change, and the last one is the value now
  const set = changes.filter((m) => m.attributeName === 'data-facelets');
  set.forEach((m, k) => seen.shown.push(k + 1 < set.length ? set[k + 1].oldValue : root.dataset.facelets));
  if (changes.some((m) => m.attributeName === 'data-turning') && root.dataset.turning) {
    {
      const current = document.querySelector('#steps li.current');
      seen.turning.push({
        step: root.dataset.turning, current: current ? current.textContent : null,
        layers: [...root.querySelectorAll('.layer3d')].map((l) => [l.dataset.face,
          l.querySelectorAll('.sticker3d').length, l.querySelectorAll('.cap3d').length]),
        loose: root.querySelectorAll(':scope > .sticker3d').length });
    }
  }
}).observe(root, { attributes: true, attributeOldValue: true,
                   attributeFilter: ['data-facelets', 'data-turning'] });
// what the server sends, read by a stream of the test's own beside the page's
const source = new EventSource('/api/events');
source.onmessage = (m) => {
  const e = JSON.parse(m.data);
  if (e.kind === 'solution') seen.scanned = e.facelets;
  if (e.kind === 'turn-done') seen.server.push(e.state_facelets);
  if (e.kind === 'finished') { seen.finished = true; source.close(); }
};
"""

# While a layer turns: its rotation (a CSS matrix) keeps the face's axis fixed and has turned it.
MID_TURN_JS = """
const layer = document.querySelector('#cube3d .layer3d');
if (!layer || !layer.style.transform) return null;
const m = new DOMMatrix(getComputedStyle(layer).transform);
const axis = { U: [0, -1, 0], D: [0, 1, 0], R: [1, 0, 0], L: [-1, 0, 0], F: [0, 0, 1], B: [0, 0, -1] }
  [layer.dataset.face];
const p = m.transformPoint(new DOMPoint(...axis));
const moved = m.transformPoint(new DOMPoint(...axis.map((x) => 1 - Math.abs(x))));
return { face: layer.dataset.face, axis_kept: Math.hypot(p.x - axis[0], p.y - axis[1], p.z - axis[2]),
         turned: Math.hypot(moved.x - (1 - Math.abs(axis[0])), moved.y - (1 - Math.abs(axis[1])),
                            moved.z - (1 - Math.abs(axis[2]))) };
"""


def _dedupe(values: list[str]) -> list[str]:
    return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]


@pytest.mark.parametrize("speed", ["1", "8"])
def test_the_cube_turns_whole_layers_in_step_with_the_rig(browser, tmp_path, speed):
    """Every turn the rig starts is drawn at once as one rotated layer (21
    stickers and a cap; no sticker of it left loose) while that turn is the
    highlighted one, and the state the cube rests in after each turn is the
    state the server reports for it, turn by turn, at real speed and when
    the turns come faster than they can be drawn."""
    with panel_server(tmp_path, speed=speed) as (base, panel, rig_url):
        open_page(browser, base)
        browser.execute_script(WATCH_CUBE_JS)
        wait(browser, lambda d: d.execute_script("return window.__seen.server !== undefined"))
        browser.find_element(By.ID, "start").click()
        mid = None
        if speed == "1":
            mid = wait(browser, lambda d: (lambda r: r if r and r["turned"] > 0.1 else None)(
                d.execute_script(MID_TURN_JS)))
        wait(browser, lambda d: state_text(d) == "solved", timeout=90)
        wait(browser, lambda d: d.execute_script("return window.__seen.finished === true"))
        wait(browser, cube_at_rest)
        seen = browser.execute_script("return window.__seen")
        steps = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#steps li")]
        assert seen["server"] and len(seen["server"]) == len(steps)
        assert [t["step"] for t in seen["turning"]] == steps
        for t in seen["turning"]:
            faces = t["step"].split()
            assert t["current"] == t["step"], t
            assert sorted(layer[0] for layer in t["layers"]) == sorted(f[0] for f in faces), t
            assert all(layer[1:] == [21, 1] for layer in t["layers"]), t
            assert t["loose"] == 54 - 21 * len(faces), t
        shown = _dedupe(seen["shown"])
        n = len(seen["server"])
        assert shown[-n:] == seen["server"]
        assert shown[-n - 1] == seen["scanned"]
        if mid is not None:
            assert mid["axis_kept"] < 1e-6 and mid["turned"] > 0.1, mid
        no_script_errors(browser)


# ---------------------------------------------------------------- the geometry editor


def _net_corners(panel: Any, view: str) -> dict[str, list[tuple[float, float]]]:
    """Each face's corners of ``view`` as the server holds them, in the net's order (top-left first)."""
    from robot.web.workshop import _net_order

    return {f.face: _net_order(f.corners, f.top_left)
            for v in panel.cfg.views if v.name == view for f in v.faces}


def test_one_handle_per_shared_corner_moves_every_face_there(browser, tmp_path):
    """On a phone, zoomed to 200%: a camera that sees three faces gives 7
    handles (not 12 stacked); dragging the one the three faces share moves
    that corner of all three by the distance dragged, and nothing else."""
    from selenium.webdriver.common.action_chains import ActionChains

    with panel_server(tmp_path / "state") as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            browser.find_element(By.CSS_SELECTOR, "#tool-tabs button[data-tab='calibrate-area']").click()
            wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#geo-view option"))
            view = browser.find_element(By.ID, "geo-view").get_attribute("value")
            before = _net_corners(panel, view)
            assert len(before) == 3
            browser.find_element(By.ID, "geo-load").click()
            wait(browser, lambda d: d.execute_script(
                "const i = document.querySelector('#geo-box img'); return i && i.complete && i.naturalWidth"))
            handles = browser.find_elements(By.CSS_SELECTOR, "#geo-box circle")
            assert len(handles) == 7
            shared = [h for h in handles if len(h.get_attribute("data-members").split()) == 3]
            assert len(shared) == 1
            names = shared[0].get_attribute("data-members")  # the handles are drawn again at each change
            members = [(m[0], int(m[1:]) - 1) for m in names.split()]
            points = {tuple(before[f][k]) for f, k in members}
            assert len(points) == 1, points  # the configured faces meet there
            width = browser.execute_script("return document.querySelector('#geo-box svg')"
                                           ".getBoundingClientRect().width")
            browser.find_element(By.ID, "geo-zoom-in").click()
            browser.find_element(By.ID, "geo-zoom-in").click()
            assert browser.find_element(By.ID, "geo-zoom-level").text == "200%"
            scale = browser.execute_script(
                "const s = document.querySelector('#geo-box svg'); return s.getBoundingClientRect().width / "
                "s.viewBox.baseVal.width")
            assert abs(scale * browser.execute_script(
                "return document.querySelector('#geo-box svg').viewBox.baseVal.width") - 2 * width) < 2
            handle = browser.find_element(By.CSS_SELECTOR, f"#geo-box circle[data-members='{names}']")
            browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", handle)
            drag = ActionChains(browser).click_and_hold(handle).move_by_offset(round(40 * scale), 0)
            drag.release().perform()
            assert len(browser.find_elements(By.CSS_SELECTOR, "#geo-box circle")) == 7
            shot(browser, "web-panel-phone-geometry.png")
            browser.find_element(By.ID, "geo-save").click()
            wait(browser, lambda d: "saved to" in d.find_element(By.ID, "geo-message").text)
            after = _net_corners(panel, view)
            for f in before:
                for k in range(4):
                    dx, dy = after[f][k][0] - before[f][k][0], after[f][k][1] - before[f][k][1]
                    if (f, k) in members:
                        assert 35 < dx < 45 and abs(dy) < 5, (f, k, before[f][k], after[f][k])
                    else:
                        assert (dx, dy) == (0, 0), (f, k, before[f][k], after[f][k])
            no_script_errors(browser)
        finally:
            desktop(browser)


# ---------------------------------------------------------------- six photos, and a doubt


def test_six_photos_give_a_net_to_solve_and_start(browser, tmp_path):
    """On a phone: six photos read into a net of the cube they show; a
    sticker tapped wrong makes Solve refuse with the stickers ringed; tapped
    back, Solve gives moves that solve the cube, and Start turns them on
    the virtual rig from that cube, which the page's cube follows to solved."""
    import numpy as np
    from photo_render import render_cube_photos, write_photo

    from solver import Cube, random_cube

    truth = random_cube(1).to_facelets()  # seeds that read sure (see test_vision_photos.py)
    shots = render_cube_photos(truth, np.random.default_rng(501), size=(1280, 960))
    rng = np.random.default_rng(0)
    paths = {}
    for face, s in shots.items():
        paths[face] = str(tmp_path / f"{face}.jpg")
        write_photo(s.image, paths[face], rng)
    with panel_server(tmp_path / "state") as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            browser.find_element(By.CSS_SELECTOR, "#tool-tabs button[data-tab='photos-area']").click()
            inputs = browser.find_elements(By.CSS_SELECTOR, "#photo-inputs input[type='file']")
            # a phone opens its back camera for each face (issue 47)
            assert len(inputs) == 6 and {i.get_attribute("capture") for i in inputs} == {"environment"}
            for face, p in paths.items():
                browser.find_element(By.CSS_SELECTOR, f"#photo-inputs input[name='{face}']").send_keys(p)
            # each photo is read as it is taken, its nine stickers drawn under it: Read is pressed once
            # the page shows all six, as a person would, and not while the drawn grids still move it
            # down the page (a click aimed before a grid lands can land on the grid's label instead)
            wait(browser, lambda d: all("done" in attr(d, f"face-read-{f}", "class") for f in "URFDLB"),
                 lines=tuple(f"face-read-{f}" for f in "URFDLB"))
            browser.find_element(By.ID, "photos-read").click()
            wait(browser, lambda d: d.find_element(By.ID, "photos-cube").is_displayed(), timeout=90,
                 lines=("photos-message", *(f"face-read-{f}" for f in "URFDLB")))
            net = lambda: "".join(b.get_attribute("data-letter")  # noqa: E731
                                  for b in browser.find_elements(By.CSS_SELECTOR, "#photos-net button"))
            assert net() == truth
            assert not browser.find_element(By.ID, "photos-doubt").text  # read sure: no doubt shown
            # one sticker tapped to the wrong colour: Solve refuses and rings what is wrong
            browser.find_element(By.CSS_SELECTOR, "#photos-net button[data-index='0']").click()
            assert net() != truth
            browser.find_element(By.ID, "photos-solve").click()
            wait(browser, lambda d: "error" in attr(d, "photos-solution", "class"))
            assert browser.find_elements(By.CSS_SELECTOR, "#photos-net button.wrong")
            assert not browser.find_element(By.ID, "photos-start").is_enabled()
            for _ in range(5):  # round the six colours back to the one read
                browser.find_element(By.CSS_SELECTOR, "#photos-net button[data-index='0']").click()
            assert net() == truth
            browser.find_element(By.ID, "photos-solve").click()
            text = wait(browser, lambda d: "moves)" in d.find_element(By.ID, "photos-solution").text
                        and d.find_element(By.ID, "photos-solution").text)
            moves = text.split(" (")[0]
            assert parse_facelets(truth).apply(moves).is_solved()
            browser.execute_script("arguments[0].scrollIntoView({block: 'end'})",
                                   browser.find_element(By.ID, "photos-solution"))
            shot(browser, "web-panel-phone-photos.png")
            browser.find_element(By.ID, "photos-start").click()
            # turned as a dry run, in its own card (its tab opened), the run's cube left alone
            wait(browser, lambda d: d.find_element(By.ID, "dry-state").text == "done", timeout=90)
            assert browser.find_element(By.ID, "dry-area").is_displayed()
            wait(browser, lambda d: cube_at_rest(d, "dry-cube3d"))
            assert attr(browser, "dry-cube3d", "data-facelets") == Cube().to_facelets()
            assert attr(browser, "cube3d", "data-facelets") != Cube().to_facelets()
            no_script_errors(browser)
        finally:
            desktop(browser)


def test_a_doubt_shows_its_few_stickers_first_in_one_sentence(browser, tmp_path):
    """On a phone, a scan in doubt: the page's message is one short line,
    the stickers in doubt come first as named chips (as many as are ringed
    on the net), the scan's own explanation waits under "why", and tapping
    a chip changes that sticker on the net."""
    from test_web_browser import NO_LOOK_AGAIN

    from robot.cli.commands.serve import sim_glare

    with panel_server(tmp_path, speed="4", sim_lighting=sim_glare(2), cfg=NO_LOOK_AGAIN) as (base, panel, _):
        phone(browser)
        try:
            open_page(browser, base)
            browser.find_element(By.ID, "start").click()
            wait(browser, lambda d: attr(d, "state", "data-state") == "needs_help")
            ringed = sorted(int(b.get_attribute("data-index"))
                            for b in browser.find_elements(By.CSS_SELECTOR, "#net button.doubt"))
            chips = browser.find_elements(By.CSS_SELECTOR, "#fix-list button")
            assert ringed and sorted(int(c.get_attribute("data-index")) for c in chips) == ringed
            sentence = browser.find_element(By.ID, "fix-help").text
            assert sentence.startswith(f"{len(ringed)} sticker") and len(sentence) < 90, sentence
            assert len(browser.find_element(By.ID, "message").text) < 90
            assert not browser.find_element(By.ID, "fix-why-text").is_displayed()  # folded away
            assert browser.find_element(By.ID, "fix-why").is_displayed()
            i = ringed[0]
            cell = f"#net button[data-index='{i}']"
            before = browser.find_element(By.CSS_SELECTOR, cell).get_attribute("data-letter")
            # a phone is taken to the stickers in doubt: the first chip is on the screen, under the header
            top, bottom = browser.execute_script(
                "const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom]", chips[0])
            header = browser.find_element(By.TAG_NAME, "header").rect["height"]
            assert header <= top and bottom <= 844, (header, top, bottom)
            chips[0].click()
            assert browser.find_element(By.CSS_SELECTOR, cell).get_attribute("data-letter") != before
            shot(browser, "web-panel-phone-doubt.png")
            browser.execute_script("window.scrollTo(0, 0)")
            browser.find_element(By.ID, "stop").click()
            no_script_errors(browser)
        finally:
            desktop(browser)


# ---------------------------------------------------------------- the smaller things


def broken_lamp(capture: int) -> Any:
    """Simulated cameras whose light fails at the first capture: a run that
    ends on an error the engine does not name."""
    raise RuntimeError("the lamp broke")


def test_a_run_that_did_not_start_says_why_in_the_last_runs(browser, tmp_path):
    with panel_server(tmp_path, sim_lighting=broken_lamp) as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            browser.find_element(By.ID, "start").click()
            wait(browser, lambda d: attr(d, "state", "data-state") == "failed", timeout=60)
            wait(browser, lambda d: not panel.running() and not panel.thread.is_alive())
            browser.find_element(By.CSS_SELECTOR, "#tool-tabs button[data-tab='runs-area']").click()
            browser.find_element(By.ID, "runs-load").click()
            summary = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#runs summary"))[0].text
            assert "· ?" not in summary
            assert "failed: the run failed: RuntimeError: the lamp broke" in summary, summary
            no_script_errors(browser)
        finally:
            desktop(browser)


def test_dry_run_card_badge_and_estop_on_a_phone(browser, tmp_path):
    """A dry run's card says how it ended (not "turning…" for ever), with a
    badge of its own, not the green of "solved"; its timeline is shown at a
    size its words can be read, sideways scrolled; the header's badge says
    the rig is idle after it, and an E-STOP pressed then turns it into a
    red "emergency stop"."""
    with panel_server(tmp_path) as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            browser.find_element(By.CSS_SELECTOR, "#tool-tabs button[data-tab='dry-area']").click()
            browser.find_element(By.ID, "dry-moves").send_keys("R U R' U'")
            browser.find_element(By.ID, "dry-run").click()
            wait(browser, lambda d: d.find_element(By.ID, "dry-state").text == "done", timeout=60)
            wait(browser, lambda d: d.find_element(By.ID, "dry-message").text.startswith("dry run done"))
            colours = browser.execute_script(
                "const b = document.createElement('span'); b.className = 'badge'; b.dataset.state = 'done';"
                "document.body.append(b); const solved = getComputedStyle(b).backgroundColor; b.remove();"
                "return [solved, getComputedStyle(document.getElementById('dry-state')).backgroundColor]")
            assert colours[0] != colours[1], colours  # a dry run's own colour, not the green of solved
            wait(browser, lambda d: d.execute_script(
                "const i = document.getElementById('dry-timeline'); return i.complete && i.naturalWidth > 0"))
            shown, natural, box = browser.execute_script(
                "const i = document.getElementById('dry-timeline'); return [i.getBoundingClientRect().width,"
                " i.naturalWidth, document.getElementById('dry-timeline-box').clientWidth]")
            assert shown == natural and box < natural, (shown, natural, box)  # its own size, in a scroll box
            assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
            assert attr(browser, "state", "data-state") == "idle" and state_text(browser) == "idle"
            browser.execute_script("window.scrollTo(0, 0)")
            browser.find_element(By.ID, "estop").click()
            wait(browser, lambda d: state_text(d) == "emergency stop")
            assert attr(browser, "state", "data-state") == "stopped"
            no_script_errors(browser)
        finally:
            desktop(browser)


def test_photo_inputs_and_camera_captions_read_at_phone_width(browser, tmp_path):
    """At 390 px: each photo input says "no photo yet" or the file chosen,
    in words of its own that fit (the browser's "No file chosen" was cut to
    "No …osen"); each camera's picture is captioned with its name."""
    picture = tmp_path / "U.jpg"
    picture.write_bytes(b"not read here")
    with panel_server(tmp_path / "state", speed="8") as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            browser.find_element(By.CSS_SELECTOR, "#tool-tabs button[data-tab='photos-area']").click()
            names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#photo-inputs .file-name")]
            assert names == ["no photo yet"] * 6
            browser.find_element(By.CSS_SELECTOR, "#photo-inputs input[name='U']").send_keys(str(picture))
            assert browser.find_element(By.CSS_SELECTOR, "#photo-inputs .file-name").text == "U.jpg"
            cut = browser.execute_script(
                "return [...document.querySelectorAll('#photo-inputs label, #photo-inputs span')]"
                ".filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)")
            assert not cut, cut
            browser.find_element(By.CSS_SELECTOR, "#tool-tabs button[data-tab='cameras-area']").click()
            browser.execute_script("window.scrollTo(0, 0)")
            browser.find_element(By.ID, "start").click()
            wait(browser, lambda d: state_text(d) == "solved", timeout=90)
            captions = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#cameras figcaption")]
            assert captions and all(c.startswith("camera ") for c in captions), captions
            size = browser.execute_script(
                "return getComputedStyle(document.querySelector('#cameras figcaption')).fontSize")
            assert float(size.removesuffix("px")) >= 13
            no_script_errors(browser)
        finally:
            desktop(browser)
