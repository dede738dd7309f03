"""The Python bot kit, under its public name: ``from arena.botkit import Bot, run``.

The kit itself lives in :mod:`arena.kit` (the Bot API in :mod:`arena.kit.bot`, a session with the arena
in :mod:`arena.kit.session`, the runner and its command line in :mod:`arena.kit.runner`); this module
names it for bot authors, with what a bot's view holds: the card types (``Card``, ``Hand``, ``Rank``,
``Suit``), the view's own type (``View``, for annotations) and the rules it carries (``Rules``, with its
``LowerTrump`` and ``Scoring``), so a bot imports everything from here. It is one of the public faces
(docs/architecture.md, "What is public"): :mod:`arena.kit` itself is internal.
"""

from arena.core.cards import Card, Hand, Rank, Suit
from arena.core.rules import LowerTrump, Rules, Scoring
from arena.core.views import View
from arena.kit.bot import Bot, Refused
from arena.kit.runner import parse_args, run
from arena.kit.session import play_session

__all__ = [
    "Bot",
    "Card",
    "Hand",
    "LowerTrump",
    "Rank",
    "Refused",
    "Rules",
    "Scoring",
    "Suit",
    "View",
    "parse_args",
    "play_session",
    "run",
]
