"""Full-text search over the stored archive: headlines, snippets, ledes, main texts, summaries.

One document per article: headline, snippet, lede, main text and the latest summary's text
(`articles.summary_text`), so every word of a query can match anywhere in what we know of it.
SQLite answers from the FTS5 table `articles_fts`, PostgreSQL from the `search_vector` column
(migration 0004 makes both); results are grouped by story.

A user's query never reaches either engine as syntax (`digest.store.search_query`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    bindparam,
    column,
    func,
    literal_column,
    select,
    table,
)
from sqlalchemy.dialects.postgresql import TSVECTOR

from digest.models import Outlet, SearchHit
from digest.store.base import StoreBase, require_aware
from digest.store.schema import Article, articles
from digest.store.search_query import (
    REGCONFIG,
    SearchQuery,
    fts5_expression,
    parse_query,
    pg_tsquery,
)
from digest.stories import outlet

# PostgreSQL ranks the newest this many matches of a search (see PostgresBackend.candidates).
PG_RANK_WINDOW = 2_000
# The newest span of days PostgreSQL first looks for them in (PostgresBackend.newest).
_FIRST_SPAN_DAYS = 1.0
# Walked newest first, a span may read this many rows for its matches; past that, the GIN index.
_WALK_ROWS = 5_000
# Stored objects the models do not declare (see migrations/versions/0004_search.py).
_FTS_TABLE = "articles_fts"
_SEARCH_COLUMN = "search_vector"
# Highlight markers inside snippets: control characters that pages do not carry as text.
_OPEN, _CLOSE = "\x02", "\x03"
_SNIPPET_TOKENS = 24
# The columns of articles_fts (migration 0004) and their bm25 weights; PostgreSQL weighs them
# alike through setweight (A, B, B, D, B). bm25 is lower-is-better: scores are negated.
_FTS_COLUMNS = ("title", "snippet", "lede", "text", "summary_text")
_BM25_WEIGHTS = (10.0, 3.0, 3.0, 1.0, 3.0)
# Where a result's passage comes from, by preference, and how the result says where it matched.
_PASSAGE_ORDER = ("lede", "summary_text", "text", "snippet")
_FIELD_LABELS = {"lede": "lede", "summary_text": "summary", "text": "text", "snippet": "lede"}
_PG_PASSAGE_CHARS = 20_000  # ts_headline re-parses its document: a passage from the start
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
    for field in _PASSAGE_ORDER:
        if _OPEN in (passages.get(field) or ""):
            return _FIELD_LABELS[field], passages[field]
    return "headline", ""


def split_marked(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A snippet with highlight markers -> (plain text, spans of highlighted text)."""
    marked = re.sub(r"\s+", " ", marked).strip()
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    start: int | None = None
    for part in re.split(f"([{_OPEN}{_CLOSE}])", marked):
        if part == _OPEN:
            start = length
        elif part == _CLOSE:
            if start is not None and length > start:
                spans.append((start, length))
            start = None
        else:
            plain.append(part)
            length += len(part)
    return "".join(plain), tuple(spans)


def include_name(name: str | None, type_: str, _parents: Mapping[Any, Any]) -> bool:
    """Alembic's `include_name`: leave the search objects the models do not declare out of
    schema comparisons (FTS5 tables and their shadow tables, tsvector columns and indexes)."""
    if name is None:
        return True
    if type_ == "table":
        return not name.startswith(_FTS_TABLE)
    if type_ == "column":
        return name != _SEARCH_COLUMN
    if type_ == "index":
        return not name.endswith(f"_{_SEARCH_COLUMN}")
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
        .order_by(articles.c.story_id, Article.recent(), articles.c.id)
    )
    found: dict[int, dict[str, Outlet]] = {}
    for row in conn.execute(query).mappings():
        key = outlet(row["source"], row["url"])
        found.setdefault(row["story_id"], {}).setdefault(key, _outlet(row["source"], row["url"]))
    return {story: tuple(by_name.values()) for story, by_name in found.items()}


