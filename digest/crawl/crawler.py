"""The deep crawl: each URL read in depth, as one `Page`, however it had to be fetched.

For every URL, in order: the URL check, robots.txt, then a guarded HTTP fetch (which also tells
PDFs from HTML and is the fallback), then, in browser mode, Chromium. The browser's result is
judged rather than trusted: an error page (`chrome-error://`, a JavaScript redirect somewhere
unreachable, an HTTP error), an empty article, or far less text than the plain fetch found all
fall back to the HTTP-fetched page. A page longer than `max_page_bytes` is read over HTTP up to
there and not rendered (the browser's copy would be cut at the same limit), and `Page.note` says
so. A failure of one page is that page's `error`; `crawl` never raises for it.

    async with Crawler(config.crawl, config.fetch, http) as crawler:
        pages = await crawler.crawl(urls)     # same order, one Page per URL
        crawler.mode, crawler.mode_reason     # "browser"/"http" and why
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

import aiohttp

from digest.config import CrawlConfig, FetchConfig
from digest.crawl.browser import Browser, Rendered
from digest.crawl.pdf import looks_like_pdf, pdf_to_text
from digest.crawl.robots import RobotsRules
from digest.errors import (
    BlockedAddressError,
    BrowserUnavailableError,
    FetchError,
    FetchTimeoutError,
    InvalidURLError,
    ParseError,
    PdfError,
)
from digest.fetch.client import HttpClient, parse_content_type
from digest.fetch.decode import decode_html
from digest.fetch.guard import AddressPolicy, check_url
from digest.fetch.maintext import MainText
from digest.fetch.parsers import ParserPool
from digest.models import Page
from digest.runtime import metrics

log = logging.getLogger(__name__)

Mode = Literal["browser", "http"]

HTML_TYPES = frozenset({"", "text/html", "application/xhtml+xml", "text/plain"})
SNIFF_BYTES = 1024
# A rendered page with less than this share of the text the plain fetch found is not trusted
# (a consent wall, an error page, a JavaScript redirect to an interstitial...).
MIN_RENDERED_SHARE = 0.5
# Chromium's own network error page, whatever URL it is shown under.
_CHROME_ERROR_MARKER = 'id="main-frame-error"'


@dataclass
class _Fetched:
    """A page as fetched over HTTP (body capped)."""

    url: str
    final_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    cap: int  # the limit `body` was read to


class Crawler:
    """Deep reads of pages: browser when available, plain HTTP otherwise (see module docs)."""

    def __init__(
        self,
        config: CrawlConfig,
        fetch: FetchConfig,
        http: HttpClient,
        *,
        work_dir: Path | None = None,
        browser_args: Sequence[str] = (),
        browser: Browser | None = None,
        parsers: ParserPool | None = None,
    ) -> None:
        self.config = config
        self.fetch = fetch
        self.http = http
        self.work_dir = work_dir
        self.browser_args = tuple(browser_args)
        self.mode: Mode = "http"
        self.mode_reason = "not started"
        self._browser = browser  # given: shared and not closed here
        self._owns_browser = False
        # Main text is extracted in child processes (given: shared and not closed here).
        # One worker per page in flight, so that no page waits for another page's parse.
        self._parsers = parsers or ParserPool(size=config.concurrency, preload=("main_text",))
        self._owns_parsers = parsers is None
        self._robots: RobotsRules | None = None
        self._slots = asyncio.Semaphore(config.concurrency)
        self._started = False

    async def __aenter__(self) -> Crawler:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        self._started = True
        if self.config.respect_robots:
            self._robots = RobotsRules(self.http, self.fetch.user_agent)
        if self._browser is not None:
            self.mode, self.mode_reason = "browser", "Chromium (shared browser)"
            return
        if self.config.mode == "http":
            self.mode, self.mode_reason = "http", 'crawl.mode = "http": no browser, no JavaScript'
            return
        browser = Browser(
            self.config,
            policy=AddressPolicy.from_config(self.fetch),
            user_agent=self.fetch.user_agent,
            work_dir=self.work_dir,
            extra_args=self.browser_args,
        )
        try:
            await browser.start()
        except BrowserUnavailableError as err:
            if self.config.mode == "browser":
                raise
            hint = (
                "install one (apt-get install chromium, or `playwright install chromium`) or "
                "set crawl.executable_path"
                if not self.config.executable_path
                else "check crawl.executable_path, or remove it to use the one found"
            )
            self.mode = "http"
            self.mode_reason = (
                f"no browser ({err}); pages are read over plain HTTP without JavaScript. "
                f"To use Chromium: {hint}"
            )
            log.warning("deep crawl in HTTP mode: %s", self.mode_reason)
            return
        self._browser, self._owns_browser = browser, True
        self.mode = "browser"
        self.mode_reason = f"Chromium via crawl4ai ({browser.executable or 'Playwright'})"

    async def close(self) -> None:
        browser, self._browser = self._browser, None
        try:
            if browser is not None and self._owns_browser:
                await browser.close()
        finally:
            if self._owns_parsers:
                await self._parsers.close()

    async def crawl(self, urls: Sequence[str]) -> list[Page]:
        """One `Page` per URL, in the same order; failures are in `Page.error`."""
        return list(await asyncio.gather(*(self.crawl_one(url) for url in urls)))

    async def crawl_one(self, url: str) -> Page:
        """The `Page` for `url` (its `url` is `url` as given, whatever was fetched)."""
        page = await self._crawl_one(url)
        metrics.pages_crawled.labels("ok" if page.ok else "failed").inc()
        return page if page.url == url else replace(page, url=url)

    async def _crawl_one(self, url: str) -> Page:
        if not self._started:
            raise RuntimeError("Crawler is not started; use `async with Crawler(...)`")
        async with self._slots:  # waiting for a slot does not count against the page's time
            attempt = _Attempt(url)
            try:
                async with asyncio.timeout(self.config.page_timeout):
                    result = await self._read(url, attempt)
                if isinstance(result, _Fetched):  # a PDF: converted under its own time limit
                    return await self._pdf(result)
                return result
            except TimeoutError:
                timed_out = f"timed out after {self.config.page_timeout:g} s"
                if attempt.fallback is not None and attempt.fallback.ok:
                    note = _notes(
                        attempt.fallback.note, f"{timed_out}: kept the page read over HTTP"
                    )
                    return replace(attempt.fallback, note=note)
                return _failed(url, timed_out)
            except Exception as err:  # one page's failure must never sink the batch
                log.exception("deep crawl of %s failed", url)
                return _failed(url, f"unexpected error: {err}")

    # -- one page --------------------------------------------------------------------------------

    async def _read(self, url: str, attempt: _Attempt) -> Page | _Fetched:
        """The page, or the fetched bytes of a PDF still to be converted.

        In browser mode the browser starts rendering while the HTTP fetch runs; it is cancelled
        when the fetch shows a PDF, something that is not HTML, or a refused address.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.page_timeout
        try:
            url = check_url(url)
        except InvalidURLError as err:
            return _failed(url, str(err))
        if self._robots is not None:
            refusal = await self._robots.disallowed(url)
            if refusal is not None:
                return _failed(url, refusal)

        tasks: list[asyncio.Task[Any]] = []
        render: asyncio.Task[Rendered | str] | None = None
        if self.mode == "browser" and self._browser is not None:
            render = asyncio.create_task(self._render(url, deadline))
            tasks.append(render)
        try:
            fetched: _Fetched | None = None
            fetch_error: str | None = None
            not_rendered: str | None = None
            try:
                fetched = await self._fetch(url, deadline - loop.time())
            except (BlockedAddressError, InvalidURLError, FetchTimeoutError) as err:
                return _failed(url, str(err))
            except FetchError as err:
                fetch_error = str(err)

            http_text: asyncio.Task[MainText] | None = None
            if fetched is not None:
                if looks_like_pdf(fetched.content_type, fetched.body[:SNIFF_BYTES]):
                    return fetched
                if fetched.content_type not in HTML_TYPES:
                    return _failed(
                        url,
                        f"not an HTML page or PDF ({fetched.content_type})",
                        final_url=fetched.final_url,
                        status=fetched.status,
                    )
                http_text = asyncio.create_task(self._http_main_text(fetched))
                tasks.append(http_text)
                http_text.add_done_callback(partial(_keep_fallback, attempt, url, fetched))
                if fetched.truncated and render is not None:
                    # The browser's copy would be cut at the same limit and not used: spare
                    # Chromium the megabytes (an endless body kept it parsing until the timeout).
                    render.cancel()
                    render = None
                    not_rendered = "not rendered, its copy would be cut at the same limit"
            if render is not None:
                page = await self._browser_page(url, fetched, http_text, render)
                if page is not None:
                    return page
            return await self._http_page(url, fetched, http_text, fetch_error, not_rendered)
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _fetch(self, url: str, budget: float) -> _Fetched:
        """GET with the HTTP client: PDFs up to max_pdf_bytes (or an error), HTML up to
        max_page_bytes (the rest is dropped)."""
        if budget <= 0:
            raise FetchTimeoutError(f"timed out waiting for {url}")
        pdf_cap, html_cap = self.config.max_pdf_bytes, self.config.max_page_bytes
        timeout = aiohttp.ClientTimeout(total=budget, sock_connect=min(budget, 10.0))
        async with self.http.open(
            url, max_bytes=max(pdf_cap, html_cap) + 1, timeout=timeout
        ) as stream:
            body = bytearray()
            while len(body) < SNIFF_BYTES:
                chunk = await stream.read_more()
                if not chunk:
                    break
                body += chunk
            content_type, charset = parse_content_type(stream.headers.get("Content-Type"))
            is_pdf = looks_like_pdf(content_type, bytes(body[:SNIFF_BYTES]))
            cap = pdf_cap if is_pdf else html_cap
            length = stream.content_length
            plain = stream.content_encoding in ("", "identity")
            if is_pdf and plain and length is not None and length > cap:
                raise FetchError(
                    f"{stream.final_url}: PDF is {length} bytes, over the {cap} byte limit"
                )
            while len(body) <= cap:
                chunk = await stream.read_more(min(256 * 1024, cap + 1 - len(body)))
                if not chunk:
                    break
                body += chunk
            truncated = len(body) > cap or stream.truncated
            if truncated and is_pdf:
                raise FetchError(f"{stream.final_url}: PDF is over the {cap} byte limit")
            return _Fetched(
                url=url,
                final_url=stream.final_url,
                status=stream.status,
                content_type=content_type,
                charset=charset,
                body=bytes(body[:cap]),
                truncated=truncated,
                cap=cap,
            )

    async def _http_main_text(self, fetched: _Fetched) -> MainText:
        html = decode_html(fetched.body, fetched.charset)
        return await self._main_text(html, fetched.final_url)

    async def _main_text(self, html: str, url: str) -> MainText:
        """Main text in a parser process; the page's own deadline (around every call) stops it.
        A page whose HTML breaks or outlasts the parser has no text, which the caller reports."""
        try:
            return await self._parsers.main_text(html, url, timeout=self.config.page_timeout)
        except ParseError as err:
            log.info("no main text from %s: %s", url, err)
            return MainText("", "")

    async def _http_page(
        self,
        url: str,
        fetched: _Fetched | None,
        http_text: asyncio.Task[MainText] | None,
        fetch_error: str | None,
        browser_problem: str | None = None,
    ) -> Page:
        if fetched is None or http_text is None:
            return _failed(url, _both(fetch_error or "not fetched", browser_problem))
        main = await http_text
        error = None
        if fetched.status >= 400:
            error = _both(f"HTTP {fetched.status} from {fetched.final_url}", browser_problem)
        elif not main.text:
            error = _both("no article text found", browser_problem)
        page = _page_from(url, fetched, main)
        if error is not None:
            return replace(page, text="", note=None, error=error)
        if browser_problem:
            return replace(page, note=_notes(page.note, f"browser: {browser_problem}"))
        return page

    async def _render(self, url: str, deadline: float) -> Rendered | str:
        """The rendered page, or why there is none (a problem, never an exception)."""
        assert self._browser is not None
        loop = asyncio.get_running_loop()
        reserve = min(1.0, self.config.page_timeout * 0.1)  # time left for the fallback
        budget = deadline - loop.time() - reserve
        if budget <= 0.2:
            return "no time left to render"
        try:
            return await self._browser.render(url, timeout=budget)
        except TimeoutError:
            return f"rendering took longer than {budget:.1f} s"

    async def _browser_page(
        self,
        url: str,
        fetched: _Fetched | None,
        http_text: asyncio.Task[MainText] | None,
        render: asyncio.Task[Rendered | str],
    ) -> Page | None:
        """The rendered page, or None when it is not to be trusted (the caller falls back)."""
        rendered = await render
        main = MainText("", "")
        http_main = await http_text if http_text is not None else None
        if isinstance(rendered, str):
            problem: str | None = rendered
        else:
            main = await self._main_text(rendered.html, rendered.final_url)
            problem = judge_render(rendered, main.text, http_main.text if http_main else "")
        if problem is None and isinstance(rendered, Rendered):
            return Page(
                url=url,
                final_url=rendered.final_url,
                title=main.title or (http_main.title if http_main else ""),
                text=main.text,
                kind="html",
                fetched_by="browser",
                http_status=rendered.status or (fetched.status if fetched else None),
            )
        log.info("browser result for %s not used: %s; falling back to HTTP", url, problem)
        if fetched is None:
            return _failed(url, f"browser: {problem}")
        return await self._http_page(url, fetched, http_text, None, browser_problem=problem)

    async def _pdf(self, fetched: _Fetched) -> Page:
        try:
            pdf = await pdf_to_text(
                fetched.body,
                timeout=self.config.pdf_timeout,
                memory_mb=self.config.pdf_memory_mb,
            )
        except PdfError as err:
            return _failed(
                fetched.url,
                str(err),
                final_url=fetched.final_url,
                status=fetched.status,
                kind="pdf",
            )
        return Page(
            url=fetched.url,
            final_url=fetched.final_url,
            title=pdf.title,
            text=pdf.text,
            kind="pdf",
            fetched_by="http",
            http_status=fetched.status,
        )


