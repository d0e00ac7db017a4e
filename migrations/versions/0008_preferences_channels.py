"""Subscribers' preferences and channels; the ledger per channel.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

Subscribers gain their own send time, keyword rules, stories per category, language and an
email switch (existing subscribers: the schedule's time, no rules, every story, as written,
email on). `channels` holds their Apprise URLs, `secrets` the keys the service makes for itself
(the preferences page's CSRF key). The delivery ledger is keyed by edition, recipient and
channel: every existing row is the channel "email"; a row can also end `skipped` (a reader's
rules left nothing to send).

Types are spelled out, as in 0001. SQLite rebuilds `deliveries` (batch mode) to change its key
and check constraint; its rows are copied.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)
OLD_STATES = "state IN ('pending', 'sending', 'sent', 'failed')"
NEW_STATES = "state IN ('pending', 'sending', 'sent', 'failed', 'skipped')"


def upgrade() -> None:
    op.add_column("subscribers", sa.Column("send_at", sa.String(), nullable=True))
    for column in ("include_terms", "exclude_terms"):
        op.add_column(
            "subscribers",
            sa.Column(column, sa.JSON(), nullable=False, server_default=sa.text("'[]'")),
        )
    op.add_column("subscribers", sa.Column("max_stories", sa.Integer(), nullable=True))
    op.add_column("subscribers", sa.Column("language", sa.String(), nullable=True))
    op.add_column(
        "subscribers",
        sa.Column("send_email", sa.Boolean(), nullable=False, server_default=sa.true()),
    )

    op.create_table(
        "channels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscriber_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["subscriber_id"],
            ["subscribers.id"],
            name="fk_channels_subscriber_id_subscribers",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_channels"),
        sa.UniqueConstraint("subscriber_id", "key", name="uq_channels_subscriber_id_key"),
    )
    op.create_table(
        "secrets",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("value", sa.String(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_secrets"),
    )

    with op.batch_alter_table("deliveries") as batch:
        batch.add_column(sa.Column("channel", sa.String(), nullable=False, server_default="email"))
        batch.drop_constraint("uq_deliveries_edition_day_recipient", type_="unique")
        batch.create_unique_constraint(
            "uq_deliveries_edition_day_recipient_channel", ["edition_day", "recipient", "channel"]
        )
        batch.drop_constraint("ck_deliveries_state", type_="check")
        batch.create_check_constraint("ck_deliveries_state", NEW_STATES)


def downgrade() -> None:
    # The older schema has one row per edition and recipient, and no `skipped`: the other
    # channels' rows go, skipped emails count as failed.
    op.execute("DELETE FROM deliveries WHERE channel <> 'email'")
    op.execute("UPDATE deliveries SET state = 'failed' WHERE state = 'skipped'")
    with op.batch_alter_table("deliveries") as batch:
        batch.drop_constraint("ck_deliveries_state", type_="check")
        batch.create_check_constraint("ck_deliveries_state", OLD_STATES)
        batch.drop_constraint("uq_deliveries_edition_day_recipient_channel", type_="unique")
        batch.create_unique_constraint(
            "uq_deliveries_edition_day_recipient", ["edition_day", "recipient"]
        )
        batch.drop_column("channel")
    op.drop_table("secrets")
    op.drop_table("channels")
    with op.batch_alter_table("subscribers") as batch:
        for column in (
            "send_email",
            "language",
            "max_stories",
            "exclude_terms",
            "include_terms",
            "send_at",
        ):
            batch.drop_column(column)
