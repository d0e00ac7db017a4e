"""The store: what the service keeps between runs (articles, stories, summaries, runs, feed state,
subscribers, editions and the delivery ledger).

Methods are synchronous and short; the service calls them through asyncio.to_thread. No network
I/O happens inside their transactions, so a write holds SQLite's lock for milliseconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    ScalarSelect,
    Select,
    bindparam,
    exists,
    func,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from digest.errors import InvalidURLError, StoreError
from digest.models import Edition, Extract, Headline, Item, Page, Summary
from digest.store.editions import content_hash as edition_hash
from digest.store.editions import decode_edition, encode_edition
from digest.store.engine import READ_ONLY, describe
from digest.store.owners import current_owner
from digest.store.schema import (
    DELIVERY_STATES,
    Article,
    articles,
    deliveries,
    editions,
    feeds,
    runs,
    stories,
    subscribers,
    summaries,
)
from digest.store.search import SearchHit
from digest.store.search import search as search_archive
from digest.store.urls import canonical_url
from digest.stories import Clustering, Coverage, Report, StoryStats, cluster_reports, outlet, score

if TYPE_CHECKING:
    from digest.config import StoriesConfig
    from digest.deliver.ledger import Delivery

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
# pg_advisory_xact_lock(key, hashtext(category)): one clustering of a category at a time.
_CLUSTER_LOCK_KEY = 0x73746F72
_CLUSTER_ATTEMPTS = 3
# Rows per IN (...) list: far below SQLite's and PostgreSQL's limits on bound parameters.
_CHUNK = 500


class RunExistsError(StoreError):
    """A run with this key was started before: that (job, period) is done or in progress."""


class InvalidSubscriberError(StoreError, ValueError):
    """A subscriber that cannot be stored: a malformed address, or an unknown time zone."""


@dataclass(frozen=True, slots=True)
class Subscriber:
    """Who gets the email digest. `categories` None: every category. `token` is the secret of
    the subscriber's unsubscribe link; it stays the same for the life of the subscription."""

    email: str  # lower-cased
    categories: tuple[str, ...] | None
    timezone: str
    token: str
    created_at: datetime


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


@dataclass(frozen=True, slots=True)
class ClusterResult:
    """What one `Store.cluster_category` call did."""

    category: str
    articles: int  # articles looked at: the window's, and the other articles of their stories
    assigned: int  # articles put in a story by this call
    created: tuple[int, ...] = ()  # new stories
    grown: tuple[int, ...] = ()  # existing stories that gained articles
    updated: tuple[int, ...] = ()  # existing stories that gained an outlet (marked updated)
    stories: int = 0  # stories whose counts and scores were refreshed


@dataclass(frozen=True, slots=True)
class ArticleView:
    """One article of a story, with what the deep path knows about it."""

    id: int
    url: str
    title: str
    source: str
    outlet: str  # the source's name, else the registrable host (digest.stories.rank.outlet)
    published: datetime | None
    first_seen: datetime
    lede: str
    origin: str
    has_text: bool  # the deep crawl stored a main text
    text_hash: str | None
    crawl_status: str | None  # ok, pdf, empty, error; None: never crawled
    summary: Summary | None  # the latest summary of this article (or of the same text)


@dataclass(frozen=True, slots=True)
class StoryView:
    """A story and its articles: the representative first, then one per other outlet, newest
    first, then further articles of outlets already listed."""

    id: int
    category: str
    title: str
    first_seen: datetime
    last_seen: datetime
    updated: bool  # gained an outlet after it was first clustered
    updated_at: datetime | None
    article_count: int
    outlet_count: int
    score: float
    articles: tuple[ArticleView, ...]

    @property
    def outlets(self) -> tuple[str, ...]:
        """Distinct outlets in article order."""
        return tuple(dict.fromkeys(a.outlet for a in self.articles))


class _ClusterConflict(Exception):
    """Another process assigned some of the same articles between our read and our write."""


