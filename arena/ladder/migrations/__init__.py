"""The ladder database's migrations (Alembic): ``env.py`` runs them, ``versions/`` holds them in order."""
