"""Games handed to a pool of workers in chunks, and their records taken back in the order handed out.

The pool (:mod:`arena.event.play.backends`) plays chunks side by side and they come back in any order;
the :class:`Collector` numbers each chunk as it hands it out and gives the games of a chunk to be
recorded only once every chunk handed out before it is recorded, so the records are those of a run
in one process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.dealing import Deal, DealFile
from arena.errors import ArenaError, ConfigError
from arena.event.plan.schedule import Assignment
from arena.event.play.backends import Chunk, Chunker, Context, GameJob, Pool, open_pool
from arena.event.play.dispatcher import BlockState
from arena.event.play.kinds import kind_of
from arena.event.play.outcomes import Broken, Failed, Finished, Freed, Outcomes, PutBack
from arena.event.play.placement import launched_on_workers
from arena.event.play.recorder import Recorder
from arena.event.play.seats import Seat
from arena.event.setup.botconfig import BotConfig
from arena.event.setup.config import TournamentConfig

__all__ = ["Collector"]


class Collector:
    """Hands games to a pool and records them in order.

    Each game played is written by ``recorder``, and what came of each chunk goes to ``outcomes`` in the order
    handed out: the bots a worker gave up on, then each game played (or put back, when its launched bot did
    not come up), or the arena's failure when a chunk could not be played, which ends the run; and the place
    in the pool free again. ``spawn`` runs a coroutine as a task the runner looks after.
    """

    def __init__(
        self, pool: Pool, config: TournamentConfig, bots: Mapping[str, BotConfig], deal_file: DealFile | None, *,
        recorder: Recorder, outcomes: Outcomes, spawn: Callable[[Coroutine[Any, Any, None]], None],
        folder: Path | None = None,
    ) -> None:
        self.pool = pool
        self._config = config
        self._bots = bots
        self._deal_file = deal_file
        self._recorder, self._outcomes, self._spawn = recorder, outcomes, spawn
        self._folder = folder
        self.launches = launched_on_workers(config)
        """The workers launch the launched bots and play their tables too."""
        self.tables = -(-config.concurrency // pool.workers)
        """The tables each worker plays launched bots at, at once: the run's ``concurrency`` shared out."""
        # Launched bots' games are slower than a chunk's aim: a chunk fills the tables of a worker.
        self._chunker = Chunker(self.tables if self.launches else 1)
        self._out = 0
        """Chunks handed out and not yet back."""
        self._handed = 0
        """Chunks handed to the pool so far (each is numbered in that order)."""
        self._back: dict[int, tuple[list[GameJob], Chunk]] = {}
        """Chunks played but not yet recorded, waiting for the chunks handed out before them."""
        self._next_back = 0
        self._file_deals: dict[int, dict[tuple[int, int, int], Deal]] | None = None
        """A deal file's deals by deal set, for the workers (made when first needed)."""
        self._in_process: frozenset[str] = frozenset()
        self.seat_key: bytes | None = None
        """The event's key of the seat seeds, set by the runner once the results folder is open; the workers
        get it with each chunk."""
        self.refresh()

    @classmethod
    def open(
        cls, config: TournamentConfig, bots: Mapping[str, BotConfig], deal_file: DealFile | None, *,
        recorder: Recorder, outcomes: Outcomes, spawn: Callable[[Coroutine[Any, Any, None]], None],
        folder: Path | None = None, log: Callable[[str], None] = lambda text: None,
    ) -> Collector | None:
        """The collector of the pool the configuration asks for; ``None`` when the games are played in the
        arena's own process (one worker, or nothing a worker can play: no in-process or launched bot).
        ``log`` hears of workers started again after one died."""
        if not any(kind_of(bot).in_process for bot in config.bots) and not launched_on_workers(config):
            return None
        pool = open_pool(config, log)
        if pool is None:
            return None
        return cls(pool, config, bots, deal_file, recorder=recorder, outcomes=outcomes, spawn=spawn, folder=folder)

    def refresh(self) -> None:
        """Learns the bots a worker can play again (house bots and copies join as the run goes)."""
        self._in_process = frozenset(name for name, bot in self._bots.items() if kind_of(bot).on_workers(self.launches))

    @property
    def free(self) -> int:
        """Games the pool could take now: two chunks per worker in flight at most."""
        return max(0, 2 * self.pool.workers - self._out) * self._chunker.size

    @property
    def lookahead(self) -> int:
        """Games the dispatcher should be given ahead of play to keep the pool busy."""
        return 2 * self.pool.workers * self._chunker.size

    def pooled(self, state: BlockState) -> bool:
        """True when every seat of the block's games is one a worker can take (a ``python`` bot, a launched
        bot the workers launch, or the fallback player): a worker plays them."""
        outside = state.block.bots - self._in_process
        return not outside or outside <= state.fallback

    def sequential(self, state: BlockState) -> bool:
        """True when a worker plays the block's games one after another in the order handed out (every seat an
        in-process bot or the fallback player: no launched bot, whose tables a worker plays side by side)."""
        return self.pooled(state) and all(
            bot in state.fallback or kind_of(self._bots[bot]).in_process for bot in state.block.bots)

    def job(self, game: Assignment, seats: Sequence[Seat]) -> GameJob:
        """The worker's job of a game whose seats are taken."""
        reasons = [seat.reason if seat.kind == "fallback" else None for seat in seats]
        deals = None
        if self._deal_file is not None:
            if self._file_deals is None:
                self._file_deals = {}
                for key, deal in self._deal_file.deals.items():
                    self._file_deals.setdefault(key[0], {})[key] = deal
            deals = self._file_deals.get(game.deal_set, {})
        return GameJob(game, (reasons[0], reasons[1], reasons[2], reasons[3]), deals)

    def _context(self) -> Context:
        """What the workers need: in-process bots named by absolute paths (a Ray worker starts elsewhere)."""
        bots = {}
        for name, bot in self._bots.items():
            shipped = kind_of(bot).shipped(bot, self.launches)
            if shipped is not None:
                bots[name] = shipped
        config = self._config
        deals = f"file:{config.deal_file.name}" if config.deal_file else "seed"
        if not self.launches:
            return Context(config.name, config.seed, deals, config.rules, config.table, bots, seat_key=self.seat_key)
        folder = (self._folder or Path(".")).resolve()
        run = dataclasses.replace(config, bots=tuple(bots.values()), concurrency=self.tables)
        return Context(config.name, config.seed, deals, config.rules, config.table, bots,
                       run=run, folder=folder, cwd=os.getcwd(), seat_key=self.seat_key)

    def hand_out(self, jobs: list[GameJob]) -> None:
        """Hands games to the pool in chunks, numbered in order; the games of one deal set handed out together stay
        in one chunk, which a worker plays one after another (a bot plays no two games of a deal set at once)."""
        context = self._context()
        size = self._chunker.size
        chunks: list[list[GameJob]] = []
        for job in jobs:
            if not chunks or (len(chunks[-1]) >= size and chunks[-1][-1].game.deal_set != job.game.deal_set):
                chunks.append([])
            chunks[-1].append(job)
        for chunk in chunks:
            number = self._handed
            self._handed += 1
            self._out += 1
            self._spawn(self._collect(number, chunk, self.pool.submit(context, chunk)))

    async def _collect(self, number: int, jobs: list[GameJob], played: asyncio.Future[Chunk]) -> None:
        """Records a chunk once it and every chunk handed out before it are played."""
        outcomes = self._outcomes
        try:
            try:
                chunk = await played
            finally:
                self._out -= 1
            self._chunker.timed(chunk)
            self._back[number] = (jobs, chunk)
            while self._next_back in self._back:
                done, chunk = self._back.pop(self._next_back)
                self._next_back += 1
                for bot, why in chunk.broken.items():
                    outcomes.put(Broken(bot, why))
                for job, game in zip(done, chunk.games, strict=True):
                    if game is None:  # a launched bot did not come up: the game is played later
                        outcomes.put(PutBack(job.game))
                        continue
                    self._recorder.lines([game.lines])
                    outcomes.put(Finished(job.game, game.record))
        except asyncio.CancelledError:
            raise
        except ArenaError as err:
            outcomes.put(Failed(err))
        except BaseException as err:  # a worker died, or could not run: the arena's failure
            outcomes.put(Failed(ConfigError(f"a worker could not play games {jobs[0].game.id} to "
                                            f"{jobs[-1].game.id}: {type(err).__name__}: {err}")))
        finally:
            outcomes.put(Freed())

    def close(self) -> None:
        """Ends the pool (chunks not yet started are cancelled)."""
        self.pool.close()