def content_hash(text: str) -> str:
    """sha256 (hex) of `text` as UTF-8: `articles.text_hash`, and the natural summary key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Store:
    """Articles, stories, summaries, runs and feed state in one SQLite or PostgreSQL database.

    See open_store().
    """

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

    # Stories

    def cluster_category(
        self, category: str, *, now: datetime, config: StoriesConfig
    ) -> ClusterResult:
        """Put the category's recent articles into stories and refresh those stories' scores.

        Looks at the articles published (or, undated, first seen) in the `window_hours` before
        `now`, with the other articles of their stories; runs `digest.stories.cluster_reports` on
        them; writes the story of every article that had none, creates new stories, and recomputes
        title, counts and score of every story involved. A story that gains an outlet gets
        `updated_at = now`. Reading and clustering happen outside the write transaction; the
        write only assigns articles that are still unassigned, and starts over when another
        process got there first.
        """
        _require_aware(now, "now")
        window = timedelta(hours=config.window_hours)
        for _ in range(_CLUSTER_ATTEMPTS):
            with self._read() as conn:
                rows = _cluster_rows(conn, category, since=now - window)
            reports = [_report(row) for row in rows]
            clustering = cluster_reports(reports, window=window, similarity=config.similarity)
            try:
                with self._write() as conn:
                    return _write_clustering(conn, category, clustering, rows, now)
            except _ClusterConflict:
                continue
        raise StoreError(f"clustering {category!r} kept conflicting with another process")

    def top_stories(self, category: str, *, since: datetime, limit: int) -> list[StoryView]:
        """The category's best stories seen since `since`, by the score of the last clustering.

        Order: score, then outlets, then the most recently seen, then the oldest story first.
        """
        _require_aware(since, "since")
        query = (
            select(stories)
            .where(stories.c.category == category, stories.c.last_seen >= since)
            .order_by(*_STORY_ORDER)
            .limit(limit)
        )
        with self._read() as conn:
            return _story_views(conn, list(conn.execute(query).mappings()))

    def stories(self, category: str | None, *, since: datetime) -> list[StoryView]:
        """Stories seen since `since`, of one category or (None) of all, by category, best first."""
        _require_aware(since, "since")
        query = select(stories).where(stories.c.last_seen >= since)
        if category is not None:
            query = query.where(stories.c.category == category)
        query = query.order_by(stories.c.category, *_STORY_ORDER)
        with self._read() as conn:
            return _story_views(conn, list(conn.execute(query).mappings()))

    # Deep crawl and summaries

    def article_by_url(self, url: str) -> ArticleView | None:
        """The stored article for `url` (any variant of its canonical URL), or None."""
        try:
            key = canonical_url(url)
        except InvalidURLError:
            return None
        with self._read() as conn:
            row = conn.execute(select(*_VIEW_COLUMNS).where(articles.c.url == key)).mappings()
            found = row.first()
            return _article_views(conn, [found])[0] if found is not None else None

    def article_text(self, article_id: int) -> str | None:
        """The main text the deep crawl stored for an article, or None."""
        with self._read() as conn:
            query = select(articles.c.text).where(articles.c.id == article_id)
            return conn.execute(query).scalar_one_or_none() or None

    def save_crawl(self, article_id: int, page: Page, *, at: datetime | None = None) -> bool:
        """Record a deep-crawl attempt; return whether the article now has this page's text.

        A page with text replaces the stored text. A failed or empty attempt never erases an
        earlier good text; it is recorded only while the article has none (its status says why).
        """
        at = at or _now()
        _require_aware(at, "at")
        if page.ok:
            status = "pdf" if page.kind == "pdf" else "ok"
            key = content_hash(page.text)
            values: dict[str, Any] = {"text": page.text, "text_hash": key}
            # The same text summarized before (another outlet's copy): searchable at once.
            values["summary_text"] = func.coalesce(
                _latest_summary_text(summaries.c.content_hash == key), articles.c.summary_text
            )
        else:
            status = "error" if page.error else "empty"
            values = {}
        values |= {
            "crawled_at": at,
            "crawl_status": status,
            "crawl_error": page.error if not page.ok else None,
            "fetched_by": page.fetched_by,
        }
        stmt = update(articles).where(articles.c.id == article_id).values(values)
        if not page.ok:
            stmt = stmt.where(or_(articles.c.text.is_(None), articles.c.text == ""))
        with self._write() as conn:
            if conn.execute(stmt).rowcount:
                return page.ok
            if conn.execute(select(articles.c.id).where(articles.c.id == article_id)).first():
                return False
        raise StoreError(f"no article with id {article_id}")

    def find_summary(self, content_hash: str, summarizer: str) -> Summary | None:
        """The summary `summarizer` made of this content before, if any."""
        query = select(summaries).where(
            summaries.c.content_hash == content_hash, summaries.c.summarizer == summarizer
        )
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return _summary(row) if row is not None else None

    def save_summary(
        self,
        article_id: int,
        content_hash: str,
        summary: Summary,
        *,
        at: datetime | None = None,
    ) -> bool:
        """Store a summary; False (and nothing changes) when this content already has one by
        the same summarizer: an unchanged article is never summarized twice."""
        at = at or _now()
        _require_aware(at, "at")
        values = {
            "article_id": article_id,
            "content_hash": content_hash,
            "summarizer": summary.summarizer,
            "title": summary.title,
            "summary": summary.summary,
            "brief_summary": summary.brief_summary,
            "keywords": list(summary.keywords),
            "prompt_tokens": summary.prompt_tokens,
            "completion_tokens": summary.completion_tokens,
            "created_at": at,
        }
        with self._write() as conn:
            if (
                conn.execute(select(articles.c.id).where(articles.c.id == article_id)).first()
                is None
            ):
                raise StoreError(f"no article with id {article_id}")
            insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
            stmt = (
                insert(summaries)
                .values(values)
                .on_conflict_do_nothing(index_elements=["content_hash", "summarizer"])
            )
            if conn.execute(stmt.returning(summaries.c.id)).first() is None:
                return False
            # The archive search indexes the latest summary with its article and its copies.
            text = f"{summary.brief_summary} {summary.summary}"
            same = or_(articles.c.id == article_id, articles.c.text_hash == content_hash)
            conn.execute(update(articles).where(same).values(summary_text=text))
            return True

    def tokens_used(self, since: datetime) -> int:
        """LLM tokens (prompt and completion) of the summaries made since `since`."""
        _require_aware(since, "since")
        total = func.coalesce(
            func.sum(summaries.c.prompt_tokens + summaries.c.completion_tokens), 0
        )
        with self._read() as conn:
            query = select(total).where(summaries.c.created_at >= since)
            return int(conn.execute(query).scalar_one())

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
            "owner": current_owner(),
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

    # Subscribers

    def add_subscriber(
        self, email: str, *, categories: Sequence[str] | None, timezone: str
    ) -> Subscriber:
        """Subscribe `email` (lower-cased) to `categories` (None or empty: all of them).

        Adding an address that is subscribed already changes its categories and time zone and
        keeps its token (unsubscribe links already sent keep working). Raises
        InvalidSubscriberError for a malformed address or an unknown time zone.
        """
        address = normalize_email(email)
        zone = _check_timezone(timezone)
        cats = _normalize_categories(categories)
        values = {
            "email": address,
            "categories": list(cats) if cats is not None else None,
            "timezone": zone,
            "token": secrets.token_urlsafe(24),
            "created_at": _now(),
        }
        with self._write() as conn:
            insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
            stmt = insert(subscribers).values(values)
            stmt = stmt.on_conflict_do_update(
                index_elements=["email"],
                set_={"categories": stmt.excluded.categories, "timezone": stmt.excluded.timezone},
            )
            row = conn.execute(stmt.returning(*subscribers.c)).mappings().one()
        return _subscriber(row)

    def remove_subscriber(self, email: str) -> bool:
        """Unsubscribe `email` (any case); False when it was not subscribed.

        An address is looked for as typed (lower-cased) and normalized, so that one stored by
        an older version, which the address rule may now refuse or write differently, can go.
        """
        addresses = {email.strip().lower()}
        with suppress(InvalidSubscriberError):
            addresses.add(normalize_email(email))
        with self._write() as conn:
            result = conn.execute(subscribers.delete().where(subscribers.c.email.in_(addresses)))
            return bool(result.rowcount)

    def subscribers(self) -> list[Subscriber]:
        """Every subscriber, by address."""
        query = select(subscribers).order_by(subscribers.c.email)
        with self._read() as conn:
            return [_subscriber(row) for row in conn.execute(query).mappings()]

    def subscriber_by_token(self, token: str) -> Subscriber | None:
        """The subscriber whose unsubscribe link carries `token`, or None."""
        if not token:
            return None
        query = select(subscribers).where(subscribers.c.token == token)
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return _subscriber(row) if row is not None else None

    # Editions

    def save_edition(self, edition: Edition, *, at: datetime | None = None) -> tuple[bool, bool]:
        """Store the edition of `edition.day`; return (created, changed).

        One row per day: saving a day again replaces the stored edition only when its content
        (everything but `generated_at`) changed; an unchanged rebuild leaves the row, and its
        `generated_at`, as they were and returns (False, False).
        """
        at = at or _now()
        _require_aware(at, "at")
        _require_aware(edition.generated_at, "generated_at")
        payload = encode_edition(edition)
        digest = edition_hash(payload)
        values = {
            "day": edition.day,
            "content_hash": digest,
            "payload": payload,
            "generated_at": edition.generated_at,
            "updated_at": at,
        }
        with self._write() as conn:
            insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
            stmt = insert(editions).values(values).on_conflict_do_nothing(index_elements=["day"])
            if conn.execute(stmt.returning(editions.c.id)).first() is not None:
                return True, True
            changes = {k: v for k, v in values.items() if k != "day"}
            stmt = (
                update(editions)
                .where(editions.c.day == edition.day, editions.c.content_hash != digest)
                .values(changes)
            )
            return False, bool(conn.execute(stmt).rowcount)

    def edition(self, day: date) -> Edition | None:
        """The stored edition of `day`, or None."""
        query = select(editions.c.day, editions.c.payload).where(editions.c.day == day)
        with self._read() as conn:
            row = conn.execute(query).first()
        return _edition(row.day, row.payload) if row is not None else None

    def editions(self, limit: int | None = None) -> list[Edition]:
        """The stored editions, newest day first (all of them, or the latest `limit`)."""
        query = select(editions.c.day, editions.c.payload).order_by(editions.c.day.desc())
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [_edition(row.day, row.payload) for row in rows]

    def edition_days(self) -> list[date]:
        """The days that have an edition, newest first."""
        query = select(editions.c.day).order_by(editions.c.day.desc())
        with self._read() as conn:
            return list(conn.execute(query).scalars())

    # Delivery ledger (digest.deliver; SqlLedger is the async face the sender uses)

    def add_deliveries(self, rows: Sequence[Delivery]) -> int:
        """Insert the ledger rows whose (edition_day, recipient) is new; return how many.

        Existing rows are left exactly as they are, whatever their state.
        """
        values = [_delivery_values(d) for d in sorted(rows, key=lambda d: d.key)]
        if not values:
            return 0
        added = 0
        with self._write() as conn:
            insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
            # In key order, so concurrent PostgreSQL writers lock rows alike and never deadlock.
            for chunk in _chunks(values):
                stmt = (
                    insert(deliveries)
                    .values(chunk)
                    .on_conflict_do_nothing(index_elements=["edition_day", "recipient"])
                    .returning(deliveries.c.id)
                )
                added += len(conn.execute(stmt).all())
        return added

    def load_deliveries(self, edition_day: date) -> list[Delivery]:
        """Every ledger row of the edition of `edition_day`, by recipient."""
        query = (
            select(deliveries)
            .where(deliveries.c.edition_day == edition_day)
            .order_by(deliveries.c.recipient)
        )
        with self._read() as conn:
            return [_delivery(row) for row in conn.execute(query).mappings()]

    def claim_delivery(self, expected: Delivery, new: Delivery) -> bool:
        """Compare-and-set: write `new` over the row of `expected.key` only if that row still
        has `expected.state` and `expected.attempts`; return whether it did."""
        if new.key != expected.key:
            raise ValueError(f"a claim cannot change a row's key: {expected.key} -> {new.key}")
        day, recipient = expected.key
        stmt = (
            update(deliveries)
            .where(
                deliveries.c.edition_day == day,
                deliveries.c.recipient == recipient,
                deliveries.c.state == expected.state,
                deliveries.c.attempts == expected.attempts,
            )
            .values(_delivery_values(new))
        )
        with self._write() as conn:
            return conn.execute(stmt).rowcount == 1

    def save_delivery(self, delivery: Delivery) -> None:
        """Write a ledger row by its key (the outcome recorded by the run that claimed it)."""
        day, recipient = delivery.key
        stmt = (
            update(deliveries)
            .where(deliveries.c.edition_day == day, deliveries.c.recipient == recipient)
            .values(_delivery_values(delivery))
        )
        with self._write() as conn:
            if conn.execute(stmt).rowcount == 0:
                raise StoreError(f"no delivery of {day} to {recipient} in the ledger")

    def deliveries(
        self,
        limit: int | None = 200,
        *,
        edition_day: date | None = None,
        states: Iterable[str] | None = None,
    ) -> list[Delivery]:
        """Ledger rows, newest edition first, then by recipient: what `digest deliveries` shows.

        Optionally only one edition's, or only rows in `states`.
        """
        query = select(deliveries)
        if edition_day is not None:
            query = query.where(deliveries.c.edition_day == edition_day)
        if states is not None:
            query = query.where(deliveries.c.state.in_(list(states)))
        query = query.order_by(deliveries.c.edition_day.desc(), deliveries.c.recipient)
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            return [_delivery(row) for row in conn.execute(query).mappings()]

    def ledger_counts(self, edition_day: date | None = None) -> dict[str, int]:
        """Rows per state (every state, zeros included), of one edition or of all."""
        query = select(deliveries.c.state, func.count()).group_by(deliveries.c.state)
        if edition_day is not None:
            query = query.where(deliveries.c.edition_day == edition_day)
        counts = dict.fromkeys(DELIVERY_STATES, 0)
        with self._read() as conn:
            counts.update({state: int(n) for state, n in conn.execute(query)})
        return counts

    def search(
        self,
        text: str,
        *,
        category: str | None = None,
        since: datetime | None = None,
        limit: int = 10,
        any_word: bool = False,
    ) -> list[SearchHit]:
        """Stories whose headlines, ledes, main texts or summaries match `text`, best first
        (digest.store.search). Raises InvalidQueryError when nothing searchable is left."""
        _require_aware(since, "since", optional=True)
        with self._read() as conn:
            return search_archive(
                conn, text, category=category, since=since, limit=limit, any_word=any_word
            )

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


class SqlLedger:
    """The delivery ledger in the store: `digest.deliver.sender.LedgerStore` for `deliver` and
    `resend`. Each call is one short transaction, run in a worker thread."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        await asyncio.to_thread(self.store.add_deliveries, list(deliveries))

    async def load(self, edition_day: date) -> list[Delivery]:
        return await asyncio.to_thread(self.store.load_deliveries, edition_day)

    async def claim(self, expected: Delivery, new: Delivery) -> bool:
        return await asyncio.to_thread(self.store.claim_delivery, expected, new)

    async def save(self, delivery: Delivery) -> None:
        await asyncio.to_thread(self.store.save_delivery, delivery)


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


