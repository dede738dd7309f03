"""A remote entrant's bot token: its own secret for the ladder's gRPC port, apart from the token that logs in to the
site, submits and asks for tests (which no longer admits a bot).

An entrant's bot token is made when a remote entrant is added, or on their page; a ladder brought to this revision
has none yet, so each remote entrant makes theirs on their page before their bot connects again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None


def upgrade() -> None:
    """Adds ``bot_token_sha256`` to ``entrants``, with a unique index (added in place: ``entrants`` is not copied, which
    SQLite would refuse while versions name its rows)."""
    op.add_column("entrants", sa.Column("bot_token_sha256", sa.String(64), nullable=True))
    op.create_index("ix_entrants_bot_token_sha256", "entrants", ["bot_token_sha256"], unique=True)


def downgrade() -> None:
    """Drops what :func:`upgrade` added, in place too (SQLite drops a column itself from 3.35)."""
    op.drop_index("ix_entrants_bot_token_sha256", "entrants")
    op.execute("ALTER TABLE entrants DROP COLUMN bot_token_sha256")
