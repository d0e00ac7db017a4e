"""Deep crawl without a browser: HTTP mode, robots.txt, PDFs, the SSRF guard, limits, main text.

The browser half is in tests/test_crawl_browser.py.
"""

from __future__ import annotations

import asyncio
import gzip
import inspect
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from digest.config import CrawlConfig
from digest.crawl import BrowserUnavailableError, Crawler, extract_main_text
from digest.crawl.browser import Rendered, chromium_processes
from digest.crawl.crawler import judge_render
from digest.crawl.egress import GUARD_HEADER, EgressProxy
from digest.crawl.pdf import looks_like_pdf, pdf_to_text
from digest.crawl.robots import RobotsRules
from digest.errors import PdfError
from digest.fetch.client import HttpClient
from digest.fetch.guard import AddressPolicy
from tests.newsweb import ARTICLES, Route, pdf_document, render_article

CHIP = ARTICLES[0]
HTTP_MODE = CrawlConfig(mode="http", page_timeout=5)


def report_pdf(*lines: str) -> bytes:
    """A valid one-page PDF with several lines of text and a /Title (tiny_pdf has one line)."""
    return pdf_document(list(lines), title="Water use report 2024", size=20)


REPORT_LINES = (
    "Halvard Microsystems water use report",
    "The plant recycled ninety percent of its cooling water in 2024.",
    "River temperature stayed within permitted limits all summer.",
)


# -- HTTP mode -------------------------------------------------------------------------------


async def test_http_mode_reads_the_article_without_a_browser(news_web, fetch_config, http_client):
    before = chromium_processes()
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        assert crawler.mode == "http"
        assert "crawl.mode" in crawler.mode_reason
        [page] = await crawler.crawl([news_web.url(CHIP.path)])
    assert page.ok, page.error
    assert page.fetched_by == "http" and page.kind == "html" and page.http_status == 200
    assert page.title == CHIP.title
    assert CHIP.lede in page.text
    assert all(p in page.text for p in CHIP.paragraphs)
    assert "cookies" not in page.text and "newsletter" not in page.text
    assert "Related stories" not in page.text
    assert chromium_processes() == before


async def test_every_url_gets_its_page_in_order_and_failures_stay_on_their_page(
    news_web, fetch_config, http_client
):
    urls = [
        news_web.url(CHIP.path),
        news_web.url("/missing.html"),
        "ftp://127.0.0.1/file",
        news_web.url("/image.png"),
        news_web.url("/redirect/3"),
        "not a url",
        news_web.url("/technology/open-model.html"),
        news_web.url("/café.html"),  # fetched percent-encoded, reported as given
    ]
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        pages = await crawler.crawl(urls)
    assert [p.url for p in pages] == urls
    ok = [p.ok for p in pages]
    assert ok == [True, False, False, False, True, False, True, False]
    assert "caf%C3%A9" in (pages[7].error or "")
    assert "HTTP 404" in (pages[1].error or "")
    assert "only http and https" in (pages[2].error or "")
    assert "image/png" in (pages[3].error or "")
    assert pages[4].final_url.endswith(CHIP.path) and CHIP.lede in pages[4].text
    assert pages[5].error
    assert pages[6].title == ARTICLES[1].title


async def test_legacy_encodings_come_out_as_text(news_web, fetch_config, http_client):
    cafe, tokyo = ARTICLES[6], ARTICLES[7]
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        pages = await crawler.crawl([news_web.url(cafe.path), news_web.url(tokyo.path)])
    assert cafe.lede in pages[0].text
    assert tokyo.lede[:40] in pages[1].text


@pytest.mark.parametrize(
    "target",
    ["http://10.0.0.1/admin", "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/"],
)
async def test_private_addresses_are_refused(target, fetch_config, http_client):
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        [page] = await crawler.crawl([target])
    assert not page.ok
    assert "blocked address" in (page.error or "")


async def test_redirect_to_a_private_address_is_refused(news_web, fetch_config, http_client):
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        pages = await crawler.crawl(
            [news_web.url("/redirect/private"), news_web.url("/redirect/metadata")]
        )
    assert all("blocked address" in (p.error or "") for p in pages)


