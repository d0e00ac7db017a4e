"""One event collected under two categories is one story: shown in its best category, mentioned
in the other, the same whichever category is clustered first and after a later collect
(digest.stories.across, digest.jobs.publish.build_edition, `digest stories --json`)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from html import escape
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.app import App
from digest.config import Config, StoriesConfig, parse_config
from digest.edition.front_page import marked_json, place
from digest.jobs.clustering import across_categories, cluster_category, shown_stories
from digest.jobs.publish import build_edition
from digest.models import Edition, EditionMention, EditionSection, Item
from digest.store import Store
from digest.stories.across import Event, Filed, same_events
from digest.stories.cluster import Report
from tests import headlines as H
from tests import storefixtures
from tests.configs import feed, write_config
from tests.conftest import earlier_today, run_cli
from tests.newsweb import (
    ARTICLES,
    RETELLINGS,
    Article,
    NewsWeb,
    Route,
    render_bing_news,
    render_google_news,
)
from tests.storefixtures import item

db_url, store = storefixtures.db_url, storefixtures.store

DAY = date(2025, 3, 3)
CATEGORIES = ("technology", "world")
STORIES = StoriesConfig()
WINDOW = timedelta(hours=STORIES.window_hours)


def at(hour: int, day: date = DAY) -> datetime:
    return datetime.combine(day, time(hour), UTC)


def news(line: H.Line, category: str, hour: int = 9) -> Item:
    host = line.outlet.lower().replace(" ", "")
    slug = "-".join(line.title.lower().split()[:4])
    return item(
        f"https://www.{host}.example/{category}/{slug}",
        title=line.title,
        lede=line.text,
        category=category,
        published=at(hour),
        source=line.outlet,
    )


# The Tesla recall told by Reuters and The Verge under technology and by the BBC under world;
# each category has a story of its own, and a decoy that shares a name with the other's.
TECHNOLOGY = [*H.TESLA[:2], *H.NVIDIA, H.DECOYS[1]]  # + "Tesla shares hit record high"
WORLD = [H.TESLA[2], *H.QUAKE, H.DECOYS[0]]  # + "Nvidia unveils new GeForce gaming GPUs"
TESLA_TITLES = {line.title for line in H.TESLA}


def collect(store: Store, categories: tuple[str, ...] = CATEGORIES, hour: int = 10) -> None:
    items = [news(line, "technology") for line in TECHNOLOGY]
    items += [news(line, "world") for line in WORLD]
    store.upsert_items(items, seen_at=at(hour))
    for category in categories:
        cluster_category(store, category, now=at(hour + 1), config=STORIES)


def config_for(
    tmp_path: Path, url: str, categories: tuple[str, ...] = CATEGORIES, top: int = 5
) -> Config:
    return parse_config(
        {
            "database": {"url": url},
            "stories": {"top": top},
            "sources": {"categories": list(categories), "ddg": False},
            "schedule": {"timezone": "UTC"},
            "archive": {"dir": str(tmp_path / "site"), "title": "Morning digest"},
            "email": {"outbox_dir": str(tmp_path / "outbox")},
        }
    )


def section(edition: Edition, category: str) -> EditionSection:
    return next(s for s in edition.sections if s.category == category)


def tesla_stories(edition: Edition) -> list[tuple[str, int]]:
    return [
        (s.category, st.id)
        for s in edition.sections
        for st in s.stories
        if st.title in TESLA_TITLES
    ]


async def edition_of(
    tmp_path: Path, url: str, categories: tuple[str, ...] = CATEGORIES, top: int = 5
) -> Edition:
    async with App(config_for(tmp_path, url, categories, top)) as app:
        return await build_edition(app, DAY, now=at(12))


# -- the edition ---------------------------------------------------------------------------------


async def test_one_event_in_two_categories_is_one_story_and_a_mention(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    collect(store)
    edition = await edition_of(tmp_path, db_url)
    tech, world = section(edition, "technology"), section(edition, "world")

    [(category, shown_id)] = tesla_stories(edition)
    assert category == "technology"  # two outlets there against one: the best category
    [shown] = [s for s in tech.stories if s.id == shown_id]
    assert shown.also_in == ("world",)
    assert shown.score > 0
    [mention] = world.mentions
    assert (mention.story_id, mention.category, mention.title) == (
        shown_id,
        "technology",
        shown.title,
    )
    assert mention.outlet_count == 2
    assert not tech.mentions
    # The BBC's report is neither a story nor a headline in world.
    bbc = news(H.TESLA[2], "world").headline.url
    assert bbc not in {h.url for h in world.headlines}
    assert bbc not in {o.url for s in world.stories for o in s.outlets}
    # Distinct events stay apart: the decoys are stories of their own.
    titles = {c: {st.title for st in section(edition, c).stories} for c in CATEGORIES}
    assert H.DECOYS[1].title in titles["technology"]  # Tesla shares, not the recall
    assert H.DECOYS[0].title in titles["world"]  # Nvidia's GPUs, not its earnings
    assert all(not st.also_in for s in edition.sections for st in s.stories if st.id != shown_id)


async def test_a_category_fills_its_top_after_the_event_moves_out(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    """With room for two stories, world shows two of its own, not one and a duplicate."""
    collect(store)
    edition = await edition_of(tmp_path, db_url, top=2)
    world = section(edition, "world")
    assert len(world.stories) == 2
    assert not TESLA_TITLES & {s.title for s in world.stories}
    assert [m.category for m in world.mentions] == ["technology"]


async def test_the_same_edition_whatever_is_clustered_first_and_after_a_later_collect(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    collect(store, categories=("world", "technology"))
    first = await edition_of(tmp_path, db_url)
    assert await edition_of(tmp_path, db_url) == first  # built twice: the same
    # Listed in the other order in the configuration: the same sections, in that order.
    flipped = await edition_of(tmp_path, db_url, categories=("world", "technology"))
    assert [s.category for s in flipped.sections] == ["world", "technology"]
    assert {s.category: s for s in flipped.sections} == {s.category: s for s in first.sections}
    # A later collect sees the same articles again: the event keeps its story.
    collect(store, hour=14)
    later = await edition_of(tmp_path, db_url)
    assert tesla_stories(later) == tesla_stories(first)
    assert section(later, "world").mentions == section(first, "world").mentions


async def test_the_best_category_moves_when_the_other_copy_grows(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    """World gains two more outlets of the recall: the event is shown there now, under the same
    stories, and mentioned in technology."""
    collect(store)
    before = await edition_of(tmp_path, db_url)
    more = [
        item(
            f"https://www.{outlet}.example/world/tesla-recall",
            title=title,
            lede=H.TESLA[2].text,
            category="world",
            published=at(13),
            source=outlet,
        )
        for outlet, title in (
            ("dw", "Tesla recall: Autopilot fix for nearly every car sold in the US"),
            ("euronews", "Tesla recall: Autopilot fix for almost every car it sold in the US"),
        )
    ]
    store.upsert_items(more, seen_at=at(13))
    cluster_category(store, "world", now=at(14), config=STORIES)
    after = await edition_of(tmp_path, db_url)
    [(category, shown_id)] = tesla_stories(after)
    assert category == "world"
    [mention] = section(after, "technology").mentions
    assert mention.story_id == shown_id
    [(_, old_id)] = tesla_stories(before)
    assert section(before, "world").mentions[0].story_id == old_id != shown_id


def test_deepen_reads_each_event_once_and_the_next_story_of_the_other_category(
    store: Store,
) -> None:
    collect(store)
    read = shown_stories(store, STORIES, CATEGORIES, since=at(0), limit=2)
    tesla = [s for s in read if s.title in TESLA_TITLES]
    assert [s.category for s in tesla] == ["technology"]
    world = [s for s in read if s.category == "world"]
    assert len(world) == 2 and not TESLA_TITLES & {s.title for s in world}
    only_world = shown_stories(store, STORIES, CATEGORIES, since=at(0), limit=2, only=["world"])
    assert only_world == world


def test_the_edition_reads_the_stored_vectors_when_embeddings_are_on(store: Store) -> None:
    """The quake in English under world and in German under technology: two stories by their
    words, one event by their stored vectors."""
    from digest.config import EmbeddingsConfig
    from digest.stories.embeddings import Embedder

    items = [news(line, "world") for line in H.QUAKE]
    items += [news(line, "technology") for line in H.QUAKE_DE]
    items += [news(line, "world") for line in H.FED[:2]]
    items += [news(line, "technology") for line in H.TESLA[:2]]
    store.upsert_items(items, seen_at=at(10))
    for category in CATEGORIES:
        cluster_category(store, category, now=at(11), config=STORIES)
    assert across_categories(store, STORIES, CATEGORIES, since=at(0)).events == []

    with_vectors = STORIES.model_copy(update={"embeddings": EmbeddingsConfig(model="e5")})
    day = across_categories(store, with_vectors, CATEGORIES, since=at(0))
    assert day.events == []  # none stored yet: words alone
    quake = {H.QUAKE[0].title, H.QUAKE_DE[0].title, H.QUAKE[1].title, H.QUAKE_DE[1].title}
    vectors = {}
    for n, s in enumerate(day.stories):
        for k, a in enumerate(s.articles):
            axis = 0 if a.title in quake else n + 1
            vectors[a.id] = [1.0 if d == axis else 0.05 * ((k + d) % 3) for d in range(8)]
    store.save_article_vectors(Embedder.space_of(with_vectors.embeddings), vectors)
    [event] = across_categories(store, with_vectors, CATEGORIES, since=at(0)).events
    by_id = {s.id: s for s in day.stories}
    assert {by_id[i].category for i in event.story_ids} == set(CATEGORIES)
    assert {by_id[i].title for i in event.story_ids} <= quake


# -- `digest stories --json` ---------------------------------------------------------------------


def test_stories_json_marks_the_story_shown_elsewhere(store: Store) -> None:
    collect(store)
    day = across_categories(store, STORIES, CATEGORIES, since=at(0))
    listed = marked_json(day.stories, day.events)
    tesla = [s for s in listed if s["title"] in TESLA_TITLES]
    assert {(s["category"], s["shown_in"]) for s in tesla} == {
        ("technology", None),
        ("world", "technology"),
    }
    [shown] = [s for s in tesla if s["shown_in"] is None]
    [other] = [s for s in tesla if s["shown_in"]]
    assert other["shown_as"] == shown["id"] and shown["also_in"] == ["world"]
    assert other["outlet_count"] == 1 and "summary" in other  # the usual keys stay
    rest = [s for s in listed if s["title"] not in TESLA_TITLES]
    assert rest and all(s["shown_in"] is None and s["also_in"] == [] for s in rest)


# -- the pure rule -------------------------------------------------------------------------------

T0 = datetime(2025, 3, 3, 6, tzinfo=UTC)


def filed(
    story_id: int, category: str, lines: list[H.Line], score: float = 1.0, hours: int = 0
) -> Filed:
    reports = tuple(
        Report(
            id=story_id * 100 + n,
            title=line.title,
            text=line.text,
            first_seen=T0 + timedelta(hours=hours),
        )
        for n, line in enumerate(lines)
    )
    return Filed(id=story_id, category=category, score=score, reports=reports)


def test_the_event_is_shown_in_its_best_category_ties_by_configured_order_then_id() -> None:
    tech = filed(3, "technology", H.TESLA[:1], score=2.0)
    world = filed(5, "world", H.TESLA[2:], score=2.0)
    other = filed(4, "world", H.QUAKE)

    def shown(order: tuple[str, ...], *stories: Filed) -> int:
        [event] = same_events(
            stories, similarity=STORIES.similarity, window=WINDOW, categories=order
        )
        assert event.story_ids == (3, 5) and event.id == 3
        return event.shown

    assert shown(("technology", "world"), tech, world, other) == 3
    assert shown(("world", "technology"), tech, world, other) == 5
    assert shown((), tech, world, other) == 3  # no order given: the lower id
    higher = Filed(id=5, category="world", score=2.5, reports=world.reports)
    assert shown(("technology", "world"), tech, higher, other) == 5


WORDS = sorted({w for line in H.ALL for w in line.title.split() if w.isalpha()})


@st.composite
def filed_stories(draw: st.DrawFn) -> list[Filed]:
    count = draw(st.integers(0, 12))
    ids = draw(st.lists(st.integers(1, 500), min_size=count, max_size=count, unique=True))
    out = []
    for story_id in ids:
        n = draw(st.integers(1, 3))
        reports = tuple(
            Report(
                id=story_id * 10 + k,
                title=" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))),
                first_seen=T0 + timedelta(hours=draw(st.integers(0, 30))),
            )
            for k in range(n)
        )
        category = draw(st.sampled_from(["technology", "world", "finance"]))
        score = draw(st.sampled_from([0.5, 1.0, 2.0]))
        out.append(Filed(id=story_id, category=category, score=score, reports=reports))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filed_stories(), st.randoms(use_true_random=False))
def test_events_never_hold_two_stories_of_a_category_and_do_not_depend_on_order(
    stories: list[Filed], rnd: random.Random
) -> None:
    events = same_events(stories, similarity=STORIES.similarity, window=WINDOW)
    category = {s.id: s.category for s in stories}
    seen: set[int] = set()
    for e in events:
        cats = [category[i] for i in e.story_ids]
        assert len(cats) == len(set(cats)) >= 2  # never two stories of one category
        assert list(e.story_ids) == sorted(e.story_ids) and e.shown in e.story_ids
        assert not seen & set(e.story_ids)  # a story tells one event
        seen |= set(e.story_ids)
    shuffled = list(stories)
    rnd.shuffle(shuffled)
    assert same_events(shuffled, similarity=STORIES.similarity, window=WINDOW) == events


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filed_stories())
def test_being_the_same_event_is_symmetric(stories: list[Filed]) -> None:
    """Whichever of two stories is told first (their ids swapped), they are one event or not."""
    if len(stories) < 2:
        return
    a, b = stories[0], stories[1]
    swapped = [
        Filed(id=b.id, category=a.category, score=a.score, reports=a.reports),
        Filed(id=a.id, category=b.category, score=b.score, reports=b.reports),
    ]
    pair = same_events([a, b], similarity=STORIES.similarity, window=WINDOW)
    other = same_events(swapped, similarity=STORIES.similarity, window=WINDOW)
    assert bool(pair) == bool(other)


def test_one_story_of_a_category_per_event_the_closest_wins() -> None:
    """Two technology stories both like the world one: the closer one joins it, the other
    stays a story of its own (the clustering kept them apart, and that holds)."""
    recall = filed(1, "technology", H.TESLA[:2])
    shares = filed(2, "technology", [H.DECOYS[1]])
    bbc = filed(3, "world", H.TESLA[2:])
    [event] = same_events([shares, bbc, recall], similarity=STORIES.similarity, window=WINDOW)
    assert event.story_ids == (1, 3)


@pytest.mark.parametrize("hours", [0, 6])
def test_distinct_events_are_not_one(hours: int) -> None:
    """The same company in the news for two things, within hours: two events."""
    stories = [
        filed(1, "technology", H.NVIDIA),
        filed(2, "world", [H.DECOYS[0]], hours=hours),  # Nvidia's new GPUs
        filed(3, "technology", H.BOEING),
        filed(4, "world", [H.DECOYS[2]], hours=hours),  # Boeing 737 MAX deliveries
        filed(5, "world", H.QUAKE, hours=hours),
    ]
    assert same_events(stories, similarity=STORIES.similarity, window=WINDOW) == []


def test_a_section_fills_its_top_from_below_and_mentions_the_event_shown_elsewhere() -> None:
    ranked = {"technology": [1, 2], "world": [3, 4, 5, 6]}
    placed = place(ranked, [Event((1, 3), shown=1)], top=2)
    assert placed.shown == {"technology": [1, 2], "world": [4, 5]}
    assert placed.moved == {"technology": [], "world": [3]}
    assert placed.mentions == {"technology": [], "world": [1]}
    assert placed.also_in == {1: ("world",)}


def test_an_event_crowded_out_of_its_best_category_stays_where_it_ranks() -> None:
    """Technology's copy is the better one but not among technology's top two: moving world's
    copy out would leave the event in no section, so it stays in world."""
    ranked = {"technology": [6, 7, 1], "world": [3, 4, 5]}
    placed = place(ranked, [Event((1, 3), shown=1)], top=2)
    assert placed.shown == {"technology": [6, 7], "world": [3, 4]}
    assert placed.moved == {"technology": [], "world": []}
    assert placed.mentions == {"technology": [], "world": []} and placed.also_in == {}


@st.composite
def placements(draw: st.DrawFn) -> tuple[dict[str, list[int]], list[Event], int]:
    ids = draw(st.lists(st.integers(1, 60), min_size=1, max_size=20, unique=True))
    cats = ["technology", "world", "finance"]
    ranked: dict[str, list[int]] = {c: [] for c in cats}
    for i in ids:
        ranked[draw(st.sampled_from(cats))].append(i)
    free = {c: list(v) for c, v in ranked.items()}
    events = []
    for _ in range(draw(st.integers(0, 4))):
        members = [free[c].pop(0) for c in cats if free[c] and draw(st.booleans())]
        if len(members) >= 2:
            events.append(Event(tuple(sorted(members)), draw(st.sampled_from(members))))
    return ranked, events, draw(st.integers(1, 4))


@settings(max_examples=150, deadline=None)
@given(placements())
def test_placement_fills_every_top_never_shows_a_moved_story_and_mentions_only_shown_ones(
    case: tuple[dict[str, list[int]], list[Event], int],
) -> None:
    ranked, events, top = case
    placed = place(ranked, events, top=top)
    moved = {i for ids in placed.moved.values() for i in ids}
    shown = {i for ids in placed.shown.values() for i in ids}
    for c, ids in ranked.items():
        assert placed.shown[c] == [i for i in ids if i not in moved][:top]
    assert not moved & shown
    for c, mentioned in placed.mentions.items():
        assert set(mentioned) <= shown and not set(mentioned) & set(placed.shown[c])
    for e in events:  # an event is shown once, or left where its stories rank
        told = [i for i in e.story_ids if i in shown]
        assert len(told) <= 1 or not set(e.story_ids) & moved


def test_with_embeddings_one_event_told_in_two_languages_under_two_categories_is_one() -> None:
    """The quake in English under world and in German under technology share hardly a word;
    their vectors (one direction, unlike the others') make them one event, as in clustering."""
    told = {
        1: ("world", H.QUAKE),
        2: ("technology", H.QUAKE_DE),
        3: ("world", H.FED[:2]),
        4: ("technology", H.TESLA[:2]),
        5: ("world", H.BOEING),
        6: ("technology", H.NVIDIA),
    }
    dims = 8

    def vector(story_id: int, n: int) -> tuple[float, ...]:
        axis = 0 if story_id in (1, 2) else story_id
        return tuple(1.0 if d == axis else (0.05 * ((n + d + story_id) % 3)) for d in range(dims))

    def stories(vectors: bool) -> list[Filed]:
        return [
            Filed(
                id=i,
                category=category,
                score=1.0,
                reports=tuple(
                    Report(
                        id=i * 100 + n,
                        title=line.title,
                        text=line.text,
                        first_seen=T0,
                        embedding=vector(i, n) if vectors else None,
                    )
                    for n, line in enumerate(lines)
                ),
            )
            for i, (category, lines) in told.items()
        ]

    assert same_events(stories(False), similarity=STORIES.similarity, window=WINDOW) == []
    [event] = same_events(stories(True), similarity=STORIES.similarity, window=WINDOW)
    assert event.story_ids == (1, 2)


# -- what readers see ----------------------------------------------------------------------------

ARCHIVE = "https://news.example/2025/03/03/index.html"


def mentioned_edition() -> Edition:
    """An edition whose world section mentions technology's first story."""
    from tests.editions import make_edition

    edition = make_edition(DAY, categories=CATEGORIES, stories=2, headlines=2)
    tech, world = edition.sections
    shown = tech.stories[0]
    tech = replace(tech, stories=(replace(shown, also_in=("world",)), *tech.stories[1:]))
    mention = EditionMention(shown.id, shown.title, "technology", len(shown.outlets))
    return replace(edition, sections=(tech, replace(world, mentions=(mention,))))


def test_the_email_mentions_the_story_in_the_other_section_with_its_archive_link() -> None:
    from digest.render.email import render_email

    edition = mentioned_edition()
    shown = edition.sections[0].stories[0]
    page, text = render_email(
        edition,
        categories=None,
        tz=UTC,
        title="Morning digest",
        archive=ARCHIVE,
        unsubscribe="https://news.example/u?t=1",
        recipient="reader@example.org",
        budget=100_000,
    )
    n = len(shown.outlets)
    story_url = f"https://news.example/2025/03/03/stories/{shown.id}.html"
    line = f"Also in Technology: {shown.title} ({n} outlets)"
    assert line in " ".join(text.split())
    assert story_url in text
    world = page[page.index(">World</h2>") :]
    assert f'<a href="{story_url}"' in world and "Also in Technology:" in world
    assert page.count("Also in ") == 1  # technology mentions nothing


def test_the_archive_pages_mention_the_story_and_link_its_page() -> None:
    from html import unescape

    from digest.config import ArchiveConfig
    from digest.render import render_pages

    edition = mentioned_edition()
    shown = edition.sections[0].stories[0]
    pages = dict(render_pages([edition], ArchiveConfig(title="Morning digest")))
    day_page = unescape(pages["2025/03/03/index.html"].decode())
    world_page = unescape(pages["2025/03/03/world.html"].decode())
    assert f'href="stories/{shown.id}.html">{shown.title}</a>' in world_page
    assert "Also in Technology:" in world_page
    assert "Also in Technology:" in day_page.split('id="world"')[1]
    assert "Also in Technology" not in day_page.split('id="world"')[0]


def test_the_chat_digest_mentions_the_story_in_one_line() -> None:
    from digest.render.chat import render_notification

    edition = mentioned_edition()
    shown = edition.sections[0].stories[0]
    _, markdown, text = render_notification(
        edition, title="digest", archive=ARCHIVE, preferences="https://news.example/p"
    )
    story_url = f"https://news.example/2025/03/03/stories/{shown.id}.html"
    assert f"- Also in Technology: {shown.title} ({len(shown.outlets)} outlets) {story_url}" in text
    assert "Also in Technology: [" in markdown and f"]({story_url})" in markdown


# -- through the real commands -------------------------------------------------------------------


@pytest.mark.slow  # seven runs of the real command
def test_an_event_fed_under_two_categories_is_one_story_through_collect_stories_and_publish(
    tmp_path: Path, threaded_news_web: NewsWeb
) -> None:
    """Google News under technology carries the chip plant from two publishers, Bing News under
    world from a third (and a battery recall): one story, in technology, mentioned in world."""
    web = threaded_news_web
    base = web.url("")
    now = datetime.now(UTC)
    told = {a.slug: a for a in ARTICLES} | {a.slug: a for _, a in RETELLINGS}

    def today(slug: str, hours: int) -> Article:
        return replace(told[slug], published=earlier_today(hours, now))

    google = [
        ("Example News", today("chip-plant", 1)),
        ("Wire Service", today("chip-plant-wire", 2)),
    ]
    bing = [
        ("Daily Ledger", today("chip-plant-ledger", 3)),
        ("Example News", today("battery-recall", 1)),
        ("Metro Wire", today("battery-recall-metro", 2)),
    ]
    gn = web.add(Route("/across/google.rss", render_google_news(base, google, "chips")))
    bn = web.add(Route("/across/bing.rss", render_bing_news(base, bing, "world")))
    sources = {
        "categories": ["technology", "world"],
        "ddg": False,
        "feeds": [feed(web.url(gn.path)), feed(web.url(bn.path), "world")],
    }
    folder = write_config(tmp_path, sources=sources)

    def listed() -> list[dict[str, Any]]:
        for command in ("collect", "deepen"):
            result = run_cli(command, cwd=folder)
            assert result.code == 0, result.stderr + result.stdout
        out = run_cli("stories", "--json", cwd=folder)
        assert out.code == 0, out.stderr
        return json.loads(out.stdout)

    first = listed()
    chip = [s for s in first if "Halvard" in s["title"] or "river water" in s["title"]]
    assert {(s["category"], s["shown_in"]) for s in chip} == {
        ("technology", None),
        ("world", "technology"),
    }
    [shown] = [s for s in chip if s["shown_in"] is None]
    assert shown["outlet_count"] == 2 and shown["also_in"] == ["world"]
    # The edition's top stories: the event once, where it is shown.
    assert [s["top"] for s in chip if s["shown_in"]] == [False] and shown["top"]
    # The battery recall's two publishers come through one Bing-shaped feed served here, whose
    # links cannot be on the named outlets' own sites: one outlet, the feed (issue 38).
    battery = [s for s in first if "batteries" in s["title"]]
    assert [(s["category"], s["shown_in"], s["outlet_count"]) for s in battery] == [
        ("world", None, 1)
    ]
    # A second collect and deepen: the same stories, the same event.
    again = listed()
    assert [(s["id"], s["shown_as"]) for s in again] == [(s["id"], s["shown_as"]) for s in first]

    result = run_cli("publish", "--no-send", cwd=folder)
    assert result.code == 0, result.stderr + result.stdout
    [world_page] = (folder / "site").rglob("world.html")
    page = world_page.read_text()
    assert "Also in Technology:" in page and escape(shown["title"]) in page
    [ledger] = [s for s in chip if s["shown_in"]]
    assert escape(ledger["title"]) not in page  # neither a story nor a headline there
    tech_page = next((folder / "site").rglob("technology.html")).read_text()
    assert (
        escape(shown["title"]) in tech_page
        and "Also in" not in tech_page.split("Also in the news")[0]
    )


def test_a_readers_rules_keep_or_drop_a_mention_by_its_title() -> None:
    from digest.stories.rules import Rules, tailor

    edition = mentioned_edition()
    title = edition.sections[1].mentions[0].title  # "Chipmaker unveils 2-nanometre processor…"
    kept = tailor(edition, categories=("world",), rules=Rules(exclude=("ceasefire",)))
    assert [m.title for m in kept.sections[0].mentions] == [title]
    dropped = tailor(edition, categories=("world",), rules=Rules(exclude=("chipmaker",)))
    assert dropped.sections[0].mentions == ()


async def test_the_stored_edition_keeps_its_mentions_and_where_a_story_was_also_collected(
    tmp_path: Path, store: Store, db_url: str
) -> None:
    collect(store)
    edition = await edition_of(tmp_path, db_url)
    store.save_edition(edition)
    assert store.edition(DAY) == edition
    assert section(store.edition(DAY), "world").mentions  # type: ignore[arg-type]


@pytest.mark.slow
async def test_an_email_and_archive_pages_with_a_mention_pass_the_axe_checks(
    tmp_path: Path,
) -> None:
    """The mention's line keeps the email (desktop and phone widths) and the archive's pages
    WCAG 2 AA."""
    from playwright.async_api import async_playwright

    from digest.config import ArchiveConfig
    from digest.render import render_pages
    from digest.render.email import render_email
    from tests import axe
    from tests.conftest import CHROMIUM_ARGS, chromium_path

    page_html, _ = render_email(
        mentioned_edition(),
        categories=None,
        tz=UTC,
        title="Morning digest",
        archive=ARCHIVE,
        unsubscribe="https://news.example/u?t=1",
        recipient="reader@example.org",
        budget=100_000,
    )
    assert "Also in Technology:" in page_html
    page_file = tmp_path / "email.html"
    page_file.write_text(page_html, encoding="utf-8")
    site = tmp_path / "site"
    for path, content in render_pages([mentioned_edition()], ArchiveConfig(title="Morning digest")):
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(content)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            for width in (760, 390):
                page = await browser.new_page(viewport={"width": width, "height": 900})
                await page.goto(page_file.as_uri())
                found = await axe.violations_async(page, skip=("landmark-one-main", "region"))
                assert found == [], f"at {width}px: {found}"
                overflow = await page.evaluate(
                    "document.documentElement.scrollWidth > window.innerWidth + 1"
                )
                assert not overflow, f"the email scrolls sideways at {width}px"
                await page.close()
            # The archive's edition and category pages with the mention's line.
            for name in ("index.html", "world.html"):
                page = await browser.new_page(viewport={"width": 390, "height": 900})
                await page.goto((site / "2025/03/03" / name).as_uri())
                assert "Also in Technology:" in await page.inner_text("main")
                found = await axe.violations_async(page)
                assert found == [], f"{name}: {found}"
                await page.close()
        finally:
            await browser.close()
