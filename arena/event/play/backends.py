"""Where the games of in-process bots are played: worker processes on this machine, or a Ray cluster.

A game whose four seats are all in-process (``python`` bots, the fallback player, a bot that could
not be made) needs nothing from the arena's process but its configuration, so it can be played
anywhere. With ``workers = N`` (``--workers N``) or ``backend = "ray"``, the tournament hands such
games out in chunks to a :class:`Pool`; the worker plays each game exactly as the arena would (the
fast path when all four bots offer it, else a normal table with its deadlines, faults and
fallbacks), makes its record lines, and sends them back. Only the arena writes the results folder,
and it writes the chunks in the order it handed them out, which is the order one process plays
them in: the records are those of a run in one process.

- :class:`ProcessPool`: N worker processes on this machine, started by ``forkserver`` (``spawn``
  where there is none), never by ``fork``, which would copy the threads of a running gRPC server.
  The workers die with the arena's process, however it ends (``kill -9`` included), and with them
  the forkserver and multiprocessing's resource tracker, which live only while a worker or the
  arena holds their pipes. A worker that dies (killed, out of memory) takes the pool down with it:
  the arena starts new workers and hands them the chunks that were in play, up to
  :data:`REPLACEMENTS` times in a run; after that a death ends the run with its reason.
- :class:`RayPool`: Ray tasks, on a cluster already running (``ray_address = "auto"`` or
  ``"ray://host:port"``) or on one the arena starts on this machine (``ray_address = ""``).
  Every node needs the project and the bots' code installed (``docs/scale.md``).

The games of launched bots (``command``, ``stdio``, ``bhoos``) are pooled too
(:mod:`arena.event.play.placement`): the worker launches them itself, on its own arena side
(:mod:`arena.event.play.branch`), and sends back their record lines like any other. Games with a remote or
``bhoos_url`` bot at the table are never pooled: they are played by the arena's own process, where their
connections are.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import importlib
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from arena.core.dealing import Deal, DealFile, DealSource, seeded_deals
from arena.core.rules import Rules
from arena.errors import ConfigError
from arena.event.plan.schedule import Assignment
from arena.event.play.branch import branch_for, end_branch
from arena.event.play.host import Host
from arena.event.play.kinds import BrokenPlayer, kind_of
from arena.event.play.seats import Seat, SeatKind
from arena.event.setup.botconfig import BotConfig, PythonBot
from arena.event.setup.bots import load_bot_class, make_bot
from arena.event.setup.config import TournamentConfig
from arena.players.base import AbsentPlayer, Player
from arena.players.fast import has_fast_path, play_fast
from arena.players.local import LocalPlayer
from arena.players.pauses import settle
from arena.players.table import TableSettings
from arena.records.format import GameRecord, game_lines

__all__ = ["REPLACEMENTS", "Chunk", "Chunker", "Context", "GameJob", "PlayedGame", "Pool", "ProcessPool", "RayPool",
           "open_pool", "play_chunk"]

CHUNK_SECONDS = 0.05
"""The wall time a chunk of games aims at: long enough that handing it out costs little, short
enough that the last chunks of a run end together."""
MAX_CHUNK = 256


@dataclasses.dataclass(frozen=True)
class Context:
    """What a worker needs besides the games themselves."""

    tournament: str
    seed: int
    deals: str
    """``seed``, or ``file:NAME`` for a deal file (as the records say)."""
    rules: Rules
    table: TableSettings
    bots: Mapping[str, BotConfig]
    """The bots the chunk's games name: in-process, and launched ones when the workers launch them."""
    run: TournamentConfig | None = None
    """The run's configuration, when the workers launch bots: their branch is a run of its own."""
    folder: Path | None = None
    """The results folder (its ``logs/`` takes the launched bots' logs, at that path on the worker's machine)."""
    cwd: str = ""
    """The arena's working folder: launched bots' commands name their files from it."""
    keep: bool = True
    """The worker keeps its launched bots for the chunks to come (a worker process); a Ray task ends them."""
    seat_key: bytes | None = dataclasses.field(default=None, repr=False)
    """The event's key of the seat seeds (``None``: the views carry none)."""


@dataclasses.dataclass(frozen=True)
class GameJob:
    """One game for a worker to play."""

    game: Assignment
    fallback: tuple[str | None, str | None, str | None, str | None]
    """For each seat, why the fallback player takes it, or ``None`` for the bot itself."""
    deals: Mapping[tuple[int, int, int], Deal] | None = None
    """The game's deals from a deal file; ``None`` for seeded deals."""


