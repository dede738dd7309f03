"""The kinds of bot, one class each: how a bot of the kind takes a seat and becomes a player, which services of
a run it needs, whether a worker can play it, and what check-bot says of it.

- an in-process bot (``python = ...``) can always sit: each game gets a fresh instance, run in a
  worker thread of its own (:class:`~arena.players.local.LocalPlayer`);
- a ``command`` bot sits when one of its sessions has a free table; with ``fresh_process``, or on a worker,
  it sits by starting a process for the game, which must connect before the game begins;
- a ``stdio`` or ``bhoos`` bot always sits by starting a process for the seat and the game (a
  ``bhoos`` instance must answer ``GET /hi`` before the game begins);
- a ``bhoos_url`` bot (one already running elsewhere) sits at one table at a time, once it answers
  ``GET /hi``: it may keep the state of one seat of one game;
- a ``remote`` bot connects by itself, and sits when one of its sessions has a free table.

:func:`kind_of` gives a bot's class; the seating (:mod:`arena.event.play.seats`), the services, the placement,
the collector, the workers and check-bot ask it rather than the bot's kind. A bot's configuration is read in
:mod:`arena.event.setup.botconfig`; its processes are the launcher's (:mod:`arena.event.launch.launcher`),
whose primitives a kind's :meth:`Kind.player` calls. A new kind is a transport, a member of
:class:`~arena.event.setup.kinds.BotKind`, its setup in ``botconfig.py`` and its class here, in :data:`KINDS`.
"""

from __future__ import annotations

import dataclasses
import enum
from pathlib import Path
from typing import Any, ClassVar, Protocol

from arena.core.faults import FaultKind, PlayerFault
from arena.event.launch.launcher import Launcher
from arena.event.plan.schedule import Assignment
from arena.event.setup.botconfig import (
    BhoosBot,
    BhoosUrlBot,
    BotConfig,
    BotSetup,
    CommandBot,
    LaunchedBot,
    PythonBot,
    RemoteBot,
    StdioBot,
)
from arena.event.setup.config import TournamentConfig
from arena.event.setup.kinds import BotKind
from arena.players.base import Decision, Player, QuietPlayer
from arena.players.local import LocalPlayer
from arena.transports.bhoos.player import BhoosPlayer
from arena.transports.grpc.server import ArenaServer
from arena.transports.grpc.tokens import new_token, token_sha256
from arena.transports.languages import flush_hint
from arena.transports.stdio import StdioPlayer

__all__ = ["KINDS", "BrokenPlayer", "Kind", "SeatingMode", "Seats", "kind_of"]


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


