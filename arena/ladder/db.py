"""A ladder's database: its tables as SQLAlchemy models, and how the database is opened.

The tables: ``organisers`` (who runs the ladder), ``entrants`` (who submits), ``versions`` (each
bot an entrant submitted), ``checks`` (what checking a version found), ``blocks`` (duplicate blocks
of four versions, one by seat), ``block_results`` (what each version of a done block scored),
``ratings`` (each version's OpenSkill rating and duplicate score), ``rating_history`` (a version's
rating after each block it played), ``tests`` (sequential tests and scrimmages between versions),
``test_points`` (a test's LLR after each of its blocks), ``web_sessions`` (who is logged in to the
site), ``ladder_state`` (paused, frozen, the final) and ``refusals`` (uploads refused once read, which count
toward an entrant's hour as versions do). Tokens and session cookies are kept as SHA-256
digests only. Times are UTC.

The schema changes only through a migration (:mod:`arena.ladder.migrations`); a test holds the models
and the migrations to the same schema.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    BigInteger,
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

__all__ = ["BUSY_TIMEOUT_MS", "Base", "Block", "BlockKind", "BlockResult", "BlockState", "Check", "Decision", "Entrant",
           "LadderState", "Organiser", "Rating", "RatingPoint", "Refusal", "Test", "TestKind", "TestPoint", "TestState",
           "Version", "VersionState", "WebSession", "aware", "open_database", "utc_now"]

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
    VOID = "void"
    """Played, or begun, but not counted: a remote version came to none of its games, or the ladder could not play
    it."""


class BlockKind(enum.StrEnum):
    """Why a block is played: rated ones move ratings; the others only their own test's figures."""

    PLACEMENT = "placement"
    """A new version's first blocks, against opponents drawn from the whole field."""
    RATED = "rated"
    """Versions of close ratings."""
    TEST = "test"
    """A block of a sequential test: both versions at the table."""
    SCRIMMAGE = "scrimmage"
    """An unrated block against versions an entrant chose."""


class TestState(enum.StrEnum):
    """Where a sequential test between two versions is."""

    __test__ = False  # a name pytest would otherwise collect

    RUNNING = "running"
    DECIDED = "decided"
    STOPPED = "stopped"
    """Ended without a decision (a version retired, or the cap reached)."""


class TestKind(enum.StrEnum):
    """A version test: a sequential test that stops at a decision, or a fixed number of unrated blocks."""

    __test__ = False

    SPRT = "sprt"
    SCRIMMAGE = "scrimmage"


class Decision(enum.StrEnum):
    """A sequential test's verdict (:mod:`arena.rating.sequential`)."""

    H0 = "H0"
    H1 = "H1"


def utc_now() -> datetime:
    """Now, in UTC: every time the database holds."""
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    """A time read back from the database, in UTC: SQLite gives it back without its zone."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


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
    bot_token_sha256: Mapped[str | None] = mapped_column(String(64), unique=True, index=True, default=None)
    """The digest of the token a remote entrant's bot connects with, apart from the site's (``None``: none made yet,
    or revoked)."""


class Version(Base):
    """One bot an entrant submitted, stored as it came."""

    __tablename__ = "versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    entrant_id: Mapped[int] = mapped_column(ForeignKey("entrants.id"), index=True)
    content_sha256: Mapped[str] = mapped_column(String(64))
    """SHA-256 of the submission's files, so the same bot submitted twice is seen."""
    kind: Mapped[str] = mapped_column(String(16))
    """How it starts: a bot kind of :mod:`arena.event.setup.kinds`."""
    path: Mapped[str] = mapped_column(Text)
    """Where its files are stored, relative to the ladder's folder (for ``python``: the class, ``module:Class``;
    for ``remote``: empty)."""
    state: Mapped[VersionState] = mapped_column(_enum(VersionState), default=VersionState.SUBMITTED)
    created: Mapped[datetime] = mapped_column(default=utc_now)
    number: Mapped[int] = mapped_column(Integer, default=1)
    """The entrant's count of versions: 1 for the first."""
    label: Mapped[str] = mapped_column(String(48), default="", unique=True)
    """The version's name in every table and record: ``entrant#number``."""
    activated: Mapped[datetime | None] = mapped_column(default=None)
    retired: Mapped[datetime | None] = mapped_column(default=None)
    missed: Mapped[int] = mapped_column(Integer, default=0)
    """Blocks in a row in which a remote version was not there for some of its games (0 after a block it played
    whole)."""
    set_aside: Mapped[datetime | None] = mapped_column(default=None)
    """When a remote version was set aside for missing ``[remote] set_aside_after`` blocks in a row; ``None`` while
    it is in the field. Its bot's next hello on the ladder's gRPC port brings it back."""


