"""Conversion between the rules core and the ``callbreak.v1`` protocol messages.

The only module (with :mod:`arena.net.remote`, :mod:`arena.net.server` and :mod:`arena.botkit`) that
touches the generated code. Requests are built from a :class:`~arena.core.views.SeatView`, never from
the game, so no other seat's unplayed card can reach a bot. The bot side reads a request back
into a :class:`RemoteView`, which offers the same attributes as a ``SeatView``, so one bot class
plays in-process and over the network alike.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TypeVar

from arena.core.cards import CARDS, Card, Hand, Suit, card_text
from arena.core.game import Phase, RoundSummary, Trick
from arena.core.rules import LowerTrump, Penalty, Rules, Scoring, TrumpMode
from arena.core.views import SeatView
from arena.players.base import (
    CallMade,
    CardPlayed,
    Decision,
    DecisionKind,
    GameEnd,
    GameStart,
    RoundEnd,
    RoundStart,
    TableEvent,
    TrickWon,
)
from protocol import callbreak_pb2 as pb

__all__ = [
    "RemoteView",
    "RequestEncoder",
    "event_message",
    "rules_from_proto",
    "rules_to_proto",
    "view_from_proto",
    "view_to_proto",
]

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


_TEXT = tuple(card_text(i) for i in range(52))


def _cards(mask: int) -> list[str]:
    out = []
    while mask:
        low = mask & -mask
        out.append(_TEXT[low.bit_length() - 1])
        mask ^= low
    return out


class RequestEncoder:
    """Builds the requests of one seat at one table.

    Called for every decision, so it avoids encoding anything twice: the parts fixed for a game
    (names, rules) and the parts that only grow (finished tricks, past rounds) are kept as
    serialized bytes and merged in, which protobuf does in C (for a repeated field, merging
    serialized messages appends).
    """

    def __init__(self, rules_msg: pb.Rules) -> None:
        self.rules_msg = rules_msg
        self._base_key: tuple[str, int, tuple[str, ...]] | None = None
        self._base = b""
        self._tricks: list[Trick] = []
        self._tricks_bytes = b""
        self._past: list[RoundSummary] = []
        self._past_bytes = b""
        self.last_request_id = 0
        """The request_id of the last request built (the request a refusal or fallback is about)."""

    def _base_for(self, view: SeatView, names: Sequence[str], game_id: str) -> bytes:
        key = (game_id, view.game_number, tuple(names))
        if key != self._base_key:
            self._base_key = key
            self._base = bytes(pb.SeatView(
                game_id=game_id, game_number=view.game_number, rounds_in_game=view.rules.rounds,
                player_names=names, rules=self.rules_msg,
            ).SerializeToString())
        return self._base

    def view(self, view: SeatView, names: Sequence[str], game_id: str, msg: pb.SeatView | None = None) -> pb.SeatView:
        """The complete view of one seat, built only from what that seat may know (into ``msg`` if given)."""
        if msg is None:
            msg = pb.SeatView()
        msg.MergeFromString(self._base_for(view, names, game_id))
        msg.round_number = view.round_number
        msg.seat = view.seat
        msg.dealer = view.dealer
        msg.trump = view.trump + 1
        msg.hand.extend(_cards(view.hand_mask))
        msg.tricks_won.extend(view.tricks_won)
        msg.total_tenths.extend(view.totals)
        calls = view.calls
        for seat in view.call_order:
            value = calls[seat]
            if value is not None:
                msg.calls.add(seat=seat, value=value)
        current = msg.current_trick
        current.leader = view.leader
        current.cards.extend([str(c) for c in view.trick])
        self._tricks_bytes = _grow(view.tricks, self._tricks, self._tricks_bytes, _trick_bytes)
        self._past_bytes = _grow(view.past_rounds, self._past, self._past_bytes, _past_bytes)
        msg.MergeFromString(self._tricks_bytes)
        msg.MergeFromString(self._past_bytes)
        return msg

    def request(self, decision: Decision, request_id: int, deadline_ms: int) -> pb.ConnectResponse:
        """The CallRequest or PlayRequest for a decision."""
        view = decision.view
        response = pb.ConnectResponse()
        request: pb.CallRequest | pb.PlayRequest
        if decision.kind is DecisionKind.CALL:
            request = response.call_request
            request.legal_calls.extend(view.legal_calls)
        else:
            request = response.play_request
            request.legal_cards.extend(_cards(view.legal_mask))
        request.request_id = self.last_request_id = request_id
        request.table_id = decision.table_id
        request.seat = decision.seat
        request.deadline_ms = deadline_ms
        request.time_bank_ms = decision.time_bank_ms
        if decision.retry_reason:
            request.retry_reason = decision.retry_reason
        self.view(view, decision.names, decision.game_id, request.view)
        return response


_T = TypeVar("_T")


def _grow(items: Sequence[_T], done: list[_T], encoded: bytes, encode: Callable[[_T], bytes]) -> bytes:
    """``encoded`` extended with the items not yet in ``done``; the lists only grow within a round
    (or a game), so anything else means a new one began and the encoding starts afresh."""
    n = len(done)
    if n > len(items) or (n and items[n - 1] != done[n - 1]):
        done.clear()
        encoded = b""
    for item in items[len(done):]:
        done.append(item)
        encoded += encode(item)
    return encoded


def _trick_bytes(trick: Trick) -> bytes:
    return bytes(pb.SeatView(finished_tricks=[
        pb.Trick(leader=trick.leader, cards=[str(c) for c in trick.cards], winner=trick.winner)
    ]).SerializeToString())


def _past_bytes(past: RoundSummary) -> bytes:
    return bytes(pb.SeatView(past_rounds=[pb.RoundResult(
        round_number=past.round_number, calls=past.calls, tricks=past.tricks_won, score_tenths=past.scores
    )]).SerializeToString())


def view_to_proto(view: SeatView, rules_msg: pb.Rules, names: Sequence[str], game_id: str) -> pb.SeatView:
    """The complete view of one seat, built only from what that seat may know."""
    return RequestEncoder(rules_msg).view(view, names, game_id)


def event_message(event: TableEvent, rules_msg: pb.Rules | None = None) -> pb.ConnectResponse:
    """A table event as sent to a bot that asked for events (``rules_msg``: the rules of a
    ``GameStart`` already converted, to skip converting them again)."""
    body = event.body
    msg = pb.Event(table_id=event.table_id, seat=event.seat, game_id=event.game_id)
    if isinstance(body, CardPlayed):
        msg.card_played.seat = body.seat
        msg.card_played.card = _TEXT[body.card.index]
    elif isinstance(body, CallMade):
        msg.call_made.seat = body.seat
        msg.call_made.call = body.call
    elif isinstance(body, TrickWon):
        trick = body.trick
        msg.trick_won.winner = trick.winner
        msg.trick_won.trick.leader = trick.leader
        msg.trick_won.trick.cards.extend([_TEXT[c.index] for c in trick.cards])
        msg.trick_won.trick.winner = trick.winner
    elif isinstance(body, RoundStart):
        msg.round_start.round_number = body.round_number
        msg.round_start.dealer = body.dealer
        msg.round_start.hand.extend(_cards(body.hand.mask))
        msg.round_start.trump = suit_to_proto(body.trump)
    elif isinstance(body, RoundEnd):
        result = body.result
        msg.round_end.result.round_number = result.round_number
        msg.round_end.result.calls.extend(result.calls)
        msg.round_end.result.tricks.extend(result.tricks_won)
        msg.round_end.result.score_tenths.extend(result.scores)
        msg.round_end.total_tenths.extend(body.totals)
    elif isinstance(body, GameStart):
        msg.game_start.seat = event.seat
        msg.game_start.player_names.extend(body.names)
        msg.game_start.game_number = body.game_number
        msg.game_start.rules.CopyFrom(rules_msg if rules_msg is not None else rules_to_proto(body.rules))
    elif isinstance(body, GameEnd):
        msg.game_end.total_tenths.extend(body.totals)
        msg.game_end.places.extend(body.places)
    else:
        msg.redeal.reason = body.reason
    return pb.ConnectResponse(event=msg)


_BY_TEXT = {text: CARDS[i] for i, text in enumerate(_TEXT)}
_RULES_CACHE: dict[bytes, Rules] = {}


def _card(text: str) -> Card:
    card = _BY_TEXT.get(text)
    return card if card is not None else Card.parse(text)


def _hand(texts: Sequence[str]) -> Hand:
    mask = 0
    for text in texts:
        mask |= 1 << _card(text).index
    return Hand(mask)


class RemoteView:
    """A seat's view read from a request: the same attributes a bot uses on a :class:`SeatView`.

    The simple fields are read at once; tricks, past rounds and the rules are read from the
    message the first time they are asked for.
    """

    def __init__(
        self, msg: pb.SeatView, table_id: str, legal_calls: Sequence[int] = (), legal_cards: Sequence[str] = (),
        retry_reason: str = "",
    ) -> None:
        self._msg = msg
        self._legal_calls = legal_calls
        self._legal_cards = legal_cards
        self.table_id = table_id
        self.retry_reason = retry_reason
        """Empty, or why the previous answer to this decision was refused."""
        self.game_id: str = msg.game_id
        self.game_number: int = msg.game_number
        self.round_number: int = msg.round_number
        self.seat: int = msg.seat
        self.dealer: int = msg.dealer
        self.leader: int = msg.current_trick.leader
        self.phase = Phase.PLAYING if legal_cards else Phase.CALLING

    @functools.cached_property
    def trump(self) -> Suit:
        """The trump suit of this round."""
        return suit_from_proto(self._msg.trump)

    @functools.cached_property
    def hand(self) -> Hand:
        """This seat's cards still in hand."""
        return _hand(self._msg.hand)

    @functools.cached_property
    def legal(self) -> Hand:
        """The cards this seat may play now (empty for a call request)."""
        return _hand(self._legal_cards)

    @functools.cached_property
    def legal_calls(self) -> range:
        """The calls allowed."""
        calls = self._legal_calls
        return range(min(calls), max(calls) + 1) if calls else self.rules.call_range

    @functools.cached_property
    def trick(self) -> tuple[Card, ...]:
        """The cards played to the current trick, in order, starting with :attr:`leader`'s."""
        return tuple(_card(c) for c in self._msg.current_trick.cards)

    @functools.cached_property
    def tricks_won(self) -> tuple[int, ...]:
        """Tricks won this round, by seat."""
        return tuple(self._msg.tricks_won)

    @functools.cached_property
    def totals(self) -> tuple[int, ...]:
        """Game totals in tenths by seat, from the rounds finished before this one."""
        return tuple(self._msg.total_tenths)

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """The players' names by seat."""
        return tuple(self._msg.player_names)

    @functools.cached_property
    def rules(self) -> Rules:
        """The rules in force."""
        key = self._msg.rules.SerializeToString()
        rules = _RULES_CACHE.get(key)
        if rules is None:
            rules = _RULES_CACHE[key] = rules_from_proto(self._msg.rules)
        return rules

    @functools.cached_property
    def calls(self) -> tuple[int | None, ...]:
        """The calls so far by seat (``None`` for a seat yet to call)."""
        calls: list[int | None] = [None, None, None, None]
        for call in self._msg.calls:
            calls[call.seat] = call.value
        return tuple(calls)

    @functools.cached_property
    def tricks(self) -> tuple[Trick, ...]:
        """The finished tricks of this round."""
        return tuple(
            Trick(t.leader, tuple(_card(c) for c in t.cards), t.winner) for t in self._msg.finished_tricks
        )

    @functools.cached_property
    def past_rounds(self) -> tuple[RoundSummary, ...]:
        """The public outcome of each finished round of this game."""
        rounds = self._msg.past_rounds
        return tuple(
            RoundSummary(r.round_number, (self.dealer - len(rounds) + i) & 3, _four(r.calls), _four(r.tricks),
                         _four(r.score_tenths))
            for i, r in enumerate(rounds)
        )

    @property
    def to_act(self) -> bool:
        """Always true: a request is a turn to act."""
        return True

    @property
    def hand_mask(self) -> int:
        """:attr:`hand` as a mask."""
        return self.hand.mask

    @property
    def legal_mask(self) -> int:
        """:attr:`legal` as a mask."""
        return self.legal.mask

    @property
    def played(self) -> Hand:
        """Every card played so far this round."""
        mask = 0
        for trick in self.tricks:
            for card in trick.cards:
                mask |= 1 << card.index
        for card in self.trick:
            mask |= 1 << card.index
        return Hand(mask)

    @property
    def call_order(self) -> tuple[int, int, int, int]:
        """The seats in calling (and first-trick) order."""
        first = (self.dealer + 1) & 3
        return first, (first + 1) & 3, (first + 2) & 3, (first + 3) & 3


def _four(values: Sequence[int]) -> tuple[int, int, int, int]:
    if len(values) != 4:
        raise ValueError(f"expected 4 values, one per seat, got {len(values)}")
    return values[0], values[1], values[2], values[3]


def view_from_proto(
    msg: pb.SeatView, table_id: str, legal_calls: Sequence[int] = (), legal_cards: Sequence[str] = (),
    retry_reason: str = "",
) -> RemoteView:
    """Reads the view carried by a request (raises ``ValueError`` on nonsense from the arena)."""
    return RemoteView(msg, table_id, legal_calls, legal_cards, retry_reason)
