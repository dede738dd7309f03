"""The tournament runner: from a configuration to durable records, whoever turns up.

It opens the results folder (checking that the configuration still fits its records and saying in
words what changed), plans the blocks (:mod:`arena.event.plan`), starts an arena server when any
bot plays over gRPC, launches the bots the configuration names by command
(:mod:`arena.event.launcher`), and dispatches games to tables as their bots are present and free
(:mod:`arena.event.dispatcher`, :mod:`arena.event.seats`): nothing waits for an absent bot while
other games can be played. A bot absent for ``absent_after_s`` has its games postponed; when only
postponed games are left, the ``forfeit`` policy decides:

- ``wait``: ``serve`` waits as long as it takes (the status says for whom); ``run`` stops with the
  games outstanding (:attr:`RunSummary.outstanding`), to be resumed by running it again;
- ``fallback``: the fallback player takes the absent bot's seats, marked as ``absent`` faults;
- ``withdraw``: the bot is withdrawn; its blocks not yet begun are dropped whole, the ones under
  way are finished by the fallback player, and the ones played stay.

Disqualification (:mod:`arena.event.policy`) takes a bot out the same way as a withdrawal.
The plan is walked as the run goes (:class:`~arena.event.plan.Plan`), a window of rounds ahead of
play, so a plan of a million deal sets costs no more memory than a few rounds. Games of in-process
bots may be played by worker processes or on a Ray cluster (:mod:`arena.event.backends`); the
records come back here, and are written in the order the games were handed out.
Records are written as each round ends; the live status goes to ``status.json`` about once a
second (:mod:`arena.event.status`); standings and sequential tests belong to a *judge*
(:class:`Judge`), which the layer above supplies.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import hashlib
import math
import os
import shutil
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from arena.core.dealing import Deal, DealSource, seeded_deals
from arena.core.faults import Fault
from arena.errors import ArenaError, ConfigError, RecordsError
from arena.event.backends import Chunk, Chunker, Context, GameJob, Pool, open_pool
from arena.event.bots import HOUSE_BOT, check_bot
from arena.event.config import LAUNCHED, BotConfig, TournamentConfig, read_deal_file
from arena.event.dispatcher import BlockState, Dispatcher
from arena.event.launcher import Launcher, LaunchFailed
from arena.event.plan import (
    BotStatus,
    Design,
    Manifest,
    PlanBuilder,
    Planner,
    PlanRound,
    change_summary,
    check_bots,
    describe_difference,
    digest,
    write_plan,
)
from arena.event.policy import FaultPolicy
from arena.event.records import GameRecords
from arena.event.sandbox import bwrap_problem
from arena.event.schedule import OPTIONS, Assignment, Block, Schedule
from arena.event.scratch import remove_leftovers, scratch_folder
from arena.event.seats import Seat, Seating
from arena.event.status import BotState, Progress, SessionState, Status, TableState, write_status
from arena.event.store import ResultsStore, game_lines
from arena.players.base import Player
from arena.players.fast import play_fast
from arena.players.pauses import settle
from arena.players.table import GameRecord, play_game
from arena.transports.grpc.server import ArenaServer, ServerSettings
from arena.transports.grpc.tokens import new_token, token_sha256

__all__ = ["Judge", "RunSummary", "Tournament", "check_address", "woken"]

STATUS_EVERY_S = 1.0
TEST_LOG_EVERY_S = 10.0
YIELD_EVERY_S = 0.005
"""Longest time the dispatcher plays fast-path games without letting the event loop serve others."""
LOOKAHEAD = 256
"""Games not yet started that the dispatcher is given ahead of play (more while bots are absent)."""
TAKEN_OUT = ("withdrawn", "disqualified")
SERVED = ("command", "remote")
"""The kinds of bot that play over gRPC: the arena server runs when the tournament has one."""
STARTED = (*LAUNCHED, "bhoos_url")
"""The kinds of bot the launcher looks after (it starts their processes, or checks that they answer)."""


def check_address(host: str, port: int) -> None:
    """Refuses, in words and before anything runs, an address the arena server could not listen on
    (gRPC would only log a line of its own and say that binding failed)."""
    where = f"cannot listen on {host}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as err:
        raise ConfigError(f"{where}: {host!r} is not a host name or address known here ({err})") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as a server does: TIME_WAIT is no obstacle
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                why = f"port {port} is in use by another program (choose another port, or 0 for any free one)"
            elif err.errno == errno.EADDRNOTAVAIL:
                why = (f"{host} is not an address of this machine (listen on 127.0.0.1, on 0.0.0.0 for every "
                       "interface, or on one of this machine's own addresses)")
            elif err.errno == errno.EACCES:
                why = f"port {port} needs privileges this user lacks (ports below 1024 do): choose a higher one"
            else:
                why = err.strerror or str(err)
            raise ConfigError(f"{where}: {why}") from None


class Judge(Protocol):
    """What watches the results as they come: live standings, and the sequential test that may
    end a run early. Supplied by the rating layer; a tournament without one just plays its plan."""

    def start(self, games: Sequence[GameRecords]) -> None:
        """The games recorded before this run began."""

    def game_done(self, game: Assignment, record: GameRecord) -> None:
        """One more game is recorded."""

    def decided(self) -> bool:
        """True when no new block needs to begin (a sequential test has decided)."""

    def refresh(self, force: bool = False) -> None:
        """Rewrites the live standings (at most every few seconds unless ``force``); may be called
        from a worker thread."""

    def progress_line(self) -> str | None:
        """The sequential test in one line (``LLR -0.66 (-2.94, 2.94) [0.00, 1.00] 116 blocks, ...``),
        for the progress bar, the log and the status; ``None`` when there is no test."""


@dataclasses.dataclass
class RunSummary:
    """What a run did."""

    folder: Path
    played: int = 0
    skipped: int = 0
    faults: int = 0
    disqualified: dict[str, str] = dataclasses.field(default_factory=dict)
    withdrawn: dict[str, str] = dataclasses.field(default_factory=dict)
    changes: list[str] = dataclasses.field(default_factory=list)
    """What changed in the plan since the folder's last run, one sentence each."""
    stopped_early: bool = False
    """A sequential test decided before the last planned block."""
    outstanding: int = 0
    """Games left unplayed because the bots they need were absent (``forfeit = "wait"`` under ``run``)."""
    awaited: dict[str, str] = dataclasses.field(default_factory=dict)
    """The absent bots those games wait for, and why, in words."""


