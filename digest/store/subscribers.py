"""Subscribers: who gets the digest, of which categories, when, in which zone, and on which
channels (their preferences, `digest.models.Preferences`, decided and checked elsewhere:
`digest.subscribers.preferences`, whose table `FIELDS` also says where each is kept)."""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping, Sequence
from contextlib import suppress
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, select

from digest.errors import AddressError, InvalidSubscriberError, SubscriberExistsError
from digest.models import Preferences, Subscriber, channel_key
from digest.schedule import known_zone
from digest.store.base import CHUNK, StoreBase, insert, now
from digest.store.schema import channels, subscribers
from digest.subscribers.preferences import FIELDS


class SubscribersMixin(StoreBase):
    """Subscriptions, keyed by the normalized address."""

    def add_subscriber(
        self, email: str, *, categories: Sequence[str] | None, timezone: str
    ) -> Subscriber:
        """Subscribe `email` (lower-cased) to `categories` (None or empty: all of them).

        An address that is subscribed already is SubscriberExistsError and is left as it was
        (its preferences change with `save_preferences`). Raises InvalidSubscriberError for a
        malformed address or an unknown time zone.
        """
        address = normalize_email(email)
        zone = _check_timezone(timezone)
        prefs = Preferences(categories=_normalize_categories(categories), timezone=zone)
        values = {
            "email": address,
            **_row_of(prefs),
            "token": secrets.token_urlsafe(24),
            "created_at": now(),
        }
        with self._write() as conn:
            stmt = insert(conn, subscribers).values(values)
            stmt = stmt.on_conflict_do_nothing(index_elements=["email"])
            row = conn.execute(stmt.returning(*subscribers.c)).mappings().first()
            if row is None:
                raise SubscriberExistsError(f"{address} is subscribed already")
            return _subscriber(row, ())

    def save_preferences(self, email: str, prefs: Preferences) -> Subscriber | None:
        """Write every preference of the subscriber `email` (as typed or normalized), channels
        included (their order kept; a channel removed and added again is the same channel);
        None when nobody has that address. The preferences were checked before
        (`digest.subscribers.preferences`); the time zone is checked again here."""
        prefs = replace(
            prefs,
            timezone=_check_timezone(prefs.timezone),
            categories=_normalize_categories(prefs.categories),
        )
        urls = list(dict.fromkeys(u.strip() for u in prefs.channels if u.strip()))
        values = _row_of(prefs)
        with self._write() as conn:
            row = (
                conn.execute(
                    subscribers.update()
                    .where(subscribers.c.email.in_(_addresses(email)))
                    .values(values)
                    .returning(*subscribers.c)
                )
                .mappings()
                .first()
            )
            if row is None:
                return None
            sid = row["id"]
            conn.execute(channels.delete().where(channels.c.subscriber_id == sid))
            created = now()
            if urls:
                conn.execute(
                    channels.insert(),
                    [
                        {
                            "subscriber_id": sid,
                            "url": url,
                            "key": channel_key(url),
                            "position": i,
                            "created_at": created,
                        }
                        for i, url in enumerate(urls)
                    ],
                )
            return _subscriber(row, _channels_of(conn, [sid]).get(sid, ()))

    def remove_subscriber(self, email: str) -> bool:
        """Unsubscribe `email` (any case); False when it was not subscribed.

        An address is looked for as typed (lower-cased) and normalized, so that one stored by
        an older version, which the address rule may now refuse or write differently, can go.
        """
        with self._write() as conn:
            result = conn.execute(
                subscribers.delete().where(subscribers.c.email.in_(_addresses(email)))
            )
            return bool(result.rowcount)

    def subscribers(self, emails: Collection[str] | None = None) -> list[Subscriber]:
        """Every subscriber, by address, with their channels; with `emails`, only those (one
        delivery task's batch)."""
        query = select(subscribers).order_by(subscribers.c.email)
        with self._read() as conn:
            if emails is None:
                rows = list(conn.execute(query).mappings())
            else:
                wanted, rows = sorted(set(emails)), []
                for i in range(0, len(wanted), CHUNK):
                    part = query.where(subscribers.c.email.in_(wanted[i : i + CHUNK]))
                    rows += list(conn.execute(part).mappings())
            found = _channels_of(conn, [r["id"] for r in rows])
        return [_subscriber(row, found.get(row["id"], ())) for row in rows]

    def subscriber_emails(self) -> list[str]:
        """Every subscriber's address, in order: how the deliveries are split into batches."""
        with self._read() as conn:
            query = select(subscribers.c.email).order_by(subscribers.c.email)
            return list(conn.execute(query).scalars())

    def subscriber(self, email: str) -> Subscriber | None:
        """The subscriber `email` (as typed or normalized), or None."""
        query = select(subscribers).where(subscribers.c.email.in_(_addresses(email)))
        return self._one(query)

    def subscriber_by_token(self, token: str) -> Subscriber | None:
        """The subscriber whose unsubscribe and preferences links carry `token`, or None."""
        if not token:
            return None
        return self._one(select(subscribers).where(subscribers.c.token == token))

    def _one(self, query: Any) -> Subscriber | None:
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
            if row is None:
                return None
            return _subscriber(row, _channels_of(conn, [row["id"]]).get(row["id"], ()))


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
    if known_zone(name) is None:
        raise InvalidSubscriberError(f"unknown time zone {name[:60]!r}")
    return name


def _normalize_categories(categories: Sequence[str] | None) -> tuple[str, ...] | None:
    if categories is None:
        return None
    if isinstance(categories, str):
        raise TypeError("categories must be a sequence of names, not one string")
    cleaned = tuple(dict.fromkeys(c.strip() for c in categories if c.strip()))
    return cleaned or None


def _addresses(email: str) -> set[str]:
    """An address as typed (lower-cased) and normalized: one stored by an older version, which
    the address rule may now refuse or write differently, is still found."""
    addresses = {email.strip().lower()}
    with suppress(InvalidSubscriberError):
        addresses.add(normalize_email(email))
    return addresses


def _channels_of(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The channels' URLs of the subscribers `ids`, in each one's order."""
    if not ids:
        return {}
    query = select(channels.c.subscriber_id, channels.c.url).order_by(
        channels.c.subscriber_id, channels.c.position
    )
    if len(ids) < 500:  # else all of them: cheaper than a long IN list
        query = query.where(channels.c.subscriber_id.in_(list(ids)))
    found: dict[int, list[str]] = {}
    for sid, url in conn.execute(query):
        found.setdefault(sid, []).append(url)
    return {sid: tuple(urls) for sid, urls in found.items()}


# A preference's column, and its value there, are its `Stored` in FIELDS; the channels (no
# column) have their own table.
_STORED = tuple((f.name, f.stored) for f in FIELDS if f.stored is not None)


def _row_of(prefs: Preferences) -> dict[str, Any]:
    """The columns of a subscriber's row that hold `prefs`."""
    return {s.column: s.save(getattr(prefs, name)) for name, s in _STORED}


def _subscriber(row: Mapping[Any, Any], urls: tuple[str, ...] = ()) -> Subscriber:
    values = {name: s.load(row[s.column]) for name, s in _STORED}
    prefs = Preferences(**values, channels=urls)
    return Subscriber(
        email=row["email"], token=row["token"], created_at=row["created_at"], preferences=prefs
    )
