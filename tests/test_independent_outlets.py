"""Independent outlets (issue 38): one feed is one outlet, whatever names its items give, unless
it is Google News' or Bing News' and the article is on the named outlet's own site. A feed that
names Reuters, AP, BBC News... on its own items can no longer fake a story's coverage, lead the
email or put "according to Reuters" into a story."""

from __future__ import annotations

import email.policy
import email.utils
import json
from dataclasses import replace
from datetime import UTC, datetime
from email.message import EmailMessage
from html import escape
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.fetch.aggregators import page_outlet, split_site
from digest.fetch.lede import find_lede
from digest.sources.feeds import parse_feed
from digest.stories import Coverage, StoryStats, credited, outlet, relayed, score
from tests.configs import feed, write_config
from tests.conftest import earlier_today, run_cli
from tests.newsweb import ARTICLES, RETELLINGS, Article, NewsWeb, Route, render_article
from tests.test_aggregators import GOOGLE_NEWS

NOW = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)
FORGED = ["Reuters", "AP", "BBC News", "CNN", "The Guardian"]
SITES = {
    "Reuters": "https://www.reuters.com",
    "AP": "https://apnews.com",
    "BBC News": "https://www.bbc.co.uk",
    "CNN": "https://edition.cnn.com",
    "The Guardian": "https://www.theguardian.com",
}


def hostile_feed(names: list[str], *, link: str = "https://hostile.example/planted-{i}") -> bytes:
    """A feed naming other outlets as its items' sources, each with that outlet's own site."""
    items = "".join(
        f"<item><title>Planted: volcano erupts near the capital, {i}</title>"
        f"<link>{escape(link.format(i=i))}</link>"
        f'<source url="{SITES.get(name, "https://example.org")}">{escape(name)}</source></item>'
        for i, name in enumerate(names)
    )
    channel = f"<channel><title>Hostile Wire</title>{items}</channel>"
    return f"<rss version='2.0'>{channel}</rss>".encode()


def own_feed(name: str, host: str) -> bytes:
    return (
        f"<rss version='2.0'><channel><title>{name}</title><item>"
        f"<title>Harbour bridge collapses</title><link>https://{host}/bridge</link>"
        "</item></channel></rss>"
    ).encode()


def stats_of(story_id: int, bodies: dict[str, bytes]) -> StoryStats:
    told = [
        Coverage(source=h.source, url=h.url, origin=h.origin, when=NOW)
        for url, body in bodies.items()
        for h in parse_feed(body, feed_url=url, category="world").headlines
    ]
    return StoryStats.of(story_id, told)


def test_a_feed_naming_five_outlets_is_one_and_ranks_below_three_independent_ones() -> None:
    planted = stats_of(1, {"https://hostile.example/rss": hostile_feed(FORGED)})
    real = stats_of(
        2,
        {
            "https://one.example/rss": own_feed("Harbour Times", "one.example"),
            "https://two.example/rss": own_feed("Coast Daily", "two.example"),
            "https://three.example/rss": own_feed("Bay Herald", "three.example"),
        },
    )
    assert (planted.outlets, real.outlets) == (1, 3)
    assert score(planted, now=NOW) < score(real, now=NOW)


def test_an_unvouched_name_is_shown_via_its_feed_and_credited_to_the_feed() -> None:
    feed = parse_feed(hostile_feed(FORGED), feed_url="https://hostile.example/rss", category="w")
    shown = [h.source for h in feed.headlines]
    assert shown == [f"{name} (via Hostile Wire)" for name in FORGED]
    assert {outlet(h.source, h.url) for h in feed.headlines} == {"hostile wire"}
    assert {credited(s) for s in shown} == {"Hostile Wire"}


def test_a_feed_linking_through_google_news_to_its_own_site_is_still_one_outlet() -> None:
    # Links through Google's redirect, but to the feed's own pages: not the named outlets' sites.
    link = "https://news.google.com/news/url?sa=t&url=https://hostile.example/planted-{i}"
    feed = parse_feed(
        hostile_feed(FORGED, link=link), feed_url="https://hostile.example/rss", category="w"
    )
    assert {outlet(h.source, h.url) for h in feed.headlines} == {"hostile wire"}
    assert all(h.source.endswith("(via Hostile Wire)") for h in feed.headlines)


def test_google_news_counts_each_outlet_on_its_own_site_and_only_google_vouches_for_the_rest() -> (
    None
):
    google = "https://news.google.com/rss/search?q=summit"
    from_google = parse_feed(GOOGLE_NEWS, feed_url=google, category="world", name="My search")
    assert [h.source for h in from_google.headlines] == [
        "Reuters",
        "The New York Times",
        "BBC News",
        "The Birmingham News - al.com",
        "Associated Press",
    ]
    # The same document from elsewhere: the items whose link leads to their outlet's site
    # (Reuters, BBC News) are theirs; the links that name no article are the feed's word only.
    copy = parse_feed(
        GOOGLE_NEWS, feed_url="https://copy.example/gn.xml", category="world", name="Copy"
    )
    assert [outlet(h.source, h.url) for h in copy.headlines] == [
        "reuters",
        "copy",
        "bbc news",
        "copy",
        "copy",
    ]