async def woken(event: asyncio.Event, timeout: float | None) -> None:
    """Waits until ``event`` is set or ``timeout`` passes, and always lets the loop run once (the dispatcher sets
    its own event; a wait that did not yield would starve every bot). A cancel (the first Ctrl-C) always ends
    it: Python 3.11's ``asyncio.wait_for`` drops a cancel that arrives as the event is set, and a busy event
    then played on to its end after a Ctrl-C."""
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait((waiter,), timeout=timeout)
    finally:
        waiter.cancel()


class Tournament:
    """One tournament run over a results folder."""

    def __init__(
        self, config: TournamentConfig, folder: Path | None = None, *, fresh: bool = False, progress: bool = False,
        serve: bool = False, judge: Judge | None = None, log: Callable[[str], None] | None = None,
        continued: bool = False,
    ) -> None:
        self.config = config
        self.folder = folder or config.results or Path("results") / config.name
        self.fresh = fresh
        self.progress = progress
        self.serve = serve
        """A long-running arena: under ``forfeit = "wait"`` it waits for absent bots as long as it takes."""
        self.continued = continued
        """Another run follows at the same address (check-bot's next rules profile): at the end, connected
        bots are told to reconnect, not that the tournament is over."""
        self.judge = judge
        self._log = log or (lambda text: None)
        self.store = ResultsStore(self.folder)
        self.bots: dict[str, BotConfig] = {b.name: b for b in config.bots}
        self.deal_file = read_deal_file(config.deal_file) if config.deal_file else None
        self.deal_sets: Sequence[int] = self.deal_file.games if self.deal_file else range(1, config.deal_sets + 1)
        self.statuses: dict[str, BotStatus] = {}
        self.policy = FaultPolicy(config.disqualify_after)
        self.seating = Seating(config, self.bots, self.statuses)
        self.summary = RunSummary(self.folder)
        self.manifest: Manifest | None = None
        self._schedule: Schedule | None = None
        self._planner: Planner | None = None
        self._rounds: Iterator[PlanRound] | None = None
        """For fixed plans: the walk of the plan, released to the dispatcher a window at a time."""
        self._recorded: dict[str, tuple[tuple[str, ...], int]] = {}
        """The games recorded before this run: their seats and first dealer, by id."""
        self._played_blocks: set[str] = set()
        """The blocks with games recorded before this run."""
        self._planning = 0
        """The last schedule round released (the swiss standings count the rounds before it only)."""
        self._scores: dict[int, dict[str, list[int]]] = {}
        """Game totals per schedule round and bot, for the swiss standings."""
        self._games_by_bot: dict[str, int] = {}
        self._faults_by_bot: dict[str, int] = {}
        self._dispatcher: Dispatcher[Seat] = Dispatcher(config.rotation)
        self._wake = asyncio.Event()
        self._slots: list[int] = list(range(config.concurrency, 0, -1))
        self._tables: dict[int, tuple[Assignment, list[str], float]] = {}
        self._rounds_done: dict[int, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._failure: BaseException | None = None
        """An error of the arena itself in a game task (not a bot's fault): it ends the run."""
        self._state = "starting"
        self._awaited: set[str] = set()
        self._status_written = 0.0
        self._refreshing: asyncio.Task[None] | None = None
        self._file_deals: dict[int, dict[tuple[int, int, int], Deal]] | None = None
        """A deal file's deals by deal set, for the workers (made when first needed)."""
        self._in_process: frozenset[str] = frozenset()
        """The in-process bots (house bots and copies included, once planned)."""
        self._pool: Pool | None = None
        """Where games of in-process bots are played, when not here (``workers``, ``backend``)."""
        self._chunker = Chunker()
        self._chunks_out = 0
        self._handed = 0
        """Chunks handed to the pool so far (each is numbered in that order)."""
        self._back: dict[int, tuple[list[GameJob], Chunk]] = {}
        """Chunks played but not yet recorded, waiting for the chunks handed out before them."""
        self._next_back = 0
        self._bar: Progress | None = None
        self._test_logged = ("", -math.inf)
        """The sequential test's line last logged, and when."""
        self._sandboxing = False
        """Launched bots run in the sandbox (decided when the run starts)."""
        self._socket_folder: Path | None = None
        """The private folder of the Unix socket that sandboxed bots reach the arena by."""
        self._unix_socket: Path | None = None
        """That socket (``None`` when sandboxed bots need none)."""

    @property
    def address(self) -> str:
        """``host:port`` of the arena server, once it listens."""
        return self.seating.server.address if self.seating.server is not None else ""

    # -- deals and planning ----------------------------------------------------------------------

    def deals(self, deal_set: int) -> DealSource:
        """The deal source of one deal set."""
        if self.deal_file is not None:
            return self.deal_file.source(deal_set)
        return seeded_deals(self.config.seed, deal_set)

    def _identity(self) -> dict[str, Any]:
        identity = self.config.identity()
        if self.config.deal_file is not None:
            identity["deal_file_sha256"] = hashlib.sha256(self.config.deal_file.read_bytes()).hexdigest()
        return identity

    def _standings(self) -> dict[str, float]:
        # Only finished rounds count: after a resume, games of the round in progress are already
        # known, and counting them would seat that round differently from the interrupted run.
        totals: dict[str, list[int]] = {}
        for round_number, scores in self._scores.items():
            if round_number < self._planning:
                for bot, values in scores.items():
                    totals.setdefault(bot, []).extend(values)
        return {bot: sum(values) / len(values) for bot, values in totals.items() if values}

    def _note(self, seats: Sequence[str], totals: Sequence[int], round_number: int, faults: Sequence[Fault]) -> None:
        """Keeps what the swiss pairing and the live status need from a finished game."""
        for seat, bot in enumerate(seats):
            self._scores.setdefault(round_number, {}).setdefault(bot, []).append(totals[seat])
            self._games_by_bot[bot] = self._games_by_bot.get(bot, 0) + 1
        for fault in faults:
            bot = seats[fault.seat]
            self._faults_by_bot[bot] = self._faults_by_bot.get(bot, 0) + 1

    def _excluded(self) -> set[str]:
        """The bots taken out of the tournament (withdrawn or disqualified)."""
        return {bot for bot, s in self.statuses.items() if s.status in TAKEN_OUT}

    def prepare(self) -> list[GameRecords]:
        """Opens the results folder, checks the configuration against it and plans the games (what
        :meth:`run` does before it plays: the manifest is written); returns the games already recorded."""
        config = self.config
        if self.folder.exists() and not self.folder.is_dir():
            raise ConfigError(f"{self.folder} is a file, not a results folder: name a folder (it is made if missing)")
        try:
            if self.fresh:
                self.store.clear()
            games = self.store.open()
        except OSError as err:
            raise ConfigError(f"cannot use {self.folder} as the results folder: {err.strerror or err}") from None
        raw = self.store.manifest()
        previous = Manifest.from_dict(raw, str(self.store.manifest_path)) if raw is not None else None
        identity = self._identity()
        removed: list[str] = []
        if previous is not None:
            old_identity = {k: previous.config.get(k) for k in identity}
            if digest(old_identity) != digest(identity):
                raise RecordsError(
                    f"{self.folder} holds another tournament's results: {describe_difference(old_identity, identity)}. "
                    "Use a new results folder, or --fresh to discard these results and start again"
                )
            check_bots(previous.config, config)
            self.statuses.update({b: s for b, s in previous.statuses.items() if s.status in TAKEN_OUT})
            played_bots = {bot for game in games for bot in game.seats}
            for item in previous.config.get("bots", []):
                name = item["name"]
                if name not in self.bots:
                    removed.append(name)
                    if name in played_bots and name not in self.statuses:
                        self.statuses[name] = BotStatus("withdrawn", "removed from the configuration")
        for game in games:
            for bot in self.policy.add_game(game.seats, [f for r in game.rounds for f in r.faults]):
                if bot not in self.statuses:
                    self.statuses[bot] = BotStatus("disqualified", self.policy.reason(bot))
        excluded = self._excluded() | set(removed)
        # A fixed plan is made for the bots of the configuration, the ones taken out included (their
        # blocks not begun are dropped), so that a run again with nothing changed plans the same;
        # swiss pairs each round anew among the bots still playing.
        field = [b.name for b in config.bots if b.name not in excluded or config.format != "swiss"]
        if len([b for b in field if b not in excluded]) < 2:
            raise ConfigError("fewer than 2 bots are left to play: the others are withdrawn or disqualified")
        schedule = Schedule(
            bots=field, format=config.format, rotation=config.rotation, deal_sets=self.deal_sets, seed=config.seed,
            options=config.format_options, draw_seats=config.rules.draw_seating, standings=self._standings,
        )
        house = sorted(set(schedule.house) | set(previous.house if previous else []))
        for copy, original in schedule.copies.items():
            if original in self.bots:
                self.bots[copy] = dataclasses.replace(self.bots[original], name=copy)
        self._add_house(house)
        played = self._played_blocks = {game.block for game in games}
        self._recorded = {game.game: (game.seats, game.first.first_dealer) for game in games}
        beyond = max((game.first.schedule_round for game in games), default=0)
        if beyond > schedule.rounds:
            raise RecordsError(
                f"the configuration plans {schedule.rounds} deal sets, but round {beyond} of {self.folder} "
                f"already has recorded games: keep at least {beyond} deal sets, or use --fresh"
            )
        where = str(self.store.manifest_path)
        field_changed = previous is not None and previous.plan.field != schedule.bots
        if previous is not None:
            previous.plan.verify(where)
        planner = Planner(schedule, previous.plan if previous else None, played, excluded, field_changed)
        self._schedule, self._planner = schedule, planner
        # A fixed plan is written down by its design (the swiss rounds, made as the run goes, are stored whole);
        # the bots taken out are cut from the round after the last in which they played.
        design = None if schedule.adaptive else Design(
            config.format, config.seed, self.deal_sets,
            {key: value for key, value in config.format_options.items() if key in OPTIONS}, config.rules.draw_seating)
        cuts = {bot: 1 + max((g.first.schedule_round for g in games if bot in g.seats), default=0)
                for bot in excluded if bot in schedule.bots} if design is not None else {}
        builder = PlanBuilder(config.rotation, schedule.rounds, schedule.adaptive, schedule.sequential,
                              list(schedule.bots), design, cuts)
        plan = builder.plan() if schedule.adaptive else write_plan(planner, builder)
        self._rounds = None if schedule.adaptive else plan.walk()
        self.manifest = Manifest(
            tournament=config.name, config={**config.to_dict(), **identity}, identity=digest(identity),
            plan=plan, house=house, statuses=self.statuses,
        )
        if previous is not None:
            self.summary.changes = change_summary(previous, config, planner, sorted(removed), schedule.rounds,
                                                  self.statuses)
        self.store.write_manifest(self.manifest.to_dict())
        for game in games:
            self._note(game.seats, game.final.totals, game.first.schedule_round,
                       [f for r in game.rounds for f in r.faults])
        return games

    def _add_house(self, names: Sequence[str]) -> None:
        for name in names:
            self.bots.setdefault(name, BotConfig(name=name, python=HOUSE_BOT, house=True))
        self._in_process = frozenset(name for name, bot in self.bots.items() if bot.kind == "python")

    def _release(self, more: bool = False) -> None:
        """Releases rounds to the dispatcher: for fixed plans, enough to keep :data:`LOOKAHEAD` games
        waiting (``more``: one round beyond, however many wait); one round at a time, each once the
        one before is over, when later rounds depend on earlier results (swiss) or the run may stop
        early (sprt)."""
        schedule, planner, manifest = self._schedule, self._planner, self.manifest
        assert schedule is not None and planner is not None and manifest is not None
        stepwise = schedule.adaptive or schedule.sequential
        dispatcher = self._dispatcher
        while self._planning < schedule.rounds:
            if stepwise and not dispatcher.idle:
                return
            if not stepwise and dispatcher.waiting >= self._lookahead() and not more:
                return
            more = False
            if schedule.sequential and self.judge is not None and self.judge.decided():
                self.summary.stopped_early = True
                return
            self._planning += 1
            if schedule.adaptive:
                lineups, gone = planner.round(self._planning)
                blocks = [schedule.seat(b) for b in lineups]
                manifest.plan.put_round(self._planning, blocks, [schedule.seat(b) for b in gone])
                self._add_house(schedule.house)
                manifest.house = sorted(set(manifest.house) | set(schedule.house))
                self._save_manifest()
            else:
                assert self._rounds is not None
                blocks = [manifest.plan.seat(b) for b in next(self._rounds).blocks]
            excluded = self._excluded()
            for block in blocks:
                self._check_recorded(block)
                state = dispatcher.add(block, self._recorded)
                state.fallback |= block.bots & excluded  # only in blocks already begun: the plan dropped the rest

    def _lookahead(self) -> int:
        chunks = 2 * self._pool.workers * self._chunker.size if self._pool is not None else 0
        return max(LOOKAHEAD, 4 * self.config.concurrency, chunks)

    def _check_recorded(self, block: Block) -> None:
        """Refuses a plan whose seats differ from those of the games recorded in its blocks."""
        if not self._recorded:
            return
        for game in block.games(self.config.rotation):
            seen = self._recorded.get(game.id)
            if seen is not None and seen != (game.seats, game.first_dealer):
                raise RecordsError(
                    f"game {game.id} of {self.folder} was recorded with the seats {list(seen[0])} (first dealer "
                    f"{seen[1]}), but the plan made from {self.store.manifest_path.name} seats {list(game.seats)} "
                    f"(first dealer {game.first_dealer}): the folder was played by a version of callbreak-arena that "
                    "seats blocks differently. Use a new results folder, or --fresh to start again"
                )

    # -- running ---------------------------------------------------------------------------------

    async def run(self) -> RunSummary:
        """Plays every game not yet recorded, as far as the bots and the policies allow."""
        settle()
        summary = self.summary
        for name, bot in self.bots.items():  # an in-process bot that cannot be made is refused before anything runs
            if bot.kind == "python":
                check_bot(self.seating.factory(name), bot.seed, bot.options, name)
        if self._kinds(SERVED):
            check_address(self.config.host, self.config.port)
        self._sandboxing = self._choose_sandbox()
        if any(bot.kind == "python" for bot in self.config.bots):  # only in-process bots' games are pooled
            self._pool = open_pool(self.config)  # before the folder is touched: a backend that cannot start is refused
        try:
            games = self.prepare()
        except BaseException:
            self._close_pool()
            raise
        # The folder is this run's now: a status of a run before this one must not pass for this one's. A run
        # refused before this point (another tournament's folder, a bot that cannot be loaded) changed nothing.
        with contextlib.suppress(OSError):
            write_status(self.folder, self.status())
        summary.skipped = len(games)
        summary.faults = sum(len(r.faults) for game in games for r in game.rounds)
        summary.disqualified = {b: s.reason for b, s in self.statuses.items() if s.status == "disqualified"}
        summary.withdrawn = {b: s.reason for b, s in self.statuses.items() if s.status == "withdrawn"}
        for change in summary.changes:
            self.log(f"plan changed: {change}")
        if self.judge is not None:
            self.judge.start(games)
        try:
            self._release()
        except BaseException:
            self._close_pool()
            raise
        done, total = self._dispatcher.counts()
        # A sequential test ends when it decides: its bar counts games without a planned total.
        open_ended = self._schedule is not None and self._schedule.sequential
        self._bar = Progress(None if open_ended else self._planned_total(total), done, self.progress)
        ticker: asyncio.Task[None] | None = None
        try:
            if self._kinds(SERVED):
                await self._start_server()
            if self._kinds(STARTED):
                self._start_launcher()
            self._state = "running"
            ticker = asyncio.get_running_loop().create_task(self._tick())
            await self._dispatch()
            # The games are played; their tasks may still be ending the processes started for them, which
            # must end by themselves (a stdio bot reads the end of its input), not be cut short below.
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
            self._state = "stopped" if summary.outstanding else "finished"
        except BaseException:
            self._state = "interrupted"
            raise
        finally:
            for task in [ticker, self._refreshing, *self._tasks]:
                if task is not None:
                    task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._close_pool()
            self._bar.close()
            self.store.close()
            with contextlib.suppress(OSError):
                self._write_status(force=True)
            await self._close()
        if self.judge is not None:
            self.judge.refresh(force=True)
        return summary

    def _planned_total(self, released: int) -> int:
        schedule, manifest = self._schedule, self.manifest
        assert schedule is not None and manifest is not None
        if not schedule.adaptive:
            return manifest.plan.game_count
        return max(released, schedule.total())

    def _close_pool(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.close()

    def _kinds(self, kinds: Sequence[str]) -> list[BotConfig]:
        """The bots of the tournament of those kinds."""
        return [b for b in self.bots.values() if b.kind in kinds]

    def _choose_sandbox(self) -> bool:
        """Whether launched bots run in the sandbox; refuses ``mode = "bwrap"`` where it cannot run, and
        ``bhoos`` bots without it; warns when ``auto`` finds it cannot."""
        mode = self.config.sandbox.mode
        launched = len(self._kinds(LAUNCHED))
        bhoos = self._kinds(("bhoos",))
        problem = bwrap_problem() if launched and mode != "off" else None
        if bhoos and (mode == "off" or problem is not None):
            fix = ('sandbox.mode is "off": remove that line' if mode == "off" else
                   f"{problem}: install bubblewrap where it can run")
            raise ConfigError(
                f"bot {bhoos[0].name!r} is a bhoos bot, and each of its instances needs a network namespace of its "
                f"own (they all listen on port {bhoos[0].port}), which only the bubblewrap sandbox gives, but {fix}, "
                "or start the bot yourself and give it as bhoos_url = \"http://host:port\""
            )
        if not launched or mode == "off":
            return False
        if problem is None:
            return True
        if mode == "bwrap":
            raise ConfigError(f"sandbox.mode is \"bwrap\" but {problem}; install it, or set sandbox.mode = \"auto\" "
                              "to run the bots unsandboxed")
        self.log(f"warning: the {launched} launched bot{'s' if launched > 1 else ''} run unsandboxed:")
        self.log(f"  {problem}.")
        self.log("  They run with your user's rights and could read your files, this run's records included.")
        self.log("  For bots you did not write, install bubblewrap, or have them connect from another machine.")
        return False

    async def _start_server(self) -> None:
        config = self.config
        digests: dict[str, str] = {}  # the server keeps digests only
        for bot in list(self.bots.values()):
            if bot.kind == "remote":
                digests[bot.token_sha256 or token_sha256(bot.token)] = bot.name
            elif bot.kind == "command" and not config.fresh_process:
                token = new_token()  # fresh for each run; its restarts keep it
                self.bots[bot.name] = dataclasses.replace(bot, token=token)
                digests[token_sha256(token)] = bot.name
        server = ArenaServer(ServerSettings(
            rules=config.rules, tokens=digests, table=config.table, max_tables=config.concurrency,
            max_sessions=config.sessions_per_bot, reconnect_grace_s=config.reconnect_grace,
            unresponsive_after=config.unresponsive_after, tls_cert=config.tls_cert, tls_key=config.tls_key,
            tls_client_ca=config.tls_client_ca, tls_client_names=config.tls_client_names,
        ))
        unix_socket = None
        if self._sandboxing:  # a folder only the arena's user can enter; the socket is bound into each sandbox
            remove_leftovers("sock")
            self._socket_folder = scratch_folder("sock", socket_path=len("/arena.sock"))
            unix_socket = self._socket_folder / "arena.sock"
        try:
            await server.start(f"{config.host}:{config.port}", unix_socket=unix_socket)
        except RuntimeError as err:  # grpc: the address cannot be bound
            raise ConfigError(f"cannot listen on {config.host}:{config.port}: {err}") from None
        self.seating.server = server
        for name, status in self.statuses.items():
            self._bar_server(name, status.status, status.reason)
        server.lobby.watch(self._lobby_changed)
        security = "plaintext" if not server.tls else "TLS" if config.tls_client_ca is None else "mutual TLS"
        self.log(f"arena listening on {self.address} ({security})")
        self._unix_socket = unix_socket
        launched = self._kinds(("command",))
        if launched:
            launcher = self._start_launcher()
            if not config.fresh_process:
                for bot in launched:
                    if bot.name not in self._excluded():
                        await launcher.start(self.bots[bot.name])

    def _start_launcher(self) -> Launcher:
        """The launcher of the bots the arena starts (made once), with every command checked first."""
        seating, server, config = self.seating, self.seating.server, self.config
        if seating.launcher is not None:
            return seating.launcher
        if self._kinds(LAUNCHED):
            with contextlib.suppress(OSError):  # the records are the arena's alone (docs/security.md)
                self.folder.chmod(0o700)
        if server is None:  # stdio and Bhoos bots only: no tokens, no lobby
            launcher = Launcher(self.folder, self.address, restarts=config.restarts, changed=self._wake.set,
                                sandbox=config.sandbox, confined=self._sandboxing)
        else:  # a launched gRPC bot is admitted by its token, and seen in the lobby
            launcher = Launcher(
                self.folder, self.address, restarts=config.restarts, register=server.add_token,
                unregister=server.remove_token, present=server.lobby.present, changed=self._wake.set,
                sandbox=config.sandbox, socket=self._unix_socket, confined=self._sandboxing,
            )
        seating.launcher = launcher
        for bot in self._kinds(LAUNCHED):
            launcher.check(bot)
        return launcher

    def _lobby_changed(self) -> None:
        server, seating = self.seating.server, self.seating
        if server is not None and (seating.launcher is not None or seating.forfeiting):
            for bot in self.bots:
                if server.lobby.present(bot):
                    if seating.launcher is not None:
                        seating.launcher.connected(bot)
                    if bot in seating.forfeiting:  # it came back: its blocks not begun are its own again
                        seating.forfeiting.discard(bot)
                        if bot in self.statuses and self.statuses[bot].status == "absent":
                            del self.statuses[bot]
                            self._save_manifest()
                        self.log(f"{bot} is back")
        self._wake.set()

    async def _dispatch(self) -> None:
        dispatcher, seating = self._dispatcher, self.seating
        yielded = time.monotonic()
        while True:
            if self._failure is not None:
                raise self._failure
            self._wake.clear()
            self._release()
            decided = self.summary.stopped_early
            pool = self._pool
            pool_slots = 0 if pool is None else max(0, 2 * pool.workers - self._chunks_out) * self._chunker.size
            picked = dispatcher.pick(len(self._slots), seating.take, seating.give_back, only_started=decided,
                                     pooled=self._pooled if pool is not None else None, pool_slots=pool_slots)
            jobs: list[GameJob] = []
            for game, seats in picked:
                dispatcher.blocks[game.block].fallback |= {seat.bot for seat in seats if seat.kind == "fallback"}
                if pool is not None and all(seat.kind in ("local", "fallback") for seat in seats):
                    jobs.append(self._job(game, seats))
                    continue
                bots = seating.fast_bots(game, seats)
                record = None if bots is None else play_fast(
                    self.config.rules, bots, game.seats, self.deals(game.deal_set), table_id="t0", game_id=game.id,
                    game_number=game.deal_set, first_dealer=game.first_dealer,
                )
                if record is not None:
                    self._store(game, record, 0)
                    self._finished(game, record)
                    continue
                slot = self._slots.pop()
                task = asyncio.get_running_loop().create_task(self._game(game, seats, slot))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            if jobs:
                self._hand_out(jobs)
            if picked:
                self._state = "running"
                if time.monotonic() - yielded > YIELD_EVERY_S:  # fast-path games run on the loop: let it breathe
                    await asyncio.sleep(0)
                    yielded = time.monotonic()
                continue
            if self._planning < len(self.deal_sets) and dispatcher.refused and self._room(pool_slots):
                # Room to play, and every game released waits for a bot that cannot sit now: look further
                # ahead in the plan (nothing waits for an absent bot while other games can be played).
                self._release(more=True)
                continue
            if dispatcher.idle and (decided or self._planning >= len(self.deal_sets)):
                return
            timeout = self._absence()
            if timeout == 0.0:
                continue
            if self.summary.outstanding:
                return
            await woken(self._wake, timeout)
            yielded = time.monotonic()

    def _room(self, pool_slots: int) -> bool:
        """True when a table slot or the pool could take a game now."""
        schedule = self._schedule
        return (bool(self._slots) or pool_slots > 0) and schedule is not None and not (
            schedule.adaptive or schedule.sequential)

    # -- the pool of workers ---------------------------------------------------------------------

    def _pooled(self, state: BlockState) -> bool:
        """True when every seat of the block's games is in-process (a ``python`` bot, or the fallback
        player): a worker can play them."""
        outside = state.block.bots - self._in_process
        return not outside or outside <= state.fallback

    def _job(self, game: Assignment, seats: Sequence[Seat]) -> GameJob:
        reasons = [seat.reason if seat.kind == "fallback" else None for seat in seats]
        deals = None
        if self.deal_file is not None:
            if self._file_deals is None:
                self._file_deals = {}
                for key, deal in self.deal_file.deals.items():
                    self._file_deals.setdefault(key[0], {})[key] = deal
            deals = self._file_deals.get(game.deal_set, {})
        return GameJob(game, (reasons[0], reasons[1], reasons[2], reasons[3]), deals)

    def _context(self) -> Context:
        """What the workers need: in-process bots named by absolute paths (a Ray worker starts elsewhere)."""
        bots = {}
        for name, bot in self.bots.items():
            if bot.kind == "python":
                module, _, cls = bot.python.rpartition(":")
                if module.endswith(".py"):
                    bot = dataclasses.replace(bot, python=f"{Path(module).resolve()}:{cls}")
                bots[name] = bot
        config = self.config
        deals = f"file:{config.deal_file.name}" if config.deal_file else "seed"
        return Context(config.name, config.seed, deals, config.rules, config.table, bots)

    def _hand_out(self, jobs: list[GameJob]) -> None:
        """Hands games to the pool in chunks, numbered in order."""
        pool = self._pool
        assert pool is not None
        context = self._context()
        size = self._chunker.size
        for first in range(0, len(jobs), size):
            chunk = jobs[first: first + size]
            number = self._handed
            self._handed += 1
            self._chunks_out += 1
            task = asyncio.get_running_loop().create_task(self._collect(number, chunk, pool.submit(context, chunk)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _collect(self, number: int, jobs: list[GameJob], played: asyncio.Future[Chunk]) -> None:
        """Records a chunk once it and every chunk handed out before it are played."""
        try:
            try:
                chunk = await played
            finally:
                self._chunks_out -= 1
            self._chunker.timed(chunk)
            self._back[number] = (jobs, chunk)
            while self._next_back in self._back:
                done, chunk = self._back.pop(self._next_back)
                self._next_back += 1
                for job, game in zip(done, chunk.games, strict=True):
                    self._append([game.lines])
                    self._finished(job.game, game.record)
        except asyncio.CancelledError:
            raise
        except ArenaError as err:
            self._failure = err
        except BaseException as err:  # a worker died, or could not run: the arena's failure
            self._failure = ConfigError(f"a worker could not play games {jobs[0].game.id} to {jobs[-1].game.id}: "
                                        f"{type(err).__name__}: {err}")
        finally:
            self._wake.set()

    def _absence(self) -> float | None:
        """Applies the absence policy when only games of absent bots are left; returns how long to
        wait before looking again (None: until something happens; 0: look again at once)."""
        dispatcher, seating = self._dispatcher, self.seating
        self._state = "running"
        if all(seating.present(bot) for bot in self.bots):  # no one is absent: nothing to apply (and no game scan)
            self._awaited = set()
            return None
        blockers = dispatcher.waiting_on(seating.can_sit)
        absent = {bot for bot in blockers if not seating.present(bot)}
        self._awaited = absent
        if not absent or not self._slots:
            return None
        patience = self.config.absent_after
        overdue = {bot for bot in absent if seating.absent_for(bot) >= patience}
        waits = [patience - seating.absent_for(bot) for bot in absent - overdue]
        next_look = max(0.05, min(waits)) if waits else None
        if not overdue or not dispatcher.only_blocked_by(overdue):
            return next_look
        policy = self.config.forfeit
        if policy == "fallback":
            new = overdue - seating.forfeiting
            for bot in sorted(new):
                why = seating.why_absent(bot)
                self.log(f"{bot} is absent ({why}): the fallback player takes its seats")
                self.statuses[bot] = BotStatus("absent", f"{why}; the fallback player took its seats")
            seating.forfeiting |= overdue
            if new:
                self._save_manifest()
            return 0.0 if new else next_look
        if policy == "withdraw":
            for bot in sorted(overdue):
                self._take_out(bot, "withdrawn", f"absent: {seating.why_absent(bot)}")
            return 0.0
        self._state = "waiting"
        if not self.serve and dispatcher.running == 0:
            done, total = dispatcher.counts()
            self.summary.outstanding = self._planned_total(total) - done
            self.summary.awaited = {bot: seating.why_absent(bot) for bot in sorted(absent)}
            for bot in overdue:
                self.statuses[bot] = BotStatus("absent", seating.why_absent(bot))
            self._save_manifest()
        return next_look

    def _take_out(self, bot: str, status: str, reason: str) -> None:
        """Withdraws or disqualifies a bot: a status, its blocks not begun dropped, its seats in blocks
        under way played by the fallback player, its connections ended."""
        if bot in self._excluded():
            return
        self.statuses[bot] = BotStatus(status, reason)
        (self.summary.disqualified if status == "disqualified" else self.summary.withdrawn)[bot] = reason
        self.seating.forfeiting.discard(bot)
        dropped = self._dispatcher.drop(bot)
        schedule, manifest = self._schedule, self.manifest
        if schedule is not None and schedule.adaptive:  # swiss: the rounds to come are paired without it
            schedule.set_field([b for b in schedule.bots if b != bot and b not in schedule.house])
            self._add_house(schedule.house)
        if manifest is not None:
            # The rounds released keep the blocks under way or played; in the rounds to come, the walk
            # under way (and any later one) leaves out the blocks of the bot not played before this run.
            manifest.plan.take_out(bot, self._planning, dropped, self._played_blocks)
            if schedule is not None and schedule.adaptive:
                manifest.plan.field = list(schedule.bots)
                manifest.house = sorted(set(manifest.house) | set(schedule.house))
        self._save_manifest()
        self.log(f"{bot} is {status}: {reason}")
        self._bar_server(bot, status, reason)
        self._wake.set()

    def _bar_server(self, bot: str, status: str, reason: str) -> None:
        server = self.seating.server
        if server is not None:
            if status == "disqualified":
                server.disqualify(bot, reason)
            else:
                server.withdraw(bot, reason)

    def _save_manifest(self) -> None:
        if self.manifest is not None:
            self.manifest.statuses = dict(self.statuses)
            self.store.write_manifest(self.manifest.to_dict())

    async def _game(self, game: Assignment, seats: list[Seat], slot: int) -> None:
        players: list[Player] = []
        fresh: list[Any] = []
        self._tables[slot] = (game, [s.bot for s in seats if s.kind == "fallback"], time.monotonic())
        self._rounds_done[slot] = 0
        try:
            # The four seats are made at once: processes started for the game start side by side.
            made = await asyncio.gather(*(self.seating.player(seat, game, fresh) for seat in seats),
                                        return_exceptions=True)
            players.extend(p for p in made if not isinstance(p, BaseException))
            failed = [p for p in made if isinstance(p, BaseException)]
            if failed:
                for seat, outcome in zip(seats, made, strict=True):
                    if isinstance(outcome, BaseException):
                        self.seating.give_back(seat)
                if any(not isinstance(err, LaunchFailed) for err in failed):
                    raise next(err for err in failed if not isinstance(err, LaunchFailed))
                self._dispatcher.put_back(game)
                return
            written = 0

            def store(record: GameRecord) -> None:
                nonlocal written  # each round is written as soon as it is played
                self._store(game, record, written)
                written = len(record.rounds)
                self._rounds_done[slot] = written

            record = await play_game(
                self.config.rules, players, self.deals(game.deal_set), table_id=f"t{slot}", game_id=game.id,
                game_number=game.deal_set, first_dealer=game.first_dealer, settings=self.config.table,
                on_round=store,
            )
            if written < len(record.rounds):
                store(record)
            self._finished(game, record)
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # the arena's own failure (a bot's is a fault): it ends the run
            self._failure = err
        finally:
            for player in players:
                await player.close()
            if self.seating.launcher is not None:
                for entry in fresh:
                    await self.seating.launcher.stop(entry)
            del self._tables[slot]
            self._slots.append(slot)
            self._wake.set()

    def _store(self, game: Assignment, record: GameRecord, first: int) -> None:
        deals = f"file:{self.config.deal_file.name}" if self.config.deal_file else "seed"
        self._append(game_lines(self.config.name, self.config.seed, deals, game, record, first))

    def _append(self, lines: Sequence[str]) -> None:
        try:
            self.store.append(lines)
        except OSError as err:
            path = self.store.records_path
            raise RecordsError(f"cannot write the records to {path}: {err.strerror or err}") from None

    def _finished(self, game: Assignment, record: GameRecord) -> None:
        self._dispatcher.finished(game)
        self._note(game.seats, record.totals, game.round, record.faults)
        summary = self.summary
        summary.played += 1
        summary.faults += len(record.faults)
        for bot in self.policy.add_game(game.seats, record.faults):
            self._take_out(bot, "disqualified", self.policy.reason(bot))
        if self.judge is not None:
            self.judge.game_done(game, record)
        if self._bar is not None and self._bar.shown:
            self._bar.update(summary.faults, self._awaited_words(), note=self._test_line())
        self._write_status()

    # -- status ----------------------------------------------------------------------------------

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(STATUS_EVERY_S)
            self._write_status(force=True)
            line = self._test_line()
            if self._bar is not None:
                self._bar.update(self.summary.faults, self._awaited_words(), step=0, note=line)
            if self._bar is None or not self._bar.shown:
                self._log_test(line)
            if self.judge is not None and (self._refreshing is None or self._refreshing.done()):
                # The standings read every record: on a worker thread, and never in the way of the
                # status, so the loop keeps serving the bots and the status stays fresh.
                self._refreshing = asyncio.get_running_loop().create_task(asyncio.to_thread(self.judge.refresh))

    def _test_line(self) -> str:
        return (self.judge.progress_line() or "") if self.judge is not None else ""

    def log(self, text: str) -> None:
        """A line for the organiser; a progress bar on the same terminal is cleared first and drawn again after
        (the two overwrote each other)."""
        if self._bar is None:
            self._log(text)
            return
        with self._bar.writing():
            self._log(text)

    def _log_test(self, line: str) -> None:
        """The sequential test's line in the log when there is no bar to show it: when it has moved,
        at most every :data:`TEST_LOG_EVERY_S`."""
        now = time.monotonic()
        if line and line != self._test_logged[0] and now - self._test_logged[1] >= TEST_LOG_EVERY_S:
            self._test_logged = (line, now)
            self.log(line)

    def _awaited_words(self) -> dict[str, str]:
        return {bot: self.seating.why_absent(bot) for bot in sorted(self._awaited)}

    def _write_status(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._status_written < STATUS_EVERY_S:
            return
        self._status_written = now
        write_status(self.folder, self.status())

    def status(self) -> Status:
        """The live status of the event."""
        dispatcher, seating, server = self._dispatcher, self.seating, self.seating.server
        done, total = dispatcher.counts()
        left: dict[str, int] = {}
        for state in dispatcher.blocks.values():
            for game in state.left:
                for seated in game.seats:
                    left[seated] = left.get(seated, 0) + 1
        bots = []
        for name, bot in self.bots.items():
            status = self.statuses.get(name)
            if status is not None and status.status in TAKEN_OUT:
                state_name, reason = status.status, status.reason
            elif self._state == "finished":  # the event is over: nobody is still playing
                state_name, reason = "finished", ""
            elif seating.launcher is not None and name in seating.launcher.broken:
                state_name, reason = "broken", seating.launcher.broken[name]
            elif not seating.present(name):
                state_name, reason = "absent", seating.why_absent(name)
            else:
                state_name, reason = "playing", ""
            bots.append(BotState(
                bot=name, kind=bot.kind, state=state_name, reason=reason,
                absent_s=None if state_name != "absent" else round(seating.absent_for(name), 1),
                games_done=self._games_by_bot.get(name, 0), games_left=left.get(name, 0),
                faults=self._faults_by_bot.get(name, 0), faulty_decisions=self.policy.counts.get(name, 0),
            ))
        now = time.monotonic()
        sessions = [] if server is None else [
            SessionState(s.session_id, s.bot, s.version, s.tables, s.max_tables, s.wants_events,
                         round(time.time() - s.connected_at, 1), dict(s.fault_counts))
            for s in server.lobby.all_live()
        ]
        tables = [TableState(f"t{slot}", game.id, list(game.seats), fallback, self._rounds_done.get(slot, 0),
                             round(now - began, 1))
                  for slot, (game, fallback, began) in sorted(self._tables.items())]
        awaited = sorted(self._awaited)
        message = f"only games of absent bots are left: waiting for {', '.join(awaited)}" if (
            self._state == "waiting") else ""
        planned = self._planned_total(total) if self._schedule is not None else 0
        return Status(
            tournament=self.config.name, state=self._state, message=message, pid=os.getpid(), updated=time.time(),
            address=self.address, tls=server.tls if server is not None else False, games_done=done,
            games_planned=planned, awaited=awaited, bots=bots, sessions=sessions, tables=tables,
            test=self._test_line(),
        )

    async def _close(self) -> None:
        seating = self.seating
        if seating.launcher is not None:
            await seating.launcher.close()
            seating.launcher = None
        if seating.server is not None:
            await seating.server.stop(0.5, over=self._state == "finished" and not self.continued, why=(
                "this part is over and the next follows at the same address: reconnect"
                if self._state == "finished" and self.continued else ""))
        if self._socket_folder is not None:
            shutil.rmtree(self._socket_folder, ignore_errors=True)
            self._socket_folder = None
