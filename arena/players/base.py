"""Players behind one interface: the table cannot tell an in-process bot from a remote one.

A :class:`Player` is asked for decisions (:meth:`Player.decide`) and told what happens
(:meth:`Player.notify`). It answers with the raw value the bot gave, an ``int`` call or card
text, and the table judges it; a player that cannot answer at all raises
:class:`~arena.core.faults.PlayerFault` (late, disconnected, crashed). Only the faults a remote bot
can produce tell the two kinds apart.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Protocol, runtime_checkable

from arena.core.faults import FaultKind, PlayerFault
from arena.core.views import SeatView

__all__ = [
    "AbsentPlayer",
    "Decision",
    "DecisionKind",
    "Player",
    "QuietPlayer",
    "TableEvent",
]


class DecisionKind(enum.Enum):
    """What a seat is asked for."""

    CALL = "call"
    PLAY = "play"


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """One request for a decision, with everything the seat may know."""

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


@dataclasses.dataclass(frozen=True, slots=True)
class TableEvent:
    """Something that happened at a table, for players that follow the game."""

    kind: str
    """One of ``game_start round_start call card trick round_end game_end redeal``."""
    table_id: str
    game_id: str
    seat: int
    """The seat the event is addressed to."""
    data: dict[str, Any]
    """The event's details (see :mod:`arena.players.table` for each kind's keys)."""


@runtime_checkable
class Player(Protocol):
    """A seat at a table: an in-process bot or a remote one."""

    name: str
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


class QuietPlayer:
    """Base of the players with nothing to pass on: no events, refusals, fallbacks or stray faults."""

    name: str
    wants_events = False

    async def notify(self, event: TableEvent) -> None:
        return None

    async def refused(self, decision: Decision, reason: str) -> None:
        return None

    async def fallback(self, decision: Decision, detail: str) -> None:
        return None

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        return []


class AbsentPlayer(QuietPlayer):
    """A seat whose bot cannot play (disqualified, or its process has ended): every decision
    falls back, and each is recorded as a ``disconnect`` fault with the reason."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    async def decide(self, decision: Decision) -> tuple[object, float]:
        raise PlayerFault(FaultKind.DISCONNECT, self.reason)