# Subscribers


def normalize_email(email: str) -> str:
    """`email` checked and normalized by the one address rule that sending applies too
    (`digest.deliver.address`), or InvalidSubscriberError saying why it is refused."""
    # Imported here: the deliver package brings the email stack, which most commands never use.
    from digest.deliver.address import AddressError, check_address

    try:
        return check_address(email).normalized
    except AddressError as err:
        raise InvalidSubscriberError(str(err)) from None


def _check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidSubscriberError(f"unknown time zone {name!r}") from None
    return name


def _normalize_categories(categories: Sequence[str] | None) -> tuple[str, ...] | None:
    if categories is None:
        return None
    if isinstance(categories, str):
        raise TypeError("categories must be a sequence of names, not one string")
    cleaned = tuple(dict.fromkeys(c.strip() for c in categories if c.strip()))
    return cleaned or None


def _subscriber(row: Mapping[str, Any]) -> Subscriber:
    categories = row["categories"]
    return Subscriber(
        email=row["email"],
        categories=tuple(categories) if categories is not None else None,
        timezone=row["timezone"],
        token=row["token"],
        created_at=row["created_at"],
    )


# Editions


def _edition(day: date, payload: Any) -> Edition:
    try:
        return decode_edition(payload)
    except (ValueError, TypeError) as err:
        raise StoreError(f"the stored edition of {day} cannot be read: {err}") from err


