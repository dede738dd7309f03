"""A person's sitting at a browser table: one deal set against three bots, recorded as a tournament's; and the
sittings a site holds at once (:class:`Sittings`).

A :class:`Sitting` is a gauntlet of one deal set whose champion is the person: the same deals four times, the
seats rotated, as every block of a tournament is played. Its results folder is a tournament's (a manifest, then a
line of ``records.jsonl`` per round, written as each round ends), so ``replay``, ``report`` and ``verify`` read it
as any other; ``verify`` passes once the four games are played. The games are hosted as every game is
(:class:`~arena.event.play.host.Host`), the person's seat a :class:`~arena.players.web.WebSeat`, which never runs
out of time. Each bot is any ``[[bots]]`` table but a remote one (a bot that connects by itself plays where it
connects), seated as a tournament seats it (:class:`~arena.event.play.seats.Seating`, its launcher and sandbox
started by :class:`~arena.event.play.services.Services`): an in-process bot a fresh instance in a thread of its
own, a launched one a process of its own for each game (``fresh_process``), stopped when the game ends. A launch
that fails leaves that game's seat to the fallback player, as ``forfeit = "fallback"`` does. Between two games
the sitting waits for the person to ask for the next (:meth:`Sitting.next_game`); when it stops, played through
or not, every process it launched is stopped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp

from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.errors import ConfigError
from arena.event.check import OPPONENTS
from arena.event.launch.launcher import LaunchFailed
from arena.event.plan.schedule import Assignment
from arena.event.play.host import Host
from arena.event.play.recorder import Recorder
from arena.event.play.seats import Seat, Seating, SeatKind
from arena.event.play.services import Services
from arena.event.run.preparation import identity, prepare
from arena.event.setup.config import TournamentConfig, parse_config
from arena.event.setup.sandboxing import SandboxSettings, sandbox_table
from arena.event.setup.tables import toml_value
from arena.players.base import AbsentPlayer, Player
from arena.players.web import WebSeat
from arena.records.format import GameRecord
from arena.records.store import ResultsStore
from arena.transports.grpc.tokens import new_token

__all__ = ["PERSON", "Held", "Sitting", "Sittings", "opponent_spec"]

PERSON = "you"
"""The person's name in the records."""
PERSON_RETRIES = 100
"""A person is never hurried; only a hundred refusals in a row of one decision let the arena play for them."""
_LOG = logging.getLogger(__name__)


def opponent_spec(name: str) -> str:
    """The ``module:Class`` of an opponent given as a sample bot's name or as ``FILE.py:CLASS``; a
    :class:`ConfigError` in words for anything else."""
    if name in OPPONENTS:
        return OPPONENTS[name]
    if ":" in name:
        return name
    raise ConfigError(f"{name!r} is not a bot to play against: name a sample bot ({', '.join(OPPONENTS)}) or a "
                      "class of your own as path/to/bot.py:Class")


def _bot_table(opponent: str | Mapping[str, Any], seat: int) -> dict[str, Any]:
    """The ``[[bots]]`` table of the opponent in ``seat`` (1-3), named apart from the other two."""
    if isinstance(opponent, str):
        label = opponent if opponent in OPPONENTS else opponent.rpartition(":")[2].lower()
        return {"name": f"{label}-{seat}", "python": opponent_spec(opponent), "seed": seat}
    return {**opponent, "name": f"{opponent['name']}-{seat}", "seed": seat}


def _config_text(rules: Rules, seed: int, bots: Sequence[Mapping[str, Any]], deadline_ms: int,
                 sandbox: str | SandboxSettings) -> str:
    rules_lines = "\n".join(f"{key} = {json.dumps(value)}" for key, value in rules.to_dict().items())
    tables = "".join("\n[[bots]]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in bot.items())
                     for bot in bots)
    return (f"[tournament]\nname = \"play\"\nseed = {seed}\ndeal_sets = 1\nformat = \"gauntlet\"\n"
            f"fresh_process = true\n\n[gauntlet]\nchampion = \"{PERSON}\"\n\n[rules]\n{rules_lines}\n\n"
            f"[time]\ndeadline_ms = {deadline_ms}\n\n[faults]\nmax_retries = {PERSON_RETRIES}\n\n"
            f"[sandbox]\n{sandbox_table(sandbox)}\n"
            f"[[bots]]\nname = \"{PERSON}\"\nremote = true\ntoken = \"{new_token()}\"\n{tables}")


