"""Initial schema: articles, runs, feeds.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Types are spelled out here instead of imported from digest.store.schema, so this revision keeps
creating the same tables whatever the models become. Datetimes are `timestamptz` on PostgreSQL and
naive-UTC text on SQLite (digest.store.schema.UTCDateTime does the conversion).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "articles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("original_url", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("category", sa.String(), nullable=True),
        sa.Column("published", TZ, nullable=True),
        sa.Column("snippet", sa.Text(), nullable=False),
        sa.Column("image", sa.Text(), nullable=True),
        sa.Column("lede", sa.Text(), nullable=False),
        sa.Column("extract_status", sa.String(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("extract_error", sa.Text(), nullable=True),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("first_seen", TZ, nullable=False),
        sa.Column("last_seen", TZ, nullable=False),
        sa.Column("fetched_at", TZ, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_articles"),
        sa.UniqueConstraint("url", name="uq_articles_url"),
    )
    op.create_index(
        "ix_articles_category_recent",
        "articles",
        ["category", sa.text("coalesce(published, first_seen)")],
    )
    op.create_index("ix_articles_category_last_seen", "articles", ["category", "last_seen"])

    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=True),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("finished_at", TZ, nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("errors", sa.JSON(), nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'ok', 'partial', 'failed')", name="ck_runs_status"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.UniqueConstraint("key", name="uq_runs_key"),
    )
    op.create_index("ix_runs_started_at", "runs", ["started_at"])

    op.create_table(
        "feeds",
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("category", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=True),
        sa.Column("etag", sa.String(), nullable=True),
        sa.Column("last_modified", sa.String(), nullable=True),
        sa.Column("error_count", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_ok_at", TZ, nullable=True),
        sa.Column("last_checked_at", TZ, nullable=True),
        sa.PrimaryKeyConstraint("url", name="pk_feeds"),
    )


def downgrade() -> None:
    op.drop_table("feeds")
    op.drop_index("ix_runs_started_at", table_name="runs")
    op.drop_table("runs")
    op.drop_index("ix_articles_category_last_seen", table_name="articles")
    op.drop_index("ix_articles_category_recent", table_name="articles")
    op.drop_table("articles")
