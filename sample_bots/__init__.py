"""Sample bots: small, readable players to play against and to learn from."""
