"""Storage: articles, stories, summaries, runs and feed state in SQLite (default) or PostgreSQL.

`open_store(url)` is the way in; it creates or upgrades the schema before returning a `Store`.
"""

from digest.store.engine import make_engine, open_store, upgrade
from digest.store.repo import (
    ArticleView,
    ClusterResult,
    FeedState,
    RunExistsError,
    RunRecord,
    Store,
    StoryView,
    UpsertResult,
    content_hash,
)
from digest.store.urls import canonical_url

__all__ = [
    "ArticleView",
    "ClusterResult",
    "FeedState",
    "RunExistsError",
    "RunRecord",
    "Store",
    "StoryView",
    "UpsertResult",
    "canonical_url",
    "content_hash",
    "make_engine",
    "open_store",
    "upgrade",
]
