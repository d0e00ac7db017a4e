"""Article vectors: one sentence embedding per article and embedding space.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

`[stories.embeddings]` gives every article a vector once; clustering reads it back instead of
asking the endpoint again. Keyed by (article, space), so vectors of another model (or prefix)
are neither reused nor lost when the configuration changes; they go with their article.
A new table; nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "article_vectors",
        sa.Column("article_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["article_id"],
            ["articles.id"],
            name="fk_article_vectors_article_id_articles",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("article_id", "model", name="pk_article_vectors"),
    )


def downgrade() -> None:
    op.drop_table("article_vectors")
