"""The archive in a real browser: Debian's Chromium through Playwright, from file:// and http.

Without Chromium these tests are skipped, unless the CI environment variable is set: there a
missing browser is a failure. Screenshots go to test-artifacts/ at the repository root.
"""

from __future__ import annotations

import functools
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from digest.config import ArchiveConfig
from digest.models import Correction, Edition
from digest.render import edition_path, story_path, write_archive
from digest.render.corrections import Corrected
from digest.render.layout import SEARCH, SEARCH_INDEX, SEARCH_SCRIPT, STYLESHEET
from digest.render.search_index import render_search_index
from digest.render.templating import clean_edition
from tests import axe
from tests.conftest import CHROMIUM_ARGS, chromium_path
from tests.editions import HOSTILE_TITLE, hostile_edition, make_edition, make_story

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
DAY = date(2026, 11, 29)
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


# A story only search finds by its accents, and whose summary (not its title) names the flood
# barrier that other days' world stories have in their titles.
DESSERT = "Crème brûlée festival draws crowds to São Paulo"
DESSERT_DAY = DAY - timedelta(days=2)
DESSERT_ID = 4242


def with_dessert(edition: Edition) -> Edition:
    story = replace(
        make_story(edition.day, "world", 3, story_id=DESSERT_ID),
        title=DESSERT,
        brief_summary="Visitors queued past the old flood barrier for a taste of the city's "
        "most famous dessert; ZÜRICH and Kraków sent their bakers.",
    )
    world = edition.sections[1]
    world = replace(world, stories=(*world.stories, story))
    return replace(edition, sections=(edition.sections[0], world, *edition.sections[2:]))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("host")
    out = root / "news" / "archive"  # hosted under a sub-path in the http test
    # The edition of three days before shares its story ids with the day before's, which
    # corrected one of its sentences: that page marks it and links the correction.
    day1 = DAY - timedelta(days=1)
    earlier = make_edition(DAY - timedelta(days=3), first_id=day1.toordinal() % 100_000 * 1000)
    story = earlier.sections[0].stories[0]
    said = story.summary.split("\n")[0]
    fix = Correction("dead", "12", "30", earlier.day, said, ("Reuters",))
    corrected = {earlier.day: [Corrected(story.id, fix, day1, datetime.now(UTC))]}
    editions = [
        hostile_edition(DAY),
        make_edition(day1),
        with_dessert(make_edition(DESSERT_DAY)),
        earlier,
    ]
    write_archive(editions, ArchiveConfig(title="Morning digest"), out, corrected=corrected)
    assert '<mark class="corrected">' in (out / story_path(earlier.day, story.id)).read_text()
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
        page.on("dialog", self._dialog)
        page.add_init_script(RECORD_VIOLATIONS)

    def _dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def _console(self, msg: Any) -> None:
        if msg.type in ("error", "warning"):
            self.problems.append(f"console {msg.type}: {msg.text}")

    def check(self) -> None:
        """No problem so far on the page that is open (after typing into it, say)."""
        violations = self.page.evaluate("window.__violations.splice(0)")
        self.problems.extend(f"CSP: {v}" for v in violations)
        assert not self.problems, f"{self.page.url}: {self.problems}"

    def open(self, url: str) -> None:
        response = self.page.goto(url, wait_until="load")
        assert response is None or response.ok, f"{url}: HTTP {response.status}"
        self.check()
        if not urlsplit(url).path.endswith(".html"):
            return  # the Atom feeds
        # The archive's stylesheet was allowed and applied.
        font = self.page.evaluate("getComputedStyle(document.body).fontFamily")
        assert "system-ui" in font, f"{url}: stylesheet not applied"
        width = self.page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth")
        assert width != "none", f"{url}: the page's column has no width"


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

    assert not axe.violations(page), edition
    links = internal_links(page)
    assert len(links) > 15
    for url in links:
        assert url.startswith("file://"), url
        watch.open(url)
        if url.endswith(".html"):
            assert page.title(), url
            assert not axe.violations(page), url  # WCAG 2 A and AA, and best practices
    watch.open(edition)  # the outlets' links, on the edition page
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


