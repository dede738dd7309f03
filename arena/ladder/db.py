"""A ladder's database: its tables as SQLAlchemy models, and how the database is opened.

The tables: ``organisers`` (who runs the ladder), ``entrants`` (who submits), ``versions`` (each
bot an entrant submitted), ``checks`` (what checking a version found), ``blocks`` (duplicate blocks
of four versions, one by seat), ``ratings`` (each version's OpenSkill rating) and ``tests`` (sequential
tests between two versions). Tokens are kept as SHA-256 digests only. Times are UTC.

The schema changes only through a migration (:mod:`arena.ladder.migrations`); a test holds the models
and the migrations to the same schema.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    Boolean,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    create_engine,
    event,
    make_url,
)
from sqlalchemy import Enum as SqlEnum
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = ["BUSY_TIMEOUT_MS", "Base", "Block", "BlockState", "Check", "Decision", "Entrant", "Organiser", "Rating",
           "Test", "TestState", "Version", "VersionState", "open_database", "utc_now"]

BUSY_TIMEOUT_MS = 10_000
"""How long a SQLite connection waits for another's write to end before it gives up."""

_NAMING = {"ix": "ix_%(column_0_label)s", "uq": "uq_%(table_name)s_%(column_0_name)s",
           "ck": "ck_%(table_name)s_%(constraint_name)s", "fk": "fk_%(table_name)s_%(column_0_name)s",
           "pk": "pk_%(table_name)s"}
"""Constraint names written out, so a migration can name the constraint it changes on any database."""


class VersionState(enum.StrEnum):
    """Where a submitted version is on its way to play."""

    SUBMITTED = "submitted"
    CHECKING = "checking"
    FAILED = "failed"
    ACTIVE = "active"
    RETIRED = "retired"


class BlockState(enum.StrEnum):
    """Where a duplicate block is."""

    QUEUED = "queued"
    PLAYING = "playing"
    DONE = "done"


class TestState(enum.StrEnum):
    """Where a sequential test between two versions is."""

    __test__ = False  # a name pytest would otherwise collect

    RUNNING = "running"
    DECIDED = "decided"
    STOPPED = "stopped"
    """Ended without a decision (a version retired, or the cap reached)."""


class Decision(enum.StrEnum):
    """A sequential test's verdict (:mod:`arena.rating.sequential`)."""

    H0 = "H0"
    H1 = "H1"


def utc_now() -> datetime:
    """Now, in UTC: every time the database holds."""
    return datetime.now(UTC)


def _enum(kind: type[enum.StrEnum]) -> SqlEnum:
    """A column of ``kind``'s words, as plain text on every database (a new word needs no type change)."""
    return SqlEnum(kind, name=kind.__name__.lower(), native_enum=False, create_constraint=False,
                   values_callable=lambda members: [m.value for m in members], length=16)


class Base(DeclarativeBase):
    """The models' base: their metadata is the schema."""

    metadata = MetaData(naming_convention=_NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: DateTime(timezone=True)}


class Organiser(Base):
    """Someone who runs the ladder; their token admits them to its administration."""

    __tablename__ = "organisers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[datetime] = mapped_column(default=utc_now)
    revoked: Mapped[datetime | None] = mapped_column(default=None)


class Entrant(Base):
    """Someone who submits bots; their token admits their submissions."""

    __tablename__ = "entrants"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    display: Mapped[str] = mapped_column(String(80), default="")
    token_sha256: Mapped[str | None] = mapped_column(String(64), unique=True)
    """``None`` once revoked."""
    created: Mapped[datetime] = mapped_column(default=utc_now)
    revoked: Mapped[datetime | None] = mapped_column(default=None)


class Version(Base):
    """One bot an entrant submitted, stored as it came."""

    __tablename__ = "versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    entrant_id: Mapped[int] = mapped_column(ForeignKey("entrants.id"), index=True)
    content_sha256: Mapped[str] = mapped_column(String(64))
    """SHA-256 of the submission's files, so the same bot submitted twice is seen."""
    kind: Mapped[str] = mapped_column(String(16))
    """How it starts: a bot kind of :mod:`arena.event.kinds`."""
    path: Mapped[str] = mapped_column(Text)
    """Where its files are stored, relative to the ladder's folder."""
    state: Mapped[VersionState] = mapped_column(_enum(VersionState), default=VersionState.SUBMITTED)
    created: Mapped[datetime] = mapped_column(default=utc_now)


class Check(Base):
    """One check of a version, and where it failed if it did."""

    __tablename__ = "checks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), index=True)
    passed: Mapped[bool] = mapped_column(Boolean)
    check_name: Mapped[str] = mapped_column(String(40))
    """Which check: the one that failed, or the last one run."""
    profile: Mapped[str | None] = mapped_column(String(16))
    game: Mapped[int | None] = mapped_column(Integer)
    trick: Mapped[int | None] = mapped_column(Integer)
    hand: Mapped[str | None] = mapped_column(String(64))
    stderr_tail: Mapped[str] = mapped_column(Text, default="")
    """The last lines the bot wrote to stderr."""
    created: Mapped[datetime] = mapped_column(default=utc_now)


class Block(Base):
    """A duplicate block: one deal set played by four versions in every rotation."""

    __tablename__ = "blocks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    deal_set: Mapped[int] = mapped_column(Integer)
    seat0: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    seat1: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    seat2: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    seat3: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    state: Mapped[BlockState] = mapped_column(_enum(BlockState), default=BlockState.QUEUED, index=True)
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(default=utc_now)
    started: Mapped[datetime | None] = mapped_column(default=None)
    finished: Mapped[datetime | None] = mapped_column(default=None)


class Rating(Base):
    """A version's OpenSkill rating; shown as its :attr:`ordinal`."""

    __tablename__ = "ratings"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[datetime] = mapped_column(default=utc_now)

    @property
    def ordinal(self) -> float:
        """The rating shown: mu - 3 sigma, a skill the version very likely has at least."""
        return self.mu - 3 * self.sigma


class Test(Base):
    """A sequential test of version ``a`` against version ``b``."""

    __tablename__ = "tests"
    __test__ = False  # a name pytest would otherwise collect

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    a: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    b: Mapped[int] = mapped_column(ForeignKey("versions.id"))
    state: Mapped[TestState] = mapped_column(_enum(TestState), default=TestState.RUNNING)
    llr: Mapped[float] = mapped_column(Float, default=0.0)
    decision: Mapped[Decision | None] = mapped_column(_enum(Decision), default=None)


def open_database(url: str) -> Engine:
    """An engine for the database at ``url``.

    SQLite is set up on every connection: write-ahead logging (readers do not block the writer),
    foreign keys enforced, and a busy timeout of :data:`BUSY_TIMEOUT_MS`. Any other URL is taken as
    SQLAlchemy takes it (``postgresql+psycopg://...`` works the same way).
    """
    engine = create_engine(url)
    if make_url(url).get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()
