"""Editions: one row per day, the edition's JSON (`digest.store.edition_codec`) and its hash."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import select, update

from digest.errors import StoreError
from digest.models import Edition
from digest.store.base import StoreBase, insert, now, require_aware
from digest.store.edition_codec import content_hash as edition_hash
from digest.store.edition_codec import decode_edition, encode_edition
from digest.store.schema import deliveries, editions, runs


class EditionsMixin(StoreBase):
    """The day's editions, as built by `digest publish`."""

    def save_edition(self, edition: Edition, *, at: datetime | None = None) -> tuple[bool, bool]:
        """Store the edition of `edition.day`; return (created, changed).

        One row per day: saving a day again replaces the stored edition only when its content
        (everything but `generated_at`) changed; an unchanged rebuild leaves the row, and its
        `generated_at`, as they were and returns (False, False).
        """
        at = at or now()
        require_aware(at, "at")
        require_aware(edition.generated_at, "generated_at")
        payload = encode_edition(edition)
        digest = edition_hash(payload)
        values = {
            "day": edition.day,
            "content_hash": digest,
            "payload": payload,
            "generated_at": edition.generated_at,
            "updated_at": at,
        }
        with self._write() as conn:
            stmt = (
                insert(conn, editions).values(values).on_conflict_do_nothing(index_elements=["day"])
            )
            if conn.execute(stmt.returning(editions.c.id)).first() is not None:
                return True, True
            changes = {k: v for k, v in values.items() if k != "day"}
            changed = (
                update(editions)
                .where(editions.c.day == edition.day, editions.c.content_hash != digest)
                .values(changes)
            )
            return False, bool(conn.execute(changed).rowcount)

    def edition(self, day: date) -> Edition | None:
        """The stored edition of `day`, or None."""
        query = select(editions.c.day, editions.c.payload).where(editions.c.day == day)
        with self._read() as conn:
            row = conn.execute(query).first()
        return _edition(row.day, row.payload) if row is not None else None

    def editions(self, limit: int | None = None) -> list[Edition]:
        """The stored editions, newest day first (all of them, or the latest `limit`)."""
        query = select(editions.c.day, editions.c.payload).order_by(editions.c.day.desc())
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [_edition(row.day, row.payload) for row in rows]

    def edition_days(self) -> list[date]:
        """The days that have an edition, newest first."""
        query = select(editions.c.day).order_by(editions.c.day.desc())
        with self._read() as conn:
            return list(conn.execute(query).scalars())

    def remove_edition(
        self, day: date, *, run_key: str | None, reason: str, at: datetime | None = None
    ) -> int | None:
        """Delete the edition of `day`; None when there is none. In the same transaction its
        messages not sent yet (pending) end skipped with `reason`, so that nobody gets an edition
        that is gone, and the run that published it gives up `run_key`, so that the scheduler
        can publish the day again. Sent, failed and stuck messages stay as they are: the ledger
        keeps what was sent. Returns how many messages were skipped."""
        at = at or now()
        require_aware(at, "at")
        with self._write() as conn:
            if not conn.execute(editions.delete().where(editions.c.day == day)).rowcount:
                return None
            skipped = conn.execute(
                update(deliveries)
                .where(deliveries.c.edition_day == day, deliveries.c.state == "pending")
                .values(state="skipped", last_reply=reason, next_attempt_at=None, updated_at=at)
            ).rowcount
            if run_key is not None:
                conn.execute(update(runs).where(runs.c.key == run_key).values(key=None))
        return int(skipped or 0)


def _edition(day: date, payload: Any) -> Edition:
    try:
        return decode_edition(payload)
    except (ValueError, TypeError) as err:
        raise StoreError(f"the stored edition of {day} cannot be read: {err}") from err
