"""The DuckDuckGo adapter, tested at the `DDGS` boundary (DuckDuckGo is unreachable from tests)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import primp
import pytest
from ddgs import DDGS
from ddgs.engines import ENGINES
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from digest.config import SourcesConfig
from digest.errors import ConfigError, InvalidQueryError, NetworkUnreachableError, SourceError
from digest.sources.ddg import DuckDuckGo, parse_published
from tests.fake_ddgs import ddgs_no_network_error

# How a failure names what ddgs tried for news: its engines for news (ddgs 9.16: bing,
# duckduckgo, yahoo), any of which may be the one whose error is re-raised.
NEWS = "ddgs: " + ", ".join(sorted(ENGINES["news"]))

Behaviour = list[dict[str, Any]] | BaseException | Callable[[], list[dict[str, Any]]]


class FakeDDGS:
    """Stands in for `ddgs.DDGS`: answers each call with the next scripted behaviour."""

    def __init__(self, *script: Behaviour) -> None:
        self.script = list(script)
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self) -> FakeDDGS:  # used as the factory: one "DDGS()" per call
        return self

    def _answer(self, method: str, query: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        self.calls.append((method, query, kwargs))
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            return step()
        return step

    def news(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._answer("news", query, kwargs)

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._answer("text", query, kwargs)


class Sleeps:
    """Records the back-off delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def news_row(n: int, **over: Any) -> dict[str, Any]:
    row = {
        "date": f"2025-03-0{n % 9 + 1}T08:30:00+00:00",
        "title": f"Markets move {n}",
        "body": f"Stocks did something {n}.",
        "url": f"https://news{n}.example.com/story/{n}",
        "image": f"https://img.example.com/{n}.jpg",
        "source": f"Outlet {n}",
    }
    return {**row, **over}


def text_row(n: int) -> dict[str, Any]:
    return {
        "title": f"Python asyncio guide {n}",
        "href": f"https://www.site{n}.example.org/page",
        "body": f"About asyncio {n}",
    }


def source(fake: FakeDDGS, sleeps: Sleeps | None = None, **cfg: Any) -> DuckDuckGo:
    config = SourcesConfig(**{"ddg_backoff": 2.0, "ddg_retries": 2, **cfg})
    return DuckDuckGo(config, ddgs_factory=fake, sleep=sleeps or Sleeps())


async def test_news_results_become_headlines_with_category_image_and_utc_date() -> None:
    fake = FakeDDGS([news_row(1, date="2025-03-01T08:30:00-05:00"), news_row(2)])
    headlines = await source(fake).news("finance")

    first = headlines[0]
    assert first.title == "Markets move 1"
    assert first.url == "https://news1.example.com/story/1"
    assert first.source == "Outlet 1"
    assert first.snippet == "Stocks did something 1."
    assert first.image == "https://img.example.com/1.jpg"
    assert first.category == "finance"
    assert first.origin == "ddg:news"
    assert first.published == datetime(2025, 3, 1, 13, 30, tzinfo=UTC)
    assert first.published.utcoffset() is not None


async def test_news_asks_for_todays_window_with_configured_query_region_and_safesearch() -> None:
    fake = FakeDDGS([news_row(1)])
    ddg = source(
        fake, queries={"finance": "markets stocks economy"}, region="uk-en", safesearch="Off"
    )
    await ddg.news("finance")

    method, query, kwargs = fake.calls[0]
    assert (method, query) == ("news", "markets stocks economy")
    assert kwargs["timelimit"] == "d"
    assert kwargs["region"] == "uk-en"
    assert kwargs["safesearch"] == "off"


async def test_category_without_a_configured_query_searches_category_news() -> None:
    fake = FakeDDGS([news_row(1)])
    await source(fake).news("sports")
    assert fake.calls[0][1] == "sports news"


async def test_news_never_returns_more_than_max_results() -> None:
    fake = FakeDDGS([news_row(n) for n in range(30)])
    ddg = source(fake, results_per_category=8)

    assert len(await ddg.news("finance")) == 8
    assert len(await ddg.news("finance", max_results=3)) == 3
    assert all(call[2]["max_results"] >= 3 for call in fake.calls)


async def test_search_returns_at_most_k_results_and_asks_for_at_least_k() -> None:
    fake = FakeDDGS([text_row(n) for n in range(20)])
    results = await source(fake).search("python asyncio", k=4)

    assert [h.title for h in results] == [f"Python asyncio guide {n}" for n in range(4)]
    method, query, kwargs = fake.calls[0]
    assert (method, query) == ("text", "python asyncio")
    assert kwargs["max_results"] >= 4


async def test_search_results_carry_snippet_and_site_as_source() -> None:
    fake = FakeDDGS([text_row(1)])
    [h] = await source(fake).search("python asyncio")
    assert h.url == "https://www.site1.example.org/page"
    assert h.snippet == "About asyncio 1"
    assert h.source == "site1.example.org"
    assert h.origin == "ddg:text"
    assert h.category is None


