"""Story summaries: one per story and set of source texts, with its claim check.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01

A story's summary is written from several outlets' texts in one call; it is kept per (story,
hash of those texts, summarizer), so an unchanged story is never summarized twice, with how
many of its claims the sources backed and how many sentences the check removed. A new table;
nothing existing changes (article summaries stay, for `extract --deep` and older editions).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "story_summaries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("story_id", sa.Integer(), nullable=False),
        sa.Column("sources_hash", sa.String(), nullable=False),
        sa.Column("summarizer", sa.String(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("brief_summary", sa.Text(), nullable=False),
        sa.Column("keywords", sa.JSON(), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.Column("claims", sa.Integer(), nullable=False),
        sa.Column("claims_found", sa.Integer(), nullable=False),
        sa.Column("sentences_removed", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["story_id"],
            ["stories.id"],
            name="fk_story_summaries_story_id_stories",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_story_summaries"),
        sa.UniqueConstraint(
            "story_id",
            "sources_hash",
            "summarizer",
            name="uq_story_summaries_story_id_sources_hash_summarizer",
        ),
    )
    op.create_index("ix_story_summaries_created_at", "story_summaries", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_story_summaries_created_at", table_name="story_summaries")
    op.drop_table("story_summaries")
