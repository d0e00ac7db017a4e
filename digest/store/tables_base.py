"""What every table module shares: the one `MetaData` (with its constraint naming convention),
the UTC datetime type and the allowed values of state columns."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import get_args

from sqlalchemy import DateTime, Dialect, MetaData
from sqlalchemy.types import TypeDecorator

from digest.models import DeliveryState

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

RUN_STATUSES = ("running", "ok", "partial", "failed", "interrupted")
DELIVERY_STATES: tuple[str, ...] = get_args(DeliveryState)  # a ledger row's states
FEED_ORIGINS = ("cli", "opml")  # digest.models.FeedOrigin


class UTCDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out, on every backend.

    SQLite has no time zone type: values are stored as naive UTC text and marked UTC again on the
    way out. PostgreSQL stores `timestamptz`. Naive datetimes are refused: they are ambiguous.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()}: pass an aware datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# Core tables, not ORM models: the store reads and writes with Core statements only, and a
# command that opens it does not pay for importing and configuring SQLAlchemy's ORM (0.08 s of
# every store command's start, bench/startup.py). Columns are NOT NULL unless they say otherwise.
metadata = MetaData(naming_convention=NAMING_CONVENTION)
