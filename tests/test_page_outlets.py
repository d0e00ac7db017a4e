"""Feeds that each carry several publishers (issue 39): an item whose page is its publisher's
own (on the publisher's registrable domain, naming it, under the item's headline) counts as
that publisher, so a story four publishers told through two feeds is covered by four outlets,
leads its category and is listed once; a feed linking to pages of its own subdomains that name
other outlets is still one outlet (issue 38)."""

from __future__ import annotations

import email.policy
import email.utils
import json
import subprocess
import sys
from email.message import EmailMessage
from html import escape
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.fetch.aggregators import page_outlet
from digest.fetch.lede import find_lede
from digest.stories import outlet
from tests.configs import feed, write_config
from tests.conftest import cli_env, earlier_today
from tests.newsweb import ARTICLES, RETELLINGS, Article, NewsWeb, Route, render_article

CHIP, WIRE, LEDGER = ARTICLES[0], RETELLINGS[0][1], RETELLINGS[1][1]
BATTERY, METRO = ARTICLES[2], RETELLINGS[2][1]
SATELLITE = ARTICLES[3]
PLANTED = ARTICLES[5]  # told, under the names of five outlets, by one hostile feed


def page(article: Article, site_name: str) -> bytes:
    """The article's page as its publisher serves it: named by `og:site_name`, its own title."""
    meta = (
        f'<meta property="og:site_name" content="{escape(site_name)}">'
        f'<meta property="og:title" content="{escape(article.title)}">'
    )
    return render_article(article).replace(b"<head>", f"<head>{meta}".encode(), 1)


def rss(title: str, items: list[tuple[str, str]]) -> bytes:
    when = email.utils.format_datetime(earlier_today(1))
    body = "".join(
        f"<item><title>{escape(t)}</title><link>{escape(link)}</link><pubDate>{when}</pubDate>"
        "</item>"
        for t, link in items
    )
    channel = f"<channel><title>{escape(title)}</title>{body}</channel>"
    return f"<?xml version='1.0'?><rss version='2.0'>{channel}</rss>".encode()


