"""Archive search: one full-text document per article, summaries included.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29

`articles.summary_text` holds the text of the article's latest summary (Store.save_summary
writes it), so that every word a user could look for is in one row: "harbour -squall" excludes
an article whose summary mentions a squall.

SQLite: an FTS5 table with external content (the text lives once, in `articles`), kept in sync
by triggers and filled from the existing rows. An article is re-indexed only when a searched
column changes, not on every sighting. The porter stemmer over
unicode61 without diacritics: "elections" finds "election", "Zurich" finds "Zürich".

PostgreSQL: a `tsvector` column with a GIN index, kept by a trigger that re-indexes an article
only when a searched column changes.
The `english` configuration stems like porter (it keeps diacritics). Weights: headline A, snippet,
lede and summary B, main text D. Main texts are indexed up to 200,000 characters: a tsvector
holds at most 1 MB.

The models do not declare these objects: `digest.store.search.include_name` keeps Alembic's
comparison away from them. digest.store.search holds the queries that read them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("title", "snippet", "lede", "text", "summary_text")
TOKENIZE = "porter unicode61 remove_diacritics 2"
RECENT = sa.text("coalesce(published, first_seen)")  # as in 0002: article_recent()


def upgrade() -> None:
    # Plain ALTER TABLE (no batch rebuild, which would lose SQLite's expression index).
    op.add_column("articles", sa.Column("summary_text", sa.Text(), nullable=True))
    # Store.save_summary sets summary_text on every copy of the summarized text.
    op.create_index("ix_articles_text_hash", "articles", ["text_hash"])
    # PostgreSQL ranks the newest matches of a search: for a common word, walking this index is
    # far cheaper than testing every row's stored vector.
    op.create_index("ix_articles_recent", "articles", [RECENT])
    op.execute(
        "UPDATE articles SET summary_text = (SELECT s.brief_summary || ' ' || s.summary "
        "FROM summaries s WHERE s.article_id = articles.id "
        "ORDER BY s.created_at DESC, s.id DESC LIMIT 1)"
    )
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_index("articles", COLUMNS)
    else:
        _postgresql_index()


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in ("ai", "ad", "au"):
            op.execute(f"DROP TRIGGER IF EXISTS articles_fts_{suffix}")
        op.execute("DROP TABLE IF EXISTS articles_fts")
    else:
        op.execute("DROP TRIGGER IF EXISTS articles_search_vector ON articles")
        op.execute("DROP FUNCTION IF EXISTS articles_search_vector()")
        op.execute("DROP INDEX IF EXISTS ix_articles_search_vector")
        op.execute("ALTER TABLE articles DROP COLUMN IF EXISTS search_vector")
    op.drop_index("ix_articles_recent", table_name="articles")
    op.drop_index("ix_articles_text_hash", table_name="articles")
    op.drop_column("articles", "summary_text")


def _sqlite_index(table: str, columns: Sequence[str]) -> None:
    fts = f"{table}_fts"
    names = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in columns)
    op.execute(
        f"CREATE VIRTUAL TABLE {fts} USING fts5({names}, content='{table}', "
        f"content_rowid='id', tokenize='{TOKENIZE}')"
    )
    op.execute(
        f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN "
        f"INSERT INTO {fts}(rowid, {names}) VALUES (new.id, {new}); END"
    )
    op.execute(
        f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, {names}) VALUES ('delete', old.id, {old}); END"
    )
    op.execute(
        f"CREATE TRIGGER {fts}_au AFTER UPDATE OF {names} ON {table} WHEN {changed} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, {names}) VALUES ('delete', old.id, {old}); "
        f"INSERT INTO {fts}(rowid, {names}) VALUES (new.id, {new}); END"
    )
    op.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")


# The document PostgreSQL indexes, over the row NEW (the trigger) or articles (the backfill).
_DOCUMENT = (
    "setweight(to_tsvector('english', coalesce({r}title, '')), 'A')"
    " || setweight(to_tsvector('english', coalesce({r}snippet, '') || ' '"
    " || coalesce({r}lede, '') || ' ' || coalesce({r}summary_text, '')), 'B')"
    " || setweight(to_tsvector('english', left(coalesce({r}text, ''), 200000)), 'D')"
)


def _postgresql_index() -> None:
    # A trigger, not a generated column: PostgreSQL recomputes a generated column on every
    # UPDATE, and articles are updated at every sighting and clustering (3.5x slower re-sighting
    # at 100,000 articles in bench/search.py). The trigger re-indexes only changed text.
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in COLUMNS)
    op.execute("ALTER TABLE articles ADD COLUMN search_vector tsvector")
    op.execute(
        "CREATE FUNCTION articles_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN IF TG_OP = 'INSERT' OR {changed} THEN "
        f"NEW.search_vector := {_DOCUMENT.format(r='NEW.')}; "
        "END IF; RETURN NEW; END $$"
    )
    op.execute(
        "CREATE TRIGGER articles_search_vector BEFORE INSERT OR UPDATE ON articles "
        "FOR EACH ROW EXECUTE FUNCTION articles_search_vector()"
    )
    op.execute(f"UPDATE articles SET search_vector = {_DOCUMENT.format(r='')}")
    op.execute("CREATE INDEX ix_articles_search_vector ON articles USING gin (search_vector)")
