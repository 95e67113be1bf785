"""Debian's Chromium, driven by Selenium through Debian's chromedriver (nothing downloads a browser)."""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.kit.needs import need_command, skip_missing

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL = "apt-get install chromium chromium-driver; pip install -e '.[test]' (selenium)"
SHOTS: list[Path] = []  # the screenshots taken in this run (listed at its end, tests/playground/conftest.py)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--ignore-certificate-errors",  # the throw-away certificate of --dev
         "--window-size=1500,1000", "--force-device-scale-factor=1")


@contextmanager
def chromium() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip_missing("selenium", INSTALL)
    need_command("chromedriver", INSTALL)
    if not Path(CHROMIUM).exists():
        skip_missing("`chromium`", INSTALL)
    profile = tempfile.mkdtemp(prefix="playground-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait(driver: Any, condition: Callable[[Any], Any], timeout: float = 20) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def runs(driver: Any) -> int:
    """How many answers the page has shown (body[data-runs]), once none is on its way."""
    value = driver.execute_script(
        "return document.body.classList.contains('busy') ? -1 : Number(document.body.dataset.runs || 0)")
    return int(value)


def after_run(driver: Any, before: int, action: Callable[[], None]) -> None:
    """Do `action`, then wait until the page has shown a newer answer than `before`."""
    action()
    wait(driver, lambda d: runs(d) > before)
