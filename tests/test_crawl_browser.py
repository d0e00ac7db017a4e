"""Deep crawl with the real Chromium (Debian's /usr/bin/chromium, as CI installs it).

One browser for the whole module (a module-scoped fixture on a module-scoped event loop);
the test that checks clean-up starts its own. Without Chromium these tests are skipped, unless
the CI environment variable is set: there, a missing browser is a failure.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web as aiohttp_web

from digest.config import CrawlConfig, FetchConfig
from digest.crawl import Browser, Crawler
from digest.crawl.browser import chromium_processes, process_tree
from digest.fetch.client import HttpClient
from digest.fetch.guard import AddressPolicy
from tests.conftest import chromium_path
from tests.newsweb import ARTICLES, NewsWeb, Route, render_article

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

CHIP = ARTICLES[0]
# Chromium must not look up anything but our loopback news web.
TEST_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",)
FETCH = FetchConfig(allowed_networks=["127.0.0.1/32"])


def crawl_config(**changes: object) -> CrawlConfig:
    base = {"mode": "browser", "executable_path": chromium_path(), "page_timeout": 8.0}
    return CrawlConfig(**{**base, **changes})


LATE_PARAGRAPHS = [
    "The river authority said on Monday that the new flood barrier had held during the weekend "
    "storm, protecting about twelve thousand homes in the lower valley from the rising water.",
    "Engineers had worried that the barrier, finished only in March, would not cope with water "
    "levels that rose faster than any on record, but its gates closed as designed.",
    "Residents who had been evacuated were allowed to return on Sunday evening, and the authority "
    "said a full inspection of the embankments would follow later this month.",
]

# The article is not in the HTML: a script fetches it as JSON and writes it into the page.
LATE_PAGE = b"""<!DOCTYPE html><html><head><meta charset="utf-8">
<title>Flood barrier holds | The Local Ledger</title></head>
<body><nav><a href="/">Home</a> <a href="/world/">World</a></nav>
<main id="app"><p class="loading">Loading the story...</p></main>
<script>
fetch('/api/flood.json').then(r => r.json()).then(story => {
  const main = document.getElementById('app');
  main.innerHTML = '<article><h1></h1></article>';
  main.querySelector('h1').textContent = story.title;
  for (const text of story.paragraphs) {
    const p = document.createElement('p'); p.textContent = text;
    main.querySelector('article').appendChild(p);
  }
});
</script></body></html>"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def web() -> AsyncIterator[NewsWeb]:
    async with NewsWeb() as news_web:
        news_web.add(Route("/late/flood.html", LATE_PAGE))
        news_web.add(
            Route(
                "/api/flood.json",
                json.dumps(
                    {"title": "Flood barrier holds", "paragraphs": LATE_PARAGRAPHS}
                ).encode(),
                content_type="application/json",
            )
        )
        yield news_web


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http() -> AsyncIterator[HttpClient]:
    async with HttpClient(FETCH) as client:
        yield client


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("crawl4ai")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(work_dir: Path) -> AsyncIterator[Browser]:
    async with Browser(
        crawl_config(),
        policy=AddressPolicy.from_config(FETCH),
        user_agent=FETCH.user_agent,
        work_dir=work_dir,
        extra_args=TEST_ARGS,
    ) as shared:
        yield shared


def crawler(browser: Browser, http: HttpClient, **changes: object) -> Crawler:
    return Crawler(crawl_config(**changes), FETCH, http, browser=browser)


async def test_article_written_by_javascript_comes_out(browser, web, http):
    url = web.url("/late/flood.html")
    async with crawler(browser, http, respect_robots=False) as deep:
        assert deep.mode == "browser"
        [page] = await deep.crawl([url])
    assert page.ok, page.error
    assert page.fetched_by == "browser"
    assert page.title == "Flood barrier holds"
    for paragraph in LATE_PARAGRAPHS:
        assert paragraph in page.text
    assert "Loading" not in page.text

    # Without the browser, the same page has no article: JavaScript made the difference.
    async with Crawler(CrawlConfig(mode="http"), FETCH, http) as plain:
        [without] = await plain.crawl([url])
    assert LATE_PARAGRAPHS[0] not in without.text


async def test_static_article_is_read_by_the_browser(browser, web, http):
    async with crawler(browser, http) as deep:
        [page] = await deep.crawl([web.url("/redirect/3")])
    assert page.ok and page.fetched_by == "browser"
    assert page.final_url.endswith(CHIP.path)
    assert page.title == CHIP.title
    assert page.text.startswith(CHIP.lede[:50])
    assert "Accept all" not in page.text


