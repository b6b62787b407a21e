"""Debian's headless Chromium for the browser tests, started one way for
every test module that needs it (selenium is imported only when it is)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
HAS_BROWSER = bool(shutil.which(CHROMIUM) and shutil.which(DRIVER))
IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"


DESKTOP = (1200, 1000)
"""A desktop picture's size, as docs/panel.md gives it: the browser's window is
that big, but its page (the viewport) is shorter by the window's frame, so a
desktop picture is taken with the page itself made that size for the moment."""


def shot(driver, name: str) -> None:
    """With CUBEROBOT_SCREENSHOTS set, the page as it is now into docs/images
    (the README's pictures are taken by the tests, so they show the panel as
    it really is): a phone's as its screen is, a desktop's at :data:`DESKTOP`."""
    if not os.environ.get("CUBEROBOT_SCREENSHOTS"):
        return
    IMAGES.mkdir(parents=True, exist_ok=True)
    width = driver.execute_script("return innerWidth")
    desktop = width == DESKTOP[0]  # a phone's test has set its own screen, 390 wide
    if desktop:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": DESKTOP[0], "height": DESKTOP[1], "deviceScaleFactor": 1,
                                "mobile": False})
        # two frames: the page laid out and painted at its new height before the picture
        driver.execute_async_script("const done = arguments[0];"
                                    "requestAnimationFrame(() => requestAnimationFrame(() => done()))")
    try:
        driver.save_screenshot(str(IMAGES / name))
    finally:
        if desktop:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def start_browser():
    """A headless Chromium at 1200x1000 that keeps the page's console log."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,1000", "--disable-extensions"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


PAGE_LINES = ("state", "message", "turn-line")
"""What a failed wait says the page showed, by default."""


def wait(driver, what, timeout: float = 60, *, lines: tuple[str, ...] = PAGE_LINES, say: str = ""):
    """Until ``what(driver)`` holds (its value); an element the page replaced
    while it was being read (the live view swaps its pictures) is simply
    read again. On a timeout the test fails saying what the page showed:
    the text of the elements ``lines`` names."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05,
                             ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: what(d))
    except TimeoutException:
        shown = driver.execute_script(
            "return arguments[0].map(i => { const e = document.getElementById(i);"
            " return i + ': ' + (e ? e.textContent.trim() : '(none)'); }).join(' | ')", list(lines))
        import pytest

        pytest.fail(f"waited {timeout} s{say}; the page shows {shown}")