class BrokenPlayer(QuietPlayer):
    """The seat of an in-process bot that could not be made: its first decision is a ``crash``,
    after which the table plays the fallback to the end of the game."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        self.detail = detail

    async def decide(self, decision: Decision) -> tuple[object, float]:
        raise PlayerFault(FaultKind.CRASH, self.detail, gone=True)


class Seats(Protocol):
    """What a kind needs of the seating to make a player (:class:`arena.event.play.seats.Seating`)."""

    config: TournamentConfig
    launcher: Launcher | None
    server: ArenaServer | None

    def make(self, name: str) -> Any:
        """A fresh instance of an in-process bot, or why it could not be made (a ``str``)."""

    def release(self, bot: str) -> None:
        """Frees the one seat of a bot that plays one seat at a time."""


class Kind:
    """How the bots of one kind play; each kind's class says what differs from these defaults."""

    setup: ClassVar[type[BotSetup]]
    """The kind's configuration (:mod:`arena.event.setup.botconfig`), which names its kind."""
    in_process: ClassVar[bool] = False
    """Its games run in the arena's process, or a worker's: an instance of its class per game."""
    served: ClassVar[bool] = False
    """It plays over gRPC: the arena server runs when a tournament has one."""
    reached: ClassVar[bool] = False
    """The launcher looks after it though it does not start it (it checks that it answers)."""
    check_profiles: ClassVar[tuple[str, ...]] = ()
    """The rules profiles check-bot checks it under when none is named (none: every profile)."""
    first_check: ClassVar[str] = "starts and connects"
    """The name of check-bot's first check of it."""
    starts_on_first_request: ClassVar[bool] = False
    """Its process starts as the first request of its game is sent: that answer's time holds the start."""

    @property
    def kind(self) -> BotKind:
        return self.setup.kind

    @property
    def launched(self) -> bool:
        """The arena starts its processes (sandboxed and limited alike)."""
        return issubclass(self.setup, LaunchedBot)

    @property
    def looked_after(self) -> bool:
        """The launcher looks after it: it starts its processes, or checks that it answers."""
        return self.launched or self.reached

    def on_workers(self, launches: bool) -> bool:
        """A worker plays it: an in-process bot always, a launched one when the workers launch the launched bots
        (``launches``), no other."""
        return self.in_process or (launches and self.launched)

    def mode(self, fresh: bool) -> SeatingMode:
        """How it takes a seat; ``fresh``: a game of it should start processes of its own (``fresh_process``, or a
        worker's table)."""
        return SeatingMode.FRESH

    async def player(self, seats: Seats, bot: BotConfig, game: Assignment, fresh: list[Any]) -> Player:
        """The player of its seat made as ``game`` starts; a process launched for the game is appended to ``fresh``.

        Raises :class:`~arena.event.launch.launcher.LaunchFailed` when such a process does not come up."""
        raise TypeError(f"a {self.kind} bot sits at a table of its session, taken with its seat")

    def admitted(self, bot: BotConfig, fresh_process: bool) -> tuple[BotConfig, str]:
        """The bot as a run's arena server admits it, and the SHA-256 digest of its token ("": none)."""
        return bot, ""

    def sandbox_refusal(self, bot: BotConfig, fix: str) -> str:
        """Why ``bot`` cannot run without the sandbox, which this machine does not give for the reason ``fix``
        ("": it can)."""
        return ""

    def shipped(self, bot: BotConfig, launches: bool) -> BotConfig | None:
        """The bot as a worker gets it (``launches``: the workers launch the launched bots), or ``None`` when a
        worker does not play it."""
        return bot if self.on_workers(launches) else None

    def check_lines(self, value: str, token: str, folder: str) -> str:
        """The lines after its name of the ``[[bots]]`` table of check-bot's bot under test: ``value`` its class,
        command or URL, ``token`` a remote bot's token, ``folder`` the line of its folder ("": none)."""
        return f"{self.kind} = {value}\n{folder}"


def _label(bot: BotConfig, game: Assignment) -> str:
    """The seat and game of a process started for one seat of one game, as its log names them."""
    return f"seat {game.seats.index(bot.name)} of game {game.id}"


def _launcher(seats: Seats) -> Launcher:
    assert seats.launcher is not None
    return seats.launcher


class Python(Kind):
    setup = PythonBot
    in_process = True
    first_check = "loads and plays"

    def mode(self, fresh: bool) -> SeatingMode:
        return SeatingMode.LOCAL

    async def player(self, seats: Seats, bot: BotConfig, game: Assignment, fresh: list[Any]) -> Player:
        instance = seats.make(bot.name)
        if isinstance(instance, str):
            return BrokenPlayer(bot.name, instance)
        return LocalPlayer(instance, bot.name)

    def shipped(self, bot: BotConfig, launches: bool) -> BotConfig | None:
        """A class named by its file is named by its absolute path (a Ray worker starts elsewhere)."""
        assert isinstance(bot.setup, PythonBot)
        module, _, cls = bot.setup.spec.rpartition(":")
        if module.endswith(".py"):
            return dataclasses.replace(bot, setup=PythonBot(f"{Path(module).resolve()}:{cls}"))
        return bot


