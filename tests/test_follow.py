"""Following a story (issue 31): follow and unfollow, the quiet end of a follow, and the alerts
a follower gets of new facts and corrections, exactly once, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from digest.store import Store
from digest.store.memory_tables import follow_alerts, follows, story_events
from digest.store.schema import stories
from tests import storefixtures
from tests.storefixtures import NOW

# Fixtures, found by pytest under these names.
db_url, store = storefixtures.db_url, storefixtures.store

DAY = timedelta(days=1)


def add_story(store: Store, title: str = "Quake kills 12 in the north") -> int:
    with store.engine.begin() as conn:
        row = {"category": "world", "title": title, "first_seen": NOW, "last_seen": NOW}
        return int(conn.execute(stories.insert().values(row).returning(stories.c.id)).scalar_one())


def add_event(
    store: Store,
    story_id: int,
    kind: str,
    key: str,
    *,
    outlet: str = "Daily Planet",
    text: str = "",
    at: Any = NOW,
    detail: dict[str, Any] | None = None,
) -> int:
    """An event as the timeline records it (plain insert into `story_events`)."""
    row = {
        "story_id": story_id,
        "kind": kind,
        "key": key,
        "at": at,
        "recorded_at": at,
        "outlet": outlet,
        "url": f"https://{outlet.lower().replace(' ', '')}.example/{key}",
        "text": text,
        "detail": detail or {},
    }
    with store.engine.begin() as conn:
        inserted = conn.execute(story_events.insert().values(row).returning(story_events.c.id))
        return int(inserted.scalar_one())


def subscribe(store: Store, email: str = "reader@example.org") -> str:
    return store.add_subscriber(email, categories=None, timezone="UTC").email


# -- the store -------------------------------------------------------------------------------


def test_following_is_idempotent_and_ends_on_unfollow(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    assert store.follow(reader, story, NOW)
    assert store.follow(reader, story, NOW + DAY)  # again: the same follow
    assert [(f.story_id, f.title) for f in store.follows_of(reader)] == [
        (story, "Quake kills 12 in the north")
    ]
    assert [f.email for f in store.followers(story)] == [reader]
    assert store.follows_of(reader)[0].created_at == NOW
    assert store.unfollow(reader, story, NOW + DAY)
    assert not store.unfollow(reader, story, NOW + DAY)  # twice: nothing more
    assert store.follows_of(reader) == []
    assert store.followers(story) == []
    ended = store.follow_of(reader, story)
    assert ended is not None and ended.end_reason == "unfollowed"


def test_an_unknown_story_or_reader_cannot_be_followed(store: Store) -> None:
    reader = subscribe(store)
    assert not store.follow(reader, 999, NOW)
    assert not store.follow("nobody@example.org", add_story(store), NOW)
    assert store.story_title(999) is None


def test_a_follow_starts_after_what_happened_before(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    known = add_event(store, story, "fact", "fact:a:dead:12", text="12 dead")
    store.follow(reader, story, NOW)
    assert store.follows_of(reader)[0].alerted_through == known
    assert store.open_alerts({reader: ["email"]}, NOW) == []


def test_one_alert_per_follow_whatever_the_new_facts(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    store.follow(reader, story, NOW)
    add_event(store, story, "outlet", "outlet:b", outlet="B")
    assert store.open_alerts({reader: ["email"]}, NOW) == []  # an outlet alone is no news
    first = add_event(store, story, "fact", "fact:b:dead:30", outlet="B", text="30 dead")
    last = add_event(store, story, "correction", "correction:dead:12:30", text="30, not 12")
    (alert,) = store.open_alerts({reader: ["email", "ntfy:1"]}, NOW)
    assert alert.through == last and alert.channels == ("email", "ntfy:1")
    events = store.events_to_alert(story, alert.follow.alerted_through, alert.through)
    assert [e.id for e in events] == [first, last]
    # Asked again before it is sent (a run killed after making it): the same alert, no other,
    # even with a newer fact.
    add_event(store, story, "fact", "fact:c:injured:40", outlet="C", text="40 injured")
    (again,) = store.open_alerts({reader: ["email"]}, NOW)
    assert (again.through, again.channels) == (last, ("email", "ntfy:1"))
    with store.engine.connect() as conn:
        assert len(conn.execute(select(follow_alerts)).all()) == 2


def test_an_alert_closes_when_every_channel_is_done(store: Store) -> None:
    reader = subscribe(store)
    story = add_story(store)
    store.follow(reader, story, NOW)
    fact = add_event(store, story, "fact", "fact:b:dead:30", outlet="B", text="30 dead")
    assert len(store.open_alerts({reader: ["email", "ntfy:1"]}, NOW)) == 1
    with store.engine.begin() as conn:
        conn.execute(
            follow_alerts.update()
            .where(follow_alerts.c.channel == "email")
            .values(state="sent", attempts=1)
        )
    assert store.close_alerts() == 0  # the channel's row is still pending
    with store.engine.begin() as conn:
        conn.execute(
            follow_alerts.update()
            .where(follow_alerts.c.channel == "ntfy:1")
            .values(state="failed", attempts=1)
        )
    assert store.close_alerts() == 1
    assert store.follows_of(reader)[0].alerted_through == fact
    assert store.open_alerts({reader: ["email"]}, NOW) == []
    assert store.alert_counts()["failed"] == 1


def test_quiet_follows_end(store: Store) -> None:
    reader = subscribe(store)
    quiet, busy, new = add_story(store, "Quiet"), add_story(store, "Busy"), add_story(store, "New")
    for story in (quiet, busy):
        store.follow(reader, story, NOW - 20 * DAY)
    store.follow(reader, new, NOW - DAY)  # followed lately: its days have not run out
    add_event(store, quiet, "fact", "fact:a:x:1", at=NOW - 15 * DAY)
    add_event(store, busy, "outlet", "outlet:b", at=NOW - 2 * DAY)
    assert store.end_quiet_follows(NOW, 14) == 1
    assert sorted(f.title for f in store.follows_of(reader)) == ["Busy", "New"]
    ended = store.follow_of(reader, quiet)
    assert ended is not None and ended.end_reason == "quiet"
    # Following it again starts a new follow, after what happened before.
    assert store.follow(reader, quiet, NOW)
    assert store.end_quiet_follows(NOW, 14) == 0
    with store.engine.connect() as conn:
        assert len(conn.execute(select(follows)).all()) == 3
