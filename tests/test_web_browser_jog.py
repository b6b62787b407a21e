"""The page's Jog card in a real browser (Debian's headless Chromium) against
a real panel server: the face buttons and the motor steps turn the
simulated rig's own cube; a stopped run's job is given up only when the
person presses for it; a flipper jogs by robot moves and a move its rules
forbid is refused in a line, and its Calibrate card offers no colours."""

from pathlib import Path

import pytest
from chromium import HAS_BROWSER, shot
from webserver import panel_server, rig_for_url

from robot.rig.journal import Journal
from robot.rig.loading import load_config
from solver import SOLVED_CUBE, parse_moves

if not HAS_BROWSER:
    pytest.skip("needs Debian's chromium and chromium-driver (./run-tests installs them)",
                allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from test_web_browser import desktop, no_script_errors, open_page, scroll_to, wait  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _message(driver):
    return driver.find_element(By.ID, "jog-message").text


def _press(driver, label):
    driver.find_element(By.XPATH, f"//div[@id='jog-faces']/button[text()=\"{label}\"]").click()


def test_jog_faces_and_steps_from_the_page(browser, tmp_path):
    desktop(browser)
    with Journal(tmp_path) as journal:  # a run stopped before its end left its job for `resume`
        journal.start_job(SOLVED_CUBE.to_facelets(), ["U"])
    with panel_server(tmp_path, speed="max") as (base, panel, rig_url):
        open_page(browser, base)
        wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#jog-faces button")) == 12)
        scroll_to(browser, "jog-area")
        rig = rig_for_url(rig_url)
        before = rig.cube
        _press(browser, "U")
        wait(browser, lambda d: "unfinished" in _message(d))
        assert rig.cube == before
        assert "error" in browser.find_element(By.ID, "jog-message").get_attribute("class")
        give_up = browser.find_element(By.ID, "jog-give-up")
        assert give_up.is_displayed()
        give_up.click()
        wait(browser, lambda d: _message(d).startswith("turned U by 1 quarter turn(s)"))
        assert "given up" in _message(browser) and not give_up.is_displayed()
        assert rig.cube == before.apply(parse_moves("U"))
        _press(browser, "R'")
        wait(browser, lambda d: _message(d).startswith("turned R by -1 quarter turn(s)"))
        assert rig.cube == before.apply(parse_moves("U R'"))
        # a few motor steps to align a face: the cube is where it was
        browser.find_element(By.ID, "jog-face").send_keys("F")
        steps = browser.find_element(By.ID, "jog-steps")
        steps.clear()
        steps.send_keys("7")
        browser.find_element(By.ID, "jog-steps-go").click()
        wait(browser, lambda d: _message(d).startswith("turned F 7 step(s) clockwise"))
        assert rig.cube == before.apply(parse_moves("U R'"))
        steps.clear()
        steps.send_keys("0")
        browser.find_element(By.ID, "jog-steps-go").click()
        wait(browser, lambda d: "not 0" in _message(d))
        shot(browser, "web-panel-jog.png")
        no_script_errors(browser)


def test_a_flipper_jogs_by_robot_moves_from_the_page(browser, tmp_path):
    desktop(browser)
    cfg = load_config(ROOT / "config" / "examples" / "flipper.toml")
    with panel_server(tmp_path, cfg=cfg, speed="max") as (base, panel, _):
        open_page(browser, base)
        wait(browser, lambda d: d.find_element(By.ID, "jog-moves-row").is_displayed())
        scroll_to(browser, "jog-area")
        assert not browser.find_element(By.ID, "jog-faces").is_displayed()
        box = browser.find_element(By.ID, "jog-moves")
        assert box.get_attribute("placeholder").startswith("flip")
        box.send_keys("flip, close cover, turn -1, open cover")
        browser.find_element(By.ID, "jog-moves-go").click()
        wait(browser, lambda d: _message(d).startswith("made 4 robot move(s), 1 of them layer turns"))
        log = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#jog-log li")]
        assert len(log) == 5 and log[0].startswith("homed")
        box.clear()
        box.send_keys("turn +1")
        browser.find_element(By.ID, "jog-moves-go").click()
        wait(browser, lambda d: "robot move 1" in _message(d))
        assert "servo cover 95" in browser.find_element(By.ID, "jog-hint").text
        box.clear()
        box.send_keys("servo cover 95")
        browser.find_element(By.ID, "jog-moves-go").click()
        wait(browser, lambda d: _message(d).startswith("set 1 servo angle(s)"))
        log = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#jog-log li")]
        assert log[-1] == "servo cover 95: held at 95 degrees (1556 us)", log
        # the Calibrate card offers no colours to learn on this kind (the command refuses them)
        assert not browser.find_element(By.ID, "cal-colours-row").is_displayed()
        assert "none to learn" in browser.find_element(By.ID, "cal-hint").get_attribute("textContent")
        shot(browser, "web-panel-flipper-jog.png")
        no_script_errors(browser)