async def test_javascript_redirect_to_an_unreachable_address_falls_back_to_the_http_page(
    browser, web, http
):
    teaser = (
        "Our newsroom has moved. The full story about the harbour strike continues on our new "
        "site; if you are not redirected automatically, follow the link below to keep reading."
    )
    for path, target in (
        ("/moved/plain.html", "http://127.0.0.1:9/gone"),  # nothing listens: connection refused
        ("/moved/tls.html", "https://127.0.0.1:9/gone"),  # a tunnel that fails: chrome-error://
    ):
        web.add(
            Route(
                path,
                f"""<html><head><title>We have moved</title></head><body><article>
                <p>{teaser}</p></article>
                <script>location.href = "{target}";</script></body></html>""".encode(),
            )
        )
    async with crawler(browser, http, respect_robots=False) as deep:
        pages = await deep.crawl([web.url("/moved/plain.html"), web.url("/moved/tls.html")])
    for page in pages:
        assert page.ok, page.error
        assert page.fetched_by == "http"
        assert teaser in page.text
        assert page.final_url.startswith(web.url("/moved/"))


@pytest_asyncio.fixture(loop_scope="module")
async def secret_service() -> AsyncIterator[tuple[str, list[str]]]:
    """An internal service on 127.0.0.2 (loopback, but outside the allowed 127.0.0.1/32) that
    would hand its secret to any page's script (CORS open)."""
    hits: list[str] = []

    async def secret(request: aiohttp_web.Request) -> aiohttp_web.Response:
        hits.append(request.path)
        return aiohttp_web.Response(
            text="TOP-SECRET-TOKEN", headers={"Access-Control-Allow-Origin": "*"}
        )

    app = aiohttp_web.Application()
    app.router.add_get("/{tail:.*}", secret)
    runner = aiohttp_web.AppRunner(app, access_log=None)
    await runner.setup()
    await aiohttp_web.TCPSite(runner, "127.0.0.2", 0).start()
    try:
        yield f"http://127.0.0.2:{runner.addresses[0][1]}", hits
    finally:
        await runner.cleanup()


async def test_browser_cannot_be_steered_to_private_addresses(browser, web, http, secret_service):
    secret_url, secret_hits = secret_service
    web.add(
        Route(
            "/steer/redirect.html",
            b"<html><body><p>One moment.</p>"
            b"<script>location.href='http://10.20.30.40/admin';</script></body></html>",
        )
    )
    web.add(
        Route(
            "/steer/fetch.html",
            f"""<html><body><article><p id="out">Nothing yet</p></article><script>
            fetch('{secret_url}/token').then(r => r.text())
              .then(t => {{ document.getElementById('out').textContent = 'GOT ' + t; }})
              .catch(() => {{ document.getElementById('out').textContent = 'refused'; }});
            </script></body></html>""".encode(),
        )
    )
    rendered = await browser.render(web.url("/steer/redirect.html"), timeout=8)
    assert rendered.error is not None and "blocked address" in rendered.error
    assert "10.20.30.40" in rendered.error

    fetched = await browser.render(web.url("/steer/fetch.html"), timeout=8)
    assert "TOP-SECRET-TOKEN" not in fetched.html
    assert '<p id="out">refused</p>' in fetched.html
    assert secret_hits == []
    refused = {r.host for r in browser.proxy.refusals}
    assert {"10.20.30.40", "127.0.0.2"} <= refused

    async with crawler(browser, http, respect_robots=False) as deep:
        [page] = await deep.crawl([web.url("/steer/redirect.html")])
    assert page.fetched_by == "http"  # the browser's result was refused, not trusted


async def test_a_page_that_never_settles_still_comes_back_in_time(browser, web, http):
    web.add(
        Route(
            "/busy.html",
            f"""<html><head><title>Live blog</title></head><body><article>
            <h1>Live blog</h1><p>{CHIP.lede}</p><p>{CHIP.paragraphs[0]}</p>
            <p id="clock"></p></article><script>
            setInterval(() => {{ document.getElementById('clock').textContent = Date.now(); }}, 50);
            fetch('/hang.html');
            </script></body></html>""".encode(),
        )
    )
    async with crawler(browser, http, page_timeout=4.0, respect_robots=False) as deep:
        started = time.monotonic()
        [page] = await deep.crawl([web.url("/busy.html")])
        elapsed = time.monotonic() - started
    assert page.ok and page.fetched_by == "browser"
    assert CHIP.lede in page.text
    assert elapsed < 4.0


