"""An operator's view of the alert ledger and decisions about it (`digest alerts`): every row
listed; the stuck and failed messages of an alert re-sent, or the stuck and pending ones given
up, through the delivery ledger's own transitions (`digest.deliver.ledger.resend`, `abandon`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select, update

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
        """An operator's request: the stuck (``sending``) and failed rows of each follow's
        latest alert made pending again (`digest.deliver.ledger.resend`), for the next run to
        send with the same Message-ID. A failed alert was closed: its follow's mark goes back to
        where the alert began (its previous alert, else what the follow began after), so that
        the alert tells the same facts. An older alert is not sent again (a newer one went out
        since), nor one of a follow that ended. Returns the rows reopened."""
        from digest.deliver import ledger

        require_aware(now, "now")
        reopened = []
        with self._write() as conn:
            for follow_id, rows in _latest_alerts(conn).items():
                undone = [r for r in rows if r.state in ("sending", "failed")]
                if not undone:
                    continue
                through = rows[0].through
                for row in undone:
                    again = ledger.resend(_row(_mapping(row), now.date()), now)
                    _save(conn, again)
                    reopened.append(replace(row, state="pending", attempts=0, updated_at=now))
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
        """An operator's decision: the stuck and pending rows of open alerts are not sent
        (`digest.deliver.ledger.abandon`: failed, the reply says why); the alerts close."""
        from digest.deliver import ledger

        require_aware(now, "now")
        given_up = []
        with self._write() as conn:
            for rows in _latest_alerts(conn).values():
                for row in rows:
                    if row.state not in ("sending", "pending"):
                        continue
                    row_now = ledger.abandon(_row(_mapping(row), now.date()), now)
                    _save(conn, row_now)
                    given_up.append(
                        replace(row, state="failed", last_reply=row_now.last_reply, updated_at=now)
                    )
        self.close_alerts()
        return given_up


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


def _rows_query() -> Any:
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
