"""What the ladder's site shows, read from its database and its blocks' records: pure functions of a session and
the ladder's folder, each returning frozen dataclasses that the pages and the JSON API both print.

Every query is bounded whatever the ladder's age: the leaderboard is one statement over the active versions;
an entrant's page reads their newest :data:`VERSIONS_SHOWN` versions, :data:`CHECKS_SHOWN` checks and
:data:`RATING_POINTS` rating points, and the records of their newest :data:`RECENT_BLOCKS` done blocks only;
the lists of tests and of blocks in play stop at :data:`TESTS_SHOWN` and :data:`PLAYING_SHOWN`.

Cards are read from a block's records only once the block is done or void (:data:`SHOWN_STATES`): of a block
queued or in play, its seats are shown and never a card, since its games are still being played.

What one entrant may see of another is public only: a failed check's detail, the bot's hand and the end of its
stderr are given to its own entrant and the organiser alone (``private``); everyone sees which check failed and
where. No text shown names a path of the server: every text that comes from a bot or a record passes
:func:`public_text`.

A version test has no LLR (``None``, "not enough blocks yet") until its blocks' differences have a spread: the
LLR of blocks that all differ by the same amount is set by a floor on the variance alone, millions for one
block, which says nothing and would set the scale of the test's chart.

Scores: a version's *duplicate score* is the mean of its block scores over its rated blocks, in points per game
(a block's score is stored in tenths per game), with the 95 % t interval of that mean, each block one cluster
(:func:`score_interval`). A version is ranked once it is active and has played its placement blocks (and at
least one). Its rank is its place by ordinal, shown as its *rank range* (:func:`rank_versions`): the ranks it
could hold at 95 %, given the uncertainty of the ratings.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from arena.core.rules import Rules
from arena.core.scoring import format_score, tenths_per_point
from arena.core.turns import call_order, seat_after
from arena.errors import ArenaError
from arena.ladder.control import REMOTE
from arena.ladder.db import (
    Block,
    BlockResult,
    BlockState,
    Check,
    Entrant,
    LadderState,
    Rating,
    RatingPoint,
    Test,
    TestKind,
    TestPoint,
    TestState,
    Version,
    VersionState,
    aware,
)
from arena.ladder.service import FINAL
from arena.rating.fairplay import memory_text, pair_lines
from arena.rating.html import REPORT_FILE
from arena.rating.ranks import pair_quantile, rank_ranges
from arena.rating.ratings import PAIRED_BOTS, PairReport, tally
from arena.rating.standing import MemoryTest, PairEffect
from arena.rating.stats import ClusteredMean, ClusteredPair, MeanCI, one_sided_difference, t_quantile
from arena.records.format import GameRecords, RoundRecord
from arena.records.store import ResultsStore

__all__ = [
    "CHECKS_SHOWN", "FAULTS_SHOWN", "PLAYING_SHOWN", "RATING_POINTS", "RECENT_BLOCKS", "SHOWN_STATES", "TESTS_SHOWN",
    "VERSIONS_SHOWN", "BlockGame", "BlockLine", "BlockNote", "BlockResultLine", "BlockView", "CheckLine",
    "Choices", "EntrantLine", "EntrantView", "FaultLine", "GameLine", "GameView", "HandView", "LadderView",
    "Leaderboard", "Missing", "OrganiserView", "Playing", "PlayingBlock", "RatingMark", "RatingSeries", "RoundView",
    "Seat", "Standing", "TestDetail", "TestMark", "TestView", "TrickView", "VersionLine", "block", "choices", "entrant",
    "final_report", "game", "ladder_view", "leaderboard", "opponents", "organiser", "playing", "public_text",
    "rank_versions", "score_interval", "test", "tests",
]

RECENT_BLOCKS = 10
"""Done blocks of an entrant whose records their page reads (their games and faults)."""
VERSIONS_SHOWN = 50
CHECKS_SHOWN = 200
RATING_POINTS = 2000
FAULTS_SHOWN = 100
TESTS_SHOWN = 200
PLAYING_SHOWN = 100
SHOWN_STATES = (BlockState.DONE, BlockState.VOID)
"""The block states whose cards may be shown: nobody plays those deals any more."""
_LEVEL = 0.95


# -- what every page shares ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LadderView:
    """The organiser's switches, as every page may say them."""

    paused: bool
    frozen: bool
    final_state: str
    """``""`` (none), ``playing`` or ``done``."""
    final_deal_sets: int
    final_report: bool
    """The final is done and its report.html is there (the site serves it)."""


