"""A worker's own arena side: the launched bots of its tables, started, seated and stopped by the worker.

When the workers play the tables of launched bots (:mod:`arena.event.play.placement`), each worker keeps a
:class:`Branch`: the services of a run of its own (:class:`~arena.event.play.services.Services`: a launcher and,
for ``command`` bots, an arena server on ``127.0.0.1`` port 0, and on a Unix socket in a private folder
where the bots are sandboxed), and a seating that takes seats exactly as the arena's process does. A chunk's
games are played at up to its share of the run's tables at once (``concurrency`` divided among the workers,
rounded up), each under the table's deadlines and fault handling, and come back as record lines; only the
arena writes them.

- ``stdio`` and ``bhoos`` bots, and ``command`` bots under ``fresh_process``, get processes of their own for
  each seat of each game, as in the arena's process.
- A long-lived ``command`` bot (``fresh_process = false``) is started once per branch, when the branch
  starts, and started again if it dies (up to ``restarts`` times, counted per worker), as the arena does.
  A worker process keeps its branch for as long as it lives; a Ray task's branch ends with the task.
- A game that cannot have its seats (a process that did not come up, a long-lived bot that did not
  connect within ``absent_after_s``) is not played: it goes back to the arena, with what the worker's
  launcher knows of the bots that broke, and the arena puts it back in the plan, as it does with its own.
- The bots' logs are written to ``logs/`` of the results folder, at the same path on the worker's machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Sequence
from multiprocessing import util
from pathlib import Path

from arena.core.dealing import DealSource
from arena.event.plan.schedule import Assignment
from arena.event.play.host import Host
from arena.event.play.kinds import SeatingMode
from arena.event.play.seats import Seat, Seating, SeatKind
from arena.event.play.services import Services
from arena.event.setup.botconfig import BotConfig
from arena.event.setup.config import TournamentConfig
from arena.event.setup.kinds import Backend
from arena.records.format import GameRecord

__all__ = ["Branch", "branch_for", "end_branch"]

SEAT_POLL_S = 0.02
"""How often a game waiting for a long-lived bot's free table looks again."""


class _Unseated(Exception):
    """A game's seats could not be had: a bot's process did not come up (or did not connect)."""

    def __init__(self, bot: str) -> None:
        super().__init__(bot)
        self.bot = bot


class Branch:
    """The launched bots of one worker for one run, and the tables it plays them at."""

    def __init__(self, config: TournamentConfig, folder: Path, bots: dict[str, BotConfig],
                 seat_key: bytes | None = None) -> None:
        # The worker's own run: one process, with no workers of its own; its server on this machine only.
        own = dataclasses.replace(config, workers=1, backend=Backend.LOCAL, host="127.0.0.1", port=0)
        self.config = own
        self.seat_key = seat_key
        """The event's key of the seat seeds."""
        self.bots = dict(bots)
        self.seating = Seating(own, self.bots, {})
        self.services = Services(own, folder, self.bots, self.seating, log=lambda text: None, changed=self._changed)
        self.loop = asyncio.new_event_loop()
        self._tables = asyncio.Semaphore(max(1, config.concurrency))
        self._seat_free: asyncio.Event | None = None
        self._started = False
        self._closed = False

    def _changed(self) -> None:
        if self._seat_free is not None:
            self._seat_free.set()

    def play(self, games: Sequence[tuple[Assignment, tuple[str | None, ...], DealSource]]) -> list[GameRecord | None]:
        """Plays games (each with the fallback's reason for each seat, or ``None``), at once up to the tables
        of the run; their records in the same order (``None``: not played, it goes back to the arena)."""
        return self.loop.run_until_complete(self._play(games))

    async def _play(
        self, games: Sequence[tuple[Assignment, tuple[str | None, ...], DealSource]],
    ) -> list[GameRecord | None]:
        if not self._started:
            self._seat_free = asyncio.Event()
            self.services.sandboxing = self.services.choose_sandbox()
            await self.services.start({}, ())
            self._started = True
        return list(await asyncio.gather(*(self._game(game, fallback, deals) for game, fallback, deals in games)))

    async def _take(self, bot: str, reason: str | None) -> Seat:
        """A seat for ``bot``: the fallback's, an in-process one, a process for the game, or a free table of
        the bot's long-lived session (waited for up to ``absent_after_s``)."""
        seating = self.seating
        if reason is not None:
            return Seat(bot, SeatKind.FALLBACK, reason=reason)
        mode = seating.mode(bot)
        if mode is SeatingMode.LOCAL:
            return Seat(bot, SeatKind.LOCAL)
        if mode is SeatingMode.FRESH:
            if not seating.present(bot):
                raise _Unseated(bot)
            return Seat(bot, SeatKind.FRESH)
        server, launcher = seating.server, seating.launcher
        assert server is not None and launcher is not None and self._seat_free is not None
        patience = time.monotonic() + (self.config.absent_after or 30.0)
        while True:
            if bot in launcher.broken:
                raise _Unseated(bot)
            player = server.seat(bot, bot)
            if player is not None:
                return Seat(bot, SeatKind.REMOTE, player)
            if time.monotonic() > patience:
                launcher.mark_broken(bot, f"it did not connect within {self.config.absent_after or 30.0:g} s of "
                                          "its start on a worker")
                raise _Unseated(bot)
            self._seat_free.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._seat_free.wait(), SEAT_POLL_S)

    async def _game(self, game: Assignment, fallback: tuple[str | None, ...], deals: DealSource) -> GameRecord | None:
        async with self._tables:
            seats: list[Seat] = []
            try:
                for bot, reason in zip(game.seats, fallback, strict=True):
                    seats.append(await self._take(bot, reason))
            except _Unseated:
                for seat in seats:
                    self.seating.give_back(seat)
                return None
            async with Host(self.seating, game) as host:
                if not await host.seat(seats):
                    return None
                return await host.play(self.config.rules, deals, table_id="t1", settings=self.config.table,
                                       seat_key=self.seat_key)

    @property
    def broken(self) -> dict[str, str]:
        """The bots this worker's launcher gave up on, and why."""
        launcher = self.seating.launcher
        return dict(launcher.broken) if launcher is not None else {}

    def close(self) -> None:
        """Stops the branch's bots and its server (they were told the tournament is over)."""
        if self._closed:
            return
        self._closed = True
        if self._started:
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(self.services.close(True, False))
        self.loop.close()


_BRANCH: tuple[tuple[str, str, bytes | None], Branch] | None = None
"""This worker's branch, and the run (tournament name, results folder, key of the seat seeds) it serves."""


def branch_for(config: TournamentConfig, folder: Path, bots: dict[str, BotConfig], seat_key: bytes | None = None,
               ) -> Branch:
    """This worker's branch for the run (``seat_key``: its key of the seat seeds), started at its first chunk (and
    one of an earlier run ended)."""
    global _BRANCH
    key = (config.name, str(folder), seat_key)
    if _BRANCH is not None and _BRANCH[0] == key:
        return _BRANCH[1]
    if _BRANCH is not None:
        _BRANCH[1].close()
    branch = Branch(config, folder, bots, seat_key)
    _BRANCH = (key, branch)
    # A worker process ends through multiprocessing's exit, which runs its finalizers (not atexit's).
    util.Finalize(branch, branch.close, exitpriority=10)
    return branch


def end_branch() -> None:
    """Ends this worker's branch, if it has one (a Ray task's, when the task is done)."""
    global _BRANCH
    if _BRANCH is not None:
        _BRANCH[1].close()
        _BRANCH = None
