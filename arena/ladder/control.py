"""A ladder as its site, its command line and its service see it: the folder, the settings, the database, and
every change anyone may ask for (a submission, an entrant, a test, the organiser's pause, freeze and final).

Each change is one transaction. The service that plays (:mod:`arena.ladder.service`) reads the database; a
change calls :attr:`Ladder.wake` so that it looks at once rather than at its next poll. What an entrant may
ask for is counted and granted under one lock of the process (the site's threads ask at the same time): one
upload of an entrant is unpacked at a time, and their running tests and scrimmages stay within
``[tests] per_entrant``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from arena.errors import ConfigError
from arena.ladder.accounts import add_entrant, entrant_named, new_bot_token, revoke_entrant
from arena.ladder.db import (
    Entrant,
    LadderState,
    Test,
    TestKind,
    TestState,
    Version,
    VersionState,
    open_database,
    utc_now,
)
from arena.ladder.intake import (
    SubmissionError,
    TooOften,
    check_pace,
    new_version,
    record_refusal,
    submit_upload,
)
from arena.ladder.schema import head, schema_version
from arena.ladder.settings import LadderSettings, load_settings

__all__ = ["INPROCESS", "REMOTE", "Ladder", "version_labelled"]

INPROCESS = "inprocess"
"""The kind of a version the organiser names by its Python class (``module:Class``): it plays in the ladder's
own process, as a tournament's ``python`` bot, and needs no check."""
REMOTE = "remote"
"""The kind of a remote entrant's version: their bot connects with their token, and plays while it is there."""
PLAYING_STATES = (VersionState.ACTIVE,)


def version_labelled(session: Session, label: str) -> Version:
    """The version called ``label`` (``entrant#number``); a :class:`ConfigError` names what is wrong."""
    version = session.scalars(select(Version).where(Version.label == label)).first()
    if version is None:
        raise ConfigError(f"there is no version called {label!r}: a version is named entrant#number, e.g. alice#2")
    return version