@dataclasses.dataclass(frozen=True)
class PlayedGame:
    """A game a worker played: its record lines, and its record without the rounds (the lines hold them)."""

    lines: str
    record: GameRecord


@dataclasses.dataclass(frozen=True)
class Chunk:
    """What a worker sends back for a chunk: its games in order (``None``: a game whose launched bot did not
    come up, not played), the seconds it spent on them, and the launched bots it gave up on, with why."""

    games: list[PlayedGame | None]
    seconds: float
    broken: Mapping[str, str] = dataclasses.field(default_factory=dict)


# -- the worker's side ------------------------------------------------------------------------------

_FACTORIES: dict[str, Callable[..., Any]] = {}
"""The worker's bot classes, each loaded once."""
_FAST: dict[str, bool] = {}
"""Whether each bot offers the fast path (asked once per worker)."""


def _factory(spec: str) -> Callable[..., Any]:
    if spec not in _FACTORIES:
        _FACTORIES[spec] = load_bot_class(spec)  # a ConfigError here is the worker's setup's, not the bot's
    return _FACTORIES[spec]


def _make(bot: BotConfig) -> Any:
    """A fresh instance, or why it could not be made (a ``str``), as the arena's own seats do."""
    assert isinstance(bot.setup, PythonBot)  # launched bots are the branch's
    factory = _factory(bot.setup.spec)
    try:
        return make_bot(factory, bot.seed, bot.options)
    except BaseException as err:
        return f"creating the bot raised {type(err).__name__}: {err}"


def _deal_source(context: Context, job: GameJob) -> DealSource:
    if job.deals is None:
        return seeded_deals(context.seed, job.game.deal_set)
    return DealFile(dict(job.deals)).source(job.game.deal_set)


def _fast(context: Context, job: GameJob) -> GameRecord | None:
    """The game through the fast path, when every seat is its own bot and offers it."""
    game = job.game
    if any(reason is not None for reason in job.fallback):
        return None
    bots = []
    for name in game.seats:
        if _FAST.get(name) is False:
            return None
        instance = _make(context.bots[name])
        if isinstance(instance, str):
            return None  # the normal table records the failure
        _FAST[name] = has_fast_path(instance)
        if not _FAST[name]:
            return None
        bots.append(instance)
    return play_fast(context.rules, bots, game.seats, _deal_source(context, job), table_id="t0", game_id=game.id,
                     game_number=game.deal_set, first_dealer=game.first_dealer)


class _Instances:
    """The seats of a worker's in-process games: a fresh instance of each bot (or a broken seat), or the
    fallback player."""

    def __init__(self, context: Context) -> None:
        self.context = context

    async def player(self, seat: Seat, game: Assignment, fresh: list[Any]) -> Player:
        if seat.kind is SeatKind.FALLBACK:
            return AbsentPlayer(seat.bot, seat.reason)
        instance = _make(self.context.bots[seat.bot])
        return BrokenPlayer(seat.bot, instance) if isinstance(instance, str) else LocalPlayer(instance, seat.bot)

    def give_back(self, seat: Seat) -> None:
        return None  # an in-process seat holds nothing

    async def stop(self, fresh: Sequence[Any]) -> None:
        return None  # nor starts a process


async def _table(context: Context, job: GameJob) -> GameRecord:
    """The game at a normal table, each seat a fresh instance (or the fallback, or a broken seat)."""
    game = job.game
    seats = [Seat(name, SeatKind.LOCAL) if reason is None else Seat(name, SeatKind.FALLBACK, reason=reason)
             for name, reason in zip(game.seats, job.fallback, strict=True)]
    async with Host(_Instances(context), game) as host:
        await host.seat(seats)  # an in-process seat launches nothing, so none fails to come
        return await host.play(context.rules, _deal_source(context, job), table_id="t1", settings=context.table,
                               seat_key=context.seat_key)


def _launches(context: Context, job: GameJob) -> bool:
    """True when a seat of the game is a launched bot's (not the fallback's)."""
    return any(reason is None and kind_of(context.bots[name]).launched
               for name, reason in zip(job.game.seats, job.fallback, strict=True))


def _launched(context: Context, jobs: Sequence[GameJob]) -> tuple[list[GameRecord | None], Mapping[str, str]]:
    """The games of launched bots, played on this worker's branch; the bots it gave up on."""
    assert context.run is not None and context.folder is not None
    if context.cwd and os.getcwd() != context.cwd and os.path.isdir(context.cwd):
        os.chdir(context.cwd)  # a Ray worker starts in a folder of Ray's
    branch = branch_for(context.run, context.folder, dict(context.bots), context.seat_key)
    try:
        played = branch.play([(job.game, job.fallback, _deal_source(context, job)) for job in jobs])
        return played, branch.broken
    finally:
        if not context.keep:
            end_branch()


