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

A remote version plays while it is there: a block seats at most one, and is played on the ladder's gRPC port (one
such block at a time; between them the port is the ladder's waiting room, :mod:`arena.ladder.room`). A game waits
``[remote] patience_s`` for the version, then the fallback takes its seat for the rest of the block: the block
counts if the version took its seat in one of its games, the games the fallback played for it included, and is void
if it took none (:mod:`arena.ladder.attendance`). A version that misses ``[remote] set_aside_after`` blocks in a row
is set aside until its bot connects to the waiting room again.
Versions' crashes and hangs are the tournament's faults, played by the fallback: they harm only the games of the
version that has them.
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

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from arena.errors import ArenaError, ConfigError
from arena.event.run.preparation import as_begun
from arena.event.run.tournament import Tournament, woken
from arena.event.setup.config import parse_config
from arena.ladder.attendance import Attendance, attendance
from arena.ladder.blocks import (
    BlockOutcome,
    RatingModel,
    block_config,
    block_seat_key,
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
    utc_now,
)
from arena.ladder.matchmaking import Candidate, Proposal, choose, fill
from arena.ladder.room import WaitingRoom
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
        session.add(BlockResult(block_id=block.id, version_id=version.id, games=result.games_of(label),
                                points=result.points.get(label, 0), score=result.score.get(label, 0.0),
                                faults=result.faults.get(label, 0)))
    now = utc_now()
    if block.kind in RATED_KINDS:
        stored = {r.version_id: r for r in session.scalars(select(Rating).where(Rating.version_id.in_(block.seats)))}
        before = {v.label: (stored[v.id].mu, stored[v.id].sigma) for v in versions.values() if v.id in stored}
        after = rate_games(model, before, result.rankings)
        for label, (mu, sigma) in after.items():
            version = by_label[label]
            rating = stored.get(version.id)
            if rating is None:
                rating = Rating(version_id=version.id, mu=mu, sigma=sigma, games=0, blocks=0, score_sum=0.0,
                                score_squares=0.0)
                session.add(rating)
            score = result.score.get(label, 0.0)
            rating.mu, rating.sigma, rating.updated = mu, sigma, now
            rating.games += result.games_of(label)
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
        """The block with a remote version, from when it is made until it is written: one at a time."""
        self._room: WaitingRoom | None = None
        """The ladder's gRPC port while no block with a remote version is in play (made by :meth:`run`)."""
        self._room_task: asyncio.Task[None] | None = None
        self._room_problem = ""
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

    @property
    def waiting_room(self) -> WaitingRoom | None:
        """The waiting room of remote bots, while :meth:`run` runs."""
        return self._room

    def wake(self) -> None:
        """Have the service look at the database now (from any thread)."""
        if self._loop is not None and self._wake is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    async def run(self, stop: asyncio.Event) -> None:
        """Plays until ``stop`` is set; blocks in play are then left as they are, to resume at the next start."""
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        remote = self.settings.remote
        self._room = WaitingRoom(self.settings.rules, self.settings.deadline_ms, self.remote_address, self._came,
                                 tls_cert=remote.tls_cert, tls_key=remote.tls_key, tls_client_ca=remote.tls_client_ca)
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
            await self._close_room()
            self._room = None

    def _recover(self) -> None:
        """What a killed service left: versions being checked are checked again; blocks in play resume."""
        with self.ladder.session() as session:
            for version in session.scalars(select(Version).where(Version.state == VersionState.CHECKING)):
                version.state = VersionState.SUBMITTED
            seats = [Block.seat0, Block.seat1, Block.seat2, Block.seat3]
            for seat in seats:
                for version_id, last in session.execute(select(seat, func.max(Block.id)).group_by(seat)):
                    self._last[version_id] = max(self._last.get(version_id, 0), last)
            resumed = [(block.id, self._has_remote(session, block.seats)) for block in session.scalars(
                select(Block).where(Block.state == BlockState.PLAYING).order_by(Block.id))]
        for block_id, remote in resumed:
            self.log(f"block {block_id} was in play when the ladder stopped: resuming it")
            self._start(block_id, remote)

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
            self._keep_room()
            return
        while len(self._playing) < self.settings.capacity.tables:
            proposal = self._next()
            if proposal is None:
                break
            self._start(*self._make_block(*proposal))
        self._keep_room()

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
        """The active versions free to play, with their ratings: of the remote ones that may play now (their entrant
        has a bot token), only the one whose last block is the oldest (a block seats one at most)."""
        active = session.scalars(select(Version).where(Version.state == VersionState.ACTIVE)).all()
        ratings = {r.version_id: r for r in session.scalars(select(Rating))}
        mu0, sigma0 = self.model.initial()
        keyed = set(session.scalars(select(Entrant.id).where(Entrant.bot_token_sha256.is_not(None))))
        remote = [v for v in active if v.kind == REMOTE and v.id not in busy and self._seatable(v)
                  and v.entrant_id in keyed]  # a bot without a bot token cannot connect: it is not seated
        first = min(remote, key=lambda v: (self._last.get(v.id, 0), v.id)) if remote else None
        field, versions = [], {}
        for version in active:
            if version.id in busy or (version.kind == REMOTE and version is not first):
                continue
            rating = ratings.get(version.id)
            field.append(Candidate(version.id, version.entrant_id, rating.mu if rating else mu0,
                                   rating.sigma if rating else sigma0, rating.blocks if rating else 0,
                                   self._last.get(version.id, 0)))
            versions[version.id] = version
        return field, versions

    def _seatable(self, version: Version) -> bool:
        """A remote version may be seated now: no block with a remote version is in play, and it is not set aside."""
        return self._remote_block is None and version.set_aside is None

    @staticmethod
    def _has_remote(session: Session, seats: tuple[int, ...]) -> bool:
        return any(v.kind == REMOTE for v in session.scalars(select(Version).where(Version.id.in_(seats))))

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
            if any(v.kind == REMOTE and not self._seatable(v) for v in pair):
                continue
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

    def _make_block(self, proposal: Proposal, test_id: int | None) -> tuple[int, bool]:
        """The block made ``playing``, and whether it seats a remote version."""
        with self.ladder.session() as session:
            block = Block(deal_set=1, seat0=proposal.seats[0], seat1=proposal.seats[1], seat2=proposal.seats[2],
                          seat3=proposal.seats[3], state=BlockState.PLAYING, rated=False, kind=proposal.kind,
                          test_id=test_id, created=utc_now(), started=utc_now())
            session.add(block)
            session.flush()
            block.seed = block_seed(self.settings.seed, block.id)
            for version in proposal.seats:
                self._last[version] = block.id
            return block.id, self._has_remote(session, proposal.seats)

    # -- playing a block ----------------------------------------------------------------------------

    def _start(self, block_id: int, remote: bool) -> None:
        if remote:
            self._remote_block = block_id
        task = asyncio.ensure_future(self._play(block_id, remote))
        self._playing[block_id] = task

        def ended(done: asyncio.Task[None]) -> None:
            self._playing.pop(block_id, None)
            if not done.cancelled() and done.exception() is not None:  # the ladder's own error, not a bot's
                error = done.exception()
                self._void(block_id, f"the ladder failed while playing it: {type(error).__name__}: {error}")
            if self._remote_block == block_id:
                self._remote_block = None
            self.wake()

        task.add_done_callback(ended)

    async def _play(self, block_id: int, remote: bool) -> None:
        with self.ladder.session() as session:
            block = session.get(Block, block_id)
            assert block is not None
            versions = {v.id: v for v in session.scalars(select(Version).where(Version.id.in_(block.seats)))}
            tokens = {e.id: e.bot_token_sha256 for e in session.scalars(select(Entrant).where(
                Entrant.id.in_({v.entrant_id for v in versions.values()})))}
            seats, seed = block.seats, block.seed
        folder = self.ladder.folder / f"blocks/{block_id:06d}"
        try:
            bots = [bot_table(versions[v], self.ladder.folder, tokens.get(versions[v].entrant_id)) for v in seats]
            config = as_begun(block_config(block_id, seed, bots, self.settings, port=self.remote_port if remote else 0,
                                           host=self.settings.remote.host,
                                           seat_key=block_seat_key(self.settings.seed, block_id)), folder)
        except ArenaError as err:
            self._void(block_id, f"the block could not be set up: {err}")
            return
        if remote:  # the port is the block's now; the other remote entrants' bots wait in it as guests
            await self._close_room()
        try:
            tournament = Tournament(config, folder, log=lambda text: None, continued=remote,
                                    guests=self._remote_tokens() if remote else None)
            await tournament.run()
        except ArenaError as err:
            self._void(block_id, f"the block could not be played: {err}")
            return
        result = outcome(folder)
        came = [attendance(result.played, versions[v].label) for v in seats if versions[v].kind == REMOTE]
        with self.ladder.session() as session:
            block = session.get(Block, block_id)
            assert block is not None
            if block.state != BlockState.PLAYING:
                return
            counts = all(seat.came for seat in came)
            notes = [seat.note() for seat in came if counts or not seat.came]
            if counts:
                record_block(session, block, result, self.model, self.settings.tests.burn_in)
            else:
                block.state, block.finished = BlockState.VOID, utc_now()
            block.note = ". ".join(note for note in [*notes, *self._count_misses(session, came)] if note)
            note, void = block.note, not counts
        if void:
            self.log(f"block {block_id} is void: {note}")
            return
        if note:
            self.log(f"block {block_id}: {note}")
        self._done_since += 1

    def _count_misses(self, session: Session, came: list[Attendance]) -> list[str]:
        """Counts each remote version's misses in a row (a block it played whole starts again from 0), and sets
        aside a version at ``[remote] set_aside_after``; what it set aside, in words."""
        said = []
        for seat in came:
            version = session.scalars(select(Version).where(Version.label == seat.version)).one()
            version.missed = version.missed + 1 if seat.missed else 0
            if version.missed >= self.settings.remote.set_aside_after and version.set_aside is None:
                version.set_aside = utc_now()
                blocks = "its last block" if version.missed == 1 else f"{version.missed} blocks in a row"
                said.append(f"{seat.version} has missed {blocks}: it is set aside until its bot connects to the "
                            "ladder again")
        return said

    def _void(self, block_id: int, why: str) -> None:
        with self.ladder.session() as session:
            block = session.get(Block, block_id)
            if block is not None and block.state == BlockState.PLAYING:
                block.state, block.finished, block.note = BlockState.VOID, utc_now(), why
        self.log(f"block {block_id} is void: {why}")

    # -- the waiting room ---------------------------------------------------------------------------

    def _remote_tokens(self) -> dict[str, str]:
        """The bot tokens of the active remote versions' entrants (SHA-256 digest -> the version's label): never the
        tokens that log in to the site."""
        with self.ladder.session() as session:
            rows = session.execute(select(Entrant.bot_token_sha256, Version.label).join(
                Version, Version.entrant_id == Entrant.id).where(
                Version.kind == REMOTE, Version.state == VersionState.ACTIVE, Entrant.revoked.is_(None),
                Entrant.bot_token_sha256.is_not(None)).order_by(Version.id))
            return {digest: label for digest, label in rows if digest}

    def _keep_room(self) -> None:
        """Opens the waiting room for the active remote versions while no block with one is in play (or opens it
        again when they changed); closes it when there are none."""
        room = self._room
        if room is None or self._remote_block is not None or (
                self._room_task is not None and not self._room_task.done()):
            return
        tokens = self._remote_tokens()
        if (room.listening and room.tokens == tokens) or not (tokens or room.listening):
            return
        self._room_task = asyncio.ensure_future(self._open_room(tokens))

    async def _open_room(self, tokens: dict[str, str]) -> None:
        room = self._room
        assert room is not None
        try:
            if tokens:
                await room.open(tokens)
            else:
                await room.close()
        except ConfigError as err:  # said once, and tried again at each look: the block's tournament would fail too
            if str(err) != self._room_problem:
                self.log(f"the waiting room of remote bots cannot open: {err}")
            self._room_problem = str(err)
        else:
            self._room_problem = ""

    async def _close_room(self) -> None:
        if self._room_task is not None:
            with contextlib.suppress(Exception):
                await self._room_task
            self._room_task = None
        if self._room is not None:
            await self._room.close()

    def _came(self, label: str) -> None:
        """The bot of the remote version ``label`` is in the waiting room: a version set aside is back."""
        with self.ladder.session() as session:
            version = session.scalars(select(Version).where(Version.label == label,
                                                            Version.set_aside.is_not(None))).first()
            if version is None:
                return
            version.set_aside = None
        self.log(f"{label}'s bot connected: it is back in the field")
        self.wake()

    # -- the final ----------------------------------------------------------------------------------

    async def _play_final(self) -> None:
        with self.ladder.session() as session:
            state = Ladder.state(session)
            deal_sets = state.final_deal_sets
            versions = session.scalars(select(Version).where(Version.state == VersionState.ACTIVE)
                                       .order_by(Version.id)).all()
            tokens = {e.id: e.bot_token_sha256 for e in session.scalars(select(Entrant))}
        bots = [bot_table(v, self.ladder.folder, tokens.get(v.entrant_id)) for v in versions]
        remote = any(v.kind == REMOTE for v in versions)
        if remote:  # the port is the final's now
            await self._close_room()
        seed = block_seed(self.settings.seed, 0)
        config = parse_config(event_text(f"{self.settings.name} final", seed, deal_sets, bots, self.settings,
                                         port=self.remote_port if remote else 0, host=self.settings.remote.host,
                                         concurrency=self.settings.capacity.tables,
                                         seat_key=block_seat_key(self.settings.seed, 0)))
        folder = self.ladder.folder / FINAL
        config = as_begun(dataclasses.replace(config, workers=self.settings.capacity.workers), folder)
        self.log(f"the final: {len(versions)} versions, {deal_sets} deal sets, a duplicate round robin in {folder}")
        tournament = Tournament(config, folder, judge=LiveJudge(folder, config), log=self.log)
        await tournament.run()
        await asyncio.to_thread(write_report_files, folder)
        with self.ladder.session() as session:
            Ladder.state(session).final_state = "done"
        self.log(f"the final is over: {folder / 'report.html'}")