def _outlet(source: str, url: str) -> Outlet:
    """An outlet as the source names itself, else by its registrable host."""
    return Outlet(" ".join(source.split()) or outlet("", url), url)


def _filtered(query: Select[Any], category: str | None, since: datetime | None) -> Select[Any]:
    if category is not None:
        query = query.where(articles.c.category == category)
    if since is not None:
        query = query.where(Article.recent() >= since)
    return query


class Backend:
    def candidates(
        self, conn: Connection, category: str | None, since: datetime | None, limit: int
    ) -> list[tuple[int, int | None, float]]:
        """(article id, story id, score), best first, at most `limit`."""
        raise NotImplementedError

    def passages(self, conn: Connection, ids: Sequence[int]) -> dict[int, dict[str, str]]:
        """Marked passages of these articles, per searched field (_PASSAGE_ORDER)."""
        raise NotImplementedError


class SqliteBackend(Backend):
    def __init__(self, query: SearchQuery) -> None:
        self.match = fts5_expression(query)

    def candidates(
        self, conn: Connection, category: str | None, since: datetime | None, limit: int
    ) -> list[tuple[int, int | None, float]]:
        fts = table("articles_fts", column("rowid"))
        rank = func.bm25(literal_column("articles_fts"), *_BM25_WEIGHTS)
        query = _filtered(
            select(articles.c.id, articles.c.story_id, rank)
            .select_from(fts.join(articles, articles.c.id == fts.c.rowid))
            .where(literal_column("articles_fts").op("MATCH")(bindparam("q", self.match)))
            .order_by(rank, articles.c.id)
            .limit(limit),
            category,
            since,
        )
        return [(r[0], r[1], -float(r[2])) for r in conn.execute(query)]

    def passages(self, conn: Connection, ids: Sequence[int]) -> dict[int, dict[str, str]]:
        fields = ", ".join(
            f"snippet(articles_fts, {_FTS_COLUMNS.index(f)}, char(2), char(3), '…', "
            f"{_SNIPPET_TOKENS})"
            for f in _PASSAGE_ORDER
        )
        sql = (
            f"SELECT rowid, {fields} FROM articles_fts WHERE articles_fts MATCH ? "
            f"AND rowid IN ({', '.join('?' * len(ids))})"
        )
        return {
            rowid: dict(zip(_PASSAGE_ORDER, marked, strict=True))
            for rowid, *marked in conn.exec_driver_sql(sql, (self.match, *ids))
        }


