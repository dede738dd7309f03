"""Who may do what on a ladder: entrants and their tokens, the roster's students as entrants, and logins.

A token is shown once, when it is made; the database keeps its SHA-256 digest only. A login to the site is
a random cookie (kept as its digest, with an expiry) and a CSRF token that every form of that login carries. A
remote entrant's bot connects with a bot token of its own (:func:`new_bot_token`), never with the token that logs
in to the site: a bot token that crosses a network, or sits in a bot's environment, opens no page and submits
nothing, and the site's token admits no bot.
"""

from __future__ import annotations

import dataclasses
import secrets
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from arena.errors import ConfigError
from arena.event.setup.roster import check_display, check_name, read_roster
from arena.ladder.db import Entrant, Organiser, Version, VersionState, WebSession, aware, utc_now
from arena.transports.grpc.tokens import new_token, token_sha256

__all__ = ["ENTRANT_NAME_LIMIT", "LOGIN_HOURS", "Login", "add_entrant", "entrant_named", "import_roster",
           "log_in", "log_out", "login_of", "new_bot_token", "new_token_for", "revoke_entrant", "who_has"]

ENTRANT_NAME_LIMIT = 34
"""The longest entrant name: a version is named ``entrant#number`` in records, where 40 characters is the most."""
LOGIN_HOURS = 12
"""How long a login to the site lasts."""


def _key(name: str) -> str:
    return name.casefold()


def entrant_named(session: Session, name: str) -> Entrant | None:
    """The entrant called ``name`` (case does not matter), or ``None``."""
    return session.scalars(select(Entrant).where(func.lower(Entrant.name) == _key(name))).first()


def add_entrant(session: Session, name: str, display: str = "", token_sha256_: str | None = None) -> tuple[
        Entrant, str]:
    """A new entrant and their token (empty when ``token_sha256_``, the digest of a token they already hold,
    is given). :class:`ConfigError` for a name that cannot be one, or is taken."""
    name = check_name(name)
    if len(name) > ENTRANT_NAME_LIMIT:
        raise ConfigError(f"{name!r} is {len(name)} characters long: an entrant's name is at most "
                          f"{ENTRANT_NAME_LIMIT} (their versions are named {name[:8]}#1, #2, ...)")
    if entrant_named(session, name) is not None:
        raise ConfigError(f"there is an entrant called {name!r} already (names differing only in case are one)")
    token = "" if token_sha256_ else new_token()
    entrant = Entrant(name=name, display=check_display(display), token_sha256=token_sha256_ or token_sha256(token))
    session.add(entrant)
    session.flush()
    return entrant, token


def import_roster(session: Session, path: Path) -> list[tuple[str, bool]]:
    """Every student of the classroom roster at ``path`` as an entrant with the token they already hold;
    returns ``(name, added)`` for each (``added`` false: the entrant was there already, and is left as is)."""
    roster = read_roster(path)
    done = []
    for student in roster.students:
        if entrant_named(session, student.name) is not None or student.revoked or not student.token_sha256:
            done.append((student.name, False))
            continue
        add_entrant(session, student.name, student.display, student.token_sha256)
        done.append((student.name, True))
    return done


def new_token_for(session: Session, name: str) -> str:
    """A fresh token for the entrant ``name``, in place of their old one (which stops working)."""
    entrant = _entrant(session, name)
    token = new_token()
    entrant.token_sha256 = token_sha256(token)
    entrant.revoked = None
    session.execute(delete(WebSession).where(WebSession.entrant_id == entrant.id))
    return token


def new_bot_token(session: Session, name: str) -> str:
    """A fresh bot token for the entrant ``name``, in place of their old one (which stops admitting their bot)."""
    entrant = _entrant(session, name)
    if entrant.revoked is not None:
        raise ConfigError(f"{name!r} is revoked: their bot may not connect")
    token = new_token()
    entrant.bot_token_sha256 = token_sha256(token)
    return token


def revoke_entrant(session: Session, name: str) -> Entrant:
    """Takes the entrant ``name`` off the ladder: their token stops working, they are logged out, and their
    versions stop playing (what they played stays in the records and the ratings)."""
    entrant = _entrant(session, name)
    entrant.token_sha256 = entrant.bot_token_sha256 = None
    entrant.revoked = utc_now()
    session.execute(delete(WebSession).where(WebSession.entrant_id == entrant.id))
    for version in session.scalars(select(Version).where(
            Version.entrant_id == entrant.id, Version.state.in_((VersionState.ACTIVE, VersionState.SUBMITTED)))):
        version.state = VersionState.RETIRED
        version.retired = utc_now()
    return entrant


def _entrant(session: Session, name: str) -> Entrant:
    entrant = entrant_named(session, name)
    if entrant is None:
        raise ConfigError(f"there is no entrant called {name!r}")
    return entrant


def who_has(session: Session, token: str) -> Entrant | Organiser | None:
    """The entrant or organiser (not revoked) whose token ``token`` is, or ``None``."""
    token = token.strip()
    if not token:
        return None
    digest = token_sha256(token)
    organiser = session.scalars(select(Organiser).where(Organiser.token_sha256 == digest,
                                                        Organiser.revoked.is_(None))).first()
    if organiser is not None:
        return organiser
    return session.scalars(select(Entrant).where(Entrant.token_sha256 == digest, Entrant.revoked.is_(None))).first()


@dataclasses.dataclass(frozen=True)
class Login:
    """Who a site cookie belongs to, and the CSRF token their forms must carry."""

    entrant: str | None
    """The entrant's name (``None`` for the organiser)."""
    organiser: bool
    csrf: str


def log_in(session: Session, token: str, csrf: str, now: datetime | None = None) -> tuple[str, Login] | None:
    """A new login for the holder of ``token``, whose forms carry the CSRF token ``csrf`` (the site makes it): the
    cookie to set and the login; ``None`` for a token that admits nobody."""
    who = who_has(session, token)
    if who is None:
        return None
    now = now or utc_now()
    cookie = secrets.token_urlsafe(32)
    organiser = isinstance(who, Organiser)
    session.add(WebSession(cookie_sha256=token_sha256(cookie), csrf=csrf, created=now,
                           expires=now + timedelta(hours=LOGIN_HOURS),
                           entrant_id=None if organiser else who.id, organiser_id=who.id if organiser else None))
    session.execute(delete(WebSession).where(WebSession.expires < now))  # old logins go as new ones come
    return cookie, Login(None if organiser else who.name, organiser, csrf)


def login_of(session: Session, cookie: str, now: datetime | None = None) -> Login | None:
    """The login of the site cookie ``cookie``, if it has not expired and its holder is not revoked."""
    if not cookie:
        return None
    now = now or utc_now()
    found = session.scalars(select(WebSession).where(WebSession.cookie_sha256 == token_sha256(cookie))).first()
    if found is None or aware(found.expires) < now:
        return None
    if found.organiser_id is not None:
        return Login(None, True, found.csrf)
    entrant = session.get(Entrant, found.entrant_id)
    if entrant is None or entrant.revoked is not None:
        return None
    return Login(entrant.name, False, found.csrf)


def log_out(session: Session, cookie: str) -> None:
    """Ends the login of ``cookie``."""
    session.execute(delete(WebSession).where(WebSession.cookie_sha256 == token_sha256(cookie)))
