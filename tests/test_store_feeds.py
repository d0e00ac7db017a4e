"""Subscribed feeds in the store, on SQLite and PostgreSQL: one row per canonical URL, added in
one transaction, removed with what was saved about their fetches."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from digest.errors import StoreError
from digest.models import FeedState, SubscribedFeed
from tests import storefixtures
from tests.storefixtures import NOW

db_url, store = storefixtures.db_url, storefixtures.store


def sub(url: str, category: str = "technology", **kw) -> SubscribedFeed:
    values = {"name": None, "origin": "opml", "added_at": NOW, **kw}
    return SubscribedFeed(url=url, category=category, **values)


def test_feeds_are_kept_by_category_in_the_order_added(store) -> None:
    feeds = [
        sub("https://b.example/rss", "world", name="B", site_url="https://b.example/"),
        sub("https://a.example/rss", origin="cli"),
        sub("https://c.example/atom", "world", added_at=NOW + timedelta(seconds=1)),
    ]
    assert store.add_subscribed_feeds(feeds) == feeds
    assert store.subscribed_feeds() == [feeds[1], feeds[0], feeds[2]]
    assert store.subscribed_feeds("world") == [feeds[0], feeds[2]]
    assert store.subscribed_feeds("sports") == []
    back = store.subscribed_feed("https://b.example/rss")
    assert back == feeds[0] and back.added_at.utcoffset() == timedelta(0)


def test_the_same_feed_under_another_spelling_is_not_added_twice(store) -> None:
    first = sub("https://news.example/feed?id=7")
    assert store.add_subscribed_feeds([first]) == [first]
    twins = [
        sub("https://NEWS.example:443/feed?id=7&utm_source=reader#top", "world"),
        sub("https://news.example/feed?id=7", origin="cli"),
    ]
    fresh = sub("https://news.example/feed?id=8")
    assert store.add_subscribed_feeds([*twins, fresh]) == [fresh]
    assert [f.url for f in store.subscribed_feeds()] == [first.url, fresh.url]
    assert store.subscribed_feed("https://news.example/feed?id=7&fbclid=x") == first
    assert store.subscribed_canonicals(
        ["https://news.example/feed?id=7&gclid=1", "https://other.example/"]
    ) == {"https://news.example/feed?id=7"}


def test_a_batch_that_fails_adds_nothing(store) -> None:
    good = sub("https://a.example/rss")
    bad = sub("https://b.example/rss", origin="elsewhere")  # the origin constraint refuses it
    with pytest.raises(StoreError):
        store.add_subscribed_feeds([good, bad])
    assert store.subscribed_feeds() == []


def test_naive_times_are_refused(store) -> None:
    with pytest.raises(ValueError, match="added_at"):
        store.add_subscribed_feeds([sub("https://a.example/rss", added_at=datetime(2025, 3, 1))])
    assert store.subscribed_feeds() == []


def test_removing_a_feed_forgets_its_fetch_state_unless_told_not_to(store) -> None:
    one, two = sub("https://a.example/rss"), sub("https://b.example/rss")
    store.add_subscribed_feeds([one, two])
    for f in (one, two):
        store.save_feed_state(FeedState(url=f.url, category=f.category, error_count=2))

    assert store.remove_subscribed_feed("https://A.example/rss?utm_medium=x") == one
    assert store.feed_state(one.url) is None
    assert store.remove_subscribed_feed(two.url, forget_state=False) == two
    assert store.feed_state(two.url) is not None
    assert store.remove_subscribed_feed(two.url) is None
    assert store.subscribed_feeds() == []
