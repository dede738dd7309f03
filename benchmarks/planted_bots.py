"""Bots that cheat, planted to see the standings' fair-play reports catch them (benchmarks/memory_test.py and the
tests).

- :class:`RememberingBot` plays like the heuristic sample bot, but keeps every deal it has seen, in a dict that
  outlives the game (a class attribute: every instance in the process shares it): at the end of each round it
  stores, for each seat's 13 cards, the tricks that seat took, and when it is dealt a hand it has seen before it
  calls what the earlier holder of that hand took. It is what an entrant whose bot is kept across rotations would
  write; an in-process bot is a fresh instance every game, and the class attribute is its memory.
- :class:`FeedingBot` plays like the heuristic sample bot, but soft-plays for its friend (the bot named by its
  ``friend`` option): when the friend is winning the trick it plays a card that lets the friend keep it, and when
  the friend is still to play to the trick it plays its lowest card, leaving the trick to the friend; and when
  another seat is winning a trick the friend has played to, it takes that trick if it can.

Neither offers the fast path, which sends no events: they play at tables, which tell them every card.
"""

from __future__ import annotations

from typing import Any, ClassVar

from arena.core.cards import CARDS, Card
from arena.core.rules import trick_winner
from arena.core.views import View
from arena.players.base import CardPlayed, GameStart, RoundEnd, RoundStart, TableEvent
from sample_bots.heuristic_bot import HeuristicBot

__all__ = ["FeedingBot", "RememberingBot"]


class RememberingBot(HeuristicBot):
    """The heuristic bot with a memory of deals: it calls what the earlier holder of its hand took."""

    fast_call = None
    fast_card = None
    memory: ClassVar[dict[frozenset[int], int]] = {}
    """Every hand seen (its cards' indices) -> the tricks its holder took: shared by every instance in the process."""

    def __init__(self, seed: int = 0, **options: object) -> None:
        super().__init__(seed, **options)
        self._played: list[list[int]] = [[], [], [], []]

    @classmethod
    def forget(cls) -> None:
        """Empties the memory (between two runs of a benchmark in one process)."""
        cls.memory.clear()

    def on_event(self, event: Any) -> None:
        body = event.body if isinstance(event, TableEvent) else None
        if isinstance(body, RoundStart):
            self._played = [[], [], [], []]
        elif isinstance(body, CardPlayed):
            self._played[body.seat].append(body.card.index)
        elif isinstance(body, RoundEnd) and all(len(cards) == 13 for cards in self._played):
            for seat, cards in enumerate(self._played):
                self.memory[frozenset(cards)] = body.result.tricks_won[seat]

    def call(self, view: View) -> int:
        seen = self.memory.get(frozenset(card.index for card in view.hand))
        if seen is None:
            return super().call(view)
        calls = view.legal_calls
        return min(max(seen, calls.start), calls.stop - 1)


class FeedingBot(HeuristicBot):
    """The heuristic bot that throws tricks to its friend: it never overtakes it, ducks before it, and takes from
    the others the tricks the friend lost."""

    fast_call = None
    fast_card = None

    def __init__(self, seed: int = 0, friend: str = "", **options: object) -> None:
        super().__init__(seed, **options)
        self.friend = friend
        self._names: tuple[str, ...] = ()

    def on_event(self, event: Any) -> None:
        body = event.body if isinstance(event, TableEvent) else None
        if isinstance(body, GameStart):
            self._names = body.names

    def play(self, view: View) -> Card:
        trick = [card.index for card in view.trick]
        seats = [(view.leader + i) % 4 for i in range(len(trick))]
        friend = [seat for seat, name in enumerate(self._names) if name == self.friend]
        if not friend or not trick:
            return super().play(view)
        legal = sorted((c.index for c in view.legal), key=lambda index: (index % 13, index))
        if friend[0] not in seats:
            return CARDS[legal[0]]  # the friend plays after it: leave the trick to the friend
        trump = view.trump.value
        if seats[trick_winner(trick, trump)] == friend[0]:
            keeps = [card for card in legal
                     if (won := trick_winner([*trick, card], trump)) < len(trick) and seats[won] == friend[0]]
            if keeps:
                return CARDS[keeps[0]]  # never overtake the friend
            return super().play(view)
        # Another seat is winning a trick the friend has played to: take it from that seat if it can.
        beats = [card for card in legal if trick_winner([*trick, card], trump) == len(trick)]
        return CARDS[beats[0]] if beats else super().play(view)