@dataclasses.dataclass(frozen=True)
class Seat:
    """A version as a page links it: its label and its entrant."""

    version: str
    entrant: str


@dataclasses.dataclass(frozen=True)
class Missing:
    """What a page would show is not there, or not to be shown; ``why``, in a sentence."""

    why: str


_PATH = re.compile(r"(?<![\w.~:/…-])(?:/[^\s/'\"`<>(){}\[\],;:|]+){2,}/?")
"""An absolute path of two steps or more (``/usr/lib``, ``/tmp/x/bot.py``): not one step (``</b>``), nor a part of
a relative path, a URL or a number (``a/b``, ``http://x/y``, ``1/2``)."""


def _server_folders() -> list[str]:
    """Folders of the server a text may name, longest first: the Python that runs the ladder (its virtual
    environment) and the temporary folder; a path in them may hold a space, which :data:`_PATH` would stop at."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir()}
    return sorted((f.rstrip("/") for f in found if f.rstrip("/").count("/") > 1), key=len, reverse=True)


def public_text(text: str, folder: Path) -> str:
    """``text`` (what a bot wrote, what a check or a record says) with no path of the server in it: a path in the
    ladder's folder ``folder`` becomes relative to it (``versions/<hash>/bot.py``), the Python's and the
    temporary folder's an ellipsis (``…/lib/python3.11/...``), and any other absolute path its last step after
    an ellipsis (``…/bot.py``)."""
    if "/" not in text:
        return text
    for prefix in {str(folder.resolve()).rstrip("/") + "/", str(folder).rstrip("/") + "/"}:
        text = text.replace(prefix, "")
    for other in _server_folders():
        text = text.replace(other + "/", "…/")
    return _PATH.sub(lambda found: "…/" + found.group(0).rstrip("/").rsplit("/", 1)[-1], text)


def final_report(folder: Path) -> Path:
    """Where the final's report.html is (or will be), in the ladder's folder."""
    return folder / FINAL / REPORT_FILE


def ladder_view(session: Session, folder: Path) -> LadderView:
    """The ladder's state (as a ladder without its row of state would have it)."""
    state = session.get(LadderState, 1)
    if state is None:
        return LadderView(False, False, "", 0, False)
    done = state.final_state == "done" and final_report(folder).is_file()
    return LadderView(state.paused, state.frozen, state.final_state, state.final_deal_sets, done)


def _seats(session: Session, ids: Iterable[int]) -> dict[int, Seat]:
    """The versions of ``ids`` as seats, in one statement."""
    wanted = set(ids)
    if not wanted:
        return {}
    rows = session.execute(select(Version.id, Version.label, Entrant.name)
                           .join(Entrant, Entrant.id == Version.entrant_id).where(Version.id.in_(wanted)))
    return {version_id: Seat(label, name) for version_id, label, name in rows}


def _seat(seats: dict[int, Seat], version_id: int) -> Seat:
    return seats.get(version_id, Seat(f"version {version_id}", ""))


# -- the leaderboard -------------------------------------------------------------------------------


def score_interval(blocks: int, total: float, squares: float) -> MeanCI:
    """The mean of ``blocks`` block scores from their sum and sum of squares, with its 95 % t interval: what
    :func:`~arena.rating.stats.mean_ci` gives for the scores themselves (no interval for one block)."""
    if blocks <= 0:
        return MeanCI(math.nan, math.nan, math.nan, 0, math.nan)
    mean = total / blocks
    if blocks == 1:
        return MeanCI(mean, -math.inf, math.inf, 1, math.nan)
    sd = math.sqrt(max(0.0, (squares - blocks * mean * mean) / (blocks - 1)))
    half = t_quantile(0.5 + _LEVEL / 2, blocks - 1) * sd / math.sqrt(blocks)
    return MeanCI(mean, mean - half, mean + half, blocks, sd)


@dataclasses.dataclass(frozen=True)
class Standing:
    """One active version on the leaderboard. Ranked versions have a rank; those in placement have none."""

    entrant: str
    display: str
    version: str
    games: int
    blocks: int
    mu: float | None
    sigma: float | None
    ordinal: float | None
    """mu - 3 sigma; ``None`` before the first rated block."""
    duplicate_score: float | None
    """Points per game above the table's mean: the mean block score, over its rated blocks."""
    interval: tuple[float, float] | None
    """The duplicate score's 95 % t interval, each block one cluster; ``None`` below two blocks."""
    faults: int
    """Faults in all its blocks."""
    rank: int | None
    """Its place on the leaderboard, by ordinal (1, 2, 3, ...); ``None`` in placement."""
    rank_range: tuple[int, int] | None
    """The ranks it could hold at 95 % (best, worst): :func:`rank_versions`; ``None`` in placement."""
    tie: bool
    """Not significantly behind the version above (:func:`rank_versions`'s judgement): their order may be luck."""
    placement: bool
    """Still playing its placement blocks: listed apart, not ranked."""


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    """The ranked versions, best first, and those still in placement."""

    ranked: tuple[Standing, ...]
    placement: tuple[Standing, ...]
    placement_blocks: int


