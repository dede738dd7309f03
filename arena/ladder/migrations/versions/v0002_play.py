"""What playing needs: versions' labels and lifetimes, blocks' kinds and seeds, block results, the rating and
the tests over time, logins to the site and the organiser's state of the ladder.

Columns added to tables that may hold rows get a server default, so a database made by 0001 upgrades in place.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: tuple[str, ...] | None = None
depends_on: tuple[str, ...] | None = None


def _when(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _words(name: str, *words: str) -> sa.Enum:
    return sa.Enum(*words, name=name, native_enum=False, create_constraint=False, length=16)


def upgrade() -> None:
    """Adds the columns and tables."""
    with op.batch_alter_table("versions") as versions:
        versions.add_column(sa.Column("number", sa.Integer(), nullable=False, server_default="1"))
        versions.add_column(sa.Column("label", sa.String(48), nullable=False, server_default=""))
        versions.add_column(_when("activated", nullable=True))
        versions.add_column(_when("retired", nullable=True))
        versions.add_column(_when("away_until", nullable=True))
        versions.alter_column("state", type_=_words("versionstate", "submitted", "checking", "failed", "active",
                                                    "retired"))
    # Labels are unique once written: rows of 0001 (none played) get theirs from their id.
    op.execute("UPDATE versions SET label = 'v' || id WHERE label = ''")
    with op.batch_alter_table("versions") as versions:
        versions.create_unique_constraint("uq_versions_label", ["label"])
    with op.batch_alter_table("checks") as checks:
        checks.alter_column("game", type_=sa.String(40), existing_nullable=True)
        checks.alter_column("check_name", type_=sa.String(80), existing_nullable=False)
        checks.add_column(sa.Column("round", sa.Integer(), nullable=True))
        checks.add_column(sa.Column("detail", sa.Text(), nullable=False, server_default=""))
    with op.batch_alter_table("tests") as tests:
        tests.add_column(sa.Column("kind", _words("testkind", "sprt", "scrimmage"), nullable=False,
                                   server_default="sprt"))
        tests.add_column(sa.Column("asked_by", sa.String(40), nullable=False, server_default=""))
        tests.add_column(sa.Column("delta0", sa.Float(), nullable=False, server_default="0"))
        tests.add_column(sa.Column("delta1", sa.Float(), nullable=False, server_default="1"))
        tests.add_column(sa.Column("alpha", sa.Float(), nullable=False, server_default="0.05"))
        tests.add_column(sa.Column("beta", sa.Float(), nullable=False, server_default="0.05"))
        tests.add_column(sa.Column("cap", sa.Integer(), nullable=False, server_default="400"))
        tests.add_column(sa.Column("opponents", sa.Text(), nullable=False, server_default=""))
        tests.add_column(sa.Column("blocks_done", sa.Integer(), nullable=False, server_default="0"))
        tests.add_column(sa.Column("created", sa.DateTime(timezone=True), nullable=False,
                                   server_default="1970-01-01 00:00:00"))
        tests.add_column(_when("finished", nullable=True))
    with op.batch_alter_table("blocks") as blocks:
        blocks.add_column(sa.Column("kind", _words("blockkind", "placement", "rated", "test", "scrimmage"),
                                    nullable=False, server_default="rated"))
        blocks.add_column(sa.Column("seed", sa.BigInteger(), nullable=False, server_default="0"))
        blocks.add_column(sa.Column("test_id", sa.Integer(), nullable=True))
        blocks.add_column(sa.Column("note", sa.Text(), nullable=False, server_default=""))
        blocks.alter_column("state", type_=_words("blockstate", "queued", "playing", "done", "void"))
        blocks.create_foreign_key("fk_blocks_test_id", "tests", ["test_id"], ["id"])
        blocks.create_index("ix_blocks_test_id", ["test_id"])
    with op.batch_alter_table("ratings") as ratings:
        ratings.add_column(sa.Column("blocks", sa.Integer(), nullable=False, server_default="0"))
        ratings.add_column(sa.Column("score_sum", sa.Float(), nullable=False, server_default="0"))
        ratings.add_column(sa.Column("score_squares", sa.Float(), nullable=False, server_default="0"))
    op.create_table(
        "block_results",
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("faults", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("block_id", "version_id", name="pk_block_results"),
        sa.ForeignKeyConstraint(["block_id"], ["blocks.id"], name="fk_block_results_block_id"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_block_results_version_id"),
    )
    op.create_index("ix_block_results_version_id", "block_results", ["version_id"])
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        _when("at"),
        sa.PrimaryKeyConstraint("id", name="pk_rating_history"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_rating_history_version_id"),
        sa.ForeignKeyConstraint(["block_id"], ["blocks.id"], name="fk_rating_history_block_id"),
    )
    op.create_index("ix_rating_history_version_id", "rating_history", ["version_id"])
    op.create_table(
        "test_points",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("test_id", sa.Integer(), nullable=False),
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("llr", sa.Float(), nullable=False),
        _when("at"),
        sa.PrimaryKeyConstraint("id", name="pk_test_points"),
        sa.ForeignKeyConstraint(["test_id"], ["tests.id"], name="fk_test_points_test_id"),
        sa.ForeignKeyConstraint(["block_id"], ["blocks.id"], name="fk_test_points_block_id"),
    )
    op.create_index("ix_test_points_test_id", "test_points", ["test_id"])
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cookie_sha256", sa.String(64), nullable=False),
        sa.Column("entrant_id", sa.Integer(), nullable=True),
        sa.Column("organiser_id", sa.Integer(), nullable=True),
        sa.Column("csrf", sa.String(64), nullable=False),
        _when("created"),
        _when("expires"),
        sa.PrimaryKeyConstraint("id", name="pk_web_sessions"),
        sa.UniqueConstraint("cookie_sha256", name="uq_web_sessions_cookie_sha256"),
        sa.ForeignKeyConstraint(["entrant_id"], ["entrants.id"], name="fk_web_sessions_entrant_id"),
        sa.ForeignKeyConstraint(["organiser_id"], ["organisers.id"], name="fk_web_sessions_organiser_id"),
    )
    op.create_table(
        "ladder_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("frozen", sa.Boolean(), nullable=False),
        sa.Column("final_state", sa.String(16), nullable=False),
        sa.Column("final_deal_sets", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_ladder_state"),
    )


def downgrade() -> None:
    """Drops what :func:`upgrade` added."""
    for table in ("ladder_state", "web_sessions", "test_points", "rating_history", "block_results"):
        op.drop_table(table)
    with op.batch_alter_table("ratings") as ratings:
        for column in ("score_squares", "score_sum", "blocks"):
            ratings.drop_column(column)
    with op.batch_alter_table("blocks") as blocks:
        blocks.drop_index("ix_blocks_test_id")
        blocks.drop_constraint("fk_blocks_test_id", type_="foreignkey")
        for column in ("note", "test_id", "seed", "kind"):
            blocks.drop_column(column)
    with op.batch_alter_table("tests") as tests:
        for column in ("finished", "created", "blocks_done", "opponents", "cap", "beta", "alpha", "delta1",
                       "delta0", "asked_by", "kind"):
            tests.drop_column(column)
    with op.batch_alter_table("checks") as checks:
        checks.drop_column("detail")
        checks.drop_column("round")
        checks.alter_column("game", type_=sa.Integer(), existing_nullable=True, postgresql_using="game::integer")
        checks.alter_column("check_name", type_=sa.String(40), existing_nullable=False)
    with op.batch_alter_table("versions") as versions:
        versions.drop_constraint("uq_versions_label", type_="unique")
        for column in ("away_until", "retired", "activated", "label", "number"):
            versions.drop_column(column)
