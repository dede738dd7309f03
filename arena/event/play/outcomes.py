"""What happened where games are played, as values the runner applies in one place.

A game at a table (:mod:`arena.event.play.slots`) or in a worker's chunk (:mod:`arena.event.play.collector`)
ends in a task of its own; what came of it is put into the run's :class:`Outcomes`, which wakes the runner,
and the runner takes them all, in the order they happened, before it starts the next games. A game of the
fast path, played at once, is returned to the runner directly.
"""

from __future__ import annotations

import asyncio
import dataclasses

from arena.event.plan.schedule import Assignment
from arena.records.format import GameRecord

__all__ = ["Broken", "Failed", "Finished", "Freed", "Outcome", "Outcomes", "PutBack"]


@dataclasses.dataclass(frozen=True, slots=True)
class Finished:
    """A game was played, and its rounds are written: it is to be counted."""

    game: Assignment
    record: GameRecord


@dataclasses.dataclass(frozen=True, slots=True)
class PutBack:
    """A game could not be played after all (a launched bot did not come up): it is to be played later."""

    game: Assignment


@dataclasses.dataclass(frozen=True, slots=True)
class Failed:
    """The arena itself failed to play a game (a bot's error is a fault, not this): the run ends with ``error``."""

    error: BaseException


@dataclasses.dataclass(frozen=True, slots=True)
class Broken:
    """A worker gave up on a launched bot it launches, for ``why``: the bot is broken in the run too."""

    bot: str
    why: str


@dataclasses.dataclass(frozen=True, slots=True)
class Freed:
    """A table, or a place in the pool, is free again: games may start."""


Outcome = Finished | PutBack | Failed | Broken | Freed
"""Anything the places that play games report."""


class Outcomes:
    """The outcomes not yet taken by the runner, in the order they happened; each one put sets ``wake``."""

    def __init__(self, wake: asyncio.Event | None = None) -> None:
        self.wake = wake if wake is not None else asyncio.Event()
        self._waiting: list[Outcome] = []

    def put(self, outcome: Outcome) -> None:
        """Says what happened, and wakes the runner."""
        self._waiting.append(outcome)
        self.wake.set()

    def take(self) -> list[Outcome]:
        """Every outcome put since the last take, oldest first."""
        taken, self._waiting = self._waiting, []
        return taken

    def __len__(self) -> int:
        return len(self._waiting)