def leaderboard(session: Session, placement_blocks: int) -> Leaderboard:
    """The active versions: ranked by ordinal once they have played ``placement_blocks`` rated blocks (and at
    least one), the others listed apart; one statement."""
    faults = (select(BlockResult.version_id, func.sum(BlockResult.faults).label("faults"))
              .group_by(BlockResult.version_id).subquery())
    rows = session.execute(
        select(Version.label, Entrant.name, Entrant.display, Rating.mu, Rating.sigma, Rating.games, Rating.blocks,
               Rating.score_sum, Rating.score_squares, func.coalesce(faults.c.faults, 0))
        .join(Entrant, Entrant.id == Version.entrant_id)
        .outerjoin(Rating, Rating.version_id == Version.id)
        .outerjoin(faults, faults.c.version_id == Version.id)
        .where(Version.state == VersionState.ACTIVE))
    ranked: list[Standing] = []
    apart: list[Standing] = []
    for label, name, display, mu, sigma, games, blocks, total, squares, fault_count in rows:
        blocks = blocks or 0
        score = score_interval(blocks, total or 0.0, squares or 0.0)
        interval = ((score.low / 10, score.high / 10) if math.isfinite(score.low) and math.isfinite(score.high)
                    else None)
        row = Standing(entrant=name, display=display or name, version=label, games=games or 0, blocks=blocks, mu=mu,
                       sigma=sigma, ordinal=None if mu is None or sigma is None else mu - 3 * sigma,
                       duplicate_score=score.mean / 10 if blocks else None, interval=interval,
                       faults=int(fault_count), rank=None, rank_range=None, tie=False,
                       placement=mu is None or blocks < max(1, placement_blocks))
        (apart if row.placement else ranked).append(row)
    ranked.sort(key=lambda r: (-(r.ordinal or 0.0), -(r.mu or 0.0), r.version))
    apart.sort(key=lambda r: (-r.blocks, r.version))
    return Leaderboard(tuple(rank_versions(ranked)), tuple(apart), placement_blocks)


def rank_versions(rows: Sequence[Standing], adjusted: bool = True) -> list[Standing]:
    """``rows`` (rated versions, best ordinal first) with their place (``rank``), their rank range (the ranks each
    could hold at 95 %: :mod:`arena.rating.ranks`) and whether it is not significantly behind the version above
    (``tie``). A version is significantly ahead of one below it when their 95 % intervals of points per game do
    not overlap (the intervals shown beside the ranks never contradict them), or when their ratings differ by
    more than :func:`~arena.rating.ranks.pair_quantile` combined sigmas (μ1 − μ2 against
    √(σ1² + σ2²), OpenSkill's posteriors taken as normal). ``adjusted=False`` judges each pair by its own
    two-sided 95 % test, as if it were the only comparison: the benchmark's foil."""
    field = len(rows)
    judged = field if adjusted else 3  # pair_quantile(3) is the one-sided 97.5 % quantile

    def ahead(i: int, j: int) -> bool:
        upper, lower = rows[i], rows[j]
        if upper.interval is not None and lower.interval is not None and upper.interval[0] > lower.interval[1]:
            return True
        if upper.mu is None or lower.mu is None or upper.sigma is None or lower.sigma is None:
            return False
        return upper.mu - lower.mu > pair_quantile(judged) * math.hypot(upper.sigma, lower.sigma)

    ranges = rank_ranges(field, ahead)
    return [dataclasses.replace(row, rank=position, rank_range=span.pair(), tie=position > 1 and not ahead(i - 1, i))
            for i, (position, row, span) in enumerate(zip(range(1, field + 1), rows, ranges, strict=True))]