@dataclasses.dataclass
class Ladder:
    """An open ladder: ``folder``, its ``settings`` and its database's ``engine``."""

    folder: Path
    settings: LadderSettings
    engine: Engine
    wake: Callable[[], None] = lambda: None
    """Tells the service that something changed."""
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False, compare=False)
    """Held while what an entrant asks for is counted and granted."""
    _unpacking: set[str] = dataclasses.field(default_factory=set, repr=False, compare=False)
    """The entrants (by name, casefolded) whose upload is being unpacked now."""

    @classmethod
    def open(cls, folder: Path) -> Ladder:
        """The ladder in ``folder``; :class:`ConfigError` when there is none, or its database is not at this
        version's schema (``ladder serve`` brings it there)."""
        settings = load_settings(folder)
        engine = open_database(settings.database_url)
        return cls(folder.resolve(), settings, engine)

    def require_schema(self) -> None:
        """Refuses a database whose schema is not the one this version of the package reads."""
        found = schema_version(self.engine)
        if found != head():
            raise ConfigError(f"the ladder's database is at schema {found}, not {head()}: `callbreak-arena ladder "
                              "serve` brings it up to date")

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back on an error."""
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    def close(self) -> None:
        self.engine.dispose()

    # -- entrants and versions ----------------------------------------------------------------------

    def add_entrant(self, name: str, display: str = "", *, python: str = "", remote: bool = False) -> str:
        """A new entrant; returns their token. With ``python`` (``module:Class``) their one version is that class,
        playing in-process at once; with ``remote`` their version is their bot, connecting with a bot token of its own
        (:meth:`bot_token`)."""
        if python and remote:
            raise ConfigError("an entrant's bot is either a Python class (--python) or connects by itself "
                              "(--remote), not both")
        with self.session() as session:
            entrant, token = add_entrant(session, name, display)
            if python:
                new_version(session, entrant, INPROCESS, python, "", VersionState.SUBMITTED)
            elif remote:
                version = new_version(session, entrant, REMOTE, "", "", VersionState.ACTIVE)
                version.activated = utc_now()
        self.wake()
        return token

    def bot_token(self, name: str) -> str:
        """A fresh bot token for the entrant ``name`` (their bot's old one stops working), shown this once: what their
        bot connects to the ladder's gRPC port with, which opens nothing on the site."""
        with self.session() as session:
            token = new_bot_token(session, name)
        self.wake()
        return token

    def submit(self, entrant_name: str, filename: str, data: bytes) -> Version:
        """A new version of the entrant from an upload (:mod:`arena.ladder.intake`), queued for its check.

        Refused (:class:`~arena.ladder.intake.TooOften`) before any of it is read while another upload of theirs
        is being unpacked, or once their uploads of the hour are spent; an upload refused after it was read is
        kept (:func:`~arena.ladder.intake.record_refusal`) and counts toward the hour."""
        with self._one_upload(entrant_name):
            with self.session() as session:
                entrant = self._entrant(session, entrant_name)
                if self.state(session).frozen:
                    raise SubmissionError("the ladder is frozen for its final: no new version may enter now")
                check_pace(session, entrant, self.settings.submissions)
                entrant_id = entrant.id
            try:
                with self.session() as session:
                    entrant = self._entrant(session, entrant_name)
                    version = submit_upload(session, self.folder, entrant, filename, data, self.settings.submissions)
            except SubmissionError as refusal:
                with self.session() as session:
                    record_refusal(session, entrant_id, filename, refusal)
                raise
        self.wake()
        return version

    @contextlib.contextmanager
    def _one_upload(self, entrant_name: str) -> Iterator[None]:
        key = entrant_name.casefold()
        with self._lock:
            if key in self._unpacking:
                raise TooOften("your previous upload is still being unpacked: wait for its answer before sending "
                               "another")
            self._unpacking.add(key)
        try:
            yield
        finally:
            with self._lock:
                self._unpacking.discard(key)

    def revoke(self, name: str) -> None:
        """Takes an entrant off the ladder (:func:`~arena.ladder.accounts.revoke_entrant`)."""
        with self.session() as session:
            revoke_entrant(session, name)
        self.wake()

    def _entrant(self, session: Session, name: str) -> Entrant:
        entrant = entrant_named(session, name)
        if entrant is None or entrant.revoked is not None:
            raise ConfigError(f"there is no entrant called {name!r} on this ladder")
        return entrant

    # -- tests -------------------------------------------------------------------------------------

    def ask_test(self, asked_by: str, a: str, b: str, *, organiser: bool = False) -> Test:
        """A sequential test of version ``b`` against version ``a`` (H0: b is no better; H1: b is better by
        ``[tests] delta1`` points per game), played on a share of the tables until it decides. An entrant's
        (not the ``organiser``'s) is refused past ``[tests] per_entrant`` running."""
        settings = self.settings.tests
        with self._lock, self.session() as session:
            base, candidate = version_labelled(session, a), version_labelled(session, b)
            if base.id == candidate.id:
                raise ConfigError("a test needs two different versions")
            for version in (base, candidate):
                if version.state not in (VersionState.ACTIVE, VersionState.RETIRED):
                    raise ConfigError(f"{version.label} has not passed its check ({version.state}): it cannot play "
                                      "a test")
            if not organiser:
                self._refuse_past_quota(session, asked_by)
            test = Test(a=base.id, b=candidate.id, kind=TestKind.SPRT, asked_by=asked_by, delta0=0.0,
                        delta1=settings.delta1, alpha=settings.alpha, beta=settings.beta, cap=settings.cap,
                        created=utc_now())
            session.add(test)
            session.flush()
        self.wake()
        return test

    def ask_scrimmage(self, asked_by: str, version: str, opponents: Sequence[str], blocks: int, *,
                      organiser: bool = False) -> Test:
        """``blocks`` unrated duplicate blocks of ``version`` against the three ``opponents`` (at most ``[tests]
        scrimmage_blocks``); an entrant's (not the ``organiser``'s) is refused past ``[tests] per_entrant``
        running."""
        most = self.settings.tests.scrimmage_blocks
        if len(opponents) != 3:
            raise ConfigError(f"a scrimmage seats three opponents, not {len(opponents)}")
        if not 1 <= blocks <= most:
            raise ConfigError(f"a scrimmage plays 1 to {most} blocks ([tests] scrimmage_blocks), not {blocks}")
        with self._lock, self.session() as session:
            own = version_labelled(session, version)
            others = [version_labelled(session, label) for label in opponents]
            ids = [own.id, *(v.id for v in others)]
            if len(set(ids)) != 4:
                raise ConfigError("a scrimmage seats four different versions")
            for seated in (own, *others):
                if seated.state not in (VersionState.ACTIVE, VersionState.RETIRED) or seated.kind == REMOTE:
                    raise ConfigError(f"{seated.label} cannot play a scrimmage: only versions that passed their "
                                      "check and that the ladder starts itself can")
            if not organiser:
                self._refuse_past_quota(session, asked_by)
            test = Test(a=own.id, b=own.id, kind=TestKind.SCRIMMAGE, asked_by=asked_by, cap=blocks,
                        opponents=",".join(str(v.id) for v in others), created=utc_now())
            session.add(test)
            session.flush()
        self.wake()
        return test

    def _refuse_past_quota(self, session: Session, asked_by: str) -> None:
        """Refuses a test or scrimmage of an entrant who has ``[tests] per_entrant`` running (called under
        :attr:`_lock`, so that two asked at once are counted one after the other)."""
        most = self.settings.tests.per_entrant
        running = session.scalar(select(func.count(Test.id)).where(
            Test.state == TestState.RUNNING, func.lower(Test.asked_by) == asked_by.casefold())) or 0
        if running >= most:
            raise ConfigError(f"you have {running} tests and scrimmages running, the most one entrant may have at "
                              f"once ([tests] per_entrant = {most}): wait for one to end before asking for another")

    def stop_test(self, test_id: int) -> None:
        """Ends a test without a decision."""
        with self.session() as session:
            test = session.get(Test, test_id)
            if test is None:
                raise ConfigError(f"there is no test {test_id}")
            if test.state == TestState.RUNNING:
                test.state, test.finished = TestState.STOPPED, utc_now()

    # -- the organiser -------------------------------------------------------------------------------

    @staticmethod
    def state(session: Session) -> LadderState:
        """The ladder's row of state (made if a database lacks it)."""
        state = session.get(LadderState, 1)
        if state is None:
            state = LadderState(id=1, paused=False, frozen=False, final_state="", final_deal_sets=0)
            session.add(state)
            session.flush()
        return state

    def pause(self, paused: bool) -> None:
        """No new block starts while paused; those in play finish."""
        with self.session() as session:
            self.state(session).paused = paused
        self.wake()

    def freeze(self, frozen: bool = True) -> None:
        """A frozen ladder takes no new version: its field is the active versions, ready for the final."""
        with self.session() as session:
            self.state(session).frozen = frozen
        self.wake()

    def start_final(self, deal_sets: int) -> None:
        """Freezes the field and starts the final: a duplicate round robin of the active versions on fresh deals,
        through the tournament code, its results in ``final/`` with its report.html."""
        if not 1 <= deal_sets <= 100_000:
            raise ConfigError(f"the final plays 1 to 100000 deal sets, not {deal_sets}")
        with self.session() as session:
            state = self.state(session)
            if state.final_state:
                raise ConfigError(f"the final has begun already ({state.final_state})")
            active = session.scalars(select(Version).where(Version.state == VersionState.ACTIVE)).all()
            if len(active) < 4:
                raise ConfigError(f"the final needs at least four active versions; there are {len(active)}")
            state.frozen, state.paused = True, True
            state.final_state, state.final_deal_sets = "playing", deal_sets
        self.wake()