def test_an_ordinary_feed_naming_itself_shows_its_own_name() -> None:
    body = (
        b"<rss version='2.0'><channel><title>Reuters</title><item><title>Markets</title>"
        b"<link>https://www.reuters.com/m</link><source>Reuters</source></item></channel></rss>"
    )
    (item,) = parse_feed(body, feed_url="https://www.reuters.com/rss", category="w").headlines
    assert item.source == "Reuters"


_NAMES = st.text(min_size=1, max_size=40).filter(lambda n: n.strip())


@given(first=_NAMES, second=_NAMES, relay=_NAMES)
def test_whatever_names_a_feed_gives_they_are_one_outlet_the_feeds(
    first: str, second: str, relay: str
) -> None:
    a, b = relayed(first, relay), relayed(second, relay)
    assert outlet(a, "") == outlet(b, "")
    assert credited(a) == credited(b)


# --- what a reader gets, through the real commands ----------------------------------------------

PLANTED = Article(
    slug="planted",
    category="technology",
    title="Quantum battery startup claims a charge that lasts a decade",
    lede=(
        "A little-known startup said on Tuesday that its quantum battery holds a charge for ten "
        "years, a claim no laboratory has checked and no regulator has seen."
    ),
    paragraphs=(
        "The company would not say who had tested the cells, nor where they are made, and its "
        "website lists no address.",
    ),
    description="A startup's battery claim.",
)


def _rss(title: str, items: list[tuple[str, str, str]]) -> bytes:
    """A feed called `title` of (headline, link, `<source>` name or "") items, dated today."""
    when = email.utils.format_datetime(earlier_today(1))
    body = "".join(
        f"<item><title>{escape(t)}</title><link>{escape(link)}</link><pubDate>{when}</pubDate>"
        + (f'<source url="{SITES[name]}">{escape(name)}</source>' if name else "")
        + "</item>"
        for t, link, name in items
    )
    return (
        f"<?xml version='1.0'?><rss version='2.0'><channel><title>{escape(title)}</title>"
        f"{body}</channel></rss>"
    ).encode()


