"""What `digest status` and the daemon's housekeeping need from the database."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, text, update

from digest.store.repo import FeedState, Store
from digest.store.schema import articles, feeds


def feed_states(store: Store) -> list[FeedState]:
    """Every feed that was ever fetched, the failing ones first."""
    with store._read() as conn:
        rows = conn.execute(
            select(feeds).order_by(feeds.c.error_count.desc(), feeds.c.url)
        ).mappings()
        return [FeedState(**{k: row[k] for k in FeedState.__dataclass_fields__}) for row in rows]


def database_size(store: Store) -> int | None:
    """Bytes on disk: the SQLite file (with its WAL), or PostgreSQL's database size."""
    url = store.engine.url
    if url.get_backend_name() == "sqlite":
        path = url.database or ""
        return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    if url.get_backend_name() == "postgresql":
        with store._read() as conn:
            return int(conn.execute(text("select pg_database_size(current_database())")).scalar())
    return None


def prune_texts(store: Store, before: datetime) -> int:
    """Drop the crawled page texts of articles last seen before `before`; the articles, their
    stories and summaries stay. Returns how many texts were dropped."""
    with store._write() as conn:
        result = conn.execute(
            update(articles)
            .where(articles.c.last_seen < before, articles.c.text.is_not(None))
            .values(text=None)
        )
        return int(result.rowcount or 0)


def article_counts(store: Store) -> dict[str, Any]:
    with store._read() as conn:
        total = conn.execute(select(func.count()).select_from(articles)).scalar_one()
        texts = conn.execute(
            select(func.count()).select_from(articles).where(articles.c.text.is_not(None))
        ).scalar_one()
    return {"articles": int(total), "with_text": int(texts)}


def recover_interrupted(store: Store, started_before: datetime) -> list[str]:
    """Runs a dead process left 'running': mark them failed and free their period keys, so that
    a restarted daemon runs those periods again. Returns the freed keys (and ids)."""
    from digest.store.schema import runs

    with store._write() as conn:
        rows = conn.execute(
            select(runs.c.id, runs.c.key, runs.c.errors).where(
                runs.c.status == "running", runs.c.started_at < started_before
            )
        ).all()
        for run_id, _key, errors in rows:
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .values(
                    status="failed",
                    key=None,
                    errors=[*(errors or []), {"source": "run", "error": "interrupted"}],
                )
            )
    return [key or f"run {run_id}" for run_id, key, _ in rows]
