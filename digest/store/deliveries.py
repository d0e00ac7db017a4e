"""The delivery ledger: one row per (edition, recipient, channel), moved through its states by
compare-and-set (`digest.deliver.ledger` decides the states; this stores them)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from sqlalchemy import Connection, Update, func, select, update

from digest.errors import StoreError
from digest.models import Delivery
from digest.store.base import CHUNK, StoreBase, chunks, insert, require_aware
from digest.store.schema import DELIVERY_STATES, deliveries


class LedgerMixin(StoreBase):
    """Ledger rows: what was sent to whom, and what the mail server said."""

    def add_deliveries(self, rows: Sequence[Delivery]) -> int:
        """Insert the ledger rows whose (edition_day, recipient, channel) is new; return how many.

        Existing rows are left exactly as they are, whatever their state.
        """
        values = [_delivery_values(d) for d in sorted(rows, key=lambda d: d.key)]
        if not values:
            return 0
        added = 0
        with self._write() as conn:
            # In key order, so concurrent PostgreSQL writers lock rows alike and never deadlock.
            for chunk in chunks(values):
                stmt = (
                    insert(conn, deliveries)
                    .values(chunk)
                    .on_conflict_do_nothing(index_elements=["edition_day", "recipient", "channel"])
                    .returning(deliveries.c.id)
                )
                added += len(conn.execute(stmt).all())
        return added

    def load_deliveries(
        self, edition_day: date, recipients: Collection[str] | None = None
    ) -> list[Delivery]:
        """Every ledger row of the edition of `edition_day`, by recipient and channel; with
        `recipients`, only theirs (one delivery task's batch of an edition's subscribers)."""
        query = (
            select(deliveries)
            .where(deliveries.c.edition_day == edition_day)
            .order_by(deliveries.c.recipient, deliveries.c.channel)
        )
        if recipients is None:
            with self._read() as conn:
                return [_delivery(row) for row in conn.execute(query).mappings()]
        wanted = sorted(set(recipients))
        found: list[Delivery] = []
        with self._read() as conn:
            for i in range(0, len(wanted), CHUNK):
                part = query.where(deliveries.c.recipient.in_(wanted[i : i + CHUNK]))
                found += [_delivery(row) for row in conn.execute(part).mappings()]
        return sorted(found, key=lambda d: (d.recipient, d.channel))

    def received(
        self, days: Collection[date], recipients: Collection[str] | None = None
    ) -> dict[str, frozenset[date]]:
        """Of the editions of `days`, those each recipient was sent (a `sent` row on any of
        their channels); with `recipients`, only theirs."""
        if not days:
            return {}
        query = (
            select(deliveries.c.recipient, deliveries.c.edition_day)
            .where(deliveries.c.state == "sent")
            .where(deliveries.c.edition_day.in_(sorted(set(days))))
            .distinct()
        )
        found: dict[str, set[date]] = {}
        with self._read() as conn:
            if recipients is None:
                rows = list(conn.execute(query))
            else:
                wanted = sorted(set(recipients))
                rows = [
                    row
                    for i in range(0, len(wanted), CHUNK)
                    for row in conn.execute(
                        query.where(deliveries.c.recipient.in_(wanted[i : i + CHUNK]))
                    )
                ]
        for recipient, day in rows:
            found.setdefault(recipient, set()).add(day)
        return {r: frozenset(d) for r, d in found.items()}

    def claim_delivery(
        self, expected: Delivery, new: Delivery, *, after: Delivery | None = None
    ) -> bool:
        """Compare-and-set: write `new` over the row of `expected.key` only if that row still
        has `expected.state` and `expected.attempts`; return whether it did.

        `after`, when given, is the outcome of the row sent before, written by its key first in
        the same transaction: one commit a message instead of two, and nothing is recorded
        later than it would be by a `save_delivery` before this claim."""
        if new.key != expected.key:
            raise ValueError(f"a claim cannot change a row's key: {expected.key} -> {new.key}")
        stmt = (
            _by_key(expected)
            .where(
                deliveries.c.state == expected.state,
                deliveries.c.attempts == expected.attempts,
            )
            .values(_delivery_values(new))
        )
        with self._write() as conn:
            if after is not None:
                _save(conn, after)
            return conn.execute(stmt).rowcount == 1

    def save_delivery(self, delivery: Delivery) -> None:
        """Write a ledger row by its key (the outcome recorded by the run that claimed it)."""
        with self._write() as conn:
            _save(conn, delivery)

    def deliveries(
        self,
        limit: int | None = 200,
        *,
        edition_day: date | None = None,
        states: Iterable[str] | None = None,
    ) -> list[Delivery]:
        """Ledger rows, newest edition first, then by recipient: what `digest deliveries` shows.

        Optionally only one edition's, or only rows in `states`.
        """
        query = select(deliveries)
        if edition_day is not None:
            query = query.where(deliveries.c.edition_day == edition_day)
        if states is not None:
            query = query.where(deliveries.c.state.in_(list(states)))
        query = query.order_by(
            deliveries.c.edition_day.desc(), deliveries.c.recipient, deliveries.c.channel
        )
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            return [_delivery(row) for row in conn.execute(query).mappings()]

    def ledger_counts(self, edition_day: date | None = None) -> dict[str, int]:
        """Rows per state (every state, zeros included), of one edition or of all."""
        query = select(deliveries.c.state, func.count()).group_by(deliveries.c.state)
        if edition_day is not None:
            query = query.where(deliveries.c.edition_day == edition_day)
        counts = dict.fromkeys(DELIVERY_STATES, 0)
        with self._read() as conn:
            counts.update({state: int(n) for state, n in conn.execute(query)})
        return counts


def _by_key(delivery: Delivery) -> Update:
    """An UPDATE of the ledger row with `delivery`'s (edition, recipient, channel)."""
    day, recipient, channel = delivery.key
    return update(deliveries).where(
        deliveries.c.edition_day == day,
        deliveries.c.recipient == recipient,
        deliveries.c.channel == channel,
    )


def _save(conn: Connection, delivery: Delivery) -> None:
    stmt = _by_key(delivery).values(_delivery_values(delivery))
    if conn.execute(stmt).rowcount == 0:
        raise StoreError(
            f"no delivery of {delivery.edition_day} to {delivery.addressee} in the ledger"
        )


def _delivery_values(d: Delivery) -> dict[str, Any]:
    if d.state not in DELIVERY_STATES:
        raise ValueError(f"delivery state must be one of {DELIVERY_STATES}, not {d.state!r}")
    require_aware(d.next_attempt_at, "next_attempt_at", optional=True)
    require_aware(d.updated_at, "updated_at", optional=True)
    return {
        "edition_day": d.edition_day,
        "recipient": d.recipient,
        "channel": d.channel,
        "state": d.state,
        "attempts": d.attempts,
        "next_attempt_at": d.next_attempt_at,
        "last_reply": d.last_reply,
        "message_id": d.message_id,
        "updated_at": d.updated_at,
    }


def _delivery(row: Mapping[Any, Any]) -> Delivery:
    return Delivery(
        edition_day=row["edition_day"],
        recipient=row["recipient"],
        channel=row["channel"],
        state=row["state"],
        attempts=row["attempts"],
        next_attempt_at=row["next_attempt_at"],
        last_reply=row["last_reply"],
        message_id=row["message_id"],
        updated_at=row["updated_at"],
    )
