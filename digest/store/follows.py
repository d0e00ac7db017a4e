"""Following a story: who follows what, the follow's quiet end, and the alert ledger.

A follow remembers the last timeline event its follower was alerted of (`alerted_through`). An
alert is the follow's new facts and corrections up to one event (`through_event`), one
`follow_alerts` row per channel, moved through the delivery ledger's states by the same
sender (`digest.deliver.sender.deliver`) through `SqlAlertLedger` (in `digest.store.ledgers`;
the alerts' part of the store is `digest.store.follow_alerts`). While an alert is open (a row
with `through_event` beyond `alerted_through`) no other is made for that follow: a run killed
after making it sends that one, not a second with more events. No new alert is made within
`every` (`[memory] alert_every`) of the follow's last one sent. `alerted_through` moves up to
the alert's `through_event` once every row of it is done (sent, failed, skipped), by
compare-and-set, so a crash between sending and recording doubles nothing either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Select, and_, func, or_, select, update

from digest.models import StoryEvent
from digest.store.base import StoreBase, insert, require_aware
from digest.store.memory_tables import follows, story_events
from digest.store.schema import stories, subscribers

__all__ = ["ALERT_KINDS", "Follow", "FollowsMixin"]

# What a follower is alerted of: a new checked fact, a correction. A new outlet that repeats
# known facts is not news to them.
ALERT_KINDS = ("fact", "correction")
_DONE = ("sent", "failed", "skipped")


@dataclass(frozen=True, slots=True)
class Follow:
    """A subscriber following a story (`email`), with the story's title as it stands."""

    id: int
    email: str
    story_id: int
    title: str
    created_at: datetime
    alerted_through: int = 0
    ended_at: datetime | None = None
    end_reason: str | None = None


class FollowsMixin(StoreBase):
    """Follows of stories by subscribers, and the alerts they are sent."""

    def story_title(self, story_id: int) -> str | None:
        """The story's title, or None when there is no such story."""
        with self._read() as conn:
            title = conn.execute(select(stories.c.title).where(stories.c.id == story_id)).scalar()
        return None if title is None else str(title)

    def follow(self, email: str, story_id: int, now: datetime) -> bool:
        """`email` follows the story from now on: alerted of what happens after `now`, not
        before. Following again changes nothing; a follow that ended starts again. False when
        the subscriber or the story does not exist."""
        require_aware(now, "now")
        with self._write() as conn:
            sub = _subscriber_id(conn, email)
            exists = conn.execute(select(stories.c.id).where(stories.c.id == story_id)).scalar()
            if sub is None or exists is None:
                return False
            latest = _latest_event(conn, story_id)
            stmt = (
                insert(conn, follows)
                .values(
                    subscriber_id=sub, story_id=story_id, created_at=now, alerted_through=latest
                )
                .on_conflict_do_nothing(index_elements=["subscriber_id", "story_id"])
            )
            conn.execute(stmt)
            conn.execute(
                update(follows)
                .where(
                    follows.c.subscriber_id == sub,
                    follows.c.story_id == story_id,
                    follows.c.ended_at.is_not(None),
                )
                .values(
                    created_at=now,
                    alerted_through=latest,
                    ended_at=None,
                    end_reason=None,
                )
            )
        return True

    def unfollow(self, email: str, story_id: int, now: datetime) -> bool:
        """`email` no longer follows the story; False when they did not."""
        require_aware(now, "now")
        with self._write() as conn:
            sub = _subscriber_id(conn, email)
            if sub is None:
                return False
            return _end(conn, [(sub, story_id)], now, "unfollowed") == 1

    def follows_of(self, email: str) -> list[Follow]:
        """The stories `email` follows now, newest follow first."""
        query = _follow_query().where(subscribers.c.email == email, follows.c.ended_at.is_(None))
        with self._read() as conn:
            rows = conn.execute(query.order_by(follows.c.created_at.desc(), follows.c.id.desc()))
            return [_follow(row) for row in rows.mappings()]

    def follow_of(self, email: str, story_id: int) -> Follow | None:
        """`email`'s follow of the story, ended or not, or None."""
        query = _follow_query().where(subscribers.c.email == email, follows.c.story_id == story_id)
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return None if row is None else _follow(row)

    def followers(self, story_id: int) -> list[Follow]:
        """Who follows the story now, by address."""
        query = _follow_query().where(follows.c.story_id == story_id, follows.c.ended_at.is_(None))
        with self._read() as conn:
            return [
                _follow(r) for r in conn.execute(query.order_by(subscribers.c.email)).mappings()
            ]

    def figure_events(self, story_id: int, through: int) -> list[tuple[StoryEvent, dict[str, Any]]]:
        """The story's figures up to event `through` (its "fact" and "revision" events with a
        subject), each with its detail, oldest first: what tells a new fact from a repeated one."""
        from digest.store.memory import FIGURE_KINDS, event_from_row

        t = story_events.c
        query = (
            select(story_events)
            .where(t.story_id == story_id, t.id <= through, t.kind.in_(FIGURE_KINDS))
            .order_by(t.id)
        )
        with self._read() as conn:
            rows = conn.execute(query).mappings()
            return [(event_from_row(r), dict(r["detail"] or {})) for r in rows if r["detail"]]

    def end_quiet_follows(self, now: datetime, days: int) -> int:
        """End the follows of stories that had no event for `days` days (nor were followed
        within them); return how many ended."""
        require_aware(now, "now")
        since = now - timedelta(days=days)
        last_event = (
            select(func.max(story_events.c.recorded_at))
            .where(story_events.c.story_id == follows.c.story_id)
            .scalar_subquery()
        )
        quiet = and_(
            follows.c.ended_at.is_(None),
            follows.c.created_at < since,
            or_(last_event.is_(None), last_event < since),
        )
        with self._write() as conn:
            stmt = update(follows).where(quiet).values(ended_at=now, end_reason="quiet")
            return int(conn.execute(stmt).rowcount)


def _subscriber_id(conn: Connection, email: str) -> int | None:
    found = conn.execute(select(subscribers.c.id).where(subscribers.c.email == email)).scalar()
    return None if found is None else int(found)


def _latest_event(conn: Connection, story_id: int) -> int:
    latest = conn.execute(
        select(func.max(story_events.c.id)).where(story_events.c.story_id == story_id)
    ).scalar()
    return int(latest or 0)


def _end(conn: Connection, pairs: Sequence[tuple[int, int]], now: datetime, reason: str) -> int:
    ended = 0
    for sub, story_id in pairs:
        stmt = (
            update(follows)
            .where(
                follows.c.subscriber_id == sub,
                follows.c.story_id == story_id,
                follows.c.ended_at.is_(None),
            )
            .values(ended_at=now, end_reason=reason)
        )
        ended += conn.execute(stmt).rowcount
    return ended


def _follow_query() -> Select[Any]:
    return (
        select(
            follows,
            subscribers.c.email,
            stories.c.title,
        )
        .join(subscribers, subscribers.c.id == follows.c.subscriber_id)
        .join(stories, stories.c.id == follows.c.story_id)
    )


def _follow(row: Mapping[Any, Any]) -> Follow:
    return Follow(
        id=row["id"],
        email=row["email"],
        story_id=row["story_id"],
        title=row["title"],
        created_at=row["created_at"],
        alerted_through=row["alerted_through"],
        ended_at=row["ended_at"],
        end_reason=row["end_reason"],
    )
