"""The store, against SQLite (always) and PostgreSQL (when 127.0.0.1:5432 answers)."""

from __future__ import annotations

import multiprocessing
import time
import tomllib
import warnings
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import func, select, text

from digest.errors import RunExistsError, StoreError
from digest.models import FeedState, Item
from digest.store import (
    Store,
    UpsertResult,
    make_engine,
    open_store,
    upgrade,
)
from digest.store.articles import headlines_query
from digest.store.engine import migrations_dir, newest_revision
from digest.store.schema import articles
from tests import storefixtures
from tests.storefixtures import (
    DAY_START,
    NOW,
    PG_HOST,
    PG_PORT,
    item,
    postgres_reachable,
)

ROOT = Path(__file__).resolve().parents[1]
# Fixtures, found by pytest under these names.
db_url, store = storefixtures.db_url, storefixtures.store


def article_count(store: Store) -> int:
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(articles)).scalar_one()


def only_headline(store: Store, category: str = "technology") -> Item:
    found = store.headlines(category, since=DAY_START, limit=10)
    assert len(found) == 1
    return found[0]


# Articles


def test_seeing_a_url_again_updates_its_one_row(store: Store) -> None:
    url = "https://example.com/story"
    first = store.upsert_items([item(url, title="Old title", snippet="old")], seen_at=NOW)
    again = store.upsert_items(
        [item(url, title="New title", snippet="new", image="https://example.com/i.jpg")],
        seen_at=NOW + timedelta(hours=1),
    )

    assert first == UpsertResult(new=1, updated=0)
    assert again == UpsertResult(new=0, updated=1)
    assert article_count(store) == 1
    stored = only_headline(store).headline
    assert (stored.title, stored.snippet, stored.image) == (
        "New title",
        "new",
        "https://example.com/i.jpg",
    )
    assert store.has_collected("technology", NOW + timedelta(minutes=30))


def test_tracking_variants_and_repeats_in_one_batch_are_one_article(store: Store) -> None:
    batch = [
        item("https://example.com/story?utm_source=twitter&id=7"),
        item("https://EXAMPLE.com:443/story?id=7#comments"),
        item("https://example.com/story?fbclid=abc&id=7"),
        item("https://example.com/story?id=7"),
    ]
    assert store.upsert_items(batch, seen_at=NOW) == UpsertResult(new=1, updated=0)
    later = [item("https://example.com/story?id=7&gclid=x")]
    assert store.upsert_items(later, seen_at=NOW) == UpsertResult(new=0, updated=1)

    assert article_count(store) == 1
    assert only_headline(store).headline.url == "https://example.com/story?id=7"


def test_items_without_an_http_url_are_skipped_not_fatal(store: Store) -> None:
    batch = [item("javascript:void(0)"), item(""), item("https://example.com/ok")]
    assert store.upsert_items(batch, seen_at=NOW) == UpsertResult(new=1, updated=0, skipped=2)


def test_failed_reextraction_keeps_the_earlier_lede(store: Store) -> None:
    url = "https://example.com/story"
    store.upsert_items([item(url, lede="The real opening.", http_status=200)], seen_at=NOW)
    store.upsert_items([item(url, status="timeout", error="deadline")], seen_at=NOW)
    store.upsert_items([item(url, status="error", http_status=503)], seen_at=NOW)
    store.upsert_items([item(url)], seen_at=NOW)  # skipped: not attempted at all

    kept = only_headline(store).extract
    assert (kept.full_content, kept.status, kept.http_status) == ("The real opening.", "ok", 200)

    store.upsert_items([item(url, lede="A better opening.", status="ok")], seen_at=NOW)
    assert only_headline(store).extract.full_content == "A better opening."


def test_without_a_lede_the_latest_attempt_explains_why(store: Store) -> None:
    url = "https://example.com/story"
    store.upsert_items([item(url, status="timeout", error="deadline")], seen_at=NOW)
    store.upsert_items([item(url, status="error", http_status=403, error="HTTP 403")], seen_at=NOW)
    store.upsert_items([item(url)], seen_at=NOW)  # skipped: says nothing new

    extract = only_headline(store).extract
    assert (extract.status, extract.http_status, extract.error) == ("error", 403, "HTTP 403")


def test_empty_fields_of_a_later_sighting_do_not_erase_stored_ones(store: Store) -> None:
    url = "https://example.com/story"
    first = item(url, title="Title", snippet="Snippet", image="https://example.com/i.jpg")
    store.upsert_items([first], seen_at=NOW)
    store.upsert_items([item(url, title="", snippet="", image=None, category=None)], seen_at=NOW)

    stored = only_headline(store).headline
    assert (stored.title, stored.snippet, stored.image, stored.category) == (
        "Title",
        "Snippet",
        "https://example.com/i.jpg",
        "technology",
    )


