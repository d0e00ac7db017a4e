"""Storage: articles, stories, summaries, runs, feed state, subscribers, editions and the delivery
ledger in SQLite (default) or PostgreSQL.

`open_store(url)` is the way in; it creates or upgrades the schema before returning a `Store`.
"""

from digest.store.engine import make_engine, open_store, upgrade
from digest.store.repo import (
    ArticleView,
    ClusterResult,
    FeedState,
    InvalidSubscriberError,
    RunExistsError,
    RunRecord,
    SqlLedger,
    Store,
    StoryView,
    Subscriber,
    UpsertResult,
    content_hash,
    normalize_email,
)
from digest.store.urls import canonical_url

__all__ = [
    "ArticleView",
    "ClusterResult",
    "FeedState",
    "InvalidSubscriberError",
    "RunExistsError",
    "RunRecord",
    "SqlLedger",
    "Store",
    "StoryView",
    "Subscriber",
    "UpsertResult",
    "canonical_url",
    "content_hash",
    "make_engine",
    "normalize_email",
    "open_store",
    "upgrade",
]
