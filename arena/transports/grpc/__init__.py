"""The gRPC transport: the arena server and its lobby, remote seats, the protobuf conversions and
request encoder, and tokens.

With the bot kit (:mod:`arena.kit`), the only code that imports grpc or the generated protocol.
"""
