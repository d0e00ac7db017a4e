"""Runs can end `interrupted`: a signal (Ctrl+C, SIGTERM) stopped them part-way, or their process
died and a daemon recovered them. They used to end `failed`, which told the operator of a
failure that did not happen; rows recovered that way keep the error "interrupted" and are
marked so too.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04

SQLite rebuilds `runs` (batch mode) to change its check constraint; its rows are copied.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATUSES = "status IN ('running', 'ok', 'partial', 'failed')"
NEW_STATUSES = "status IN ('running', 'ok', 'partial', 'failed', 'interrupted')"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint("ck_runs_status", type_="check")
        batch.create_check_constraint("ck_runs_status", NEW_STATUSES)


def downgrade() -> None:
    # The older schema has no `interrupted`: such runs count as failed, as they did then.
    op.execute("UPDATE runs SET status = 'failed' WHERE status = 'interrupted'")
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint("ck_runs_status", type_="check")
        batch.create_check_constraint("ck_runs_status", OLD_STATUSES)
