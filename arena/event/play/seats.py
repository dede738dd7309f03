"""Seats: who can sit now, and the player that takes each seat.

How a bot sits is its kind's (:mod:`arena.event.play.kinds`, which lists how each kind does); the seating adds who
is there: the *fallback player* (:class:`~arena.players.base.AbsentPlayer`) sits for a bot taken out of
the tournament in a block already under way, or for an absent bot under ``forfeit = "fallback"``.

A bot that cannot even be made (its class raises, ``SystemExit`` included) gets a seat that fails
every decision as a ``crash`` of that game: the game and the tournament go on.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena.event.launch.launcher import Launcher
from arena.event.plan.manifest import BotStatus
from arena.event.plan.schedule import Assignment
from arena.event.play.dispatcher import BlockState
from arena.event.play.kinds import BrokenPlayer, SeatingMode, kind_of
from arena.event.play.placement import launched_on_workers, shares_launched
from arena.event.setup.botconfig import BotConfig, PythonBot
from arena.event.setup.bots import load_bot_class, make_bot
from arena.event.setup.config import TournamentConfig
from arena.players.base import AbsentPlayer, Player
from arena.players.fast import has_fast_path
from arena.transports.grpc.remote import RemotePlayer
from arena.transports.grpc.server import ArenaServer

__all__ = ["Seat", "SeatKind", "Seating"]


class SeatKind(enum.StrEnum):
    """Who sits in a seat taken for a game: a bot's :class:`SeatingMode`, or a stand-in for it."""

    LOCAL = SeatingMode.LOCAL.value
    """An in-process bot."""
    FRESH = SeatingMode.FRESH.value
    """A process to launch for the game."""
    SINGLE = SeatingMode.SINGLE.value
    """A ``bhoos_url`` bot's one seat, taken."""
    REMOTE = SeatingMode.REMOTE.value
    """A session's table, taken."""
    FALLBACK = "fallback"
    """The fallback player."""
    BROKEN = "broken"
    """An in-process bot that could not be made."""


@dataclasses.dataclass
class Seat:
    """A seat taken for a game that is about to start."""

    bot: str
    kind: SeatKind
    remote: RemotePlayer | None = None
    reason: str = ""