# Delivery ledger


def _delivery_values(d: Delivery) -> dict[str, Any]:
    if d.state not in DELIVERY_STATES:
        raise ValueError(f"delivery state must be one of {DELIVERY_STATES}, not {d.state!r}")
    _require_aware(d.next_attempt_at, "next_attempt_at", optional=True)
    _require_aware(d.updated_at, "updated_at", optional=True)
    return {
        "edition_day": d.edition_day,
        "recipient": d.recipient,
        "state": d.state,
        "attempts": d.attempts,
        "next_attempt_at": d.next_attempt_at,
        "last_reply": d.last_reply,
        "message_id": d.message_id,
        "updated_at": d.updated_at,
    }


def _delivery(row: Mapping[str, Any]) -> Delivery:
    from digest.deliver.ledger import Delivery  # the mail code loads only when the ledger is used

    return Delivery(
        edition_day=row["edition_day"],
        recipient=row["recipient"],
        state=row["state"],
        attempts=row["attempts"],
        next_attempt_at=row["next_attempt_at"],
        last_reply=row["last_reply"],
        message_id=row["message_id"],
        updated_at=row["updated_at"],
    )


# Articles


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


# Stories

_STORY_ORDER = (
    stories.c.score.desc(),
    stories.c.outlet_count.desc(),
    stories.c.last_seen.desc(),
    stories.c.id,
)
_CLUSTER_COLUMNS = (
    articles.c.id,
    articles.c.title,
    articles.c.lede,
    articles.c.snippet,
    articles.c.source,
    articles.c.url,
    articles.c.origin,
    articles.c.published,
    articles.c.first_seen,
    articles.c.last_seen,
    articles.c.story_id,
)


