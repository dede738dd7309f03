"""Players behind one interface: the table cannot tell an in-process bot from a remote one.

A :class:`Player` is asked for decisions (:meth:`Player.decide`) and told what happens
(:meth:`Player.notify`). It answers with the raw value the bot gave, an ``int`` call or card
text, and the table judges it; a player that cannot answer at all raises
:class:`~arena.core.faults.PlayerFault` (late, disconnected, crashed). Only the faults a remote bot
can produce tell the two kinds apart. Events are typed values (:class:`TableEvent` with one of the
bodies below), made once by the table and shared by the seats that follow the game.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple, Protocol, runtime_checkable

from arena.core.cards import Card, Hand, Suit
from arena.core.faults import FaultKind, PlayerFault
from arena.core.game import RoundSummary, Trick
from arena.core.rules import Rules
from arena.core.views import SeatView

__all__ = [
    "AbsentPlayer",
    "CallMade",
    "CardPlayed",
    "Decision",
    "DecisionKind",
    "EventBody",
    "GameEnd",
    "GameStart",
    "Player",
    "QuietPlayer",
    "RedealMade",
    "RoundEnd",
    "RoundStart",
    "TableEvent",
    "TrickWon",
]


class DecisionKind(enum.Enum):
    """What a seat is asked for."""

    CALL = "call"
    PLAY = "play"


class Decision(NamedTuple):
    """One request for a decision, with everything the seat may know.

    A named tuple rather than a dataclass: one is made for every decision of every game.
    """

    kind: DecisionKind
    table_id: str
    game_id: str
    seat: int
    view: SeatView
    names: tuple[str, ...]
    """The players' names by seat."""
    deadline_ms: int
    """The time to answer; 0 means no limit."""
    time_bank_ms: int
    """What is left of the seat's time bank for this game."""
    retry_reason: str = ""
    """Empty for a first request; the broken rule when asking again after an illegal answer."""


# -- events ----------------------------------------------------------------------------------
# What happened at a table, as typed values. The table makes one value per happening and shares
# it between the seats that follow the game; only RoundStart (the seat's own hand) differs by seat.


@dataclasses.dataclass(frozen=True, slots=True)
class GameStart:
    """A game begins."""

    names: tuple[str, ...]
    """The players' names by seat."""
    rules: Rules
    game_number: int


@dataclasses.dataclass(frozen=True, slots=True)
class RoundStart:
    """A round is dealt; ``hand`` is the addressed seat's own 13 cards."""

    round_number: int
    dealer: int
    trump: Suit
    hand: Hand


@dataclasses.dataclass(frozen=True, slots=True)
class CallMade:
    """A seat made its call."""

    seat: int
    call: int


@dataclasses.dataclass(frozen=True, slots=True)
class CardPlayed:
    """A seat played a card."""

    seat: int
    card: Card


@dataclasses.dataclass(frozen=True, slots=True)
class TrickWon:
    """A trick is over."""

    trick: Trick


@dataclasses.dataclass(frozen=True, slots=True)
class RoundEnd:
    """A round is over and scored."""

    result: RoundSummary
    totals: tuple[int, ...]
    """Game totals after the round, by seat."""


@dataclasses.dataclass(frozen=True, slots=True)
class GameEnd:
    """The game is over."""

    totals: tuple[int, ...]
    places: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class RedealMade:
    """The deal of a round was thrown in; a new deal of the same round follows."""

    round_number: int
    reason: str


EventBody = GameStart | RoundStart | CallMade | CardPlayed | TrickWon | RoundEnd | GameEnd | RedealMade
"""What an event says."""


class TableEvent(NamedTuple):
    """Something that happened at a table, addressed to one seat that follows the game.

    A named tuple rather than a dataclass: one is made for every event and every seat that follows.
    """

    table_id: str
    game_id: str
    seat: int
    """The seat the event is addressed to."""
    body: EventBody


@runtime_checkable
class Player(Protocol):
    """A seat at a table: an in-process bot or a remote one."""

    name: str
    version: str
    """The bot's own version, as it states it (recorded with every game it plays)."""
    wants_events: bool
    """Whether :meth:`notify` should be called at all (skipped for stateless bots, for speed)."""

    async def decide(self, decision: Decision) -> tuple[object, float]:
        """The bot's raw answer (an ``int`` call or card text) and the time it took in ms."""
        ...

    async def notify(self, event: TableEvent) -> None:
        """Tells the bot what happened; never fails."""
        ...

    async def refused(self, decision: Decision, reason: str) -> None:
        """Tells the bot its answer was refused and why (it will be asked again)."""
        ...

    async def fallback(self, decision: Decision, detail: str) -> None:
        """Tells the bot the arena played a fallback in its place."""
        ...

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        """Faults the player saw outside any decision (a stray answer, a malformed message)."""
        ...

    async def close(self) -> None:
        """The game is over: give back whatever the seat held (a thread, a table slot)."""
        ...


class QuietPlayer:
    """Base of the players with nothing to pass on: no events, refusals, fallbacks or stray faults."""

    name: str
    version = ""
    wants_events = False

    async def notify(self, event: TableEvent) -> None:
        return None

    async def refused(self, decision: Decision, reason: str) -> None:
        return None

    async def fallback(self, decision: Decision, detail: str) -> None:
        return None

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        return []

    async def close(self) -> None:
        return None


class AbsentPlayer(QuietPlayer):
    """The fallback player: the seat of a bot that is not there to play (absent, withdrawn or
    disqualified). Its first decision is recorded as an ``absent`` fault with the reason; the table
    then plays the fallback for the rest of the game."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    async def decide(self, decision: Decision) -> tuple[object, float]:
        raise PlayerFault(FaultKind.ABSENT, self.reason)