def play_chunk(context: Context, jobs: Sequence[GameJob]) -> Chunk:
    """Plays the games of a chunk, in order (in a worker process or a Ray task)."""
    settle()
    began = time.perf_counter()
    records: list[GameRecord | None] = [None] * len(jobs)
    launched = [index for index, job in enumerate(jobs) if context.run is not None and _launches(context, job)]
    for index, job in enumerate(jobs):
        if index not in launched:
            records[index] = _fast(context, job) or asyncio.run(_table(context, job))
    broken: Mapping[str, str] = {}
    if launched:
        played, broken = _launched(context, [jobs[index] for index in launched])
        for index, record in zip(launched, played, strict=True):
            records[index] = record
    out: list[PlayedGame | None] = []
    for job, record in zip(jobs, records, strict=True):
        if record is None:
            out.append(None)
            continue
        lines = "".join(game_lines(context.tournament, context.seed, context.deals, job.game, record))
        out.append(PlayedGame(lines, dataclasses.replace(record, rounds=[], redeals=[], fallbacks=[])))
    return Chunk(out, time.perf_counter() - began, broken)


def _watch_arena(arena: Connection) -> None:
    """A worker's initializer: ends the worker as soon as the arena's process ends, however it ended.

    ``arena`` is the reading end of a pipe whose only writing end the arena holds and never writes
    to: it becomes readable (at its end) only when the arena closed it or died. A worker's parent is
    the forkserver, which lives as long as a worker does, so neither a parent-death signal nor a
    watch of the parent's pid would ever fire; the pipe is the arena itself.
    """
    def wait() -> None:
        with contextlib.suppress(OSError, EOFError):
            arena.poll(None)
        os._exit(1)  # nothing of the worker's is worth keeping: the arena that wanted its games is gone

    threading.Thread(target=wait, name="arena-watch", daemon=True).start()


# -- the arena's side -------------------------------------------------------------------------------


class Pool(Protocol):
    """Somewhere to play chunks of games."""

    workers: int
    """Chunks that can run at once."""

    def submit(self, context: Context, jobs: Sequence[GameJob]) -> asyncio.Future[Chunk]:
        """Starts a chunk; the future gives its games in order."""

    def close(self) -> None:
        """Ends the pool (chunks not yet started are cancelled)."""


REPLACEMENTS = 3
"""How many times in a run the workers are started again after one of them died, before a death ends the run."""


class ProcessPool:
    """``workers`` processes on this machine; ``log`` is told when they are started again after a death."""

    def __init__(self, workers: int, log: Callable[[str], None] = lambda text: None) -> None:
        self.workers = workers
        self.replaced = 0
        """How many times the workers were started again (a worker had died)."""
        self._log = log
        methods = multiprocessing.get_all_start_methods()
        # fork would copy the parent's threads' locks mid-use (a gRPC server's among them): never fork.
        self._context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        # Workers orphaned by a killed arena would play on and hold their memory for minutes: each
        # watches this pipe, whose writing end only this process holds (its fds are not inherited).
        self._watched, self._alive = self._context.Pipe(duplex=False)
        self._executor = self._start()

    def _start(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(self.workers, mp_context=self._context,
                                                      initializer=_watch_arena, initargs=(self._watched,))

    def submit(self, context: Context, jobs: Sequence[GameJob]) -> asyncio.Future[Chunk]:
        return asyncio.ensure_future(self._played(context, list(jobs)))

    async def _played(self, context: Context, jobs: list[GameJob]) -> Chunk:
        """The chunk played, by new workers if a worker died while it was in play or waiting."""
        while True:
            executor = self._executor
            try:
                return await asyncio.wrap_future(executor.submit(play_chunk, context, jobs))
            except concurrent.futures.process.BrokenProcessPool:
                if not self._replace(executor, jobs):
                    raise

    def _replace(self, broken: concurrent.futures.ProcessPoolExecutor, jobs: Sequence[GameJob]) -> bool:
        """New workers for a pool a worker's death broke (once for all the chunks it broke); False when the run
        has had its :data:`REPLACEMENTS`."""
        if broken is not self._executor:
            return True  # another chunk of the same pool started the new workers
        if self.replaced >= REPLACEMENTS:
            return False
        self.replaced += 1
        broken.shutdown(wait=False, cancel_futures=True)
        self._executor = self._start()
        self._log(f"a worker died while playing games {jobs[0].game.id} to {jobs[-1].game.id}: new workers play "
                  f"the games that were in play ({self.replaced} of {REPLACEMENTS} restarts)")
        return True

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._alive.close()  # after the workers ended by themselves: any one left ends now


class RayPool:
    """Ray tasks: on the cluster at ``address`` (``auto``: the one this machine belongs to;
    ``ray://host:port``: through the Ray client), or on a Ray the arena starts here (``""``)."""

    def __init__(self, address: str, workers: int) -> None:
        try:  # an optional extra, typed as Any: present or not, the arena type-checks the same
            ray: Any = importlib.import_module("ray")
        except ImportError:
            raise ConfigError('tournament.backend is "ray" but Ray is not installed: pip install '
                              '"callbreak-arena[ray]" (or set backend = "local")') from None
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            if address:
                try:
                    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
                except (ConnectionError, RuntimeError, ValueError) as err:
                    raise ConfigError(f"cannot reach the Ray cluster at {address!r}: {_said(err)}") from None
            else:
                start_local_ray(workers)
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, cpus)
        self._task = ray.remote(num_cpus=1, max_retries=0)(play_chunk)

    def submit(self, context: Context, jobs: Sequence[GameJob]) -> asyncio.Future[Chunk]:
        # A Ray worker process outlives the run on a cluster: a task's launched bots end with the task.
        ref = self._task.remote(dataclasses.replace(context, keep=False), list(jobs))
        return asyncio.wrap_future(ref.future())

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()


