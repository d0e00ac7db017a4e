"""Phrase search at archive scale: an index of each article's adjacent words (PostgreSQL).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01

A phrase of two common words ("chip plant") has its words in tens of thousands of articles
at 1,000,000 articles, but side by side in few or none. The GIN index of `search_vector` knows
only which words an article has, so PostgreSQL read the stored vector (out of line, TOASTed) of
every article with both words to test their positions: 84,000 rows for a phrase that matched
nothing (`bench/search.py --scale`).

`search_pairs` holds each pair of lexemes that stand at adjacent positions of `search_vector`
("chip plant" for `'chip':4 'plant':5`), computed from the vector itself, so it agrees with
PostgreSQL's own phrase operator `<->` on every row: a phrase matches only articles whose pairs
contain the phrase's adjacent pairs. Its GIN index answers that containment; the phrase test
itself still runs on the few rows left (digest.store.search_backends.PostgresBackend).
Triggers keep it with the vector. SQLite: nothing to do, FTS5 tests positions in its own index.

The models do not declare these objects: `digest.store.search.include_name` keeps Alembic's
comparison away from them.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("title", "snippet", "lede", "text", "summary_text")  # as in 0004
# Lexemes never hold a space (the parser splits on it): "a b" names the pair a, b. Where a
# lexeme did, the pair would only match more rows, which the phrase test then drops.
_PAIRS_FUNCTION = """
CREATE FUNCTION articles_search_pairs(vector tsvector) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    WITH words AS (SELECT lexeme, unnest(positions) AS pos FROM unnest(vector))
    SELECT coalesce(array_agg(DISTINCT a.lexeme || ' ' || b.lexeme), '{}')
    FROM words a JOIN words b ON b.pos = a.pos + 1
$$
"""
# Row triggers of one kind fire by name: these come after 0004's articles_search_vector, which
# has just made NEW.search_vector, and fire when it did (an insert, a searched column changed).
_TRIGGERS = ("articles_search_vector_pairs_insert", "articles_search_vector_pairs_update")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_PAIRS_FUNCTION)
    op.execute("ALTER TABLE articles ADD COLUMN search_pairs text[]")
    op.execute(
        "CREATE FUNCTION articles_search_pairs_row() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN NEW.search_pairs := articles_search_pairs(NEW.search_vector); RETURN NEW; END $$"
    )
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in COLUMNS)
    insert, update = _TRIGGERS
    op.execute(
        f"CREATE TRIGGER {insert} BEFORE INSERT ON articles "
        "FOR EACH ROW EXECUTE FUNCTION articles_search_pairs_row()"
    )
    op.execute(
        f"CREATE TRIGGER {update} BEFORE UPDATE ON articles FOR EACH ROW WHEN ({changed}) "
        "EXECUTE FUNCTION articles_search_pairs_row()"
    )
    # No searched column changes: the triggers leave this one alone.
    op.execute("UPDATE articles SET search_pairs = articles_search_pairs(search_vector)")
    op.execute("CREATE INDEX ix_articles_search_pairs ON articles USING gin (search_pairs)")
    # The planner weighs a pair by the column's statistics: without them it guesses.
    op.execute("ANALYZE articles")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for trigger in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {trigger} ON articles")
    op.execute("DROP FUNCTION IF EXISTS articles_search_pairs_row()")
    op.execute("DROP INDEX IF EXISTS ix_articles_search_pairs")
    op.execute("ALTER TABLE articles DROP COLUMN IF EXISTS search_pairs")
    op.execute("DROP FUNCTION IF EXISTS articles_search_pairs(tsvector)")
