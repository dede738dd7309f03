"""What the test modules share (bots, runs, games, page readers), so that no test module imports another."""
