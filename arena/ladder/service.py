"""The ladder's long-running player: it checks new versions, chooses blocks, plays them, and rates them.

One asyncio task (:meth:`LadderService.run`) does the choosing. Each block is a tournament of its own
(:mod:`arena.ladder.blocks`) played as a task on the same loop, at most ``[capacity] tables`` at once; a
check runs check-bot in a thread, one at a time. Everything the service decides is in the database before
it acts on it, and everything a block changes is written in one transaction when the block is done:

- a block is made ``playing`` (with its seats and seed) before its tournament starts, so a service killed
  at any moment finds it on restart and resumes its results folder: games recorded stay, the game that was
  in play is played again from its start, and the block is then rated once;
- a block's results, the ratings it moves and the test it feeds are written with its ``done`` in one
  transaction: a block is counted once or not at all.

A remote version plays while it is there: a block with one is played on the ladder's gRPC port (one such
block at a time), and if the version does not come within ``[remote] patience_s`` the block is void and the
version is set aside for twice that long. Versions' crashes and hangs are the tournament's faults, played
by the fallback: they harm only the games of the version that has them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import random
import socket
import time
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from arena.errors import ArenaError
from arena.event.config import parse_config
from arena.event.preparation import as_begun
from arena.event.tournament import Tournament, woken
from arena.ladder.blocks import (
    BlockOutcome,
    RatingModel,
    block_config,
    block_seed,
    bot_table,
    event_text,
    outcome,
    rate_games,
)
from arena.ladder.checking import check_version
from arena.ladder.control import REMOTE, Ladder
from arena.ladder.db import (
    Block,
    BlockKind,
    BlockResult,
    BlockState,
    Decision,
    Entrant,
    Rating,
    RatingPoint,
    Test,
    TestKind,
    TestPoint,
    TestState,
    Version,
    VersionState,
    aware,
    utc_now,
)
from arena.ladder.matchmaking import Candidate, Proposal, choose, fill
from arena.ladder.schema import upgrade
from arena.rating.html import write_report_files
from arena.rating.live import LiveJudge
from arena.rating.sequential import SequentialTest

__all__ = ["FINAL", "LadderService", "free_port", "record_block", "test_state"]

FINAL = "final"
"""The final's results folder, in the ladder's."""
POLL_S = 1.0
"""Seconds between looks at the database when nothing wakes the service."""
RATED_KINDS = (BlockKind.PLACEMENT, BlockKind.RATED)
SAY_EVERY_S = 60.0
"""Seconds between the organiser's lines that count the blocks done (a line per block would flood them)."""


def free_port(host: str) -> int:
    """A port free on ``host`` now (for the remote entrants' gRPC port when none is set)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _rng(seed: int, what: str) -> random.Random:
    return random.Random(hashlib.sha256(f"callbreak-arena/ladder/v1/{seed}/{what}".encode()).digest())


def test_state(test: Test, values: list[float], burn_in: int) -> SequentialTest:
    """A sequential test fed ``values`` (b - a per block, in tenths per game), as the test's settings say."""
    sequential = SequentialTest(test.delta0 * 10, test.delta1 * 10, test.alpha, test.beta, burn_in=burn_in,
                                cap=test.cap, per_point=10)
    sequential.extend(values)
    return sequential


