"""A remote version's attendance: the blocks it missed in a row, and when it was set aside for missing them, in place
of the time it was set aside until.

A version set aside for a time by 0002 (``away_until``) is back in the field after this migration: the ladder now
sets a version aside until its bot connects again, and counts its misses from the first block it plays.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None


def upgrade() -> None:
    """Adds ``missed`` and ``set_aside`` to ``versions`` and drops ``away_until``."""
    with op.batch_alter_table("versions") as versions:
        versions.add_column(sa.Column("missed", sa.Integer(), nullable=False, server_default="0"))
        versions.add_column(sa.Column("set_aside", sa.DateTime(timezone=True), nullable=True))
        versions.drop_column("away_until")


def downgrade() -> None:
    """Puts ``away_until`` back (empty: no version set aside) and drops what :func:`upgrade` added."""
    with op.batch_alter_table("versions") as versions:
        versions.add_column(sa.Column("away_until", sa.DateTime(timezone=True), nullable=True))
        versions.drop_column("set_aside")
        versions.drop_column("missed")
