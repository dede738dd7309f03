"""An entrant's page: their versions with their checks, ratings and memory tests, their ratings over time, and
the games and faults of their newest done blocks (read from those blocks' records only).

A failed check's detail, the bot's hand and the end of its stderr are given to its own entrant and the organiser
alone (``private``); everyone sees which check failed and where.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from arena.core.rules import Rules
from arena.core.scoring import format_score, tenths_per_point
from arena.errors import ArenaError
from arena.ladder.db import (
    Block,
    BlockState,
    Check,
    Entrant,
    Rating,
    RatingPoint,
    Version,
    aware,
)
from arena.ladder.queries.base import (
    CHECKS_SHOWN,
    FAULTS_SHOWN,
    MEMORY_BLOCKS,
    RATING_POINTS,
    RECENT_BLOCKS,
    SHOWN_STATES,
    VERSIONS_SHOWN,
    FaultLine,
    Missing,
    Seat,
    block_games,
    fault_lines,
    maybe_aware,
    public_text,
    seat_by_label,
    seats_of,
)
from arena.ladder.queries.leaderboard import leaderboard, score_interval
from arena.rating.fairplay import memory_text
from arena.rating.ratings import tally
from arena.rating.standing import MemoryTest
from arena.rating.stats import ClusteredMean, ClusteredPair, one_sided_difference
from arena.records.store import ResultsStore

__all__ = [
    "BlockNote", "CheckLine", "EntrantView", "GameLine", "RatingMark", "RatingSeries", "VersionLine", "entrant",
    "version_memory",
]


@dataclasses.dataclass(frozen=True)
class CheckLine:
    """A check of a version, and where it failed if it did."""

    passed: bool
    check_name: str
    profile: str | None
    game: str | None
    round: int | None
    trick: int | None
    """From 1; ``None`` during the calls, or when the check played no game."""
    hand: str | None
    """The bot's hand at the fault: ``None`` for anyone but its entrant and the organiser."""
    detail: str | None
    """What the check found: ``None`` for anyone but its entrant and the organiser."""
    stderr_tail: str | None
    """The end of the bot's stderr: ``None`` for anyone but its entrant and the organiser."""
    created: datetime


@dataclasses.dataclass(frozen=True)
class VersionLine:
    """One of an entrant's versions: its life, its rating, its checks (newest first)."""

    version: str
    number: int
    state: str
    kind: str
    created: datetime
    activated: datetime | None
    retired: datetime | None
    mu: float | None
    sigma: float | None
    ordinal: float | None
    games: int
    blocks: int
    duplicate_score: float | None
    checks: tuple[CheckLine, ...]
    rank_range: tuple[int, int] | None = None
    """Its rank range on the leaderboard (:func:`rank_versions`); ``None`` when it is not ranked there."""
    ranked: int = 0
    """The versions ranked on the leaderboard (its ``rank_range`` is among them)."""
    set_aside: datetime | None = None
    """When a remote version was set aside for missing blocks (``None``: it is in the field): it plays again once its
    bot connects to the ladder."""
    missed: int = 0
    """Blocks in a row it missed (a remote version not there for some of its games)."""
    memory_test: dict[str, Any] | None = None
    """Its memory test over its done blocks (:func:`version_memory`): ``first``, ``later``, ``difference``,
    ``interval``, ``p``, ``flagged``, in points; ``None`` before it has played one."""
    memory: str = ""
    """The memory test in words (the flag's sentence when it is flagged)."""


@dataclasses.dataclass(frozen=True)
class BlockNote:
    """A block of an entrant's versions that has a note: a remote version away for some of its games (the fallback
    played them, and they count), or a void block and why."""

    block_id: int
    state: str
    kind: str
    finished: datetime | None
    note: str


@dataclasses.dataclass(frozen=True)
class RatingMark:
    """A version's rating after one block."""

    block_id: int
    at: datetime
    mu: float
    sigma: float
    ordinal: float


@dataclasses.dataclass(frozen=True)
class RatingSeries:
    """A version's rating over its blocks, oldest first."""

    version: str
    marks: tuple[RatingMark, ...]


@dataclasses.dataclass(frozen=True)
class GameLine:
    """One of an entrant's recent games: where their version sat and how it ended."""

    block_id: int
    game: str
    block_kind: str
    finished: datetime | None
    seats: tuple[Seat, ...]
    version: str
    """The entrant's version in the game."""
    seat: int
    total: str
    """Its game total, as people read it."""
    points: float
    place: int | None


