"""What a seat may know: the :class:`View` a bot reads, and the core's :class:`SeatView` snapshot.

A bot is asked to decide with a view: a :class:`SeatView` in-process, a
:class:`arena.kit.view.RemoteView` over the network; both offer the attributes of :class:`View`.
A :class:`SeatView` is the seat's own cards on top of a :class:`PublicView`, what every seat may know
at that moment, made once per moment and shared by the seats' views (and by whatever encodes them
for the network, so the public part of a moment is worked out once).

The public facts a view is made of live here too: the :class:`Phase` of a round, a :class:`Trick`, a
finished round's :class:`RoundSummary`. This module knows nothing of the game: the game
(:meth:`arena.core.game.Game.view`) makes the views from its values, and decides what goes in them.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple, Protocol

from arena.core.cards import CARDS, Card, Hand, Suit
from arena.core.rules import Rules
from arena.core.turns import call_order

__all__ = ["Phase", "PublicView", "RoundSummary", "SeatView", "Trick", "View"]


class Phase(enum.Enum):
    """Where a round or game stands."""

    CALLING = "calling"
    PLAYING = "playing"
    OVER = "over"


class Trick(NamedTuple):
    """A trick: its leader, the cards in play order starting with the leader, and (once done) the winner.

    A named tuple rather than a dataclass: thirteen are made for every round played.
    """

    leader: int
    """The seat that led."""
    cards: tuple[Card, ...]
    """The cards in play order; card k was played by seat ``(leader + k) % 4``."""
    winner: int | None = None
    """The seat that won it, once four cards are down."""

    def __str__(self) -> str:
        return f"{self.leader}: {' '.join(map(str, self.cards))}" + (
            f" -> {self.winner}" if self.winner is not None else ""
        )


@dataclasses.dataclass(frozen=True, slots=True)
class RoundSummary:
    """The public outcome of a finished round: what any seat may know."""

    round_number: int
    dealer: int
    calls: tuple[int, int, int, int]
    tricks_won: tuple[int, int, int, int]
    scores: tuple[int, int, int, int]
    """Round scores in tenths."""


class View(Protocol):
    """What a bot sees when asked to decide: a :class:`SeatView` in-process, a
    :class:`arena.kit.view.RemoteView` over the network. Bots should use only these attributes."""

    @property
    def seat(self) -> int: ...
    @property
    def game_number(self) -> int: ...
    @property
    def round_number(self) -> int: ...
    @property
    def dealer(self) -> int: ...
    @property
    def trump(self) -> Suit: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def hand(self) -> Hand: ...
    @property
    def hand_mask(self) -> int: ...
    @property
    def calls(self) -> tuple[int | None, ...]: ...
    @property
    def call_order(self) -> tuple[int, int, int, int]: ...
    @property
    def leader(self) -> int: ...
    @property
    def trick(self) -> tuple[Card, ...]: ...
    @property
    def tricks(self) -> tuple[Trick, ...]: ...
    @property
    def tricks_won(self) -> tuple[int, ...]: ...
    @property
    def totals(self) -> tuple[int, ...]: ...
    @property
    def past_rounds(self) -> tuple[RoundSummary, ...]: ...
    @property
    def played(self) -> Hand: ...
    @property
    def legal(self) -> Hand: ...
    @property
    def legal_mask(self) -> int: ...
    @property
    def legal_calls(self) -> range: ...
    @property
    def to_act(self) -> bool: ...
    @property
    def deadline_ms(self) -> int:
        """The time to answer this decision, in milliseconds (0: no limit); the time bank is apart."""
        ...
    @property
    def seat_seed(self) -> int:
        """A seed for this seat's own random draws in this round, the same in every rotation of the
        deal set: a keyed digest of what the seat is told (0: none given, a game without the event's
        key); see :func:`arena.core.dealing.seat_seed`."""
        ...


class PublicView:
    """What every seat may know at one moment of a game: calls, cards played, tricks, scores.

    A sealed snapshot, like :class:`SeatView`: copies and immutable values taken when it was made, no
    reference to the game, and no card still in anyone's hand. :meth:`arena.core.game.Game.public_view`
    makes one per moment (a call or a card makes a new moment) and hands the same one to every seat's
    view of that moment.
    """

    __slots__ = (
        "calls",
        "dealer",
        "game_number",
        "leader",
        "over",
        "past_rounds",
        "phase",
        "played_mask",
        "round_number",
        "rules",
        "totals",
        "trick_indices",
        "tricks",
        "tricks_won",
        "trump",
    )

    def __init__(
        self, *, game_number: int, round_number: int, dealer: int, trump: Suit, rules: Rules, phase: Phase,
        over: bool, calls: tuple[int | None, ...], trick_indices: tuple[int, ...], played_mask: int,
        tricks: tuple[Trick, ...], leader: int, tricks_won: tuple[int, ...], totals: tuple[int, ...],
        past_rounds: tuple[RoundSummary, ...],
    ) -> None:
        self.game_number = game_number
        self.round_number = round_number
        self.dealer = dealer
        self.trump = trump
        self.rules = rules
        self.phase = phase
        self.over = over
        self.calls = calls
        """The calls so far by seat (``None`` for a seat yet to call)."""
        self.trick_indices = trick_indices
        """The card indices of the current trick, in play order."""
        self.played_mask = played_mask
        """Every card played so far this round, as a mask."""
        self.tricks = tricks
        """The finished tricks of this round."""
        self.leader = leader
        """The seat that led (or will lead) the current trick."""
        self.tricks_won = tricks_won
        self.totals = totals
        """Game totals in tenths by seat, from the rounds finished before this one."""
        self.past_rounds = past_rounds


class SeatView:
    """What one seat may know at one moment: its own hand, all calls, all cards played, the scores.

    A view is a sealed snapshot: it is made of copies and immutable values taken when it was made
    (ints, tuples, cards, the frozen :class:`Rules`, the shared :class:`PublicView`), keeps answering
    as of that moment, and keeps no reference to the game or its round, so nothing reachable from it,
    private attributes included, holds another seat's unplayed cards or lets a bot change the game.
    """

    __slots__ = (
        "_hand",
        "_legal",
        "_to_act",
        "deadline_ms",
        "dealer",
        "game_number",
        "leader",
        "phase",
        "public",
        "round_number",
        "rules",
        "seat",
        "seat_seed",
        "trump",
    )

    def __init__(self, public: PublicView, seat: int, hand: int, to_act: bool, legal: int,
                 deadline_ms: int = 0, seat_seed: int = 0) -> None:
        self.public = public
        """What every seat may know at this moment."""
        self.seat = seat
        """The seat this view belongs to."""
        self.deadline_ms = deadline_ms
        """The time this seat has to answer, in milliseconds (0: no limit, or not asked to decide)."""
        self.seat_seed = seat_seed
        """A seed for this seat's own random draws in this round: a digest, keyed by the event's secret
        key, of the deal set, the round, the seat and its own dealt cards, so the same in every rotation of
        a deal set (common random numbers) and nothing about another hand (0: none given, a game without a
        key). :func:`arena.core.dealing.seat_seed` says how it is made."""
        self.game_number = public.game_number
        self.round_number = public.round_number
        self.dealer = public.dealer
        self.trump = public.trump
        self.rules = public.rules
        self.phase = public.phase
        self.leader = public.leader
        """The seat that led (or will lead) the current trick."""
        self._hand = hand
        """This seat's cards still in hand, as a mask."""
        self._to_act = to_act
        self._legal = legal
        """The cards this seat may play now, as a mask (0 unless it is to play)."""

    @property
    def to_act(self) -> bool:
        """True when this seat must call or play now."""
        return self._to_act

    @property
    def hand(self) -> Hand:
        """This seat's cards still in hand."""
        return Hand.of_mask(self._hand)

    @property
    def hand_mask(self) -> int:
        """:attr:`hand` as a mask."""
        return self._hand

    @property
    def calls(self) -> tuple[int | None, ...]:
        """The calls so far by seat (``None`` for a seat yet to call)."""
        return self.public.calls

    @property
    def call_order(self) -> tuple[int, int, int, int]:
        """The seats in calling (and first-trick) order."""
        return call_order(self.dealer)

    @property
    def trick(self) -> tuple[Card, ...]:
        """The cards played to the current trick, in order, starting with :attr:`leader`'s."""
        return tuple(CARDS[i] for i in self.public.trick_indices)

    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The finished tricks of this round."""
        return self.public.tricks

    @property
    def tricks_won(self) -> tuple[int, ...]:
        """Tricks won this round, by seat."""
        return self.public.tricks_won

    @property
    def totals(self) -> tuple[int, ...]:
        """Game totals in tenths by seat, from the rounds finished before this one."""
        return self.public.totals

    @property
    def past_rounds(self) -> tuple[RoundSummary, ...]:
        """The public outcome of each finished round of this game."""
        return self.public.past_rounds

    @property
    def played(self) -> Hand:
        """Every card played so far this round, by anyone (public knowledge)."""
        return Hand.of_mask(self.public.played_mask)

    @property
    def legal_calls(self) -> range:
        """The calls allowed."""
        return self.rules.call_range

    @property
    def legal(self) -> Hand:
        """The cards this seat may play now (empty when it is not its turn to play)."""
        return Hand.of_mask(self._legal)

    @property
    def legal_mask(self) -> int:
        """:attr:`legal` as a mask."""
        return self._legal
