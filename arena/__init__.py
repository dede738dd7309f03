"""callbreak-arena: a tournament harness for Callbreak bots.

The rules core (cards, rules, scoring, dealing, game) is pure: no I/O, no clock, no network.

The public API in Python is what this package, :mod:`arena.botkit` and :mod:`arena.envs` export (with
:mod:`arena.envs.callbreak_v0` and :mod:`arena.envs.openspiel`, whose libraries name an environment by its
module); every other module is internal and may change without notice (docs/architecture.md, "What is public").
"""

from __future__ import annotations

from arena.core.cards import Card, Hand, Rank, Suit
from arena.core.dealing import Deal, DealFile, draw_seating, seeded_deal, seeded_deals
from arena.core.game import Game, Phase, Round, RoundResult, RoundSummary, Trick, places
from arena.core.rules import PROFILES, LowerTrump, Rules, Scoring, legal_with_reason, trick_winner
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
"""The package's version."""

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
    "LowerTrump",
    "Phase",
    "Rank",
    "Round",
    "RoundResult",
    "RoundSummary",
    "Rules",
    "RulesError",
    "Scoring",
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
