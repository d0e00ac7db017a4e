"""Housekeeping and status queries: retention, feed health, database size, interrupted runs."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from digest.models import FeedState, Page
from digest.store import owners
from digest.store.schema import runs
from tests import storefixtures
from tests.storefixtures import NOW, item

db_url, store = storefixtures.db_url, storefixtures.store


def test_retention_drops_old_page_texts_but_keeps_articles(store):
    store.upsert_items([item("https://a.example/old"), item("https://b.example/new")], seen_at=NOW)
    store.upsert_items([item("https://b.example/new")], seen_at=NOW + timedelta(days=100))
    for url in ("https://a.example/old", "https://b.example/new"):
        view = store.article_by_url(url)
        store.save_crawl(view.id, Page(url=url, final_url=url, title="t", text="Body " * 50))
    assert store.article_counts() == {"articles": 2, "with_text": 2}
    assert store.prune_texts(NOW + timedelta(days=10)) == 1
    assert store.article_counts() == {"articles": 2, "with_text": 1}
    assert store.article_text(store.article_by_url("https://a.example/old").id) is None
    assert store.prune_texts(NOW + timedelta(days=10)) == 0


def test_failing_feeds_come_first_and_the_database_has_a_size(store):
    store.save_feed_state(FeedState(url="https://ok.example/rss", category="world"))
    store.save_feed_state(
        FeedState(url="https://bad.example/rss", category="world", error_count=4, last_error="x")
    )
    assert [f.url for f in store.feed_states()] == [
        "https://bad.example/rss",
        "https://ok.example/rss",
    ]
    assert store.database_size() > 0


def _set_owner(store, run_id: int, owner: str | None, started_at=None) -> None:
    values = {"owner": owner} | ({"started_at": started_at} if started_at else {})
    with store.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == run_id).values(values))


@pytest.mark.slow
def test_recovery_fails_the_runs_of_dead_processes_and_leaves_live_ones(store):
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        mine = store.start_run("collect", "collect:mine")  # this process: alive
        cli = store.start_run("collect", "collect:cli")
        _set_owner(store, cli, owners._owner(live.pid))
        crashed = store.start_run("deepen", "deepen:crashed")
        _set_owner(store, crashed, owners._owner(dead.pid))
        legacy = store.start_run("publish", "publish:legacy")
        _set_owner(store, legacy, None)
        reused = store.start_run("collect", "collect:reused")  # same pid, another process
        _set_owner(store, reused, owners._owner(live.pid).rsplit("/", 1)[0] + "/1")
        elsewhere = store.start_run("collect", "collect:elsewhere")
        _set_owner(store, elsewhere, f"other-host/x/{live.pid}/1")
        long_gone = store.start_run("collect", "collect:long-gone")
        old = datetime.now(UTC) - owners.OTHER_HOST_STALE_AFTER - timedelta(minutes=1)
        _set_owner(store, long_gone, "other-host/x/1/1", started_at=old)

        freed = store.recover_interrupted(datetime.now(UTC) + timedelta(seconds=1))

        assert sorted(freed) == sorted(
            ["deepen:crashed", "publish:legacy", "collect:reused", "collect:long-gone"]
        )
        status = {r.id: r.status for r in store.recent_runs(10)}
        assert status[mine] == status[cli] == status[elsewhere] == "running"
        assert status[crashed] == status[legacy] == "interrupted"
    finally:
        live.kill()
        live.wait()
    # Once the CLI process is gone, its run is recovered too.
    assert store.recover_interrupted(datetime.now(UTC)) == ["collect:cli"]


def test_a_run_records_the_process_that_owns_it(store):
    run_id = store.start_run("collect")
    with store.engine.connect() as conn:
        owner = conn.execute(select(runs.c.owner).where(runs.c.id == run_id)).scalar_one()
    assert owner == owners.current_owner()
    assert owners.owner_alive(owner, datetime.now(UTC), datetime.now(UTC))