def digest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command, with `.test` names on loopback (`tests.local_names`)."""
    return subprocess.run(
        [sys.executable, "-m", "tests.local_names", *args],
        cwd=cwd,
        env=cli_env(COLUMNS="200"),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow  # five runs of the real command
def test_a_story_four_publishers_told_through_two_feeds_leads_with_four_outlets(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    web = threaded_news_web
    port = web.url("").split(":")[-1]

    def publish(site: str, name: str, article: Article) -> tuple[str, str]:
        path = f"/{site}/{article.slug}.html"
        web.add(Route(path, page(article, name)))
        return article.title, f"http://www.{site}.test:{port}{path}"

    roundup = [
        publish("reuters", "Reuters", CHIP),
        publish("bloomberg", "Bloomberg", WIRE),
        publish("axios", "Axios", BATTERY),
        publish("reuters", "Reuters", SATELLITE),
    ]
    picks = [
        publish("politico", "Politico", LEDGER),
        publish("theguardian", "The Guardian", CHIP),
        publish("semafor", "Semafor", METRO),
    ]
    # Pages on subdomains of one site, each naming another outlet: one outlet, the feed.
    hostile = [
        (PLANTED.title, publish(f"{name.lower()}.hostile", name, PLANTED)[1])
        for name in ("Reuters", "Bloomberg", "Axios", "Politico", "Semafor")
    ]
    feeds = {
        "/multi/roundup.rss": rss("Wire Roundup", roundup),
        "/multi/picks.rss": rss("Daily Picks", picks),
        "/multi/hostile.rss": rss("Hostile Wire", hostile),
    }
    for path, body in feeds.items():
        web.add(Route(path, body, content_type="application/rss+xml"))
    write_config(
        tmp_path,
        sources={
            "categories": ["technology"],
            "ddg": False,
            "feeds": [feed(web.url(path)) for path in feeds],
        },
        stories={"top": 2},
    )
    for args in (["collect"], ["deepen"], ["subscribers", "add", "r@example.org"], ["publish"]):
        result = digest(*args, cwd=tmp_path)
        assert result.returncode == 0, result.stderr + result.stdout

    stories = json.loads(digest("stories", "--json", cwd=tmp_path).stdout)
    chip = next(s for s in stories if s["title"] in {CHIP.title, WIRE.title, LEDGER.title})
    assert chip["outlet_count"] == 4
    assert {o["outlet"] for o in chip["outlets"]} == {
        "Reuters",
        "Bloomberg",
        "Politico",
        "The Guardian",
    }
    battery = next(s for s in stories if s["title"] in {BATTERY.title, METRO.title})
    assert {o["outlet"] for o in battery["outlets"]} == {"Axios", "Semafor"}
    planted = next(s for s in stories if s["title"] == PLANTED.title)
    assert planted["outlet_count"] == 1
    assert planted["outlets"][0]["outlet"].endswith("(via Hostile Wire)")
    assert stories[0]["id"] == chip["id"]  # the widest story first

    (eml,) = (tmp_path / "outbox").glob("*.eml")
    message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    text = message.get_body(("plain",))
    assert text is not None
    body = text.get_content()
    assert chip["title"] in message["Subject"]
    assert "Covered by 4 outlets" in body
    assert body.find(chip["title"]) < body.find(battery["title"])  # it leads
    more = body[body.index("More headlines") :]
    # Each other story once, one line each, naming its outlets.
    for story in (SATELLITE, PLANTED):
        assert more.count(story.title) == 1, more
    for title in {CHIP.title, WIRE.title, LEDGER.title, BATTERY.title, METRO.title}:
        assert title not in more, more
    pages = [p.read_text() for p in (tmp_path / "site").rglob("*.html")]
    edition = next(p for p in pages if "Also in the news" in p)  # the day's edition page
    assert edition.count(escape(PLANTED.title)) == 1
    assert edition.count(escape(SATELLITE.title)) == 1


def test_a_publishers_own_page_counts_as_it_and_any_other_stays_relayed() -> None:
    def shown(site_name: str, url: str, *, link: str = "", title: str = "Dam bursts") -> str:
        return page_outlet(
            "reuters.com (via Wire Roundup)",
            feed="Wire Roundup",
            feed_url="https://roundup.example/rss",
            url=url,
            site_name=site_name,
            link=link or url,
            title=title,
            page_title="Dam bursts | Reuters",
        )

    assert shown("Reuters", "https://www.reuters.com/x") == "Reuters"
    assert outlet(shown("Reuters", "https://www.reuters.com/x"), "") == outlet("Reuters", "")
    assert shown("The Guardian", "https://www.reuters.com/x") == "reuters.com (via Wire Roundup)"
    # A subdomain of another site naming Reuters: relayed, the feed's.
    sub = shown("Reuters", "https://reuters.hostile.example/x")
    assert sub == "Reuters (via Wire Roundup)"
    # Redirected there from another site, or under another headline: not the publisher's word.
    away = shown("Reuters", "https://www.reuters.com/x", link="https://hostile.example/r")
    assert away == "Reuters (via Wire Roundup)"
    other = shown("Reuters", "https://www.reuters.com/x", title="Volcano erupts")
    assert other == "Reuters (via Wire Roundup)"
    # A name that is not the domain's own (two words for one label) stays relayed.
    assert shown("BBC News", "https://www.bbc.co.uk/x") == "BBC News (via Wire Roundup)"


def test_a_page_names_its_publisher_by_json_ld_and_its_headline_by_og_title() -> None:
    ld = json.dumps({"@graph": [{"@type": "NewsArticle", "publisher": {"name": " Reuters "}}]})
    html = (
        f'<html><head><title>Dam bursts | Reuters</title><script type="application/ld+json">{ld}'
        "</script></head><body><p>x</p></body></html>"
    )
    lede = find_lede(html)
    assert (lede.site, lede.title) == ("Reuters", "Dam bursts | Reuters")
    og = '<head><meta property="og:title" content="Dam bursts"><title>Other</title></head>'
    assert find_lede(og).title == "Dam bursts"
    assert find_lede('<head><script type="application/ld+json">{oops</script></head>').site == ""


LABELS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@given(
    data=st.data(),
    sub=st.lists(LABELS, max_size=2),
    label=LABELS,
    title=st.sampled_from(["Dam bursts", "Volcano erupts"]),
)
def test_a_page_counts_as_its_own_outlet_only_as_its_domains_one_name(
    data: st.DataObject, sub: list[str], label: str, title: str
) -> None:
    """Whatever a page names itself, wherever it is: a name it counts as is its registrable
    domain's one label, so one domain is one outlet at most; any other name is the feed's."""
    names = [label.capitalize(), f"The {label}", f"{label} News", *(s.upper() for s in sub)]
    name = data.draw(st.one_of(st.sampled_from(names), st.text(max_size=30)))
    url = f"https://{'.'.join([*sub, label])}.example/x"
    shown = page_outlet(
        "Wire Roundup",
        feed="Wire Roundup",
        feed_url="https://roundup.example/rss",
        url=url,
        site_name=name,
        title=title,
        page_title="Dam bursts",
    )
    if outlet(shown, "") != outlet("Wire Roundup", ""):
        own = label.removeprefix("the") if label.startswith("the") else label
        assert outlet(shown, "") == own
        assert title == "Dam bursts"
