"""Storage: articles, stories, summaries, runs, feed state, subscribers, editions and the delivery
ledger in SQLite (default) or PostgreSQL.

`open_store(url)` is the way in; it creates or upgrades the schema before returning a `Store`,
which is composed of one part per domain (`digest.store.store`). The things it keeps are the
domain types of `digest.models`; its errors are in `digest.errors`.
"""

from digest.store.articles import UpsertResult, content_hash
from digest.store.engine import make_engine, upgrade
from digest.store.ledgers import SqlLedger
from digest.store.store import Store, open_store
from digest.store.subscribers import normalize_email
from digest.store.urls import canonical_url

__all__ = [
    "SqlLedger",
    "Store",
    "UpsertResult",
    "canonical_url",
    "content_hash",
    "make_engine",
    "normalize_email",
    "open_store",
    "upgrade",
]
