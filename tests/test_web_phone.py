"""The panel on a phone (issue #24): Debian's headless Chromium emulating a
390x844 phone against a real panel server with the simulated rig. What a
person watching a run must see is measured from the elements' bounding
rectangles, not judged from a picture.

The screenshots in docs/images/ are taken here too (CUBEROBOT_SCREENSHOTS=1)."""

from __future__ import annotations

from typing import Any

from selenium.webdriver.common.by import By
from test_web_browser import browser, desktop, no_script_errors, open_page, shot, state_text, wait
from webserver import panel_server

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
__all__ = ["browser"]  # the module's Chromium, shared with test_web_browser's fixture


def phone(driver: Any) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)


ON_SCREEN_JS = """
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
return out;
"""

WATCHED = {"cube": "#viewport", "cube model": "#cube3d .sticker3d", "turn line": "#turn-line",
           "current turn": "#steps li.current", "progress": "#progress", "e-stop": "#estop"}


def test_a_run_on_a_phone_shows_the_cube_the_turn_and_the_estop(browser, tmp_path):
    """While the rig turns, without any scrolling: the cube, the turn line,
    the highlighted turn, the progress card and the e-stop lie inside the
    390x844 viewport, and the whole page is shorter than two screens."""
    with panel_server(tmp_path, speed="1") as (base, panel, rig_url):
        phone(browser)
        try:
            open_page(browser, base)
            browser.find_element(By.ID, "start").click()
            seen = []
            for k in (3, 8):
                wait(browser, lambda d, k=k: f"turn {k} of" in d.find_element(By.ID, "turn-line").text
                     or state_text(d) == "solved")
                if state_text(browser) == "solved":
                    break
                where = browser.execute_script(ON_SCREEN_JS, WATCHED)
                seen.append(where)
                assert where["scrolled"] == 0, where
                assert all(where[name] == "in" for name in WATCHED), where
                assert where["height"] < 2 * PHONE["height"], where
                if k == 3:
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
            tools = ["cameras-area", "dry-area", "photos-area", "calibrate-area", "pocket-area", "runs-area"]
            assert not any(browser.find_element(By.ID, t).is_displayed() for t in tools)
            for t in tools:
                browser.find_element(By.CSS_SELECTOR, f"#tool-tabs button[data-tab='{t}']").click()
                shown = [x for x in tools if browser.find_element(By.ID, x).is_displayed()]
                assert shown == [t]
            browser.find_element(By.CSS_SELECTOR, "#tool-tabs button[data-tab='runs-area']").click()
            assert not any(browser.find_element(By.ID, t).is_displayed() for t in tools)
        finally:
            desktop(browser)
        open_page(browser, base)
        assert not browser.find_element(By.ID, "tool-tabs").is_displayed()
        assert all(browser.find_element(By.ID, t).is_displayed() for t in tools)
        no_script_errors(browser)