def test_headlines_are_newest_first_within_one_category_and_limit(store: Store) -> None:
    hour = timedelta(hours=1)
    store.upsert_items(
        [
            item("https://example.com/1", title="morning", published=NOW - 3 * hour),
            item("https://example.com/2", title="noon", published=NOW),
            item("https://example.com/3", title="yesterday", published=NOW - 24 * hour),
            item("https://example.com/4", title="other category", category="finance"),
            item("https://example.com/5", title="undated, seen 11:00"),
        ],
        seen_at=NOW - hour,
    )

    titles = [i.headline.title for i in store.headlines("technology", since=DAY_START, limit=10)]
    assert titles == ["noon", "undated, seen 11:00", "morning"]
    limited = store.headlines("technology", since=DAY_START, limit=2)
    assert [i.headline.title for i in limited] == ["noon", "undated, seen 11:00"]
    assert [i.headline.title for i in store.headlines("finance", since=DAY_START, limit=10)] == [
        "other category"
    ]
    assert store.headlines("sports", since=DAY_START, limit=10) == []


def test_aware_datetimes_round_trip_as_the_same_instant_in_utc(store: Store) -> None:
    india = timezone(timedelta(hours=5, minutes=30))
    published = datetime(2025, 3, 1, 15, 45, 30, 123456, tzinfo=india)
    store.upsert_items([item("https://example.com/a", published=published)], seen_at=NOW)

    back = only_headline(store).headline.published
    assert back == published
    assert back is not None and back.utcoffset() == timedelta(0)
    assert back.replace(tzinfo=None) == datetime(2025, 3, 1, 10, 15, 30, 123456)
    # `since` in another zone compares as the same instant.
    assert store.headlines("technology", since=published.astimezone(india), limit=5)
    assert not store.headlines("technology", since=published + timedelta(seconds=1), limit=5)


def test_naive_datetimes_are_refused(store: Store) -> None:
    naive = datetime(2025, 3, 1, 12, 0)
    with pytest.raises(ValueError, match="aware"):
        store.upsert_items([item("https://example.com/a")], seen_at=naive)
    with pytest.raises(ValueError, match="published"):
        store.upsert_items([item("https://example.com/a", published=naive)], seen_at=NOW)
    with pytest.raises(ValueError, match="since"):
        store.headlines("technology", since=naive, limit=1)
    assert article_count(store) == 0


def test_has_collected_looks_at_the_category_and_time(store: Store) -> None:
    assert not store.has_collected("technology", DAY_START)
    store.upsert_items([item("https://example.com/a")], seen_at=NOW)
    assert store.has_collected("technology", DAY_START)
    assert not store.has_collected("finance", DAY_START)
    assert not store.has_collected("technology", NOW + timedelta(seconds=1))


# Runs


def test_runs_are_recorded_with_counts_and_errors_newest_first(store: Store) -> None:
    first = store.start_run("collect", key="collect:2025-03-01")
    errors = [{"source": "ddg:news", "error": "rate limited"}]
    store.finish_run(first, status="partial", counts={"new": 3, "updated": 1}, errors=errors)
    second = store.start_run("collect")

    latest, earlier = store.recent_runs(10)
    assert (latest.id, latest.status, latest.finished_at, latest.key) == (
        second,
        "running",
        None,
        None,
    )
    assert earlier.id == first
    assert earlier.key == "collect:2025-03-01"
    assert earlier.status == "partial"
    assert earlier.counts == {"new": 3, "updated": 1}
    assert earlier.errors == errors
    assert earlier.finished_at is not None and earlier.finished_at >= earlier.started_at
    assert earlier.started_at.tzinfo is not None
    assert [r.id for r in store.recent_runs(1)] == [second]


def test_a_period_key_can_only_be_started_once(store: Store) -> None:
    store.start_run("collect", key="collect:2025-03-01")
    with pytest.raises(RunExistsError, match=r"collect:2025-03-01"):
        store.start_run("collect", key="collect:2025-03-01")
    store.start_run("collect", key="collect:2025-03-02")
    assert len(store.recent_runs(10)) == 2


