"""What bot authors import: the Bot API, a session with the arena over gRPC, the runner and its
command line. Its public face is :mod:`arena.botkit`."""
