"""The Python bot kit, under its public name: ``from arena.botkit import Bot, run``.

The kit itself lives in :mod:`arena.kit` (the Bot API in :mod:`arena.kit.bot`, a session with the arena
in :mod:`arena.kit.session`, the runner and its command line in :mod:`arena.kit.runner`); this module
names it for bot authors, with the card types a bot's view holds (``Card``, ``Hand``, ``Rank``,
``Suit``), so a bot imports everything from here.
"""

from arena.core.cards import Card, Hand, Rank, Suit
from arena.kit.bot import Bot, Refused
from arena.kit.runner import parse_args, run
from arena.kit.session import play_session

__all__ = ["Bot", "Card", "Hand", "Rank", "Refused", "Suit", "parse_args", "play_session", "run"]
