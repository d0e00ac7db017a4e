"""An operator's view of the alert ledger and decisions about it (`digest alerts`): every row
listed; an alert's rows sent again or given up as the delivery ledger's rules say
(`digest.deliver.ledger.reopen`, `give_up`), this module only reading and writing them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, func, select, update

from digest.models import Delivery
from digest.store.base import require_aware
from digest.store.follow_alerts import AlertsMixin, _row, _save
from digest.store.follows import Follow, _follow, _follow_query
from digest.store.memory_tables import follow_alerts, follows, story_events

__all__ = ["AlertAdminMixin", "AlertRow"]


@dataclass(frozen=True, slots=True)
class AlertRow:
    """One alert on one channel, as `digest alerts` lists it."""

    follow: Follow
    through: int
    channel: str
    state: str
    attempts: int
    last_reply: str | None
    updated_at: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {
            "follow": self.follow.id,
            "story": self.follow.story_id,
            "title": self.follow.title,
            "follower": self.follow.email,
            "through_event": self.through,
            "channel": self.channel,
            "state": self.state,
            "attempts": self.attempts,
            "last_reply": self.last_reply,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }


class AlertAdminMixin(AlertsMixin):
    """The alert ledger as an operator sees and mends it."""

    def alert_rows(self) -> list[AlertRow]:
        """Every alert row, newest alert first."""
        query = _rows_query().order_by(
            follow_alerts.c.through_event.desc(), follows.c.id, follow_alerts.c.channel
        )
        with self._read() as conn:
            return [_alert_row(r) for r in conn.execute(query).mappings()]

    def resend_alerts(self, now: datetime) -> list[AlertRow]:
        """An operator's request: each follow's latest alert sent again as the ledger says
        (`digest.deliver.ledger.reopen`: its stuck and failed rows pending again), by the next
        run with the same Message-ID. A failed alert was closed: its follow's mark goes back to
        where the alert began (its previous alert, else what the follow began after), so that
        the alert tells the same facts. An older alert is not sent again (a newer one went out
        since), nor one of a follow that ended. Returns the rows reopened."""
        from digest.deliver import ledger

        require_aware(now, "now")
        reopened = []
        with self._write() as conn:
            for follow_id, rows in _latest_alerts(conn).items():
                again = ledger.reopen(_deliveries(rows, now), now)
                if not again:
                    continue
                reopened += _written(conn, rows, again)
                through = rows[0].through
                began = conn.execute(
                    select(func.max(follow_alerts.c.through_event)).where(
                        follow_alerts.c.follow_id == follow_id,
                        follow_alerts.c.through_event < through,
                    )
                ).scalar()
                if began is None:  # its first alert: from what the follow began after
                    follow = rows[0].follow
                    began = conn.execute(
                        select(func.max(story_events.c.id)).where(
                            story_events.c.story_id == follow.story_id,
                            story_events.c.id < through,
                            story_events.c.recorded_at <= follow.created_at,
                        )
                    ).scalar()
                conn.execute(
                    update(follows)
                    .where(follows.c.id == follow_id, follows.c.alerted_through >= through)
                    .values(alerted_through=int(began or 0))
                )
        return reopened

    def abandon_alerts(self, now: datetime) -> list[AlertRow]:
        """An operator's decision: open alerts given up as the ledger says
        (`digest.deliver.ledger.give_up`: stuck and pending rows failed, the reply says why);
        the alerts close."""
        from digest.deliver import ledger

        require_aware(now, "now")
        given_up = []
        with self._write() as conn:
            for rows in _latest_alerts(conn).values():
                given_up += _written(conn, rows, ledger.give_up(_deliveries(rows, now), now))
        self.close_alerts()
        return given_up


def _deliveries(rows: list[AlertRow], now: datetime) -> list[Delivery]:
    return [_row(_mapping(row), now.date()) for row in rows]


def _written(conn: Connection, rows: list[AlertRow], changed: Sequence[Delivery]) -> list[AlertRow]:
    """Save the rows of one alert that the ledger `changed` (one per channel); the rows as they
    are now."""
    by_channel = {row.channel: row for row in rows}
    written = []
    for d in changed:
        _save(conn, d)
        written.append(
            replace(
                by_channel[d.channel],
                state=d.state,
                attempts=d.attempts,
                last_reply=d.last_reply,
                updated_at=d.updated_at,
            )
        )
    return written


def _mapping(row: AlertRow) -> dict[str, Any]:
    return {
        "follow_id": row.follow.id,
        "through_event": row.through,
        "channel": row.channel,
        "state": row.state,
        "attempts": row.attempts,
        "next_attempt_at": None,
        "last_reply": row.last_reply,
        "updated_at": row.updated_at,
    }


def _rows_query() -> Select[Any]:
    """Alert rows with their follow (follower, story title)."""
    return (
        _follow_query()
        .add_columns(
            follow_alerts.c.through_event,
            follow_alerts.c.channel,
            follow_alerts.c.state,
            follow_alerts.c.attempts,
            follow_alerts.c.last_reply,
            follow_alerts.c.updated_at.label("row_updated_at"),
        )
        .join(follow_alerts, follow_alerts.c.follow_id == follows.c.id)
    )


def _alert_row(r: Mapping[Any, Any]) -> AlertRow:
    return AlertRow(
        follow=_follow(r),
        through=r["through_event"],
        channel=r["channel"],
        state=r["state"],
        attempts=r["attempts"],
        last_reply=r["last_reply"],
        updated_at=r["row_updated_at"],
    )


def _latest_alerts(conn: Connection) -> dict[int, list[AlertRow]]:
    """The rows of each active follow's latest alert, by follow."""
    latest = (
        select(follow_alerts.c.follow_id, func.max(follow_alerts.c.through_event).label("t"))
        .group_by(follow_alerts.c.follow_id)
        .subquery()
    )
    query = (
        _rows_query()
        .join(
            latest,
            (latest.c.follow_id == follow_alerts.c.follow_id)
            & (latest.c.t == follow_alerts.c.through_event),
        )
        .where(follows.c.ended_at.is_(None))
        .order_by(follows.c.id, follow_alerts.c.channel)
    )
    found: dict[int, list[AlertRow]] = {}
    for r in conn.execute(query).mappings():
        row = _alert_row(r)
        found.setdefault(row.follow.id, []).append(row)
    return found
