"""The writer of a run's records: each game's lines appended to the results folder as they are played.

A table writes each round as soon as it is played, the fast path a whole game, and the pool the lines
its workers made; all of them through here, so the records have one writer, and a write that fails
is the arena's error (:class:`~arena.errors.RecordsError`), which ends the run.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.errors import RecordsError
from arena.event.plan.schedule import Assignment
from arena.event.setup.config import TournamentConfig
from arena.records.format import GameRecord, game_lines
from arena.records.store import ResultsStore

__all__ = ["Recorder"]


class Recorder:
    """Appends a run's record lines to its results store."""

    def __init__(self, store: ResultsStore, config: TournamentConfig) -> None:
        self.store = store
        self._tournament, self._seed = config.name, config.seed
        self._deals = f"file:{config.deal_file.name}" if config.deal_file else "seed"
        """Where the deals come from, as the records say."""

    def rounds(self, game: Assignment, record: GameRecord, first: int = 0) -> None:
        """Writes the rounds of a game from ``first`` on (and its end, once it has one)."""
        self.lines(game_lines(self._tournament, self._seed, self._deals, game, record, first))

    def lines(self, lines: Sequence[str]) -> None:
        """Writes lines made elsewhere (by a worker of the pool)."""
        try:
            self.store.append(lines)
        except OSError as err:
            path = self.store.records_path
            raise RecordsError(f"cannot write the records to {path}: {err.strerror or err}") from None
