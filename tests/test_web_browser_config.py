"""The configuration in force and one calibration story on the page, in a
real browser (Debian's headless Chromium) at phone width against a real
panel server (issue 48): the Calibrate card asks before it replaces a
profile the set-up does not use and names the override file it writes; the
Config card then shows a value the set-up file sets and the one that
override sets, each with its source, read from GET /api/config."""

from pathlib import Path

import pytest
from chromium import HAS_BROWSER
from webserver import panel_server

from robot.app.calibrate import learn_colours
from robot.rig.loading import load_config
from robot.rig.settings import settings_path

if not HAS_BROWSER:
    pytest.skip("needs Debian's chromium and chromium-driver (./run-tests installs them)",
                allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from test_web_browser import desktop, no_script_errors, open_page, wait  # noqa: E402
from test_web_phone import phone  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _tab(driver, area: str) -> None:
    button = driver.find_element(By.CSS_SELECTOR, f"#tool-tabs button[data-tab='{area}']")
    if button.get_attribute("aria-expanded") != "true":
        button.click()


def _row(driver, key: str) -> tuple[str, str, str] | None:
    """The Config card's line for ``key``: (its value, its source as data, the source as shown)."""
    rows = driver.find_elements(By.CSS_SELECTOR, f"#config-list li[data-key='{key}']")
    if not rows or not rows[0].is_displayed():
        return None
    row = rows[0]
    return (row.find_element(By.CSS_SELECTOR, ".value").text, row.get_attribute("data-source"),
            row.find_element(By.CSS_SELECTOR, ".source").text)


def test_calibrate_asks_before_replacing_and_the_config_card_shows_each_source(browser, tmp_path):
    setup = tmp_path / "bench.toml"
    shipped = (ROOT / "config" / "rig.toml").read_text()  # simulated cameras
    setup.write_text(shipped.replace("budget_ms = 100", "budget_ms = 250", 1))
    cfg = load_config(setup, settings=False)
    profiles = tmp_path / "profiles"
    learn_colours(cfg.cameras, cfg.views, "shared", directory=profiles)  # another set-up's, not this one's
    with panel_server(tmp_path / "state", cfg=cfg) as (base, panel, _):
        panel.options.profile_dir = str(profiles)
        saved = settings_path(setup, tmp_path / "state" / "settings")
        phone(browser)
        try:
            open_page(browser, base)
            _tab(browser, "calibrate-area")
            browser.find_element(By.ID, "cal-name").send_keys("shared")
            browser.find_element(By.ID, "cal-colours").click()
            asked = wait(browser, lambda d: d.find_elements(By.ID, "cal-exists"))[0].text
            assert "a colour profile 'shared' is already saved" in asked and "does not use it" in asked, asked
            assert not saved.exists()  # refused before anything was captured or written
            browser.find_element(By.ID, "cal-replace").click()
            said = wait(browser, lambda d: d.find_elements(By.ID, "cal-message"))[0].text
            assert f"put in use for {setup} in {saved}" in said and "replacing the one" in said, said

            _tab(browser, "config-area")
            browser.find_element(By.ID, "config-load").click()
            budget = wait(browser, lambda d: _row(d, "solver.budget_ms"))
            assert budget == ("250", "set-up file", "set-up file"), budget
            profile = _row(browser, "vision.profile")
            assert profile == (str(profiles / "shared.json"), "override", "override"), profile
            override = browser.find_element(By.ID, "config-override").text
            assert str(saved) in override and f"rm {saved}" in override, override
            assert _row(browser, "solver.method") is None  # a default, shown when asked for
            browser.find_element(By.ID, "config-defaults").click()
            assert wait(browser, lambda d: _row(d, "solver.method")) == ("two-phase", "default", "default")
            assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
        finally:
            desktop(browser)
        no_script_errors(browser)
