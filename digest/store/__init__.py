"""Storage: articles, runs and feed state in SQLite (default) or PostgreSQL.

`open_store(url)` is the way in; it creates or upgrades the schema before returning a `Store`.
"""

from digest.store.engine import make_engine, open_store, upgrade
from digest.store.repo import FeedState, RunExistsError, RunRecord, Store, UpsertResult
from digest.store.urls import canonical_url

__all__ = [
    "FeedState",
    "RunExistsError",
    "RunRecord",
    "Store",
    "UpsertResult",
    "canonical_url",
    "make_engine",
    "open_store",
    "upgrade",
]
