"""The tables of a run: a slot for each game that may be played at once, and the game played at each.

A game whose four bots are in-process and offer the fast path is played at once, without a table.
A game at a table gets its four players from the seating (the processes started for it start side
by side), writes each round as soon as it is played, and gives its players and processes back when
it ends. A game whose launched bot did not come is put back to be played later; an error of the
arena itself (a bot's error is a fault) ends the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from arena.core.dealing import DealSource
from arena.core.rules import Rules
from arena.event.dispatcher import Dispatcher
from arena.event.launcher import LaunchFailed
from arena.event.schedule import Assignment
from arena.event.seats import Seat, Seating, SeatKind
from arena.event.status import TableState
from arena.players.base import Player
from arena.players.fast import play_fast
from arena.players.table import TableSettings, play_game
from arena.records.format import GameRecord

__all__ = ["Slots"]


class Slots:
    """The table slots and the games in play at them.

    ``rounds(game, record, first)`` writes the rounds of a game from ``first`` on; ``finished(game, record)``
    records a game played; ``failed(err)`` ends the run with the arena's error; ``changed()`` is called when a
    slot is free again; ``spawn`` runs a coroutine as a task the runner looks after.
    """

    def __init__(
        self, concurrency: int, rules: Rules, settings: TableSettings, seating: Seating,
        dispatcher: Dispatcher[Seat], deals: Callable[[int], DealSource], *,
        rounds: Callable[[Assignment, GameRecord, int], None], finished: Callable[[Assignment, GameRecord], None],
        failed: Callable[[BaseException], None], changed: Callable[[], None],
        spawn: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        self.rules, self.settings, self.seating, self.dispatcher = rules, settings, seating, dispatcher
        self.deals = deals
        self._rounds, self._finished, self._failed = rounds, finished, failed
        self._changed, self._spawn = changed, spawn
        self.free: list[int] = list(range(concurrency, 0, -1))
        """The free slots (the last is taken first)."""
        self._tables: dict[int, tuple[Assignment, list[str], float]] = {}
        """The game at each slot in play, the bots the fallback player sits for, and when it began."""
        self._rounds_done: dict[int, int] = {}
        self.seat_key: bytes | None = None
        """The event's key of the seat seeds, set by the runner once the results folder is open."""

    def start(self, game: Assignment, seats: list[Seat]) -> None:
        """Plays a game: at once through the fast path when all four bots offer it, else at a free slot."""
        bots = self.seating.fast_bots(game, seats)
        record = None if bots is None else play_fast(
            self.rules, bots, game.seats, self.deals(game.deal_set), table_id="t0", game_id=game.id,
            game_number=game.deal_set, first_dealer=game.first_dealer,
        )
        if record is not None:
            self._rounds(game, record, 0)
            self._finished(game, record)
            return
        slot = self.free.pop()
        self._spawn(self._play(game, seats, slot))

    def states(self) -> list[TableState]:
        """The tables in play, for the status."""
        now = time.monotonic()
        return [TableState(f"t{slot}", game.id, list(game.seats), fallback, self._rounds_done.get(slot, 0),
                           round(now - began, 1))
                for slot, (game, fallback, began) in sorted(self._tables.items())]

    async def _play(self, game: Assignment, seats: list[Seat], slot: int) -> None:
        seating = self.seating
        players: list[Player] = []
        fresh: list[Any] = []
        self._tables[slot] = (game, [s.bot for s in seats if s.kind == SeatKind.FALLBACK], time.monotonic())
        self._rounds_done[slot] = 0
        try:
            # The four seats are made at once: processes started for the game start side by side.
            made = await asyncio.gather(*(seating.player(seat, game, fresh) for seat in seats),
                                        return_exceptions=True)
            players.extend(p for p in made if not isinstance(p, BaseException))
            failed = [p for p in made if isinstance(p, BaseException)]
            if failed:
                for seat, outcome in zip(seats, made, strict=True):
                    if isinstance(outcome, BaseException):
                        seating.give_back(seat)
                if any(not isinstance(err, LaunchFailed) for err in failed):
                    raise next(err for err in failed if not isinstance(err, LaunchFailed))
                self.dispatcher.put_back(game)
                return
            written = 0

            def store(record: GameRecord) -> None:
                nonlocal written  # each round is written as soon as it is played
                self._rounds(game, record, written)
                written = len(record.rounds)
                self._rounds_done[slot] = written

            record = await play_game(
                self.rules, players, self.deals(game.deal_set), table_id=f"t{slot}", game_id=game.id,
                game_number=game.deal_set, first_dealer=game.first_dealer, settings=self.settings, on_round=store,
                seat_key=self.seat_key,
            )
            if written < len(record.rounds):
                store(record)
            self._finished(game, record)
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # the arena's own failure (a bot's is a fault): it ends the run
            self._failed(err)
        finally:
            for player in players:
                await player.close()
            if seating.launcher is not None:
                for entry in fresh:
                    await seating.launcher.stop(entry)
            del self._tables[slot]
            self.free.append(slot)
            self._changed()
