"""Seats: how each kind of bot takes its seat at a game, and whether it can now.

- an in-process bot (``python = ...``) can always sit: each game gets a fresh instance, run in a
  worker thread of its own (:class:`~arena.players.local.LocalPlayer`);
- a remote or launched bot sits when one of its sessions has a free table;
- with ``fresh_process``, a launched bot sits by starting a process for the game, which must
  connect before the game begins;
- a ``stdio`` or ``bhoos`` bot always sits by starting a process for the seat and the game (a
  ``bhoos`` instance must answer ``GET /hi`` before the game begins);
- a ``bhoos_url`` bot (one already running elsewhere) sits at one table at a time, once it answers
  ``GET /hi``: it may keep the state of one seat of one game;
- the *fallback player* (:class:`~arena.players.base.AbsentPlayer`) sits for a bot taken out of
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

from arena.core.faults import FaultKind, PlayerFault
from arena.event.launch.launcher import Launcher
from arena.event.plan.manifest import BotStatus
from arena.event.plan.schedule import Assignment
from arena.event.play.dispatcher import BlockState
from arena.event.play.placement import launched_on_workers, shares_launched
from arena.event.setup.botconfig import BhoosBot, BhoosUrlBot, BotConfig, CommandBot, PythonBot, RemoteBot, StdioBot
from arena.event.setup.bots import load_bot_class, make_bot
from arena.event.setup.config import TournamentConfig
from arena.players.base import AbsentPlayer, Decision, Player, QuietPlayer
from arena.players.fast import has_fast_path
from arena.players.local import LocalPlayer
from arena.transports.bhoos.player import BhoosPlayer
from arena.transports.grpc.remote import RemotePlayer
from arena.transports.grpc.server import ArenaServer
from arena.transports.languages import flush_hint
from arena.transports.stdio import StdioPlayer

__all__ = ["BrokenPlayer", "Seat", "SeatKind", "Seating", "SeatingMode"]


class SeatingMode(enum.StrEnum):
    """How a bot takes a seat (a vocabulary of its own: not the bot's kind)."""

    LOCAL = "local"
    """In-process: it can always sit."""
    FRESH = "fresh"
    """A process launched for the game (or for the seat)."""
    SINGLE = "single"
    """A ``bhoos_url`` bot: one seat at a time."""
    REMOTE = "remote"
    """A table of one of its sessions."""


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


class BrokenPlayer(QuietPlayer):
    """The seat of an in-process bot that could not be made: its first decision is a ``crash``,
    after which the table plays the fallback to the end of the game."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        self.detail = detail

    async def decide(self, decision: Decision) -> tuple[object, float]:
        raise PlayerFault(FaultKind.CRASH, self.detail, gone=True)


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
        match self.bots[bot].setup:
            case PythonBot():
                return SeatingMode.LOCAL
            case StdioBot() | BhoosBot():
                return SeatingMode.FRESH
            case CommandBot():
                on_workers = self.elsewhere and (self.pooled(state) if state is not None else not self.shared)
                return SeatingMode.FRESH if self.config.fresh_process or on_workers else SeatingMode.REMOTE
            case BhoosUrlBot():
                return SeatingMode.SINGLE
            case RemoteBot():
                return SeatingMode.REMOTE

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
            self._busy.discard(seat.bot)

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
        bot = self.bots[seat.bot]
        if seat.kind is SeatKind.LOCAL:
            instance = self.make(seat.bot)
            if isinstance(instance, str):
                return BrokenPlayer(seat.bot, instance)
            return LocalPlayer(instance, seat.bot)
        # A process of its own for this game: it cannot remember an earlier replay of these deals.
        launcher = self.launcher
        assert launcher is not None
        label = f"seat {game.seats.index(seat.bot)} of game {game.id}"
        if isinstance(bot.setup, StdioBot):
            entry = await launcher.start_stdio(bot, label)
            fresh.append(entry)
            player = StdioPlayer(seat.bot, entry.process, start_allowance_s=bot.setup.start_timeout,
                                 unresponsive_after=self.config.unresponsive_after,
                                 flush_hint=flush_hint(bot.setup.argv, bot.setup.folder))
            entry.player = player
            return player
        if isinstance(bot.setup, BhoosBot):
            entry, endpoint = await launcher.start_bhoos(bot, label)
            fresh.append(entry)
            return BhoosPlayer(seat.bot, endpoint, process=entry.process,
                               unresponsive_after=self.config.unresponsive_after)
        if seat.kind is SeatKind.SINGLE:
            endpoint = await launcher.reach(bot)
            return BhoosPlayer(seat.bot, endpoint, unresponsive_after=self.config.unresponsive_after,
                               on_close=lambda: self._busy.discard(seat.bot))
        assert self.server is not None
        entry, session = await launcher.launch_for_game(
            bot, f"{seat.bot}@{game.id}", self.server.lobby.claim, self.config.absent_after or 30.0,
        )
        fresh.append(entry)
        return self.server.player(session, seat.bot)

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
