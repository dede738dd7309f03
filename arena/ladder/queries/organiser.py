"""The organiser's page: the entrants, the running tests, the blocks by state, and the ladder's pair report."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.core.rules import Rules
from arena.ladder.db import (
    Block,
    BlockResult,
    BlockState,
    Entrant,
    Test,
    TestState,
    Version,
    VersionState,
)
from arena.ladder.queries.base import MEMORY_BLOCKS, TESTS_SHOWN
from arena.ladder.queries.testing import TestView, test_views
from arena.rating.fairplay import pair_lines
from arena.rating.pairs import PAIRED_BOTS, PairReport
from arena.rating.standing import PairEffect

__all__ = ["EntrantLine", "OrganiserView", "ladder_pairs", "organiser"]


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
    return OrganiserView(entrants, tuple(test_views(session, running)), blocks,
                         sum(len(labels) for labels in active.values()), tuple(p.to_dict(10) for p in pairs),
                         (note, *pair_lines(pairs, Rules.profile())))


@dataclasses.dataclass(frozen=True)
class _BlockGame:
    """A done block as the pair report reads it: its versions and the points each scored over its games."""

    seats: tuple[str, ...]
    totals: tuple[float, ...]


def ladder_pairs(session: Session) -> tuple[list[PairEffect], str]:
    """The pair report of the ladder (:class:`~arena.rating.pairs.PairReport`) over its newest
    :data:`~arena.ladder.queries.base.MEMORY_BLOCKS` done blocks, each block's deal set a cluster, from the points
    each version scored in the block (a version's margin over a tablemate in a block is the difference of their
    points, every version holding every hand once); at most :data:`~arena.rating.pairs.PAIRED_BOTS` versions."""
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
