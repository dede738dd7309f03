"""A person's sitting at a browser table: one deal set against three bots, recorded as a tournament's.

A :class:`Sitting` is a gauntlet of one deal set whose champion is the person: the same deals four times, the
seats rotated, as every block of a tournament is played. Its results folder is a tournament's (a manifest, then a
line of ``records.jsonl`` per round, written as each round ends), so ``replay``, ``report`` and ``verify`` read it
as any other; ``verify`` passes once the four games are played. The games are played by the table runner, the
person's seat a :class:`~arena.players.web.WebSeat` with no deadline, each bot a fresh in-process instance in a
thread of its own. Between two games the sitting waits for the person to ask for the next (:meth:`next_game`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.errors import ConfigError
from arena.event.botconfig import PythonBot
from arena.event.bots import load_bot_class, make_bot
from arena.event.check import OPPONENTS
from arena.event.config import TournamentConfig, parse_config
from arena.event.preparation import identity, prepare
from arena.event.recorder import Recorder
from arena.event.schedule import Assignment
from arena.event.store import ResultsStore
from arena.players.base import Player
from arena.players.local import LocalPlayer
from arena.players.records import GameRecord
from arena.players.table import TableSettings, play_game
from arena.players.web import WebSeat
from arena.transports.grpc.tokens import new_token

__all__ = ["PERSON", "Sitting", "opponent_spec"]

PERSON = "you"
"""The person's name in the records."""
_TABLE = TableSettings(deadline_ms=0, max_retries=100)
"""A person is never hurried; only a hundred refusals in a row of one decision let the arena play for them."""


def opponent_spec(name: str) -> str:
    """The ``module:Class`` of an opponent given as a sample bot's name or as ``FILE.py:CLASS``; a
    :class:`ConfigError` in words for anything else."""
    if name in OPPONENTS:
        return OPPONENTS[name]
    if ":" in name:
        return name
    raise ConfigError(f"{name!r} is not a bot to play against: name a sample bot ({', '.join(OPPONENTS)}) or a "
                      "class of your own as path/to/bot.py:Class")


def _label(name: str) -> str:
    return name if name in OPPONENTS else name.rpartition(":")[2].lower()


def _config_text(rules: Rules, seed: int, opponents: Sequence[str]) -> str:
    rules_lines = "\n".join(f"{key} = {json.dumps(value)}" for key, value in rules.to_dict().items())
    bots = "".join(f"\n[[bots]]\nname = {json.dumps(f'{_label(name)}-{n}')}\npython = "
                   f"{json.dumps(opponent_spec(name))}\nseed = {n}\n" for n, name in enumerate(opponents, start=1))
    return (f"[tournament]\nname = \"play\"\nseed = {seed}\ndeal_sets = 1\nformat = \"gauntlet\"\n\n"
            f"[gauntlet]\nchampion = \"{PERSON}\"\n\n[rules]\n{rules_lines}\n\n"
            f"[time]\ndeadline_ms = {_TABLE.deadline_ms}\n\n[faults]\nmax_retries = {_TABLE.max_retries}\n\n"
            f"[[bots]]\nname = \"{PERSON}\"\nremote = true\ntoken = \"{new_token()}\"\n{bots}")


class Sitting:
    """One deal set of a person against three bots, played game after game into a results folder."""

    def __init__(self, rules: Rules, seed: int, opponents: Sequence[str], folder: Path) -> None:
        if len(opponents) != 3:
            raise ConfigError(f"a table has three bots besides you, not {len(opponents)}")
        if seed < 0:
            raise ConfigError(f"the seed must be 0 or more, not {seed}")
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise ConfigError(f"{folder} is not an empty folder: name a new one for this sitting's records")
        self.rules = rules
        self.seed = seed
        self.folder = folder
        self.config: TournamentConfig = parse_config(_config_text(rules, seed, opponents), Path.cwd() / "play.toml")
        self._factories = {bot.name: load_bot_class(bot.setup.spec) for bot in self.config.bots
                           if isinstance(bot.setup, PythonBot)}
        self.seat = WebSeat(PERSON)
        """The person's seat of the game in play (a new one for each game)."""
        self.games: list[Assignment] = []
        self.number = 0
        """The game in play, from 1 (0 before the first)."""
        self.done = False
        self._next = asyncio.Event()
        self._store = ResultsStore(folder)

    def _plan(self) -> None:
        ready = prepare(self.config, [], None, identity(self.config), folder=self.folder,
                        where=str(self._store.manifest_path), deal_sets=range(1, 2), standings=dict)
        self.games = [game for block in ready.manifest.plan.blocks() for game in block.games(self.config.rotation)]
        self._store.write_manifest(ready.manifest.to_dict())

    def next_game(self) -> str | None:
        """The person asks for the next game: ``None``, or why there is none now, in words."""
        if self.done:
            return "The deal set is over: every game of it is played"
        if not self.seat.state.over:
            return "This game is not over yet: finish it first"
        self._next.set()
        return None

    async def play(self) -> None:
        """Plans the deal set, writes the manifest, and plays its games in turn, each recorded as it is played."""
        self._plan()
        recorder = Recorder(self._store, self.config)
        try:
            for number, game in enumerate(self.games, start=1):
                if number > 1:
                    await self._next.wait()
                    self._next.clear()
                    ended, self.seat = self.seat, WebSeat(PERSON)
                    self.seat.state.version = ended.state.version + 1  # a page's versions only go up
                    ended.bump()  # the pages waiting on the game that ended see the new one
                self.number = number
                await self._play(game, recorder)
        finally:
            self._store.close()
        self.done = True
        self.seat.bump()

    async def _play(self, game: Assignment, recorder: Recorder) -> GameRecord:
        bots = {bot.name: bot for bot in self.config.bots}
        players: list[Player] = [
            self.seat if name == PERSON else LocalPlayer(make_bot(self._factories[name], bots[name].seed, {}, name),
                                                          name)
            for name in game.seats]
        written = 0

        def store(record: GameRecord) -> None:
            nonlocal written  # each round is written as soon as it is played
            recorder.rounds(game, record, written)
            written = len(record.rounds)

        record = await play_game(self.config.rules, players, seeded_deals(self.seed, game.deal_set), table_id="web",
                                 game_id=game.id, game_number=game.deal_set, first_dealer=game.first_dealer,
                                 settings=self.config.table, on_round=store)
        if written < len(record.rounds):
            store(record)
        return record
