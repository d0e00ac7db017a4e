"""Feeds: parsing RSS/Atom bytes into headlines, and conditional fetches from a local server."""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.config import FeedConfig, FetchConfig
from digest.errors import FeedError
from digest.fetch.client import HttpClient
from digest.fetch.parsers import ParserPool
from digest.models import FeedState
from digest.sources.feeds import ParsedFeed, fetch_feed, parse_feed

RSS2 = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"
     xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>Example Times</title>
  <link>https://times.example.com/</link>
  <item>
    <title>Rivers rise &amp; towns prepare</title>
    <link>/world/rivers-rise</link>
    <description>&lt;p&gt;Heavy &lt;b&gt;rain&lt;/b&gt; fell
      overnight.&lt;/p&gt;&lt;p&gt;More   is expected.&lt;/p&gt;&lt;script&gt;evil()&lt;/script&gt;
    </description>
    <pubDate>Sat, 01 Mar 2025 09:30:00 +0100</pubDate>
    <media:content url="/img/rivers.jpg" medium="image" />
  </item>
  <item>
    <title>Budget passes</title>
    <link>https://times.example.com/politics/budget</link>
    <enclosure url="https://cdn.example.com/budget.png" type="image/png" length="1234" />
    <content:encoded><![CDATA[<div>The budget <i>passed</i> today.</div>]]></content:encoded>
  </item>
  <item><title>An entry without a link</title></item>
  <item><link>https://times.example.com/untitled</link></item>
</channel>
</rss>
"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
  <title>Example Blog</title>
  <id>urn:example:blog</id>
  <updated>2025-03-02T12:00:00Z</updated>
  <entry>
    <title type="html">Release &lt;em&gt;2.0&lt;/em&gt; is out</title>
    <link rel="alternate" href="posts/release-2" />
    <id>urn:example:release-2</id>
    <updated>2025-03-01T10:30:00+02:00</updated>
    <summary type="html">&lt;p&gt;It is &lt;a href="/x"&gt;faster&lt;/a&gt;.&lt;/p&gt;</summary>
    <media:thumbnail url="https://blog.example.org/thumbs/release.png" />
  </entry>
  <entry>
    <title>Plain entry</title>
    <link href="https://blog.example.org/feeds/posts/plain" />
    <id>urn:example:plain</id>
    <published>2025-02-28T08:00:00Z</published>
    <updated>2025-03-01T08:00:00Z</updated>
    <content type="xhtml">
      <div xmlns="http://www.w3.org/1999/xhtml"><p>Body text.</p></div>
    </content>
  </entry>
</feed>
"""

RSS1 = b"""<?xml version="1.0" encoding="utf-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://science.example.net/">
    <title>Science Daily Example</title>
    <link>https://science.example.net/</link>
    <description>Science</description>
    <items><rdf:Seq><rdf:li resource="https://science.example.net/a" /></rdf:Seq></items>
  </channel>
  <item rdf:about="https://science.example.net/a">
    <title>Comet spotted</title>
    <link>https://science.example.net/a</link>
    <description>A comet was seen.</description>
    <dc:date>2025-03-01T06:00:00-05:00</dc:date>
  </item>
