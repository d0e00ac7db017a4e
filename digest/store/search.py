"""Full-text search over the stored archive: headlines, snippets, ledes, main texts, summaries.

One document per article: headline, snippet, lede, main text and the latest summary's text
(`articles.summary_text`), so every word of a query can match anywhere in what we know of it.
SQLite answers from the FTS5 table `articles_fts`, PostgreSQL from the `search_vector` column
(migration 0004 makes both; `digest.store.search_backends` reads them); results are grouped
by story.

A user's query never reaches either engine as syntax (`digest.store.search_query`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    select,
)

from digest.models import Outlet, SearchHit
from digest.store.base import StoreBase, require_aware
from digest.store.schema import article_recent, articles
from digest.store.search_backends import (
    CLOSE,
    OPEN,
    PASSAGE_ORDER,
    Backend,
    PostgresBackend,
    SqliteBackend,
)
from digest.store.search_query import parse_query
from digest.stories import outlet

# Stored objects the schema does not declare (see migrations/versions/0004_search.py).
_FTS_TABLE = "articles_fts"
_SEARCH_COLUMN = "search_vector"
_SEARCH_INDEXES = ("ix_articles_search_vector", "ix_articles_search_pairs")  # 0004, 0011
_FIELD_LABELS = {"lede": "lede", "summary_text": "summary", "text": "text", "snippet": "lede"}
_MAX_POOL = 5_000
_PG_WORK_MEM = "32MB"


class SearchMixin(StoreBase):
    """The archive search (`digest search`, and the archive part of `digest query`)."""

    def search(
        self,
        text: str,
        *,
        category: str | None = None,
        since: datetime | None = None,
        limit: int = 10,
        any_word: bool = False,
    ) -> list[SearchHit]:
        """Stories whose headlines, ledes, main texts or summaries match `text`, best first.
        Raises InvalidQueryError when nothing searchable is left."""
        require_aware(since, "since", optional=True)
        with self._read() as conn:
            return search(
                conn, text, category=category, since=since, limit=limit, any_word=any_word
            )


def search(
    conn: Connection,
    text: str,
    *,
    category: str | None = None,
    since: datetime | None = None,
    limit: int = 10,
    any_word: bool = False,
) -> list[SearchHit]:
    """The best-matching stories, best first: one hit per story (or per unclustered article).
    With `any_word`, a story needs only one of the words (SearchQuery.any_word)."""
    query = parse_query(text)
    if any_word:
        query = query.any_word()
    backend: Backend = (
        SqliteBackend(query) if conn.dialect.name == "sqlite" else PostgresBackend(query)
    )
    if conn.dialect.name == "postgresql":
        # A common word's GIN matches overflow the default 4 MB: the bitmap turns lossy and
        # every row of those pages is tested again (6,340 extra rows for a phrase at 1,000,000
        # articles). For this read transaction only.
        conn.exec_driver_sql(f"SET LOCAL work_mem = '{_PG_WORK_MEM}'")
    pool = max(limit * 5, 50)
    while True:
        # Articles of one story compete for the pool: widen it until `limit` stories are in.
        found = backend.candidates(conn, category, since, pool)
        best: dict[Any, tuple[int, float]] = {}  # story (or lone article) -> its best article
        for article_id, story_id, score in found:
            best.setdefault(story_id or f"a{article_id}", (article_id, score))
        if len(best) >= limit or len(found) < pool or pool >= _MAX_POOL:
            break
        pool *= 4
    chosen = dict(list(best.values())[:limit])
    if not chosen:
        return []
    query_rows = select(*_HIT_COLUMNS).where(articles.c.id.in_(list(chosen)))
    rows = {r["id"]: r for r in conn.execute(query_rows).mappings()}
    passages = backend.passages(conn, list(chosen))
    members = _story_members(conn, [r["story_id"] for r in rows.values() if r["story_id"]])
    hits = []
    for article_id, score in chosen.items():
        row = rows[article_id]
        matched, marked = _best_passage(passages.get(article_id, {}))
        plain, spans = split_marked(marked or row["lede"] or row["snippet"] or "")
        story = row["story_id"]
        hits.append(
            SearchHit(
                title=row["title"],
                url=row["url"],
                published=row["published"] or row["first_seen"],
                category=row["category"],
                source=row["source"],
                snippet=plain,
                highlights=spans,
                matched=matched,
                score=score,
                story_id=story,
                outlets=(story and members.get(story)) or (_outlet(row["source"], row["url"]),),
            )
        )
    return hits


def _best_passage(passages: Mapping[str, str]) -> tuple[str, str]:
    """(where the words matched, the passage to show): the first field with a highlight, in
    the order a reader wants them; "headline" when only the headline matched."""
    for field in PASSAGE_ORDER:
        if OPEN in (passages.get(field) or ""):
            return _FIELD_LABELS[field], passages[field]
    return "headline", ""


def split_marked(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A snippet with highlight markers -> (plain text, spans of highlighted text)."""
    marked = re.sub(r"\s+", " ", marked).strip()
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    start: int | None = None
    for part in re.split(f"([{OPEN}{CLOSE}])", marked):
        if part == OPEN:
            start = length
        elif part == CLOSE:
            if start is not None and length > start:
                spans.append((start, length))
            start = None
        else:
            plain.append(part)
            length += len(part)
    return "".join(plain), tuple(spans)


def include_name(name: str | None, type_: str, _parents: Mapping[Any, Any]) -> bool:
    """Alembic's `include_name`: leave the search objects the schema does not declare out of
    schema comparisons (FTS5 tables and their shadow tables, tsvector columns and indexes)."""
    if name is None:
        return True
    if type_ == "table":
        return not name.startswith(_FTS_TABLE)
    if type_ == "column":
        return name != _SEARCH_COLUMN
    if type_ == "index":
        return name not in _SEARCH_INDEXES
    return True


_HIT_COLUMNS = (
    articles.c.id,
    articles.c.url,
    articles.c.title,
    articles.c.source,
    articles.c.category,
    articles.c.published,
    articles.c.first_seen,
    articles.c.lede,
    articles.c.snippet,
    articles.c.story_id,
)


def _story_members(conn: Connection, story_ids: Sequence[int]) -> dict[int, tuple[Outlet, ...]]:
    """Each story's outlets with one link each, in the order they first covered it."""
    if not story_ids:
        return {}
    query = (
        select(articles.c.story_id, articles.c.source, articles.c.url)
        .where(articles.c.story_id.in_(sorted(set(story_ids))))
        .order_by(articles.c.story_id, article_recent(), articles.c.id)
    )
    found: dict[int, dict[str, Outlet]] = {}
    for row in conn.execute(query).mappings():
        key = outlet(row["source"], row["url"])
        found.setdefault(row["story_id"], {}).setdefault(key, _outlet(row["source"], row["url"]))
    return {story: tuple(by_name.values()) for story, by_name in found.items()}


def _outlet(source: str, url: str) -> Outlet:
    """An outlet as the source names itself, else by its registrable host."""
    return Outlet(" ".join(source.split()) or outlet("", url), url)
