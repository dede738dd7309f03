"""The random bot: a uniformly random legal call and card.

Its choices are seeded from its own seed and the position (game, round, seat, cards played), so
it plays the same way at the same point of the same deal, in-process or over the network, which
keeps duplicate tournaments reproducible.

    python sample_bots/random_bot.py --arena 127.0.0.1:50051 --token T [--seed 7]
"""

from __future__ import annotations

import random

from arena.botkit import Bot, run
from arena.cards import Card
from arena.game import View

__all__ = ["RandomBot"]


class RandomBot(Bot):
    """Calls and plays uniformly at random among the legal choices."""

    name = "random"
    version = "1"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def _random(self, view: View, what: str) -> random.Random:
        played = len(view.tricks) * 4 + len(view.trick)
        return random.Random(f"{self.seed}/{view.game_number}/{view.round_number}/{view.seat}/{played}/{what}")

    def call(self, view: View) -> int:
        """A random legal call."""
        return self._random(view, "call").choice(view.legal_calls)

    def play(self, view: View) -> Card:
        """A random legal card."""
        return self._random(view, "play").choice(view.legal.cards())


if __name__ == "__main__":
    raise SystemExit(run(RandomBot))
