"""In-process bots for the tournament tests, loaded by path (``tests/data/arena_bots.py:Class``).

- ``NoFastRandom``: the sample random bot without its fast path, so every game goes through the
  normal in-process table; it makes exactly the same choices.
- ``SlowRandom``: ``NoFastRandom`` that sleeps ``delay`` seconds (default 1 ms) per decision, so a
  tournament runs long enough to be killed in the middle.
- ``Crasher``: calls like the random bot and raises on every play (a crash fault each time).
- ``Stubborn``: plays a card it holds but may not play whenever it can (illegal_card faults).
- ``Quitter``: the random bot whose process exits (status 3) at its 30th card.

Each is also a command bot: ``python tests/data/arena_bots.py CLASS --arena ADDRESS --token T``.
"""

from __future__ import annotations

import os
import sys
import time

from arena.core.cards import Card
from arena.core.views import View
from sample_bots.random_bot import RandomBot


class NoFastRandom(RandomBot):
    """The random bot on the normal table only."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]


class SlowRandom(NoFastRandom):
    """The random bot, slowed down, on the normal table only."""

    def __init__(self, seed: int = 0, delay: float = 0.001) -> None:
        super().__init__(seed)
        self.delay = delay

    def call(self, view: View) -> int:
        time.sleep(self.delay)
        return super().call(view)

    def play(self, view: View) -> Card:
        time.sleep(self.delay)
        return super().play(view)


class Crasher(NoFastRandom):
    """Raises on every play."""

    def play(self, view: View) -> Card:
        raise RuntimeError("crasher always crashes")


class Stubborn(RandomBot):
    """Plays a card it holds but may not play whenever it has one (refused, asked again, refused
    again: a deterministic illegal_card fault), else the random bot's card."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]

    def play(self, view: View) -> Card:
        illegal = [card for card in view.hand.cards() if card not in view.legal]
        return illegal[0] if illegal else super().play(view)


class Quitter(RandomBot):
    """The random bot, until its process exits in the middle of its first game."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.cards = 0

    def play(self, view: View) -> Card:
        self.cards += 1
        if self.cards == 30:
            os._exit(3)
        return super().play(view)


if __name__ == "__main__":
    from arena.botkit import run

    raise SystemExit(run(globals()[sys.argv.pop(1)]))