def _cluster_rows(conn: Connection, category: str, *, since: datetime) -> list[Mapping[str, Any]]:
    """The category's articles since `since`, and every other article of their stories."""
    recent = Article.recent()
    query = select(*_CLUSTER_COLUMNS).where(articles.c.category == category, recent >= since)
    rows = {row["id"]: row for row in conn.execute(query).mappings()}
    story_ids = sorted({row["story_id"] for row in rows.values() if row["story_id"] is not None})
    for chunk in _chunks(story_ids):
        members = select(*_CLUSTER_COLUMNS).where(articles.c.story_id.in_(chunk))
        rows.update((row["id"], row) for row in conn.execute(members).mappings())
    return list(rows.values())


def _report(row: Mapping[str, Any]) -> Report:
    return Report(
        id=row["id"],
        title=row["title"],
        text=row["lede"] or row["snippet"],
        first_seen=row["first_seen"],
        published=row["published"],
        outlet=outlet(row["source"], row["url"]),
        story_id=row["story_id"],
    )


def _write_clustering(
    conn: Connection,
    category: str,
    clustering: Clustering,
    rows: Sequence[Mapping[str, Any]],
    now: datetime,
) -> ClusterResult:
    if conn.dialect.name == "postgresql":
        lock = text("SELECT pg_advisory_xact_lock(:key, hashtext(:category))")
        conn.execute(lock, {"key": _CLUSTER_LOCK_KEY, "category": category})
    titles = {row["id"]: row["title"] for row in rows}
    created: list[int] = []
    grown: list[int] = []
    story_of_group: list[int] = []
    assigned = 0
    for group in clustering.groups:
        story_id = group.story_id
        if story_id is None:
            values = {
                "category": category,
                "title": titles[group.representative_id],
                "first_seen": now,  # set from the articles below
                "last_seen": now,
                "updated_at": None,
                "article_count": 0,
                "outlet_count": 0,
                "score": 0.0,
            }
            inserted = conn.execute(stories.insert().values(values).returning(stories.c.id))
            story_id = int(inserted.scalar_one())
            created.append(story_id)
        elif group.new_article_ids:
            grown.append(story_id)
        story_of_group.append(story_id)
        for chunk in _chunks(group.new_article_ids):
            stmt = (
                update(articles)
                .where(articles.c.id.in_(chunk), articles.c.story_id.is_(None))
                .values(story_id=story_id)
            )
            if conn.execute(stmt).rowcount != len(chunk):
                raise _ClusterConflict
            assigned += len(chunk)

    old = _stored_outlet_counts(conn, [g.story_id for g in clustering.groups if g.story_id])
    # Stories that gained articles are named after their (possibly new) representative.
    renamed = {
        story_id: titles[group.representative_id]
        for group, story_id in zip(clustering.groups, story_of_group, strict=True)
        if group.new_article_ids
    }
    outlets = _refresh_stories(conn, story_of_group, renamed, old, now)
    updated = [sid for sid in grown if outlets[sid] > old[sid]]
    return ClusterResult(
        category=category,
        articles=len(rows),
        assigned=assigned,
        created=tuple(created),
        grown=tuple(grown),
        updated=tuple(updated),
        stories=len(story_of_group),
    )


