"""The network edge: protobuf conversion, the gRPC arena server, remote seats and the Python bot kit.

The only layer that imports grpc or the generated protocol code.
"""
