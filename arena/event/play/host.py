"""One game at a table: its four seats made side by side, the game played, and everything it took given back.

Every place that plays a game at a table hosts it here: the run's table slots (:mod:`arena.event.play.slots`), a
worker's tables of launched bots (:mod:`arena.event.play.branch`), a worker's or a Ray task's tables of in-process
bots (:mod:`arena.event.play.backends`) and a person's sitting (:mod:`arena.web.sitting`). Each says how a seat
becomes a player (its :class:`Chairs`); the host does the rest, in the same order for all of them:

- the four players are made at once, so processes started for the game start side by side;
- when a seat cannot be had, the seats that failed are given back: a process that did not come up
  (:class:`~arena.event.launch.launcher.LaunchFailed`) means the game is not played (:meth:`Host.seat` is false, and
  the caller puts it back or sends it back); any other error is the arena's own and is raised;
- the game is played by the table runner, each round handed on as soon as it is played;
- when the ``async with`` ends, played or not, the players are closed and the processes started for the game
  stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Protocol

from arena.core.dealing import DealSource
from arena.core.rules import Rules
from arena.event.launch.launcher import LaunchFailed
from arena.event.plan.schedule import Assignment
from arena.event.play.seats import Seat
from arena.players.base import Player
from arena.players.table import Asked, TableSettings, play_game
from arena.records.format import GameRecord

__all__ = ["Chairs", "Host"]


class Chairs(Protocol):
    """How the seats of a game become its players (:class:`~arena.event.play.seats.Seating` is the run's)."""

    async def player(self, seat: Seat, game: Assignment, fresh: list[Any]) -> Player:
        """The player of a seat; a process launched for the game is appended to ``fresh``."""
        ...

    def give_back(self, seat: Seat) -> None:
        """Returns a seat taken for a game that did not start."""
        ...

    async def stop(self, fresh: Sequence[Any]) -> None:
        """Stops the processes launched for a game."""
        ...


class Host:
    """One game at a table, as an ``async with``: :meth:`seat`, then :meth:`play`; its end closes the players and
    stops the processes started for the game."""

    def __init__(self, chairs: Chairs, game: Assignment) -> None:
        self.chairs = chairs
        self.game = game
        self.players: list[Player] = []
        self.fresh: list[Any] = []
        """The processes launched for the game."""

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        for player in self.players:
            await player.close()
        await self.chairs.stop(self.fresh)

    async def seat(self, seats: Sequence[Seat]) -> bool:
        """Makes the players of the four seats at once; False when a launch failed (the seats that failed are
        given back, and the game is not played). Any other error making a player is raised."""
        made = await asyncio.gather(*(self.chairs.player(seat, self.game, self.fresh) for seat in seats),
                                    return_exceptions=True)
        self.players.extend(p for p in made if not isinstance(p, BaseException))
        failed = [p for p in made if isinstance(p, BaseException)]
        if failed:
            for seat, outcome in zip(seats, made, strict=True):
                if isinstance(outcome, BaseException):
                    self.chairs.give_back(seat)
            if any(not isinstance(err, LaunchFailed) for err in failed):
                raise next(err for err in failed if not isinstance(err, LaunchFailed))
            return False
        return True

    async def play(
        self, rules: Rules, deals: DealSource, *, table_id: str, settings: TableSettings, seat_key: bytes | None,
        rounds: Callable[[Assignment, GameRecord, int], None] | None = None,
        asked: Callable[[Asked], None] | None = None,
    ) -> GameRecord:
        """Plays the game with the players seated; ``rounds(game, record, first)`` is given the rounds from
        ``first`` on as soon as each is played, and the rest when the game ends; ``asked``, each request to a
        seat and how it went, as it goes."""
        game = self.game
        written = 0

        def store(record: GameRecord) -> None:
            nonlocal written  # each round is handed on as soon as it is played
            assert rounds is not None
            rounds(game, record, written)
            written = len(record.rounds)

        record = await play_game(
            rules, self.players, deals, table_id=table_id, game_id=game.id, game_number=game.deal_set,
            first_dealer=game.first_dealer, settings=settings, on_round=None if rounds is None else store,
            seat_key=seat_key, on_asked=asked,
        )
        if rounds is not None and written < len(record.rounds):
            store(record)
        return record