class Sitting:
    """One deal set of a person against three bots, played game after game into a results folder.

    ``opponents`` are sample bots' names, ``FILE.py:CLASS`` or ``[[bots]]`` tables; ``deadline_ms`` is the
    bots' time for each decision (0: none); ``sandbox`` the ``[sandbox] mode`` launched bots run under, or the whole
    table;
    ``records`` what the page calls the folder once the deal set is over (empty: the folder itself, with the
    commands that read it)."""

    def __init__(self, rules: Rules, seed: int, opponents: Sequence[str | Mapping[str, Any]], folder: Path, *,
                 deadline_ms: int = 0, sandbox: str | SandboxSettings = "auto", records: str = "") -> None:
        if len(opponents) != 3:
            raise ConfigError(f"a table has three bots besides you, not {len(opponents)}")
        if seed < 0:
            raise ConfigError(f"the seed must be 0 or more, not {seed}")
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise ConfigError(f"{folder} is not an empty folder: name a new one for this sitting's records")
        self.rules = rules
        self.seed = seed
        self.folder = folder
        self.records = records
        bots = [_bot_table(opponent, seat) for seat, opponent in enumerate(opponents, start=1)]
        self.config: TournamentConfig = parse_config(_config_text(rules, seed, bots, deadline_ms, sandbox),
                                                     Path.cwd() / "play.toml")
        self._bots = {bot.name: bot for bot in self.config.bots if bot.name != PERSON}
        remote = [name for name, bot in self._bots.items() if bot.kind == "remote"]
        if remote:
            raise ConfigError(f"{remote[0]} is a remote bot, which plays only where it connects: a sitting seats "
                              "bots it can make or start itself")
        self._seating = Seating(self.config, self._bots, {})
        self._services = Services(self.config, folder, self._bots, self._seating, log=_LOG.warning,
                                  changed=lambda: None)
        self._services.check()  # a bot that cannot be made, a sandbox that cannot be had: refused now
        self.seat = WebSeat(PERSON)
        """The person's seat of the game in play (a new one for each game)."""
        self.games: list[Assignment] = []
        self.number = 0
        """The game in play, from 1 (0 before the first)."""
        self._next = asyncio.Event()
        self._store = ResultsStore(folder)
        self._seat_key: bytes | None = None
        """The key of the sitting's seat seeds, made with its folder."""

    def _plan(self) -> None:
        ready = prepare(self.config, [], None, identity(self.config), folder=self.folder,
                        where=str(self._store.manifest_path), deal_sets=range(1, 2), standings=dict)
        self.games = [game for block in ready.manifest.plan.blocks() for game in block.games(self.config.rotation)]
        self._seat_key = self._store.seat_key()  # a random one, kept in the folder as a tournament's is
        self._store.write_manifest(ready.manifest.to_dict())

    @property
    def done(self) -> bool:
        """Every game of the deal set is played (from the end of the last, before its processes are stopped)."""
        return bool(self.games) and self.number == len(self.games) and self.seat.state.over

    def next_game(self) -> str | None:
        """The person asks for the next game: ``None``, or why there is none now, in words."""
        if self.done:
            return "The deal set is over: every game of it is played"
        if not self.seat.state.over:
            return "This game is not over yet: finish it first"
        self._next.set()
        return None

    async def play(self) -> None:
        """Plans the deal set, writes the manifest, and plays its games in turn, each recorded as it is played;
        the launcher and the server its bots need run until it returns, or is cancelled."""
        self._plan()
        recorder = Recorder(self._store, self.config)
        finished = False
        try:
            await self._services.start({}, ())
            for number, game in enumerate(self.games, start=1):
                if number > 1:
                    await self._next.wait()
                    self._next.clear()
                    ended, self.seat = self.seat, WebSeat(PERSON)
                    self.seat.state.version = ended.state.version + 1  # a page's versions only go up
                    ended.bump()  # the pages waiting on the game that ended see the new one
                self.number = number
                await self._play(game, recorder)
            finished = True
        finally:
            await self._services.close(finished, False)
            self._store.close()

    def _seat(self, name: str) -> Seat:
        """The seat of ``name`` for a game: the person's, the bot's own, or the fallback player's once its launches
        are spent."""
        if name == PERSON:
            return Seat(name, SeatKind.REMOTE)  # the configuration's remote bot: its player is the page's seat
        seating = self._seating
        if not seating.present(name):
            return Seat(name, SeatKind.FALLBACK, reason=seating.fallback_reason(name))
        return Seat(name, SeatKind(seating.mode(name).value))

    async def _play(self, game: Assignment, recorder: Recorder) -> GameRecord:
        async with Host(_Chairs(self._seating, self.seat), game) as host:
            await host.seat([self._seat(name) for name in game.seats])  # a launch that fails seats the fallback
            return await host.play(self.config.rules, seeded_deals(self.seed, game.deal_set), table_id="web",
                                   settings=self.config.table, seat_key=self._seat_key, rounds=recorder.rounds)


