"""Database engines: SQLite set up for a daemon and a CLI writing at once, or PostgreSQL (psycopg).

Every entry point opens the database through `open_store()`, which first brings the schema to the
newest revision: nobody runs a migration command by hand.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from digest.errors import NoDatabaseError, StoreError

if TYPE_CHECKING:  # Alembic is imported only when a schema is behind (0.1 s of every command)
    from alembic.config import Config
    from alembic.script import ScriptDirectory

SQLITE_BUSY_TIMEOUT_MS = 10_000
POSTGRES_CONNECT_TIMEOUT_S = 10
# Execution option for read-only units of work: on SQLite they start a deferred transaction, which
# does not take the write lock. Every other transaction starts with BEGIN IMMEDIATE.
READ_ONLY = "digest_read_only"
# pg_advisory_xact_lock key that makes concurrent upgrades of one PostgreSQL database take turns.
_UPGRADE_LOCK_KEY = 0x64696765
_EXPECTED = "expected sqlite:///PATH or postgresql+psycopg://USER@HOST/DATABASE"


def make_engine(url: str) -> Engine:
    """Create an engine for `url` and check that the database opens.

    Raises StoreError (one line, password hidden) for an unsupported URL, a SQLite directory that
    cannot be created, or a database that cannot be opened or reached.
    """
    parsed = _parse(url)
    if parsed.get_backend_name() == "sqlite":
        engine = _sqlite_engine(parsed)
    else:
        engine = _postgresql_engine(parsed)
    try:
        with engine.connect().execution_options(**{READ_ONLY: True}):
            pass
    except SQLAlchemyError as err:
        engine.dispose()
        raise StoreError(f"cannot open database {_shown(engine.url)}: {describe(err)}") from err
    return engine


def require_database(url: str) -> None:
    """NoDatabaseError when `url` names a SQLite file that does not exist: checked before the
    first connection, which would create it (and its folder). A server's database is checked
    by `upgrade(engine, create=False)` instead."""
    parsed = _parse(url)
    if parsed.get_backend_name() != "sqlite":
        return
    path = sqlite_file(parsed)
    if path is not None and not path.exists():
        raise NoDatabaseError(f"no database at {path}")


def sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite URL (plain path or `file:` URI); None for an in-memory one."""
    database = url.database or ""
    if database in ("", ":memory:") or "mode=memory" in database:
        return None
    if database.startswith("file:"):
        database = database.removeprefix("file:").split("?", 1)[0]
    return Path(database).absolute()


def backend(url: str) -> str:
    """The backend of a database URL, "sqlite" or "postgresql"; StoreError for any other."""
    return _parse(url).get_backend_name()


def upgrade(engine: Engine, *, create: bool = True) -> None:
    """Bring the schema to the newest revision; a no-op (one read) when it is there already.
    With `create` False, a database without digest's schema is NoDatabaseError, left as it is.

    The whole upgrade runs in one transaction (both backends have transactional DDL) holding the
    write lock (SQLite) or an advisory lock (PostgreSQL): a daemon and a CLI that start together
    migrate once, and a failed migration leaves the old schema intact.
    """
    if _at_newest_revision(engine):
        return
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    script = ScriptDirectory(str(migrations_dir()))
    head = script.get_current_head()
    try:
        with engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            current = MigrationContext.configure(conn).get_current_revision()
        if current == head:
            return
        if current is None and not create:
            raise NoDatabaseError(f"database {_shown(engine.url)} holds no digest tables yet")
        if current is not None and not _known(script, current):
            raise StoreError(
                f"database {_shown(engine.url)} has schema revision {current!r}, newer than this "
                "version of digest knows: upgrade digest"
            )
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _UPGRADE_LOCK_KEY})
            command.upgrade(alembic_config(conn), "head")
    except (SQLAlchemyError, CommandError) as err:
        raise StoreError(f"cannot migrate database {_shown(engine.url)}: {describe(err)}") from err


