"""The fast extraction pass: a lede for every search result, within a hard time budget.

Every URL gets its own deadline and its own `Extract`; a page that is late, fails or is refused
keeps its place with an empty `full_content`, so a slow site never costs the other results.
Pages are read adaptively: the article's first paragraph sits a median 53 KB into real news HTML
(p90 181 KB), so `find_lede` is tried after 64 KB, then at every doubling up to
`fetch.max_page_bytes`, and reading stops at the first article lede.

The page's own name (`og:site_name`, JSON-LD publisher) and headline come with its lede: a feed's
item whose page is its publisher's own counts as that publisher, any other page another site's
is shown relayed by the feed (`digest.fetch.aggregators.page_outlet`).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import aiohttp

from digest.config import FetchConfig
from digest.errors import (
    BlockedAddressError,
    FetchError,
    FetchTimeoutError,
    InvalidURLError,
    ParseError,
    ParseOverrunError,
)
from digest.fetch.aggregators import page_outlet
from digest.fetch.cache import FailureCache, TTLCache, host_of
from digest.fetch.client import HttpClient, Stream
from digest.fetch.guard import check_url
from digest.fetch.lede import Lede, could_hold_article
from digest.fetch.parsers import ParserPool
from digest.fetch.turns import PassTurns
from digest.models import Extract, ExtractStatus, Headline, Item

FIRST_CHECK_BYTES = 64 * 1024
LEDE_CHARS = 300  # the promise: `full_content` is at most 300 characters
# Media types that may hold HTML; their first bytes are still checked for PDF/image signatures.
_SNIFFED_TYPES = frozenset(
    {"", "text/html", "application/xhtml+xml", "text/plain", "application/octet-stream"}
)
_BINARY_MAGIC = (
    b"%PDF-",
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"PK\x03\x04",
    b"RIFF",
    b"\x1f\x8b",
    b"OggS",
    b"ID3",
    b"\x00\x00\x00",  # ISO media (mp4, avif, heic) and other binary containers
)
_CACHEABLE: frozenset[ExtractStatus] = frozenset({"ok", "meta", "empty", "not_html"})
# Salvaging a late page's lede must end this long before the call's budget does; with less time
# than `_MIN_SALVAGE_TIME` left, it is not tried.
_SALVAGE_MARGIN = 0.02
_MIN_SALVAGE_TIME = 0.01
# A parse may use at least this much CPU, however little of its page's time is left (a normal
# page's lede costs 1-20 ms).
_MIN_PARSE_CPU = 0.05


@dataclass(eq=False)
class _Page:
    """What is known about one page so far; read after a deadline to salvage a partial lede."""

    url: str
    started: float | None = None
    http_status: int | None = None
    final_url: str | None = None
    charset: str | None = None
    buf: bytearray = field(default_factory=bytearray)
    parse_by: float = 0.0  # loop time by which any parse of this page must be over
    lede: Lede | None = None
    lede_at: int = -1  # len(buf) when `lede` was computed
    parse_stopped: bool = False  # a parse of this page outlasted its time: do not try again
    # The request's own deadline. A parse is not the page's wall time: while one runs the
    # deadline is `parse_cap`, and it moves on by as long as the parse took, up to `parse_cap`;
    # the parse itself is judged by the CPU time its parser had (see `FastExtractor._lede`).
    timer: asyncio.Timeout | None = None
    parse_cap: float = 0.0
    result: Extract | None = None
    host_fault: bool = False  # failed by the host's doing, not cut short by the call's budget
    # Gives back the page's connection slot for its host (once): after the last byte is read,
    # the last parse needs no connection, and the host's other pages may go.
    leave_host: Callable[[], None] = lambda: None


class FastExtractor:
    """Fetch pages concurrently and return a lede for each, never taking more than the call budget.

    Holds a content cache (a hit makes no request) and a failure cache (a failed URL is skipped
    until its entry expires; a host failing repeatedly is skipped as a whole for a while).
    Pages are parsed by `parsers`, in child processes, never on the event loop.
    """

    def __init__(
        self,
        http: HttpClient,
        config: FetchConfig,
        parsers: ParserPool,
        *,
        lede_chars: int = LEDE_CHARS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.http = http
        self.config = config
        self.parsers = parsers
        self.lede_chars = lede_chars
        self.content_cache: TTLCache[str, Extract] = TTLCache(
            config.cache_size, config.cache_ttl, clock=clock
        )
        self.failures = FailureCache(config.failure_ttl, clock=clock)
        self._timeout = aiohttp.ClientTimeout(
            total=config.request_timeout,
            sock_connect=config.connect_timeout,
            sock_read=config.read_timeout,
        )
        self._host_slots: weakref.WeakValueDictionary[str, asyncio.Semaphore] = (
            weakref.WeakValueDictionary()
        )
        # Held by callers whose passes must take turns (a worker's extraction tasks): passes
        # run at once share the host slots and the CPU, and under load all of them are late.
        self.turn = PassTurns()

    async def warm(self, *, wait: bool = False) -> None:
        """Start the parser processes now, so that they import while the caller is busy with
        something else (a search, the feeds): a cold start on a loaded machine can take longer
        than a page's whole budget. `wait`: until they are ready."""
        await self.parsers.start(wait=wait)

    async def enrich(self, headlines: Sequence[Headline]) -> list[Item]:
        """Each headline with what its page yielded, in the same order."""
        extracts = await self.extract([h.url for h in headlines])
        return [Item(_named_by_page(h, e), e) for h, e in zip(headlines, extracts, strict=True)]

    async def extract(self, urls: Sequence[str]) -> list[Extract]:
        """One `Extract` per URL, same order (duplicates are fetched once), within `call_budget`."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        call_deadline = start + self.config.call_budget
        pages_deadline = start + min(self.config.pages_budget, self.config.call_budget)

        done: dict[str, Extract] = {}
        pages: dict[str, _Page] = {}
        for url in dict.fromkeys(urls):
            early = self._without_fetching(url)
            if early is not None:
                done[url] = early
            else:
                pages[url] = _Page(url)

        if pages:
            await self.parsers.start()  # workers import while the first requests go out
        tasks = {
            asyncio.create_task(
                self._run(page, pages_deadline, call_deadline), name=f"fast:{page.url}"
            ): page
            for page in pages.values()
        }
        try:
            if tasks:
                budget = max(0.0, pages_deadline - loop.time())
                _, pending = await asyncio.wait(tasks, timeout=budget)
                for task in pending:
                    task.cancel()
                if pending:
                    # Cancelled requests unwind in microseconds; never wait past the call budget.
                    grace = max(0.0, call_deadline - loop.time() - 0.05)
                    await asyncio.wait(pending, timeout=grace)
        finally:
            for task in tasks:  # the caller gave up (cancelled us): take the requests down too
                task.cancel()

        late = [page for page in pages.values() if page.result is None]
        if late:  # cut off by the pages' budget: salvage a lede from what was read, in time
            salvaged = await asyncio.gather(
                *(self._late(page, deadline=call_deadline - _SALVAGE_MARGIN) for page in late)
            )
            for page, result in zip(late, salvaged, strict=True):
                page.result = result
        # Most of the pass's pages late: the fault is this machine's or its network's (a loaded
        # CPU makes every page late), not each host's; their hosts are not counted as failing,
        # else one busy minute would have every host skipped for `failure_ttl`.
        started = [p for p in pages.values() if p.started is not None]
        late_ones = sum(1 for p in started if p.result is not None and p.result.status == "timeout")
        ours = late_ones > 1 and 2 * late_ones > len(started)
        for page in pages.values():
            assert page.result is not None
            done[page.url] = page.result
            if ours and page.result.status == "timeout":
                page.host_fault = False
            self._remember(page)
        return [done[url] for url in urls]

    def _without_fetching(self, url: str) -> Extract | None:
        """A result known without a request: invalid URL, cached content or a recent failure."""
        try:
            check_url(url)
        except InvalidURLError as err:
            return Extract(url=url, status="error", error=str(err))
        cached = self.content_cache.get(url)
        if cached is not None:
            return cached
        failure = self.failures.check(url)
        if failure is not None:
            return Extract(url=url, status="skipped", error=f"recent failure: {failure.reason}")
        return None

    async def _run(self, page: _Page, deadline: float, call_deadline: float) -> None:
        loop = asyncio.get_running_loop()
        slots = self._host_slots.get(host_of(page.url))
        if slots is None:
            slots = asyncio.Semaphore(self.config.per_host_connections)
            self._host_slots[host_of(page.url)] = slots
        await slots.acquire()
        left = False

        def leave_host() -> None:
            nonlocal left
            if not left:
                left = True
                slots.release()

        page.leave_host = leave_host
        try:
            page.started = loop.time()
            own_deadline = page.started + self.config.request_timeout
            # A parse under way at the page's deadline is stopped by it (and its worker killed);
            # the parser's own limit is the call's, so a salvage may still use the time left.
            page.parse_by = call_deadline - _SALVAGE_MARGIN
            try:
                page.parse_cap = deadline
                try:
                    async with asyncio.timeout_at(min(own_deadline, deadline)) as page.timer:
                        page.result = await self._fetch(page)
                finally:
                    page.timer = None  # a salvage after the deadline must not move it
            except FetchTimeoutError as err:  # the request's own connect/read/total timeout
                page.host_fault = True
                page.result = await self._late(page, deadline=page.parse_by, reason=str(err))
            except ParseOverrunError as err:  # its parse used the page's time in CPU
                page.host_fault = True
                page.result = await self._late(page, deadline=page.parse_by, reason=str(err))
            except ParseError as err:  # the page's HTML broke or outlasted its parser
                page.result = self._finish(page, "error", error=str(err))
            except TimeoutError:
                page.host_fault = own_deadline <= deadline
                page.result = await self._late(page, deadline=page.parse_by)
            except BlockedAddressError as err:
                page.result = self._finish(page, "blocked", error=str(err))
            except (FetchError, InvalidURLError) as err:
                page.host_fault = page.http_status is None  # refused, reset, unresolvable...
                page.result = self._finish(page, "error", error=str(err))
        finally:
            leave_host()

    async def _fetch(self, page: _Page) -> Extract:
        async with self.http.open(
            page.url, max_bytes=self.config.max_page_bytes, timeout=self._timeout
        ) as stream:
            page.http_status, page.final_url = stream.status, stream.final_url
            page.charset = stream.charset
            if not 200 <= stream.status < 300:
                return self._finish(page, "error", error=f"HTTP {stream.status}")
            if stream.content_type not in _SNIFFED_TYPES:
                return self._finish(page, "not_html", error=stream.content_type)
            return await self._read(page, stream)

    async def _read(self, page: _Page, stream: Stream) -> Extract:
        next_check = FIRST_CHECK_BYTES
        sniffed = False
        async for chunk in stream.iter_chunks():
            page.buf += chunk
            if not sniffed and len(page.buf) >= 16:
                sniffed = True
                if _looks_binary(page.buf):
                    return self._finish(page, "not_html", error="binary content")
            if len(page.buf) >= next_check:
                # News pages often open with over 64 KB of scripts: no parse of those.
                if (
                    could_hold_article(page.buf)
                    and (await self._lede(page, page.parse_by)).kind == "article"
                ):
                    return self._finish(page, "ok")
                while next_check <= len(page.buf):
                    next_check *= 2
        if not sniffed and _looks_binary(page.buf):
            return self._finish(page, "not_html", error="binary content")
        page.leave_host()  # all read
        kind = (await self._lede(page, page.parse_by)).kind
        status: ExtractStatus = "ok" if kind == "article" else "meta" if kind == "meta" else "empty"
        return self._finish(page, status)

    async def _lede(self, page: _Page, deadline: float) -> Lede:
        """The lede of what was read so far, parsed by `deadline` (else ParseTimeoutError)."""
        if page.lede is None or page.lede_at != len(page.buf):
            size = len(page.buf)
            loop = asyncio.get_running_loop()
            began = loop.time()
            # The page's time left is its parse's allowance of CPU, not of wall time: on a busy
            # machine a parser may wait for a core longer than it parses. The request's own
            # deadline moves to `parse_cap` (the pages' budget) meanwhile, then on by as long
            # as the parse took, up to `parse_cap`.
            timer, due = page.timer, page.timer.when() if page.timer else None
            allowance = None
            if timer is not None and due is not None:
                allowance = max(due - began, _MIN_PARSE_CPU)
                timer.reschedule(page.parse_cap)
            page.parse_stopped = True  # until the parse is over
            page.lede = await self.parsers.lede(
                bytes(page.buf), page.charset, self.lede_chars, timeout=deadline - began,
                cpu_timeout=allowance,
            )  # fmt: skip
            if timer is not None and due is not None:
                timer.reschedule(min(due + loop.time() - began, page.parse_cap))
            page.lede_at, page.parse_stopped = size, False
        return page.lede

    async def _late(self, page: _Page, *, deadline: float, reason: str | None = None) -> Extract:
        """A page cut off by a deadline: keep an article lede already in the partial HTML,
        if it can be parsed by `deadline`."""
        if page.started is None:
            return self._finish(page, "skipped", error="no time left before this page's turn")
        now = asyncio.get_running_loop().time()
        if page.buf and not page.parse_stopped and deadline - now > _MIN_SALVAGE_TIME:
            try:
                lede = await self._lede(page, deadline)
            except ParseError:
                lede = None
            if lede is not None and lede.kind == "article":
                return self._finish(
                    page,
                    "ok",
                    error=f"timed out; lede from the first {len(page.buf)} bytes",
                    now=now,
                )
        waited = now - page.started
        return self._finish(
            page, "timeout", error=reason or f"no complete answer within {waited:.2f} s", now=now
        )

    def _finish(
        self,
        page: _Page,
        status: ExtractStatus,
        *,
        error: str | None = None,
        now: float | None = None,
    ) -> Extract:
        loop = asyncio.get_running_loop()
        content = page.lede.text if status in ("ok", "meta") and page.lede is not None else ""
        elapsed = 0.0 if page.started is None else (now or loop.time()) - page.started
        return Extract(
            url=page.url,
            full_content=content,
            status=status,
            http_status=page.http_status,
            final_url=page.final_url,
            error=error,
            bytes_read=len(page.buf),
            elapsed=round(elapsed, 4),
            site_name=page.lede.site if page.lede is not None else "",
            page_title=page.lede.title if page.lede is not None else "",
        )

    def _remember(self, page: _Page) -> None:
        result = page.result
        if result is None:
            return
        if result.status in _CACHEABLE:
            self.content_cache.put(page.url, result)
            self.failures.record_success(page.url)
        elif result.status in ("timeout", "error") and (page.host_fault or result.http_status):
            # A page cut short by the call's budget says nothing about its host; a 404 says
            # something about the page only; a 5xx, a refusal or a timeout about the host too.
            host_trouble = page.host_fault or (result.http_status or 0) >= 500
            self.failures.record_failure(
                page.url, result.error or result.status, count_for_host=host_trouble
            )
        elif result.status == "blocked":
            self.failures.record_failure(page.url, result.error or "blocked", count_for_host=False)


def _named_by_page(headline: Headline, extract: Extract) -> Headline:
    """The headline with the outlet its page names (`page_outlet`): its own, or relayed."""
    source = page_outlet(
        headline.source,
        feed=headline.feed,
        feed_url=headline.origin.removeprefix("feed:"),
        url=extract.final_url or headline.url,
        site_name=extract.site_name,
        link=headline.url,
        title=headline.title,
        page_title=extract.page_title,
    )
    return headline if source == headline.source else headline.with_(source=source)


def _looks_binary(head: bytes | bytearray) -> bool:
    start = bytes(head[:64]).lstrip()
    return any(start.startswith(magic) for magic in _BINARY_MAGIC)