def _keep_fallback(attempt: _Attempt, url: str, fetched: _Fetched, task: asyncio.Task) -> None:
    """When the HTTP page's text is ready, keep it for a page that runs out of time."""
    if task.cancelled() or task.exception() is not None or fetched.status >= 400:
        return
    main = task.result()
    if main.text:
        attempt.fallback = _page_from(url, fetched, main)


@dataclass
class _Attempt:
    """What is known about a page while it is read; a timeout can still salvage `fallback`."""

    url: str
    fallback: Page | None = None


def judge_render(rendered: Rendered, text: str, http_text: str) -> str | None:
    """Why the rendered page must not be used, or None when it is good."""
    if rendered.error:
        return rendered.error
    scheme = rendered.final_url.split(":", 1)[0].lower()
    if scheme not in ("http", "https"):
        return f"the browser ended on an error page ({rendered.final_url})"
    if _CHROME_ERROR_MARKER in rendered.html[:200_000]:
        return "the browser showed its network error page"
    if rendered.status is not None and rendered.status >= 400:
        return f"HTTP {rendered.status} from {rendered.final_url}"
    if not rendered.html.strip():
        return "the rendered page is empty"
    if not text:
        return "no article text in the rendered page"
    if http_text and len(text) < MIN_RENDERED_SHARE * len(http_text):
        return (
            f"the rendered page has far less text than the HTTP fetch "
            f"({len(text)} vs {len(http_text)} characters)"
        )
    return None


def _both(problem: str, browser_problem: str | None) -> str:
    if browser_problem and browser_problem != problem:
        return f"{problem} (browser: {browser_problem})"
    return problem


def _page_from(url: str, fetched: _Fetched, main: MainText) -> Page:
    cut = f"read the first {fetched.cap} bytes of a longer page (crawl.max_page_bytes)"
    return Page(
        url=url,
        final_url=fetched.final_url,
        title=main.title,
        text=main.text,
        kind="html",
        fetched_by="http",
        http_status=fetched.status,
        note=cut if fetched.truncated else None,
    )


def _notes(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _failed(
    url: str,
    error: str,
    *,
    final_url: str | None = None,
    status: int | None = None,
    kind: Literal["html", "pdf"] = "html",
) -> Page:
    return Page(
        url=url,
        final_url=final_url or url,
        kind=kind,
        fetched_by="http",
        http_status=status,
        error=error,
    )
