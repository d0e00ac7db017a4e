"""Alembic environment, configured by `digest.store.engine` instead of an alembic.ini.

The caller passes an open connection in `config.attributes["connection"]`, already inside the
transaction that should hold the whole upgrade (BEGIN IMMEDIATE on SQLite). To write a new
revision against a development database:

    from alembic import command
    from digest.store.engine import alembic_config, make_engine

    with make_engine("sqlite:///dev.db").begin() as conn:
        command.revision(alembic_config(conn), "what changed", autogenerate=True)
"""

from alembic import context

from digest.store.schema import metadata
from digest.store.search import include_name

connection = context.config.attributes.get("connection")
if connection is None or context.is_offline_mode():
    raise RuntimeError("run migrations through digest.store.engine.upgrade(), not the alembic CLI")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,  # SQLite cannot ALTER most things: batch mode rebuilds the table
    compare_type=True,
    include_name=include_name,  # search indexes are made by SQL, not declared in the schema
)
with context.begin_transaction():
    context.run_migrations()
