"""Following a story: who follows what, the follow's quiet end, and the alert ledger.

A follow remembers the last timeline event its follower was alerted of (`alerted_through`). An
alert is the follow's new facts and corrections up to one event (`through_event`), one
`follow_alerts` row per channel, moved through the delivery ledger's states by the same
sender (`digest.deliver.sender.deliver`) through `SqlAlertLedger`. While an alert is open (a
row with `through_event` beyond `alerted_through`) no other is made for that follow: a run
killed after making it sends that one, not a second with more events. `alerted_through`
moves up to the alert's `through_event` once every row of it is done (sent, failed, skipped),
by compare-and-set, so a crash between sending and recording doubles nothing either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, and_, func, or_, select, update

from digest.errors import StoreError
from digest.models import StoryEvent
from digest.store.base import StoreBase, insert, require_aware
from digest.store.memory_tables import follow_alerts, follows, story_events
from digest.store.schema import DELIVERY_STATES, stories, subscribers

if TYPE_CHECKING:
    from digest.deliver.ledger import Delivery

__all__ = [
    "ALERT_KINDS",
    "Alert",
    "Follow",
    "FollowsMixin",
    "SqlAlertLedger",
    "alert_key",
    "parse_alert_key",
]

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


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert to send: `follow`'s events after its `alerted_through` up to `through`, on
    `channels` (the rows it has: "email" and channel keys)."""

    follow: Follow
    through: int
    channels: tuple[str, ...]


def alert_key(follow_id: int, through: int) -> str:
    """The name an alert goes by as a delivery row's recipient (`SqlAlertLedger`)."""
    return f"follow:{follow_id}:{through}"


def parse_alert_key(key: str) -> tuple[int, int]:
    _, follow_id, through = key.split(":")
    return int(follow_id), int(through)


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

    def events_to_alert(self, story_id: int, after: int, through: int) -> list[StoryEvent]:
        """The story's facts and corrections after event `after`, up to `through`, in order.
        (Read here until the timeline's `events_after` is merged.)"""
        query = (
            select(story_events)
            .where(
                story_events.c.story_id == story_id,
                story_events.c.id > after,
                story_events.c.id <= through,
                story_events.c.kind.in_(ALERT_KINDS),
            )
            .order_by(story_events.c.id)
        )
        with self._read() as conn:
            return [_event(row) for row in conn.execute(query).mappings()]

    def open_alerts(self, channels_of: Mapping[str, Sequence[str]], now: datetime) -> list[Alert]:
        """Every alert to send now, one per follow at most: the follow's open alert, else a new
        one (made here, a row per channel in `channels_of` its follower's address) when its
        story has facts or corrections it was not alerted of. Alerts whose rows are all done
        are closed first (their follow's `alerted_through` moves up)."""
        require_aware(now, "now")
        self.close_alerts()
        with self._read() as conn:
            active = [
                _follow(r)
                for r in conn.execute(
                    _follow_query().where(follows.c.ended_at.is_(None)).order_by(follows.c.id)
                ).mappings()
            ]
        alerts: list[Alert] = []
        for follow in active:
            channels = tuple(channels_of.get(follow.email, ()))
            alert = self._open_alert(follow, channels, now)
            if alert is not None:
                alerts.append(alert)
        return alerts

    def _open_alert(self, follow: Follow, channels: Sequence[str], now: datetime) -> Alert | None:
        with self._write() as conn:
            # The follow's row locked (PostgreSQL): two runs never make two alerts for it.
            mark = conn.execute(
                select(follows.c.alerted_through, follows.c.ended_at)
                .where(follows.c.id == follow.id)
                .with_for_update()
            ).first()
            if mark is None or mark.ended_at is not None:
                return None
            rows = conn.execute(
                select(follow_alerts.c.through_event, follow_alerts.c.channel).where(
                    follow_alerts.c.follow_id == follow.id,
                    follow_alerts.c.through_event > mark.alerted_through,
                )
            ).all()
            if rows:
                through = max(r.through_event for r in rows)
                on = tuple(sorted(r.channel for r in rows if r.through_event == through))
                return Alert(follow, through, on)
            through = conn.execute(
                select(func.max(story_events.c.id)).where(
                    story_events.c.story_id == follow.story_id,
                    story_events.c.id > mark.alerted_through,
                    story_events.c.kind.in_(ALERT_KINDS),
                )
            ).scalar()
            if through is None:
                return None
            if not channels:  # nowhere to send it: the follower is told nothing, later either
                conn.execute(
                    update(follows).where(follows.c.id == follow.id).values(alerted_through=through)
                )
                return None
            conn.execute(
                insert(conn, follow_alerts)
                .values(
                    [
                        {
                            "follow_id": follow.id,
                            "through_event": through,
                            "channel": channel,
                            "state": "pending",
                            "attempts": 0,
                            "updated_at": now,
                        }
                        for channel in sorted(set(channels))
                    ]
                )
                .on_conflict_do_nothing(index_elements=["follow_id", "through_event", "channel"])
            )
            return Alert(follow, int(through), tuple(sorted(set(channels))))

    def close_alerts(self) -> int:
        """Move each follow's `alerted_through` up to its open alert once every row of that
        alert is done; return how many moved."""
        query = (
            select(follow_alerts.c.follow_id, follow_alerts.c.through_event, follow_alerts.c.state)
            .join(follows, follows.c.id == follow_alerts.c.follow_id)
            .where(follow_alerts.c.through_event > follows.c.alerted_through)
        )
        moved = 0
        with self._write() as conn:
            undone: dict[tuple[int, int], bool] = {}
            for follow_id, through, state in conn.execute(query).all():
                key = (int(follow_id), int(through))
                undone[key] = undone.get(key, False) or state not in _DONE
            for (follow_id, through), left in sorted(undone.items()):
                if left:
                    continue
                stmt = (
                    update(follows)
                    .where(follows.c.id == follow_id, follows.c.alerted_through < through)
                    .values(alerted_through=through)
                )
                moved += conn.execute(stmt).rowcount
        return moved

    def alert_counts(self) -> dict[str, int]:
        """Alert rows per state (every state, zeros included): what `digest status` tells."""
        query = select(follow_alerts.c.state, func.count()).group_by(follow_alerts.c.state)
        counts = dict.fromkeys(DELIVERY_STATES, 0)
        with self._read() as conn:
            counts.update({state: int(n) for state, n in conn.execute(query)})
        return counts

    # -- the ledger's rows, as the delivery sender sees them --------------------------------

    def load_alert_rows(self, keys: Collection[tuple[int, int]], day: date) -> list[Delivery]:
        """The rows of the alerts `keys` ((follow id, through event)) as delivery rows."""
        found: list[Delivery] = []
        with self._read() as conn:
            for follow_id, through in sorted(set(keys)):
                query = select(follow_alerts).where(
                    follow_alerts.c.follow_id == follow_id,
                    follow_alerts.c.through_event == through,
                )
                found += [_row(r, day) for r in conn.execute(query).mappings()]
        return sorted(found, key=lambda d: (d.recipient, d.channel))

    def claim_alert_row(
        self, expected: Delivery, new: Delivery, *, after: Delivery | None = None
    ) -> bool:
        """Compare-and-set, as `claim_delivery` does for the edition's ledger."""
        if new.key[1:] != expected.key[1:]:
            raise ValueError(f"a claim cannot change a row's key: {expected.key} -> {new.key}")
        stmt = (
            _by_key(expected)
            .where(
                follow_alerts.c.state == expected.state,
                follow_alerts.c.attempts == expected.attempts,
            )
            .values(_values(new))
        )
        with self._write() as conn:
            if after is not None:
                _save(conn, after)
            return conn.execute(stmt).rowcount == 1

    def save_alert_row(self, row: Delivery) -> None:
        with self._write() as conn:
            _save(conn, row)


