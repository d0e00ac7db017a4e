"""Aggregator feeds (Google News, Bing News, planets): each item is its publisher's, with the
headline the publisher wrote and the publisher's own link; an ordinary feed reads as before."""

from __future__ import annotations

import email
import email.policy
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from email.message import EmailMessage
from html import escape
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from digest.config import SourcesConfig
from digest.fetch.aggregators import MAX_SUFFIX_WORDS, split_publisher
from digest.models import Outlet
from digest.sources.ddg import DuckDuckGo
from digest.sources.feeds import ParsedFeed, parse_feed
from digest.stories import Coverage, StoryStats, outlet
from digest.stories.novelty import outlet_key
from digest.stories.tokens import fold
from tests.configs import feed, write_config
from tests.conftest import earlier_today, run_cli, serve_in_thread
from tests.newsweb import (
    ARTICLES,
    RETELLINGS,
    Article,
    NewsWeb,
    Route,
    render_bing_news,
    render_google_news,
)
from tests.receivers import Receivers

NOW = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)


def parse(body: bytes, url: str = "https://feeds.example/aggregated.xml") -> ParsedFeed:
    return parse_feed(body, feed_url=url, category="world", name="My search")


# Google News' own address: only it vouches for a link of its that names no article.
GOOGLE = "https://news.google.com/rss/search?q=summit"


GOOGLE_NEWS = b"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<rss version="2.0"><channel>
<title>"summit" - Google News</title>
<link>https://news.google.com/search?q=summit</link>
<item>
  <title>Leaders meet at the summit - Reuters</title>
  <link>https://news.google.com/rss/articles/CBMiAAA?oc=5</link>
  <description>&lt;a href="https://www.reuters.com/world/leaders-meet-2026-12-04/"&gt;Leaders
    meet at the summit&lt;/a&gt;&amp;nbsp;&amp;nbsp;&lt;font color="#6f6f6f"&gt;Reuters&lt;/font&gt;
  </description>
  <source url="https://www.reuters.com">Reuters</source>
</item>
<item>
  <title>Biden - Harris ticket - what the summit means - The New York Times</title>
  <link>https://news.google.com/rss/articles/CBMiBBB?oc=5</link>
  <description>&lt;a href="https://news.google.com/rss/articles/CBMiBBB?oc=5"&gt;Biden&lt;/a&gt;
  </description>
  <source url="https://www.nytimes.com">The New York Times</source>
</item>
<item>
  <title>Summit ends without a deal - BBC News</title>
  <link>https://news.google.com/news/url?sa=t&amp;url=https://www.bbc.co.uk/news/world-1</link>
  <source url="https://www.bbc.co.uk">BBC News</source>
</item>
<item>
  <title>Sbarro files for bankruptcy - The Birmingham News - al.com</title>
  <link>https://news.google.com/rss/articles/CBMiDDD?oc=5</link>
  <source url="https://www.al.com">The Birmingham News - al.com</source>
</item>
<item>
  <title>A hyphen - not the publisher</title>
  <link>https://news.google.com/rss/articles/CBMiCCC?oc=5</link>
  <description>&lt;a href="https://elsewhere.example/x"&gt;a page of another site&lt;/a&gt;
  </description>
  <source url="https://apnews.com">Associated Press</source>
</item>
</channel></rss>
"""


def test_google_news_items_are_their_publishers_with_clean_headlines_and_links() -> None:
    reuters, nyt, bbc, birmingham, ap = parse(GOOGLE_NEWS, GOOGLE).headlines

    assert (reuters.source, reuters.title) == ("Reuters", "Leaders meet at the summit")
    assert reuters.url == "https://www.reuters.com/world/leaders-meet-2026-12-04/"
    # Only the last separator goes, and only when it names the publisher.
    assert nyt.source == "The New York Times"
    assert nyt.title == "Biden - Harris ticket - what the summit means"
    assert nyt.url == "https://news.google.com/rss/articles/CBMiBBB?oc=5"  # nothing better given
    assert (bbc.title, bbc.url) == (
        "Summit ends without a deal",
        "https://www.bbc.co.uk/news/world-1",
    )
    # The item's own publisher's name goes however long it is, hyphen and all.
    assert birmingham.title == "Sbarro files for bankruptcy"
    assert birmingham.source == "The Birmingham News - al.com"
    # A suffix that is not the publisher stays; a described link off the publisher's site is
    # not the article.
    assert (ap.source, ap.title) == ("Associated Press", "A hyphen - not the publisher")
    assert ap.url == "https://news.google.com/rss/articles/CBMiCCC?oc=5"


def test_a_google_news_item_without_a_source_loses_a_short_suffix() -> None:
    body = b"""<rss version="2.0"><channel><title>t</title>
