"""The pages a server answers."""