class SqlAlertLedger:
    """The alert ledger as `digest.deliver.sender.LedgerStore`: each alert's rows are delivery
    rows whose recipient is `alert_key(follow, through)`, so that the edition's sender (claim
    before sending, compare-and-set, retries, stuck rows left alone) sends alerts too. Rows are
    made by `FollowsMixin.open_alerts`; `add` has nothing left to add."""

    def __init__(self, store: FollowsMixin, alerts: Iterable[Alert]) -> None:
        self.store = store
        self.keys = [(a.follow.id, a.through) for a in alerts]

    async def add(self, deliveries: Sequence[Delivery]) -> None:
        return None

    async def load(self, edition_day: date) -> list[Delivery]:
        return await asyncio.to_thread(self.store.load_alert_rows, self.keys, edition_day)

    async def claim(
        self, expected: Delivery, new: Delivery, *, save: Delivery | None = None
    ) -> bool:
        return await asyncio.to_thread(self.store.claim_alert_row, expected, new, after=save)

    async def save(self, delivery: Delivery) -> None:
        await asyncio.to_thread(self.store.save_alert_row, delivery)


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


def _follow_query() -> Any:
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


def _event(row: Mapping[Any, Any]) -> StoryEvent:
    detail = row["detail"] if isinstance(row["detail"], dict) else {}
    day = detail.get("edition_day")
    try:
        edition_day = date.fromisoformat(day) if isinstance(day, str) else None
    except ValueError:
        edition_day = None
    return StoryEvent(
        id=row["id"],
        story_id=row["story_id"],
        kind=row["kind"],
        at=row["at"],
        recorded_at=row["recorded_at"],
        outlet=row["outlet"] or "",
        url=row["url"] or "",
        text=row["text"] or "",
        subject=str(detail.get("subject", "") or ""),
        value=str(detail.get("value", "") or ""),
        previous=str(detail.get("previous", "") or ""),
        edition_day=edition_day,
    )


def _by_key(row: Delivery) -> Any:
    follow_id, through = parse_alert_key(row.recipient)
    return update(follow_alerts).where(
        follow_alerts.c.follow_id == follow_id,
        follow_alerts.c.through_event == through,
        follow_alerts.c.channel == row.channel,
    )


def _save(conn: Connection, row: Delivery) -> None:
    if conn.execute(_by_key(row).values(_values(row))).rowcount == 0:
        raise StoreError(f"no alert {row.addressee} in the ledger")


def _values(d: Delivery) -> dict[str, Any]:
    if d.state not in DELIVERY_STATES:
        raise ValueError(f"alert state must be one of {DELIVERY_STATES}, not {d.state!r}")
    require_aware(d.next_attempt_at, "next_attempt_at", optional=True)
    require_aware(d.updated_at, "updated_at", optional=True)
    return {
        "state": d.state,
        "attempts": d.attempts,
        "next_attempt_at": d.next_attempt_at,
        "last_reply": d.last_reply,
        "updated_at": d.updated_at,
    }


def _row(row: Mapping[Any, Any], day: date) -> Delivery:
    from digest.deliver.ledger import Delivery

    return Delivery(
        edition_day=day,
        recipient=alert_key(row["follow_id"], row["through_event"]),
        channel=row["channel"],
        state=row["state"],
        attempts=row["attempts"],
        next_attempt_at=row["next_attempt_at"],
        last_reply=row["last_reply"],
        updated_at=row["updated_at"],
    )