def record_block(session: Session, block: Block, result: BlockOutcome, model: RatingModel, burn_in: int) -> None:
    """Writes what the block's records say: its results, the ratings it moves (a rated or placement block),
    the test it feeds, and its ``done``; the caller commits it as one transaction."""
    versions = {v.id: v for v in session.scalars(select(Version).where(Version.id.in_(block.seats)))}
    by_label = {v.label: v for v in versions.values()}
    for label, version in by_label.items():
        session.add(BlockResult(block_id=block.id, version_id=version.id, games=len(result.games),
                                points=result.points.get(label, 0), score=result.score.get(label, 0.0),
                                faults=result.faults.get(label, 0)))
    now = utc_now()
    if block.kind in RATED_KINDS:
        stored = {r.version_id: r for r in session.scalars(select(Rating).where(Rating.version_id.in_(block.seats)))}
        before = {v.label: (stored[v.id].mu, stored[v.id].sigma) for v in versions.values() if v.id in stored}
        after = rate_games(model, before, result.games)
        for label, (mu, sigma) in after.items():
            version = by_label[label]
            rating = stored.get(version.id)
            if rating is None:
                rating = Rating(version_id=version.id, mu=mu, sigma=sigma, games=0, blocks=0, score_sum=0.0,
                                score_squares=0.0)
                session.add(rating)
            score = result.score.get(label, 0.0)
            rating.mu, rating.sigma, rating.updated = mu, sigma, now
            rating.games += len(result.games)
            rating.blocks += 1
            rating.score_sum += score
            rating.score_squares += score * score
            session.add(RatingPoint(version_id=version.id, block_id=block.id, mu=mu, sigma=sigma, at=now))
        block.rated = True
    if block.test_id is not None:
        test = session.get(Test, block.test_id)
        if test is not None and test.state == TestState.RUNNING:
            _feed_test(session, test, block, versions, result, burn_in)
    block.state, block.finished = BlockState.DONE, now


def _feed_test(session: Session, test: Test, block: Block, versions: dict[int, Version], result: BlockOutcome,
               burn_in: int) -> None:
    test.blocks_done += 1
    if test.kind == TestKind.SCRIMMAGE:
        if test.blocks_done >= test.cap:
            test.state, test.finished = TestState.DECIDED, utc_now()
        return
    a, b = versions[test.a].label, versions[test.b].label
    value = result.score.get(b, 0.0) - result.score.get(a, 0.0)
    values = [*session.scalars(select(TestPoint.value).where(TestPoint.test_id == test.id).order_by(TestPoint.n)),
              value]
    sequential = test_state(test, values, burn_in)
    test.llr = sequential.llr
    session.add(TestPoint(test_id=test.id, block_id=block.id, n=len(values), value=value, llr=sequential.llr,
                          at=utc_now()))
    if sequential.verdict in ("H0", "H1"):
        test.state, test.decision, test.finished = TestState.DECIDED, Decision(sequential.verdict), utc_now()
    elif sequential.verdict == "no decision":
        test.state, test.finished = TestState.STOPPED, utc_now()


