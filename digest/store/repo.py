"""The store: what the service keeps between runs (articles, runs, feed state).

Methods are synchronous and short; the service calls them through asyncio.to_thread. No network
I/O happens inside their transactions, so a write holds SQLite's lock for milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, Engine, Select, exists, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from digest.errors import InvalidURLError, StoreError
from digest.models import Extract, Headline, Item
from digest.store.engine import READ_ONLY, describe
from digest.store.schema import Article, articles, feeds, runs
from digest.store.urls import canonical_url

FINISHED_STATUSES = ("ok", "partial", "failed")
# Columns a later sighting of the same URL may change (url, original_url and id never change).
_MUTABLE = (
    "title",
    "source",
    "category",
    "published",
    "snippet",
    "image",
    "lede",
    "extract_status",
    "http_status",
    "extract_error",
    "origin",
    "first_seen",
    "last_seen",
    "fetched_at",
)
_EXTRACTION = ("lede", "extract_status", "http_status", "extract_error", "fetched_at")


class RunExistsError(StoreError):
    """A run with this key was started before: that (job, period) is done or in progress."""


@dataclass(frozen=True, slots=True)
class UpsertResult:
    new: int
    updated: int
    skipped: int = 0  # items whose URL is not an absolute http(s) URL: nothing to key them by


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: int
    kind: str
    key: str | None
    status: str  # running, ok, partial, failed
    started_at: datetime
    finished_at: datetime | None
    counts: dict[str, Any] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)  # [{"source": ..., "error": ...}]


@dataclass(frozen=True, slots=True)
class FeedState:
    """What the next fetch of a feed needs (validators) and what backs off a failing one."""

    url: str
    category: str
    title: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    error_count: int = 0
    last_error: str | None = None
    last_ok_at: datetime | None = None
    last_checked_at: datetime | None = None


class Store:
    """Articles, runs and feed state in one SQLite or PostgreSQL database. See open_store()."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # Articles

    def upsert_items(self, items: Iterable[Item], *, seen_at: datetime) -> UpsertResult:
        """Store items keyed by canonical URL: seeing a URL again updates its row, never adds one.

        A later sighting only adds information: empty titles, snippets and images do not overwrite
        stored ones, and a lede is replaced only by a new lede, so a failed re-fetch keeps what an
        earlier fetch found. Items without an http(s) URL are counted as skipped.
        """
        _require_aware(seen_at, "seen_at")
        batch: dict[str, dict[str, Any]] = {}
        skipped = 0
        for item in items:
            try:
                row = _row_from_item(item, seen_at)
            except InvalidURLError:
                skipped += 1
                continue
            url = row["url"]
            batch[url] = _merge(batch[url], row) if url in batch else row

        new = updated = 0
        with self._write() as conn:
            insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
            # One fixed order, so concurrent PostgreSQL writers lock rows alike and never deadlock.
            for url in sorted(batch):
                row = batch[url]
                stmt = insert(articles).values(row).on_conflict_do_nothing(index_elements=["url"])
                if conn.execute(stmt.returning(articles.c.id)).first() is not None:
                    new += 1
                    continue
                query = select(articles).where(articles.c.url == url).with_for_update()
                old = conn.execute(query).mappings().one()
                merged = _merge(old, row)
                values = {name: merged[name] for name in _MUTABLE}
                conn.execute(update(articles).where(articles.c.id == old["id"]).values(values))
                updated += 1
        return UpsertResult(new=new, updated=updated, skipped=skipped)

    def headlines(self, category: str, *, since: datetime, limit: int) -> list[Item]:
        """A category's articles published (or, undated, first seen) since `since`, newest first."""
        query = self._headlines_query(category, since=since, limit=limit)
        with self._read() as conn:
            return [_item_from_row(row) for row in conn.execute(query).mappings()]

    def _headlines_query(self, category: str, *, since: datetime, limit: int) -> Select[Any]:
        # The expression must match the ix_articles_category_recent index to use it.
        _require_aware(since, "since")
        recent = Article.recent()
        return (
            select(articles)
            .where(articles.c.category == category, recent >= since)
            .order_by(recent.desc(), articles.c.id.desc())
            .limit(limit)
        )

    def has_collected(self, category: str, since: datetime) -> bool:
        """Whether any article of `category` was seen since `since` (a collect already ran)."""
        _require_aware(since, "since")
        seen = exists().where(articles.c.category == category, articles.c.last_seen >= since)
        with self._read() as conn:
            return bool(conn.execute(select(seen)).scalar())

    # Runs

    def start_run(self, kind: str, key: str | None = None) -> int:
        """Record a run as started and return its id.

        `key` names the (job, period) it covers; a second run with the same key raises
        RunExistsError, which is how a restarted scheduler avoids doing a period twice.
        """
        values = {
            "kind": kind,
            "key": key,
            "started_at": _now(),
            "status": "running",
            "counts": {},
            "errors": [],
        }
        with self._write() as conn:
            try:
                stmt = runs.insert().values(values).returning(runs.c.id)
                return int(conn.execute(stmt).scalar_one())
            except IntegrityError:
                raise RunExistsError(f"a run with key {key!r} exists already") from None

    def finish_run(
        self,
        run_id: int,
        *,
        status: str,
        counts: Mapping[str, Any],
        errors: Iterable[Mapping[str, Any]],
    ) -> None:
        """Record how a run ended: `status` is ok, partial (some sources failed) or failed."""
        if status not in FINISHED_STATUSES:
            raise ValueError(f"run status must be one of {FINISHED_STATUSES}, not {status!r}")
        values = {
            "status": status,
            "finished_at": _now(),
            "counts": dict(counts),
            "errors": [dict(e) for e in errors],
        }
        with self._write() as conn:
            result = conn.execute(update(runs).where(runs.c.id == run_id).values(values))
            if result.rowcount == 0:
                raise StoreError(f"no run with id {run_id}")

    def recent_runs(self, limit: int) -> list[RunRecord]:
        """The latest runs, newest first: what `digest status` shows."""
        query = select(runs).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)
        with self._read() as conn:
            return [
                RunRecord(
                    id=row["id"],
                    kind=row["kind"],
                    key=row["key"],
                    status=row["status"],
                    started_at=row["started_at"],
                    finished_at=row["finished_at"],
                    counts=row["counts"],
                    errors=row["errors"],
                )
                for row in conn.execute(query).mappings()
            ]

    # Feeds

    def feed_state(self, url: str) -> FeedState | None:
        """What was saved about the feed at `url` (as configured), or None if never fetched."""
        with self._read() as conn:
            row = conn.execute(select(feeds).where(feeds.c.url == url)).mappings().first()
        return FeedState(**row) if row is not None else None

    def save_feed_state(self, state: FeedState) -> None:
        """Insert or replace the saved state of one feed."""
        for name in ("last_ok_at", "last_checked_at"):
            _require_aware(getattr(state, name), name, optional=True)
        values = asdict(state)
        with self._write() as conn:
            insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
            stmt = insert(feeds).values(values)
            changes = {name: stmt.excluded[name] for name in values if name != "url"}
            conn.execute(stmt.on_conflict_do_update(index_elements=["url"], set_=changes))

    # Transactions

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One write transaction (BEGIN IMMEDIATE on SQLite), committed when the block ends."""
        with _store_errors(), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """One read transaction; on SQLite it does not take the write lock."""
        with _store_errors(), self.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            yield conn


@contextmanager
def _store_errors() -> Iterator[None]:
    try:
        yield
    except SQLAlchemyError as err:
        raise StoreError(f"database error: {describe(err)}") from err


def _now() -> datetime:
    return datetime.now(UTC)


def _require_aware(value: datetime | None, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if value is None or value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, not {value!r}")


def _row_from_item(item: Item, seen_at: datetime) -> dict[str, Any]:
    h, e = item.headline, item.extract
    _require_aware(h.published, "published", optional=True)
    return {
        "url": canonical_url(h.url),
        "original_url": h.url,
        "title": h.title,
        "source": h.source,
        "category": h.category,
        "published": h.published,
        "snippet": h.snippet,
        "image": h.image or None,
        "lede": e.full_content,
        "extract_status": e.status,
        "http_status": e.http_status,
        "extract_error": e.error,
        "origin": h.origin,
        "first_seen": seen_at,
        "last_seen": seen_at,
        "fetched_at": seen_at if e.status != "skipped" else None,
    }


def _merge(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What a stored row becomes when `new`, a later sighting of the same URL, arrives."""
    merged = dict(old)
    for name in ("title", "source", "snippet", "image"):
        if new[name]:
            merged[name] = new[name]
    for name in ("category", "published", "origin"):  # the first known value stays
        if not merged[name]:
            merged[name] = new[name]
    # A new lede always wins; a failed or skipped attempt never erases one. Without any lede, the
    # latest real attempt says best why there is none.
    if new["lede"] or (not old["lede"] and new["extract_status"] != "skipped"):
        for name in _EXTRACTION:
            merged[name] = new[name]
    merged["first_seen"] = min(old["first_seen"], new["first_seen"])
    merged["last_seen"] = max(old["last_seen"], new["last_seen"])
    return merged


def _item_from_row(row: Mapping[str, Any]) -> Item:
    headline = Headline(
        title=row["title"],
        url=row["url"],
        source=row["source"],
        published=row["published"],
        snippet=row["snippet"],
        image=row["image"],
        category=row["category"],
        origin=row["origin"],
    )
    extract = Extract(
        url=row["url"],
        full_content=row["lede"],
        status=row["extract_status"],
        http_status=row["http_status"],
        error=row["extract_error"],
    )
    return Item(headline=headline, extract=extract)
