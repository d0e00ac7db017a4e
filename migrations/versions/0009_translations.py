"""Translations: a story's text in a reader's language, made once and kept.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

One row per original text (a hash of its headline, brief and summary), target language and
translator, so that every reader of a language, in every run, gets the one translation; a
refused one (its claims did not survive) is kept with the reason, and not asked for again. Keyed
by the text, not by a summary's row, so it holds whatever table summaries live in. A new table;
nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "translations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_hash", sa.String(), nullable=False),
        sa.Column("language", sa.String(), nullable=False),
        sa.Column("translator", sa.String(), nullable=False),
        sa.Column("source_language", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("brief_summary", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_translations"),
        sa.UniqueConstraint(
            "source_hash",
            "language",
            "translator",
            name="uq_translations_source_hash_language_translator",
        ),
    )
    op.create_index("ix_translations_created_at", "translations", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_translations_created_at", table_name="translations")
    op.drop_table("translations")