@dataclasses.dataclass(frozen=True)
class EntrantView:
    """An entrant's page: their versions with their checks, their ratings over time, their recent games and
    the faults in them."""

    name: str
    display: str
    created: datetime
    revoked: bool
    versions: tuple[VersionLine, ...]
    ratings: tuple[RatingSeries, ...]
    games: tuple[GameLine, ...]
    """The games of their newest :data:`~arena.ladder.queries.base.RECENT_BLOCKS` done blocks, newest block first."""
    faults: tuple[FaultLine, ...]
    """The faults of their versions in those games (at most :data:`~arena.ladder.queries.base.FAULTS_SHOWN`), in
    play order."""
    more_faults: int
    """Faults in those games beyond the ones listed."""
    unreadable: tuple[int, ...]
    """Blocks whose records could not be read."""
    private: bool
    """The checks' details, hands and stderr are shown: the page is the entrant's own, or the organiser's."""
    notes: tuple[BlockNote, ...] = ()
    """Their versions' newest :data:`~arena.ladder.queries.base.RECENT_BLOCKS` blocks with a note, done or void,
    newest first."""


def entrant(session: Session, folder: Path, name: str, recent_blocks: int = RECENT_BLOCKS, *,
            placement_blocks: int | None = None, private: bool = False) -> EntrantView | Missing:
    """The page of the entrant called ``name`` (case does not matter); given the ladder's ``placement_blocks``,
    with each of their ranked versions' rank range on the leaderboard; ``private``: for that entrant or the
    organiser, with their checks' details, hands and stderr."""
    found = session.scalars(select(Entrant).where(func.lower(Entrant.name) == name.casefold())).first()
    if found is None:
        return Missing(f"there is no entrant called {name!r} on this ladder")
    versions = session.scalars(select(Version).where(Version.entrant_id == found.id)
                               .order_by(Version.number.desc()).limit(VERSIONS_SHOWN)).all()
    ids = [v.id for v in versions]
    checks: dict[int, list[CheckLine]] = {}
    for check in session.scalars(select(Check).where(Check.version_id.in_(ids))
                                 .order_by(Check.id.desc()).limit(CHECKS_SHOWN)):
        shown = private or check.passed  # a passed check's lines say only what passed
        checks.setdefault(check.version_id, []).append(CheckLine(
            check.passed, check.check_name, check.profile, check.game, check.round, check.trick,
            check.hand if private else None, public_text(check.detail, folder) if shown else None,
            public_text(check.stderr_tail, folder) if private else None, aware(check.created)))
    for lines_of in checks.values():  # in the order they were made, a failure with its place in a game first
        lines_of.reverse()
        lines_of.sort(key=lambda line: (line.passed, line.game is None))
    ratings = {r.version_id: r for r in session.scalars(select(Rating).where(Rating.version_id.in_(ids)))}
    board = leaderboard(session, placement_blocks).ranked if placement_blocks is not None else ()
    ranges = {row.version: row.rank_range for row in board}
    lines = []
    for version in versions:
        rating = ratings.get(version.id)
        score = score_interval(rating.blocks, rating.score_sum, rating.score_squares) if rating else None
        lines.append(VersionLine(
            version.label, version.number, str(version.state), version.kind, aware(version.created),
            maybe_aware(version.activated), maybe_aware(version.retired), rating.mu if rating else None,
            rating.sigma if rating else None, rating.ordinal if rating else None, rating.games if rating else 0,
            rating.blocks if rating else 0, score.mean / 10 if score is not None and score.n else None,
            tuple(checks.get(version.id, ())), ranges.get(version.label), len(board), maybe_aware(version.set_aside),
            version.missed))
    lines = [_with_memory(line, session, folder, version.id) for line, version in zip(lines, versions, strict=True)]
    games, faults, more, unreadable = _recent_games(session, folder, {v.id: v.label for v in versions}, recent_blocks)
    notes = tuple(BlockNote(b.id, str(b.state), str(b.kind), maybe_aware(b.finished), b.note) for b in session.scalars(
        select(Block).where(_involving(ids), Block.note != "", Block.state.in_(SHOWN_STATES))
        .order_by(Block.id.desc()).limit(recent_blocks))) if ids else ()
    return EntrantView(found.name, found.display or found.name, aware(found.created), found.revoked is not None,
                       tuple(lines), _rating_series(session, versions), games, faults, more, unreadable, private,
                       notes)


@functools.lru_cache(maxsize=16384)
def _block_memory(path: str) -> tuple[int, dict[str, tuple[float, float, float, float]]]:
    """A done block's points per point and each version's duplicate points and games on its first game and on its
    later games of the block's deal set (:meth:`~arena.rating.ratings.Tally.memory_sums`); nothing for a block whose
    games were not played in a drawn order, one after another. A done block's records do not change."""
    store = ResultsStore(Path(path))
    manifest = store.manifest()
    if manifest is None or "play_order" not in manifest:
        return 10, {}
    folded = tally(store.games())
    return (tenths_per_point(folded.rules) if folded.rules is not None else 10), folded.memory_sums()


