"""The two engines behind `digest.store.search`: SQLite's FTS5 table and PostgreSQL's tsvector.

Each finds the best matches of a parsed query (`candidates`) and marks their passages
(`passages`) in its own way; what a hit holds and how stories are grouped is the same for both,
in `digest.store.search`.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    or_,
    select,
    table,
)
from sqlalchemy.types import Boolean, Text

from digest.store.schema import article_recent, articles
from digest.store.search_query import (
    REGCONFIG,
    SearchQuery,
    adjacent_pairs,
    fts5_expression,
    pg_tsquery,
)

# PostgreSQL ranks the newest this many matches of a search (see PostgresBackend.candidates).
PG_RANK_WINDOW = 2_000
# The newest span of days PostgreSQL first looks for them in (PostgresBackend.newest).
_FIRST_SPAN_DAYS = 1.0
# Walked newest first, a span may read this many rows for its matches; past that, the GIN index.
_WALK_ROWS = 5_000
# Highlight markers inside snippets: control characters that pages do not carry as text.
OPEN, CLOSE = "\x02", "\x03"
_SNIPPET_TOKENS = 24
# The columns of articles_fts (migration 0004) and their bm25 weights; PostgreSQL weighs them
# alike through setweight (A, B, B, D, B). bm25 is lower-is-better: scores are negated.
_FTS_COLUMNS = ("title", "snippet", "lede", "text", "summary_text")
_BM25_WEIGHTS = (10.0, 3.0, 3.0, 1.0, 3.0)
# Where a result's passage comes from, by preference, and how the result says where it matched.
PASSAGE_ORDER = ("lede", "summary_text", "text", "snippet")
_PG_PASSAGE_CHARS = 20_000  # ts_headline re-parses its document: a passage from the start


def _filtered(query: Select[Any], category: str | None, since: datetime | None) -> Select[Any]:
    if category is not None:
        query = query.where(articles.c.category == category)
    if since is not None:
        query = query.where(article_recent() >= since)
    return query


def _search_vector() -> ColumnElement[Any]:
    """An article's stored tsvector (migration 0004)."""
    from sqlalchemy.dialects.postgresql import TSVECTOR

    return literal_column("articles.search_vector", TSVECTOR)


def _newest_ranked(
    inside: Select[Any],
    recent: ColumnElement[datetime],
    rank: ColumnElement[float],
    missing: int,
    dense: bool,
) -> Select[Any]:
    """The newest `missing` of a span's matches `inside`, newest first (ties: the higher id),
    as (article id, story id, rank)."""
    if dense:
        # The span should hold the matches still missing: walked newest first, it
        # stops when it has them.
        return inside.add_columns(rank).order_by(recent.desc(), articles.c.id.desc()).limit(missing)
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
    return (
        select(ranked.c.id, ranked.c.story_id, rank)
        .join(articles, articles.c.id == ranked.c.id)
        .order_by(ranked.c.recent.desc(), ranked.c.id.desc())
    )


class Backend:
    def candidates(
        self, conn: Connection, category: str | None, since: datetime | None, limit: int
    ) -> list[tuple[int, int | None, float]]:
        """(article id, story id, score), best first, at most `limit`."""
        raise NotImplementedError

    def passages(self, conn: Connection, ids: Sequence[int]) -> dict[int, dict[str, str]]:
        """Marked passages of these articles, per searched field (PASSAGE_ORDER)."""
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
            for f in PASSAGE_ORDER
        )
        sql = (
            f"SELECT rowid, {fields} FROM articles_fts WHERE articles_fts MATCH ? "
            f"AND rowid IN ({', '.join('?' * len(ids))})"
        )
        return {
            rowid: dict(zip(PASSAGE_ORDER, marked, strict=True))
            for rowid, *marked in conn.exec_driver_sql(sql, (self.match, *ids))
        }


