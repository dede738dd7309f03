"""What a seat may know: the :class:`View` a bot reads, and the core's :class:`SeatView` snapshot.

A bot is asked to decide with a view: a :class:`SeatView` in-process, a
:class:`arena.net.wire.RemoteView` over the network; both offer the attributes of :class:`View`.
A :class:`SeatView` is the seat's own cards on top of a :class:`PublicView`, what every seat may know
at that moment, made once per moment and shared by the seats' views (and by whatever encodes them
for the network, so the public part of a moment is worked out once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from arena.core.cards import CARDS, FULL_DECK, Card, Hand, Suit
from arena.core.game import Phase, RoundSummary, Trick
from arena.core.rules import Rules

if TYPE_CHECKING:
    from arena.core.game import Game

__all__ = ["PublicView", "SeatView", "View"]

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
    @property
    def deadline_ms(self) -> int:
        """The time to answer this decision, in milliseconds (0: no limit); the time bank is apart."""
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

    def __init__(self, game: Game) -> None:
        rnd = game.round
        hands = rnd.hands
        finished = 4 * len(rnd.winners)
        self.game_number: int = game.game_number
        self.round_number: int = rnd.round_number
        self.dealer: int = rnd.dealer
        self.trump: Suit = _SUITS[rnd.trump]
        self.rules: Rules = game.rules
        self.phase: Phase = game.phase
        self.over: bool = game.over
        self.calls: tuple[int | None, ...] = tuple(rnd.calls)
        """The calls so far by seat (``None`` for a seat yet to call)."""
        self.trick_indices: tuple[int, ...] = tuple(rnd.played[finished:])
        """The card indices of the current trick, in play order."""
        # The hands still held cover exactly the cards not yet played: the rest is public.
        self.played_mask: int = FULL_DECK ^ (hands[0] | hands[1] | hands[2] | hands[3])
        """Every card played so far this round, as a mask."""
        self.tricks: tuple[Trick, ...] = rnd.finished_tricks()
        """The finished tricks of this round."""
        self.leader: int = rnd.leader
        """The seat that led (or will lead) the current trick."""
        self.tricks_won: tuple[int, ...] = tuple(rnd.tricks_won)
        self.totals: tuple[int, ...] = tuple(game.totals)
        """Game totals in tenths by seat, from the rounds finished before this one."""
        self.past_rounds: tuple[RoundSummary, ...] = game.summaries


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
        "trump",
    )

    def __init__(self, game: Game, seat: int, deadline_ms: int = 0) -> None:
        public = game.public_view()
        rnd = game.round
        self.public = public
        """What every seat may know at this moment."""
        self.seat = seat
        """The seat this view belongs to."""
        self.deadline_ms = deadline_ms
        """The time this seat has to answer, in milliseconds (0: no limit, or not asked to decide)."""
        self.game_number = public.game_number
        self.round_number = public.round_number
        self.dealer = public.dealer
        self.trump = public.trump
        self.rules = public.rules
        self.phase = public.phase
        self.leader = public.leader
        """The seat that led (or will lead) the current trick."""
        self._hand = rnd.hands[seat]
        self._to_act = not public.over and rnd.current_seat == seat
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
        return self.public.calls

    @property
    def call_order(self) -> tuple[int, int, int, int]:
        """The seats in calling (and first-trick) order."""
        first = (self.dealer + 1) & 3
        return first, (first + 1) & 3, (first + 2) & 3, (first + 3) & 3

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
