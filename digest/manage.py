"""What a user manages from the command line: subscribers, the delivery ledger, the database.

Each function is one command's work, so that the CLI only parses arguments and prints results.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from digest.app import App
from digest.config import Config
from digest.deliver.ledger import Delivery
from digest.errors import DigestError, InvalidSubscriberError
from digest.models import Subscriber
from digest.store import SqlLedger, open_store


def upgrade_database(config: Config) -> None:
    """Create or migrate the configured database to the latest schema."""
    open_store(config.database_url()).close()


async def add_subscriber(
    app: App, email: str, *, categories: Sequence[str] | None, timezone: str | None
) -> Subscriber:
    """Subscribe `email` (or change its categories and time zone); the categories must be
    configured ones, the time zone defaults to the configuration's."""
    cats = tuple(app.config.check_category(c) for c in categories) if categories else None
    zone = timezone or app.config.schedule.timezone
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidSubscriberError(f"unknown time zone {zone!r}") from None
    store = await app.store()
    return await asyncio.to_thread(store.add_subscriber, email, categories=cats, timezone=zone)


async def subscribers(app: App) -> list[Subscriber]:
    """Every subscriber, by address."""
    store = await app.store()
    return await asyncio.to_thread(store.subscribers)


async def remove_subscriber(app: App, email: str) -> None:
    """Unsubscribe `email`; DigestError when it was not subscribed."""
    store = await app.store()
    if not await asyncio.to_thread(store.remove_subscriber, email):
        raise DigestError(f"no subscriber {email!r}")


async def deliveries(app: App) -> list[Delivery]:
    """The delivery ledger, newest edition first."""
    store = await app.store()
    return await asyncio.to_thread(store.deliveries)


async def resend(app: App, day: date) -> list[Delivery]:
    """Re-open the stuck and failed emails of the edition of `day` for the next publish."""
    from digest.deliver.sender import resend as reopen

    store = await app.store()
    return await reopen(SqlLedger(store), day, datetime.now(UTC))
