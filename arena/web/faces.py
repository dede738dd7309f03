"""What the seat's page (:mod:`arena.web.seat`) and the spectators' (:mod:`arena.web.watch`) draw alike: their
templates (``arena/web/templates``, in the :attr:`~arena.rating.pages.Layout.LINES` layout), their style
(``seat.css``), the order of the suits in a hand, and a card's face."""

from __future__ import annotations

import functools

from arena.core.cards import Card, Suit
from arena.rating.pages import Layout, Templates

__all__ = ["STYLE", "SUITS", "TEMPLATES", "face"]

TEMPLATES = Templates("arena.web", layout=Layout.LINES)
STYLE = TEMPLATES.style("seat.css")
SUITS = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
"""The suits in the order a hand is shown."""


@functools.cache
def face(card: Card) -> dict[str, str]:
    """A card as the pages draw it: its text, rank, suit symbol and suit's noun, and its words (for the screen
    reader)."""
    rank = "10" if card.rank.letter == "T" else card.rank.letter
    return {"text": str(card), "rank": rank, "symbol": card.suit.symbol, "suit": card.suit.noun.lower(),
            "words": f"{rank} of {card.suit.noun.lower()}"}
