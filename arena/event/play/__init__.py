"""Where and how each game is played: which games start next, how each bot takes its seat, the table a game
is hosted at, the run's table slots, the workers and Ray tasks, the services bots need, and the one writer
of the records."""