# -- an entrant ------------------------------------------------------------------------------------


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
class FaultLine:
    """A fault, where it happened: the game, the round, the trick (from 1; ``None`` during the calls)."""

    block_id: int
    game: str
    version: str
    seat: int
    round: int
    trick: int | None
    kind: str
    detail: str
    fallback: str | None


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
    """The games of their newest :data:`RECENT_BLOCKS` done blocks, newest block first."""
    faults: tuple[FaultLine, ...]
    """The faults of their versions in those games (at most :data:`FAULTS_SHOWN`), in play order."""
    more_faults: int
    """Faults in those games beyond the ones listed."""
    unreadable: tuple[int, ...]
    """Blocks whose records could not be read."""
    private: bool
    """The checks' details, hands and stderr are shown: the page is the entrant's own, or the organiser's."""
    notes: tuple[BlockNote, ...] = ()
    """Their versions' newest :data:`RECENT_BLOCKS` blocks with a note, done or void, newest first."""


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
            _maybe(version.activated), _maybe(version.retired), rating.mu if rating else None,
            rating.sigma if rating else None, rating.ordinal if rating else None, rating.games if rating else 0,
            rating.blocks if rating else 0, score.mean / 10 if score is not None and score.n else None,
            tuple(checks.get(version.id, ())), ranges.get(version.label), len(board), _maybe(version.set_aside),
            version.missed))
    lines = [_with_memory(line, session, folder, version.id) for line, version in zip(lines, versions, strict=True)]
    games, faults, more, unreadable = _recent_games(session, folder, {v.id: v.label for v in versions}, recent_blocks)
    notes = tuple(BlockNote(b.id, str(b.state), str(b.kind), _maybe(b.finished), b.note) for b in session.scalars(
        select(Block).where(_involving(ids), Block.note != "", Block.state.in_(SHOWN_STATES))
        .order_by(Block.id.desc()).limit(recent_blocks))) if ids else ()
    return EntrantView(found.name, found.display or found.name, aware(found.created), found.revoked is not None,
                       tuple(lines), _rating_series(session, versions), games, faults, more, unreadable, private,
                       notes)


MEMORY_BLOCKS = 2000
"""The newest done blocks of a version its memory test reads (each block's sums are read once, and kept)."""


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
    """The memory test of a version over its newest :data:`MEMORY_BLOCKS` done blocks, each block's deal set a
    cluster, and the points per point of its scores."""
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


def _maybe(moment: datetime | None) -> datetime | None:
    return aware(moment) if moment is not None else None


def _rating_series(session: Session, versions: Sequence[Version]) -> tuple[RatingSeries, ...]:
    """Each version's rating points, oldest first: the newest :data:`RATING_POINTS` of them all."""
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
    seats = _seats(session, {v for b in blocks for v in b.seats})
    own = set(labels.values())
    games: list[GameLine] = []
    faults: list[FaultLine] = []
    more = 0
    unreadable = []
    for played in blocks:
        try:
            records = _games(folder, played)
        except (ArenaError, OSError):
            unreadable.append(played.id)
            continue
        for record in records:
            final = record.final
            rules = final.rules
            for seat, bot in enumerate(final.seats):
                if bot in own:
                    games.append(GameLine(
                        played.id, record.game, str(played.kind), _maybe(played.finished),
                        tuple(_by_label(seats, label) for label in final.seats), bot, seat,
                        format_score(rules, final.totals[seat]), final.totals[seat] / tenths_per_point(rules),
                        final.places[seat] if len(final.places) == 4 else None))
            for line in _faults(played.id, record, folder):
                if line.version not in own:
                    continue
                if len(faults) < FAULTS_SHOWN:
                    faults.append(line)
                else:
                    more += 1
    return tuple(games), tuple(faults), more, tuple(unreadable)


def _by_label(seats: dict[int, Seat], label: str) -> Seat:
    for seat in seats.values():
        if seat.version == label:
            return seat
    return Seat(label, "")


def _games(folder: Path, played: Block) -> list[GameRecords]:
    """A block's complete games, in rotation order (under ``rotation = "once"``: version by version)."""
    return sorted(ResultsStore(folder / played.folder).games(), key=lambda g: (g.first.rotation, g.first.group))


def _rotation(folder: Path, played: Block) -> str:
    """The rotation a block is played in, from its results folder (``cyclic`` before it has one)."""
    try:
        config = (ResultsStore(folder / played.folder).manifest() or {}).get("config", {})
    except (ArenaError, OSError):
        return "cyclic"
    return str(config.get("rotation", "cyclic")) if isinstance(config, dict) else "cyclic"


def _faults(block_id: int, record: GameRecords, folder: Path) -> list[FaultLine]:
    return [FaultLine(block_id, record.game, r.seats[f.seat] if 0 <= f.seat < 4 else "?", f.seat, r.round,
                      None if f.trick is None else f.trick + 1, f.kind.value, public_text(f.detail, folder),
                      f.fallback)
            for r in record.rounds for f in r.faults]


