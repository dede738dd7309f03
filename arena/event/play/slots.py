"""The tables of a run: a slot for each game that may be played at once, and the game played at each.

A game whose four bots are in-process and offer the fast path is played at once, without a table.
A game at a table gets its four players from the seating (the processes started for it start side
by side), writes each round as soon as it is played, and gives its players and processes back when
it ends. What came of a game at a table is put into the run's outcomes (:mod:`arena.event.play.outcomes`):
the game played, or put back to be played later when its launched bot did not come, or an error of the
arena itself (a bot's error is a fault), which ends the run; and the table free again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from arena.core.dealing import DealSource
from arena.core.rules import Rules
from arena.event.plan.schedule import Assignment
from arena.event.plan.status import TableState
from arena.event.play.host import Host
from arena.event.play.outcomes import Failed, Finished, Freed, Outcomes, PutBack
from arena.event.play.recorder import Recorder
from arena.event.play.seats import Seat, Seating, SeatKind
from arena.players.fast import play_fast
from arena.players.table import Asked, TableSettings
from arena.records.format import GameRecord

__all__ = ["Slots"]


class Slots:
    """The table slots and the games in play at them.

    ``recorder`` writes each round as soon as it is played; what came of a game at a table goes to
    ``outcomes``; ``spawn`` runs a coroutine as a task the runner looks after; ``asked``, if given, hears of
    each request to a seat at a table as it is answered (or not).
    """

    def __init__(
        self, concurrency: int, rules: Rules, settings: TableSettings, seating: Seating,
        deals: Callable[[int], DealSource], *, recorder: Recorder, outcomes: Outcomes,
        spawn: Callable[[Coroutine[Any, Any, None]], None], asked: Callable[[Asked], None] | None = None,
    ) -> None:
        self.rules, self.settings, self.seating = rules, settings, seating
        self.deals = deals
        self._recorder, self._outcomes, self._asked = recorder, outcomes, asked
        self._spawn = spawn
        self.free: list[int] = list(range(concurrency, 0, -1))
        """The free slots (the last is taken first)."""
        self._tables: dict[int, tuple[Assignment, list[str], float]] = {}
        """The game at each slot in play, the bots the fallback player sits for, and when it began."""
        self._rounds_done: dict[int, int] = {}
        self.seat_key: bytes | None = None
        """The event's key of the seat seeds, set by the runner once the results folder is open."""

    def start(self, game: Assignment, seats: list[Seat]) -> Finished | None:
        """Plays a game: at once through the fast path when all four bots offer it (the game played, its rounds
        written, is returned), else at a free slot (``None``: what comes of it goes to the outcomes)."""
        bots = self.seating.fast_bots(game, seats)
        record = None if bots is None else play_fast(
            self.rules, bots, game.seats, self.deals(game.deal_set), table_id="t0", game_id=game.id,
            game_number=game.deal_set, first_dealer=game.first_dealer,
        )
        if record is not None:
            self._recorder.rounds(game, record, 0)
            return Finished(game, record)
        slot = self.free.pop()
        self._spawn(self._play(game, seats, slot))
        return None

    def states(self) -> list[TableState]:
        """The tables in play, for the status."""
        now = time.monotonic()
        return [TableState(f"t{slot}", game.id, list(game.seats), fallback, self._rounds_done.get(slot, 0),
                           round(now - began, 1))
                for slot, (game, fallback, began) in sorted(self._tables.items())]

    async def _play(self, game: Assignment, seats: list[Seat], slot: int) -> None:
        self._tables[slot] = (game, [s.bot for s in seats if s.kind == SeatKind.FALLBACK], time.monotonic())
        self._rounds_done[slot] = 0

        def rounds(game: Assignment, record: GameRecord, first: int) -> None:
            self._recorder.rounds(game, record, first)
            self._rounds_done[slot] = len(record.rounds)

        outcomes = self._outcomes
        try:
            async with Host(self.seating, game) as host:
                try:
                    if not await host.seat(seats):
                        outcomes.put(PutBack(game))
                        return
                    record = await host.play(self.rules, self.deals(game.deal_set), table_id=f"t{slot}",
                                             settings=self.settings, seat_key=self.seat_key, rounds=rounds,
                                             asked=self._asked)
                    outcomes.put(Finished(game, record))
                except asyncio.CancelledError:
                    raise
                except BaseException as err:  # the arena's own failure (a bot's is a fault): it ends the run
                    outcomes.put(Failed(err))
        finally:
            del self._tables[slot]
            self.free.append(slot)
            outcomes.put(Freed())