def alembic_config(connection: Connection) -> Config:
    """Alembic configuration without an alembic.ini, running on `connection` (migrations/env.py)."""
    from alembic.config import Config

    config = Config()
    # configparser interpolation: a literal "%" in the path must be doubled.
    config.set_main_option("script_location", str(migrations_dir()).replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    config.attributes["connection"] = connection
    return config


def _at_newest_revision(engine: Engine) -> bool:
    """Whether the database is at `newest_revision()` by one read, without Alembic; any doubt
    (no version table, several rows, a history that is not one line) is False: `upgrade` asks
    Alembic then."""
    newest = newest_revision()
    if newest is None:
        return False
    try:
        with engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except SQLAlchemyError:
        return False
    return rows == [newest]


_REVISION = re.compile(r"^revision(?:: str)? = \"(\w+)\"$", re.MULTILINE)
_DOWN_REVISION = re.compile(r"^down_revision(?:: str \| None)? = (?:\"(\w+)\"|None)$", re.MULTILINE)
_BRANCHES = re.compile(r"^(?:branch_labels|depends_on)\b.* = (?!None$)", re.MULTILINE)


@functools.cache
def newest_revision() -> str | None:
    """The head of the migrations, read from their files as Alembic would name it, when the
    history is one line of revisions (each names the one before); None otherwise."""
    revisions: dict[str, str | None] = {}
    for path in sorted((migrations_dir() / "versions").glob("*.py")):
        if path.name.startswith("__init__"):  # as Alembic: not a revision
            continue
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.findall(source), _DOWN_REVISION.findall(source)
        if len(revision) != 1 or len(down) != 1 or _BRANCHES.search(source):
            return None
        if revision[0] in revisions:
            return None
        revisions[revision[0]] = down[0] or None
    heads = set(revisions) - set(revisions.values())
    return heads.pop() if len(heads) == 1 else None


def migrations_dir() -> Path:
    """The Alembic scripts: the `digest.migrations` package (the top-level migrations/ folder)."""
    try:
        root: Any = importlib.resources.files("digest.migrations")
    except ModuleNotFoundError:
        # An editable install made before pyproject.toml mapped digest.migrations: the checkout.
        root = Path(__file__).resolve().parents[2] / "migrations"
    path = Path(str(root))
    if not (path / "env.py").is_file():
        raise StoreError(f"database migrations are missing from {path}: reinstall digest")
    return path


def describe(err: BaseException) -> str:
    """The first line of a database error, without SQLAlchemy's echo of the SQL statement."""
    orig = getattr(err, "orig", None) or err
    lines = str(orig).strip().splitlines()
    return lines[0] if lines else type(orig).__name__


def _parse(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"not a database URL ({_EXPECTED})") from None
    if parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        return parsed
    if parsed.drivername in ("postgresql", "postgresql+psycopg"):
        return parsed.set(drivername="postgresql+psycopg")
    raise StoreError(f"unsupported database {_shown(parsed)} ({_EXPECTED})")


def _shown(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def _sqlite_engine(url: URL) -> Engine:
    database = url.database or ""
    if database in ("", ":memory:") or "mode=memory" in database:
        # Each pooled connection (each thread: the service calls the store via to_thread) would
        # get its own empty database.
        raise StoreError(
            "an in-memory SQLite database cannot be shared between threads: use a file"
        )
    if not database.startswith("file:"):
        directory = Path(database).parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            reason = err.strerror or str(err)
            raise StoreError(
                f"cannot create directory {directory} for the database: {reason}"
            ) from err
    engine = create_engine(url)
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Take transaction control away from the sqlite3 module (it begins lazily and only before DML);
    # _sqlite_on_begin emits our own BEGIN. This is SQLAlchemy's documented pysqlite recipe.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # busy_timeout first: switching to WAL may itself have to wait for another connection.
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        _wal(cursor)
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def _wal(cursor: sqlite3.Cursor) -> None:
    """Switch to WAL, waiting for the lock as busy_timeout would: on a new database that another
    process is switching or migrating, SQLite answers "database is locked" at once instead of
    calling the busy handler (it would deadlock; 1 run in 12 of the 4-process test)."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _sqlite_on_begin(conn: Connection) -> None:
    # A deferred transaction that later writes fails at once with "database is locked" when another
    # connection wrote in between (busy_timeout cannot help: its snapshot is stale). IMMEDIATE takes
    # the write lock up front, waiting up to busy_timeout for it.
    mode = "DEFERRED" if conn.get_execution_options().get(READ_ONLY) else "IMMEDIATE"
    conn.exec_driver_sql(f"BEGIN {mode}")


def _postgresql_engine(url: URL) -> Engine:
    connect_args = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = POSTGRES_CONNECT_TIMEOUT_S
    try:
        # pre-ping: a long-running daemon outlives server restarts and idle-connection reaping.
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    except ImportError:
        raise StoreError("PostgreSQL needs psycopg: pip install 'digest[postgres]'") from None


def _known(script: ScriptDirectory, revision: str) -> bool:
    from alembic.util.exc import CommandError

    try:
        return script.get_revision(revision) is not None
    except CommandError:
        return False
