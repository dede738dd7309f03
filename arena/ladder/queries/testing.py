"""The tests and scrimmages of versions, a test's LLR over its blocks, and what the forms of a test, a scrimmage
and a table of one's own offer.

A version test has no LLR (``None``, "not enough blocks yet") until its blocks' differences have a spread: the
LLR of blocks that all differ by the same amount is set by a floor on the variance alone, millions for one
block, which says nothing and would set the scale of the test's chart.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.ladder.control import REMOTE
from arena.ladder.db import (
    Block,
    Entrant,
    Test,
    TestKind,
    TestPoint,
    Version,
    VersionState,
    aware,
)
from arena.ladder.queries.base import (
    RATING_POINTS,
    TESTS_SHOWN,
    VERSIONS_SHOWN,
    Missing,
    Seat,
    maybe_aware,
    seat_of,
    seats_of,
)

__all__ = [
    "BlockLine", "Choices", "TestDetail", "TestMark", "TestView", "choices", "opponents", "test", "test_views",
    "tests",
]


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


def test_views(session: Session, found: Sequence[Test]) -> list[TestView]:
    ids = {t.a for t in found} | {t.b for t in found}
    opponents = {t.id: [int(v) for v in t.opponents.split(",") if v.strip().isdigit()] for t in found}
    seats = seats_of(session, ids | {v for vs in opponents.values() for v in vs})
    spread = set(session.scalars(  # the tests whose blocks differ by more than one amount: those have an LLR
        select(TestPoint.test_id).where(TestPoint.test_id.in_([t.id for t in found])).group_by(TestPoint.test_id)
        .having(func.min(TestPoint.value) < func.max(TestPoint.value))))
    views = []
    for t in found:
        sprt = t.kind == TestKind.SPRT
        lower = math.log(t.beta / (1 - t.alpha)) if sprt else None
        upper = math.log((1 - t.beta) / t.alpha) if sprt else None
        views.append(TestView(t.id, str(t.kind), seat_of(seats, t.a), seat_of(seats, t.b),
                              tuple(seat_of(seats, v) for v in opponents[t.id]), str(t.state),
                              str(t.decision) if t.decision is not None else None,
                              t.llr if sprt and t.id in spread else None, lower,
                              upper, t.delta0, t.delta1, t.alpha, t.beta, t.cap, t.blocks_done, t.asked_by,
                              aware(t.created), maybe_aware(t.finished)))
    return views


def tests(session: Session) -> tuple[TestView, ...]:
    """The tests and scrimmages, newest first (at most :data:`~arena.ladder.queries.base.TESTS_SHOWN`)."""
    return tuple(test_views(session, session.scalars(select(Test).order_by(Test.id.desc()).limit(TESTS_SHOWN)).all()))


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
    seats = seats_of(session, {v for b in blocks for v in b.seats})
    return TestDetail(test_views(session, [found])[0], marks, tuple(
        BlockLine(b.id, str(b.state), str(b.kind), tuple(seat_of(seats, v) for v in b.seats), maybe_aware(b.finished))
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