class _Chairs:
    """The players of a sitting's game: the person's page, and each bot seated as a tournament seats it, the
    fallback player in the seat of a bot whose process for the game did not start."""

    def __init__(self, seating: Seating, person: WebSeat) -> None:
        self.seating = seating
        self.person = person

    async def player(self, seat: Seat, game: Assignment, fresh: list[Any]) -> Player:
        if seat.bot == PERSON:
            return self.person
        try:
            return await self.seating.player(seat, game, fresh)
        except LaunchFailed:
            launcher = self.seating.launcher
            why = launcher.broken.get(seat.bot, "") if launcher is not None else ""
            return AbsentPlayer(seat.bot, why or f"{seat.bot}'s process for this game did not start (its log says why)")

    def give_back(self, seat: Seat) -> None:
        self.seating.give_back(seat)

    async def stop(self, fresh: Sequence[Any]) -> None:
        await self.seating.stop(fresh)


@dataclasses.dataclass
class Held:
    """A sitting a site holds: its number, whose it is, its page, and when its person last asked for anything."""

    number: int
    owner: str
    sitting: Sitting
    page: ASGIApp
    seen: float = dataclasses.field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None

    @property
    def in_play(self) -> bool:
        """Its deal set is being played: neither played through nor stopped."""
        return not self.sitting.done and self.task is not None and not self.task.done()

    def touch(self) -> None:
        """Its person asked for something: it is not idle."""
        self.seen = time.monotonic()


class Sittings:
    """The sittings a site holds at once, their records in ``folder/NNNNNN``: at most one in play for each
    owner and ``at_once`` in all. A sitting whose person has asked for nothing for ``idle_s`` seconds is stopped
    (its launched bots with it) and forgotten, played through or not; :meth:`stop` stops them all."""

    def __init__(self, folder: Path, *, at_once: int = 4, idle_s: float = 1800.0) -> None:
        self.folder = folder
        self.at_once = at_once
        self.idle_s = idle_s
        self._held: dict[int, Held] = {}
        self._playing: set[asyncio.Task[None]] = set()
        """The sittings' own tasks, until each has stopped its bots (after its :class:`Held` is forgotten)."""
        self._last: int | None = None
        """The number of the newest folder of sittings (found when the first sitting is made)."""

    def refusal(self, owner: str) -> str | None:
        """Why ``owner`` may not start a sitting now, in one sentence, or ``None``."""
        mine = next((held for held in self._held.values() if held.owner == owner and held.in_play), None)
        if mine is not None:
            return (f"you have a sitting in play already: finish it at /play/{mine.number}/ (or leave it for "
                    f"{self.idle_s / 60:g} minutes) before you start another")
        if sum(held.in_play for held in self._held.values()) >= self.at_once:
            return (f"as many sittings are in play as the ladder holds at once ({self.at_once}): try again when "
                    "one of them ends")
        return None

    def next_folder(self) -> tuple[int, Path]:
        """The number and folder of the next sitting (a folder that does not exist yet)."""
        if self._last is None:
            found = [int(path.name) for path in self.folder.glob("[0-9]" * 6) if path.is_dir()]
            self._last = max(found, default=0)
        number = self._last + 1
        while (self.folder / f"{number:06d}").exists():
            number += 1
        return number, self.folder / f"{number:06d}"

    def hold(self, number: int, owner: str, sitting: Sitting, page: ASGIApp) -> Held:
        """Starts playing ``sitting`` (number ``number``, from :meth:`next_folder`), served by ``page``."""
        self._last = max(self._last or 0, number)
        held = Held(number, owner, sitting, page)
        self._held[number] = held
        held.task = asyncio.get_running_loop().create_task(self._run(held))
        return held

    def get(self, number: int) -> Held | None:
        return self._held.get(number)

    def in_play(self) -> list[Held]:
        """The sittings being played now."""
        return [held for held in self._held.values() if held.in_play]

    async def _run(self, held: Held) -> None:
        """Plays ``held``'s sitting until its person has been idle for :attr:`idle_s` (or it failed), then forgets
        it."""
        playing = asyncio.ensure_future(held.sitting.play())
        self._playing.add(playing)
        playing.add_done_callback(self._playing.discard)
        try:
            while (left := held.seen + self.idle_s - time.monotonic()) > 0:
                if playing.done():
                    await asyncio.sleep(left)
                    continue
                await asyncio.wait((playing,), timeout=left)
                if playing.done() and not playing.cancelled() and playing.exception() is not None:
                    _LOG.error("sitting %d failed", held.number, exc_info=playing.exception())
                    return
        finally:
            if self._held.get(held.number) is held:  # no longer served, while its bots are stopped
                del self._held[held.number]
            playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)

    async def stop(self) -> None:
        """Stops every sitting, and the bots each launched."""
        tasks = [*(held.task for held in self._held.values() if held.task is not None), *self._playing]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