# -- a block and its games -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BlockResultLine:
    """What one version of a done block scored."""

    version: Seat
    games: int
    points: float
    """Its game totals over the block, in points."""
    score: float
    """Its block score: points per game above its table's mean."""
    faults: int


@dataclasses.dataclass(frozen=True)
class BlockGame:
    """One game of a block, as its list shows it."""

    game: str
    rotation: int
    seats: tuple[Seat, ...]
    totals: tuple[str, ...]
    places: tuple[int, ...]
    faults: int


@dataclasses.dataclass(frozen=True)
class BlockView:
    """A block: its versions by seat, its state, and (once it is done or void) its results and games."""

    id: int
    state: str
    kind: str
    rated: bool
    seats: tuple[Seat, ...]
    created: datetime
    started: datetime | None
    finished: datetime | None
    note: str
    test_id: int | None
    shown: bool
    """Its games may be shown (:data:`SHOWN_STATES`)."""
    results: tuple[BlockResultLine, ...]
    games: tuple[BlockGame, ...]
    unreadable: bool
    """Its records could not be read."""
    rotation: str = "cyclic"
    """``cyclic`` (the four versions at one table, in four rotations) or ``once`` (each version's game against the
    house trio)."""


def block(session: Session, folder: Path, block_id: int) -> BlockView | Missing:
    """Block ``block_id``; its games only once it is done or void."""
    found = session.get(Block, block_id)
    if found is None:
        return Missing(f"there is no block {block_id}")
    seats = _seats(session, found.seats)
    results = tuple(
        BlockResultLine(_seat(seats, r.version_id), r.games, r.points / 10, r.score / 10, r.faults)
        for r in session.scalars(select(BlockResult).where(BlockResult.block_id == block_id)
                                 .order_by(BlockResult.score.desc())))
    shown = found.state in SHOWN_STATES
    games: list[BlockGame] = []
    unreadable = False
    if shown:
        try:
            records = _games(folder, found)
        except (ArenaError, OSError):
            records, unreadable = [], True
        for record in records:
            final = record.final
            games.append(BlockGame(record.game, final.rotation, tuple(_by_label(seats, s) for s in final.seats),
                                   tuple(format_score(final.rules, t) for t in final.totals), final.places,
                                   sum(len(r.faults) for r in record.rounds)))
    return BlockView(found.id, str(found.state), str(found.kind), found.rated,
                     tuple(_seat(seats, v) for v in found.seats), aware(found.created), _maybe(found.started),
                     _maybe(found.finished), public_text(found.note, folder), found.test_id, shown, results,
                     tuple(games), unreadable, _rotation(folder, found))


@dataclasses.dataclass(frozen=True)
class HandView:
    """A seat's hand as dealt in one round, its call and what came of it."""

    seat: int
    version: Seat
    dealer: bool
    cards: tuple[str, ...]
    """As dealt, in the hand's order (``QS``)."""
    call: int
    call_fault: bool
    took: int
    score: str
    total: str


@dataclasses.dataclass(frozen=True)
class TrickView:
    """One trick: the card of each seat (``None``: none), who led, who won, the faults at each seat."""

    number: int
    """From 1."""
    leader: int
    winner: int
    cards: tuple[str | None, ...]
    """By seat."""
    faults: tuple[str, ...]
    """By seat: what went wrong there, in words (empty: nothing)."""


@dataclasses.dataclass(frozen=True)
class RoundView:
    """One round of a game: the deal, the calls in calling order, the tricks and the faults."""

    number: int
    deal: str
    dealer: int
    trump: str
    """The trump suit's letter (``S``)."""
    redeals: tuple[str, ...]
    """Why each deal thrown in before this one was thrown in."""
    hands: tuple[HandView, ...]
    call_order: tuple[int, ...]
    tricks: tuple[TrickView, ...]
    faults: tuple[FaultLine, ...]


@dataclasses.dataclass(frozen=True)
class GameView:
    """A game of a done or void block, round by round."""

    block_id: int
    block_kind: str
    block_state: str
    game: str
    deal_set: int
    rotation: int
    rules: str
    seats: tuple[Seat, ...]
    totals: tuple[str, ...]
    places: tuple[int, ...]
    rounds: tuple[RoundView, ...]