async def test_a_hanging_page_times_out_alone(news_web, fetch_config, http_client):
    config = CrawlConfig(mode="http", page_timeout=1.0)
    async with Crawler(config, fetch_config, http_client) as crawler:
        started = time.monotonic()
        hang, good = await crawler.crawl([news_web.url("/hang.html"), news_web.url(CHIP.path)])
        elapsed = time.monotonic() - started
    assert "timed out" in (hang.error or "")
    assert good.ok
    assert elapsed < 2.5


class Gauge:
    """A local server that counts how many requests it is answering at once."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.now = 0
        self.peak = 0
        self.served = 0

    async def handle(self, request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await asyncio.sleep(self.delay)
            self.served += 1
            return web.Response(body=render_article(CHIP), content_type="text/html")
        finally:
            self.now -= 1


@pytest_asyncio.fixture
async def gauge() -> AsyncIterator[tuple[Gauge, str]]:
    counter = Gauge(delay=0.15)
    app = web.Application()
    app.router.add_get("/{tail:.*}", counter.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield counter, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_no_more_pages_at_once_than_the_concurrency_allows(gauge, fetch_config):
    counter, base = gauge
    config = CrawlConfig(mode="http", concurrency=2, page_timeout=5)
    fetch = fetch_config.model_copy(update={"per_host_connections": 16})
    async with HttpClient(fetch) as http, Crawler(config, fetch, http) as crawler:
        pages = await crawler.crawl([f"{base}/a/{i}" for i in range(7)])
    assert all(p.ok for p in pages)
    assert counter.served == 7
    assert counter.peak == 2


# -- browser availability --------------------------------------------------------------------


async def test_auto_mode_without_a_browser_says_so_and_reads_over_http(
    news_web, fetch_config, http_client, caplog
):
    config = CrawlConfig(mode="auto", executable_path="/nonexistent/chromium", page_timeout=5)
    with caplog.at_level(logging.WARNING, logger="digest.crawl"):
        async with Crawler(config, fetch_config, http_client) as crawler:
            assert crawler.mode == "http"
            assert "/nonexistent/chromium" in crawler.mode_reason
            [page] = await crawler.crawl([news_web.url(CHIP.path)])
    assert page.ok and page.fetched_by == "http"
    assert any("HTTP mode" in r.getMessage() for r in caplog.records)


async def test_browser_mode_fails_loudly_without_a_browser(fetch_config, http_client):
    config = CrawlConfig(mode="browser", executable_path="/nonexistent/chromium")
    with pytest.raises(BrowserUnavailableError, match="/nonexistent/chromium"):
        async with Crawler(config, fetch_config, http_client):
            pass


def test_executable_hook_point_is_still_where_crawl4ai_launches_chromium(tmp_path: Path):
    """We monkeypatch crawl4ai (pinned ==0.9.5) to set Playwright's executable_path: when an
    upgrade moves the launch, this fails instead of crawl4ai silently ignoring the setting."""
    from digest.crawl.browser import (
        HOOK_CLASS,
        HOOK_METHOD,
        import_crawl4ai,
        install_executable_hook,
    )

    c4 = import_crawl4ai(tmp_path)
    from crawl4ai import browser_manager

    manager_cls = getattr(browser_manager, HOOK_CLASS)
    assert f"self.{HOOK_METHOD}()" in inspect.getsource(manager_cls._start_impl), (
        f"crawl4ai {c4.__version__} no longer launches Chromium with {HOOK_CLASS}.{HOOK_METHOD}"
    )
    try:
        install_executable_hook("/opt/some/chromium")
        manager = manager_cls(c4.BrowserConfig(headless=True, verbose=False))
        args = getattr(manager, HOOK_METHOD)()
        assert args["executable_path"] == "/opt/some/chromium"
        assert "args" in args and "headless" in args
        install_executable_hook(None)
        assert "executable_path" not in getattr(manager, HOOK_METHOD)()
    finally:
        install_executable_hook(None)


# -- robots.txt ------------------------------------------------------------------------------


async def test_robots_txt_is_honoured_and_fetched_once_per_host(
    news_web, fetch_config, http_client
):
    news_web.add(
        Route(
            "/robots.txt",
            # The group naming our user agent applies, not the catch-all one.
            b"User-agent: *\nDisallow: /technology/\n\nUser-agent: digest\nDisallow: /world/\n",
            content_type="text/plain",
        )
    )
    world = [news_web.url(a.path) for a in ARTICLES if a.category == "world"]
    config = CrawlConfig(mode="http", respect_robots=True, page_timeout=5)
    async with Crawler(config, fetch_config, http_client) as crawler:
        pages = await crawler.crawl([news_web.url(CHIP.path), *world])
    assert pages[0].ok
    assert all(p.error == "disallowed by robots.txt" for p in pages[1:])
    assert news_web.hits["/robots.txt"] == 1
    assert all(news_web.hits[a.path] == 0 for a in ARTICLES if a.category == "world")

    ignoring = CrawlConfig(mode="http", respect_robots=False, page_timeout=5)
    async with Crawler(ignoring, fetch_config, http_client) as crawler:
        [page] = await crawler.crawl(world[:1])
    assert page.ok


@pytest.mark.parametrize(
    ("status", "allowed"),
    [(404, True), (410, True), (500, True), (503, True), (401, False), (403, False)],
)
async def test_robots_txt_status_decides_when_there_are_no_rules(
    status, allowed, news_web, fetch_config, http_client
):
    news_web.add(Route("/robots.txt", b"nope", status=status, content_type="text/plain"))
    robots = RobotsRules(http_client, fetch_config.user_agent)
    assert await robots.allowed(news_web.url(CHIP.path)) is allowed


async def test_unreachable_robots_txt_allows(fetch_config, http_client):
    robots = RobotsRules(http_client, fetch_config.user_agent, timeout=1)
    assert await robots.allowed("http://127.0.0.1:9/page.html")


async def test_robots_rules_are_cached_with_a_ttl(news_web, fetch_config, http_client):
    news_web.add(Route("/robots.txt", b"User-agent: *\nDisallow: /x/\n", content_type="text/plain"))
    now = [0.0]
    robots = RobotsRules(http_client, fetch_config.user_agent, ttl=60, clock=lambda: now[0])
    await asyncio.gather(*(robots.allowed(news_web.url(f"/x/{i}")) for i in range(5)))
    assert news_web.hits["/robots.txt"] == 1
    now[0] = 61.0
    assert not await robots.allowed(news_web.url("/x/again"))
    assert news_web.hits["/robots.txt"] == 2


# -- PDFs ------------------------------------------------------------------------------------


def test_test_pdf_is_valid_and_multi_line():
    data = report_pdf(*REPORT_LINES)
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")


async def test_pdf_is_converted_to_text_by_type_and_by_magic(news_web, fetch_config, http_client):
    data = report_pdf(*REPORT_LINES)
    news_web.add(Route("/docs/report.pdf", data, content_type="application/pdf"))
    news_web.add(Route("/docs/report.html", data, content_type="text/html"))  # mislabelled
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        pages = await crawler.crawl(
            [
                news_web.url("/docs/report.pdf"),
                news_web.url("/docs/report.html"),
                news_web.url("/reports/annual.pdf"),  # the news web's own tiny_pdf()
            ]
        )
    for page in pages:
        assert page.ok, page.error
        assert page.kind == "pdf" and page.fetched_by == "http" and page.http_status == 200
    for page in pages[:2]:
        assert page.title == "Water use report 2024"
        for line in REPORT_LINES:
            assert line in page.text
    assert pages[2].text == "Annual report 2024"


async def test_garbage_pdf_gives_a_clear_error(news_web, fetch_config, http_client):
    news_web.add(
        Route(
            "/docs/broken.pdf", b"%PDF-1.7\n" + b"\x00garbage" * 500, content_type="application/pdf"
        )
    )
    news_web.add(
        Route(
            "/docs/truncated.pdf", report_pdf(*REPORT_LINES)[:300], content_type="application/pdf"
        )
    )
    news_web.add(Route("/docs/notpdf.pdf", b"<html>hello</html>", content_type="application/pdf"))
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        pages = await crawler.crawl(
            [
                news_web.url(p)
                for p in ("/docs/broken.pdf", "/docs/truncated.pdf", "/docs/notpdf.pdf")
            ]
        )
    for page in pages:
        assert not page.ok
        assert page.kind == "pdf"
    assert "not a readable PDF" in (pages[0].error or "")
    assert "not a readable PDF" in (pages[1].error or "")
    assert "not a PDF" in (pages[2].error or "")


async def test_pdf_over_the_size_limit_is_refused(news_web, fetch_config, http_client):
    big = report_pdf(*REPORT_LINES) + b"%" + b"x" * 20_000 + b"\n"
    news_web.add(Route("/docs/big.pdf", big, content_type="application/pdf"))
    news_web.add(Route("/docs/big-chunked.pdf", big, content_type="application/pdf", chunked=True))
    config = CrawlConfig(mode="http", max_pdf_bytes=10_000, page_timeout=5)
    async with Crawler(config, fetch_config, http_client) as crawler:
        pages = await crawler.crawl(
            [news_web.url("/docs/big.pdf"), news_web.url("/docs/big-chunked.pdf")]
        )
    assert all("over the 10000 byte limit" in (p.error or "") for p in pages)


async def test_pdf_conversion_has_time_and_memory_limits():
    data = report_pdf(*REPORT_LINES)
    with pytest.raises(PdfError, match="longer than"):
        await pdf_to_text(data, timeout=0.05, memory_mb=512)
    with pytest.raises(PdfError, match="MB"):
        await pdf_to_text(data, timeout=30, memory_mb=64)


def test_pdfs_are_recognised_by_type_or_magic():
    assert looks_like_pdf("application/pdf", b"")
    assert looks_like_pdf("text/html", b"%PDF-1.5\n...")
    assert looks_like_pdf("", b"\xef\xbb\xbf%PDF-1.4")
    assert not looks_like_pdf("text/html", b"<!DOCTYPE html>")


# -- main text and the judge of rendered pages ----------------------------------------------


def test_main_text_keeps_the_article_and_drops_the_boilerplate():
    html = render_article(CHIP).decode()
    main = extract_main_text(html, "http://example.org/a.html")
    assert main.title == CHIP.title
    assert main.text.startswith(CHIP.lede[:40])
    assert CHIP.paragraphs[-1] in main.text
    for boilerplate in ("Accept all", "morning newsletter", "All rights reserved", "Podcasts"):
        assert boilerplate not in main.text


@pytest.mark.parametrize("html", ["", "   ", "<html></html>", "\x00\x01garbage<<<"])
def test_main_text_of_nothing_is_empty(html):
    main = extract_main_text(html)
    assert main.text == ""


def rendered(html: str = "<p>x</p>", *, final: str = "http://a.example/", status: int = 200):
    return Rendered("http://a.example/", final, html, status)


@pytest.mark.parametrize(
    ("page", "text", "http_text", "verdict"),
    [
        (rendered(), "Article text " * 20, "Article text " * 20, None),
        (rendered(), "Article text " * 20, "", None),
        (rendered(final="chrome-error://chromewebdata/"), "x" * 300, "", "error page"),
        (rendered('<div id="main-frame-error">'), "x" * 300, "", "network error page"),
        (rendered(status=404), "x" * 300, "", "HTTP 404"),
        (rendered(""), "", "", "empty"),
        (rendered(), "", "Article " * 50, "no article text"),
        (rendered(), "Consent wall", "Article text " * 50, "far less text"),
        (Rendered("u", "u", "", None, "navigation failed"), "", "", "navigation failed"),
    ],
)
def test_rendered_pages_are_judged_not_trusted(page, text, http_text, verdict):
    result = judge_render(page, text, http_text)
    if verdict is None:
        assert result is None
    else:
        assert result is not None and verdict in result


# -- the browser's egress proxy (no browser needed to test it) -------------------------------


async def test_egress_proxy_refuses_private_addresses_and_passes_allowed_ones(news_web):
    policy = AddressPolicy(allowed_networks=["127.0.0.1/32"])
    async with EgressProxy(policy) as proxy, aiohttp.ClientSession() as session:
        async with session.get(news_web.url(CHIP.path), proxy=proxy.url) as resp:
            assert resp.status == 200
            assert CHIP.lede.encode() in await resp.read()
        async with session.get("http://10.0.0.1/admin", proxy=proxy.url) as resp:
            assert resp.status == 403
            assert resp.headers[GUARD_HEADER] == "blocked"
        async with session.get("http://127.0.0.2:9/", proxy=proxy.url) as resp:
            assert resp.status == 403  # loopback beyond the allowed 127.0.0.1
        with pytest.raises(aiohttp.ClientHttpProxyError) as err:
            await session.get("https://169.254.169.254/", proxy=proxy.url)  # CONNECT
        assert err.value.status == 403
    hosts = [r.host for r in proxy.refusals]
    assert hosts == ["10.0.0.1", "127.0.0.2", "169.254.169.254"]


async def test_egress_proxy_relays_post_bodies_and_redirects(news_web):
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=f"got {len(await request.read())} bytes")

    app = web.Application()
    app.router.add_post("/echo", echo)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        policy = AddressPolicy(allowed_networks=["127.0.0.1/32"])
        async with EgressProxy(policy) as proxy, aiohttp.ClientSession() as session:
            async with session.post(
                f"http://127.0.0.1:{port}/echo", data=b"x" * 100_000, proxy=proxy.url
            ) as resp:
                assert await resp.text() == "got 100000 bytes"
            async with session.get(
                news_web.url("/redirect/private"), proxy=proxy.url, allow_redirects=True
            ) as resp:
                assert resp.status == 403  # the hop to 10.0.0.1 went through the proxy too
    finally:
        await runner.cleanup()


PROXY_CAP = 256 * 1024


async def test_egress_proxy_cuts_plain_http_bodies_at_the_cap_counting_decoded_bytes(news_web):
    policy = AddressPolicy(allowed_networks=["127.0.0.1/32"])
    hostile = ["/endless.html", "/one-line.html", "/bomb.html", "/huge-chunked.html"]
    async with (
        EgressProxy(policy, max_body_bytes=PROXY_CAP) as proxy,
        aiohttp.ClientSession() as session,
    ):
        for path in hostile:
            async with asyncio.timeout(10), session.get(news_web.url(path), proxy=proxy.url) as r:
                assert r.status == 200
                assert "Content-Encoding" not in r.headers  # the bomb comes decoded, and cut
                body = await r.read()
            assert len(body) == PROXY_CAP, path
            assert body.startswith((b"<!DOCTYPE html>", b"<html>")), path
        article = render_article(CHIP)
        news_web.add(Route("/gzipped.html", gzip.compress(article), gzip=True))
        for path in (CHIP.path, "/gzipped.html"):  # under the cap: all of it
            async with session.get(news_web.url(path), proxy=proxy.url) as r:
                assert await r.read() == article
    assert [cut.url for cut in proxy.cuts] == [news_web.url(path) for path in hostile]
    assert proxy.relayed == 4 * PROXY_CAP + 2 * len(article)


@pytest_asyncio.fixture
async def tunnel_target() -> AsyncIterator[int]:
    """A TCP server behind a CONNECT tunnel: after the line "endless" it sends bytes for ever,
    after "bursts" two bursts of 3/4 of the cap with a quiet second between them."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        mode = await reader.readline()
        try:
            if mode == b"endless\n":
                while True:
                    writer.write(b"x" * 65536)
                    await writer.drain()
            for _ in range(2):
                writer.write(b"y" * (3 * PROXY_CAP // 4))
                await writer.drain()
                await asyncio.sleep(1.0)
        except ConnectionError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def _through_tunnel(proxy: EgressProxy, port: int, mode: bytes) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    try:
        writer.write(
            f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        )
        assert b" 200 " in await reader.readuntil(b"\r\n\r\n")
        writer.write(mode)
        got = 0
        async with asyncio.timeout(10):
            while data := await reader.read(65536):
                got += len(data)
        return got
    finally:
        writer.close()


async def test_egress_proxy_cuts_a_tunnel_that_never_stops_but_not_one_that_pauses(tunnel_target):
    policy = AddressPolicy(allowed_networks=["127.0.0.1/32"])
    async with EgressProxy(policy, max_body_bytes=PROXY_CAP) as proxy:
        assert await _through_tunnel(proxy, tunnel_target, b"endless\n") == PROXY_CAP
    assert [cut.url for cut in proxy.cuts] == [f"https://127.0.0.1:{tunnel_target}"]
    # A reused tunnel carries page after page: the count starts again after a quiet spell.
    async with EgressProxy(policy, max_body_bytes=PROXY_CAP, tunnel_quiet=0.5) as proxy:
        assert await _through_tunnel(proxy, tunnel_target, b"bursts\n") == 6 * PROXY_CAP // 4
    assert not proxy.cuts


async def test_crawl_never_raises_for_a_page(monkeypatch, news_web, fetch_config, http_client):
    async def boom(*args, **kwargs):
        raise RuntimeError("extractor exploded")

    monkeypatch.setattr("digest.crawl.crawler.Crawler._http_main_text", boom)
    async with Crawler(HTTP_MODE, fetch_config, http_client) as crawler:
        [page] = await crawler.crawl([news_web.url(CHIP.path)])
    assert page.error and "extractor exploded" in page.error
