"""Subscribers: who gets the email digest, of which categories, in which time zone."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select

from digest.errors import AddressError, InvalidSubscriberError
from digest.models import Subscriber
from digest.store.base import StoreBase, insert, now
from digest.store.schema import subscribers


class SubscribersMixin(StoreBase):
    """Subscriptions, keyed by the normalized address."""

    def add_subscriber(
        self, email: str, *, categories: Sequence[str] | None, timezone: str
    ) -> Subscriber:
        """Subscribe `email` (lower-cased) to `categories` (None or empty: all of them).

        Adding an address that is subscribed already changes its categories and time zone and
        keeps its token (unsubscribe links already sent keep working). Raises
        InvalidSubscriberError for a malformed address or an unknown time zone.
        """
        address = normalize_email(email)
        zone = _check_timezone(timezone)
        cats = _normalize_categories(categories)
        values = {
            "email": address,
            "categories": list(cats) if cats is not None else None,
            "timezone": zone,
            "token": secrets.token_urlsafe(24),
            "created_at": now(),
        }
        with self._write() as conn:
            stmt = insert(conn, subscribers).values(values)
            stmt = stmt.on_conflict_do_update(
                index_elements=["email"],
                set_={"categories": stmt.excluded.categories, "timezone": stmt.excluded.timezone},
            )
            row = conn.execute(stmt.returning(*subscribers.c)).mappings().one()
        return _subscriber(row)

    def remove_subscriber(self, email: str) -> bool:
        """Unsubscribe `email` (any case); False when it was not subscribed.

        An address is looked for as typed (lower-cased) and normalized, so that one stored by
        an older version, which the address rule may now refuse or write differently, can go.
        """
        addresses = {email.strip().lower()}
        with suppress(InvalidSubscriberError):
            addresses.add(normalize_email(email))
        with self._write() as conn:
            result = conn.execute(subscribers.delete().where(subscribers.c.email.in_(addresses)))
            return bool(result.rowcount)

    def subscribers(self) -> list[Subscriber]:
        """Every subscriber, by address."""
        query = select(subscribers).order_by(subscribers.c.email)
        with self._read() as conn:
            return [_subscriber(row) for row in conn.execute(query).mappings()]

    def subscriber_by_token(self, token: str) -> Subscriber | None:
        """The subscriber whose unsubscribe link carries `token`, or None."""
        if not token:
            return None
        query = select(subscribers).where(subscribers.c.token == token)
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return _subscriber(row) if row is not None else None


def normalize_email(email: str) -> str:
    """`email` checked and normalized by the one address rule that sending applies too
    (`digest.deliver.address`), or InvalidSubscriberError saying why it is refused."""
    # Imported here: the deliver package brings the email stack, which most commands never use.
    from digest.deliver.address import check_address

    try:
        return check_address(email).normalized
    except AddressError as err:
        raise InvalidSubscriberError(str(err)) from None


def _check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidSubscriberError(f"unknown time zone {name!r}") from None
    return name


def _normalize_categories(categories: Sequence[str] | None) -> tuple[str, ...] | None:
    if categories is None:
        return None
    if isinstance(categories, str):
        raise TypeError("categories must be a sequence of names, not one string")
    cleaned = tuple(dict.fromkeys(c.strip() for c in categories if c.strip()))
    return cleaned or None


def _subscriber(row: Mapping[Any, Any]) -> Subscriber:
    categories = row["categories"]
    return Subscriber(
        email=row["email"],
        categories=tuple(categories) if categories is not None else None,
        timezone=row["timezone"],
        token=row["token"],
        created_at=row["created_at"],
    )
