"""Phrase search at archive scale: an index of each article's adjacent words (PostgreSQL).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01

A phrase of two common words ("chip plant") has its words in tens of thousands of articles
at 1,000,000 articles, but side by side in few or none. The GIN index of `search_vector` knows
only which words an article has, so PostgreSQL read the stored vector (out of line, TOASTed) of
every article with both words to test their positions: 84,000 rows for a phrase that matched
nothing (`bench/search.py --scale`).

`articles_search_pairs(search_vector)` is the set of pairs of lexemes that stand at adjacent
positions of the vector ("chip plant" for `'chip':4 'plant':5`), read off the vector itself, so
it agrees with PostgreSQL's own phrase operator `<->` on every row: a phrase matches only
articles whose pairs contain the phrase's adjacent pairs. A GIN index of that expression
answers the containment; the phrase test itself runs on the few rows left
(digest.store.search_backends.PostgresBackend). An index of an expression, not a column: the
upgrade writes no row again (1,000,000 articles: 10 minutes as a column filled by UPDATE), and
PostgreSQL keeps it with the vector. SQLite: nothing to do, FTS5 tests positions in its own
index.

The models do not declare these objects: `digest.store.search.include_name` keeps Alembic's
comparison away from them.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Lexemes never hold a space (the parser splits on it): "a b" names the pair a, b. Where a
# lexeme did, the pair would only match more rows, which the phrase test then drops.
# COST: 0.1-1 ms a row, 400 times the default; priced at that, the planner asks the index
# instead of computing the pairs of each row of a span (142 ms for a day's 2,740 rows, 44 ms
# from the index, at 1,000,000 articles).
_PAIRS_FUNCTION = """
CREATE FUNCTION articles_search_pairs(vector tsvector) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 1000 AS $$
    WITH words AS (SELECT lexeme, unnest(positions) AS pos FROM unnest(vector))
    SELECT coalesce(array_agg(DISTINCT a.lexeme || ' ' || b.lexeme), '{}')
    FROM words a JOIN words b ON b.pos = a.pos + 1
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_PAIRS_FUNCTION)
    op.execute(
        "CREATE INDEX ix_articles_search_pairs ON articles "
        "USING gin (articles_search_pairs(search_vector))"
    )
    # The planner weighs a pair by the expression's statistics, which ANALYZE gathers for an
    # index's expression: without them it guesses.
    op.execute("ANALYZE articles")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP INDEX IF EXISTS ix_articles_search_pairs")
    op.execute("DROP FUNCTION IF EXISTS articles_search_pairs(tsvector)")