class PostgresBackend(Backend):
    def __init__(self, query: SearchQuery) -> None:
        self.tsquery = pg_tsquery(query)
        self._newest: dict[tuple[Any, ...], list[tuple[int, int | None, float]]] = {}

    def candidates(
        self, conn: Connection, category: str | None, since: datetime | None, limit: int
    ) -> list[tuple[int, int | None, float]]:
        # Ranking reads each match's stored vector (600 ms for a common word's 23,000 matches
        # in bench/search.py). So only the newest matches are ranked, for news the best of the
        # recent ones.
        newest = self.newest(conn, category, since, max(limit, PG_RANK_WINDOW))
        return sorted(newest, key=lambda m: (-m[2], m[0]))[:limit]

    def newest(
        self, conn: Connection, category: str | None, since: datetime | None, count: int
    ) -> list[tuple[int, int | None, float]]:
        """The newest `count` matches, newest first (ties: the higher id first), as (article
        id, story id, rank): ranked as they are found, so no row is read twice.

        Asked of the whole archive, PostgreSQL reads the row of every match to learn its date
        (a common word: 400,000 rows at 1,000,000 articles; bench/search.py --scale). So the
        newest day is asked first, then ever longer spans before it until `count` are found:
        the GIN index's matches are intersected with ix_articles_recent's span before any row
        is read. The answer is the same: every match of a span is newer than those before it.
        """
        key = (category, since, count)
        if key in self._newest:
            return self._newest[key]
        recent = Article.recent()
        span = select(func.max(recent), func.min(recent))
        if category is not None:
            span = span.where(articles.c.category == category)
        row = conn.execute(span).one()
        newest, oldest = row[0], row[1]
        vector = literal_column("articles.search_vector", TSVECTOR)
        rank = func.ts_rank_cd(vector, self.tsquery)
        found: list[tuple[int, int | None, float]] = []
        end: datetime | None = None  # the spans do not overlap: each row is read once
        days, length = _FIRST_SPAN_DAYS, _FIRST_SPAN_DAYS
        dense = False
        while newest is not None and len(found) < count:
            start = newest - timedelta(days=days)
            whole = start <= oldest or (since is not None and start <= since)
            inside = _filtered(
                select(articles.c.id, articles.c.story_id, recent.label("recent")).where(
                    vector.op("@@")(self.tsquery)
                ),
                category,
                since,
            )
            if not whole:
                inside = inside.where(recent >= start)
            if end is not None:
                inside = inside.where(recent < end)
            missing = count - len(found)
            if dense:
                # The span should hold the matches still missing: walked newest first, it
                # stops when it has them.
                query = (
                    inside.add_columns(rank)
                    .order_by(recent.desc(), articles.c.id.desc())
                    .limit(missing)
                )
            else:
                # Fenced (MATERIALIZED): with a LIMIT above it, PostgreSQL would rather walk
                # ix_articles_recent testing every row of the span (4.9 s for a phrase that
                # matches nothing at 1,000,000 articles) than ask the GIN index which match.
                span_matches = inside.cte("span_matches").prefix_with("MATERIALIZED")
                ranked = (
                    select(span_matches)
                    .order_by(span_matches.c.recent.desc(), span_matches.c.id.desc())
                    .limit(missing)
                    .subquery()
                )
                query = (
                    select(ranked.c.id, ranked.c.story_id, rank)
                    .join(articles, articles.c.id == ranked.c.id)
                    .order_by(ranked.c.recent.desc(), ranked.c.id.desc())
                )
            got = [(r[0], r[1], float(r[-1])) for r in conn.execute(query)]
            found.extend(got)
            if whole:
                break
            if end is None:
                # What share of the newest day's articles match: walking the next spans newest
                # first pays when few rows are read per match, asking the GIN index when many.
                rows = conn.execute(
                    _filtered(select(func.count()).where(recent >= start), category, since)
                ).scalar_one()
                dense = (count - len(got)) * rows <= _WALK_ROWS * max(len(got), 1)
            end = start
            # The next span, at this one's rate of matches, holds twice the missing ones:
            # from 3 to 63 times as many days as before it.
            wanted = 2 * (count - len(found)) / ((len(got) + 1) / length)
            length = min(63 * days, max(3 * days, wanted))
            dense = dense and wanted <= 63 * days
            days += length
        self._newest[key] = found
        return found

    def passages(self, conn: Connection, ids: Sequence[int]) -> dict[int, dict[str, str]]:
        options = f'StartSel="{_OPEN}", StopSel="{_CLOSE}", MaxWords={_SNIPPET_TOKENS}, MinWords=12'

        def headline(field: str) -> ColumnElement[Any]:
            document: ColumnElement[Any] = articles.c[field]
            if field == "text":
                document = func.left(document, _PG_PASSAGE_CHARS)
            return func.ts_headline(REGCONFIG, func.coalesce(document, ""), self.tsquery, options)

        # A main text's passage is shown only when the lede and summary have none, and it is
        # the costly one (ts_headline parses up to 20,000 characters): made only then.
        short = [f for f in _PASSAGE_ORDER if f != "text"]
        query = select(articles.c.id, *(headline(f) for f in short)).where(articles.c.id.in_(ids))
        found = {row[0]: dict(zip(short, row[1:], strict=True)) for row in conn.execute(query)}
        before_text = _PASSAGE_ORDER[: _PASSAGE_ORDER.index("text")]
        wanted = [i for i, p in found.items() if not any(_OPEN in p[f] for f in before_text)]
        if wanted:
            query = select(articles.c.id, headline("text")).where(articles.c.id.in_(wanted))
            for article_id, marked in conn.execute(query):
                found[article_id]["text"] = marked
        return found
