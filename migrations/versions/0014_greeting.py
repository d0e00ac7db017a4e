"""SCRATCH (issue 40's worked example): a subscriber's greeting.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("subscribers", sa.Column("greeting", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("subscribers") as batch:
        batch.drop_column("greeting")
