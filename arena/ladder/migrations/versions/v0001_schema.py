"""The first schema: organisers, entrants, versions, checks, blocks, ratings and tests.

A revision is a fixed step: it names its columns itself rather than reading the models, so it makes
the same tables whatever the models become later.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None


def _when(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _words(name: str, *words: str) -> sa.Enum:
    return sa.Enum(*words, name=name, native_enum=False, create_constraint=False, length=16)


def upgrade() -> None:
    """Creates every table."""
    op.create_table(
        "organisers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        _when("created"),
        _when("revoked", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_organisers"),
        sa.UniqueConstraint("name", name="uq_organisers_name"),
        sa.UniqueConstraint("token_sha256", name="uq_organisers_token_sha256"),
    )
    op.create_table(
        "entrants",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("display", sa.String(80), nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=True),
        _when("created"),
        _when("revoked", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_entrants"),
        sa.UniqueConstraint("name", name="uq_entrants_name"),
        sa.UniqueConstraint("token_sha256", name="uq_entrants_token_sha256"),
    )
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("entrant_id", sa.Integer(), nullable=False),
        sa.Column("content_sha256", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("state", _words("versionstate", "submitted", "checking", "failed", "active", "retired"),
                  nullable=False),
        _when("created"),
        sa.PrimaryKeyConstraint("id", name="pk_versions"),
        sa.ForeignKeyConstraint(["entrant_id"], ["entrants.id"], name="fk_versions_entrant_id"),
    )
    op.create_index("ix_versions_entrant_id", "versions", ["entrant_id"])
    op.create_table(
        "checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("check_name", sa.String(40), nullable=False),
        sa.Column("profile", sa.String(16), nullable=True),
        sa.Column("game", sa.Integer(), nullable=True),
        sa.Column("trick", sa.Integer(), nullable=True),
        sa.Column("hand", sa.String(64), nullable=True),
        sa.Column("stderr_tail", sa.Text(), nullable=False),
        _when("created"),
        sa.PrimaryKeyConstraint("id", name="pk_checks"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_checks_version_id"),
    )
    op.create_index("ix_checks_version_id", "checks", ["version_id"])
    op.create_table(
        "blocks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("deal_set", sa.Integer(), nullable=False),
        *(sa.Column(f"seat{seat}", sa.Integer(), nullable=False) for seat in range(4)),
        sa.Column("state", _words("blockstate", "queued", "playing", "done"), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        _when("created"),
        _when("started", nullable=True),
        _when("finished", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_blocks"),
        *(sa.ForeignKeyConstraint([f"seat{seat}"], ["versions.id"], name=f"fk_blocks_seat{seat}")
          for seat in range(4)),
    )
    op.create_index("ix_blocks_state", "blocks", ["state"])
    op.create_table(
        "ratings",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        _when("updated"),
        sa.PrimaryKeyConstraint("version_id", name="pk_ratings"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_ratings_version_id"),
    )
    op.create_table(
        "tests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("a", sa.Integer(), nullable=False),
        sa.Column("b", sa.Integer(), nullable=False),
        sa.Column("state", _words("teststate", "running", "decided", "stopped"), nullable=False),
        sa.Column("llr", sa.Float(), nullable=False),
        sa.Column("decision", _words("decision", "H0", "H1"), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_tests"),
        sa.ForeignKeyConstraint(["a"], ["versions.id"], name="fk_tests_a"),
        sa.ForeignKeyConstraint(["b"], ["versions.id"], name="fk_tests_b"),
    )


def downgrade() -> None:
    """Drops every table."""
    for table in ("tests", "ratings", "blocks", "checks", "versions", "entrants", "organisers"):
        op.drop_table(table)
