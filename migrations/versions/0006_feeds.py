"""Subscribed feeds: the feeds `digest feeds add` and `digest feeds import` keep in the database.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

Types are spelled out, as in 0001. One new table; nothing existing changes. A subscribed feed's
fetch state is a row of `feeds`, as a configured feed's is, keyed by the same URL.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "subscribed_feeds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("canonical", sa.String(), nullable=False),
        sa.Column("category", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=True),
        sa.Column("site_url", sa.String(), nullable=True),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("added_at", TZ, nullable=False),
        sa.CheckConstraint("origin IN ('cli', 'opml')", name="ck_subscribed_feeds_origin"),
        sa.PrimaryKeyConstraint("id", name="pk_subscribed_feeds"),
        sa.UniqueConstraint("url", name="uq_subscribed_feeds_url"),
        sa.UniqueConstraint("canonical", name="uq_subscribed_feeds_canonical"),
    )
    op.create_index("ix_subscribed_feeds_category", "subscribed_feeds", ["category"])


def downgrade() -> None:
    op.drop_index("ix_subscribed_feeds_category", table_name="subscribed_feeds")
    op.drop_table("subscribed_feeds")
