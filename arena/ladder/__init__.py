"""The standing ladder: its settings (``ladder.toml``), its database and the schema's migrations."""
