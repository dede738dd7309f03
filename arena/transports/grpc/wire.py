"""Conversion between the rules core and the ``callbreak.v1`` protocol's values: suits and rules.

With :mod:`arena.transports.grpc.encoder` (what the arena sends, written as bytes), :mod:`arena.transports.grpc.remote`,
:mod:`arena.transports.grpc.server` and the bot kit (:mod:`arena.kit`, which reads a request back into a view), the
only code that touches the generated protocol.
"""

from __future__ import annotations

from arena.core.cards import Suit
from arena.core.rules import LowerTrump, Penalty, Rules, Scoring, TrumpMode
from protocol import callbreak_pb2 as pb

__all__ = ["rules_from_proto", "rules_to_proto", "suit_from_proto", "suit_to_proto"]

_LOWER = {LowerTrump.ANY: pb.LOWER_TRUMP_ANY, LowerTrump.TRUMP: pb.LOWER_TRUMP_TRUMP}
_SCORING = {Scoring.STANDARD: pb.SCORING_STANDARD, Scoring.PAGAT: pb.SCORING_PAGAT, Scoring.DY: pb.SCORING_DY}
_PENALTY = {Penalty.WHOLE: pb.PENALTY_WHOLE, Penalty.SHORTFALL: pb.PENALTY_SHORTFALL}
_TRUMP_MODE = {TrumpMode.FIXED: pb.TRUMP_MODE_FIXED, TrumpMode.LAST_CARD: pb.TRUMP_MODE_LAST_CARD}


def suit_to_proto(suit: int) -> int:
    """Core suit number (S=0 H=1 D=2 C=3) to the proto enum (SUIT_SPADES=1 ...)."""
    return suit + 1


def suit_from_proto(value: int) -> Suit:
    """The proto enum to a core suit; ``SUIT_UNSPECIFIED`` is refused."""
    if not 1 <= value <= 4:
        raise ValueError(f"suit {value} is not one of SUIT_SPADES, SUIT_HEARTS, SUIT_DIAMONDS, SUIT_CLUBS")
    return Suit(value - 1)


def rules_to_proto(rules: Rules) -> pb.Rules:
    """The rules in force, as sent in ``Welcome`` and every ``SeatView``."""
    return pb.Rules(
        profile=rules.profile_name, min_call=rules.min_call, max_call=rules.max_call, must_beat=rules.must_beat,
        must_trump=rules.must_trump, lower_trump=_LOWER[rules.lower_trump],
        first_lead_no_trump=rules.first_lead_no_trump, scoring=_SCORING[rules.scoring],
        penalty=_PENALTY[rules.penalty], overtrick_tenths=rules.overtrick, pagat_bonus=rules.pagat_bonus,
        redeal_below=rules.redeal_below, redeal_no_trump=rules.redeal_no_trump, exact8_wins=rules.exact8_wins,
        rounds=rules.rounds, trump_mode=_TRUMP_MODE[rules.trump_mode],
        # The proto: SUIT_UNSPECIFIED in TRUMP_MODE_LAST_CARD, where each round's trump is in the view.
        trump_suit=pb.SUIT_UNSPECIFIED if rules.trump_mode is TrumpMode.LAST_CARD else suit_to_proto(rules.trump),
        draw_seating=rules.draw_seating,
    )


def _inverse(table: dict[object, int], value: int, name: str) -> object:
    for key, code in table.items():
        if code == value:
            return key
    raise ValueError(f"rules field {name} has an unknown value {value}")


def rules_from_proto(msg: pb.Rules) -> Rules:
    """Reads rules sent by an arena."""
    trump_mode = _inverse(_TRUMP_MODE, msg.trump_mode, "trump_mode")  # type: ignore[arg-type]
    if trump_mode is TrumpMode.LAST_CARD and msg.trump_suit == pb.SUIT_UNSPECIFIED:
        trump = Suit.SPADES  # the switch's default; unused when the last card sets the trump
    else:
        trump = suit_from_proto(msg.trump_suit)
    return Rules(
        profile_name=msg.profile, min_call=msg.min_call, max_call=msg.max_call, must_beat=msg.must_beat,
        must_trump=msg.must_trump, lower_trump=_inverse(_LOWER, msg.lower_trump, "lower_trump"),  # type: ignore[arg-type]
        first_lead_no_trump=msg.first_lead_no_trump,
        scoring=_inverse(_SCORING, msg.scoring, "scoring"),  # type: ignore[arg-type]
        penalty=_inverse(_PENALTY, msg.penalty, "penalty"),  # type: ignore[arg-type]
        overtrick=msg.overtrick_tenths, pagat_bonus=msg.pagat_bonus, redeal_below=msg.redeal_below,
        redeal_no_trump=msg.redeal_no_trump, exact8_wins=msg.exact8_wins, rounds=msg.rounds,
        trump_mode=trump_mode, trump=trump, draw_seating=msg.draw_seating,  # type: ignore[arg-type]
    )
