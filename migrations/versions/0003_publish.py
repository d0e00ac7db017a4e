"""Publish: subscribers, editions, the delivery ledger.

Revision ID: 0003
Revises: 0002
Create Date: 2025-04-01

Types are spelled out, as in 0001. Three new tables; nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "subscribers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(), nullable=False),
        sa.Column("categories", sa.JSON(), nullable=True),
        sa.Column("timezone", sa.String(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_subscribers"),
        sa.UniqueConstraint("email", name="uq_subscribers_email"),
        sa.UniqueConstraint("token", name="uq_subscribers_token"),
    )

    op.create_table(
        "editions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("content_hash", sa.String(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("generated_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_editions"),
        sa.UniqueConstraint("day", name="uq_editions_day"),
    )

    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("edition_day", sa.Date(), nullable=False),
        sa.Column("recipient", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", TZ, nullable=True),
        sa.Column("last_reply", sa.Text(), nullable=True),
        sa.Column("message_id", sa.String(), nullable=True),
        sa.Column("updated_at", TZ, nullable=True),
        sa.CheckConstraint(
            "state IN ('pending', 'sending', 'sent', 'failed')", name="ck_deliveries_state"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_deliveries"),
        sa.UniqueConstraint("edition_day", "recipient", name="uq_deliveries_edition_day_recipient"),
    )
    op.create_index("ix_deliveries_state", "deliveries", ["state"])


def downgrade() -> None:
    op.drop_index("ix_deliveries_state", table_name="deliveries")
    op.drop_table("deliveries")
    op.drop_table("editions")
    op.drop_table("subscribers")
