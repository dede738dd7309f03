"""Uploads refused once read: kept, so that they count toward an entrant's uploads of the hour as versions do."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None


def upgrade() -> None:
    """Adds the table of refusals."""
    op.create_table(
        "refusals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("entrant_id", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_refusals"),
        sa.ForeignKeyConstraint(["entrant_id"], ["entrants.id"], name="fk_refusals_entrant_id"),
    )
    op.create_index("ix_refusals_entrant_id", "refusals", ["entrant_id"])


def downgrade() -> None:
    """Drops the table of refusals."""
    op.drop_table("refusals")
