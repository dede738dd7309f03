"""The Bhoos contest transport: a bot that answers HTTP on a port, reached directly or through the
sandbox's unix-socket bridge."""
