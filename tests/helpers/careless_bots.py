"""Bots that break one rule each, for ``check-bot``'s tests (``tests/helpers/careless_bots.py:Class``).

- ``OverCaller``: always calls 13, out of range wherever the rules cap calls (the bhoos profile: 8).
- ``FirstCard``: calls like the random bot and plays the first card of its hand, legal or not.
- ``Dawdler``: the random bot that sleeps ``delay`` seconds (default 0.3) before every card.

Each is also a command bot: ``python tests/helpers/careless_bots.py CLASS --arena ADDRESS``.
"""

from __future__ import annotations

import time

from arena.botkit import run
from arena.core.cards import Card
from arena.core.views import View
from sample_bots.random_bot import RandomBot


class OverCaller(RandomBot):
    """Calls 13 every time."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]

    def call(self, view: View) -> int:
        return 13


class FirstCard(RandomBot):
    """Plays the first card it holds."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]

    def play(self, view: View) -> Card:
        return sorted(view.hand)[0]


class Dawdler(RandomBot):
    """Sleeps before every card."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]

    def __init__(self, seed: int = 0, delay: float = 0.3) -> None:
        super().__init__(seed)
        self.delay = delay

    def play(self, view: View) -> Card:
        time.sleep(self.delay)
        return super().play(view)


if __name__ == "__main__":
    import sys

    run({"OverCaller": OverCaller, "FirstCard": FirstCard, "Dawdler": Dawdler}[sys.argv.pop(1)])
