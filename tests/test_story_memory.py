"""A story's memory across days (issue 31): its timeline recorded once whatever runs again, the
figures each outlet reports, where outlets disagree, and corrections of what editions that went
out said; on SQLite and PostgreSQL, and end to end through deepen and publish."""

from __future__ import annotations

import threading
from datetime import date, timedelta

from digest.config import StoriesConfig
from digest.jobs.clustering import cluster_category
from digest.store import Store
from digest.stories.events import NewEvent
from tests import storefixtures
from tests.storefixtures import NOW, item

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