class LadderService:
    """Checks, chooses, plays and rates, until ``stop`` is set; ``log`` takes a line for the organiser."""

    def __init__(self, ladder: Ladder, log: Callable[[str], None] = lambda text: None) -> None:
        self.ladder = ladder
        self.settings = ladder.settings
        self.log = log
        self.model = RatingModel(self.settings.rating.beta, self.settings.rating.tau)
        self.remote_port = self.settings.remote.port or free_port(self.settings.remote.host)
        """Where remote entrants' bots connect (fixed for the service's life)."""
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._playing: dict[int, asyncio.Task[None]] = {}
        """Block id -> the task playing it."""
        self._remote_block: int | None = None
        self._checking: asyncio.Task[None] | None = None
        self._final: asyncio.Task[None] | None = None
        self._last: dict[int, int] = {}
        """Version id -> the number of its last block."""
        self._done_since = 0
        """Blocks done since the last line of the organiser's log."""
        self._said = time.monotonic()

    @property
    def remote_address(self) -> str:
        return f"{self.settings.remote.host}:{self.remote_port}"

    def wake(self) -> None:
        """Have the service look at the database now (from any thread)."""
        if self._loop is not None and self._wake is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    async def run(self, stop: asyncio.Event) -> None:
        """Plays until ``stop`` is set; blocks in play are then left as they are, to resume at the next start."""
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        self.ladder.wake = self.wake
        upgrade(self.ladder.engine)
        self._recover()
        try:
            while not stop.is_set():
                self._step()
                await woken(self._wake, POLL_S)
                self._wake.clear()
                if stop.is_set():
                    break
        finally:
            self.ladder.wake, self._loop = (lambda: None), None
            tasks = [*self._playing.values(), *(t for t in (self._checking, self._final) if t is not None)]
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _recover(self) -> None:
        """What a killed service left: versions being checked are checked again; blocks in play resume."""
        with self.ladder.session() as session:
            for version in session.scalars(select(Version).where(Version.state == VersionState.CHECKING)):
                version.state = VersionState.SUBMITTED
            seats = [Block.seat0, Block.seat1, Block.seat2, Block.seat3]
            for seat in seats:
                for version_id, last in session.execute(select(seat, func.max(Block.id)).group_by(seat)):
                    self._last[version_id] = max(self._last.get(version_id, 0), last)
            resumed = session.scalars(select(Block.id).where(Block.state == BlockState.PLAYING)
                                      .order_by(Block.id)).all()
        for block_id in resumed:
            self.log(f"block {block_id} was in play when the ladder stopped: resuming it")
            self._start(block_id)

    # -- one look at the database ---------------------------------------------------------------------

    def _step(self) -> None:
        self._start_check()
        if self._done_since and time.monotonic() - self._said >= SAY_EVERY_S:
            self.log(f"{self._done_since} block{'s' if self._done_since != 1 else ''} done in the last "
                     f"{time.monotonic() - self._said:.0f} s; {len(self._playing)} in play")
            self._done_since, self._said = 0, time.monotonic()
        with self.ladder.session() as session:
            state = Ladder.state(session)
            paused, final = state.paused, state.final_state
        if final == "playing":
            if not self._playing and self._final is None:
                self._final = asyncio.ensure_future(self._play_final())
            return
        if paused:
            return
        while len(self._playing) < self.settings.capacity.tables:
            proposal = self._next()
            if proposal is None:
                return
            self._start(self._make_block(*proposal))

    def _start_check(self) -> None:
        if self._checking is not None and not self._checking.done():
            return
        with self.ladder.session() as session:
            waiting = session.scalars(select(Version.id).where(Version.state == VersionState.SUBMITTED)
                                      .order_by(Version.id).limit(1)).first()
        if waiting is not None:
            self._checking = asyncio.ensure_future(self._check(waiting))

    async def _check(self, version_id: int) -> None:
        await asyncio.to_thread(check_version, self.ladder, version_id, self.log)
        self.wake()

    def _busy(self) -> set[int]:
        with self.ladder.session() as session:
            blocks = session.scalars(select(Block).where(Block.id.in_(self._playing))).all()
            return {seat for block in blocks for seat in block.seats}

    def _field(self, session: Session, busy: set[int]) -> tuple[list[Candidate], dict[int, Version]]:
        """The active versions free to play, with their ratings."""
        now = utc_now()
        active = session.scalars(select(Version).where(Version.state == VersionState.ACTIVE)).all()
        ratings = {r.version_id: r for r in session.scalars(select(Rating))}
        mu0, sigma0 = self.model.initial()
        field, versions = [], {}
        for version in active:
            if version.id in busy:
                continue
            if version.kind == REMOTE and (self._remote_block is not None or (
                    version.away_until is not None and aware(version.away_until) > now)):
                continue
            rating = ratings.get(version.id)
            field.append(Candidate(version.id, version.entrant_id, rating.mu if rating else mu0,
                                   rating.sigma if rating else sigma0, rating.blocks if rating else 0,
                                   self._last.get(version.id, 0)))
            versions[version.id] = version
        return field, versions

    def _next(self) -> tuple[Proposal, int | None] | None:
        """The next block to play, and its test (``None``: a rated or placement block)."""
        busy = self._busy()
        with self.ladder.session() as session:
            field, _ = self._field(session, busy)
            number = (session.scalar(select(func.max(Block.id))) or 0) + 1
            rng = _rng(self.settings.seed, f"block/{number}")
            tests_playing = sum(1 for block in session.scalars(select(Block).where(
                Block.id.in_(self._playing), Block.test_id.is_not(None))))
            share = max(1, int(self.settings.capacity.tables * self.settings.tests.share))
            test_first = self.settings.tests.share > 0 and tests_playing < share
            if test_first:
                found = self._test_block(session, field, busy, rng)
                if found is not None:
                    return found
            rated = self._rated_block(session, field, rng)
            if rated is not None or test_first or self.settings.tests.share <= 0:
                return rated
            return self._test_block(session, field, busy, rng)  # tests may use tables nobody else can

    def _rated_block(self, session: Session, field: list[Candidate], rng: random.Random) -> tuple[
            Proposal, None] | None:
        proposal = choose(field, lambda anchor: self._recent(session, anchor), self.settings.matchmaking, rng)
        return None if proposal is None else (proposal, None)

    def _recent(self, session: Session, version_id: int) -> set[frozenset[int]]:
        """The groups of four of the version's last ``no_rematch_blocks`` blocks."""
        keep = self.settings.matchmaking.no_rematch_blocks
        if keep == 0:
            return set()
        blocks = session.scalars(select(Block).where(or_(
            Block.seat0 == version_id, Block.seat1 == version_id, Block.seat2 == version_id,
            Block.seat3 == version_id)).order_by(Block.id.desc()).limit(keep)).all()
        return {frozenset(block.seats) for block in blocks}

    def _test_block(self, session: Session, field: list[Candidate], busy: set[int],
                    rng: random.Random) -> tuple[Proposal, int] | None:
        tests = session.scalars(select(Test).where(Test.state == TestState.RUNNING).order_by(Test.id)).all()
        in_flight: dict[int, int] = {}
        for block in session.scalars(select(Block).where(Block.id.in_(self._playing))):
            if block.test_id is not None:
                in_flight[block.test_id] = in_flight.get(block.test_id, 0) + 1
        for test in tests:
            if test.blocks_done + in_flight.get(test.id, 0) >= test.cap:
                continue
            if test.kind == TestKind.SCRIMMAGE:
                seats = [test.a, *(int(v) for v in test.opponents.split(","))]
                if busy & set(seats):
                    continue
                rng.shuffle(seats)
                return Proposal((seats[0], seats[1], seats[2], seats[3]), BlockKind.SCRIMMAGE), test.id
            if test.a in busy or test.b in busy:
                continue
            pair = session.scalars(select(Version).where(Version.id.in_((test.a, test.b)))).all()
            entrants = {v.entrant_id for v in pair}
            others = [c for c in field if c.id not in (test.a, test.b) and c.entrant not in entrants]
            # The two others: the closest in rating to the pair's mean, so the test measures them in the field
            # they would meet.
            ratings = [c.mu for c in field if c.id in (test.a, test.b)] or [self.model.initial()[0]]
            centre = sum(ratings) / len(ratings)
            one_each = {c.entrant: c for c in sorted(others, key=lambda c: (abs(c.mu - centre), c.id))[::-1]}
            pool = sorted(one_each.values(), key=lambda c: (abs(c.mu - centre), c.id))[:6]
            proposal = fill(test.a, [c.id for c in pool], BlockKind.TEST, (), rng, seated=(test.b,))
            if proposal is not None:
                return proposal, test.id
        return None

    def _make_block(self, proposal: Proposal, test_id: int | None) -> int:
        with self.ladder.session() as session:
            block = Block(deal_set=1, seat0=proposal.seats[0], seat1=proposal.seats[1], seat2=proposal.seats[2],
                          seat3=proposal.seats[3], state=BlockState.PLAYING, rated=False, kind=proposal.kind,
                          test_id=test_id, created=utc_now(), started=utc_now())
            session.add(block)
            session.flush()
            block.seed = block_seed(self.settings.seed, block.id)
            for version in proposal.seats:
                self._last[version] = block.id
            return block.id

    # -- playing a block ----------------------------------------------------------------------------

    def _start(self, block_id: int) -> None:
        task = asyncio.ensure_future(self._play(block_id))
        self._playing[block_id] = task

        def ended(done: asyncio.Task[None]) -> None:
            self._playing.pop(block_id, None)
            if not done.cancelled() and done.exception() is not None:  # the ladder's own error, not a bot's
                error = done.exception()
                self._void(block_id, f"the ladder failed while playing it: {type(error).__name__}: {error}")
            self.wake()

        task.add_done_callback(ended)

    async def _play(self, block_id: int) -> None:
        with self.ladder.session() as session:
            block = session.get(Block, block_id)
            assert block is not None
            versions = {v.id: v for v in session.scalars(select(Version).where(Version.id.in_(block.seats)))}
            tokens = {e.id: e.token_sha256 for e in session.scalars(select(Entrant).where(
                Entrant.id.in_({v.entrant_id for v in versions.values()})))}
            seats, seed = block.seats, block.seed
        remote = any(versions[v].kind == REMOTE for v in seats)
        folder = self.ladder.folder / f"blocks/{block_id:06d}"
        try:
            bots = [bot_table(versions[v], self.ladder.folder, tokens.get(versions[v].entrant_id)) for v in seats]
            config = as_begun(block_config(block_id, seed, bots, self.settings, port=self.remote_port if remote else 0,
                                           host=self.settings.remote.host), folder)
        except ArenaError as err:
            self._void(block_id, f"the block could not be set up: {err}")
            return
        if remote:
            self._remote_block = block_id
        try:
            tournament = Tournament(config, folder, log=lambda text: None, continued=remote)
            await tournament.run()
        except ArenaError as err:
            self._void(block_id, f"the block could not be played: {err}")
            return
        finally:
            if remote:
                self._remote_block = None
        result = outcome(folder)
        absent = [versions[v] for v in seats if versions[v].kind == REMOTE and versions[v].label in result.absent]
        if absent:
            self._set_aside(block_id, absent)
            return
        with self.ladder.session() as session:
            block = session.get(Block, block_id)
            assert block is not None
            if block.state == BlockState.PLAYING:
                record_block(session, block, result, self.model, self.settings.tests.burn_in)
        self._done_since += 1

    def _void(self, block_id: int, why: str) -> None:
        with self.ladder.session() as session:
            block = session.get(Block, block_id)
            if block is not None and block.state == BlockState.PLAYING:
                block.state, block.finished, block.note = BlockState.VOID, utc_now(), why
        self.log(f"block {block_id} is void: {why}")

    def _set_aside(self, block_id: int, absent: list[Version]) -> None:
        until = utc_now() + timedelta(seconds=2 * self.settings.remote.patience_s)
        with self.ladder.session() as session:
            for version in absent:
                stored = session.get(Version, version.id)
                if stored is not None:
                    stored.away_until = until
        names = ", ".join(v.label for v in absent)
        self._void(block_id, f"{names} did not connect within {self.settings.remote.patience_s:g} s")

    # -- the final ----------------------------------------------------------------------------------

    async def _play_final(self) -> None:
        with self.ladder.session() as session:
            state = Ladder.state(session)
            deal_sets = state.final_deal_sets
            versions = session.scalars(select(Version).where(Version.state == VersionState.ACTIVE)
                                       .order_by(Version.id)).all()
            tokens = {e.id: e.token_sha256 for e in session.scalars(select(Entrant))}
        bots = [bot_table(v, self.ladder.folder, tokens.get(v.entrant_id)) for v in versions]
        remote = any(v.kind == REMOTE for v in versions)
        seed = block_seed(self.settings.seed, 0)
        config = parse_config(event_text(f"{self.settings.name} final", seed, deal_sets, bots, self.settings,
                                         port=self.remote_port if remote else 0, host=self.settings.remote.host,
                                         concurrency=self.settings.capacity.tables))
        folder = self.ladder.folder / FINAL
        config = as_begun(dataclasses.replace(config, workers=self.settings.capacity.workers), folder)
        self.log(f"the final: {len(versions)} versions, {deal_sets} deal sets, a duplicate round robin in {folder}")
        tournament = Tournament(config, folder, judge=LiveJudge(folder, config), log=self.log)
        await tournament.run()
        await asyncio.to_thread(write_report_files, folder)
        with self.ladder.session() as session:
            Ladder.state(session).final_state = "done"
        self.log(f"the final is over: {folder / 'report.html'}")