def test_an_interrupted_run_frees_its_period_for_the_next_start(store: Store) -> None:
    done = store.start_run("collect", key="collect:2025-03-01")
    store.finish_run(done, status="ok", counts={}, errors=[])
    stopped = store.start_run("collect", key="collect:2025-03-02")
    store.finish_run(stopped, status="interrupted", counts={"new": 2}, errors=[])

    again = store.start_run("collect", key="collect:2025-03-02")
    with pytest.raises(RunExistsError):
        store.start_run("collect", key="collect:2025-03-01")
    runs = {run.id: run for run in store.recent_runs(10)}
    assert (runs[stopped].status, runs[stopped].key) == ("interrupted", None)
    assert runs[again].key == "collect:2025-03-02"


def test_finishing_a_run_checks_status_and_id(store: Store) -> None:
    run = store.start_run("collect")
    with pytest.raises(ValueError, match="status"):
        store.finish_run(run, status="running", counts={}, errors=[])
    with pytest.raises(StoreError, match="no run"):
        store.finish_run(run + 1000, status="ok", counts={}, errors=[])


# Feeds


def test_feed_state_round_trips_and_is_replaced_on_save(store: Store) -> None:
    url = "https://example.com/feed.xml"
    assert store.feed_state(url) is None
    state = FeedState(
        url=url,
        category="technology",
        title="Example feed",
        etag='W/"abc"',
        last_modified="Sat, 01 Mar 2025 11:00:00 GMT",
        last_ok_at=NOW,
        last_checked_at=NOW,
    )
    store.save_feed_state(state)
    assert store.feed_state(url) == state

    failed = FeedState(
        url=url,
        category="technology",
        title="Example feed",
        etag='W/"abc"',
        last_modified=state.last_modified,
        error_count=1,
        last_error="HTTP 503",
        last_ok_at=NOW,
        last_checked_at=NOW + timedelta(hours=1),
    )
    store.save_feed_state(failed)
    assert store.feed_state(url) == failed


def test_the_states_of_a_tasks_feeds_are_read_and_saved_together(store: Store) -> None:
    """A source task reads its feeds' states in one query and saves them in one transaction:
    new and known feeds alike, a feed given twice saved once (its last state)."""
    known = FeedState(url="https://a.example/rss", category="world", etag='"1"')
    store.save_feed_state(known)
    urls = ["https://a.example/rss", "https://b.example/rss", "https://c.example/rss"]
    assert store.feed_states_of(urls) == {known.url: known}
    assert store.feed_states_of([]) == {}
    checked = [
        replace(known, etag='"2"', last_checked_at=NOW),
        FeedState(url=urls[1], category="world", error_count=1, last_error="HTTP 503"),
        FeedState(url=urls[2], category="world", etag='"x"'),
        FeedState(url=urls[2], category="world", etag='"y"'),
    ]
    store.save_feed_states(checked)
    saved = store.feed_states_of(urls)
    assert [saved[u] for u in urls] == checked[:2] + checked[3:]
    with pytest.raises(ValueError):
        store.save_feed_states([replace(known, last_ok_at=NOW.replace(tzinfo=None))])
    assert store.feed_states_of([known.url])[known.url].etag == '"2"'  # nothing half-saved


# Concurrency


def _write_articles(url: str, worker: int, count: int, start: Any, results: Any) -> None:
    """Run in a child process: open the store like a second command would, then write."""
    try:
        start.wait(timeout=30)
        with open_store(url) as store:
            for n in range(count):
                batch = [
                    item(f"https://example.com/w{worker}/{n}"),
                    item("https://example.com/shared", title=f"from {worker}"),
                ]
                store.upsert_items(batch, seen_at=NOW)
        results.put((worker, "ok"))
    except BaseException as err:
        results.put((worker, f"{type(err).__name__}: {err}"))


@pytest.mark.slow
def test_concurrent_processes_create_and_fill_one_database_without_lock_errors(db_url: str) -> None:
    workers, per_worker = 4, 50
    ctx = multiprocessing.get_context("fork")
    start, results = ctx.Barrier(workers), ctx.Queue()
    processes = [
        ctx.Process(target=_write_articles, args=(db_url, w, per_worker, start, results))
        for w in range(workers)
    ]
    for p in processes:
        p.start()
    outcomes = dict(results.get(timeout=90) for _ in processes)
    for p in processes:
        p.join(timeout=10)

    assert outcomes == dict.fromkeys(range(workers), "ok")
    with open_store(db_url) as store:
        assert article_count(store) == workers * per_worker + 1


def test_reads_do_not_wait_for_a_writer(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'digest.db'}") as store:
        store.upsert_items([item("https://example.com/a")], seen_at=NOW)
        with store.engine.begin() as writer:  # BEGIN IMMEDIATE: holds the write lock
            writer.execute(text("UPDATE articles SET title = 'changing'"))
            started = time.monotonic()
            found = store.headlines("technology", since=DAY_START, limit=5)
            assert time.monotonic() - started < 1
        assert [i.headline.title for i in found] == ["A headline"]


