"""Alembic migrations, installed as `digest.migrations` (see pyproject.toml) and run by
`digest.store.engine.upgrade()`; no alembic.ini is involved."""