def _stored_outlet_counts(conn: Connection, story_ids: Sequence[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for chunk in _chunks(sorted(story_ids)):
        query = select(stories.c.id, stories.c.outlet_count).where(stories.c.id.in_(chunk))
        counts.update((sid, n) for sid, n in conn.execute(query))
    return counts


def _refresh_stories(
    conn: Connection,
    story_ids: Sequence[int],
    titles: Mapping[int, str],
    old_outlets: Mapping[int, int],
    now: datetime,
) -> dict[int, int]:
    """Recompute counts, times and score of stories from all their articles; return outlets."""
    members: dict[int, list[Mapping[str, Any]]] = {}
    for chunk in _chunks(sorted(story_ids)):
        query = select(*_CLUSTER_COLUMNS).where(articles.c.story_id.in_(chunk))
        for row in conn.execute(query).mappings():
            members.setdefault(row["story_id"], []).append(row)
    outlets: dict[int, int] = {}
    # Grouped by the columns they change, so each group is one executemany.
    batches: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for story_id in sorted(members):
        rows = members[story_id]
        stats = StoryStats.of(
            story_id,
            (
                Coverage(
                    source=r["source"],
                    url=r["url"],
                    origin=r["origin"],
                    when=r["published"] or r["first_seen"],
                )
                for r in rows
            ),
        )
        values: dict[str, Any] = {
            "first_seen": min(r["first_seen"] for r in rows),
            "last_seen": max(r["last_seen"] for r in rows),
            "article_count": len(rows),
            "outlet_count": stats.outlets,
            "score": score(stats, now=now),
        }
        if story_id in titles:
            values["title"] = titles[story_id]
        if story_id in old_outlets and stats.outlets > old_outlets[story_id]:
            values["updated_at"] = now
        batches.setdefault(tuple(values), []).append({"story": story_id, **values})
        outlets[story_id] = stats.outlets
    for names, batch in batches.items():
        stmt = (
            update(stories)
            .where(stories.c.id == bindparam("story"))
            .values({name: bindparam(name) for name in names})
        )
        conn.execute(stmt, batch)
    return outlets


_VIEW_COLUMNS = (
    articles.c.id,
    articles.c.url,
    articles.c.title,
    articles.c.source,
    articles.c.published,
    articles.c.first_seen,
    articles.c.lede,
    articles.c.origin,
    articles.c.story_id,
    articles.c.text_hash,
    articles.c.crawl_status,
    (func.coalesce(func.length(articles.c.text), 0) > 0).label("has_text"),
)


def _story_views(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> list[StoryView]:
    by_story: dict[int, list[Mapping[str, Any]]] = {}
    for chunk in _chunks([row["id"] for row in rows]):
        query = select(*_VIEW_COLUMNS).where(articles.c.story_id.in_(chunk))
        for article in conn.execute(query).mappings():
            by_story.setdefault(article["story_id"], []).append(article)
    members = [a for row in rows for a in by_story.get(row["id"], [])]
    views = {a.id: a for a in _article_views(conn, members)}
    return [
        StoryView(
            id=row["id"],
            category=row["category"],
            title=row["title"],
            first_seen=row["first_seen"],
            last_seen=row["last_seen"],
            updated=row["updated_at"] is not None,
            updated_at=row["updated_at"],
            article_count=row["article_count"],
            outlet_count=row["outlet_count"],
            score=row["score"],
            articles=_story_order(
                row["title"], [views[a["id"]] for a in by_story.get(row["id"], [])]
            ),
        )
        for row in rows
    ]


def _story_order(title: str, items: Sequence[ArticleView]) -> tuple[ArticleView, ...]:
    """The representative (the article the story is named after) first, then one article per
    other outlet, newest first, then the rest, newest first."""

    def newest_first(a: ArticleView) -> tuple[float, int]:
        return (-(a.published or a.first_seen).timestamp(), a.id)

    ordered = sorted(items, key=lambda a: (a.title != title, *newest_first(a)))
    head = ordered[:1]
    seen = {a.outlet for a in head}
    firsts, rest = [], []
    for a in ordered[1:]:
        (rest if a.outlet in seen else firsts).append(a)
        seen.add(a.outlet)
    return tuple(head + firsts + rest)


def _article_views(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> list[ArticleView]:
    """Views of article rows (_VIEW_COLUMNS), each with its latest summary: its own, else the
    latest of any article with the same text."""
    ids = [row["id"] for row in rows]
    hashes = sorted({row["text_hash"] for row in rows if row["text_hash"]})
    own: dict[int, Mapping[str, Any]] = {}
    same_text: dict[str, Mapping[str, Any]] = {}
    order = (summaries.c.created_at, summaries.c.id)
    for chunk in _chunks(ids):
        query = select(summaries).where(summaries.c.article_id.in_(chunk)).order_by(*order)
        own.update((s["article_id"], s) for s in conn.execute(query).mappings())
    for chunk in _chunks(hashes):
        query = select(summaries).where(summaries.c.content_hash.in_(chunk)).order_by(*order)
        same_text.update((s["content_hash"], s) for s in conn.execute(query).mappings())
    views = []
    for row in rows:
        found = own.get(row["id"]) or same_text.get(row["text_hash"] or "")
        views.append(
            ArticleView(
                id=row["id"],
                url=row["url"],
                title=row["title"],
                source=row["source"],
                outlet=outlet(row["source"], row["url"]),
                published=row["published"],
                first_seen=row["first_seen"],
                lede=row["lede"],
                origin=row["origin"],
                has_text=bool(row["has_text"]),
                text_hash=row["text_hash"],
                crawl_status=row["crawl_status"],
                summary=_summary(found) if found is not None else None,
            )
        )
    return views


def _summary(row: Mapping[str, Any]) -> Summary:
    return Summary(
        title=row["title"],
        summary=row["summary"],
        brief_summary=row["brief_summary"],
        keywords=tuple(row["keywords"] or ()),
        summarizer=row["summarizer"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
    )


def _latest_summary_text(where: ColumnElement[bool]) -> ScalarSelect[Any]:
    """The brief and text of the newest summary matching `where`, as articles.summary_text."""
    text = summaries.c.brief_summary + " " + summaries.c.summary
    newest = (summaries.c.created_at.desc(), summaries.c.id.desc())
    return select(text).where(where).order_by(*newest).limit(1).scalar_subquery()


def _chunks(values: Sequence[Any]) -> Iterator[list[Any]]:
    items = list(values)
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]