async def test_a_page_that_hangs_times_out_and_the_browser_carries_on(browser, web, http):
    # The timeout leaves a loaded 2-core machine time to render the good page in the browser.
    async with crawler(browser, http, page_timeout=4.0, respect_robots=False) as deep:
        started = time.monotonic()
        hang, good = await deep.crawl([web.url("/hang.html"), web.url(CHIP.path)])
        elapsed = time.monotonic() - started
    assert "timed out" in (hang.error or "")
    assert good.ok and good.fetched_by == "browser"
    assert elapsed < 8.0

    with pytest.raises(TimeoutError):
        await browser.render(web.url("/hang.html"), timeout=1.0)
    after = await browser.render(web.url(CHIP.path), timeout=8)
    assert after.error is None and CHIP.lede in after.html


# A small cap keeps these tests fast; the hostile routes are far longer (endless, 10 MB).
CAP = 512 * 1024


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def capped(work_dir: Path) -> AsyncIterator[Browser]:
    """A browser whose bodies are cut at CAP (crawl.max_page_bytes)."""
    async with Browser(
        crawl_config(max_page_bytes=CAP),
        policy=AddressPolicy.from_config(FETCH),
        user_agent=FETCH.user_agent,
        work_dir=work_dir,
        extra_args=TEST_ARGS,
    ) as browser:
        yield browser


async def test_endless_and_huge_one_line_pages_come_back_in_time_with_what_was_read(
    capped, web, http
):
    config = crawl_config(max_page_bytes=CAP, page_timeout=15.0, respect_robots=False)
    relayed = capped.proxy.relayed
    async with Crawler(config, FETCH, http, browser=capped) as deep:
        started = time.monotonic()
        pages = await deep.crawl([web.url("/endless.html"), web.url("/one-line.html")])
        elapsed = time.monotonic() - started
    # Cut at the cap, neither page waits for its timeout (an endless one used to take all of it).
    assert elapsed < 15.0 / 2
    for page in pages:
        assert page.ok, page.error
        assert page.text.startswith(CHIP.lede[:50])
        assert "max_page_bytes" in (page.note or "")
    assert capped.proxy.relayed - relayed <= 2 * CAP


async def test_a_page_cannot_pull_endless_or_huge_bodies_into_the_browser(capped, web):
    web.add(
        Route(
            "/pull.html",
            b"""<html><body><article><p id="out">waiting</p></article><script>
            Promise.all(['/endless.html', '/one-line.html', '/bomb.html'].map(
              u => fetch(u).then(r => r.arrayBuffer()).then(b => b.byteLength, () => -1)))
            .then(sizes => { document.getElementById('out').textContent = 'got ' + sizes; });
            </script></body></html>""",
        )
    )
    started = time.monotonic()
    rendered = await capped.render(web.url("/pull.html"), timeout=8)
    assert f'<p id="out">got {CAP},{CAP},{CAP}</p>' in rendered.html  # the bomb counted inflated
    assert time.monotonic() - started < 8
    cut = {c.url for c in capped.proxy.cuts}
    assert {web.url(p) for p in ("/endless.html", "/one-line.html", "/bomb.html")} <= cut
    assert rendered.error is None  # the page itself was whole


async def test_concurrency_bound_holds_in_browser_mode(browser, web, http):
    paths = [f"/parallel/{i}.html" for i in range(5)]
    for path in paths:
        web.add(Route(path, render_article(CHIP, script_bytes=2000), latency=0.3))
    in_flight = 0
    peak = 0
    original = browser.render

    async def counting_render(url: str, *, timeout: float):  # noqa: ASYNC109
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await original(url, timeout=timeout)
        finally:
            in_flight -= 1

    browser.render = counting_render  # type: ignore[method-assign]
    try:
        async with crawler(browser, http, concurrency=2, respect_robots=False) as deep:
            pages = await deep.crawl([web.url(p) for p in paths])
    finally:
        del browser.render
    assert all(p.ok and p.fetched_by == "browser" for p in pages), [p.error for p in pages]
    assert peak == 2


async def test_browser_is_closed_when_the_block_raises(web, http, work_dir):
    before = set(chromium_processes())
    with pytest.raises(RuntimeError, match="digest failed mid-crawl"):
        async with Crawler(
            crawl_config(), FETCH, http, work_dir=work_dir, browser_args=TEST_ARGS
        ) as deep:
            assert deep.mode == "browser"
            own = process_tree(sorted(deep._browser.pids))  # type: ignore[union-attr]
            assert own
            await deep.crawl([web.url(CHIP.path)])
            own = process_tree(sorted(deep._browser.pids))  # type: ignore[union-attr]
            raise RuntimeError("digest failed mid-crawl")
    await asyncio.sleep(0.2)
    alive = set(chromium_processes())
    assert not (alive & set(own)), "Chromium processes left behind"
    assert alive <= before
