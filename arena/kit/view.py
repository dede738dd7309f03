"""A seat's view as a bot reads it from a request: :class:`RemoteView`, with the attributes of a ``SeatView``.

The view a bot is handed over the network offers the same attributes as the in-process
:class:`~arena.core.views.SeatView`, so one bot class plays in-process and over the network alike.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from arena.core.cards import CARDS, Card, Hand, Suit, card_text
from arena.core.game import Phase, RoundSummary, Trick
from arena.core.rules import Rules
from arena.core.turns import call_order, four, seat_after
from arena.transports.grpc.wire import rules_from_proto, suit_from_proto
from protocol import callbreak_pb2 as pb

__all__ = ["RemoteView", "view_from_proto"]

_BY_TEXT = {card_text(i): CARDS[i] for i in range(52)}
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
        retry_reason: str = "", deadline_ms: int = 0,
    ) -> None:
        self._msg = msg
        self._legal_calls = legal_calls
        self._legal_cards = legal_cards
        self.table_id = table_id
        self.retry_reason = retry_reason
        """Empty, or why the previous answer to this decision was refused."""
        self.deadline_ms = deadline_ms
        """The time left to answer the request, in milliseconds, as the arena sent it (0: no limit)."""
        self.game_id: str = msg.game_id
        self.game_number: int = msg.game_number
        self.seat_seed: int = msg.seat_seed
        """A seed for this seat's own random draws in this round, the same in every rotation of the deal
        set: keyed by a secret of the event and made of what this seat is told, so it says nothing of the
        other hands (0: the arena gave none)."""
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
            RoundSummary(r.round_number, seat_after(self.dealer, i - len(rounds)), four(r.calls), four(r.tricks),
                         four(r.score_tenths))
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
        return call_order(self.dealer)



def view_from_proto(
    msg: pb.SeatView, table_id: str, legal_calls: Sequence[int] = (), legal_cards: Sequence[str] = (),
    retry_reason: str = "", deadline_ms: int = 0,
) -> RemoteView:
    """Reads the view carried by a request (raises ``ValueError`` on nonsense from the arena)."""
    return RemoteView(msg, table_id, legal_calls, legal_cards, retry_reason, deadline_ms)
