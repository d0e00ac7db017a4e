"""Deep path: stories, the crawled text of articles, summaries.

Revision ID: 0002
Revises: 0001
Create Date: 2025-03-01

Types are spelled out, as in 0001. On SQLite, adding the foreign key to `articles` rebuilds the
table (batch mode copies every row). SQLAlchemy cannot reflect the expression index
ix_articles_category_recent, so the rebuild would silently lose it: it is dropped before and
created again after, on both backends alike.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)
RECENT = sa.text("coalesce(published, first_seen)")


def upgrade() -> None:
    op.create_table(
        "stories",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("first_seen", TZ, nullable=False),
        sa.Column("last_seen", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=True),
        sa.Column("article_count", sa.Integer(), nullable=False),
        sa.Column("outlet_count", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_stories"),
    )
    op.create_index("ix_stories_category_last_seen", "stories", ["category", "last_seen"])

    op.drop_index("ix_articles_category_recent", table_name="articles")
    with op.batch_alter_table("articles") as batch:
        batch.add_column(sa.Column("story_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("text", sa.Text(), nullable=True))
        batch.add_column(sa.Column("text_hash", sa.String(), nullable=True))
        batch.add_column(sa.Column("crawled_at", TZ, nullable=True))
        batch.add_column(sa.Column("crawl_status", sa.String(), nullable=True))
        batch.add_column(sa.Column("crawl_error", sa.Text(), nullable=True))
        batch.add_column(sa.Column("fetched_by", sa.String(), nullable=True))
        batch.create_foreign_key(
            "fk_articles_story_id_stories",
            "stories",
            ["story_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch.create_index("ix_articles_story_id", ["story_id"])
    op.create_index("ix_articles_category_recent", "articles", ["category", RECENT])

    op.create_table(
        "summaries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("article_id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(), nullable=False),
        sa.Column("summarizer", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("brief_summary", sa.Text(), nullable=False),
        sa.Column("keywords", sa.JSON(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["article_id"],
            ["articles.id"],
            name="fk_summaries_article_id_articles",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_summaries"),
        sa.UniqueConstraint(
            "content_hash", "summarizer", name="uq_summaries_content_hash_summarizer"
        ),
    )
    op.create_index("ix_summaries_article_id", "summaries", ["article_id"])
    op.create_index("ix_summaries_created_at", "summaries", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_summaries_created_at", table_name="summaries")
    op.drop_index("ix_summaries_article_id", table_name="summaries")
    op.drop_table("summaries")
    op.drop_index("ix_articles_category_recent", table_name="articles")
    with op.batch_alter_table("articles") as batch:
        batch.drop_index("ix_articles_story_id")
        batch.drop_constraint("fk_articles_story_id_stories", type_="foreignkey")
        for column in (
            "fetched_by",
            "crawl_error",
            "crawl_status",
            "crawled_at",
            "text_hash",
            "text",
            "story_id",
        ):
            batch.drop_column(column)
    op.create_index("ix_articles_category_recent", "articles", ["category", RECENT])
    op.drop_index("ix_stories_category_last_seen", table_name="stories")
    op.drop_table("stories")