class Check(Base):
    """One check of a version, and where it failed if it did."""

    __tablename__ = "checks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), index=True)
    passed: Mapped[bool] = mapped_column(Boolean)
    check_name: Mapped[str] = mapped_column(String(80))
    """Which check: the one that failed, or the last one run."""
    profile: Mapped[str | None] = mapped_column(String(16))
    game: Mapped[str | None] = mapped_column(String(40))
    """The game's id in the check's records (``r1-g1-d1-p2``)."""
    round: Mapped[int | None] = mapped_column(Integer, default=None)
    trick: Mapped[int | None] = mapped_column(Integer)
    """From 1; ``None`` during the calls."""
    hand: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[str] = mapped_column(Text, default="")
    """What the check found, in words (every failing line)."""
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
    """Its games moved the ratings (set in the transaction that marks it done)."""
    created: Mapped[datetime] = mapped_column(default=utc_now)
    started: Mapped[datetime | None] = mapped_column(default=None)
    finished: Mapped[datetime | None] = mapped_column(default=None)
    kind: Mapped[BlockKind] = mapped_column(_enum(BlockKind), default=BlockKind.RATED)
    seed: Mapped[int] = mapped_column(BigInteger, default=0)
    """The deal seed of its one deal set (deal set 1 of this seed): derived from the ladder's secret seed."""
    test_id: Mapped[int | None] = mapped_column(ForeignKey("tests.id"), default=None, index=True)
    note: Mapped[str] = mapped_column(Text, default="")
    """Why it is void, or what went wrong, in words; of a done block, the games the fallback played for a remote
    version that was not there."""

    @property
    def seats(self) -> tuple[int, int, int, int]:
        """The four versions, by seat of the first rotation."""
        return (self.seat0, self.seat1, self.seat2, self.seat3)

    @property
    def folder(self) -> str:
        """Its records' folder, relative to the ladder's: a results folder that ``verify`` reads."""
        return f"blocks/{self.id:06d}"


class BlockResult(Base):
    """What one version of a done block scored over the block's games."""

    __tablename__ = "block_results"

    block_id: Mapped[int] = mapped_column(ForeignKey("blocks.id"), primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), primary_key=True, index=True)
    games: Mapped[int] = mapped_column(Integer)
    points: Mapped[int] = mapped_column(Integer)
    """Its game totals over the block, in tenths."""
    score: Mapped[float] = mapped_column(Float)
    """Its duplicate score in the block: points per game above the table's mean, in tenths."""
    faults: Mapped[int] = mapped_column(Integer, default=0)


class Rating(Base):
    """A version's OpenSkill rating; shown as its :attr:`ordinal`."""

    __tablename__ = "ratings"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[datetime] = mapped_column(default=utc_now)
    blocks: Mapped[int] = mapped_column(Integer, default=0)
    """Rated blocks played."""
    score_sum: Mapped[float] = mapped_column(Float, default=0.0)
    """The sum, over its rated blocks, of its block scores (tenths per game)."""
    score_squares: Mapped[float] = mapped_column(Float, default=0.0)
    """The sum of their squares: with the two above, the score's interval, each block one cluster."""

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
    kind: Mapped[TestKind] = mapped_column(_enum(TestKind), default=TestKind.SPRT)
    asked_by: Mapped[str] = mapped_column(String(40), default="")
    """The entrant (or the organiser) who asked for it."""
    delta0: Mapped[float] = mapped_column(Float, default=0.0)
    """H0's mean difference, b - a, in points per game."""
    delta1: Mapped[float] = mapped_column(Float, default=1.0)
    alpha: Mapped[float] = mapped_column(Float, default=0.05)
    beta: Mapped[float] = mapped_column(Float, default=0.05)
    cap: Mapped[int] = mapped_column(Integer, default=400)
    """The most blocks it plays: a scrimmage's number of blocks, a sequential test's cap."""
    opponents: Mapped[str] = mapped_column(Text, default="")
    """A scrimmage's chosen opponents: version ids, comma-separated."""
    blocks_done: Mapped[int] = mapped_column(Integer, default=0)
    created: Mapped[datetime] = mapped_column(default=utc_now)
    finished: Mapped[datetime | None] = mapped_column(default=None)


class RatingPoint(Base):
    """A version's rating after one block it played: its rating over time."""

    __tablename__ = "rating_history"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), index=True)
    block_id: Mapped[int] = mapped_column(ForeignKey("blocks.id"))
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(default=utc_now)


class TestPoint(Base):
    """A test's state after one of its blocks: the LLR over time."""

    __tablename__ = "test_points"
    __test__ = False

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    test_id: Mapped[int] = mapped_column(ForeignKey("tests.id"), index=True)
    block_id: Mapped[int] = mapped_column(ForeignKey("blocks.id"))
    n: Mapped[int] = mapped_column(Integer)
    value: Mapped[float] = mapped_column(Float)
    """The block's difference, b - a, in tenths per game."""
    llr: Mapped[float] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(default=utc_now)


class WebSession(Base):
    """A login to the site: the cookie's digest, whose it is, and the token its forms must carry."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cookie_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    entrant_id: Mapped[int | None] = mapped_column(ForeignKey("entrants.id"), default=None)
    organiser_id: Mapped[int | None] = mapped_column(ForeignKey("organisers.id"), default=None)
    csrf: Mapped[str] = mapped_column(String(64))
    created: Mapped[datetime] = mapped_column(default=utc_now)
    expires: Mapped[datetime] = mapped_column()


class LadderState(Base):
    """The ladder's one row of state that the organiser changes."""

    __tablename__ = "ladder_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    """No new block starts (blocks in play finish)."""
    frozen: Mapped[bool] = mapped_column(Boolean, default=False)
    """No new version enters the field: the final's field is the active versions."""
    final_state: Mapped[str] = mapped_column(String(16), default="")
    """``""`` (none), ``playing`` or ``done``."""
    final_deal_sets: Mapped[int] = mapped_column(Integer, default=0)


class Refusal(Base):
    """An upload refused once its bytes were read: it cost the ladder its unpacking, so it counts toward the
    entrant's ``[submissions] per_hour`` as a version does."""

    __tablename__ = "refusals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    entrant_id: Mapped[int] = mapped_column(ForeignKey("entrants.id"), index=True)
    filename: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text)
    """Why it was refused, as the entrant was told."""
    created: Mapped[datetime] = mapped_column(default=utc_now)


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
