"""The tournament runner: from a configuration to durable records, resumable at any point.

It plans the schedule, opens the results folder (skipping the games already recorded), starts
an arena server when any bot plays over gRPC, launches the bots the configuration names by
command, and plays the games with a bounded number of tables at once. Each schedule round is
finished before the next begins, so adaptive formats see the results they depend on. Each round's
record is written and flushed as the round ends (the fast path, which plays a game in about half a
millisecond, writes a game's rounds together), and fsynced as a group commit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib
import importlib.util
import json
import secrets
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena import __version__
from arena.core.dealing import DealFile, DealSource, seeded_deals
from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.errors import ConfigError
from arena.event.config import BotConfig, TournamentConfig
from arena.event.schedule import Assignment, Schedule
from arena.event.store import ResultsStore, game_lines
from arena.net.server import ArenaServer, ServerSettings
from arena.players.base import AbsentPlayer, Player
from arena.players.fast import has_fast_path, play_fast
from arena.players.local import LocalPlayer
from arena.players.table import GameRecord, play_game
from arena.rating.ratings import compute_standings, render_standings
from arena.rating.stats import SprtResult, sprt

__all__ = ["RunSummary", "Tournament", "load_bot_class"]

HOUSE_BOT = "sample_bots.random_bot:RandomBot"


@dataclasses.dataclass
class RunSummary:
    """What a run did."""

    folder: Path
    played: int = 0
    skipped: int = 0
    faults: int = 0
    disqualified: dict[str, str] = dataclasses.field(default_factory=dict)
    stopped_early: bool = False
    """A sequential test decided before the last planned block."""


def load_bot_class(spec: str) -> Callable[..., Any]:
    """The class named by ``module:Class`` or ``path/to/file.py:Class``."""
    module_name, _, class_name = spec.rpartition(":")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            if loader_spec is None or loader_spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
        factory = getattr(module, class_name)
    except (ImportError, AttributeError, OSError) as err:
        raise ConfigError(f"cannot load the in-process bot {spec!r}: {err}") from None
    if not callable(factory):
        raise ConfigError(f"{spec!r} is not a class or function")
    return factory  # type: ignore[no-any-return]


def make_bot(factory: Callable[..., Any], seed: int, options: Mapping[str, Any]) -> Any:
    """A fresh bot instance (each game gets its own, so none carries memory between replays)."""
    try:
        return factory(seed=seed, **options)
    except TypeError:
        try:
            return factory(**options)
        except TypeError as err:  # options the class does not take: the configuration's mistake
            name = getattr(factory, "__qualname__", repr(factory))
            raise ConfigError(f"cannot create the in-process bot {name} with options {dict(options)}: {err}") from None


class Tournament:
    """One tournament run over a results folder."""

    def __init__(
        self, config: TournamentConfig, folder: Path | None = None, *, fresh: bool = False,
        progress: bool = False,
    ) -> None:
        self.config = config
        self.folder = folder or config.results or Path("results") / config.name
        self.fresh = fresh
        self.progress = progress
        self.store = ResultsStore(self.folder)
        self.bots: dict[str, BotConfig] = {b.name: b for b in config.bots}
        self.deal_file = DealFile.read(config.deal_file) if config.deal_file else None
        deal_sets = self.deal_file.games if self.deal_file else list(range(1, config.deal_sets + 1))
        self._scores: dict[int, dict[str, list[int]]] = {}
        """Game totals per schedule round and bot, for the swiss standings."""
        self._planning = 0
        """The schedule round being planned: the swiss standings count the rounds before it only."""
        self.schedule = Schedule(
            bots=[b.name for b in config.bots], format=config.format, rotation=config.rotation,
            deal_sets=deal_sets, seed=config.seed, options=config.format_options,
            draw_seats=config.rules.draw_seating, standings=self._standings,
        )
        for name in self.schedule.house:
            self.bots[name] = BotConfig(name=name, python=HOUSE_BOT, house=True)
        for copy, original in self.schedule.copies.items():
            self.bots[copy] = dataclasses.replace(self.bots[original], name=copy)
        self._factories: dict[str, Callable[..., Any]] = {}
        self._server: ArenaServer | None = None
        self._processes: list[subprocess.Popen[bytes]] = []
        self._launched: dict[str, subprocess.Popen[bytes]] = {}
        """The process of each bot launched once for the whole run (not ``fresh_process``)."""
        self._faults: dict[str, int] = {}
        self._differences: dict[str, list[int]] = {}
        self._refreshed = 0.0
        self._refresh_cost = 0.0
        self.disqualified: dict[str, str] = {}
        self._kicks: list[asyncio.Future[None]] = []

    # -- planning --------------------------------------------------------------------------

    def deals(self, deal_set: int) -> DealSource:
        """The deal source of one deal set."""
        if self.deal_file is not None:
            return self.deal_file.source(deal_set)
        return seeded_deals(self.config.seed, deal_set)

    def manifest(self) -> dict[str, Any]:
        """What the results folder records about the plan (and checks on resume)."""
        if self.schedule.adaptive:
            plan: dict[str, Any] = {"adaptive": True, "rounds": self.schedule.rounds, "games": self.schedule.total()}
        else:
            plan = {"adaptive": False, "sequential": self.schedule.sequential, "games": [a.id for a in self.schedule]}
        config = self.config.to_dict()
        if self.deal_file is not None:
            config["deal_file_sha256"] = hashlib.sha256(self.config.deal_file.read_bytes()).hexdigest()  # type: ignore[union-attr]
        body = json.dumps({"config": config, "plan": plan}, sort_keys=True)
        return {
            "format_version": 1,
            "arena_version": __version__,
            "tournament": self.config.name,
            "config": config,
            "plan": plan,
            "house_bots": self.schedule.house,
            "plan_hash": hashlib.sha256(body.encode()).hexdigest(),
        }

    def _standings(self) -> dict[str, float]:
        # Only finished rounds count: after a resume, games of the round in progress are already
        # known, and counting them would seat that round differently from the interrupted run.
        totals: dict[str, list[int]] = {}
        for round_number, scores in self._scores.items():
            if round_number < self._planning:
                for bot, values in scores.items():
                    totals.setdefault(bot, []).extend(values)
        return {bot: sum(values) / len(values) for bot, values in totals.items() if values}

    def _note(self, seats: Sequence[str], totals: Sequence[int], block: str, round_number: int) -> None:
        """Keeps what adaptive formats need from a finished game: totals, and A-B differences."""
        for seat, bot in enumerate(seats):
            self._scores.setdefault(round_number, {}).setdefault(bot, []).append(totals[seat])
        if self.schedule.sequential:
            a, b = str(self.config.format_options["a"]), str(self.config.format_options["b"])
            self._differences.setdefault(block, []).append(totals[seats.index(a)] - totals[seats.index(b)])

    def sprt_state(self) -> SprtResult:
        """The sequential test on the blocks finished so far (``sprt`` format)."""
        options = self.config.format_options
        scale = tenths_per_point(self.config.rules)  # deltas are given in points per game
        per_block = [sum(d) / len(d) for d in self._differences.values() if len(d) == self.schedule.rotations]
        return sprt(
            per_block, float(options["delta0"]) * scale, float(options["delta1"]) * scale,
            alpha=float(options["alpha"]), beta=float(options["beta"]), burn_in=int(options["burn_in"]),
            cap=self.schedule.rounds, method=options.get("method", "alt2"),
        )

    # -- players ---------------------------------------------------------------------------

    def _needs_server(self) -> bool:
        return any(b.kind != "python" for b in self.bots.values())

    async def _start_server(self) -> None:
        tokens: dict[str, str] = {}
        for bot in self.bots.values():
            if bot.kind == "remote":
                tokens[bot.token] = bot.name
            elif bot.kind == "command":
                token = bot.token or secrets.token_hex(16)
                self.bots[bot.name] = dataclasses.replace(bot, token=token)
                tokens[token] = bot.name
        server = ArenaServer(ServerSettings(
            rules=self.config.rules, tokens=tokens, table=self.config.table,
            max_tables=max(1, self.config.concurrency), tls_cert=self.config.tls_cert, tls_key=self.config.tls_key,
        ))
        port = await server.start(f"{self.config.host}:{self.config.port}")
        self._server = server
        server.lobby.disqualified.update(self.disqualified)  # disqualified before a resume stay so
        self.address = f"{self.config.host}:{port}"
        if not self.config.fresh_process:
            for bot in self.bots.values():
                if bot.kind == "command":
                    self._launched[bot.name] = self._launch(bot, bot.token)

    def _launch(self, bot: BotConfig, token: str) -> subprocess.Popen[bytes]:
        values = {"address": self.address, "token": token, "name": bot.name, "seed": str(bot.seed),
                  "python": sys.executable}
        try:
            argv = [part.format(**values) for part in bot.command]
        except (KeyError, IndexError) as err:
            raise ConfigError(
                f"bot {bot.name!r}: unknown placeholder {err} in its command; "
                "the placeholders are {address}, {token}, {name}, {seed} and {python}"
            ) from None
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable  # the arena's own interpreter, so the bots see the same packages
        logs = self.folder / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / f"{bot.name}.log").open("ab") as err_log:
            try:
                process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err_log)
            except OSError as err:
                raise ConfigError(f"cannot launch bot {bot.name!r} ({shlex.join(argv)}): {err.strerror}") from None
        self._processes.append(process)
        return process

    async def _player(
        self, name: str, assignment: Assignment, fresh: list[subprocess.Popen[bytes]]
    ) -> Player:
        if name in self.disqualified:
            return AbsentPlayer(name, f"{name} is disqualified: {self.disqualified[name]}")
        bot = self.bots[name]
        if bot.kind == "python":
            if name not in self._factories:
                self._factories[name] = load_bot_class(bot.python)
            return LocalPlayer(make_bot(self._factories[name], bot.seed, bot.options), name)
        assert self._server is not None
        key = name
        if bot.kind == "command" and self.config.fresh_process:
            # A process of its own for this game: it cannot remember an earlier replay of these deals.
            token = secrets.token_hex(16)
            key = f"{name}@{assignment.id}"
            self._server.add_token(token, key)
            fresh.append(self._launch(bot, token))
        process = self._launched.get(name)
        if process is not None and process.poll() is not None and not self._server.lobby.live(name):
            # A launched bot that died is a fault of the bot, played with fallbacks, not a reason
            # to wait for it to connect and then stop the tournament.
            return self._gone(name, process)
        try:
            player = await self._server.claim(key, timeout=self.config.connect_timeout)
        except TimeoutError:
            if process is not None and process.poll() is not None:
                return self._gone(name, process)
            raise ConfigError(
                f"bot {name!r} did not connect within {self.config.connect_timeout:.0f} s"
                + (f"; see {self.folder / 'logs' / (name + '.log')}" if bot.kind == "command" else "")
            ) from None
        player.name = name
        return player

    @staticmethod
    def _gone(name: str, process: subprocess.Popen[bytes]) -> Player:
        return AbsentPlayer(name, f"{name} is gone: its process ended with exit status {process.returncode}")

    # -- running ---------------------------------------------------------------------------

    def _play_fast(self, assignment: Assignment) -> GameRecord | None:
        """The in-process fast path, when all four seats are Python bots that offer it."""
        bots = []
        for name in assignment.seats:
            bot = self.bots[name]
            if bot.kind != "python" or name in self.disqualified:
                return None
            if name not in self._factories:
                self._factories[name] = load_bot_class(bot.python)
            instance = make_bot(self._factories[name], bot.seed, bot.options)
            if not has_fast_path(instance):
                return None
            bots.append(instance)
        return play_fast(
            self.config.rules, bots, assignment.seats, self.deals(assignment.deal_set),
            table_id=f"t{assignment.group}", game_id=assignment.id, game_number=assignment.deal_set,
            first_dealer=assignment.first_dealer,
        )

    async def play(
        self, assignment: Assignment, on_round: Callable[[GameRecord], None] | None = None
    ) -> GameRecord:
        """Plays one scheduled game and returns its record; ``on_round`` sees the record so far
        after each round at a normal table (the fast path finishes a game in well under a second)."""
        record = self._play_fast(assignment)
        if record is not None:
            return record
        fresh: list[subprocess.Popen[bytes]] = []
        players = [await self._player(name, assignment, fresh) for name in assignment.seats]
        try:
            return await play_game(
                self.config.rules, players, self.deals(assignment.deal_set), table_id=f"t{assignment.group}",
                game_id=assignment.id, game_number=assignment.deal_set, first_dealer=assignment.first_dealer,
                settings=self.config.table, on_round=on_round,
            )
        finally:
            if self._server is not None:
                for player in players:
                    session = getattr(player, "session", None)
                    if session is not None:
                        await self._server.lobby.release(session)
            for process in fresh:
                process.terminate()

    async def run(self) -> RunSummary:
        """Plays every game not yet recorded; returns what was done."""
        summary = RunSummary(self.folder)
        for name, bot in self.bots.items():  # an in-process bot that cannot be made is refused before anything runs
            if bot.kind == "python":
                self._factories[name] = load_bot_class(bot.python)
                make_bot(self._factories[name], bot.seed, bot.options)
        done = self.store.start(self.manifest(), fresh=self.fresh)
        summary.skipped = len(done)
        for rounds in self.store.games():
            self._note(rounds[-1]["seats"], rounds[-1]["totals"], rounds[-1]["block"], rounds[-1]["schedule_round"])
            self._count_faults(rounds[-1]["seats"], [f["seat"] for r in rounds for f in r["faults"]])
            summary.faults += sum(len(r["faults"]) for r in rounds)
        bar = _progress(self.schedule.total(), self.schedule.rotations, self.progress)
        try:
            if self._needs_server():
                await self._start_server()
            limit = asyncio.Semaphore(self.config.concurrency)

            async def one(assignment: Assignment) -> None:
                written = 0

                def store(record: GameRecord) -> None:
                    # Each round is written as soon as it is played (the last one with the places).
                    nonlocal written
                    self.store.append(game_lines(
                        self.config.name, self.config.seed, self._deals_name(), assignment, record, written
                    ))
                    written = len(record.rounds)

                async with limit:
                    record = await self.play(assignment, store)
                if written < len(record.rounds):  # the fast path reports the whole game at once
                    store(record)
                self._note(assignment.seats, record.totals, assignment.block, assignment.round)
                summary.played += 1
                summary.faults += len(record.faults)
                self._count_faults(record.players, [fault.seat for fault in record.faults])
                bar.update(assignment, summary.faults)

            for round_number in range(1, self.schedule.rounds + 1):
                todo = []
                self._planning = round_number
                for assignment in self.schedule.round_assignments(round_number):
                    if assignment.id in done:
                        bar.update(assignment, summary.faults)
                    else:
                        todo.append(assignment)
                await asyncio.gather(*(one(a) for a in todo))
                self._refresh_standings()
                if self.schedule.sequential and not self.sprt_state().verdict.startswith("continue"):
                    summary.stopped_early = round_number < self.schedule.rounds
                    break
        finally:
            bar.close()
            self.store.close()
            await self.close()
        self._refresh_standings(force=True)
        summary.disqualified = dict(self.disqualified)
        return summary

    def _refresh_standings(self, force: bool = False) -> None:
        # A live view reads these files; refreshing costs a pass over all records, so it is done
        # at most every 5 s, and never more than a tenth of the time.
        now = time.monotonic()
        if not force and now - self._refreshed < max(5.0, 10 * self._refresh_cost):
            return
        self.store.flush()
        write_standings(self.folder)
        self._refreshed = time.monotonic()
        self._refresh_cost = self._refreshed - now

    def _deals_name(self) -> str:
        return f"file:{self.config.deal_file.name}" if self.config.deal_file else "seed"

    def _count_faults(self, seats: Sequence[str], fault_seats: Sequence[int]) -> None:
        # Also fed the recorded games on resume, so a resumed run disqualifies where a whole run would.
        limit = self.config.table.limits.disqualify_after
        for seat in fault_seats:
            bot = seats[seat]
            self._faults[bot] = self._faults.get(bot, 0) + 1
            if limit and bot not in self.disqualified and self._faults[bot] >= limit:
                self.disqualified[bot] = f"{self._faults[bot]} faults (the limit is {limit})"
                if self._server is not None:
                    self._server.lobby.disqualified[bot] = self.disqualified[bot]
                    self._kicks.append(asyncio.ensure_future(self._server.disqualify(bot)))

    async def close(self) -> None:
        """Stops the bots and the server."""
        for process in self._processes:
            if process.poll() is None:
                process.terminate()
        for process in self._processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
        self._processes.clear()
        if self._server is not None:
            await self._server.stop(0.5)
            self._server = None


class _progress:
    """A progress bar of games done with its ETA, the deal sets (blocks) completed and the faults so
    far (quiet when not wanted)."""

    def __init__(self, total: int, rotations: int, enabled: bool) -> None:
        self.bar: Any = None
        self.rotations = rotations
        self.blocks_total = total // rotations
        self.games: dict[str, int] = {}
        self.blocks = 0
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="game", dynamic_ncols=True, leave=False)

    def update(self, assignment: Assignment, faults: int) -> None:
        self.games[assignment.block] = self.games.get(assignment.block, 0) + 1
        if self.games[assignment.block] == self.rotations:
            self.blocks += 1
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix_str(f"deal sets {self.blocks}/{self.blocks_total}, faults {faults}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def write_standings(folder: Path) -> tuple[str, str]:
    """Recomputes the standings of a results folder into ``standings.txt`` and ``standings.json``;
    returns both texts."""
    store = ResultsStore(folder)
    manifest = store.manifest() or {}
    records = store.records()
    rows = compute_standings(records, manifest.get("house_bots", []))
    rules = Rules.from_dict(records[0]["rules"]) if records else Rules.profile()
    text = render_standings(rows, rules, "table")
    data = render_standings(rows, rules, "json")
    _write_text(folder / "standings.txt", text)
    _write_text(folder / "standings.json", data)
    return text, data


def _write_text(path: Path, text: str) -> None:
    # Written aside and renamed, so a live view never reads half a file.
    temp = path.with_suffix(path.suffix + ".tmp")
    temp.write_text(text, encoding="utf-8")
    temp.replace(path)