<item><title>Rates held steady - Financial Times</title>
<link>https://news.google.com/rss/articles/CBMiDDD</link></item>
<item><title>Rates held steady as the central bank waits for more data on prices this spring
 - and here is a long tail that is no publisher's name</title>
<link>https://news.google.com/rss/articles/CBMiEEE</link></item>
</channel></rss>"""
    short, long_ = parse(body, GOOGLE).headlines
    assert (short.source, short.title) == ("Financial Times", "Rates held steady")
    assert long_.source == "My search" and long_.title.endswith("no publisher's name")


BING_NEWS = b"""<?xml version="1.0" encoding="utf-8" ?>
<rss xmlns:News="https://www.bing.com:443/news/search?q=chips&amp;format=rss" version="2.0">
<channel><title>chips - BingNews</title>
<link>https://www.bing.com:443/news/search?q=chips&amp;format=rss</link>
<item>
  <title>A new chip plant opens | The Verge</title>
  <link>http://www.bing.com/news/apiclick.aspx?ref=FexRss&amp;aid=&amp;tid=1&amp;url=https%3a%2f%2fwww.theverge.com%2f2026%2f12%2f4%2fchip-plant&amp;c=2&amp;mkt=en-us</link>
  <description>The plant will make power chips.</description>
  <News:Source>The Verge</News:Source>
</item>
<item>
  <title>Chips \xe2\x80\x94 a shortage ends \xe2\x80\x94 BBC</title>
  <link>http://www.bing.com/news/apiclick.aspx?ref=FexRss&amp;url=https%3a%2f%2fwww.bbc.com%2fnews%2fchips</link>
  <News:Source>BBC</News:Source>
</item>
</channel></rss>
"""


def test_bing_news_items_are_their_publishers_with_clean_headlines_and_links() -> None:
    verge, bbc = parse(
        BING_NEWS, url="https://www.bing.com/news/search?q=chips&format=rss"
    ).headlines
    assert (verge.source, verge.title) == ("The Verge", "A new chip plant opens")
    assert verge.url == "https://www.theverge.com/2026/12/4/chip-plant"
    assert (bbc.source, bbc.title, bbc.url) == (
        "BBC",
        "Chips \u2014 a shortage ends",
        "https://www.bbc.com/news/chips",
    )


PLANET = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<title>Planet Example</title><id>urn:planet</id><updated>2026-12-04T00:00:00Z</updated>
<entry>
  <title>Release 2.0 is out - Alice's notes</title>
  <link href="https://alice.example.org/release-2"/><id>urn:a</id>
  <updated>2026-12-04T00:00:00Z</updated>
  <source><id>urn:alice</id><title>Alice's notes</title>
    <link rel="alternate" href="https://alice.example.org/"/></source>
</entry>
<entry>
  <title>Why I moved - again</title>
  <link href="https://bob.example.net/moved"/><id>urn:b</id>
  <updated>2026-12-04T00:00:00Z</updated>
  <source><id>urn:bob</id><title>Bob writes</title>
    <link rel="alternate" href="https://bob.example.net/"/></source>
</entry>
</feed>
"""


def test_an_atom_planets_entries_are_their_blogs_relayed_by_the_planet() -> None:
    alice, bob = parse(PLANET, url="https://planet.example/atom.xml").headlines
    # Not Google News' nor Bing News': the planet vouches for its blogs, and counts as one.
    assert (alice.source, alice.title) == ("Alice's notes (via My search)", "Release 2.0 is out")
    assert alice.url == "https://alice.example.org/release-2"
    assert (bob.source, bob.title) == ("Bob writes (via My search)", "Why I moved - again")


BUNDLE = b"""<rss version="2.0"><channel><title>My bundle</title>
<item><title>Chip plant breaks ground - Ars Technica</title>
  <link>https://arstechnica.com/chips/plant</link></item>
<item><title>Chip plant: what it means - BBC News</title>
  <link>https://www.bbc.co.uk/news/technology-1</link></item>
<item><title>Chips - a primer</title><link>https://www.theverge.com/primer</link></item>
<item><title>Plant opens</title><link>https://news.example.com/plant</link></item>
<item><title>Fab approved - Los Angeles Times</title><link>https://www.latimes.com/a</link></item>
<item><title>Chip jobs - Economic Times</title>
  <link>https://economictimes.indiatimes.com/b</link></item>
<item><title>Chip tax - Wall Street Journal</title><link>https://www.wsj.com/c</link></item>
<item><title>Chips - News</title><link>https://news.example.com/d</link></item>
</channel></rss>"""