class PostgresBackend(Backend):
    def __init__(self, query: SearchQuery) -> None:
        self.query = query
        self.tsquery = pg_tsquery(query)
        self._pairs: tuple[ColumnElement[bool] | None] | None = None  # not asked yet
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
        recent = article_recent()
        span = select(func.max(recent), func.min(recent))
        if category is not None:
            span = span.where(articles.c.category == category)
        row = conn.execute(span).one()
        newest, oldest = row[0], row[1]
        if self._pairs is None:
            self._pairs = (self.adjacent(conn),)
        found: list[tuple[int, int | None, float]] = []
        end: datetime | None = None  # the spans do not overlap: each row is read once
        days, length = _FIRST_SPAN_DAYS, _FIRST_SPAN_DAYS
        dense = False
        while newest is not None and len(found) < count:
            start = newest - timedelta(days=days)
            whole = start <= oldest or (since is not None and start <= since)
            matches = self._span_matches(
                recent, category, since, start=None if whole else start, end=end, dense=dense
            )
            query = _newest_ranked(matches, recent, self._rank(), count - len(found), dense)
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

    def _span_matches(
        self,
        recent: ColumnElement[datetime],
        category: str | None,
        since: datetime | None,
        *,
        start: datetime | None,
        end: datetime | None,
        dense: bool,
    ) -> Select[Any]:
        """The matches (article id, story id, recent) from `start` (None: from the oldest) to
        before `end` (None: the newest), unranked and unordered."""
        pairs = self._pairs[0] if self._pairs is not None else None
        phrases_only = pairs is not None and all(
            len(t.words) > 1 for g in self.query.groups for t in g if not t.exclude
        )
        # The pairs index is asked in every fenced span of a query of phrases alone, and
        # past the newest day of one with words too: in that day the phrase test reads at
        # most a day's rows, fewer than a common pair has entries in its index.
        by_pairs = not dense and (end is not None or phrases_only)
        vector = _search_vector()
        match: ColumnElement[bool] = vector.op("@@")(self.tsquery)
        if by_pairs and phrases_only:
            # The pairs have fewer entries in their index than any of the phrases' words
            # ("urban outfitters": 148,420 articles; "urban" more): ts_match_vq, the
            # function behind @@, keeps the words' GIN index out of the plan.
            match = func.ts_match_vq(vector, self.tsquery, type_=Boolean)
        inside = _filtered(
            select(articles.c.id, articles.c.story_id, recent.label("recent")).where(match),
            category,
            since,
        )
        if by_pairs and pairs is not None:
            inside = inside.where(pairs)
        if start is not None:
            inside = inside.where(recent >= start)
        if end is not None:
            inside = inside.where(recent < end)
        return inside

    def _rank(self) -> ColumnElement[float]:
        """A match's rank: ts_rank_cd of its stored vector, read as it is found."""
        return func.ts_rank_cd(_search_vector(), self.tsquery)

    def adjacent(self, conn: Connection) -> ColumnElement[bool] | None:
        """What a match's adjacent pairs (migration 0011's `articles_search_pairs`) must hold
        for the query's phrases to be side by side: asked of their GIN index, it leaves the
        phrase test only rows that have them ("stocks colorado data" at 1,000,000 articles:
        1.3 s to find nothing, now 16 ms). None when no alternative has a phrase."""
        from sqlalchemy.dialects.postgresql import ARRAY, TSVECTOR

        phrases = {t.words for g in self.query.groups for t in g if len(t.words) > 1}
        if not phrases:
            return None
        texts = [" ".join(words) for words in sorted(phrases)]
        phrase = func.unnest(bindparam("terms", texts, type_=ARRAY(Text))).column_valued("t")
        rows = conn.execute(select(phrase, func.phraseto_tsquery(REGCONFIG, phrase).cast(Text)))
        chains: dict[str, str] = {text: chain for text, chain in rows}
        vector = literal_column("articles.search_vector", TSVECTOR)
        stored = func.articles_search_pairs(vector, type_=ARRAY(Text))  # as its index has it
        alternatives = []
        for group in self.query.groups:
            needed: dict[str, None] = {}
            for term in group:
                if not term.exclude and len(term.words) > 1:
                    needed.update(dict.fromkeys(adjacent_pairs(chains[" ".join(term.words)]) or ()))
            if not needed:
                return None  # this alternative can match without any pair
            alternatives.append(stored.contains(list(needed)))
        return or_(*alternatives)

    def passages(self, conn: Connection, ids: Sequence[int]) -> dict[int, dict[str, str]]:
        options = f'StartSel="{OPEN}", StopSel="{CLOSE}", MaxWords={_SNIPPET_TOKENS}, MinWords=12'

        def headline(field: str) -> ColumnElement[Any]:
            document: ColumnElement[Any] = articles.c[field]
            if field == "text":
                document = func.left(document, _PG_PASSAGE_CHARS)
            return func.ts_headline(REGCONFIG, func.coalesce(document, ""), self.tsquery, options)

        # A main text's passage is shown only when the lede and summary have none, and it is
        # the costly one (ts_headline parses up to 20,000 characters): made only then.
        short = [f for f in PASSAGE_ORDER if f != "text"]
        query = select(articles.c.id, *(headline(f) for f in short)).where(articles.c.id.in_(ids))
        found = {row[0]: dict(zip(short, row[1:], strict=True)) for row in conn.execute(query)}
        before_text = PASSAGE_ORDER[: PASSAGE_ORDER.index("text")]
        wanted = [i for i, p in found.items() if not any(OPEN in p[f] for f in before_text)]
        if wanted:
            query = select(articles.c.id, headline("text")).where(articles.c.id.in_(wanted))
            for article_id, marked in conn.execute(query):
                found[article_id]["text"] = marked
        return found
