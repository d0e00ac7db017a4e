"""Housekeeping and status queries: retention, feed health, database size."""

from __future__ import annotations

from datetime import timedelta

from digest.models import Page
from digest.store.health import article_counts, database_size, feed_states, prune_texts
from digest.store.repo import FeedState
from tests import storefixtures
from tests.storefixtures import NOW, item

db_url, store = storefixtures.db_url, storefixtures.store


def test_retention_drops_old_page_texts_but_keeps_articles(store):
    store.upsert_items([item("https://a.example/old"), item("https://b.example/new")], seen_at=NOW)
    store.upsert_items([item("https://b.example/new")], seen_at=NOW + timedelta(days=100))
    for url in ("https://a.example/old", "https://b.example/new"):
        view = store.article_by_url(url)
        store.save_crawl(view.id, Page(url=url, final_url=url, title="t", text="Body " * 50))
    assert article_counts(store) == {"articles": 2, "with_text": 2}
    assert prune_texts(store, NOW + timedelta(days=10)) == 1
    assert article_counts(store) == {"articles": 2, "with_text": 1}
    assert store.article_text(store.article_by_url("https://a.example/old").id) is None
    assert prune_texts(store, NOW + timedelta(days=10)) == 0


def test_failing_feeds_come_first_and_the_database_has_a_size(store):
    store.save_feed_state(FeedState(url="https://ok.example/rss", category="world"))
    store.save_feed_state(
        FeedState(url="https://bad.example/rss", category="world", error_count=4, last_error="x")
    )
    assert [f.url for f in feed_states(store)] == [
        "https://bad.example/rss",
        "https://ok.example/rss",
    ]
    assert database_size(store) > 0
