"""The standing ladder: its settings (``ladder.toml``), its database and the schema's migrations.

The package itself holds only the names of the ladder's files, so that the command line names them in its
help without importing the ladder (:mod:`arena.ladder.settings` reads and writes them).
"""

__all__ = ["DATABASE_FILE", "SETTINGS_FILE"]

SETTINGS_FILE = "ladder.toml"
"""The settings' file name in a ladder's folder."""
DATABASE_FILE = "ladder.db"
"""The SQLite database in a ladder's folder, when ``[database] url`` is not given."""
