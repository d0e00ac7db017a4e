"""What every part of the store shares: the engine, transactions and the dialect helpers.

Each domain of the store (articles, stories, summaries, runs, feeds, subscribers, editions, the
delivery ledger, housekeeping) is a mixin over `StoreBase` in a module of its own; `Store`
(`digest.store.store`) is composed of them. Methods are synchronous and short; the service's
coroutines await them through the store's face (`digest.store.face`), which runs each in a
thread. No network I/O happens inside their transactions, so a write holds SQLite's lock for
milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import SQLAlchemyError

from digest.errors import StoreError
from digest.store.engine import READ_ONLY, describe

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql

# Rows per IN (...) list: far below SQLite's and PostgreSQL's limits on bound parameters.
CHUNK = 500


class StoreBase:
    """The engine and the two kinds of transaction every part of the store uses."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One write transaction (BEGIN IMMEDIATE on SQLite), committed when the block ends."""
        with store_errors(), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """One read transaction; on SQLite it does not take the write lock."""
        with store_errors(), self.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            yield conn


def insert(conn: Connection, table: Table) -> sqlite.Insert | postgresql.Insert:
    """INSERT for `table` in the connection's dialect, with its ON CONFLICT clauses."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql  # imported on PostgreSQL only

        return postgresql.insert(table)
    return sqlite.insert(table)


@contextmanager
def store_errors() -> Iterator[None]:
    try:
        yield
    except SQLAlchemyError as err:
        raise StoreError(f"database error: {describe(err)}") from err


def now() -> datetime:
    return datetime.now(UTC)


def require_aware(value: datetime | None, name: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if value is None or value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime, not {value!r}")


def chunks(values: Sequence[Any]) -> Iterator[list[Any]]:
    items = list(values)
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]
