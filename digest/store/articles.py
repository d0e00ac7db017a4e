"""Articles: one row per canonical URL, the headline and lede of every sighting, the deep crawl's
main text."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, exists, func, or_, select, update

from digest.errors import InvalidURLError, StoreError
from digest.models import ArticleView, Extract, Headline, Item, Page
from digest.store.base import StoreBase, insert, now, require_aware
from digest.store.schema import article_recent, articles, summaries
from digest.store.urls import canonical_url
from digest.store.views import VIEW_COLUMNS, article_views, latest_summary_text

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


@dataclass(frozen=True, slots=True)
class UpsertResult:
    new: int
    updated: int
    skipped: int = 0  # items whose URL is not an absolute http(s) URL: nothing to key them by


def content_hash(text: str) -> str:
    """sha256 (hex) of `text` as UTF-8: `articles.text_hash`, and the natural summary key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ArticlesMixin(StoreBase):
    """Articles as collected (headline, lede) and as deep-crawled (main text)."""

    def upsert_items(self, items: Iterable[Item], *, seen_at: datetime) -> UpsertResult:
        """Store items keyed by canonical URL: seeing a URL again updates its row, never adds one.

        A later sighting only adds information: empty titles, snippets and images do not overwrite
        stored ones, and a lede is replaced only by a new lede, so a failed re-fetch keeps what an
        earlier fetch found. Items without an http(s) URL are counted as skipped.
        """
        require_aware(seen_at, "seen_at")
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
            # One fixed order, so concurrent PostgreSQL writers lock rows alike and never deadlock.
            for url in sorted(batch):
                row = batch[url]
                stmt = (
                    insert(conn, articles)
                    .values(row)
                    .on_conflict_do_nothing(index_elements=["url"])
                )
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
        query = headlines_query(category, since=since, limit=limit)
        with self._read() as conn:
            return [_item_from_row(row) for row in conn.execute(query).mappings()]

    def has_collected(self, category: str, since: datetime) -> bool:
        """Whether any article of `category` was seen since `since` (a collect already ran)."""
        require_aware(since, "since")
        seen = exists().where(articles.c.category == category, articles.c.last_seen >= since)
        with self._read() as conn:
            return bool(conn.execute(select(seen)).scalar())

    def articles_seen(self, start: datetime, end: datetime) -> int:
        """How many articles were collected between `start` and `end` (seen at any time in it):
        the articles an edition of that span can be made of."""
        require_aware(start, "start")
        require_aware(end, "end")
        query = select(func.count()).where(
            articles.c.first_seen < end, articles.c.last_seen >= start
        )
        with self._read() as conn:
            return int(conn.execute(query).scalar_one())

    def article_by_url(self, url: str) -> ArticleView | None:
        """The stored article for `url` (any variant of its canonical URL), or None."""
        try:
            key = canonical_url(url)
        except InvalidURLError:
            return None
        with self._read() as conn:
            row = conn.execute(select(*VIEW_COLUMNS).where(articles.c.url == key)).mappings()
            found = row.first()
            return article_views(conn, [found])[0] if found is not None else None

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
        at = at or now()
        require_aware(at, "at")
        if page.ok:
            status = "pdf" if page.kind == "pdf" else "ok"
            key = content_hash(page.text)
            values: dict[str, Any] = {"text": page.text, "text_hash": key}
            # The same text summarized before (another outlet's copy): searchable at once.
            values["summary_text"] = func.coalesce(
                latest_summary_text(summaries.c.content_hash == key), articles.c.summary_text
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

    def prune_texts(self, before: datetime) -> int:
        """Drop the crawled page texts of articles last seen before `before`; the articles, their
        stories and summaries stay. Returns how many texts were dropped."""
        with self._write() as conn:
            result = conn.execute(
                update(articles)
                .where(articles.c.last_seen < before, articles.c.text.is_not(None))
                .values(text=None)
            )
            return int(result.rowcount or 0)

    def article_counts(self) -> dict[str, int]:
        """How many articles are stored, and how many of them with a main text."""
        with self._read() as conn:
            total = conn.execute(select(func.count()).select_from(articles)).scalar_one()
            texts = conn.execute(
                select(func.count()).select_from(articles).where(articles.c.text.is_not(None))
            ).scalar_one()
        return {"articles": int(total), "with_text": int(texts)}


def headlines_query(category: str, *, since: datetime, limit: int) -> Select[Any]:
    """The query behind `headlines`: its expression must match ix_articles_category_recent."""
    require_aware(since, "since")
    recent = article_recent()
    return (
        select(articles)
        .where(articles.c.category == category, recent >= since)
        .order_by(recent.desc(), articles.c.id.desc())
        .limit(limit)
    )


def _row_from_item(item: Item, seen_at: datetime) -> dict[str, Any]:
    h, e = item.headline, item.extract
    require_aware(h.published, "published", optional=True)
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


def _merge(old: Mapping[Any, Any], new: Mapping[Any, Any]) -> dict[str, Any]:
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


def _item_from_row(row: Mapping[Any, Any]) -> Item:
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
