"""The ladder database's schema version, and bringing a database to the newest (Alembic, run from code).

There is no ``alembic.ini`` to keep: :func:`alembic_config` builds the configuration here, its scripts
in :mod:`arena.ladder.migrations`, shipped with the package.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

__all__ = ["MIGRATIONS", "alembic_config", "head", "schema_version", "upgrade"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
"""The migration scripts: ``env.py`` and ``versions/``."""


def alembic_config() -> Config:
    """Alembic's configuration for the ladder's migrations, with no file behind it."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head() -> str:
    """The newest revision: the schema this version of the package writes and reads."""
    newest = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert newest is not None, "the ladder's migrations have one head"
    return newest


def schema_version(engine: Engine) -> str | None:
    """The revision the database at ``engine`` is at; ``None`` when no migration has run on it."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> str:
    """Brings the database at ``engine`` to :func:`head`, in one transaction (nothing to do at head); returns it."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    return head()
