"""How the arena reaches a bot that is not a Python object in its own process: gRPC (remote and
command bots), JSON lines over a pipe (stdio bots) and HTTP (Bhoos contest bots).

Each transport is a player (:class:`arena.players.base.Player`) to the table runner; what they share is
the bounded reader of a bot's JSON (:mod:`arena.transports.answers`).
"""
