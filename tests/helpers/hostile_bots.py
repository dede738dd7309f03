"""In-process bots that put markup where the reports show it (``tests/helpers/hostile_bots.py:Class``).

- ``Scripted``: the random bot whose version is a ``<script>`` element, and which raises an error
  whose message is markup on its first card of every round (a crash fault each round, the detail
  holding the markup).
- ``Obstinate``: the random bot that answers the card requests of a round's first trick with a card
  it may not play, when it holds one (``illegal_card`` faults, then the arena's fallback card).
"""

from __future__ import annotations

from arena.core.cards import Card
from arena.core.views import View
from sample_bots.random_bot import RandomBot

SCRIPT_VERSION = '<script>alert("version")</script>'
SCRIPT_DETAIL = '<script>alert("detail")</script> & <img src=x onerror=alert(1)>'


class Scripted(RandomBot):
    """Markup in its version and in the error it raises."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]
    version = SCRIPT_VERSION

    def play(self, view: View) -> Card:
        if len(view.hand) == 13:
            raise RuntimeError(SCRIPT_DETAIL)
        return super().play(view)


class Obstinate(RandomBot):
    """Plays a card it may not play in each round's first trick, when it holds one."""

    fast_call = None  # type: ignore[assignment]
    fast_card = None  # type: ignore[assignment]

    def play(self, view: View) -> Card:
        illegal = [card for card in view.hand.cards() if card not in view.legal]
        return illegal[0] if illegal and len(view.hand) == 13 else super().play(view)