def test_a_feed_spanning_many_sites_gives_each_item_its_sites_outlet_via_the_feed() -> None:
    ars, bbc, verge, plain, lat, et, wsj, news = parse(BUNDLE).headlines
    via = " (via My search)"  # a bundle is one outlet: only it says who wrote each item
    assert (ars.source, ars.title) == ("Ars Technica" + via, "Chip plant breaks ground")
    assert (bbc.source, bbc.title) == ("BBC News" + via, "Chip plant: what it means")
    assert (lat.source, lat.title) == ("Los Angeles Times" + via, "Fab approved")
    assert (et.source, et.title) == ("Economic Times" + via, "Chip jobs")
    assert (wsj.source, wsj.title) == ("Wall Street Journal" + via, "Chip tax")
    # "a primer" does not name theverge.com, nor "News" news.example.com: the headline stays,
    # the site is the outlet.
    assert (verge.source, verge.title) == ("theverge.com" + via, "Chips - a primer")
    assert plain.source == "example.com" + via
    assert (news.source, news.title) == ("example.com" + via, "Chips - News")


PUBLISHER = b"""<rss version="2.0"><channel><title>Reuters: World</title>
<item><title>Markets - Reuters</title><link>https://www.reuters.com/markets/1</link></item>
<item><title>Opinion - The euro at 30</title><link>https://www.reuters.com/opinion/2</link></item>
<item><title>Live - Summit - day two</title><link>https://www.reuters.com/live/3</link></item>
<item><title>Pictures of the year - Reuters</title>
  <link>https://widerimage.reuters.com/story/4</link></item>
<item><title>Partner: chips - BBC</title><link>https://www.bbc.co.uk/partner/5</link></item>
</channel></rss>"""


def test_an_ordinary_publishers_headlines_keep_every_hyphen_but_their_sites_name() -> None:
    feed = parse(PUBLISHER, url="https://www.reuters.com/world/rss")
    # The site's name after a <title>-style headline goes (the feed's site, or the page's:
    # "BBC" names bbc.co.uk); every other hyphen stays.
    assert [h.title for h in feed.headlines] == [
        "Markets",
        "Opinion - The euro at 30",
        "Live - Summit - day two",
        "Pictures of the year",
        "Partner: chips",
    ]
    assert {h.source for h in feed.headlines} == {"My search"}  # the feed's name, as before
    assert feed.headlines[-1].url == "https://www.bbc.co.uk/partner/5"