</rdf:RDF>
"""

HTML_PAGE = b"""<!DOCTYPE html>
<html><head><title>Welcome</title></head>
<body><h1>Our news</h1><p>Subscribe to our <a href="/rss.xml">feed</a>.</body></html>
"""


def parse(
    body: bytes, url: str = "https://times.example.com/feeds/rss.xml", **kw: str
) -> ParsedFeed:
    return parse_feed(body, feed_url=url, category=kw.pop("category", "world"), **kw)


# --- parse_feed ---------------------------------------------------------------------------------


def test_rss2_items_become_headlines_with_resolved_links_and_clean_snippets() -> None:
    feed = parse(RSS2)

    assert feed.title == "Example Times"
    assert feed.warning is None
    first, second = feed.headlines
    assert first.title == "Rivers rise & towns prepare"
    assert first.url == "https://times.example.com/world/rivers-rise"
    assert first.snippet == "Heavy rain fell overnight. More is expected."
    assert first.published == datetime(2025, 3, 1, 8, 30, tzinfo=UTC)
    assert first.image == "https://times.example.com/img/rivers.jpg"
    assert first.source == "Example Times"
    assert first.category == "world"
    assert first.origin == "feed:https://times.example.com/feeds/rss.xml"

    assert second.snippet == "The budget passed today."
    assert second.image == "https://cdn.example.com/budget.png"
    assert second.published is None


def test_entries_without_title_or_link_are_dropped() -> None:
    titles = [h.title for h in parse(RSS2).headlines]
    assert "An entry without a link" not in titles
    assert len(titles) == 2


def test_configured_name_replaces_the_feeds_own_title_as_source() -> None:
    feed = parse(RSS2, name="The Times")
    assert {h.source for h in feed.headlines} == {"The Times"}
    assert feed.title == "Example Times"


def test_atom_entries_with_relative_links_html_titles_and_offsets() -> None:
    feed = parse(ATOM, url="https://blog.example.org/feeds/atom.xml", category="technology")

    assert feed.title == "Example Blog"
    release, plain = feed.headlines
    assert release.title == "Release 2.0 is out"
    assert release.url == "https://blog.example.org/feeds/posts/release-2"
    assert release.snippet == "It is faster."
    assert release.published == datetime(2025, 3, 1, 8, 30, tzinfo=UTC)
    assert release.image == "https://blog.example.org/thumbs/release.png"
    assert release.category == "technology"

    assert plain.published == datetime(2025, 2, 28, 8, 0, tzinfo=UTC)  # published beats updated
    assert plain.snippet == "Body text."


def test_rss1_rdf_items_are_read() -> None:
    feed = parse(RSS1, url="https://science.example.net/rss")
    [item] = feed.headlines
    assert feed.title == "Science Daily Example"
    assert item.title == "Comet spotted"
    assert item.url == "https://science.example.net/a"
    assert item.snippet == "A comet was seen."
    assert item.published == datetime(2025, 3, 1, 11, 0, tzinfo=UTC)


def test_links_resolve_against_the_url_after_redirects() -> None:
    feed = parse(RSS2, base_url="https://mirror.example.com/news/rss.xml")
    assert feed.headlines[0].url == "https://mirror.example.com/world/rivers-rise"
    assert feed.headlines[0].origin == "feed:https://times.example.com/feeds/rss.xml"


def test_long_summaries_are_cut_to_about_500_characters() -> None:
    words = " ".join(f"word{i}" for i in range(400))
    body = RSS2.replace(b"Heavy &lt;b&gt;rain&lt;/b&gt; fell", words.encode())
    snippet = parse(body).headlines[0].snippet
    assert 400 < len(snippet) <= 500
    assert snippet.endswith("…")
    assert snippet.startswith("word0 word1")


def test_header_charset_decodes_a_feed_without_an_xml_declaration() -> None:
    body = (
        "<rss version='2.0'><channel><title>Caf\u00e9 news</title><item><title>Cr\u00e8me</title>"
    )
    body += "<link>https://c.example.com/1</link></item></channel></rss>"
    feed = parse(body.encode("cp1252"), charset="windows-1252")
    assert feed.title == "Caf\u00e9 news"
    assert feed.headlines[0].title == "Cr\u00e8me"


def test_a_valid_feed_with_no_items_is_empty_not_an_error() -> None:
    body = b'<?xml version="1.0"?><rss version="2.0"><channel><title>Quiet</title></channel></rss>'
    feed = parse(body)
    assert feed.title == "Quiet"
    assert feed.headlines == ()


def test_malformed_feed_without_entries_is_a_feed_error_naming_the_feed() -> None:
    body = b'<?xml version="1.0"?><rss version="2.0"><channel><title>Broken</title><item><ti'
    with pytest.raises(FeedError) as info:
        parse(body, url="https://x.example/rss.xml")
    message = str(info.value)
    assert message.startswith("feed https://x.example/rss.xml is malformed: ")
    assert "line 1" in message
    assert "\n" not in message


def test_truncated_feed_that_still_has_entries_is_read_with_a_warning() -> None:
    feed = parse(RSS2[: RSS2.index(b"<item><title>An entry without")])
    assert [h.title for h in feed.headlines] == ["Rivers rise & towns prepare", "Budget passes"]
    assert feed.warning is not None
    assert "not well-formed" in feed.warning


def test_html_page_instead_of_a_feed_is_a_feed_error() -> None:
    with pytest.raises(FeedError, match=r"is not an RSS or Atom feed: it is an HTML page"):
        parse(HTML_PAGE, url="https://x.example/")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "the document is empty"),
        (b"   \n", "the document is empty"),
        (b'{"items": []}', "no RSS or Atom elements found"),
        (b"\x00\xff\xfe garbage", "no RSS or Atom elements found"),
    ],
)
def test_things_that_are_not_feeds_are_feed_errors(body: bytes, reason: str) -> None:
    with pytest.raises(FeedError, match=reason):
        parse(body)


def test_body_that_looks_like_a_path_or_url_is_never_opened() -> None:
    """feedparser opens file names and fetches URLs it is given; feed bodies must not do that."""
    for body in (b"/etc/hostname", b"https://example.com/rss.xml", b"file:///etc/passwd"):
        with pytest.raises(FeedError):
            parse(body)


def test_javascript_and_data_links_are_not_headlines() -> None:
    body = b"""<rss version="2.0"><channel><title>T</title>
      <item><title>bad</title><link>javascript:alert(1)</link></item>
      <item><title>good</title><link>https://ok.example.com/</link></item>
    </channel></rss>"""
    assert [h.title for h in parse(body).headlines] == ["good"]


_FEED_PIECES = [RSS2, ATOM, RSS1, HTML_PAGE]


@st.composite
def feedish_bytes(draw: st.DrawFn) -> bytes:
    """Arbitrary bytes, and real feeds cut, spliced and sprinkled with junk."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=2000))
    doc = draw(st.sampled_from(_FEED_PIECES))
    start = draw(st.integers(0, len(doc)))
    end = draw(st.integers(start, len(doc)))
    junk = draw(st.binary(max_size=40))
    return doc[:start] + junk + doc[end:]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=feedish_bytes())
