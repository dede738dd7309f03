"""Whole games of in-process bots, and games dealt from given hands, for the sample bots' tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena.core.cards import Card, Hand
from arena.core.dealing import Deal
from arena.core.game import Game, Phase
from arena.core.rules import Rules
from arena.core.views import SeatView
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.random_bot import RandomBot

Bot = HeuristicBot | RandomBot


# What a remote seat's view offers: the bot may read these and nothing else.
PUBLIC_ATTRIBUTES = (
    "seat", "hand", "legal", "legal_calls", "calls", "trick", "leader", "tricks", "tricks_won",
    "trump", "rules", "played", "round_number", "game_number", "dealer", "totals", "seat_seed",
)  # fmt: skip


class PublicView:
    """A copy of a view's public attributes only, as a view built from a gRPC message would be."""

    __slots__ = PUBLIC_ATTRIBUTES

    def __init__(self, view: SeatView) -> None:
        for name in PUBLIC_ATTRIBUTES:
            setattr(self, name, getattr(view, name))


def run_game(
    rules: Rules, deals: Callable[[int, int], Deal], bots: Sequence[Bot], first_dealer: int = 3, public: bool = False
) -> Game:
    """Plays a whole game, each seat asked through its own view; an illegal call or card raises
    (IllegalCall, IllegalPlay), so finishing is the proof that every choice was legal."""
    game = Game(rules, deals, first_dealer=first_dealer)
    while not game.over:
        seat = game.current_seat
        view: Any = game.view(seat)
        if public:
            view = PublicView(view)
        if game.phase is Phase.CALLING:
            game.call(bots[seat].call(view))
        else:
            game.play(bots[seat].play(view))
    return game


SWITCH_CASES: list[tuple[str, dict[str, object]]] = [
    ("nepali", {"trump": "H"}),
    ("nepali", {"trump_mode": "last_card", "redeal_no_trump": True}),
    ("nepali", {"min_call": 2, "max_call": 8, "overtrick": 0}),
    ("nepali", {"must_beat": False, "must_trump": False}),
    ("nepali", {"redeal_below": 10, "penalty": "shortfall"}),
    ("nepali", {"exact8_wins": True, "min_call": 4, "max_call": 9}),
    ("strict", {"trump": "C", "min_call": 1}),
    ("pagat", {"pagat_bonus": 16, "trump_mode": "last_card", "must_beat": True}),
    ("pagat", {"lower_trump": "trump", "first_lead_no_trump": True}),
    ("dy", {"trump_mode": "last_card", "must_trump": True, "lower_trump": "trump"}),
    ("dy", {"trump": "D", "min_call": 1, "max_call": 5, "redeal_below": 12}),
]
"""Profiles with switches, each a row of the always-legal tests."""


def deck_for(hands: Sequence[str]) -> Deal:
    """The deal giving hand k (hand 0 is the seat after the dealer) the cards of ``hands[k]``."""
    cards = [Hand.parse(text).cards() for text in hands]
    assert all(len(c) == 13 for c in cards)
    return Deal(tuple(cards[k % 4][k // 4].index for k in range(52)))


def game_with(hands: Sequence[str], rules: Rules | None = None) -> Game:
    """A game whose first deal is ``hands`` by seat (first_dealer 3: seat 0 calls and leads first)."""
    deal = deck_for(hands)
    return Game(rules or Rules.profile("nepali"), lambda r, a: deal, first_dealer=3)


def rest_of_deck(*hands: str) -> list[str]:
    """The hands that complete a deal: the cards not in ``hands``, dealt round the other seats."""
    used = 0
    for text in hands:
        used |= Hand.parse(text).mask
    rest = [card for card in map(Card, range(52)) if not used >> card.index & 1]
    count = len(rest) // 13
    return [" ".join(map(str, rest[k::count])) for k in range(count)]
