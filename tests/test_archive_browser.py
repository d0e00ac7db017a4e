"""The archive in a real browser: Debian's Chromium through Playwright, from file:// and http.

Without Chromium these tests are skipped, unless the CI environment variable is set: there a
missing browser is a failure. Screenshots go to test-artifacts/ at the repository root.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from datetime import date, timedelta
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from digest.config import ArchiveConfig
from digest.render import edition_path, write_archive
from tests.conftest import chromium_path
from tests.editions import hostile_edition, make_edition

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
DAY = date(2026, 11, 29)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Nothing but loopback resolves: a page that tried to load an outside resource would fail.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
# Runs before the page's own policy applies (Playwright injects it), and only records.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("host")
    out = root / "news" / "archive"  # hosted under a sub-path in the http test
    editions = [
        hostile_edition(DAY),
        *(make_edition(DAY - timedelta(days=i)) for i in range(1, 4)),
    ]
    write_archive(editions, ArchiveConfig(title="Morning digest"), out)
    return out


class Watch:
    """Everything a page complained about: console errors and warnings, script errors,
    failed requests and Content-Security-Policy violations."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda err: self.problems.append(f"pageerror: {err}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url}"))
        page.add_init_script(RECORD_VIOLATIONS)

    def _console(self, msg: Any) -> None:
        if msg.type in ("error", "warning"):
            self.problems.append(f"console {msg.type}: {msg.text}")

    def open(self, url: str) -> None:
        response = self.page.goto(url, wait_until="load")
        assert response is None or response.ok, f"{url}: HTTP {response.status}"
        violations = self.page.evaluate("window.__violations")
        self.problems.extend(f"CSP: {v}" for v in violations)
        assert not self.problems, f"{url}: {self.problems}"
        if not url.endswith(".html"):
            return  # the Atom feeds
        # The archive's stylesheet was allowed and applied.
        font = self.page.evaluate("getComputedStyle(document.body).fontFamily")
        assert "system-ui" in font, f"{url}: stylesheet not applied"


def internal_links(page: Any) -> list[str]:
    hrefs: list[str] = page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
    return sorted({h.split("#")[0] for h in hrefs if not h.startswith(("http://", "https://"))})


def test_archive_pages_open_cleanly_from_file_and_every_link_loads(
    browser: Any, site: Path
) -> None:
    context = browser.new_context(viewport={"width": 1024, "height": 800})
    page = context.new_page()
    watch = Watch(page)
    watch.open((site / "index.html").as_uri())
    edition = (site / edition_path(DAY)).as_uri()
    watch.open(edition)
    # The hostile story is on this page; nothing of it ran or loaded.
    assert page.evaluate("document.querySelectorAll('script, img, iframe, svg').length") == 0
    assert "<script>alert('title')</script>" in page.inner_text("main")

    links = internal_links(page)
    assert len(links) > 15
    for url in links:
        assert url.startswith("file://"), url
        watch.open(url)
        if url.endswith(".html"):
            assert page.title(), url
    external = page.eval_on_selector_all(
        "a[href^='http']", "els => els.map(a => [a.protocol, a.rel])"
    )
    assert external and all(p in ("http:", "https:") and "noreferrer" in r for p, r in external)
    context.close()


def test_edition_screenshots_at_desktop_and_phone_width(browser: Any, site: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    url = (site / edition_path(DAY - timedelta(days=1))).as_uri()
    for name, viewport in (
        ("edition.png", {"width": 1024, "height": 800}),
        ("edition-phone.png", {"width": 390, "height": 844}),
    ):
        context = browser.new_context(viewport=viewport, device_scale_factor=1)
        page = context.new_page()
        Watch(page).open(url)
        # Readable on a phone: nothing wider than the screen, text not shrunk.
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"{name}: page is {width}px wide"
        size = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert size >= 16
        page.screenshot(path=str(ARTIFACTS / name), full_page=True)
        context.close()
    assert (ARTIFACTS / "edition.png").stat().st_size > 10_000


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_archive_works_from_a_static_host_under_a_sub_path(browser: Any, site: Path) -> None:
    handler = functools.partial(_QuietHandler, directory=str(site.parent.parent))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/news/archive/"
        context = browser.new_context()
        page = context.new_page()
        watch = Watch(page)
        watch.open(base + "index.html")
        page.click("a.edition-link >> nth=0")
        page.wait_for_load_state("load")
        assert page.url == base + edition_path(DAY)
        for url in internal_links(page):
            assert url.startswith(base), url
            watch.open(url)
        context.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
