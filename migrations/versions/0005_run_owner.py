"""Runs record the process that owns them.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29

A restarting daemon fails the runs a dead process left `running`; with the owner recorded
(digest.store.owners) it leaves alone a run that a live process, such as a CLI command still
working, is doing. Existing rows have no owner and are treated as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("owner", sa.String(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "owner")