def game(session: Session, folder: Path, block_id: int, game_id: str) -> GameView | Missing:
    """The game ``game_id`` of block ``block_id``, only once the block is done or void: a block queued or in play
    shows no card."""
    found = session.get(Block, block_id)
    if found is None:
        return Missing(f"there is no block {block_id}")
    if found.state not in SHOWN_STATES:
        return Missing(f"block {block_id} is {found.state}: its games are shown once it is done")
    try:
        records = [g for g in _games(folder, found) if g.game == game_id]
    except (ArenaError, OSError) as err:
        return Missing(f"the records of block {block_id} cannot be read: {public_text(str(err), folder)}")
    if not records:
        return Missing(f"block {block_id} has no complete game {game_id!r}")
    record = records[0]
    seats = _seats(session, found.seats)
    final = record.final
    return GameView(block_id, str(found.kind), str(found.state), record.game, record.first.deal_set,
                    record.first.rotation, final.rules.profile_name, tuple(_by_label(seats, s) for s in record.seats),
                    tuple(format_score(final.rules, t) for t in final.totals), final.places,
                    tuple(_round(block_id, record, r, seats, folder) for r in record.rounds))


def _round(block_id: int, record: GameRecords, played: RoundRecord, seats: dict[int, Seat],
           folder: Path) -> RoundView:
    rules = played.rules
    call_faults = {f.seat for f in played.faults if f.trick is None}
    at: dict[tuple[int, int], list[str]] = {}
    for fault in played.faults:
        if fault.trick is not None:
            at.setdefault((fault.trick, fault.seat), []).append(
                f"{fault.kind.value}: {public_text(fault.detail, folder)}")
    hands = tuple(HandView(seat, _by_label(seats, played.seats[seat]), seat == played.dealer,
                           tuple(str(card) for card in played.hands[seat].cards()), played.calls[seat],
                           seat in call_faults, played.tricks_won[seat], format_score(rules, played.scores[seat]),
                           format_score(rules, played.totals[seat])) for seat in range(4))
    tricks = []
    for index, trick in enumerate(played.tricks):
        by_seat: dict[int, str] = {seat_after(trick.leader, k): str(card) for k, card in enumerate(trick.cards)}
        tricks.append(TrickView(index + 1, trick.leader, trick.winner, tuple(by_seat.get(s) for s in range(4)),
                                tuple("; ".join(at.get((index, s), [])) for s in range(4))))
    round_faults = [line for line in _faults(block_id, GameRecords((played,)), folder) if line.round == played.round]
    return RoundView(played.round, played.deal, played.dealer, played.trump.letter,
                     tuple(r.reason for r in played.redeals), hands, call_order(played.dealer), tuple(tricks),
                     tuple(round_faults))


# -- what is playing now ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PlayingBlock:
    """A block in play: who sits where, why it is played, since when. Never a card."""

    id: int
    kind: str
    seats: tuple[Seat, ...]
    started: datetime | None
    test_id: int | None


@dataclasses.dataclass(frozen=True)
class Playing:
    """The blocks in play, oldest first, and how many wait."""

    blocks: tuple[PlayingBlock, ...]
    queued: int


def playing(session: Session) -> Playing:
    """The blocks in play now (at most :data:`PLAYING_SHOWN`)."""
    blocks = session.scalars(select(Block).where(Block.state == BlockState.PLAYING)
                             .order_by(Block.id).limit(PLAYING_SHOWN)).all()
    seats = _seats(session, {v for b in blocks for v in b.seats})
    queued = session.scalar(select(func.count(Block.id)).where(Block.state == BlockState.QUEUED)) or 0
    return Playing(tuple(PlayingBlock(b.id, str(b.kind), tuple(_seat(seats, v) for v in b.seats), _maybe(b.started),
                                      b.test_id) for b in blocks), queued)


# -- tests -----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TestView:
    """A sequential test of ``b`` against ``a``, or a scrimmage of ``a`` against its ``opponents``."""

    __test__ = False  # a name pytest would otherwise collect

    id: int
    kind: str
    a: Seat
    b: Seat
    opponents: tuple[Seat, ...]
    state: str
    decision: str | None
    llr: float | None
    """``None`` for a scrimmage, and for a test whose blocks have no spread yet ("not enough blocks yet")."""
    lower: float | None
    """The LLR at which it accepts H0, ln(beta / (1 - alpha)); ``None`` for a scrimmage."""
    upper: float | None
    """The LLR at which it accepts H1, ln((1 - beta) / alpha)."""
    delta0: float
    delta1: float
    alpha: float
    beta: float
    cap: int
    blocks_done: int
    asked_by: str
    created: datetime
    finished: datetime | None


