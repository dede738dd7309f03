"""The gRPC transport: the arena server (server.py) and its lobby (lobby.py), one bot's stream (session.py)
and its stray messages (strays.py), remote seats (remote.py), the protobuf conversions (wire.py), the
request encoder (encoder.py), and tokens.

With the bot kit (:mod:`arena.kit`), the only code that imports grpc or the generated protocol.
"""