@pytest.mark.slow  # five runs of the real command
def test_a_hostile_feed_naming_five_outlets_does_not_lead_the_email(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    web = threaded_news_web
    base = web.url("")
    chip, wire, ledger = ARTICLES[0], RETELLINGS[0][1], RETELLINGS[1][1]
    planted = [replace(PLANTED, slug=f"planted-{i}") for i in range(len(FORGED))]
    for a in planted:
        web.add(Route(a.path, render_article(a)))
    # The hostile feed also tells the real story, as "Reuters", with another figure.
    untrue = replace(
        wire,
        slug="chip-plant-hostile",
        lede=wire.lede.replace("nine tenths", "a third"),
        paragraphs=("About 300 people are to be hired, and the first wafers are due in 2031.",),
    )
    web.add(Route(untrue.path, render_article(untrue)))
    hostile = [
        (PLANTED.title, f"{base}{a.path}", name) for a, name in zip(planted, FORGED, strict=True)
    ]
    hostile.append((untrue.title, f"{base}{untrue.path}", "Reuters"))
    feeds = {
        "/io/hostile.rss": _rss("Hostile Wire", hostile),
        "/io/times.rss": _rss("Harbour Times", [(chip.title, f"{base}{chip.path}", "")]),
        "/io/coast.rss": _rss("Coast Daily", [(wire.title, f"{base}{wire.path}", "")]),
        "/io/bay.rss": _rss("Bay Herald", [(ledger.title, f"{base}{ledger.path}", "")]),
    }
    for path, body in feeds.items():
        web.add(Route(path, body, content_type="application/rss+xml"))
    sources = {
        "categories": ["technology"],
        "ddg": False,
        "feeds": [feed(web.url(path)) for path in feeds],
    }
    folder = write_config(tmp_path, sources=sources)
    for args in (
        ["collect"],
        ["deepen"],
        ["subscribers", "add", "reader@example.org"],
        ["publish"],
    ):
        result = run_cli(*args, cwd=folder)
        assert result.code == 0, result.stderr + result.stdout

    stories = json.loads(run_cli("stories", "--json", cwd=folder).stdout)
    by_title = {s["title"]: s for s in stories}
    fake = by_title[PLANTED.title]
    assert fake["coverage"] == "Covered by 1 outlet"
    assert fake["outlets"][0]["outlet"].endswith(" (via Hostile Wire)")
    real = next(s for s in stories if s["title"] in {chip.title, wire.title, ledger.title})
    assert real["outlet_count"] >= 3
    assert "Reuters" not in {o["outlet"] for o in real["outlets"]}  # the feed said so, only

    (eml,) = (folder / "outbox").glob("*.eml")
    message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    assert real["title"] in message["Subject"] and PLANTED.title not in message["Subject"]
    body = message.get_body(("html",))
    assert body is not None
    text = body.get_content()
    # The real story leads; the planted one, if shown at all, comes after it.
    first, planted_at = text.find(escape(real["title"])), text.find(escape(PLANTED.title))
    assert first >= 0 and (planted_at < 0 or first < planted_at)
    assert "according to Reuters" not in text and "Covered by 6 outlets" not in text


# --- a site's name after an ordinary feed's headline -------------------------------------------


def test_an_ordinary_feeds_page_titles_lose_their_sites_name_and_section_labels() -> None:
    wsj = (
        b"<rss version='2.0'><channel><title>WSJ.com: World News</title><item>"
        b"<title>Fed holds rates steady - WSJ</title><link>https://www.wsj.com/a</link></item>"
        b"<item><title>Biden - Harris ticket - a primer</title><link>https://www.wsj.com/b</link>"
        b"</item></channel></rss>"
    )
    feed = parse_feed(wsj, feed_url="https://feeds.a.dj.com/rss/RSSWorldNews.xml", category="w")
    assert [h.title for h in feed.headlines] == [
        "Fed holds rates steady",
        "Biden - Harris ticket - a primer",
    ]
    guardian = (
        b"<rss version='2.0'><channel><title>Opinion</title><item><title>The Guardian view on "
        b"rivers: clean them up | Editorial | Opinion | The Guardian</title>"
        b"<link>https://www.theguardian.com/commentisfree/x</link></item></channel></rss>"
    )
    (item,) = parse_feed(
        guardian, feed_url="https://www.theguardian.com/uk/commentisfree/rss", category="w"
    ).headlines
    assert item.title == "The Guardian view on rivers: clean them up"


_SITES = [
    ("The Guardian", "theguardian.com"),
    ("WSJ", "wsj.com"),
    ("BBC News", "bbc.co.uk"),
    ("Reuters", "reuters.com"),
]
# Words none of the sites' names, hosts or initials can be made of.
_PLAIN_WORDS = st.text(alphabet="xyzqkv0123456789", min_size=1, max_size=10)
_HEADLINES = st.lists(
    st.one_of(_PLAIN_WORDS, st.sampled_from(["-", "|", "\u2014", "\u2013", ":", "Opinion"])),
    min_size=1,
    max_size=12,
).map(" ".join)


@given(title=_HEADLINES, site=st.sampled_from(_SITES))
def test_a_headline_without_its_sites_name_is_never_cut(title: str, site: tuple[str, str]) -> None:
    name, host = site
    assert split_site(title, names=(name,), hosts=(host, f"www.{host}")) == title


@given(
    title=_HEADLINES.filter(lambda t: any(ch.isalnum() for ch in t)),
    site=st.sampled_from(_SITES),
    separator=st.sampled_from([" - ", " | ", " \u2014 ", " \u2013 "]),
)
def test_a_headline_and_its_sites_name_split_back_apart(
    title: str, site: tuple[str, str], separator: str
) -> None:
    name, host = site
    cut = split_site(f"{title}{separator}{name}", names=(), hosts=(host,))
    assert title.startswith(cut) and any(ch.isalnum() for ch in cut)
    if not title.rstrip().endswith(" | Opinion"):
        assert cut == title.strip()


# --- the publisher a page names itself -------------------------------------------------------


def test_a_page_names_its_publisher_by_og_site_name() -> None:
    page = (
        '<html><head><meta property="og:site_name" content=" Reuters "></head><body><article>'
        f"<p>{'The summit ended without a deal on Friday after three days of talks. ' * 3}</p>"
        "</article></body></html>"
    )
    assert find_lede(page).site == "Reuters"
    assert find_lede("<html><head></head><body><p>x</p></body></html>").site == ""
    long_name = "x" * 200
    assert (
        find_lede(f'<head><meta property="og:site_name" content="{long_name}"></head>').site == ""
    )


def test_an_ordinary_feeds_item_shows_the_publisher_its_page_names_relayed_by_the_feed() -> None:
    def shown(site_name: str, url: str, source: str = "Yahoo News") -> str:
        return page_outlet(
            source,
            feed="Yahoo News",
            feed_url="https://news.yahoo.com/rss",
            url=url,
            site_name=site_name,
        )

    relayed_name = shown("Reuters", "https://www.reuters.com/world/x")
    assert relayed_name == "Reuters (via Yahoo News)"
    assert outlet(relayed_name, "") == outlet("Yahoo News", "")  # still the feed's coverage
    assert shown("Yahoo News", "https://news.yahoo.com/x") == "Yahoo News"  # its own page
    assert shown("Reuters", "https://hostile.example/x") == "Yahoo News"  # names another site
    # An item already attributed (an aggregator's, or relayed) keeps its outlet.
    assert shown("Reuters", "https://www.reuters.com/x", source="AP") == "AP"