LOCAL_RAY_STARTS = 2
"""Times the arena tries to start a local Ray: Ray gives its node a fixed 30 s to register, which a
machine busy with other work can miss once."""


def start_local_ray(workers: int) -> None:
    """Starts a Ray of our own on this machine, with our import path (the bots' code is where we see it).
    A start that times out is cleaned up (Ray leaves its half-started processes running) and tried again;
    the last failure is a :class:`ConfigError` in words."""
    ray: Any = importlib.import_module("ray")
    for attempt in range(1, LOCAL_RAY_STARTS + 1):
        try:
            ray.init(num_cpus=workers if workers > 1 else None, include_dashboard=False,
                     logging_level=logging.WARNING, log_to_driver=False,
                     runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(_import_path())}})
            return
        except Exception as err:  # Ray raises a bare Exception when its node does not start in time
            ray.shutdown()
            if attempt == LOCAL_RAY_STARTS:
                raise ConfigError(f"cannot start a local Ray (tried {LOCAL_RAY_STARTS} times; a busy machine can "
                                  f"make it miss its start-up time): {_said(err).rstrip('.')}. Try again, or set "
                                  f'backend = "local" with workers = N') from None


def _said(err: BaseException) -> str:
    return " ".join(str(err).split())


def _import_path() -> list[str]:
    """The folders of this process's import path outside the Python installation, absolute (a Ray
    worker starts in a folder of Ray's): a checkout the bots are imported from, say."""
    prefixes = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    out = []
    for entry in sys.path:
        folder = Path(entry or os.getcwd()).resolve()
        if folder.is_dir() and not any(folder.is_relative_to(p) for p in prefixes) and str(folder) not in out:
            out.append(str(folder))
    return out


def open_pool(config: TournamentConfig, log: Callable[[str], None] = lambda text: None) -> Pool | None:
    """The pool a configuration asks for: ``None`` for one process (``workers = 1``, ``backend = "local"``);
    ``log`` hears of workers started again."""
    if config.backend == "ray":
        return RayPool(config.ray_address, config.workers)
    if config.workers > 1:
        return ProcessPool(config.workers, log)
    return None


class Chunker:
    """How many games to put in a chunk: enough for about :data:`CHUNK_SECONDS` each, from the
    seconds per game of the chunks so far (4 games to begin with)."""

    def __init__(self, minimum: int = 1) -> None:
        self.minimum = minimum
        """The fewest games in a chunk (the tables a worker plays launched bots at, to keep them busy)."""
        self.size = max(4, minimum)
        self._per_game: float | None = None

    def timed(self, chunk: Chunk) -> None:
        """Learns from a chunk played."""
        per_game = chunk.seconds / max(1, len(chunk.games))
        self._per_game = per_game if self._per_game is None else 0.8 * self._per_game + 0.2 * per_game
        self.size = max(self.minimum, min(MAX_CHUNK, round(CHUNK_SECONDS / max(self._per_game, 1e-6))))