@dataclasses.dataclass(frozen=True)
class TestMark:
    """A test's state after one of its blocks."""

    __test__ = False

    n: int
    block_id: int
    value: float
    """The block's difference, b - a, in points per game."""
    llr: float | None
    """``None`` while the blocks so far all differ by the same amount: no spread, no LLR."""
    at: datetime


@dataclasses.dataclass(frozen=True)
class BlockLine:
    """A block as a list shows it."""

    id: int
    state: str
    kind: str
    seats: tuple[Seat, ...]
    finished: datetime | None


@dataclasses.dataclass(frozen=True)
class TestDetail:
    """A test, its LLR over time and its blocks (newest first)."""

    __test__ = False

    test: TestView
    marks: tuple[TestMark, ...]
    blocks: tuple[BlockLine, ...]


def _test_views(session: Session, found: Sequence[Test]) -> list[TestView]:
    ids = {t.a for t in found} | {t.b for t in found}
    opponents = {t.id: [int(v) for v in t.opponents.split(",") if v.strip().isdigit()] for t in found}
    seats = _seats(session, ids | {v for vs in opponents.values() for v in vs})
    spread = set(session.scalars(  # the tests whose blocks differ by more than one amount: those have an LLR
        select(TestPoint.test_id).where(TestPoint.test_id.in_([t.id for t in found])).group_by(TestPoint.test_id)
        .having(func.min(TestPoint.value) < func.max(TestPoint.value))))
    views = []
    for t in found:
        sprt = t.kind == TestKind.SPRT
        lower = math.log(t.beta / (1 - t.alpha)) if sprt else None
        upper = math.log((1 - t.beta) / t.alpha) if sprt else None
        views.append(TestView(t.id, str(t.kind), _seat(seats, t.a), _seat(seats, t.b),
                              tuple(_seat(seats, v) for v in opponents[t.id]), str(t.state),
                              str(t.decision) if t.decision is not None else None,
                              t.llr if sprt and t.id in spread else None, lower,
                              upper, t.delta0, t.delta1, t.alpha, t.beta, t.cap, t.blocks_done, t.asked_by,
                              aware(t.created), _maybe(t.finished)))
    return views


def tests(session: Session) -> tuple[TestView, ...]:
    """The tests and scrimmages, newest first (at most :data:`TESTS_SHOWN`)."""
    return tuple(_test_views(session, session.scalars(select(Test).order_by(Test.id.desc()).limit(TESTS_SHOWN)).all()))


def test(session: Session, test_id: int) -> TestDetail | Missing:
    """Test ``test_id`` with its LLR after each block and its blocks."""
    found = session.get(Test, test_id)
    if found is None:
        return Missing(f"there is no test {test_id}")
    points = session.scalars(select(TestPoint).where(TestPoint.test_id == test_id).order_by(TestPoint.n)
                             .limit(RATING_POINTS)).all()
    first = points[0].value if points else 0.0
    spread_from = next((p.n for p in points if p.value != first), None)
    marks = tuple(TestMark(p.n, p.block_id, p.value / 10,
                           p.llr if spread_from is not None and p.n >= spread_from else None, aware(p.at))
                  for p in points)
    blocks = session.scalars(select(Block).where(Block.test_id == test_id).order_by(Block.id.desc())
                             .limit(TESTS_SHOWN)).all()
    seats = _seats(session, {v for b in blocks for v in b.seats})
    return TestDetail(_test_views(session, [found])[0], marks, tuple(
        BlockLine(b.id, str(b.state), str(b.kind), tuple(_seat(seats, v) for v in b.seats), _maybe(b.finished))
        for b in blocks))


@dataclasses.dataclass(frozen=True)
class Choices:
    """What the forms of a test and a scrimmage offer: the asker's own versions and the field's."""

    own: tuple[str, ...]
    """The versions of the entrant that may play a test (active or retired), newest first."""
    field: tuple[str, ...]
    """The active versions, by label."""


def choices(session: Session, name: str | None) -> Choices:
    """The versions the forms offer to the entrant ``name`` (``None``: the organiser, whose own are all)."""
    playable = (VersionState.ACTIVE, VersionState.RETIRED)
    query = select(Version.label).join(Entrant, Entrant.id == Version.entrant_id).where(Version.state.in_(playable))
    if name is not None:
        query = query.where(func.lower(Entrant.name) == name.casefold())
    own = session.scalars(query.order_by(Version.id.desc()).limit(VERSIONS_SHOWN)).all()
    field = session.scalars(select(Version.label).where(Version.state == VersionState.ACTIVE)
                            .order_by(Version.label).limit(1000)).all()
    return Choices(tuple(own), tuple(field))


