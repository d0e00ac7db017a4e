"""Secrets the service makes for itself and keeps in the database, so that every process
serving one deployment (the daemon, `digest serve`, on any machine) shares them."""

from __future__ import annotations

import secrets as random

from sqlalchemy import select

from digest.store.base import StoreBase, insert, now
from digest.store.schema import secrets


class SecretsMixin(StoreBase):
    """Named random keys, made once."""

    def secret(self, name: str) -> str:
        """The secret called `name`, made (32 random bytes, URL-safe text) the first time it is
        asked for; two processes asking at once get the same one."""
        query = select(secrets.c.value).where(secrets.c.name == name)
        with self._read() as conn:
            value = conn.execute(query).scalar()
        if value is not None:
            return str(value)
        with self._write() as conn:
            stmt = insert(conn, secrets).values(
                name=name, value=random.token_urlsafe(32), created_at=now()
            )
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["name"]))
            return str(conn.execute(query).scalar_one())