def test_any_bytes_give_a_parsed_feed_or_a_feed_error(body: bytes) -> None:
    try:
        feed = parse(body)
    except FeedError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert isinstance(feed, ParsedFeed)
    for h in feed.headlines:
        assert h.title and h.url.startswith(("http://", "https://"))
        assert h.published is None or h.published.tzinfo is not None
        assert len(h.snippet) <= 500


# --- fetch_feed against a local server -----------------------------------------------------------

# 5,000 items, 640 KB: feedparser takes seconds over it (a 2.5 MB feed took 6.6 s here).
HUGE_RSS = (
    '<?xml version="1.0"?><rss version="2.0"><channel><title>Big</title>'
    + "".join(
        f"<item><title>Story {i}</title><link>https://big.example/{i}</link>"
        f"<description>Words &amp; more words {i}</description></item>"
        for i in range(5000)
    )
    + "</channel></rss>"
).encode()

ETAG = '"v1"'
LAST_MODIFIED = "Sat, 01 Mar 2025 09:00:00 GMT"


@dataclass
class FeedServer:
    base: str
    requests: list[dict[str, str]] = field(default_factory=list)


@pytest.fixture
async def server() -> AsyncIterator[FeedServer]:
    record: list[dict[str, str]] = []
    stopping = asyncio.Event()  # lets hanging handlers finish when the test is over

    async def rss(request: web.Request) -> web.Response:
        record.append(dict(request.headers))
        if request.headers.get("If-None-Match") == ETAG:
            return web.Response(status=304, headers={"ETag": ETAG})
        return web.Response(
            body=RSS2,
            content_type="application/rss+xml",
            headers={"ETag": ETAG, "Last-Modified": LAST_MODIFIED},
        )

    async def dated(request: web.Request) -> web.Response:
        record.append(dict(request.headers))
        if request.headers.get("If-Modified-Since") == LAST_MODIFIED:
            return web.Response(status=304)
        return web.Response(
            body=ATOM, content_type="application/atom+xml", headers={"Last-Modified": LAST_MODIFIED}
        )

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/mirror/news/rss.xml")

    async def mirror(request: web.Request) -> web.Response:
        return web.Response(body=RSS2, content_type="text/xml")

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=HTML_PAGE, content_type="text/html")

    async def image(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG....", content_type="image/png")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.wait_for(stopping.wait(), 5)
        return web.Response(body=RSS2, content_type="application/rss+xml")

    async def huge(request: web.Request) -> web.Response:
        return web.Response(body=HUGE_RSS, content_type="application/rss+xml")

    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=404, text="not here")

    app = web.Application()
    app.router.add_get("/rss.xml", rss)
    app.router.add_get("/atom.xml", dated)
    app.router.add_get("/moved.xml", moved)
    app.router.add_get("/mirror/news/rss.xml", mirror)
    app.router.add_get("/page.html", page)
    app.router.add_get("/logo.png", image)
    app.router.add_get("/gone.xml", gone)
    app.router.add_get("/huge.xml", huge)
    app.router.add_get("/slow.xml", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield FeedServer(base=f"http://127.0.0.1:{port}", requests=record)
    finally:
        stopping.set()
        await runner.cleanup()


@pytest.fixture
async def http() -> AsyncIterator[HttpClient]:
    async with HttpClient(FetchConfig(allow_private_networks=True)) as client:
        yield client


def feed_at(server: FeedServer, path: str, **kw: str) -> FeedConfig:
    return FeedConfig(url=f"{server.base}{path}", category=kw.get("category", "world"))


async def test_second_fetch_with_the_etag_is_not_modified(
    server: FeedServer, http: HttpClient
) -> None:
    feed = feed_at(server, "/rss.xml")

    first = await fetch_feed(http, feed, None)
    assert first.status == 200
    assert not first.not_modified
    assert first.title == "Example Times"
    assert [h.title for h in first.headlines] == ["Rivers rise & towns prepare", "Budget passes"]
    assert first.headlines[0].url == f"{server.base}/world/rivers-rise"
    assert first.headlines[0].origin == f"feed:{feed.url}"
    assert (first.etag, first.last_modified) == (ETAG, LAST_MODIFIED)

    second = await fetch_feed(http, feed, first.state)
    assert second.status == 304
    assert second.not_modified
    assert second.headlines == ()
    assert (second.etag, second.last_modified) == (ETAG, LAST_MODIFIED)  # kept for next time

    assert "If-None-Match" not in server.requests[0]
    assert server.requests[1]["If-None-Match"] == ETAG
    assert server.requests[1]["If-Modified-Since"] == LAST_MODIFIED
    assert "application/rss+xml" in server.requests[0]["Accept"]


async def test_successful_fetch_returns_the_state_to_save_with_errors_cleared(
    server: FeedServer, http: HttpClient
) -> None:
    feed = feed_at(server, "/rss.xml")
    failing = FeedState(url=feed.url, category="world", error_count=3, last_error="HTTP 500")
    before = datetime.now(UTC)

    result = await fetch_feed(http, feed, failing)

    state = result.state
    assert (state.url, state.category, state.title) == (feed.url, "world", "Example Times")
    assert (state.etag, state.last_modified) == (ETAG, LAST_MODIFIED)
    assert (state.error_count, state.last_error) == (0, None)
    assert state.last_ok_at is not None and state.last_ok_at >= before
    assert state.last_checked_at == state.last_ok_at

    not_modified = await fetch_feed(http, feed, replace(state, error_count=1, last_error="x"))
    assert not_modified.not_modified
    assert (not_modified.state.error_count, not_modified.state.last_error) == (0, None)
    assert not_modified.state.title == "Example Times"
    assert not_modified.state.last_ok_at >= state.last_ok_at


async def test_last_modified_alone_is_enough_for_not_modified(
    server: FeedServer, http: HttpClient
) -> None:
    feed = feed_at(server, "/atom.xml")
    first = await fetch_feed(http, feed, None)
    assert first.etag is None
    assert len(first.headlines) == 2

    state = FeedState(feed.url, feed.category, last_modified=first.last_modified)
    second = await fetch_feed(http, feed, state)
    assert second.not_modified
    assert second.last_modified == LAST_MODIFIED


async def test_redirected_feed_resolves_links_against_where_it_ended(
    server: FeedServer, http: HttpClient
) -> None:
    feed = feed_at(server, "/moved.xml")
    result = await fetch_feed(http, feed, None)
    assert result.final_url == f"{server.base}/mirror/news/rss.xml"
    assert result.headlines[0].url == f"{server.base}/world/rivers-rise"
    assert result.headlines[0].image == f"{server.base}/img/rivers.jpg"
    assert result.headlines[0].origin == f"feed:{feed.url}"


async def test_configured_name_and_category_reach_the_headlines(
    server: FeedServer, http: HttpClient
) -> None:
    feed = FeedConfig(url=f"{server.base}/rss.xml", category="World", name="Times")
    result = await fetch_feed(http, feed, None)
    assert {(h.source, h.category) for h in result.headlines} == {("Times", "world")}
    assert (result.state.title, result.state.category) == ("Times", "world")


async def test_html_page_at_the_feed_url_is_a_feed_error(
    server: FeedServer, http: HttpClient
) -> None:
    with pytest.raises(FeedError, match="is not an RSS or Atom feed: it is an HTML page"):
        await fetch_feed(http, feed_at(server, "/page.html"), None)


async def test_http_error_status_is_a_feed_error(server: FeedServer, http: HttpClient) -> None:
    feed = feed_at(server, "/gone.xml")
    with pytest.raises(FeedError, match=r"HTTP 404") as info:
        await fetch_feed(http, feed, None)
    assert feed.url in str(info.value)


async def test_wrong_content_type_is_a_feed_error(server: FeedServer, http: HttpClient) -> None:
    with pytest.raises(FeedError, match="unexpected content type image/png"):
        await fetch_feed(http, feed_at(server, "/logo.png"), None)


async def test_oversized_feed_is_a_feed_error(server: FeedServer, http: HttpClient) -> None:
    with pytest.raises(FeedError, match="byte limit"):
        await fetch_feed(http, feed_at(server, "/rss.xml"), None, max_bytes=100)


async def test_unreachable_feed_is_a_feed_error(http: HttpClient) -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    feed = FeedConfig(url=f"http://127.0.0.1:{port}/rss.xml", category="world")
    with pytest.raises(FeedError, match=r"cannot fetch feed: .*connection refused"):
        await fetch_feed(http, feed, None)


async def test_private_address_is_refused_by_default(server: FeedServer) -> None:
    async with HttpClient(FetchConfig()) as guarded:
        with pytest.raises(FeedError, match="blocked address"):
            await fetch_feed(guarded, feed_at(server, "/rss.xml"), None)
    assert server.requests == []


async def test_slow_feed_times_out_as_a_feed_error(server: FeedServer, http: HttpClient) -> None:
    started = time.monotonic()
    with pytest.raises(FeedError, match="timed out"):
        await fetch_feed(http, feed_at(server, "/slow.xml"), None, timeout=0.3)
    assert time.monotonic() - started < 1.5


async def test_feed_url_that_is_not_http_is_a_feed_error(http: HttpClient) -> None:
    feed = FeedConfig(url="ftp://files.example.com/rss.xml", category="world")
    with pytest.raises(FeedError, match="cannot fetch feed"):
        await fetch_feed(http, feed, None)


# --- parsed in a parser process ------------------------------------------------------------------


@pytest.fixture
async def feed_parsers() -> AsyncIterator[ParserPool]:
    async with ParserPool(size=2, preload=("feed",)) as pool:
        yield pool


async def test_a_feed_parsed_in_a_parser_process_reads_as_parsed_here(
    server: FeedServer, http: HttpClient, feed_parsers: ParserPool
) -> None:
    for path in ("/rss.xml", "/atom.xml"):
        here = await fetch_feed(http, feed_at(server, path), None)
        there = await fetch_feed(http, feed_at(server, path), None, parsers=feed_parsers)
        assert there.headlines == here.headlines and there.title == here.title
        assert len(there.headlines) >= 2
    with pytest.raises(FeedError, match="is not an RSS or Atom feed: it is an HTML page"):
        await fetch_feed(http, feed_at(server, "/page.html"), None, parsers=feed_parsers)


async def test_a_feed_too_long_to_parse_is_stopped_and_the_loop_never_waits(
    server: FeedServer, http: HttpClient, feed_parsers: ParserPool
) -> None:
    """A huge feed is parsed off the loop: the loop keeps ticking, the parse is stopped at its
    deadline as that feed's error, and the pool parses the next feed."""
    ticks: list[float] = []

    async def tick() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    started = time.monotonic()
    try:
        with pytest.raises(FeedError, match=r"cannot parse feed .*huge\.xml.*given up"):
            await fetch_feed(
                http, feed_at(server, "/huge.xml"), None, parsers=feed_parsers, parse_timeout=0.3
            )
    finally:
        ticker.cancel()
    assert time.monotonic() - started < 1.5
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(ticks) > 10 and max(gaps) < 0.25
    after = await fetch_feed(http, feed_at(server, "/rss.xml"), None, parsers=feed_parsers)
    assert len(after.headlines) == 2


def test_any_bytes_read_the_same_in_a_parser_process() -> None:
    """What crosses the process boundary (JSON both ways) loses nothing: the same headlines,
    or the same FeedError, as parsing in this process."""
    with asyncio.Runner() as runner:
        pool = ParserPool(size=1, preload=("feed",))

        def outcome(read) -> object:
            try:
                return read()
            except FeedError as err:
                return str(err)

        @given(body=feedish_bytes())
        @settings(max_examples=60, deadline=None)
        def check(body: bytes) -> None:
            how = {"feed_url": "https://times.example.com/feed", "category": "world"}
            here = outcome(lambda: parse_feed(body, **how))
            there = outcome(
                lambda: runner.run(
                    pool.feed(body, **how, name=None, base_url=None, charset=None, timeout=10)
                )
            )
            assert there == here

        try:
            check()
        finally:
            runner.run(pool.close())
