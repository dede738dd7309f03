"""In-process tables without a network: the fast path for research runs of millions of deals.

When all four seats are in-process Python bots that offer the fast interface below, a game is
played through :meth:`arena.core.game.Game.playout`, with no views, no events and no asyncio, and
gives the same :class:`~arena.records.format.GameRecord` a normal table would (timings aside). A bot
offers the fast path with two methods:

- ``fast_call(seat, game, round, hand, calls) -> int``: ``hand`` is the mask of the cards dealt
  to the seat and ``calls`` the range of legal calls;
- ``fast_card(seat, legal) -> int``: ``legal`` is the mask of legal cards; return a card index.

A bot whose fast choice is illegal, or that raises anything at all (``SystemExit`` and
``KeyboardInterrupt`` included), makes the game fall back to a normal table (:func:`play_fast`
returns ``None``), where faults are handled and recorded as usual. The fast path runs on the
caller's thread and times nothing: no deadline applies to its bots, which are trusted research code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.core.dealing import DealSource
from arena.core.game import Game, Round
from arena.core.rules import Rules
from arena.records.format import GameRecord

__all__ = ["has_fast_path", "play_fast"]


def has_fast_path(bot: object) -> bool:
    """True when the bot offers ``fast_call`` and ``fast_card``."""
    return callable(getattr(bot, "fast_call", None)) and callable(getattr(bot, "fast_card", None))


def play_fast(
    rules: Rules, bots: Sequence[Any], names: Sequence[str], deals: DealSource, *, table_id: str, game_id: str,
    game_number: int, first_dealer: int,
) -> GameRecord | None:
    """Plays one game through the fast path; ``None`` when a bot misbehaved (replay it normally)."""
    game = Game(rules, deals, game_number=game_number, first_dealer=first_dealer)
    calls = rules.call_range
    decisions = [0, 0, 0, 0]

    def choose_call(seat: int, rnd: Round) -> int:
        decisions[seat] += 1
        return int(bots[seat].fast_call(seat, game_number, rnd.round_number, rnd.hands[seat], calls))

    try:
        game.playout(choose_call, [bot.fast_card for bot in bots])
    except BaseException:  # any misbehaviour, SystemExit too: the normal table will record it as a fault
        return None
    plays = 13 * len(game.results)
    return GameRecord(
        table_id=table_id, game=game_id, deal_set=game_number, rules=rules, seats=tuple(names),
        first_dealer=first_dealer, rounds=list(game.results), redeals=list(game.redeals), faults=[],
        totals=tuple(game.totals), places=game.places(), think_ms=[0.0, 0.0, 0.0, 0.0],
        decisions=[d + plays for d in decisions], fallbacks=[(0, 0, 0, 0)] * len(game.results),
        versions=tuple(str(getattr(bot, "version", "")) for bot in bots),
    )
