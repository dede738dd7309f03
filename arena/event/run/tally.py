"""What a run keeps of each game recorded: the totals the swiss pairing reads, the counts the live status shows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.core.faults import Fault

__all__ = ["Tally"]


class Tally:
    """Game totals per schedule round and bot, and each bot's games and faults, over the whole tournament
    (the games of earlier runs included)."""

    def __init__(self) -> None:
        self.scores: dict[int, dict[str, list[int]]] = {}
        """Game totals per schedule round and bot."""
        self.games: dict[str, int] = {}
        """Games recorded per bot."""
        self.faults: dict[str, int] = {}
        """Faults recorded per bot."""

    def note(self, seats: Sequence[str], totals: Sequence[int], round_number: int, faults: Iterable[Fault]) -> None:
        """Counts one game recorded: its bots by seat, their totals, its schedule round and its faults."""
        for seat, bot in enumerate(seats):
            self.scores.setdefault(round_number, {}).setdefault(bot, []).append(totals[seat])
            self.games[bot] = self.games.get(bot, 0) + 1
        for fault in faults:
            bot = seats[fault.seat]
            self.faults[bot] = self.faults.get(bot, 0) + 1

    def standings(self, before: int) -> dict[str, float]:
        """Each bot's mean game total over the schedule rounds before ``before``, for the swiss pairing."""
        # Only finished rounds count: after a resume, games of the round in progress are already
        # known, and counting them would seat that round differently from the interrupted run.
        totals: dict[str, list[int]] = {}
        for round_number, scores in self.scores.items():
            if round_number < before:
                for bot, values in scores.items():
                    totals.setdefault(bot, []).extend(values)
        return {bot: sum(values) / len(values) for bot, values in totals.items() if values}