def version_memory(session: Session, folder: Path, version_id: int, label: str) -> tuple[MemoryTest, int]:
    """The memory test of a version over its newest :data:`~arena.ladder.queries.base.MEMORY_BLOCKS` done blocks,
    each block's deal set a cluster, and the points per point of its scores."""
    first, later, both = ClusteredMean(), ClusteredMean(), ClusteredPair()
    per_point = 10
    for played in session.scalars(select(Block).where(_involving([version_id]), Block.state == BlockState.DONE)
                                  .order_by(Block.id.desc()).limit(MEMORY_BLOCKS)):
        try:
            per_point, sums = _block_memory(str(folder / played.folder))
        except (ArenaError, OSError):
            continue  # an unreadable block is listed as such on the page; the test goes without it
        if label not in sums:
            continue
        first_total, first_games, later_total, later_games = sums[label]
        first.add(first_total, first_games)
        later.add(later_total, later_games)
        both.add(later_total, later_games, first_total, first_games)
    diff, low, high, p, clusters = one_sided_difference(both, later, first)
    return MemoryTest(first.mean, later.mean, diff, low, high, p, clusters, first.weight, later.weight), per_point


def _with_memory(line: VersionLine, session: Session, folder: Path, version_id: int) -> VersionLine:
    test, per_point = version_memory(session, folder, version_id, line.version)
    if math.isnan(test.first):
        return line
    rules = Rules.profile("dy") if per_point == 1 else Rules.profile()
    return dataclasses.replace(line, memory_test=test.to_dict(per_point), memory=memory_text(line.version, test, rules))


def _rating_series(session: Session, versions: Sequence[Version]) -> tuple[RatingSeries, ...]:
    """Each version's rating points, oldest first: the newest :data:`~arena.ladder.queries.base.RATING_POINTS` of
    them all."""
    labels = {v.id: v.label for v in versions}
    points = session.scalars(select(RatingPoint).where(RatingPoint.version_id.in_(labels))
                             .order_by(RatingPoint.id.desc()).limit(RATING_POINTS)).all()
    by_version: dict[int, list[RatingMark]] = {}
    for point in reversed(points):
        by_version.setdefault(point.version_id, []).append(
            RatingMark(point.block_id, aware(point.at), point.mu, point.sigma, point.mu - 3 * point.sigma))
    return tuple(RatingSeries(labels[v.id], tuple(by_version[v.id])) for v in reversed(versions) if v.id in by_version)


def _involving(ids: Iterable[int]) -> ColumnElement[bool]:
    """A block one of ``ids`` sits in."""
    wanted = list(ids)
    return or_(Block.seat0.in_(wanted), Block.seat1.in_(wanted), Block.seat2.in_(wanted), Block.seat3.in_(wanted))


def _recent_games(session: Session, folder: Path, labels: dict[int, str], recent: int) -> tuple[
        tuple[GameLine, ...], tuple[FaultLine, ...], int, tuple[int, ...]]:
    """The games and faults of the newest ``recent`` done blocks of the versions ``labels``: only their folders
    are read."""
    if not labels or recent <= 0:
        return (), (), 0, ()
    blocks = session.scalars(select(Block).where(Block.state == BlockState.DONE, _involving(labels))
                             .order_by(Block.id.desc()).limit(recent)).all()
    seats = seats_of(session, {v for b in blocks for v in b.seats})
    own = set(labels.values())
    games: list[GameLine] = []
    faults: list[FaultLine] = []
    more = 0
    unreadable = []
    for played in blocks:
        try:
            records = block_games(folder, played)
        except (ArenaError, OSError):
            unreadable.append(played.id)
            continue
        for record in records:
            final = record.final
            rules = final.rules
            for seat, bot in enumerate(final.seats):
                if bot in own:
                    games.append(GameLine(
                        played.id, record.game, str(played.kind), maybe_aware(played.finished),
                        tuple(seat_by_label(seats, label) for label in final.seats), bot, seat,
                        format_score(rules, final.totals[seat]), final.totals[seat] / tenths_per_point(rules),
                        final.places[seat] if len(final.places) == 4 else None))
            for line in fault_lines(played.id, record, folder):
                if line.version not in own:
                    continue
                if len(faults) < FAULTS_SHOWN:
                    faults.append(line)
                else:
                    more += 1
    return tuple(games), tuple(faults), more, tuple(unreadable)
