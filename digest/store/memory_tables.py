"""The tables of a story's memory across runs and days (since migration 0013, issue 31): its
timeline, who follows it, and the alerts they are sent. On the shared `metadata`;
`digest.store.schema` imports this module so that every user of the schema sees them."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from digest.store.tables_base import DELIVERY_STATES, UTCDateTime, metadata

# What can happen to a story, in its timeline (digest.models.StoryEvent).
STORY_EVENT_KINDS = ("first", "outlet", "fact", "revision", "disagreement", "correction")

# A story's timeline: one row per thing that happened to it. `key` makes recording idempotent (a
# run recorded twice, or killed and run again, adds nothing): "outlet:<outlet>", "fact:<outlet>:
# <subject>:<value>", "correction:<subject>:<old>:<new>", ... `detail` holds what the kind needs
# (a figure's subject, value and previous value, the edition day a corrected sentence was sent
# in, the sentence). Rows are never rewritten: a later event tells what changed.
story_events = Table(
    "story_events",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("story_id", Integer, ForeignKey("stories.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String, nullable=False),
    Column("key", String, nullable=False),
    Column("at", UTCDateTime(), nullable=False),  # when it happened (its article's time)
    Column("recorded_at", UTCDateTime(), nullable=False),  # when the service learned it
    Column("outlet", String, nullable=False, default=""),
    Column("url", Text, nullable=False, default=""),
    Column("text", Text, nullable=False, default=""),  # scraped: the sentence or headline
    Column("detail", JSON, nullable=False, default=dict),
    UniqueConstraint("story_id", "key"),
    CheckConstraint(f"kind IN {STORY_EVENT_KINDS!r}", name="kind"),
    Index("ix_story_events_story_id_id", "story_id", "id"),
    Index("ix_story_events_recorded_at", "recorded_at"),
)

# A subscriber following a story: alerted when it gains a checked fact or a correction. Alerts
# went out for every event up to `alerted_through` (a story_events id). Ended (unfollowed, or
# the story quiet for `[memory] follow_days`) follows stay, with when and why they ended.
follows = Table(
    "follows",
    metadata,
    Column("id", Integer, primary_key=True),
    Column(
        "subscriber_id", Integer, ForeignKey("subscribers.id", ondelete="CASCADE"), nullable=False
    ),
    Column("story_id", Integer, ForeignKey("stories.id", ondelete="CASCADE"), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("alerted_through", Integer, nullable=False, default=0),
    Column("ended_at", UTCDateTime()),
    Column("end_reason", String),  # "unfollowed" or "quiet"
    UniqueConstraint("subscriber_id", "story_id"),
    Index("ix_follows_story_id", "story_id"),
)

# The alert ledger: one alert (a follow's events up to `through_event`) on one channel, claimed
# and sent once as the delivery ledger does it (states as `deliveries`).
follow_alerts = Table(
    "follow_alerts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("follow_id", Integer, ForeignKey("follows.id", ondelete="CASCADE"), nullable=False),
    Column("through_event", Integer, nullable=False),
    Column("channel", String, nullable=False),  # "email" or a channel's key
    Column("state", String, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", UTCDateTime()),
    Column("last_reply", Text),
    Column("updated_at", UTCDateTime()),
    UniqueConstraint("follow_id", "through_event", "channel"),
    CheckConstraint(f"state IN {DELIVERY_STATES!r}", name="state"),
    Index("ix_follow_alerts_state", "state"),
)
