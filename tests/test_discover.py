"""Finding a site's feed from its page: the advertised links, and fetching through the guard."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.config import FetchConfig
from digest.errors import BlockedAddressError, FeedError, InvalidURLError, NoFeedFoundError
from digest.fetch.client import HttpClient
from digest.sources.discover import advertised_feeds, find_feed

PAGE = "https://news.example/section/index.html"


def test_rss_and_atom_links_are_found_in_page_order_and_made_absolute() -> None:
    page = """<!doctype html><html><head>
<link rel="stylesheet" href="/site.css">
<link rel="alternate" type="application/atom+xml" title="Atom" href="atom.xml">
<LINK TYPE='application/rss+xml; charset=utf-8' REL='Alternate Feed' HREF='/rss?a=1&amp;b=2'>
<link rel=alternate type=application/rdf+xml href=//cdn.example/rdf>
<link rel="alternate" type="text/html" hreflang="de" href="/de/">
<link rel="alternate" type="application/json" href="/feed.json">
<link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
<link rel="alternate" type="application/rss+xml" href="">
<link rel="alternate" type="application/rss+xml" href="atom.xml">
</head><body><link rel="alternate" type="application/rss+xml" href="/late.xml"></body></html>"""
    assert advertised_feeds(page, PAGE) == [
        "https://news.example/section/atom.xml",
        "https://news.example/rss?a=1&b=2",
        "https://cdn.example/rdf",
    ]


def test_a_base_element_moves_relative_links() -> None:
    page = """<head><base href="https://static.example/feeds/">
<base href="https://ignored.example/">
<link rel="alternate" type="application/rss+xml" href="all.rss"></head>"""
    assert advertised_feeds(page, PAGE) == ["https://static.example/feeds/all.rss"]


def test_a_page_without_feed_links_advertises_nothing() -> None:
    assert (
        advertised_feeds("<html><head><title>x</title></head><body>rss</body></html>", PAGE) == []
    )
    assert advertised_feeds("", PAGE) == []


def test_a_page_built_to_be_slow_to_scan_is_scanned_quickly() -> None:
    hostile = "<link " + "a" * 5000 + ("<link rel=alternate " * 50_000)
    started = time.perf_counter()
    assert advertised_feeds(hostile, PAGE) == []
    assert time.perf_counter() - started < 2.0


@settings(max_examples=200)
@given(st.text(max_size=500))
def test_any_page_gives_a_list_of_http_urls(page: str) -> None:
    for url in advertised_feeds("<head>" + page, PAGE):
        assert url.startswith(("http://", "https://"))


# --- fetching ----------------------------------------------------------------------------------


async def test_a_feed_url_is_taken_as_it_is(news_web, http_client) -> None:
    url = news_web.url("/feeds/technology.rss")
    found = await find_feed(http_client, url)
    assert (found.url, found.page_url) == (url, None)
    assert found.feed.title == "The Local Ledger: technology"
    assert found.feed.headlines


async def test_a_home_page_gives_its_first_advertised_feed(news_web, http_client) -> None:
    page = news_web.url("/site/")  # advertises "../feeds/technology.rss", then an Atom feed
    found = await find_feed(http_client, page)
    assert found.url == news_web.url("/feeds/technology.rss")
    assert found.page_url == page


async def test_an_advertised_feed_that_is_broken_or_gone_gives_way_to_the_next(
    news_web, http_client
) -> None:
    for path in ("/site/broken-first.html", "/site/missing-first.html"):
        found = await find_feed(http_client, news_web.url(path))
        assert found.url in (
            news_web.url("/feeds/world.atom"),
            news_web.url("/feeds/technology.rss"),
        )
    based = await find_feed(http_client, news_web.url("/site/based.html"))
    assert based.url == news_web.url("/feeds/world.atom")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/site/none.html", "the page advertises none"),
        ("/missing.html", "not found: "),
        ("/image.png", "is not a feed or a web page: it is image/png"),
        ("/reports/annual.pdf", "is not a feed or a web page: it is application/pdf"),
    ],
)
async def test_what_is_no_feed_says_so(news_web, http_client, path: str, message: str) -> None:
    with pytest.raises(NoFeedFoundError, match=message):
        await find_feed(http_client, news_web.url(path))


async def test_a_page_whose_feeds_all_fail_names_the_first_failure(news_web, http_client) -> None:
    from tests.newsweb import Route, site_page

    news_web.add(
        Route("/site/all-broken.html", site_page(("application/rss+xml", "/feeds/broken.xml")))
    )
    with pytest.raises(NoFeedFoundError, match=r"the 1 feed it advertises cannot be read \(feed"):
        await find_feed(http_client, news_web.url("/site/all-broken.html"))


async def test_the_address_guard_applies(news_web) -> None:
    async with HttpClient(FetchConfig()) as guarded:  # loopback not allowed
        with pytest.raises(FeedError) as caught:
            await find_feed(guarded, news_web.url("/site/"))
        with pytest.raises(InvalidURLError):
            await find_feed(guarded, "file:///etc/passwd")
    assert isinstance(caught.value.__cause__, BlockedAddressError)
    assert "blocked address" in str(caught.value)
