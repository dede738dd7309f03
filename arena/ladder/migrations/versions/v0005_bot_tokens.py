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
    """Adds ``bot_token_sha256`` to ``entrants``."""
    with op.batch_alter_table("entrants") as entrants:
        entrants.add_column(sa.Column("bot_token_sha256", sa.String(64), nullable=True))
        entrants.create_unique_constraint("uq_entrants_bot_token_sha256", ["bot_token_sha256"])


def downgrade() -> None:
    """Drops what :func:`upgrade` added."""
    with op.batch_alter_table("entrants") as entrants:
        entrants.drop_constraint("uq_entrants_bot_token_sha256", type_="unique")
        entrants.drop_column("bot_token_sha256")
