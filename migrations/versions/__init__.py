"""Alembic revisions. This file only makes the folder a package, so it is installed with digest."""
