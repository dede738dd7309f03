"""The tournament runner: from a configuration to durable records, whoever turns up.

It prepares the run (:mod:`arena.event.run.preparation`: the results folder checked against the
configuration, what changed said in words, the games planned), starts the services its bots need
(:mod:`arena.event.play.services`), and dispatches games as their bots are present and free
(:mod:`arena.event.play.dispatcher`, :mod:`arena.event.play.seats`): to a table (:mod:`arena.event.play.slots`),
through the fast path, or to a pool of workers (:mod:`arena.event.play.collector`). The plan is released
as the run goes (:mod:`arena.event.run.release`). Each game is recorded as it ends; the fault policy
disqualifies, and this runner applies what it says; the absence policy (:func:`arena.event.run.policy.absence`)
decides about absent bots, asked and obeyed by :mod:`arena.event.run.attendance`. The organiser sees the run
through :mod:`arena.event.run.monitor`; standings and sequential tests belong to a *judge* (:class:`Judge`),
which the layer above supplies.

The parts say what happened as values, and this runner applies them, in :meth:`Tournament._apply` and
:meth:`Tournament._taken_out`: the games that end at a table or in a worker's chunk are put into the run's
outcomes (:mod:`arena.event.play.outcomes`), which the dispatch loop takes before it starts the next games;
a game of the fast path, a release of rounds (:class:`~arena.event.run.release.Filled`) and a bot taken out
(:class:`~arena.event.run.attendance.TakenOut`) are returned by the call that made them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.core.dealing import DealSource, seeded_deals
from arena.event.plan.manifest import BotStatus, Manifest
from arena.event.plan.status import BotCondition, Progress, RunState, Status, snapshot, write_status
from arena.event.play.collector import Collector
from arena.event.play.dispatcher import BlockState, Dispatcher
from arena.event.play.outcomes import Broken, Failed, Finished, Freed, Outcome, Outcomes, PutBack
from arena.event.play.recorder import Recorder
from arena.event.play.seats import Seat, Seating, SeatKind
from arena.event.play.services import Services
from arena.event.play.slots import Slots
from arena.event.run.attendance import Attendance, TakenOut
from arena.event.run.monitor import Monitor
from arena.event.run.policy import FaultPolicy
from arena.event.run.preparation import add_house, identity, open_folder, prepare
from arena.event.run.release import Release
from arena.event.run.summary import Judge, RunSummary
from arena.event.run.tally import Tally
from arena.event.setup.config import TournamentConfig, read_deal_file
from arena.players.pauses import settle
from arena.players.table import Asked
from arena.records.format import GameRecords
from arena.records.store import ResultsStore

__all__ = ["Tournament", "woken"]

YIELD_EVERY_S = 0.005
"""Longest time the dispatcher plays fast-path games without letting the event loop serve others."""
LOOKAHEAD = 256
"""Games not yet started that the dispatcher is given ahead of play (more while bots are absent)."""


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
    """One tournament run over a results folder: prepare, start the services, play, record, report."""

    def __init__(
        self, config: TournamentConfig, folder: Path | None = None, *, fresh: bool = False, progress: bool = False,
        serve: bool = False, judge: Judge | None = None, log: Callable[[str], None] | None = None,
        continued: bool = False, guests: Mapping[str, str] | None = None, asked: Callable[[Asked], None] | None = None,
    ) -> None:
        self.config = config
        self.folder = folder or config.results or Path("results") / config.name
        self.fresh, self.progress, self.judge = fresh, progress, judge
        self.serve = serve
        """A long-running arena: under ``forfeit = "wait"`` it waits for absent bots as long as it takes."""
        self.continued = continued
        """Another run follows at the same address (check-bot's next rules profile): at the end, connected
        bots are told to reconnect, not that the tournament is over."""
        self.asked = asked
        """Hears of each request to a seat at a table as it is answered (or not): check-bot's watch on its bot."""
        self.guests = dict(guests or {})
        """Bots the arena server admits by token (SHA-256 digest -> name) and seats at no table: a ladder's other
        remote entrants, held connected until the run ends."""
        self.store = ResultsStore(self.folder)
        self.bots = {b.name: b for b in config.bots}
        self.deal_file = read_deal_file(config.deal_file) if config.deal_file else None
        self.deal_sets: Sequence[int] = self.deal_file.games if self.deal_file else range(1, config.deal_sets + 1)
        self.statuses: dict[str, BotStatus] = {}
        self.policy = FaultPolicy(config.disqualify_after)
        self.seating = Seating(config, self.bots, self.statuses)
        self.summary = RunSummary(self.folder)
        self.manifest: Manifest | None = None
        self.tally = Tally()
        self.recorder = Recorder(self.store, config)
        self._wake = asyncio.Event()
        self._outcomes = Outcomes(self._wake)
        """What came of the games at the tables and in the pool, not yet applied."""
        # House bots keep nothing between games: only the others' games on a deal set are held to the order of play.
        self._dispatcher: Dispatcher[Seat] = Dispatcher(
            config.rotation, config.seed, holds=lambda bot: bot not in self.bots or not self.bots[bot].house)
        self.attendance = Attendance(self.statuses, self.seating, self._dispatcher, self.summary, self.store,
                                     log=self.log, bots=self.bots, patience=config.absent_after,
                                     forfeit=config.forfeit, serve=serve)
        self.monitor = Monitor(self.folder, log or (lambda text: None), judge, status=self.status,
                               faults=lambda: self.summary.faults, awaited=self.attendance.awaited_words)
        self.services = Services(config, self.folder, self.bots, self.seating, log=self.log, changed=self._wake.set,
                                 guests=self.guests)
        self.tables = Slots(config.concurrency, config.rules, config.table, self.seating, self.deals,
                            recorder=self.recorder, outcomes=self._outcomes, spawn=self._spawn, asked=asked)
        self._release: Release[Seat] | None = None
        self._collector: Collector | None = None
        """Where games of in-process bots are played, when not here (``workers``, ``backend``)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._failure: BaseException | None = None
        """An error of the arena itself in a game task (not a bot's fault): it ends the run."""
        self._state = RunState.STARTING

    @property
    def address(self) -> str:
        """``host:port`` of the arena server, once it listens."""
        return self.services.address

    def log(self, text: str) -> None:
        """A line for the organiser (around the progress bar)."""
        self.monitor.log(text)

    def deals(self, deal_set: int) -> DealSource:
        """The deal source of one deal set."""
        if self.deal_file is not None:
            return self.deal_file.source(deal_set)
        return seeded_deals(self.config.seed, deal_set)

    # -- prepare ---------------------------------------------------------------------------------

    def prepare(self) -> list[GameRecords]:
        """Opens the results folder, checks the configuration against it and plans the games (what
        :meth:`run` does before it plays: the manifest is written); returns the games already recorded."""
        games, previous = open_folder(self.store, self.fresh)
        ready = prepare(self.config, games, previous, identity(self.config), folder=self.folder,
                        where=str(self.store.manifest_path), deal_sets=self.deal_sets, standings=self._standings)
        # Once the folder is known to be this tournament's: its key, or a new one kept in it.
        key = self.store.seat_key(self.config.seat_key)
        self.tables.seat_key = key
        if self._collector is not None:
            self._collector.seat_key = key
        self.statuses.update(ready.statuses)
        self.policy = ready.policy
        self.bots.update(ready.bots)
        if self._collector is not None:
            self._collector.refresh()
        self.manifest = ready.manifest
        self._release = Release(ready.schedule, ready.planner, ready.manifest, ready.rounds, self._dispatcher,
                                ready.recorded, self.folder, self.store.manifest_path.name, save=self.attendance.save)
        self.attendance.attach(ready.manifest, self._release, ready.recorded.blocks)
        self.summary.changes = ready.changes
        self.tally = ready.tally
        self.store.write_manifest(self.manifest.to_dict())
        return games

    def _standings(self) -> dict[str, float]:
        return self.tally.standings(self._release.number if self._release is not None else 0)

    def _house(self, names: Sequence[str]) -> None:
        add_house(self.bots, names)
        if self._collector is not None:
            self._collector.refresh()

    def _release_rounds(self, more: bool = False) -> None:
        """Releases rounds to the dispatcher (``more``: one round beyond the window, however many games wait)."""
        assert self._release is not None
        collector = self._collector
        lookahead = max(LOOKAHEAD, 4 * self.config.concurrency, collector.lookahead if collector is not None else 0)
        filled = self._release.fill(lookahead, more, self._decided, self.attendance.excluded)
        if filled.house:
            self._house(filled.house)
        if filled.decided:
            self.summary.stopped_early = True

    def _decided(self) -> bool:
        return self.judge is not None and self.judge.decided()

    # -- play ------------------------------------------------------------------------------------

    async def run(self) -> RunSummary:
        """Plays every game not yet recorded, as far as the bots and the policies allow."""
        settle()
        summary = self.summary
        self.services.check()
        # Before the folder is touched: a backend that cannot start is refused.
        self._collector = Collector.open(self.config, self.bots, self.deal_file, recorder=self.recorder,
                                         outcomes=self._outcomes, spawn=self._spawn, folder=self.folder, log=self.log)
        if self._collector is not None:
            self.seating.pooled = self._collector.pooled
        try:
            games = self.prepare()
            # The folder is this run's now: a status of a run before this one must not pass for this one's. A run
            # refused before this point (another tournament's folder, a bot that cannot be loaded) changed nothing.
            with contextlib.suppress(OSError):
                write_status(self.folder, self.status())
            summary.begin(games, self.statuses)
            for change in summary.changes:
                self.log(f"plan changed: {change}")
            if self.judge is not None:
                self.judge.start(games)
            self._release_rounds()
        except BaseException:
            self._close_pool()
            raise
        assert self._release is not None
        done, total = self._dispatcher.counts()
        # A sequential test ends when it decides: its bar counts games without a planned total.
        open_ended = self._release.schedule.sequential
        bar = self.monitor.bar = Progress(None if open_ended else self._release.planned(total), done, self.progress)
        ticker: asyncio.Task[None] | None = None
        try:
            await self.services.start(self.statuses, self.attendance.excluded())
            self._state = RunState.RUNNING
            ticker = asyncio.get_running_loop().create_task(self.monitor.tick())
            await self._dispatch()
            # The games are played; their tasks may still be ending the processes started for them, which
            # must end by themselves (a stdio bot reads the end of its input), not be cut short below.
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
            self._state = RunState.STOPPED if summary.outstanding else RunState.FINISHED
        except BaseException:
            self._state = RunState.INTERRUPTED
            raise
        finally:
            for task in [ticker, *self._tasks]:
                if task is not None:
                    task.cancel()
            self.monitor.stop()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            try:
                self._take_outcomes()  # what the last games' tasks said as they ended
            finally:
                self._close_pool()
                bar.close()
                self.store.close()
                with contextlib.suppress(OSError):
                    self.monitor.write_status(force=True)
                await self.services.close(self._state == RunState.FINISHED, self.continued)
        if self.judge is not None:
            self.judge.refresh(force=True)
        return summary

    async def _dispatch(self) -> None:
        dispatcher, seating, tables, collector, release = (
            self._dispatcher, self.seating, self.tables, self._collector, self._release)
        assert release is not None
        yielded = time.monotonic()
        while True:
            self._wake.clear()
            self._take_outcomes()
            if self._failure is not None:
                raise self._failure
            self._release_rounds()
            decided = self.summary.stopped_early
            pool_slots = collector.free if collector is not None else 0
            picked = dispatcher.pick(len(tables.free), seating.take, seating.give_back, only_started=decided,
                                     pooled=collector.pooled if collector is not None else None, pool_slots=pool_slots,
                                     lane=self._lane)
            jobs = []
            for game, seats in picked:
                dispatcher.blocks[game.block].fallback |= {seat.bot for seat in seats if seat.kind == SeatKind.FALLBACK}
                if collector is not None and collector.pooled(dispatcher.blocks[game.block]):
                    jobs.append(collector.job(game, seats))
                    continue
                played = tables.start(game, seats)  # the fast path plays it at once
                if played is not None:
                    self._finished(played)
            if collector is not None and jobs:
                collector.hand_out(jobs)
            if picked:
                self._state = RunState.RUNNING
                if time.monotonic() - yielded > YIELD_EVERY_S:  # fast-path games run on the loop: let it breathe
                    await asyncio.sleep(0)
                    yielded = time.monotonic()
                continue
            more = release.number < len(self.deal_sets)
            if (more and dispatcher.refused and (tables.free or pool_slots > 0) and not release.stepwise
                    and not self.bots.keys() <= dispatcher.refused_bots):
                # Room to play, and every game released waits for a bot that cannot sit now: look further
                # ahead in the plan (nothing waits for an absent bot while other games can be played). When
                # no bot at all could sit (launched bots still coming up), no game further on could start.
                self._release_rounds(more=True)
                continue
            if dispatcher.idle and (decided or not more):
                return
            timeout = self._absence()
            if timeout == 0.0:
                continue
            if self.summary.outstanding:
                return
            await woken(self._wake, timeout)
            yielded = time.monotonic()

    def _lane(self, state: BlockState) -> bool:
        """True when the block's games are played one after another as they start (the fast path, a worker)."""
        collector = self._collector
        if collector is not None and collector.pooled(state):
            return collector.sequential(state)
        return self.seating.sequential(state)

    def _absence(self) -> float | None:
        """Applies the absence policy; returns how long to wait before looking again (None: until something
        happens; 0: look again at once)."""
        told = self.attendance.look(room=bool(self.tables.free))
        for out in self.attendance.apply(told):
            self._taken_out(out)
        self._state = RunState.WAITING if told.waiting else RunState.RUNNING
        return told.next_look

    # -- apply what happened ----------------------------------------------------------------------

    def _take_outcomes(self) -> None:
        """Applies what came of the games at the tables and in the pool since last asked, and takes back the
        absent bots that are connected again."""
        for outcome in self._outcomes.take():
            self._apply(outcome)
        for bot in self.attendance.back():
            self.attendance.returned(bot)

    def _apply(self, outcome: Outcome) -> None:
        """Applies what came of one game at a table or of one chunk of the pool."""
        match outcome:
            case Finished():
                self._finished(outcome)
            case PutBack(game):  # a launched bot did not come up: the game is played later
                self._dispatcher.put_back(game)
            case Broken(bot, why):  # a worker gave up on a launched bot: it is broken here too
                if self.seating.launcher is not None:
                    self.seating.launcher.mark_broken(bot, why)
            case Failed(error):  # the arena's own failure (a bot's is a fault): it ends the run
                self._failure = error
            case Freed():  # a table or a place in the pool is free: the dispatch loop looks again
                pass

    def _finished(self, played: Finished) -> None:
        game, record = played.game, played.record
        self._dispatcher.finished(game)
        self.tally.note(game.seats, record.totals, game.round, record.faults)
        summary = self.summary
        summary.played += 1
        summary.faults += len(record.faults)
        for bot in self.policy.add_game(game.seats, record.faults):
            out = self.attendance.take_out(bot, BotCondition.DISQUALIFIED, self.policy.reason(bot))
            if out is not None:
                self._taken_out(out)
        if self.judge is not None:
            self.judge.game_done(game, record)
        self.monitor.game_done()

    def _taken_out(self, out: TakenOut) -> None:
        """A bot is taken out: the server turns it away, the house bots its smaller field seats join, and the
        dispatch loop looks again."""
        if out.house:
            self._house(out.house)
        self.services.bar(out.bot, out.status, out.reason)
        self._wake.set()

    # -- report ----------------------------------------------------------------------------------

    def status(self) -> Status:
        """The live status of the event."""
        dispatcher, seating = self._dispatcher, self.seating
        server, launcher = seating.server, seating.launcher
        done, total = dispatcher.counts()
        return snapshot(
            self.config.name, self._state, address=self.address, tls=server.tls if server is not None else False,
            done=done, planned=self._release.planned(total) if self._release is not None else 0,
            kinds={name: bot.kind for name, bot in self.bots.items()}, statuses=self.statuses, presence=seating,
            broken=launcher.broken if launcher is not None else {}, left=(g.seats for g in dispatcher.left()),
            games=self.tally.games, faults=self.tally.faults, decisions=self.policy.counts,
            sessions=server.lobby.all_live() if server is not None else (), tables=self.tables.states(),
            awaited=self.attendance.awaited, test=self.monitor.test_line(),
        )

    # -- housekeeping ----------------------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _close_pool(self) -> None:
        if self._collector is not None:
            collector, self._collector = self._collector, None
            collector.close()
