"""Open HTML reports in a real headless Chromium (Debian's ``chromium``) through Playwright.

The browser is never downloaded (no ``playwright install``): ``.ci/run`` installs the
Debian package. A missing browser makes these tests FAIL, so CI can never pass without
them; on a developer machine without Chromium, ``WAZA_SKIP_BROWSER_TESTS=1`` skips them
with a reason (ignored when ``CI`` is set).
"""

from __future__ import annotations

import atexit
import contextlib
import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("WAZA_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def require_browser() -> None:
    problem = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "Playwright for Python is not installed (pip install -e '.[test]')"
    if problem is None and not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        problem = f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    if problem is None:
        return
    if os.environ.get("WAZA_SKIP_BROWSER_TESTS") == "1" and not os.environ.get("CI"):
        pytest.skip(f"browser test skipped (WAZA_SKIP_BROWSER_TESTS=1): {problem}")
    pytest.fail(f"the HTML report tests need a real browser: {problem}; "
                "set WAZA_SKIP_BROWSER_TESTS=1 to skip them outside CI")


class Opened:
    """A report open in the browser, with what it asked the network for and its console errors."""

    def __init__(self, page, requests: list[str], errors: list[str]) -> None:
        self.page = page
        self.requests = requests
        self.errors = errors

    def remote_requests(self, own_url: str) -> list[str]:
        return [u for u in self.requests if u != own_url]


#: [(Playwright, Browser)] of this test process, started on first use (see _browser)
_started: list = []


def _browser():
    """One headless Chromium for the reports of one test file, started on first use: starting
    Playwright's driver and the browser costs about 1.5 s of CPU, and each report gets a new
    browser context of its own anyway (no cookies, storage or cache shared with another
    report). A browser that went away is started again.

    :func:`stop` ends it when the test file is done (tests/conftest.py
    ``pytest_runtest_teardown``): while Playwright's sync API is started, its event loop is
    the running loop of the thread, and a later test's ``asyncio.run()`` would fail."""
    if _started and _started[0][1].is_connected():
        return _started[0][1]
    stop()
    from playwright.sync_api import sync_playwright

    driver = sync_playwright().start()
    try:
        browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
    except BaseException:
        driver.stop()
        raise
    _started[:] = [(driver, browser)]
    return browser


def stop() -> None:
    """End the shared browser and Playwright's driver, if started."""
    while _started:
        driver, browser = _started.pop()
        with contextlib.suppress(Exception):
            browser.close()
        with contextlib.suppress(Exception):
            driver.stop()


atexit.register(stop)  # the last test file's browser, if the run ends another way


@contextlib.contextmanager
def open_report(path: Path, timeout_ms: int = 60000):
    """Open ``path`` in a new browser context (offline); every request but the page itself is
    aborted and recorded."""
    require_browser()
    ctx = _browser().new_context(offline=True)
    try:
        url = path.resolve().as_uri()
        requests: list[str] = []
        errors: list[str] = []

        def route(r):
            if r.request.url == url:
                r.continue_()
            else:
                r.abort()

        ctx.route("**/*", route)
        page = ctx.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.set_default_timeout(timeout_ms)
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.goto(url, wait_until="load")
        yield Opened(page, requests, errors)
    finally:
        ctx.close()


def page_timings(page) -> dict[str, float]:
    """Milliseconds from the report's navigation start until its first task rows were on
    screen (the page's own ``waza:first-rows`` mark, set in the frame after the rows were
    built) and until its load event; and how many tasks' JSON elements the page had read
    when it built those rows."""
    page.wait_for_function("performance.getEntriesByName('waza:first-rows').length > 0"
                           " && performance.getEntriesByType('navigation')[0].loadEventEnd > 0")
    return page.evaluate("() => { const m = performance.getEntriesByName('waza:first-rows')[0];"
                         " return {first_rows_ms: m.startTime, task_elements_read: m.detail.task_elements_read,"
                         " load_ms: performance.getEntriesByType('navigation')[0].loadEventStart}; }")
