"""The Python bot kit, under its public name: ``from arena.botkit import Bot, run``.

The kit itself lives in :mod:`arena.kit.bot`; this module names it for bot authors, with the card
types a bot's view holds (``Card``, ``Hand``, ``Rank``, ``Suit``), so a bot imports everything from here.
"""

from arena.core.cards import Card, Hand, Rank, Suit
from arena.kit.bot import Bot, Refused, parse_args, play_session, run

__all__ = ["Bot", "Card", "Hand", "Rank", "Refused", "Suit", "parse_args", "play_session", "run"]