class Command(Kind):
    setup = CommandBot
    served = True

    def mode(self, fresh: bool) -> SeatingMode:
        return SeatingMode.FRESH if fresh else SeatingMode.REMOTE

    async def player(self, seats: Seats, bot: BotConfig, game: Assignment, fresh: list[Any]) -> Player:
        # A process of its own for this game: it cannot remember an earlier replay of these deals.
        assert seats.server is not None
        entry, session = await _launcher(seats).launch_for_game(
            bot, f"{bot.name}@{game.id}", seats.server.lobby.claim, seats.config.absent_after or 30.0,
        )
        fresh.append(entry)
        return seats.server.player(session, bot.name)

    def admitted(self, bot: BotConfig, fresh_process: bool) -> tuple[BotConfig, str]:
        """A long-lived process gets a token fresh for each run (its restarts keep it); one launched per game
        gets its own as it starts."""
        if fresh_process:
            return bot, ""
        token = new_token()
        assert isinstance(bot.setup, CommandBot)
        return dataclasses.replace(bot, setup=dataclasses.replace(bot.setup, token=token)), token_sha256(token)


class Stdio(Kind):
    setup = StdioBot
    starts_on_first_request = True

    async def player(self, seats: Seats, bot: BotConfig, game: Assignment, fresh: list[Any]) -> Player:
        setup = bot.setup
        assert isinstance(setup, StdioBot)
        entry = await _launcher(seats).start_stdio(bot, _label(bot, game))
        fresh.append(entry)
        player = StdioPlayer(bot.name, entry.process, start_allowance_s=setup.start_timeout,
                             unresponsive_after=seats.config.unresponsive_after,
                             flush_hint=flush_hint(setup.argv, setup.folder))
        entry.player = player
        return player


class Bhoos(Kind):
    setup = BhoosBot
    check_profiles = ("bhoos",)  # a contest bot plays by the contest's rules (calls 1 to 8), which no other shares

    async def player(self, seats: Seats, bot: BotConfig, game: Assignment, fresh: list[Any]) -> Player:
        entry, endpoint = await _launcher(seats).start_bhoos(bot, _label(bot, game))
        fresh.append(entry)
        return BhoosPlayer(bot.name, endpoint, process=entry.process,
                           unresponsive_after=seats.config.unresponsive_after)

    def sandbox_refusal(self, bot: BotConfig, fix: str) -> str:
        assert isinstance(bot.setup, BhoosBot)
        return (f"bot {bot.name!r} is a bhoos bot, and each of its instances needs a network namespace of its own "
                f"(they all listen on port {bot.setup.port}), which only the bubblewrap sandbox gives, but {fix}, "
                "or start the bot yourself and give it as bhoos_url = \"http://host:port\"")


class BhoosUrl(Kind):
    setup = BhoosUrlBot
    reached = True
    check_profiles = Bhoos.check_profiles

    def mode(self, fresh: bool) -> SeatingMode:
        return SeatingMode.SINGLE

    async def player(self, seats: Seats, bot: BotConfig, game: Assignment, fresh: list[Any]) -> Player:
        endpoint = await _launcher(seats).reach(bot)
        return BhoosPlayer(bot.name, endpoint, unresponsive_after=seats.config.unresponsive_after,
                           on_close=lambda: seats.release(bot.name))


class Remote(Kind):
    setup = RemoteBot
    served = True

    def mode(self, fresh: bool) -> SeatingMode:
        return SeatingMode.REMOTE

    def admitted(self, bot: BotConfig, fresh_process: bool) -> tuple[BotConfig, str]:
        assert isinstance(bot.setup, RemoteBot)
        return bot, bot.setup.digest

    def check_lines(self, value: str, token: str, folder: str) -> str:
        return f"remote = true\ntoken = {token}\n"


KINDS: dict[BotKind, Kind] = {kind.kind: kind for kind in (Python(), Command(), Stdio(), Bhoos(), BhoosUrl(), Remote())}
"""Each kind's class, by its kind, in the order check-bot lists them."""


def kind_of(bot: BotConfig) -> Kind:
    """The class of ``bot``'s kind."""
    return KINDS[bot.kind]
