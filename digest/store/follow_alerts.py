"""The alert ledger: what a follower of a story is sent (see `digest.store.follows`), one
`follow_alerts` row per channel, moved through the delivery ledger's states by the edition's
sender (`digest.deliver.sender.deliver`) through `SqlAlertLedger` (`digest.store.ledgers`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Update, exists, func, or_, select, update

from digest.errors import StoreError
from digest.models import Delivery
from digest.store.base import insert, require_aware
from digest.store.follows import ALERT_KINDS, Follow, FollowsMixin, _follow, _follow_query
from digest.store.memory_tables import follow_alerts, follows, story_events
from digest.store.schema import DELIVERY_STATES

__all__ = ["Alert", "AlertsMixin", "alert_key", "parse_alert_key"]

_DONE = ("sent", "failed", "skipped")


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


class AlertsMixin(FollowsMixin):
    """The alerts to followers: made one a follow at a time, closed when every channel is done,
    and their rows as the delivery sender moves them."""

    def open_alerts(
        self,
        channels_of: Mapping[str, Sequence[str]],
        now: datetime,
        every: timedelta = timedelta(0),
    ) -> list[Alert]:
        """Every alert to send now, one per follow at most: the follow's open alert, else a new
        one (made here, a row per channel in `channels_of` its follower's address) when its
        story has facts or corrections it was not alerted of and nothing was sent to it in the
        `every` before `now` (the news waits, and the next alert has all of it). Alerts whose
        rows are all done are closed first (their follow's `alerted_through` moves up)."""
        require_aware(now, "now")
        self.close_alerts()
        # Only follows with something to do (the rest take no write transaction): news since
        # their mark, or an alert still open.
        news = exists().where(
            story_events.c.story_id == follows.c.story_id,
            story_events.c.id > follows.c.alerted_through,
            story_events.c.kind.in_(ALERT_KINDS),
        )
        open_rows = exists().where(
            follow_alerts.c.follow_id == follows.c.id,
            follow_alerts.c.through_event > follows.c.alerted_through,
        )
        query = _follow_query().where(follows.c.ended_at.is_(None), or_(news, open_rows))
        with self._read() as conn:
            active = [_follow(r) for r in conn.execute(query.order_by(follows.c.id)).mappings()]
        alerts: list[Alert] = []
        for follow in active:
            channels = tuple(channels_of.get(follow.email, ()))
            alert = self._open_alert(follow, channels, now, every)
            if alert is not None:
                alerts.append(alert)
        return alerts

    def _open_alert(
        self, follow: Follow, channels: Sequence[str], now: datetime, every: timedelta
    ) -> Alert | None:
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
            if every > timedelta(0) and _sent_within(conn, follow.id, now - every):
                return None  # too soon after the last one: its news waits for the next
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


def _sent_within(conn: Connection, follow_id: int, since: datetime) -> bool:
    """Whether an alert of the follow reached one of its channels after `since`."""
    last = conn.execute(
        select(func.max(follow_alerts.c.updated_at)).where(
            follow_alerts.c.follow_id == follow_id, follow_alerts.c.state == "sent"
        )
    ).scalar()
    return last is not None and last > since


def _by_key(row: Delivery) -> Update:
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
