"""The fast extraction pass against the local news web: what a user of `query`/`collect` sees."""

from __future__ import annotations

import asyncio
import time
from html import unescape

import pytest

from digest.config import FetchConfig
from digest.fetch.client import HttpClient
from digest.fetch.fast import FastExtractor
from digest.fetch.parsers import ParserPool
from digest.models import Headline
from tests.newsweb import ARTICLES, META_ONLY_DESCRIPTION, NewsWeb

# The promise is 1.5 s for the whole call; the slack only absorbs a noisy machine's scheduling.
PROMISE = 1.5
SLACK = 0.3

TECH = [a for a in ARTICLES if a.category == "technology"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def opening(article_lede: str) -> str:
    return unescape(article_lede)[:80]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def extractor(
    http_client: HttpClient, fetch_config: FetchConfig, parsers: ParserPool, clock: FakeClock
) -> FastExtractor:
    return FastExtractor(http_client, fetch_config, parsers, clock=clock)


async def test_hanging_host_keeps_its_search_result(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    urls = [news_web.url(a.path) for a in TECH] + [
        news_web.url("/slow.html"),
        news_web.url("/hang.html"),
    ]
    started = time.perf_counter()
    results = await extractor.extract(urls)
    wall = time.perf_counter() - started

    assert wall < PROMISE + SLACK
    assert [r.url for r in results] == urls
    for article, result in zip(TECH, results[:4], strict=True):
        assert result.status == "ok", result
        assert result.full_content.startswith(opening(article.lede))
    assert results[4].status == "ok"  # 0.25 s late is within its own budget
    assert results[5].status == "timeout"
    assert results[5].full_content == ""


async def test_lede_is_the_article_not_the_cookie_notice(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    chip = ARTICLES[0]
    (result,) = await extractor.extract([news_web.url(chip.path)])
    assert result.full_content.startswith(opening(chip.lede))
    assert "cookie" not in result.full_content.lower()
    assert "newsletter" not in result.full_content.lower()
    # The first paragraph sits behind >64 KB of scripts: the reader had to go past 64 KB.
    assert result.bytes_read > 64 * 1024


async def test_many_hanging_pages_still_return_every_result_within_the_budget(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    urls = [news_web.url(f"/hang.html?n={i}") for i in range(12)] + [news_web.url(ARTICLES[1].path)]
    started = time.perf_counter()
    results = await extractor.extract(urls)
    assert time.perf_counter() - started < PROMISE + SLACK
    assert len(results) == len(urls)
    assert {r.status for r in results[:-1]} <= {"timeout", "skipped"}
    assert all(r.full_content == "" for r in results[:-1])
    # Two connections per host: the article waited behind the hanging pages and was skipped
    # or fetched, but it never made the call late and never took another page's place.
    assert results[-1].url == urls[-1]


async def test_gzip_bomb_is_stopped_at_the_page_cap(
    news_web: NewsWeb, extractor: FastExtractor, fetch_config: FetchConfig
) -> None:
    (result,) = await extractor.extract([news_web.url("/bomb.html")])
    assert result.bytes_read <= fetch_config.max_page_bytes
    assert result.status in ("empty", "timeout")
    assert result.full_content == ""


@pytest.mark.parametrize("path", ["/redirect/metadata", "/redirect/private"])
async def test_redirect_to_a_private_address_is_blocked(
    news_web: NewsWeb, extractor: FastExtractor, path: str
) -> None:
    (result,) = await extractor.extract([news_web.url(path)])
    assert result.status == "blocked"
    assert result.error is not None and "allow_private_networks" in result.error
    assert result.full_content == ""


@pytest.mark.parametrize("slug", ["cafe-culture", "tokyo-robots"])
async def test_legacy_encodings_declared_in_meta_are_decoded(
    news_web: NewsWeb, extractor: FastExtractor, slug: str
) -> None:
    article = news_web.article(slug)
    (result,) = await extractor.extract([news_web.url(article.path)])
    assert result.status == "ok"
    assert result.full_content.startswith(opening(article.lede)[:40])
    assert "\ufffd" not in result.full_content


@pytest.mark.parametrize("path", ["/reports/annual.pdf", "/reports/mislabeled", "/image.png"])
async def test_pdf_and_images_are_not_decoded_as_text(
    news_web: NewsWeb, extractor: FastExtractor, path: str
) -> None:
    (result,) = await extractor.extract([news_web.url(path)])
    assert result.status == "not_html"
    assert result.full_content == ""
    assert result.http_status == 200


async def test_page_without_article_falls_back_to_its_description(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    (result,) = await extractor.extract([news_web.url("/teaser.html")])
    assert result.status == "meta"
    assert result.full_content == META_ONLY_DESCRIPTION


async def test_article_already_received_from_a_stalled_page_is_kept(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    (result,) = await extractor.extract([news_web.url("/stalls.html")])
    assert result.status == "ok"
    assert result.full_content.startswith(opening(ARTICLES[0].lede))


async def test_cache_hit_makes_no_request(news_web: NewsWeb, extractor: FastExtractor) -> None:
    url = news_web.url(ARTICLES[2].path)
    first = await extractor.extract([url])
    assert news_web.hits[ARTICLES[2].path] == 1
    second = await extractor.extract([url, url])
    assert news_web.hits[ARTICLES[2].path] == 1
    assert second == [first[0], first[0]]


async def test_cached_content_expires(
    news_web: NewsWeb, extractor: FastExtractor, clock: FakeClock, fetch_config: FetchConfig
) -> None:
    url = news_web.url(ARTICLES[2].path)
    await extractor.extract([url])
    clock.now += fetch_config.cache_ttl
    await extractor.extract([url])
    assert news_web.hits[ARTICLES[2].path] == 2


async def test_failed_page_is_skipped_until_its_failure_expires(
    news_web: NewsWeb, extractor: FastExtractor, clock: FakeClock, fetch_config: FetchConfig
) -> None:
    url = news_web.url("/broken.html")
    (first,) = await extractor.extract([url])
    assert (first.status, first.http_status) == ("error", 500)
    (second,) = await extractor.extract([url])
    assert second.status == "skipped"
    assert news_web.hits["/broken.html"] == 1
    clock.now += fetch_config.failure_ttl
    (third,) = await extractor.extract([url])
    assert third.status == "error"
    assert news_web.hits["/broken.html"] == 2


async def test_one_timeout_is_not_a_permanent_blacklist(
    news_web: NewsWeb, extractor: FastExtractor, clock: FakeClock, fetch_config: FetchConfig
) -> None:
    url = news_web.url("/hang.html")
    assert (await extractor.extract([url]))[0].status == "timeout"
    assert (await extractor.extract([url]))[0].status == "skipped"
    clock.now += fetch_config.failure_ttl
    news_web.routes["/hang.html"].hang = False  # the site recovered
    news_web.routes["/hang.html"].body = b"<html><body><p>back</p></body></html>"
    result = (await extractor.extract([url]))[0]
    assert result.status in ("empty", "ok")
    assert news_web.hits["/hang.html"] == 2


async def test_not_found_is_an_error_with_its_status(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    (result,) = await extractor.extract([news_web.url("/missing.html")])
    assert (result.status, result.http_status, result.full_content) == ("error", 404, "")


async def test_invalid_urls_keep_their_place(news_web: NewsWeb, extractor: FastExtractor) -> None:
    urls = ["ftp://example.com/x", news_web.url(ARTICLES[0].path), "not a url"]
    results = await extractor.extract(urls)
    assert [r.url for r in results] == urls
    assert [r.status for r in results] == ["error", "ok", "error"]
    assert news_web.total_hits == 1


async def test_redirected_page_records_where_it_ended(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    (result,) = await extractor.extract([news_web.url("/redirect/3")])
    assert result.status == "ok"
    assert result.final_url == news_web.url(ARTICLES[0].path)
    assert result.http_status == 200
    assert result.elapsed > 0


async def test_enrich_pairs_each_headline_with_its_page(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    headlines = [
        Headline(title=a.title, url=news_web.url(a.path), category=a.category) for a in TECH[:2]
    ] + [Headline(title="Gone", url=news_web.url("/hang.html"))]
    items = await extractor.enrich(headlines)
    assert [i.headline for i in items] == headlines
    assert items[0].to_json()["full_content"].startswith(opening(TECH[0].lede))
    assert items[2].to_json()["extract_status"] == "timeout"


async def test_empty_call_returns_nothing(extractor: FastExtractor) -> None:
    assert await extractor.extract([]) == []


@pytest.mark.slow
async def test_pages_of_one_call_share_the_budget_not_just_each_its_own(
    news_web: NewsWeb, parsers: ParserPool
) -> None:
    # A tight call budget: the whole call stops at it, whatever the per-page budgets.
    config = FetchConfig(
        allowed_networks=["127.0.0.1/32"], pages_budget=0.3, call_budget=0.5, per_host_connections=1
    )
    async with HttpClient(config) as http:
        extractor = FastExtractor(http, config, parsers)
        urls = [news_web.url(f"/slow.html?n={i}") for i in range(4)]
        started = time.perf_counter()
        results = await extractor.extract(urls)
    assert time.perf_counter() - started < 0.5 + SLACK
    assert results[0].status == "ok"
    assert all(r.status in ("timeout", "skipped") for r in results[1:])


async def test_caller_giving_up_takes_the_page_requests_down(
    news_web: NewsWeb, extractor: FastExtractor
) -> None:
    call = asyncio.create_task(extractor.extract([news_web.url("/hang.html")]))
    await asyncio.sleep(0.1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.sleep(0)
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("fast:")]


async def test_a_pass_where_most_pages_were_late_blames_no_site(
    news_web: NewsWeb, http_client: HttpClient, fetch_config: FetchConfig, parsers: ParserPool
) -> None:
    """Every page of a pass late at once is what a loaded machine looks like from inside: the
    next pass reads the same pages again instead of skipping them (and their site) as failing."""
    config = fetch_config.model_copy(update={"per_host_connections": 4})
    extractor = FastExtractor(http_client, config, parsers)
    pages = TECH[:4]
    for a in pages:
        news_web.set_latency(a.path, config.request_timeout + 0.2)
    urls = [news_web.url(a.path) for a in pages]
    assert {r.status for r in await extractor.extract(urls)} == {"timeout"}
    for a in pages:
        news_web.set_latency(a.path, 0.0)
    again = await extractor.extract(urls)
    assert [r.status for r in again] == ["ok"] * len(pages)
    assert all(news_web.hits[a.path] == 2 for a in pages)
