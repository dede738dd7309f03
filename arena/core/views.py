"""What a seat may know: the :class:`View` a bot reads, and the core's :class:`SeatView` snapshot.

A bot is asked to decide with a view: a :class:`SeatView` in-process, a
:class:`arena.net.wire.RemoteView` over the network; both offer the attributes of :class:`View`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from arena.core.cards import CARDS, FULL_DECK, Card, Hand, Suit
from arena.core.game import Phase, RoundSummary, Trick
from arena.core.rules import Rules

if TYPE_CHECKING:
    from arena.core.game import Game

__all__ = ["SeatView", "View"]

_SUITS = tuple(Suit)
"""The suits by number (a tuple index is quicker than calling the enum)."""


class View(Protocol):
    """What a bot sees when asked to decide: a :class:`SeatView` in-process, a
    :class:`arena.net.wire.RemoteView` over the network. Bots should use only these attributes."""

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


class SeatView:
    """What one seat may know at one moment: its own hand, all calls, all cards played, the scores.

    A view is a sealed snapshot: it is made of copies and immutable values taken when it was made
    (ints, tuples, cards, the frozen :class:`Rules`), keeps answering as of that moment, and keeps
    no reference to the game or its round, so nothing reachable from it, private attributes
    included, holds another seat's unplayed cards or lets a bot change the game.
    """

    __slots__ = (
        "_calls",
        "_hand",
        "_legal",
        "_past",
        "_played",
        "_to_act",
        "_totals",
        "_trick",
        "_tricks",
        "_won",
        "dealer",
        "game_number",
        "leader",
        "phase",
        "round_number",
        "rules",
        "seat",
        "trump",
    )

    def __init__(self, game: Game, seat: int) -> None:
        rnd = game.round
        hands = rnd.hands
        played = rnd.played
        finished = 4 * len(rnd.winners)
        self.seat = seat
        """The seat this view belongs to."""
        self.game_number = game.game_number
        self.round_number = rnd.round_number
        self.dealer = rnd.dealer
        self.trump = _SUITS[rnd.trump]
        self.rules = game.rules
        self.phase = game.phase
        self._hand = hands[seat]
        self._calls = tuple(rnd.calls)
        self._trick = tuple(played[finished:])
        # The hands still held cover exactly the cards not yet played: the rest is public.
        self._played = FULL_DECK ^ (hands[0] | hands[1] | hands[2] | hands[3])
        self._tricks = tuple(rnd.tricks) if finished else ()
        self.leader = rnd.leader
        """The seat that led (or will lead) the current trick."""
        self._won = tuple(rnd.tricks_won)
        self._totals = tuple(game.totals)
        self._past = game.summaries
        self._to_act = not game.over and rnd.current_seat == seat
        self._legal = rnd.legal_mask() if self._to_act and rnd.phase is Phase.PLAYING else 0

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
        return self._calls

    @property
    def call_order(self) -> tuple[int, int, int, int]:
        """The seats in calling (and first-trick) order."""
        first = (self.dealer + 1) & 3
        return first, (first + 1) & 3, (first + 2) & 3, (first + 3) & 3

    @property
    def trick(self) -> tuple[Card, ...]:
        """The cards played to the current trick, in order, starting with :attr:`leader`'s."""
        return tuple(CARDS[i] for i in self._trick)

    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The finished tricks of this round."""
        return self._tricks

    @property
    def tricks_won(self) -> tuple[int, ...]:
        """Tricks won this round, by seat."""
        return self._won

    @property
    def totals(self) -> tuple[int, ...]:
        """Game totals in tenths by seat, from the rounds finished before this one."""
        return self._totals

    @property
    def past_rounds(self) -> tuple[RoundSummary, ...]:
        """The public outcome of each finished round of this game."""
        return self._past

    @property
    def played(self) -> Hand:
        """Every card played so far this round, by anyone (public knowledge)."""
        return Hand.of_mask(self._played)

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
