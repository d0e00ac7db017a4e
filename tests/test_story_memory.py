"""A story's memory across days (issue 31): its timeline recorded once whatever runs again, the
figures each outlet reports, where outlets disagree, and corrections of what editions that went
out said; on SQLite and PostgreSQL, and end to end through deepen and publish."""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from email.utils import format_datetime
from html import unescape
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.app import App
from digest.config import StoriesConfig, parse_config
from digest.jobs.clustering import cluster_category
from digest.jobs.collect import collect
from digest.jobs.deepen import deepen
from digest.jobs.publish import publish
from digest.memory.events import NewEvent
from digest.models import Correction, Edition, EditionSection
from digest.render.corrections import Corrected, mark_corrected
from digest.render.layout import Links
from digest.render.templating import clean_edition
from digest.store import Store
from tests import storefixtures
from tests.editions import make_story
from tests.linkforms import HOSTILE_LINKS
from tests.newsweb import Route
from tests.storefixtures import NOW, item
from tests.test_whats_new import email_parts, plain

# Fixtures, found by pytest under these names.
db_url, store = storefixtures.db_url, storefixtures.store

HOUR = timedelta(hours=1)


def a_story(store: Store) -> int:
    store.upsert_items(
        [
            item(
                "https://a.example/quake",
                title="Quake kills 12",
                lede="At least 12 people died.",
                category="world",
                published=NOW - HOUR,
                source="A",
            )
        ],
        seen_at=NOW,
    )
    cluster_category(store, "world", now=NOW, config=StoriesConfig())
    [story] = store.stories_since(None, since=NOW - 2 * HOUR)
    return story.id


def events(n: int = 0) -> list[NewEvent]:
    at = NOW - HOUR
    return [
        NewEvent("first", "first", at, outlet="A", url="https://a.example/quake", text="Quake"),
        NewEvent("outlet:A", "outlet", at, outlet="A"),
        NewEvent(
            "fact:A:dead:12", "fact", at, outlet="A", subject="dead", value="12", text="12 died."
        ),
        *(NewEvent(f"outlet:X{i}", "outlet", at + i * HOUR, outlet=f"X{i}") for i in range(n)),
    ]


def test_recording_twice_adds_nothing_and_reads_oldest_first(store: Store) -> None:
    story = a_story(store)
    first = store.record_events(story, events())
    assert [e.kind for e in first] == ["first", "outlet", "fact"]
    assert store.record_events(story, events()) == []
    timeline = store.story_timeline(story)
    assert [(e.kind, e.outlet, e.value) for e in timeline] == [
        ("first", "A", ""),
        ("outlet", "A", ""),
        ("fact", "A", "12"),
    ]
    assert store.events_after(story, first[0].id, ("fact",)) == [first[2]]
    assert store.events_after(story, first[2].id, ("fact",)) == []


def test_a_timeline_is_bounded_to_its_newest_entries(store: Store) -> None:
    story = a_story(store)
    store.record_events(story, events(40))
    timeline = store.story_timeline(story, limit=30)
    assert len(timeline) == 30
    assert timeline[-1].outlet == "X39" and timeline == sorted(timeline, key=lambda e: e.at)


