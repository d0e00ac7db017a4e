"""What `digest status` and the daemon need from the database beyond its data: its size on disk,
and the PostgreSQL advisory lock that keeps one daemon per database."""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator

from sqlalchemy import Connection, text
from sqlalchemy.exc import SQLAlchemyError

from digest.errors import StoreError
from digest.store.base import StoreBase
from digest.store.engine import describe, make_engine
from digest.store.schema import metadata

# One daemon per PostgreSQL database: a session-level advisory lock, held on a connection of its
# own for the daemon's lifetime. The server drops it with the session, also when the process is
# killed. "One database" is a database name and a schema (several deployments may share one
# PostgreSQL database, a schema each), so the key is derived from both.
_DAEMON_LOCK_SALT = "digest daemon"
# Settings of the lock's session. A machine that vanishes without closing its connection: the
# server notices within about two minutes (not the kernel default of two hours) and frees the
# lock. An idle_session_timeout (PostgreSQL 14+) set for the server would end the idle session.
_LOCK_SESSION = {
    "application_name": "digest daemon",
    "tcp_keepalives_idle": "60",
    "tcp_keepalives_interval": "10",
    "tcp_keepalives_count": "6",
    "idle_session_timeout": "0",
}


def daemon_lock_key(conn: Connection) -> tuple[int, str]:
    """The PostgreSQL advisory lock key of the database `conn` works in, and its description."""
    database, schema, search_path = conn.execute(
        text("select current_database(), current_schema(), current_setting('search_path')")
    ).one()
    where = schema or search_path  # no schema of the search path exists (yet)
    digest_ = hashlib.sha256(f"{_DAEMON_LOCK_SALT}\0{database}\0{where}".encode()).digest()
    key = int.from_bytes(digest_[:8], "big", signed=True)
    return key, f"database {database!r}, schema {where!r}"


@contextlib.contextmanager
def postgres_daemon_lock(url: str) -> Iterator[tuple[bool, str, Callable[[], bool]]]:
    """Try to take the daemon lock of the PostgreSQL database at `url` and hold it until the
    block ends. Yields whether it was taken, which database it names, and a check that the
    lock's session still holds it (false once the server or the network dropped it)."""
    engine = make_engine(url)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            try:
                key, where = daemon_lock_key(conn)
                known = (
                    conn.execute(
                        text("select name from pg_settings where name = any(:names)"),
                        {"names": list(_LOCK_SESSION)},
                    )
                    .scalars()
                    .all()
                )
                for name in known:
                    conn.execute(
                        text("select set_config(:n, :v, false)"),
                        {"n": name, "v": _LOCK_SESSION[name]},
                    )
                taken = conn.execute(text("select pg_try_advisory_lock(:k)"), {"k": key}).scalar()
            except SQLAlchemyError as err:
                raise StoreError(f"cannot take the daemon lock: {describe(err)}") from err

            def still_held() -> bool:
                try:
                    held = conn.execute(
                        text(
                            "select exists (select 1 from pg_locks where locktype = 'advisory'"
                            " and granted and pid = pg_backend_pid()"
                            " and classid::bigint = :high and objid::bigint = :low)"
                        ),
                        {"high": (key >> 32) & 0xFFFFFFFF, "low": key & 0xFFFFFFFF},
                    ).scalar()
                except SQLAlchemyError:
                    return False
                return bool(held)

            try:
                yield bool(taken), where, still_held
            finally:
                if taken:
                    # Closing the session would free it too; unlock explicitly all the same.
                    with contextlib.suppress(SQLAlchemyError):
                        conn.execute(text("select pg_advisory_unlock(:k)"), {"k": key})
    finally:
        engine.dispose()


class HealthMixin(StoreBase):
    """The database itself: size, and whether a daemon holds it."""

    def database_size(self) -> int | None:
        """Bytes on disk: the SQLite file (with its WAL); on PostgreSQL, digest's tables in the
        current schema with their indexes and TOAST data (several deployments, or other
        applications, may share one PostgreSQL database: its whole size would say little)."""
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            path = url.database or ""
            return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
        if url.get_backend_name() == "postgresql":
            names = [*metadata.tables, "alembic_version"]
            query = text(
                "select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c"
                " join pg_namespace n on n.oid = c.relnamespace"
                " where n.nspname = current_schema() and c.relkind = 'r'"
                " and c.relname = any(:names)"
            )
            with self._read() as conn:
                return int(conn.execute(query, {"names": names}).scalar_one())
        return None

    def daemon_lock_held(self) -> bool:
        """Whether some session holds the daemon lock of the store's database (see pg_locks: a
        bigint key shows as classid, its high half, objid, its low half, and objsubid 1)."""
        with self._read() as conn:
            key, _ = daemon_lock_key(conn)
            held = conn.execute(
                text(
                    "select exists (select 1 from pg_locks where locktype = 'advisory'"
                    " and granted and database ="
                    " (select oid from pg_database where datname = current_database())"
                    " and classid::bigint = :high and objid::bigint = :low and objsubid = 1)"
                ),
                {"high": (key >> 32) & 0xFFFFFFFF, "low": key & 0xFFFFFFFF},
            ).scalar()
        return bool(held)