# Engine and migrations


def test_sqlite_engine_uses_wal_and_waits_for_locks(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'new' / 'dir' / 'digest.db'}")
    with engine.connect() as conn:
        pragmas = {
            name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        }
    engine.dispose()
    assert pragmas == {
        "journal_mode": "wal",
        "synchronous": 1,
        "foreign_keys": 1,
        "busy_timeout": 10000,
    }


def test_migrating_an_empty_database_creates_exactly_the_models(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine)
        with engine.connect() as conn, warnings.catch_warnings():
            # Alembic cannot compare expression indexes and says so; everything else must match.
            warnings.filterwarnings("ignore", message=".*expression.*|.*functional.*")
            diff = storefixtures.schema_diff(conn)
            indexes = index_definitions(conn, "articles")
        assert diff == []
        assert "ix_articles_category_last_seen" in indexes
        assert "coalesce(published, first_seen)" in indexes["ix_articles_category_recent"].lower()
    finally:
        engine.dispose()


def index_definitions(conn: Any, table: str) -> dict[str, str]:
    """Index name -> its SQL; the SQLAlchemy inspector leaves out SQLite expression indexes."""
    if conn.dialect.name == "sqlite":
        query = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = :t"
    else:
        query = (
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE tablename = :t AND schemaname = current_schema()"
        )
    return {name: sql or "" for name, sql in conn.execute(text(query), {"t": table})}


def test_todays_headlines_query_uses_the_category_index(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'digest.db'}") as store:
        statement = headlines_query("technology", since=DAY_START, limit=5)
        with store.engine.connect() as conn:
            compiled = statement.compile(conn, compile_kwargs={"literal_binds": True})
            plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}").all()
    assert any("ix_articles_category_recent" in row[-1] for row in plan), plan


def test_rerunning_upgrade_keeps_schema_and_data(db_url: str) -> None:
    with open_store(db_url) as store:
        store.upsert_items([item("https://example.com/a")], seen_at=NOW)
    with open_store(db_url) as store:
        upgrade(store.engine)
        assert article_count(store) == 1
        with store.engine.connect() as conn:
            versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        assert versions == [ScriptDirectory(str(migrations_dir())).get_current_head()]


def test_the_newest_revision_read_without_alembic_is_alembics_head() -> None:
    # Opening a store at this revision skips Alembic (the start-up of every command).
    assert newest_revision() == ScriptDirectory(str(migrations_dir())).get_current_head()


def test_a_database_from_a_newer_digest_is_refused(db_url: str) -> None:
    with open_store(db_url) as store, store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    with pytest.raises(StoreError, match="newer than this version of digest"):
        open_store(db_url)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://user:secret@localhost/db", "unsupported database"),
        ("postgresql+asyncpg://localhost/db", "unsupported database"),
        ("not a url at all", "not a database URL"),
        ("sqlite://", "in-memory"),
        ("sqlite:///:memory:", "in-memory"),
        (
            "postgresql+psycopg://postgres:secret@127.0.0.1:1/test?connect_timeout=2",
            "cannot open database",
        ),
    ],
)
def test_unusable_database_urls_give_one_line_store_errors(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message) as caught:
        open_store(url)
    assert "\n" not in str(caught.value)
    assert "secret" not in str(caught.value)


def test_plain_postgresql_urls_use_psycopg() -> None:
    if not postgres_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT}")
    engine = make_engine(f"postgresql://postgres@{PG_HOST}:{PG_PORT}/test")
    engine.dispose()
    assert engine.dialect.driver == "psycopg"


def test_a_sqlite_path_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="cannot create directory") as caught:
        open_store(f"sqlite:///{blocker / 'digest.db'}")
    assert "\n" not in str(caught.value)


def test_an_unopenable_sqlite_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "digest.db").mkdir()  # a directory where the file should be
    with pytest.raises(StoreError, match="cannot open database") as caught:
        open_store(f"sqlite:///{tmp_path / 'digest.db'}")
    assert "\n" not in str(caught.value)


def test_every_package_including_migrations_is_listed_for_installation() -> None:
    """pyproject lists packages by hand (to map migrations/ into digest): catch a forgotten one."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "digest").rglob("__init__.py")
    }
    assert on_disk <= set(setuptools["packages"])
    assert setuptools["package-dir"]["digest.migrations"] == "migrations"
    assert {"digest.migrations", "digest.migrations.versions"} <= set(setuptools["packages"])
