"""The random bot: a uniformly random legal call and card, from its own seeded generator.

In-process use: ``RandomBot(seed).call(view)`` / ``.play(view)`` on a :class:`arena.SeatView`.
"""

from __future__ import annotations

import random

from arena.cards import Card
from arena.game import SeatView

__all__ = ["RandomBot"]


class RandomBot:
    """Calls and plays uniformly at random among the legal choices."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.random = random.Random(seed)

    def call(self, view: SeatView) -> int:
        """A random legal call."""
        return self.random.choice(view.legal_calls)

    def play(self, view: SeatView) -> Card:
        """A random legal card."""
        return self.random.choice(view.legal.cards())