class _SearchRows:
    """DuckDuckGo's news search answering with fixed rows."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def news(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self.rows

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return []


async def test_the_publisher_is_one_outlet_from_a_feed_a_search_and_an_earlier_edition() -> None:
    rows = [
        {"title": "Summit", "url": "https://www.reuters.com/a", "source": "Reuters"},
        {"title": "Chips", "url": "https://www.theverge.com/b", "source": "The Verge"},
    ]
    search = DuckDuckGo(SourcesConfig(), ddgs_factory=lambda: _SearchRows(rows))
    reuters, verge = await search.news("world")
    from_google = parse(GOOGLE_NEWS, GOOGLE).headlines[0]
    from_bing = parse(BING_NEWS).headlines[0]

    assert outlet(from_google.source, from_google.url) == outlet(reuters.source, reuters.url)
    assert outlet(from_bing.source, from_bing.url) == outlet(verge.source, verge.url)
    # An earlier edition's outlets are matched by the same identity.
    assert outlet_key(Outlet(from_bing.source, from_bing.url)) == outlet(verge.source, verge.url)


def test_a_story_told_through_google_news_counts_each_publisher() -> None:
    headlines = parse(GOOGLE_NEWS, GOOGLE).headlines
    stats = StoryStats.of(1, [Coverage(source=h.source, url=h.url, when=NOW) for h in headlines])
    # Three links still go through news.google.com: their publishers, not Google, are the hosts.
    assert (stats.outlets, stats.hosts) == (5, 5)


# --- the suffix splitter ---------------------------------------------------------------------

_WORDS = st.text(st.characters(categories=("L", "N"), max_codepoint=0x2FF), min_size=1, max_size=12)
_TITLES = (
    st.lists(st.one_of(_WORDS, st.sampled_from(["-", "|", "\u2014", ":", "?", "'s"])), min_size=1)
    .map(" ".join)
    .filter(lambda t: any(ch.isalnum() for ch in t))
)
_PUBLISHERS = (
    st.lists(_WORDS, min_size=1, max_size=MAX_SUFFIX_WORDS)
    .map(" ".join)
    .filter(lambda p: len(p) <= 40)
)


@given(title=_TITLES, publisher=_PUBLISHERS, separator=st.sampled_from([" - ", " | ", " \u2014 "]))
def test_a_headline_and_its_publisher_split_back_apart(
    title: str, publisher: str, separator: str
) -> None:
    assert split_publisher(f"{title}{separator}{publisher}", aggregated=True) == (title, publisher)
    named = split_publisher(f"{title}{separator}{publisher}", aggregated=True, publisher=publisher)
    assert named == (title, publisher)


_ANY_TITLES = st.one_of(
    st.text(max_size=80),
    st.builds(
        "".join,
        st.tuples(
            st.text(max_size=40),
            st.sampled_from([" - ", " | ", " \u2014 ", "-", " -- ", "  - "]),
            st.text(max_size=30),
        ),
    ),
)


@given(title=_ANY_TITLES, publisher=st.text(max_size=20), aggregated=st.booleans())
def test_the_splitter_never_empties_a_headline_nor_touches_an_ordinary_one(
    title: str, publisher: str, aggregated: bool
) -> None:
    head, suffix = split_publisher(title, aggregated=aggregated, publisher=publisher)
    if not aggregated:
        assert (head, suffix) == (title, "")
    if any(ch.isalnum() for ch in title):
        assert any(ch.isalnum() for ch in head)
    if suffix:  # what is left is the headline's start, the suffix its end
        assert title.lstrip().startswith(head) and title.rstrip().endswith(suffix)


# --- snippets -----------------------------------------------------------------------------------


def test_a_google_news_description_that_only_names_the_headline_and_publisher_is_no_snippet() -> (
    None
):
    told = [("Reuters", ARTICLES[0]), ("BBC News", ARTICLES[1])]
    google = parse(
        render_google_news("http://127.0.0.1:1", told), url="https://news.google.com/rss"
    )
    assert [(h.source, h.snippet) for h in google.headlines] == [("Reuters", ""), ("BBC News", "")]
    reuters, _, _, _, ap = parse(GOOGLE_NEWS, GOOGLE).headlines
    assert reuters.snippet == ""  # "Leaders meet at the summit Reuters"
    assert ap.snippet == "a page of another site"  # says something else: kept
    # Bing News describes the article: its description is the snippet.
    bing = parse(render_bing_news("http://127.0.0.1:1", told), url="https://www.bing.com/news")
    assert [h.snippet for h in bing.headlines] == [a.description for _, a in told]


def _google_news_item(title: str, publisher: str, description: str) -> bytes:
    return f"""<rss version="2.0"><channel><title>q - Google News</title>