def test_concurrent_recorders_record_each_event_once(store: Store) -> None:
    story = a_story(store)
    barrier = threading.Barrier(4)
    added: list[int] = []

    def record() -> None:
        barrier.wait()
        added.append(len(store.record_events(story, events(10))))

    threads = [threading.Thread(target=record) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(added) == 13
    assert len(store.story_timeline(story, limit=100)) == 13


def test_the_latest_figure_of_each_outlet_and_subject_is_its_newest(store: Store) -> None:
    story = a_story(store)
    store.record_events(story, events())
    revised = NewEvent(
        "revision:A:dead:12:30",
        "revision",
        NOW,
        outlet="A",
        subject="dead",
        value="30",
        previous="12",
        detail={"number": "30", "qualifier": ""},
    )
    store.record_events(story, [revised])
    latest = store.latest_figures(story)
    assert list(latest) == [("A", "dead")]
    event, detail = latest[("A", "dead")]
    assert (event.kind, event.value, event.previous, detail["number"]) == (
        "revision",
        "30",
        "12",
        "30",
    )


def test_corrections_are_read_by_story_and_by_the_day_they_correct(store: Store) -> None:
    story = a_story(store)
    day = date(2025, 2, 28)
    fix = NewEvent(
        "correction:2025-02-28:dead:12:30",
        "correction",
        NOW,
        subject="dead",
        value="30",
        previous="12",
        edition_day=day,
        text="The quake killed 12 people.",
        detail={"in_edition": "2025-03-01"},
    )
    store.record_events(story, [fix])
    store.record_events(story, [fix])
    [(event, detail)] = store.story_corrections(story)
    assert (event.previous, event.value, event.edition_day) == ("12", "30", day)
    assert detail["in_edition"] == "2025-03-01"
    assert [e.id for e, _ in store.corrections_of_day(day)] == [event.id]
    assert store.corrections_of_day(day + timedelta(days=1)) == []
    assert store.story_event_counts()["events"] == 1


def test_a_recording_killed_half_way_and_run_again_ends_as_one_whole_run(store: Store) -> None:
    """kill -9 between events: each is its own row keyed in the story, so running again adds
    exactly what is missing."""
    story = a_story(store)
    whole = events(5)
    store.record_events(story, whole[:3])  # then the process died
    assert len(store.record_events(story, whole)) == len(whole) - 3
    assert [e.outlet for e in store.story_timeline(story)] == [
        "A",
        "A",
        "A",
        *(f"X{i}" for i in range(5)),
    ]


@given(
    before=st.text(max_size=40),
    sentence=st.text(min_size=1, max_size=60).filter(str.strip),
    after=st.text(max_size=40),
)
def test_a_corrected_sentence_is_marked_and_scraped_text_stays_text(
    before: str, sentence: str, after: str
) -> None:
    paragraph = f"{before}{sentence}{after}"
    fix = Correction("dead", "12", "30", date(2025, 3, 3), sentence)
    note = Corrected(7, fix, date(2025, 3, 4), NOW)
    html = str(mark_corrected(paragraph, [note], Links("2025/03/03/stories/7.html")))
    assert html.count("<mark") == 1 and html.count("<a ") == 1
    assert 'href="../../04/stories/7.html#corrections"' in html
    # What a reader reads is the paragraph as scraped, with the link's words after the sentence.
    text = unescape(re.sub(r"<[^>]+>", "", html))
    assert text.replace(" Corrected on 4 March", "", 1) == paragraph
    assert "<" not in re.sub(r"<(/?mark|/?a)[^>]*>", "", html)


@pytest.mark.parametrize("link", HOSTILE_LINKS)
def test_a_timeline_records_an_outlets_sentences_without_their_links(link: str) -> None:
    """What alerts and "Since your last digest" tell is recorded as a summary is written: no
    link but the outlet's own article."""
    from digest.memory.timeline import OutletText, story_events

    first = OutletText(
        "A",
        "https://a.example/quake",
        "Quake kills 12",
        NOW - HOUR,
        "An earthquake killed 12 people in northern Valdoria.",
        lede="An earthquake killed 12 people in northern Valdoria.",
    )
    said = f"Relief teams reached 14 villages near the epicentre, donate at {link} today."
    joined = OutletText(
        "Relief Desk",
        "https://relief.example/desk/quake",
        f"Quake: donate at {link}",
        NOW,
        said,
        lede=said,
    )
    events = story_events([first, joined], {}, now=NOW)
    facts = [e.text for e in events if e.kind == "fact" and e.outlet == "Relief Desk"]
    assert "Relief teams reached 14 villages near the epicentre, donate at today." in facts
    assert [e.text for e in events if e.kind == "outlet"] == ["Quake: donate at"]
    for e in events:
        assert not [bad for bad in ("evil", "203.0.113.5", "press@") if bad in e.text + e.key]


def test_two_outlets_that_give_twelve_and_at_least_fifteen_dead_disagree_on_day_one() -> None:
    """Issue 38's English case: "Twelve people died, and 12 bodies have been recovered" (A)
    beside "At least 15 people died" (B) is a disagreement, recorded on the story's timeline."""
    from digest.memory.timeline import OutletText, story_events

    a = "Twelve people died, and 12 bodies have been recovered from the river."
    b = "At least 15 people died when the Harbourton bridge collapsed, the fire service said."
    events = story_events(
        [
            OutletText("A", "https://a.example/bridge", "Bridge collapse kills 12", NOW, a, a),
            OutletText("B", "https://b.example/bridge", "Bridge collapses", NOW, b, b),
        ],
        {},
        now=NOW,
    )
    (dispute,) = [e for e in events if e.kind == "disagreement"]
    assert dispute.subject == "dead"
    assert dispute.detail["reported"] == [["12", ["A"]], ["At least 15", ["B"]]]


def test_a_figure_on_the_timeline_shows_its_clause_in_the_outlets_words() -> None:
    """A scraped page's sentence can run to 1,800 characters: the figure's entry shows the
    clause that says it (issue 38), in the outlet's language, under a quantity key."""
    from digest.memory.timeline import OutletText, story_events

    filler = "la comunidad internacional volvió a reunirse en Ginebra sin acuerdo alguno " * 20
    text = f"Según la ONU, {filler}y al menos 70 personas murieron en el ataque químico de Duma."
    outlet = OutletText("El Diario", "https://diario.example/duma", "Ataque en Duma", NOW, text)
    (fact,) = [e for e in story_events([outlet], {}, now=NOW) if e.kind == "fact"]
    assert (fact.subject, fact.value) == ("dead", "al menos 70")
    assert "al menos 70 personas murieron en el ataque químico de Duma" in fact.text
    assert fact.text in text and len(fact.text) <= 200


def test_what_is_new_is_told_from_ledes_without_their_links(store: Store) -> None:
    """The "New:" line and "Since your last digest" take their facts from the ledes as
    `tellings_of` hands them to novelty: without a link but the article's own."""
    from digest.edition.sections import tellings_of

    lede = "Relief teams reached 14 villages, donate at https://evil.example/pay or 203.0.113.5/x."
    own = "Read it at https://a.example/quake first."
    store.upsert_items(
        [
            item(
                "https://a.example/quake",
                title="Quake kills 12",
                lede=f"{lede} {own}",
                category="world",
                published=NOW - HOUR,
                source="A",
            )
        ],
        seen_at=NOW,
    )
    cluster_category(store, "world", now=NOW, config=StoriesConfig())
    [view] = store.stories_since(None, since=NOW - 2 * HOUR)
    [telling] = tellings_of(view)
    assert telling.lede.startswith("Relief teams reached 14 villages, donate at")
    assert telling.lede.endswith(own)  # the article's own link stays, as in its summary
    assert "evil.example" not in telling.lede and "203.0.113.5" not in telling.lede


def test_scraped_control_characters_leave_a_timeline_before_it_is_shown() -> None:
    story = make_story(date(2025, 3, 3), "world", 2, story_id=5, updated=True)
    hostile = replace(
        story,
        timeline=tuple(replace(e, text=e.text + "\x1b") for e in story.timeline),
        corrections=tuple(replace(c, sentence=c.sentence + "\x07") for c in story.corrections),
    )
    edition = Edition(date(2025, 3, 3), "UTC", (EditionSection("world", (hostile,), ()),), NOW)
    [clean] = clean_edition(edition).sections[0].stories
    assert clean.timeline == story.timeline and clean.corrections == story.corrections


def test_a_story_out_of_the_top_with_a_correction_is_carried_at_the_end_of_its_category(
    store: Store,
) -> None:
    """The edition of day 1 went out saying 12; on day 2 the story is no longer in the top, but
    its outlet revised the toll and another outlet reports the new one: day 2 carries it, with
    its correction, once."""
    from digest.deliver.ledger import Delivery
    from digest.edition.sections import edition_story
    from digest.jobs.story_memory import with_memory

    story = a_story(store)
    [view] = store.stories_by_id([story])
    day1, day2 = date(2025, 2, 28), date(2025, 3, 1)
    sent = replace(edition_story(view), summary="The quake killed 12 people in the north.")
    store.save_edition(Edition(day1, "UTC", (EditionSection("world", (sent,), ()),), NOW))
    store.add_deliveries([Delivery(day1, "reader@example.org", state="sent")])
    store.record_events(story, events())
    revised = NewEvent(
        "revision:A:dead:12:30",
        "revision",
        NOW,
        outlet="A",
        subject="dead",
        value="30",
        previous="12",
        text="The quake killed 30 people.",
        detail={"number": "30", "qualifier": "", "previous_number": "12"},
    )
    store.record_events(story, [revised])
    # A's revision alone is no correction (a mistake, a hostile page): nothing carried.
    other = replace(sent, id=story + 1000, title="Another story")
    today = (EditionSection("world", (other,), ()),)
    [section] = with_memory(store, today, day2, NOW, edition_story)
    assert [s.id for s in section.stories] == [other.id]
    confirmed = NewEvent(
        "fact:B:dead:30",
        "fact",
        NOW,
        outlet="B",
        subject="dead",
        value="30",
        text="30 people died.",
        detail={"number": "30", "qualifier": ""},
    )
    store.record_events(story, [confirmed])
    today = (EditionSection("world", (other,), ()),)

    [section] = with_memory(store, today, day2, NOW, edition_story)
    assert [s.id for s in section.stories] == [other.id, story]
    [fix] = section.stories[-1].corrections
    assert (fix.said, fix.now, fix.said_on) == ("12", "30", day1)
    assert fix.sentence == "The quake killed 12 people in the north."
    # Built again the same day: the same; the next day: the correction was made already.
    assert with_memory(store, today, day2, NOW, edition_story) == (section,)
    [later] = with_memory(store, today, day2 + timedelta(days=1), NOW, edition_story)
    assert [s.id for s in later.stories] == [other.id]


# -- End to end: day 1 A says 12 dead; day 2 B and C say "at least 30" and A updates to 30. ----

QUAKE_TITLE = "Earthquake in northern Valdoria kills {} people"
A_DAY1 = "An earthquake killed 12 people in northern Valdoria on Monday, officials said."
A_DAY2 = "An earthquake killed 30 people in northern Valdoria on Monday, officials said."
B_LEDE = "At least 30 people were killed when an earthquake struck northern Valdoria on Monday."
C_LEDE = "The earthquake in northern Valdoria on Monday killed at least 30 people, rescuers said."
D_LEDE = "The earthquake in northern Valdoria on Monday killed 45 people, a hospital said."
MORE = (
    "Rescue teams worked through the night in the mountain villages near the epicentre.",
    "The regional government opened shelters in schools and sports halls for those displaced.",
)
READER = "reader@example.org"


def quake_page(slug: str, title: str, lede: str) -> bytes:
    from tests.newsweb import Article, render_article

    article = Article(slug, "world", title, lede, MORE, "A quake in Valdoria.")
    return render_article(article, script_bytes=2_000)


class Days:
    """Day 1 and day 2 of the scenario: deepen runs "on" `self.now` (its clock is the
    `datetime` of its modules, replaced here), and what was read on day 1 is dated day 1 in
    the store."""

    def __init__(self, monkeypatch) -> None:
        from digest.jobs import deepen as deepen_module
        from digest.jobs import story_summary

        self.monkeypatch, self.modules = monkeypatch, (deepen_module, story_summary)
        real = datetime.now(UTC)
        self.day2 = real.date()
        self.day1 = self.day2 - timedelta(days=1)
        self.real = real

    def on_day1(self) -> None:
        fixed = datetime.combine(self.day1, time(21), UTC)

        class Day1(datetime):
            @classmethod
            def now(cls, tz=None):  # type: ignore[override]
                return fixed

        for module in self.modules:
            self.monkeypatch.setattr(module, "datetime", Day1)

    def on_day2(self) -> None:
        for module in self.modules:
            self.monkeypatch.setattr(module, "datetime", datetime)


RSS = "application/rss+xml"


def outlet_feed(url: str | None, title: str, when: datetime) -> bytes:
    """An outlet's RSS feed: its one report of the quake, or nothing yet."""
    entry = (
        f"<item><title>{title}</title><link>{url}</link><guid>{url}</guid>"
        f"<pubDate>{format_datetime(when)}</pubDate></item>"
        if url
        else ""
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Outlet</title>'
        f"<link>http://127.0.0.1/</link><description>News</description>{entry}</channel></rss>"
    ).encode()


def collected_on(db: Path, when: datetime) -> None:
    """What day 1's collect stored, dated on day 1 (collect takes the real clock)."""
    with sqlite3.connect(db) as conn:
        at = when.replace(tzinfo=None).isoformat(sep=" ")
        conn.execute("update articles set first_seen = ?, last_seen = ?, fetched_at = ?", (at,) * 3)


def a_day_later(db: Path, day1: date) -> None:
    """What day 1's deepen read and wrote, dated on day 1 (it ran with the real clock in the
    store's own writes: crawled_at, the ledger)."""
    with sqlite3.connect(db) as conn:
        at = datetime.combine(day1, time(21)).isoformat(sep=" ")
        conn.execute("update articles set crawled_at = ? where crawled_at is not null", (at,))


@pytest.mark.slow
async def test_a_developing_story_over_two_days_keeps_a_timeline_and_corrects_12(
    tmp_path, monkeypatch, threaded_news_web, threaded_llm_server
) -> None:
    web, llm = threaded_news_web, threaded_llm_server
    monkeypatch.setenv("TEST_LLM_KEY", "k")
    days = Days(monkeypatch)
    config = parse_config(
        {
            "database": {"url": f"sqlite:///{tmp_path / 'digest.db'}"},
            "sources": {
                "categories": ["world"],
                "ddg": False,
                "feeds": [
                    {"url": web.url(f"/feeds/{k}.rss"), "category": "world", "name": k.upper()}
                    for k in "abcd"
                ],
            },
            "fetch": {"allowed_networks": ["127.0.0.1/32"]},
            "crawl": {"mode": "http", "respect_robots": False},
            "schedule": {"timezone": "UTC"},
            "archive": {"dir": str(tmp_path / "site"), "title": "Morning digest"},
            "email": {"outbox_dir": str(tmp_path / "outbox")},
            "llm": {**llm.config(api_key_env="TEST_LLM_KEY", timeout=10.0).model_dump()},
        }
    )

    def publish_article(key: str, lede: str, when: datetime, title: str) -> None:
        """The outlet's page, and its feed listing it (each outlet has a feed of its own)."""
        page = f"/world/quake-{key}.html"
        web.add(Route(page, quake_page(key, title, lede)))
        web.add(Route(f"/feeds/{key}.rss", outlet_feed(web.url(page), title, when), RSS))

    for key in "abcd":  # empty feeds until their outlet reports
        web.add(Route(f"/feeds/{key}.rss", outlet_feed(None, "", days.real), RSS))

    # Day 1: A reports 12 dead; the edition goes out.
    days.on_day1()
    day1_at = datetime.combine(days.day1, time(20), UTC)
    publish_article("a", A_DAY1, day1_at, QUAKE_TITLE.format(12))
    app = await App(config).__aenter__()
    store = await app.store()
    store.add_subscriber(READER, categories=None, timezone="UTC")
    assert (await collect(app)).status == "ok"
    collected_on(tmp_path / "digest.db", day1_at + timedelta(minutes=30))
    await deepen(app)
    a_day_later(tmp_path / "digest.db", days.day1)
    day1 = await publish(app, days.day1)
    assert day1.status == "ok", day1.errors
    [story_id] = [s.id for sec in store.edition(days.day1).sections for s in sec.stories]
    said = " ".join(s.summary for sec in store.edition(days.day1).sections for s in sec.stories)
    assert "12" in said
    await app.__aexit__(None, None, None)

    # Day 2 (after a restart): B and C report "at least 30", D 45; A updated its article to 30.
    days.on_day2()
    # Within hours of A's report: the next day's reports of one event join its story.
    day2_at = min(datetime.combine(days.day2, time(0, 30), UTC), days.real)
    publish_article("a", A_DAY2, day1_at, QUAKE_TITLE.format(30))
    publish_article("b", B_LEDE, day2_at, QUAKE_TITLE.format("at least 30"))
    publish_article("c", C_LEDE, day2_at, QUAKE_TITLE.format("at least 30"))
    publish_article("d", D_LEDE, day2_at, QUAKE_TITLE.format(45))
    app = await App(config).__aenter__()
    store = await app.store()
    assert (await collect(app)).status == "ok"
    await deepen(app)
    # A's page was read again: the stored main text is the updated one.
    a = store.article_by_url(web.url("/world/quake-a.html"))
    assert a is not None and "killed 30 people" in (store.article_text(a.id) or "")
    recorded = store.story_event_counts()["events"]
    await deepen(app)  # run again (or after a kill -9): nothing more, nothing doubled
    assert store.story_event_counts()["events"] == recorded

    day2 = await publish(app, days.day2)
    assert day2.status == "ok", day2.errors
    # The model was asked of each figure line the rules found, and said yes (issue 38).
    assert llm.same_quantity_asked and day2.counts["figure_lines_kept_out"] == 0
    [shown] = [
        s for sec in store.edition(days.day2).sections for s in sec.stories if s.id == story_id
    ]
    kinds = [(e.kind, e.outlet) for e in shown.timeline]
    assert ("first", "A") in kinds and ("outlet", "B") in kinds and ("outlet", "C") in kinds
    assert [(e.previous, e.value) for e in shown.timeline if e.kind == "revision"] == [("12", "30")]
    assert [(c.said, c.now, c.said_on) for c in shown.corrections] == [("12", "30", days.day1)]
    # D's 45 against everyone else's 30: shown with who says what, not one figure.
    [dispute] = shown.disagreements
    assert dispute.subject == "dead"
    assert {(r.value, r.outlets) for r in dispute.reported} >= {("45", ("D",))}

    # Publishing day 2 again makes no second correction and keeps the edition as it was.
    again = await publish(app, days.day2)
    assert again.edition_state == "unchanged"
    assert len(store.story_corrections(story_id)) == 1

    site = tmp_path / "site"
    from digest.render import story_path

    page2 = (site / story_path(days.day2, story_id)).read_text()
    assert "Timeline" in page2 and "revised the death toll from 12 to 30" in page2
    assert "Update: the death toll is now 30, up from 12 reported on" in plain(page2)
    assert "Where outlets disagree" in page2 and "45, according to D" in plain(page2)
    page1 = (site / story_path(days.day1, story_id)).read_text()
    assert '<mark class="corrected">' in page1 and "#corrections" in page1
    # The stored, sent edition of day 1 is not rewritten.
    assert store.edition(days.day1).sections[0].stories[0].corrections == ()
    feed = (site / "feed.xml").read_text()
    assert "Update: the death toll is now 30, up from 12" in unescape(unescape(feed))
    # Day 1's entry is updated when the correction was made, after day 1's edition was built.
    from digest.render import edition_path

    updated = r'<updated>([^<]+)</updated>\s*<link rel="alternate"[^>]*href="([^"]+)"'
    entries = {href: when for when, href in re.findall(updated, feed)}
    day1_entry = next(u for h, u in entries.items() if h.endswith(edition_path(days.day1)))
    built1 = store.edition(days.day1)
    assert built1 is not None
    assert datetime.fromisoformat(day1_entry) > built1.generated_at
    text, html = email_parts(tmp_path / "outbox", days.day2)
    assert "Update: the death toll is now 30, up from 12" in text
    assert "Update: the death toll is now 30, up from 12" in plain(html)
    assert "Outlets disagree. The death toll:" in text and "45, according to D" in plain(html)
    # What is new to this reader keeps the disagreement and the follow link; the headline is
    # A's words, never rewritten to "kills 30 or 45" (issue 38).
    assert "Outlets disagree. The death toll:" in plain(html) and "Follow this story" in text
    assert " or 45" not in text and " or 30" not in text and " or at least" not in text
    await app.__aexit__(None, None, None)