async def test_k_counts_results_after_duplicates_are_removed() -> None:
    rows = [text_row(1), text_row(1), text_row(2), text_row(2), text_row(3)]
    results = await source(FakeDDGS(rows)).search("python asyncio", k=3)
    assert len(results) == 3
    assert len({h.url for h in results}) == 3


async def test_duplicate_urls_appear_once() -> None:
    rows = [
        news_row(1),
        news_row(1, title="Same story, other title"),
        news_row(1, url="HTTPS://NEWS1.example.com/story/1/#comments"),
        news_row(2),
    ]
    headlines = await source(FakeDDGS(rows)).news("finance")
    assert [h.url for h in headlines] == [
        "https://news1.example.com/story/1",
        "https://news2.example.com/story/2",
    ]
    assert headlines[0].title == "Markets move 1"


async def test_results_without_title_or_usable_url_are_dropped() -> None:
    rows = [
        news_row(1, title=""),
        news_row(2, url=""),
        news_row(3, url="javascript:alert(1)"),
        {"title": "no url at all"},
        news_row(4),
    ]
    headlines = await source(FakeDDGS(rows)).news("finance")
    assert [h.title for h in headlines] == ["Markets move 4"]


async def test_missing_image_and_unreadable_date_become_none() -> None:
    rows = [news_row(1, image="", date="sometime last week")]
    [h] = await source(FakeDDGS(rows)).news("finance")
    assert h.image is None
    assert h.published is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2025-03-01T08:30:00+00:00", datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("2025-03-01T08:30:00Z", datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("2025-03-01T10:30:00+02:00", datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("2025-03-01T08:30:00", datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("2025-03-01", datetime(2025, 3, 1, tzinfo=UTC)),
        (1740817800, datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("1740817800", datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        (1740817800000, datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("Sat, 01 Mar 2025 08:30:00 GMT", datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("Sat, 01 Mar 2025 09:30:00 +0100", datetime(2025, 3, 1, 8, 30, tzinfo=UTC)),
        ("2 hours ago, maybe", None),
        ("", None),
        (None, None),
        ("2025", None),
    ],
)
def test_published_dates_are_read_in_the_formats_ddgs_returns(
    raw: Any, expected: datetime | None
) -> None:
    assert parse_published(raw) == expected


async def test_rate_limited_twice_then_answers_after_two_backoffs() -> None:
    sleeps = Sleeps()
    fake = FakeDDGS(RatelimitException("202"), RatelimitException("202"), [news_row(1)])
    headlines = await source(fake, sleeps, ddg_backoff=2.0).news("finance")

    assert [h.title for h in headlines] == ["Markets move 1"]
    assert len(fake.calls) == 3
    assert len(sleeps.delays) == 2
    assert 2.0 <= sleeps.delays[0] <= 3.0  # backoff × 2^0, plus jitter
    assert 4.0 <= sleeps.delays[1] <= 6.0  # backoff × 2^1, plus jitter


async def test_always_rate_limited_gives_up_naming_the_source_after_all_attempts() -> None:
    sleeps = Sleeps()
    fake = FakeDDGS(RatelimitException("202 Ratelimit"))
    with pytest.raises(SourceError) as info:
        await source(fake, sleeps, ddg_retries=2).news("finance")

    assert str(info.value) == f"news search for 'finance' ({NEWS}): rate limited after 3 attempts"
    assert len(fake.calls) == 3
    assert len(sleeps.delays) == 2


async def test_missing_search_token_counts_as_rate_limiting() -> None:
    vqd = DDGSException("_extract_vqd() query='finance news' Could not extract vqd.")
    fake = FakeDDGS(DDGSException(vqd), [news_row(1)])
    assert len(await source(fake).news("finance")) == 1
    assert len(fake.calls) == 2


async def test_ddgs_timeout_is_retried() -> None:
    fake = FakeDDGS(TimeoutException("timed out"), [news_row(1)])
    headlines = await source(fake).news("finance")
    assert len(headlines) == 1
    assert len(fake.calls) == 2


async def test_zero_retries_means_one_attempt() -> None:
    fake = FakeDDGS(TimeoutException("timed out"))
    with pytest.raises(SourceError, match="timed out after 1 attempts"):
        await source(fake, ddg_retries=0).search("anything")
    assert len(fake.calls) == 1


async def test_a_hung_call_fails_quickly_once_ddg_timeout_passes() -> None:
    release = threading.Event()  # a thread cannot be killed: the test lets it go at the end

    def hung() -> list[dict[str, Any]]:
        release.wait(10)
        return [news_row(1)]

    fake = FakeDDGS(hung)
    started = time.monotonic()
    try:
        with pytest.raises(SourceError) as info:
            await source(fake, ddg_timeout=0.1, ddg_retries=1).news("finance")
        elapsed = time.monotonic() - started
    finally:
        release.set()

    assert elapsed < 2
    assert str(info.value) == (
        f"news search for 'finance' ({NEWS}): no answer within 0.1 s after 2 attempts"
    )


async def test_no_network_raises_network_unreachable_at_once() -> None:
    sleeps = Sleeps()
    fake = FakeDDGS(ddgs_no_network_error())
    with pytest.raises(NetworkUnreachableError) as info:
        await source(fake, sleeps).news("finance")

    assert str(info.value) == (
        f"news search for 'finance' ({NEWS}) failed: DNS lookup failed for duckduckgo.com (is "
        "this machine offline?)"
    )
    assert "\n" not in str(info.value)
    assert len(fake.calls) == 1
    assert sleeps.delays == []


async def test_refused_connection_is_network_unreachable_too() -> None:
    primp_err = primp.ConnectError("error sending request for url (https://duckduckgo.com/)")
    inner = DDGSException(f"ConnectError: {primp_err!r}")
    inner.__cause__ = primp_err
    with pytest.raises(NetworkUnreachableError, match="connection failed"):
        await source(FakeDDGS(DDGSException(inner))).search("anything")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("kind", "search"), [("news", "news"), ("text", "search")])
async def test_a_failure_of_real_ddgs_names_its_backends_and_the_host_it_could_not_reach(
    kind: str, search: str
) -> None:
    # The real DDGS, every engine's request sent to a closed port on loopback (as a proxy):
    # ddgs tries each engine of the kind, then re-raises the last engine's error.
    proxy = f"http://127.0.0.1:{closed_port()}"
    adapter = DuckDuckGo(
        SourcesConfig(categories=["finance"], ddg_retries=0),
        ddgs_factory=lambda: DDGS(proxy=proxy, timeout=5),  # type: ignore[arg-type]
    )
    with pytest.raises(NetworkUnreachableError) as info:
        await getattr(adapter, search)("finance")

    message = str(info.value)
    backends = ", ".join(sorted(ENGINES[kind]))
    assert message.startswith(f"{'news' if kind == 'news' else 'web'} search for 'finance' ")
    assert f"(ddgs: {backends}) failed: connection failed for " in message
    # The host named is one of the engines' own, and the message does not say DuckDuckGo's
    # unless it is.
    host = message.split("connection failed for ", 1)[1].split(" ", 1)[0]
    sites = {_site(urlsplit(e.search_url).hostname or "") for e in ENGINES[kind].values()}
    assert _site(host) in sites, host
    assert "DuckDuckGo" not in message


def _site(host: str) -> str:
    return ".".join(host.split(".")[-2:])


async def test_no_results_from_ddgs_is_an_empty_list_not_an_error() -> None:
    fake = FakeDDGS(DDGSException("No results found."))
    assert await source(fake).news("finance") == []


async def test_other_ddgs_errors_fail_with_one_line_naming_the_source() -> None:
    fake = FakeDDGS(DDGSException(DDGSException("JSONDecodeError: Expecting value\n line 1")))
    with pytest.raises(SourceError) as info:
        await source(fake).news("finance")
    assert str(info.value) == (
        f"news search for 'finance' ({NEWS}) failed: JSONDecodeError: Expecting value line 1"
    )
    assert not isinstance(info.value, NetworkUnreachableError)


async def test_empty_query_is_refused_before_calling_ddgs() -> None:
    fake = FakeDDGS([text_row(1)])
    with pytest.raises(InvalidQueryError, match="query is empty"):
        await source(fake).search("   ")
    with pytest.raises(InvalidQueryError, match="query for category 'finance' is empty"):
        await source(fake, queries={"finance": " "}).news("finance")
    assert fake.calls == []


@pytest.mark.parametrize("bad", [0, -1])
async def test_non_positive_limits_are_refused(bad: int) -> None:
    fake = FakeDDGS([text_row(1)])
    with pytest.raises(ValueError, match="k must be a positive integer"):
        await source(fake).search("x", k=bad)
    with pytest.raises(ValueError, match="max_results must be a positive integer"):
        await source(fake).news("finance", max_results=bad)


def test_unknown_safesearch_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"sources\.safesearch must be one of on, moderate, off"):
        source(FakeDDGS([]), safesearch="strict")


async def test_calls_run_off_the_event_loop() -> None:
    """A slow DDGS call must not stall other tasks (ddgs is synchronous)."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    def slow() -> list[dict[str, Any]]:
        time.sleep(0.2)
        return [news_row(1)]

    task = asyncio.create_task(ticker())
    try:
        await source(FakeDDGS(slow)).news("finance")
    finally:
        task.cancel()
    assert ticks >= 5
