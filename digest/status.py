"""`digest status`: what the service did, what failed, and what happens next."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from digest.app import App
from digest.schedule import (
    collect_period,
    edition_day,
    parse_clock,
    parse_interval,
    publish_due_at,
)
from digest.store import Store


def next_runs(app: App, now: datetime) -> dict[str, str]:
    sched = app.config.schedule
    every = parse_interval(sched.collect_every)
    publish_at = parse_clock(sched.publish_at)
    today = edition_day(now, sched.timezone)
    due = publish_due_at(today, publish_at, sched.timezone)
    if due <= now:
        due = publish_due_at(today + timedelta(days=1), publish_at, sched.timezone)
    return {
        "collect": (collect_period(now, every) + every).isoformat(),
        "publish": due.isoformat(),
    }


def daemon_running(app: App, store: Store) -> bool:
    """Whether a daemon holds this database's lock: its advisory lock on PostgreSQL (held by a
    session on any machine), its lock file on SQLite."""
    from filelock import FileLock, Timeout

    from digest.daemon import lock_path

    if store.engine.url.get_backend_name() == "postgresql":
        return store.daemon_lock_held()
    path = lock_path(app.config)
    if not path.exists():
        return False
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


def failed_deliveries(store: Store, limit: int = 20) -> list[dict[str, str]]:
    """The failed emails of the newest edition in the ledger, with the reason kept for each:
    an address the rule refuses, say, fails the same way every day until it is fixed."""
    newest = store.deliveries(limit=1)
    if not newest:
        return []
    rows = store.deliveries(limit, edition_day=newest[0].edition_day, states=("failed",))
    return [
        {
            "edition": r.edition_day.isoformat(),
            "recipient": r.recipient,
            "reply": r.last_reply or "",
        }
        for r in rows
    ]


async def status(app: App) -> dict[str, Any]:
    store = await app.store()
    now = datetime.now(UTC)
    runs = await asyncio.to_thread(store.recent_runs, 30)
    last: dict[str, Any] = {}
    for r in runs:
        if r.kind in last:
            continue
        last[r.kind] = {
            "id": r.id,
            "status": r.status,
            "key": r.key,
            "started_at": r.started_at.isoformat(),
            "duration_s": round((r.finished_at - r.started_at).total_seconds(), 2)
            if r.finished_at
            else None,
            "counts": r.counts,
            "errors": r.errors,
        }
    feeds = await asyncio.to_thread(store.feed_states)
    deepen = last.get("deepen", {}).get("counts", {})
    return {
        "daemon_running": await asyncio.to_thread(daemon_running, app, store),
        "next_runs": next_runs(app, now),
        "last_runs": last,
        "recent_runs": [
            {"id": r.id, "kind": r.kind, "status": r.status, "started_at": r.started_at.isoformat()}
            for r in runs[:10]
        ],
        "failing_feeds": [
            {
                "url": f.url,
                "errors_in_a_row": f.error_count,
                "last_error": f.last_error,
                "last_ok_at": f.last_ok_at.isoformat() if f.last_ok_at else None,
            }
            for f in feeds
            if f.error_count
        ],
        "failing_sources": last.get("collect", {}).get("errors", []),
        "failing_hosts": last.get("collect", {}).get("counts", {}).get("failing_hosts", {}),
        "llm_tokens_today": await asyncio.to_thread(store.tokens_used, app.config.today_start(now)),
        "deliveries": await asyncio.to_thread(store.ledger_counts),
        "failed_deliveries": await asyncio.to_thread(failed_deliveries, store),
        "database_bytes": await asyncio.to_thread(store.database_size),
        "articles": await asyncio.to_thread(store.article_counts),
        "browser": {
            "configured": app.config.crawl.mode,
            "last_used": deepen.get("crawl_mode"),
            "why": deepen.get("crawl_mode_reason"),
        },
        "llm": f"llm:{app.config.llm.model}"
        if app.config.llm
        else "extractive (no llm configured)",
    }