class Seating:
    """Who can sit now, and the players that take the seats."""

    def __init__(
        self, config: TournamentConfig, bots: Mapping[str, BotConfig], statuses: Mapping[str, BotStatus],
    ) -> None:
        self.config = config
        self.bots = bots
        self.statuses = statuses
        self.server: ArenaServer | None = None
        self.launcher: Launcher | None = None
        self.elsewhere = launched_on_workers(config)
        """The workers play the tables of launched bots: each seat of one there is taken as a process for the game."""
        self.shared = shares_launched(config)
        """Some tables of the launched bots are the arena's (with a remote bot at them): their long-lived bots
        sit there as the arena's own sessions, and :attr:`pooled` tells the two kinds of table apart."""
        self.pooled: Callable[[BlockState], bool] = lambda state: self.elsewhere
        """True when the games of a block are played by the workers (the collector's rule, once it is open)."""
        self.forfeiting: set[str] = set()
        """Absent bots whose seats the fallback player takes, under ``forfeit = "fallback"``."""
        self.started = time.monotonic()
        self._factories: dict[str, Callable[..., Any]] = {}
        self._fast: dict[str, bool] = {}
        self._busy: set[str] = set()
        """``bhoos_url`` bots seated at a game now (each plays one seat at a time)."""

    # -- presence ------------------------------------------------------------------------------------

    def mode(self, bot: str, state: BlockState | None = None) -> SeatingMode:
        """How the bot takes a seat (at a game of ``state``'s block; without one, at the arena's own tables
        when some are, as presence is judged)."""
        on_workers = self.elsewhere and (self.pooled(state) if state is not None else not self.shared)
        return kind_of(self.bots[bot]).mode(self.config.fresh_process or on_workers)

    def present(self, bot: str) -> bool:
        """True when the bot is there to play (connected, or in-process)."""
        mode = self.mode(bot)
        if mode is SeatingMode.LOCAL:
            return True
        if self.launcher is not None and bot in self.launcher.broken:
            return False
        if mode in (SeatingMode.FRESH, SeatingMode.SINGLE):
            return True
        return self.server is not None and self.server.lobby.present(bot)

    def absent_for(self, bot: str) -> float:
        """Seconds since the bot was last there (since the run began, if never); infinite when broken."""
        if self.launcher is not None and bot in self.launcher.broken:
            return math.inf
        seen = self.server.lobby.last_seen.get(bot, 0.0) if self.server is not None else 0.0
        return time.monotonic() - max(self.started, seen)

    def why_absent(self, bot: str) -> str:
        """Why the bot is not there, in words."""
        if self.launcher is not None and bot in self.launcher.broken:
            return self.launcher.broken[bot]
        if self.server is not None and bot in self.server.lobby.last_seen:
            return f"not connected for {self.absent_for(bot):.0f} s"
        return f"never connected in {self.absent_for(bot):.0f} s"

    def fallback_reason(self, bot: str) -> str:
        """Why the fallback player takes the bot's seat, in words."""
        status = self.statuses.get(bot)
        if status is not None and status.status != "absent":
            return f"{bot} is {status.status}: {status.reason}"
        return f"{bot} is absent: {self.why_absent(bot)}"

    # -- taking seats -------------------------------------------------------------------------------

    def take(self, bot: str, state: BlockState) -> Seat | None:
        """A seat for ``bot`` at a game of ``state``'s block, or ``None`` when it cannot sit now."""
        if bot in state.fallback:
            return Seat(bot, SeatKind.FALLBACK, reason=self.fallback_reason(bot))
        mode = self.mode(bot, state)
        if mode is SeatingMode.LOCAL:
            return Seat(bot, SeatKind.LOCAL)
        if mode is SeatingMode.FRESH:
            return Seat(bot, SeatKind.FRESH) if self.present(bot) else self._forfeit(bot)
        if mode is SeatingMode.SINGLE:
            if not self.present(bot):
                return self._forfeit(bot)
            if bot in self._busy:
                return None
            self._busy.add(bot)
            return Seat(bot, SeatKind.SINGLE)
        assert self.server is not None
        player = self.server.seat(bot, bot)
        if player is not None:
            return Seat(bot, SeatKind.REMOTE, player)
        return self._forfeit(bot)

    def _forfeit(self, bot: str) -> Seat | None:
        if bot in self.forfeiting and not self.present(bot):
            return Seat(bot, SeatKind.FALLBACK, reason=self.fallback_reason(bot))
        return None

    def can_sit(self, bot: str, state: BlockState) -> bool:
        """:meth:`take` without taking anything."""
        mode = self.mode(bot, state)
        if bot in state.fallback or mode is SeatingMode.LOCAL:
            return True
        if not self.present(bot):
            return bot in self.forfeiting
        if mode is SeatingMode.SINGLE:
            return bot not in self._busy
        return mode is SeatingMode.FRESH or (self.server is not None and self.server.lobby.free_tables(bot) > 0)

    def give_back(self, seat: Seat) -> None:
        """Returns a seat taken for a game that did not start."""
        if seat.remote is not None and self.server is not None:
            self.server.lobby.give_back(seat.remote.session)
        if seat.kind is SeatKind.SINGLE:
            self.release(seat.bot)

    async def stop(self, fresh: Sequence[Any]) -> None:
        """Stops the processes launched for a game (those :meth:`player` appended to its ``fresh``)."""
        if self.launcher is not None:
            for entry in fresh:
                await self.launcher.stop(entry)

    async def player(self, seat: Seat, game: Assignment, fresh: list[Any]) -> Player:
        """The player of a seat; a process launched for the game is appended to ``fresh``.

        Raises :class:`~arena.event.launch.launcher.LaunchFailed` when such a process does not connect (or,
        for a Bhoos bot, does not answer ``GET /hi`` in time).
        """
        if seat.kind is SeatKind.FALLBACK:
            return AbsentPlayer(seat.bot, seat.reason)
        if seat.kind is SeatKind.BROKEN:
            return BrokenPlayer(seat.bot, seat.reason)
        if seat.kind is SeatKind.REMOTE:
            assert seat.remote is not None
            return seat.remote
        return await kind_of(self.bots[seat.bot]).player(self, self.bots[seat.bot], game, fresh)

    def release(self, bot: str) -> None:
        """Frees the one seat of a ``bhoos_url`` bot, as its game ends."""
        self._busy.discard(bot)

    def factory(self, name: str) -> Callable[..., Any]:
        """The class (or function) of an in-process bot, loaded once."""
        if name not in self._factories:
            setup = self.bots[name].setup
            assert isinstance(setup, PythonBot)
            self._factories[name] = load_bot_class(setup.spec)
        return self._factories[name]

    def make(self, name: str) -> Any:
        """A fresh instance of an in-process bot, or why it could not be made (a ``str``)."""
        bot = self.bots[name]
        try:
            return make_bot(self.factory(name), bot.seed, bot.options)
        except BaseException as err:
            return f"creating the bot raised {type(err).__name__}: {err}"

    def fast_bots(self, game: Assignment, seats: list[Seat]) -> list[Any] | None:
        """Instances for the in-process fast path, when all four seats are in-process bots that
        offer it; else ``None``."""
        if any(seat.kind is not SeatKind.LOCAL for seat in seats):
            return None
        bots = []
        for index, name in enumerate(game.seats):
            if self._fast.get(name) is False:
                return None
            instance = self.make(name)
            if isinstance(instance, str):  # the normal table records the failure
                seats[index] = Seat(name, SeatKind.BROKEN, reason=instance)
                return None
            self._fast[name] = has_fast_path(instance)
            if not self._fast[name]:
                return None
            bots.append(instance)
        return bots

    def sequential(self, state: BlockState) -> bool:
        """True when the games of the block are played here one after another, as they start: four in-process bots
        that offer the fast path, none of them replaced by the fallback player (the dispatcher's lane)."""
        if state.fallback:
            return False
        for name in state.block.order:
            if self.mode(name) is not SeatingMode.LOCAL:
                return False
            if name not in self._fast:
                instance = self.make(name)
                self._fast[name] = not isinstance(instance, str) and has_fast_path(instance)
            if not self._fast[name]:
                return False
        return True
