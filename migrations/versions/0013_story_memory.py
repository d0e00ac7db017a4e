"""Story memory: a story's timeline across runs and days, who follows a story, and their alerts.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04

Three new tables; nothing existing changes. `story_events` is a story's timeline (first report,
each new outlet, each new checked fact and revised figure, disagreements, corrections), written
idempotently by key; `follows` is a subscriber following a story; `follow_alerts` is the ledger
of the alerts a follow sends, one per channel, claimed and sent once.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)
KINDS = "kind IN ('first', 'outlet', 'fact', 'revision', 'disagreement', 'correction')"
STATES = "state IN ('pending', 'sending', 'sent', 'failed', 'skipped')"


def upgrade() -> None:
    op.create_table(
        "story_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("story_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("at", TZ, nullable=False),
        sa.Column("recorded_at", TZ, nullable=False),
        sa.Column("outlet", sa.String(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.CheckConstraint(KINDS, name="ck_story_events_kind"),
        sa.ForeignKeyConstraint(
            ["story_id"],
            ["stories.id"],
            name="fk_story_events_story_id_stories",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_story_events"),
        sa.UniqueConstraint("story_id", "key", name="uq_story_events_story_id_key"),
    )
    op.create_index("ix_story_events_story_id_id", "story_events", ["story_id", "id"])
    op.create_index("ix_story_events_recorded_at", "story_events", ["recorded_at"])

    op.create_table(
        "follows",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscriber_id", sa.Integer(), nullable=False),
        sa.Column("story_id", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("alerted_through", sa.Integer(), nullable=False),
        sa.Column("ended_at", TZ, nullable=True),
        sa.Column("end_reason", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["subscriber_id"],
            ["subscribers.id"],
            name="fk_follows_subscriber_id_subscribers",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["story_id"], ["stories.id"], name="fk_follows_story_id_stories", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_follows"),
        sa.UniqueConstraint("subscriber_id", "story_id", name="uq_follows_subscriber_id_story_id"),
    )
    op.create_index("ix_follows_story_id", "follows", ["story_id"])

    op.create_table(
        "follow_alerts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("follow_id", sa.Integer(), nullable=False),
        sa.Column("through_event", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", TZ, nullable=True),
        sa.Column("last_reply", sa.Text(), nullable=True),
        sa.Column("updated_at", TZ, nullable=True),
        sa.CheckConstraint(STATES, name="ck_follow_alerts_state"),
        sa.ForeignKeyConstraint(
            ["follow_id"],
            ["follows.id"],
            name="fk_follow_alerts_follow_id_follows",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_follow_alerts"),
        sa.UniqueConstraint(
            "follow_id",
            "through_event",
            "channel",
            name="uq_follow_alerts_follow_id_through_event_channel",
        ),
    )
    op.create_index("ix_follow_alerts_state", "follow_alerts", ["state"])


def downgrade() -> None:
    op.drop_table("follow_alerts")
    op.drop_table("follows")
    op.drop_table("story_events")