@pytest.fixture(scope="module")
def static_host(site: Path) -> Iterator[str]:
    """The archive on a plain static web server, under /news/archive/: its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site.parent.parent))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/news/archive/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_archive_works_from_a_static_host_under_a_sub_path(browser: Any, static_host: str) -> None:
    base = static_host
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


# -- search ---------------------------------------------------------------------------------------


def results(page: Any) -> list[dict[str, Any]]:
    """The listed results: title, link, meta line, snippet and the <mark>ed words of each."""
    return page.eval_on_selector_all(
        "#search-results > li",
        """items => items.map(li => ({
            title: li.querySelector("h2").textContent,
            href: li.querySelector("h2 a").href,
            meta: li.querySelector(".meta").textContent,
            snippet: (li.querySelector(".snippet") || {}).textContent || "",
            marks: [...li.querySelectorAll("mark")].map(m => m.textContent),
            titleMarks: [...li.querySelectorAll("h2 mark")].map(m => m.textContent),
        }))""",
    )


def status(page: Any) -> str:
    return page.inner_text("#search-status")


def search_url(site: Path, query: str) -> str:
    return (site / SEARCH).as_uri() + "?q=" + quote(query, safe="")


def test_search_from_file_finds_ranks_and_marks_stories(browser: Any, site: Path) -> None:
    context = browser.new_context(viewport={"width": 1024, "height": 800})
    page = context.new_page()
    watch = Watch(page)

    # A shared link: search.html?q=..., no accents typed, upper case.
    watch.open(search_url(site, "SAO paulo"))
    assert page.input_value("#q") == "SAO paulo"
    found = results(page)
    assert [r["title"] for r in found] == [DESSERT]
    assert found[0]["titleMarks"] == ["São", "Paulo"]
    assert found[0]["meta"] == "27 Nov 2026 · World · 3 outlets"
    assert found[0]["snippet"].startswith("Visitors queued past the old flood barrier")
    assert status(page) == "1 story matches “SAO paulo”."

    # A quoted phrase, in the summary, across accents and case; the link leads to the story.
    watch.open(search_url(site, '"zurich and krakow"'))
    (hit,) = results(page)
    assert hit["marks"] == ["ZÜRICH and Kraków"]
    page.click("#search-results a")
    page.wait_for_load_state("load")
    assert page.url == (site / story_path(DESSERT_DAY, DESSERT_ID)).as_uri()
    assert page.inner_text("h1") == DESSERT
    watch.check()

    # Typing: results follow the input; title hits first (newest first), then summary hits.
    watch.open((site / SEARCH).as_uri())
    assert "Type a few words to search" in status(page)
    assert results(page) == []
    page.fill("#q", "flood BARRIER")
    found = results(page)
    assert [r["title"] for r in found] == [
        *["Flood barrier holds as storm hits the lower valley"] * 4,
        DESSERT,
    ]
    assert [r["meta"][:11] for r in found[:4]] == [
        "29 Nov 2026", "28 Nov 2026", "27 Nov 2026", "26 Nov 2026"
    ]  # fmt: skip
    assert found[0]["titleMarks"] == ["Flood", "barrier"]
    assert found[-1]["titleMarks"] == [] and found[-1]["marks"] == ["flood", "barrier"]
    assert status(page) == "5 stories match “flood BARRIER”."
    assert not axe.violations(page)  # with its results listed
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "search.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing wider than it
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.set_viewport_size({"width": 1024, "height": 800})
    # Every word must match.
    page.fill("#q", "flood barrier dessert")
    assert [r["title"] for r in results(page)] == [DESSERT]
    # Submitting makes the address a link to these results.
    page.press("#q", "Enter")
    page.wait_for_url("**/search.html?q=flood+barrier+dessert")
    assert [r["title"] for r in results(page)] == [DESSERT]

    page.fill("#q", "Sa\u0303o PAULO")  # typed with a combining tilde
    assert [r["titleMarks"] for r in results(page)] == [["São", "Paulo"]]

    page.fill("#q", "zebra")
    assert results(page) == []
    assert status(page) == "No stories match “zebra”."
    for odd in ["(.*+?[\\", "^$|", '"""', "\u0301", "🦓 ∑ 日本", "a" * 2000]:
        page.fill("#q", odd)
        assert results(page) == [] or odd == '"""'
    page.fill("#q", "")
    assert "Type a few words" in status(page)
    watch.check()
    context.close()


def test_a_hostile_query_or_story_is_shown_as_text(browser: Any, site: Path) -> None:
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page)
    count = "document.querySelectorAll('img, iframe, svg, object, embed').length"

    query = '"<img src=x onerror=alert(1)>'
    watch.open(search_url(site, query))
    assert status(page) == f"No stories match “{query}”."
    assert page.evaluate(count) == 0
    page.fill("#q", "</mark><img src=x onerror=alert(2)> <b>")
    assert page.evaluate(count) == 0

    # The attacker's title, found: listed as the text it is, the matched part marked.
    page.fill("#q", "<script>alert('title')")
    (hit,) = results(page)
    assert hit["title"] == HOSTILE_TITLE
    assert hit["titleMarks"] == ["<script>alert('title')"]
    assert "<img src=" in hit["snippet"]
    assert page.evaluate(count) == 0
    assert page.evaluate("[...document.scripts].map(s => s.getAttribute('src'))") == [
        SEARCH_INDEX,
        SEARCH_SCRIPT,
    ]
    assert page.evaluate("document.querySelectorAll('[onerror], [onmouseover]').length") == 0
    watch.check()
    context.close()


def test_search_works_from_the_static_host(browser: Any, static_host: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page)
    watch.open(static_host + "index.html")
    page.click("nav >> text=Search")
    page.wait_for_load_state("load")
    assert page.url == static_host + SEARCH
    page.fill("#q", "crème")
    page.press("#q", "Enter")
    page.wait_for_url("**/search.html?q=cr%C3%A8me")
    (hit,) = results(page)
    assert hit["href"] == static_host + story_path(DESSERT_DAY, DESSERT_ID)
    assert hit["titleMarks"] == ["Crème"]
    watch.open(hit["href"])
    watch.check()
    context.close()


def test_searching_ten_thousand_stories_stays_quick(
    browser: Any, site: Path, tmp_path: Path
) -> None:
    for name in (SEARCH, SEARCH_SCRIPT, STYLESHEET):
        shutil.copy(site / name, tmp_path / name)
    editions = [make_edition(DAY - timedelta(days=i), stories=5) for i in range(500)]
    index = render_search_index([clean_edition(e) for e in editions])
    (tmp_path / SEARCH_INDEX).write_bytes(index)
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page)

    started = time.perf_counter()
    watch.open(search_url(tmp_path, "flood barrier"))
    opened = time.perf_counter() - started
    assert status(page).startswith("500 stories match"), status(page)
    assert len(results(page)) == 100
    started = time.perf_counter()
    page.fill("#q", "the")  # the worst case: every story matches
    typed = time.perf_counter() - started
    assert status(page).startswith("10000 stories match")
    page.fill("#q", "zebra")
    assert status(page).startswith("No stories match")
    print(f"\n10,000 stories, {len(index):,} bytes: opened and searched in {opened:.2f} s, "
          f"a search matching all of them {typed:.2f} s")  # fmt: skip
    assert opened < 5 and typed < 2
    watch.check()
    context.close()