def opponents(session: Session) -> tuple[str, ...]:
    """The versions one may play against at a table of one's own (``/play``), by label: the active versions the
    ladder starts itself (a remote entrant's bot plays only where it connects)."""
    return tuple(session.scalars(select(Version.label).where(Version.state == VersionState.ACTIVE,
                                                             Version.kind != REMOTE)
                                 .order_by(Version.label).limit(1000)).all())


# -- the organiser ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class EntrantLine:
    """An entrant as the organiser's list shows them."""

    name: str
    display: str
    revoked: bool
    versions: int
    active: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class OrganiserView:
    """What the organiser acts on: the entrants, the running tests, the blocks by state."""

    entrants: tuple[EntrantLine, ...]
    running: tuple[TestView, ...]
    blocks: dict[str, int]
    """Blocks by state."""
    active_versions: int
    pairs: tuple[dict[str, Any], ...] = ()
    """The pair report over the newest done blocks (:func:`ladder_pairs`), in points, each pair as
    :meth:`~arena.rating.standing.PairEffect.to_dict` gives it."""
    pair_lines: tuple[str, ...] = ()
    """The pair report in words: what it covers, then each flagged pair."""


def organiser(session: Session) -> OrganiserView:
    """The organiser's page (at most 1000 entrants)."""
    counts = {entrant_id: count for entrant_id, count in session.execute(
        select(Version.entrant_id, func.count(Version.id)).group_by(Version.entrant_id))}
    active: dict[int, list[str]] = {}
    for entrant_id, label in session.execute(select(Version.entrant_id, Version.label)
                                             .where(Version.state == VersionState.ACTIVE)):
        active.setdefault(entrant_id, []).append(label)
    entrants = tuple(EntrantLine(e.name, e.display or e.name, e.revoked is not None, counts.get(e.id, 0),
                                 tuple(active.get(e.id, ())))
                     for e in session.scalars(select(Entrant).order_by(Entrant.name).limit(1000)))
    running = session.scalars(select(Test).where(Test.state == TestState.RUNNING).order_by(Test.id)
                              .limit(TESTS_SHOWN)).all()
    blocks = {str(state): count for state, count in session.execute(
        select(Block.state, func.count(Block.id)).group_by(Block.state))}
    pairs, note = ladder_pairs(session)
    return OrganiserView(entrants, tuple(_test_views(session, running)), blocks,
                         sum(len(labels) for labels in active.values()), tuple(p.to_dict(10) for p in pairs),
                         (note, *pair_lines(pairs, Rules.profile())))


@dataclasses.dataclass(frozen=True)
class _BlockGame:
    """A done block as the pair report reads it: its versions and the points each scored over its games."""

    seats: tuple[str, ...]
    totals: tuple[float, ...]


def ladder_pairs(session: Session) -> tuple[list[PairEffect], str]:
    """The pair report of the ladder (:class:`~arena.rating.ratings.PairReport`) over its newest
    :data:`MEMORY_BLOCKS` done blocks, each block's deal set a cluster, from the points each version scored in the
    block (a version's margin over a tablemate in a block is the difference of their points, every version holding
    every hand once); at most :data:`~arena.rating.ratings.PAIRED_BOTS` versions."""
    labels: dict[int, str] = {version_id: label for version_id, label in session.execute(
        select(Version.id, Version.label))}
    by_block: dict[int, dict[str, float]] = {}
    newest = select(Block.id).where(Block.state == BlockState.DONE).order_by(Block.id.desc()).limit(MEMORY_BLOCKS)
    for block_id, version_id, games, points in session.execute(
            select(BlockResult.block_id, BlockResult.version_id, BlockResult.games, BlockResult.points)
            .where(BlockResult.block_id.in_(newest))):
        by_block.setdefault(block_id, {})[labels[version_id]] = points / max(games, 1)
    versions = {label for points in by_block.values() for label in points}
    if not by_block:
        return [], "No block is done yet."
    if len(versions) > PAIRED_BOTS:
        return [], (f"{len(versions)} versions played the newest {len(by_block)} blocks: the pair report is kept for "
                    f"at most {PAIRED_BOTS}.")
    report = PairReport()
    seen: set[str] = set()
    for block_id in sorted(by_block):
        scored = by_block[block_id]
        seen.update(scored)
        seats = tuple(sorted(scored))
        report.add_round([[_BlockGame(seats, tuple(scored[v] for v in seats))]], seen)
    return report.report(versions), (f"Over the newest {len(by_block)} done blocks, each version's points per game "
                                     "in a block against its tablemates'.")

