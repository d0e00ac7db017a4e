"""PostgreSQL finds a search's newest matches span by span (PostgresBackend.newest): the answer
must be the one a single query over the whole archive gives, whatever the dates, ties, filters."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, literal_column, select
from sqlalchemy.dialects.postgresql import TSVECTOR

from digest.store import Store, open_store, search_backends
from digest.store.engine import READ_ONLY
from digest.store.schema import article_recent, articles
from digest.store.search_backends import PostgresBackend
from digest.store.search_query import parse_query, pg_tsquery
from tests.storefixtures import NOW, PG_HOST, PG_PORT, PG_URL, item, postgres_reachable

WORDS = ("harbour", "storm", "election", "market", "rates", "ferry")
CATEGORIES = ("world", "finance", None)


@pytest.fixture(scope="module")
def archive() -> Iterator[Store]:
    """400 articles over three years, bunched (many in the newest days, ties to the second),
    some without a publication time (their first sighting counts)."""
    if not postgres_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT}")
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    rng = random.Random(5)
    try:
        with open_store(f"{PG_URL}?options=-csearch_path%3D{schema}") as store:
            for batch in range(8):
                items = []
                for n in range(50):
                    age = rng.choice((rng.uniform(0, 2), rng.uniform(0, 60), rng.uniform(0, 1100)))
                    published = NOW - timedelta(days=round(age, 3))
                    words = rng.sample(WORDS, rng.randint(1, 3))
                    items.append(
                        item(
                            f"https://n{batch}.example/{n}",
                            title=" ".join(words).capitalize(),
                            lede=f"Report {n} on the {rng.choice(WORDS)}.",
                            category=rng.choice(CATEGORIES),
                            published=None if rng.random() < 0.1 else published,
                        )
                    )
                store.upsert_items(items, seen_at=NOW - timedelta(days=batch * 100))
            yield store
    finally:
        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as a:
            a.execute(f'DROP SCHEMA "{schema}" CASCADE')


def whole_archive_newest(
    store: Store, text: str, category: str | None, since: datetime | None, count: int
) -> list[int]:
    """The newest matches as one query over every match would find them."""
    vector = literal_column("articles.search_vector", TSVECTOR)
    query = (
        select(articles.c.id)
        .where(vector.op("@@")(pg_tsquery(parse_query(text))))
        .order_by(article_recent().desc(), articles.c.id.desc())
        .limit(count)
    )
    if category is not None:
        query = query.where(articles.c.category == category)
    if since is not None:
        query = query.where(article_recent() >= since)
    with store.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        return list(conn.execute(query).scalars())


def ranked(store: Store, text: str, ids: list[int]) -> list[tuple[int, int | None, float]]:
    """The best 5 of `ids` as one ranking query orders them."""
    if not ids:
        return []
    tsquery = pg_tsquery(parse_query(text))
    rank = func.ts_rank_cd(literal_column("articles.search_vector", TSVECTOR), tsquery)
    query = (
        select(articles.c.id, articles.c.story_id, rank)
        .where(articles.c.id.in_(ids))
        .order_by(rank.desc(), articles.c.id)
        .limit(5)
    )
    with store.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        return [(r[0], r[1], float(r[2])) for r in conn.execute(query)]


QUERIES = st.sampled_from(
    [
        *WORDS,
        "storm OR rates",
        "market -ferry",
        '"harbour storm"',
        "report",
        "nothinghere",
        # Phrases, found through the pairs index (migration 0011): alone, with a word, as
        # alternatives, with a stop word's gap, words side by side only across fields.
        '"storm harbour" OR "market rates"',
        '"harbour storm" election',
        '"report 7 on the storm"',
        '"storm report"',
        '"ferry" "rates election market"',
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=QUERIES,
    category=st.sampled_from(CATEGORIES),
    since_days=st.none() | st.floats(min_value=0, max_value=1200),
    count=st.sampled_from([1, 3, 10, 50, 150, 1000]),
    walk_rows=st.sampled_from([0, 5_000, 10**9]),  # every span asked of GIN, as chosen, walked
)
def test_the_newest_matches_are_those_of_the_whole_archive(
    archive: Store,
    text: str,
    category: str | None,
    since_days: float | None,
    count: int,
    walk_rows: int,
) -> None:
    since = None if since_days is None else NOW - timedelta(days=since_days)
    chosen = search_backends._WALK_ROWS
    search_backends._WALK_ROWS = walk_rows
    try:
        with archive.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            backend = PostgresBackend(parse_query(text))
            found = backend.newest(conn, category, since, count)
            best = backend.candidates(conn, category, since, 5)
    finally:
        search_backends._WALK_ROWS = chosen
    newest = whole_archive_newest(archive, text, category, since, count)
    assert [m[0] for m in found] == newest
    assert best == ranked(archive, text, whole_archive_newest(archive, text, category, since, 2000))


def test_results_do_not_depend_on_how_the_spans_are_read(archive: Store, monkeypatch) -> None:
    """The first span and how the spans are read only decide how long it takes."""
    queries = ["storm", "rates OR ferry", '"harbour storm"', "market -election", '"storm rates"']
    monkeypatch.setattr(search_backends, "PG_RANK_WINDOW", 40)
    results = {}
    for days, walk_rows in ((0.01, 0), (1.0, 5_000), (1.0, 10**9), (30.0, 0), (5000.0, 0)):
        monkeypatch.setattr(search_backends, "_FIRST_SPAN_DAYS", days)
        monkeypatch.setattr(search_backends, "_WALK_ROWS", walk_rows)
        results[(days, walk_rows)] = [
            [(h.url, h.score, h.snippet, h.highlights) for h in archive.search(q, limit=7)]
            for q in queries
        ]
    first = results[(0.01, 0)]
    assert all(r == first for r in results.values())
    assert all(first)  # every query found something
