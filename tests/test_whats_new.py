"""What a reader of the next edition sees of a story that outlets joined: who joined, what their
ledes add, and every outlet grouped by the language it reports in; built from the store by
`digest.jobs.publish` and read in the archive's pages and in the email, as published."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default as default_policy
from html import unescape
from pathlib import Path

import pytest

from digest.app import App
from digest.config import Config, StoriesConfig, parse_config
from digest.deliver.message import message_id
from digest.deliver.transport import outbox_name
from digest.jobs.clustering import cluster_category
from digest.jobs.publish import publish
from digest.models import Edition, EditionStory, Item
from digest.render import edition_path, story_path
from digest.store import Store
from digest.store.edition_codec import decode_edition, encode_edition
from digest.stories import StoryPlan
from tests import headlines as H
from tests.editions import HOSTILE_FACT, HOSTILE_TITLE, hostile_edition
from tests.storefixtures import item

DAY1 = date(2025, 3, 3)
DAY2 = DAY1 + timedelta(days=1)
READER = "reader@example.org"

# Two German outlets that join the Fed story on the second day. Each lede first repeats what the
# English outlets said on day 1 (in figures that read the same in German), then adds a fact.
SPIEGEL_TITLE = "US-Notenbank Fed senkt den Leitzins um 0,25 Prozentpunkte"
SPIEGEL_OLD = "Die Fed hat den Leitzins um 25 Basispunkte auf 4,25 bis 4,50 Prozent gesenkt."
SPIEGEL_NEW = "An der Wall Street fiel der Dow Jones daraufhin um 1.100 Punkte."
FAZ_TITLE = "Fed senkt Zinsen erneut – Powell warnt vor weiteren Schritten"
FAZ_OLD = "Die Notenbank senkte den Leitzins auf eine Spanne von 4,25 bis 4,50 Prozent."
FAZ_NEW = "Die Rendite zehnjähriger Staatsanleihen stieg am Donnerstag auf 4,6 Prozent."


def at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour), UTC)


def news(line: H.Line, slug: str, when: datetime, category: str) -> Item:
    host = line.outlet.lower().replace(" ", "")
    return item(
        f"https://www.{host}.example/{slug}",
        title=line.title,
        lede=line.text,
        category=category,
        published=when,
        source=line.outlet,
    )


def config_for(tmp_path: Path) -> Config:
    return parse_config(
        {
            "database": {"url": f"sqlite:///{tmp_path / 'digest.db'}"},
            "sources": {"categories": ["finance", "world"], "ddg": False},
            "schedule": {"timezone": "UTC"},
            "archive": {"dir": str(tmp_path / "site"), "title": "Morning digest"},
            "email": {"outbox_dir": str(tmp_path / "outbox")},
        }
    )


def join(store: Store, story_id: int, urls: list[str], when: datetime) -> None:
    """Put these stored articles into the story, as a clustering that matched them would (the
    words of a German and an English headline rarely do: that is the embeddings' work)."""
    articles = [store.article_by_url(url) for url in urls]
    ids = [a.id for a in articles if a is not None]
    [story] = [s for s in store.stories_since(None, since=at(DAY1, 0)) if s.id == story_id]
    outlets = len({*story.outlets, *(a.outlet for a in articles if a is not None)})
    plan = StoryPlan(
        story_id=story_id,
        title=None,
        new_article_ids=tuple(ids),
        member_count=story.article_count,
        first_seen=story.first_seen,
        last_seen=when,
        article_count=story.article_count + len(ids),
        outlet_count=outlets,
        score=story.score + len(ids),
        updated=outlets > story.outlet_count,
    )
    store.save_stories(story.category, [plan], now=when, candidates=len(ids))


def story_id_of(store: Store, url: str) -> int:
    for s in store.stories_since(None, since=at(DAY1, 0)):
        if any(a.url == url for a in s.articles):
            return s.id
    raise AssertionError(f"{url} is in no story")


def email_parts(outbox: Path, day: date) -> tuple[str, str]:
    """(text, HTML) of the reader's email of `day`, as the outbox holds it."""
    path = outbox / outbox_name(message_id(day, READER, "digest@localhost"))
    message = message_from_bytes(path.read_bytes(), policy=default_policy)
    assert isinstance(message, EmailMessage)
    text = message.get_body(("plain",))
    html = message.get_body(("html",))
    assert text is not None and html is not None
    return text.get_content(), html.get_content()


def plain(html: str) -> str:
    """The page's text, tags gone and whitespace collapsed: what a reader reads."""
    return " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())


def section_of(html: str, heading: str) -> str:
    """The HTML from a language heading to the end of the list after it."""
    start = html.index(f">{heading}</h3>")
    return html[start : html.index("</ul>", start)]


@pytest.fixture
async def published(tmp_path: Path):
    """Day 1: a Fed story told by Reuters and AP, a quake story by NHK and The Guardian. Day 2:
    Spiegel and FAZ join the Fed story; NHK follows up the quake (no new outlet)."""
    app = App(config_for(tmp_path))
    store = await app.store()
    try:
        store.add_subscriber(READER, categories=None, timezone="UTC")
        fed = [news(line, f"fed{n}", at(DAY1, 9), "finance") for n, line in enumerate(H.FED[:2])]
        quake = [news(line, f"q{n}", at(DAY1, 9), "world") for n, line in enumerate(H.QUAKE)]
        store.upsert_items([*fed, *quake], seen_at=at(DAY1, 10))
        for category in ("finance", "world"):
            cluster_category(store, category, now=at(DAY1, 11), config=StoriesConfig())
        day1 = await publish(app, DAY1)
        assert day1.status == "ok", day1.errors

        german = [
            item(
                "https://www.spiegel.example/fed",
                title=SPIEGEL_TITLE,
                lede=f"{SPIEGEL_OLD} {SPIEGEL_NEW}",
                category="finance",
                published=at(DAY2, 8),
                source="Spiegel",
            ),
            item(
                "https://www.faz.example/fed",
                title=FAZ_TITLE,
                lede=f"{FAZ_OLD} {FAZ_NEW}",
                category="finance",
                published=at(DAY2, 9),
                source="FAZ",
            ),
        ]
        follow_up = item(
            "https://www.nhkworld.example/q-follow-up",
            title="Japan lifts tsunami advisory after magnitude 7.1 quake",
            lede="The Japan Meteorological Agency lifted its tsunami advisory on Friday.",
            category="world",
            published=at(DAY2, 8),
            source="NHK World",
        )
        store.upsert_items([*german, follow_up], seen_at=at(DAY2, 10))
        fed_id = story_id_of(store, fed[0].headline.url)
        quake_id = story_id_of(store, quake[0].headline.url)
        join(store, fed_id, [g.headline.url for g in german], at(DAY2, 11))
        join(store, quake_id, [follow_up.headline.url], at(DAY2, 11))
        day2 = await publish(app, DAY2)
        assert day2.status == "ok", day2.errors
        yield tmp_path, store, fed_id, quake_id
    finally:
        store.close()


def stories_of(edition: Edition | None) -> dict[int, EditionStory]:
    assert edition is not None
    return {s.id: s for section in edition.sections for s in section.stories}


async def test_outlets_that_joined_are_new_with_the_facts_their_ledes_add(published) -> None:
    _, store, fed_id, _ = published
    fed = stories_of(store.edition(DAY2))[fed_id]
    assert fed.whats_new is not None
    assert fed.whats_new.since == DAY1
    assert [o.name for o in fed.whats_new.outlets] == ["FAZ", "Spiegel"]  # newest first
    assert [(f.outlet, f.text, f.language) for f in fed.whats_new.facts] == [
        ("FAZ", FAZ_NEW, "de"),
        ("Spiegel", SPIEGEL_NEW, "de"),
    ]
    # What they repeat of day 1 is not news; nor is anything of the English outlets.
    assert stories_of(store.edition(DAY1))[fed_id].whats_new is None


async def test_a_story_without_a_new_outlet_shows_nothing_new(published) -> None:
    tmp_path, store, _, quake_id = published
    quake = stories_of(store.edition(DAY2))[quake_id]
    assert quake.whats_new is None
    page = (tmp_path / "site" / story_path(DAY2, quake_id)).read_text("utf-8")
    assert "New since" not in page and ">New</span>" not in page
    assert "NHK World" in page and "The Guardian" in page


async def test_every_outlet_carries_the_language_of_its_article(published) -> None:
    _, store, fed_id, quake_id = published
    stories = stories_of(store.edition(DAY2))
    assert {o.name: o.language for o in stories[fed_id].outlets} == {
        "Reuters": "en",
        "AP News": "en",
        "Spiegel": "de",
        "FAZ": "de",
    }
    assert {o.language for o in stories[quake_id].outlets} == {"en"}


async def test_the_story_page_says_what_is_new_and_groups_outlets_by_language(published) -> None:
    tmp_path, _, fed_id, _ = published
    html = (tmp_path / "site" / story_path(DAY2, fed_id)).read_text("utf-8")
    text = plain(html)
    assert "New since 3 Mar 2025" in text
    assert "2 outlets joined the story: FAZ, Spiegel." in text
    assert f"FAZ: {FAZ_NEW}" in text and f"Spiegel: {SPIEGEL_NEW}" in text
    assert SPIEGEL_OLD not in text and FAZ_OLD not in text
    assert '<time datetime="2025-03-03">3 Mar 2025</time>' in html

    english, german = section_of(html, "English"), section_of(html, "Deutsch")
    assert html.index(">English</h3>") < html.index(">Deutsch</h3>")  # the larger group first
    assert "Reuters" in english and "AP News" in english and "Spiegel" not in english
    assert "Spiegel" in german and "FAZ" in german and "Reuters" not in german
    assert '<h3 class="language" lang="de">Deutsch</h3>' in html
    assert f'<span class="outlet-title" lang="de">{SPIEGEL_TITLE}</span>' in html
    assert german.count(">New</span>") == 2 and ">New</span>" not in english

    # Day 1's page of the same story: nothing is new there, its outlets are all English.
    first = plain((tmp_path / "site" / story_path(DAY1, fed_id)).read_text("utf-8"))
    assert "New since" not in first and "Deutsch" not in first and "English" in first


async def test_edition_category_and_feed_show_the_new_line(published) -> None:
    tmp_path, *_ = published
    site = tmp_path / "site"
    line = f"New since 3 Mar 2025: FAZ, Spiegel — {FAZ_NEW}"
    assert line in plain((site / edition_path(DAY2)).read_text("utf-8"))
    assert line in plain((site / "2025/03/04/finance.html").read_text("utf-8"))
    assert "New since" not in plain((site / "2025/03/04/world.html").read_text("utf-8"))
    feed = (site / "feed.xml").read_text("utf-8")
    assert "3 Mar 2025</time>:</strong> FAZ, Spiegel — " in unescape(feed)


async def test_the_email_has_a_new_line_in_both_parts(published) -> None:
    tmp_path, *_ = published
    text, html = email_parts(tmp_path / "outbox", DAY2)
    flat = " ".join(text.split())
    assert f"New: FAZ, Spiegel — {FAZ_NEW}" in flat
    assert flat.count("New:") == 1  # the quake story has none
    assert f"New: FAZ, Spiegel — {FAZ_NEW}" in plain(html)
    assert f'<span lang="de">{FAZ_NEW}</span>' in html
    first_text, first_html = email_parts(tmp_path / "outbox", DAY1)
    assert "New:" not in first_text and "New:" not in plain(first_html)


async def test_an_earlier_edition_stored_before_languages_still_shows_what_is_new(
    tmp_path: Path,
) -> None:
    """Day 1 stored by the previous version (no languages, nothing new): day 2 still finds the
    outlets that joined and, judging the German ledes by their numbers, their new facts."""
    app = App(config_for(tmp_path))
    store = await app.store()
    try:
        fed = [news(line, f"fed{n}", at(DAY1, 9), "finance") for n, line in enumerate(H.FED[:2])]
        store.upsert_items(fed, seen_at=at(DAY1, 10))
        cluster_category(store, "finance", now=at(DAY1, 11), config=StoriesConfig())
        await publish(app, DAY1, send=False)
        old = store.edition(DAY1)
        assert old is not None
        store.save_edition(replace(old, sections=strip_languages(old)))
        stored = stories_of(store.edition(DAY1)).values()
        assert {o.language for s in stored for o in s.outlets} == {""}
        spiegel = item(
            "https://www.spiegel.example/fed",
            title=SPIEGEL_TITLE,
            lede=f"{SPIEGEL_OLD} {SPIEGEL_NEW}",
            category="finance",
            published=at(DAY2, 8),
            source="Spiegel",
        )
        store.upsert_items([spiegel], seen_at=at(DAY2, 10))
        fed_id = story_id_of(store, fed[0].headline.url)
        join(store, fed_id, [spiegel.headline.url], at(DAY2, 11))
        await publish(app, DAY2, send=False)
        news_ = stories_of(store.edition(DAY2))[fed_id].whats_new
        assert news_ is not None
        assert [o.name for o in news_.outlets] == ["Spiegel"]
        assert [f.text for f in news_.facts] == [SPIEGEL_NEW]
    finally:
        store.close()


def strip_languages(edition: Edition) -> tuple:
    return tuple(
        replace(
            section,
            stories=tuple(
                replace(s, outlets=tuple(replace(o, language="") for o in s.outlets))
                for s in section.stories
            ),
        )
        for section in edition.sections
    )


def rendered_pages(edition: Edition) -> dict[str, bytes]:
    """The archive's pages of `edition` alone, by path."""
    from digest.config import ArchiveConfig
    from digest.render import render_pages

    return dict(render_pages([edition], ArchiveConfig(title="Morning digest")))


def rendered_email(edition: Edition) -> tuple[str, str]:
    """(HTML, text) of `edition`'s email to READER, every category, nothing cut."""
    from digest.render.email import render_email

    return render_email(
        edition,
        categories=None,
        tz=UTC,
        title="Morning digest",
        archive=None,
        unsubscribe="https://news.example/u?t=1",
        recipient=READER,
        budget=100_000,
    )


def without(payload: object, *keys: str) -> object:
    """The JSON payload with these keys removed at every depth: what an older version stored."""
    if isinstance(payload, dict):
        return {k: without(v, *keys) for k, v in payload.items() if k not in keys}
    if isinstance(payload, list):
        return [without(v, *keys) for v in payload]
    return payload


async def test_editions_stored_without_the_new_fields_decode_and_render(published) -> None:

    _, store, fed_id, _ = published
    new = store.edition(DAY2)
    assert new is not None
    payload = json.loads(json.dumps(encode_edition(new)))
    old_payload = without(payload, "whats_new", "language")
    assert "whats_new" not in json.dumps(old_payload) and '"language"' not in json.dumps(
        old_payload
    )
    old = decode_edition(old_payload)
    story = stories_of(old)[fed_id]
    assert story.whats_new is None and {o.language for o in story.outlets} == {""}

    pages = rendered_pages(old)
    page = pages[story_path(DAY2, fed_id)].decode("utf-8")
    assert "New since" not in page and 'class="language"' not in page
    assert "Spiegel" in page and "Reuters" in page  # one list, as before
    html, text = rendered_email(old)
    assert "New:" not in text and "Spiegel" in text and "Spiegel" in html


def test_scraped_facts_and_outlet_names_are_shown_as_text_everywhere() -> None:

    edition = hostile_edition(DAY2)
    [story] = [s for s in edition.sections[0].stories if s.title == HOSTILE_TITLE]
    pages = rendered_pages(edition)
    for path in (story_path(DAY2, story.id), edition_path(DAY2)):
        html = pages[path].decode("utf-8")
        assert "<script>alert" not in html and "<img src=x" not in html, path
        assert "&lt;script&gt;alert(&#34;fact&#34;)&lt;/script&gt;" in html, path
        assert 'lang="xx' not in html and "alert(1)&#34;>" not in html, path  # a bad code: no lang
        assert "\x00" not in html and "\x1b" not in html and "\u202e" not in html, path
    page = plain(pages[story_path(DAY2, story.id)].decode("utf-8"))
    assert f"{HOSTILE_FACT}" in page and "A fact with controls." in page
    html, text = rendered_email(edition)
    assert "<script" not in html and 'lang="xx' not in html
    assert "New: " in text and "<script" not in text  # tags are dropped from both parts
