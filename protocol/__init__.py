"""Generated gRPC code for the callbreak.v1 bot protocol; see callbreak.proto."""