<item><title>{escape(title)} - {escape(publisher)}</title>
<link>https://news.google.com/rss/articles/CBMiXYZ?oc=5</link>
<description>{escape(description)}</description>
<source url="https://publisher.example">{escape(publisher)}</source></item>
</channel></rss>""".encode()


_SENTENCES = st.lists(_WORDS, min_size=3, max_size=12).map(" ".join)


@given(title=_TITLES, publisher=_PUBLISHERS, spacing=st.sampled_from(["&nbsp;&nbsp;", " ", ""]))
def test_a_headline_and_publisher_as_description_never_become_a_lede(
    title: str, publisher: str, spacing: str
) -> None:
    description = (
        f'<a href="https://publisher.example/a" target="_blank">{escape(title)}</a>{spacing}'
        f'<font color="#6f6f6f">{escape(publisher)}</font>'
    )
    (item,) = parse(_google_news_item(title, publisher, description)).headlines
    assert item.snippet == ""


@given(title=_TITLES, publisher=_PUBLISHERS, sentence=_SENTENCES)
def test_a_description_that_says_more_than_the_headline_is_kept(
    title: str, publisher: str, sentence: str
) -> None:
    # Unless the "more" only names the publisher again ("Headline: Publisher").
    assume(_letters(sentence) not in {_letters(publisher), _letters(publisher) * 2})
    description = f"<p>{escape(title)}: {escape(sentence)}</p>"
    (item,) = parse(_google_news_item(title, publisher, description)).headlines
    assert item.snippet.endswith(sentence)


def _letters(text: str) -> str:
    return "".join(ch for ch in fold(text) if ch.isalnum())


# --- what a reader sees, through the real commands ---------------------------------------------


@pytest.fixture
def receivers() -> Iterator[Receivers]:
    yield from serve_in_thread(Receivers())


@pytest.mark.slow  # six runs of the real command
def test_stories_news_and_the_edition_from_aggregator_feeds_show_the_publishers(
    tmp_path: Path, threaded_news_web: NewsWeb, receivers: Receivers
) -> None:
    web = threaded_news_web
    base = web.url("")
    now = datetime.now(UTC)
    told = {a.slug: a for a in ARTICLES} | {a.slug: a for _, a in RETELLINGS}

    def today(slug: str, hours: int) -> Article:
        return replace(told[slug], published=earlier_today(hours, now))

    google = [
        ("Example News", today("chip-plant", 1)),
        ("Wire Service", today("chip-plant-wire", 2)),
        ("Daily Ledger", today("chip-plant-ledger", 3)),
    ]
    bing = [
        ("Example News", today("battery-recall", 1)),
        ("Metro Wire", today("battery-recall-metro", 2)),
    ]
    gn = web.add(Route("/aggregated/google.rss", render_google_news(base, google, "chips")))
    bn = web.add(Route("/aggregated/bing.rss", render_bing_news(base, bing, "batteries")))
    sources = {
        "categories": ["technology"],
        "ddg": False,
        "feeds": [feed(web.url(gn.path)), feed(web.url(bn.path))],
    }
    folder = write_config(tmp_path, sources=sources)
    for args in (["collect"], ["deepen"]):
        result = run_cli(*args, cwd=folder)
        assert result.code == 0, result.stderr + result.stdout

    stories = json.loads(run_cli("stories", "--json", cwd=folder).stdout)
    by_count = {s["outlet_count"]: s for s in stories}
    chip, battery = by_count[3], by_count[1]
    assert sorted(o["outlet"] for o in chip["outlets"]) == [
        "Daily Ledger",
        "Example News",
        "Wire Service",
    ]
    assert chip["coverage"] == "Covered by 3 outlets"
    assert chip["title"] in {a.title for _, a in google}  # the publisher's headline, no suffix
    assert {o["url"] for o in chip["outlets"]} == {f"{base}{a.path}" for _, a in google}
    # A Bing-shaped feed that is not at bing.com, whose items name no site their links are
    # on (all are 127.0.0.1 here), vouches for nobody: one outlet, its publishers relayed.
    via = " (via batteries - BingNews)"
    assert [o["outlet"] for o in battery["outlets"]] in (
        ["Example News" + via],
        ["Metro Wire" + via],
    )
    assert battery["title"] in {a.title for _, a in bing}

    news = json.loads(run_cli("news", "technology", "--json", cwd=folder).stdout)
    shown = {(n["title"], n["source"]) for n in news}
    assert shown == {(a.title, p) for p, a in google} | {(a.title, p + via) for p, a in bing}

    # The edition: the email, the archive and the chat message name the publishers, never the
    # feeds, and show the headlines without the aggregators' suffixes.
    hook = receivers.json_url("aggregated")
    added = run_cli("subscribers", "add", "reader@example.org", "--channel", hook, cwd=folder)
    assert added.code == 0, added.stderr
    result = run_cli("publish", cwd=folder)
    assert result.code == 0, result.stderr + result.stdout
    (eml,) = (folder / "outbox").glob("*.eml")
    message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    assert chip["title"] in message["Subject"] or battery["title"] in message["Subject"]
    body = message.get_body(("html",))
    assert body is not None
    pages = [body.get_content()] + [p.read_text() for p in (folder / "site").rglob("*.html")]
    (chat,) = receivers.of("aggregated")
    seen = "\n".join([*pages, chat.title, chat.message])
    assert "Wire Service" in chat.message and chip["title"] in chat.message
    for publisher in ("Wire Service", "Daily Ledger"):
        assert publisher in seen
    for feed_title in ('"chips" - Google News',):
        assert escape(feed_title) not in seen and feed_title not in seen
    for publisher, a in google:
        assert escape(f"{a.title} - {publisher}") not in seen
    for publisher, a in bing:
        assert escape(f"{a.title} | {publisher}") not in seen
