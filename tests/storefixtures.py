"""Store fixtures shared by the storage tests: every database test runs on SQLite and, when
127.0.0.1:5432 answers, on PostgreSQL (a fresh schema per test).

A test module binds the fixtures it uses under their own names
(`db_url, store = storefixtures.db_url, storefixtures.store`): pytest finds them there, and
unlike a `from ... import`, an assignment does not trip the linter's redefinition check when a
test takes the fixture as an argument.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from digest.models import Extract, Headline, Item
from digest.store import Store, open_store
from digest.store.engine import migrations_dir
from digest.store.schema import metadata
from digest.store.search import include_name

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_URL = f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/test"
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
DAY_START = NOW.replace(hour=0)


def postgres_reachable() -> bool:
    try:
        with socket.create_connection((PG_HOST, PG_PORT), timeout=1):
            return True
    except OSError:
        return False


def schema_diff(conn: Connection) -> list[Any]:
    """What the migrated database has that the schema does not, or lacks (Alembic autogenerate),
    leaving out the search indexes that migration 0004 makes by SQL."""
    context = MigrationContext.configure(conn, opts={"include_name": include_name})
    return compare_metadata(context, metadata)


def head_revision() -> str | None:
    """The newest migration: where every upgrade must end."""
    return ScriptDirectory(str(migrations_dir())).get_current_head()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database: a new SQLite file, or a new PostgreSQL schema per test."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'digest.db'}"
        return
    yield from _postgres_schema()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A URL to a new PostgreSQL schema, for what only PostgreSQL has."""
    yield from _postgres_schema()


def _postgres_schema() -> Iterator[str]:
    if not postgres_reachable():
        pytest.skip(f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT}")
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    # psycopg takes libpq options from the URL: every connection works inside the test's schema.
    yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(scope="session")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The newest schema, made by the real migrations once per session: a SQLite file, and the
    DDL of a PostgreSQL schema (pg_dump's) when PostgreSQL answers. A `store` starts from a copy
    of it: migrating every test's database took most of the storage tests' time."""
    made: dict[str, Any] = {}
    path = tmp_path_factory.mktemp("migrated") / "digest.db"
    with open_store(f"sqlite:///{path}"):
        pass
    made["sqlite"] = path
    schema = f"migrated_{uuid.uuid4().hex[:16]}"
    if postgres_reachable() and shutil.which("pg_dump"):
        import psycopg

        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
            admin.execute(f'CREATE SCHEMA "{schema}"')
        with open_store(f"{PG_URL}?options=-csearch_path%3D{schema}"):
            pass
        dump = subprocess.run(
            [
                *("pg_dump", "--schema-only", "--no-owner", "--no-privileges"),
                *("-h", PG_HOST, "-p", str(PG_PORT), "-U", "postgres", "-n", schema, "test"),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        made["postgresql"] = (schema, _schema_ddl(dump, schema))
    yield made
    if "postgresql" in made:
        import psycopg

        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _schema_ddl(dump: str, schema: str) -> str:
    """pg_dump's script without psql's meta-commands and the CREATE SCHEMA (the test's schema
    exists already); the schema's name is put back in by `store`."""
    lines = [
        line
        for line in dump.splitlines()
        if not line.startswith("\\") and not line.startswith(f"CREATE SCHEMA {schema}")
    ]
    return "\n".join(lines)


@pytest.fixture
def store(db_url: str, migrated: dict[str, Any]) -> Iterator[Store]:
    """A store at the newest schema: a copy of the migrated one (the same tables, indexes,
    functions and revision as `open_store` makes on an empty database)."""
    if db_url.startswith("sqlite:///"):
        shutil.copyfile(migrated["sqlite"], db_url.removeprefix("sqlite:///"))
    elif "postgresql" in migrated:
        import psycopg

        template, ddl = migrated["postgresql"]
        schema = db_url.rpartition("search_path%3D")[2]
        with psycopg.connect(host=PG_HOST, port=PG_PORT, user="postgres", dbname="test") as admin:
            admin.execute(ddl.replace(template, schema))  # type: ignore[arg-type]
            admin.execute(
                f'INSERT INTO "{schema}".alembic_version SELECT * FROM "{template}".alembic_version'
            )
    with open_store(db_url) as opened:
        yield opened


def item(
    url: str,
    *,
    title: str = "A headline",
    category: str | None = "technology",
    published: datetime | None = None,
    snippet: str = "",
    image: str | None = None,
    lede: str = "",
    status: str | None = None,
    http_status: int | None = None,
    error: str | None = None,
    source: str = "Example News",
    origin: str = "ddg:news",
) -> Item:
    headline = Headline(
        title=title,
        url=url,
        source=source,
        published=published,
        snippet=snippet,
        image=image,
        category=category,
        origin=origin,
    )
    extract = Extract(
        url=url,
        full_content=lede,
        status=status or ("ok" if lede else "skipped"),  # type: ignore[arg-type]
        http_status=http_status,
        error=error,
    )
    return Item(headline=headline, extract=extract)
