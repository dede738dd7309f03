"""callbreak-arena: a tournament harness for Callbreak bots.

The rules core (cards, rules, scoring, dealing, game) is pure: no I/O, no clock, no network.
"""

from __future__ import annotations

from arena.core.cards import Card, Hand, Rank, Suit
from arena.core.dealing import Deal, DealFile, draw_seating, seeded_deal, seeded_deals
from arena.core.game import Game, Phase, Round, RoundResult, RoundSummary, Trick, places
from arena.core.rules import PROFILES, Rules, legal_with_reason, trick_winner
from arena.core.scoring import format_score, round_score
from arena.core.views import SeatView
from arena.errors import (
    ArenaError,
    CardError,
    DealFileError,
    IllegalAction,
    IllegalCall,
    IllegalPlay,
    RulesError,
)

__version__ = "0.1.0"

__all__ = [
    "PROFILES",
    "ArenaError",
    "Card",
    "CardError",
    "Deal",
    "DealFile",
    "DealFileError",
    "Game",
    "Hand",
    "IllegalAction",
    "IllegalCall",
    "IllegalPlay",
    "Phase",
    "Rank",
    "Round",
    "RoundResult",
    "RoundSummary",
    "Rules",
    "RulesError",
    "SeatView",
    "Suit",
    "Trick",
    "__version__",
    "draw_seating",
    "format_score",
    "legal_with_reason",
    "places",
    "round_score",
    "seeded_deal",
    "seeded_deals",
    "trick_winner",
]
