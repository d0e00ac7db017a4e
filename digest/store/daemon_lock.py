"""One daemon per database: the lock `digest run` holds while it runs, and whether one holds
it, which `digest status` reads without importing the daemon. A lock file beside SQLite, an
advisory lock on PostgreSQL (which also stops a daemon on another machine)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from digest.config import Config
from digest.errors import DaemonRunningError

if TYPE_CHECKING:
    from digest.store import Store


def lock_path(config: Config) -> Path:
    """The lock file of a SQLite database, beside it (else in the work folder by URL hash).
    PostgreSQL uses an advisory lock instead (`single_daemon`)."""
    url = config.database_url()
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///") + ".daemon.lock")
    digest_ = hashlib.sha256(url.encode()).hexdigest()[:16]
    return config.resolve(".digest") / f"daemon-{digest_}.lock"


def daemon_holds(config: Config, store: Store) -> bool:
    """Whether a daemon holds this database's lock (`single_daemon`): its advisory lock on
    PostgreSQL (held by a session on any machine), its lock file on SQLite."""
    if store.engine.url.get_backend_name() == "postgresql":
        return store.daemon_lock_held()
    path = lock_path(config)
    if not path.exists():
        return False
    from filelock import FileLock, Timeout

    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


@contextlib.contextmanager
def single_daemon(config: Config) -> Iterator[Callable[[], bool]]:
    """Hold the database's daemon lock while the block runs, or raise DaemonRunningError.
    Yields a check that the lock is still held (see `watch_lock`).

    PostgreSQL: an advisory lock of the database and schema, which also stops a daemon on another
    machine sharing the database. SQLite: a lock file (see `lock_path`).
    """
    from filelock import FileLock, Timeout

    from digest.store.engine import backend

    url = config.database_url()
    if backend(url) == "postgresql":
        from digest.store.health import postgres_daemon_lock

        with postgres_daemon_lock(url) as (taken, where, still_held):
            if not taken:
                raise DaemonRunningError(
                    "another digest daemon is running on this database "
                    f"(PostgreSQL advisory lock on {where})"
                )
            yield still_held
        return

    path = lock_path(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise DaemonRunningError(
            f"another digest daemon is running on this database (lock {path})"
        ) from None
    try:
        yield lambda: True  # a lock file cannot be taken away
    finally:
        lock.release()
