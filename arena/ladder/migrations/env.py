"""Alembic's entry point: runs the migrations on the connection that :mod:`arena.ladder.schema` hands it.

Alembic executes this file itself; there is no ``alembic.ini`` and no logging set-up here: the caller
owns both.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from arena.ladder.db import Base


def run() -> None:
    """Runs the migrations Alembic was asked for, in one transaction on the caller's connection."""
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError("the ladder's migrations run only through arena.ladder.schema, which opens the database")
    # render_as_batch: SQLite alters a table by copying it, and later revisions need that to change one.
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


# Alembic runs this file with its context in place; imported (a walk over the package) it does nothing.
if getattr(context, "config", None) is not None:
    run()
