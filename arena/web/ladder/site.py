"""What every answer of the ladder's site shares: its limits (:class:`SiteLimits`), its templates and security
header fields, what its templates call, and :class:`Site`: the ladder, the threads that read its database and
unpack uploads, the login of a request, a page in the site's frame, and a refusal in the site's words."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import math
import urllib.parse
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import Scope

from arena.core.cards import Card, Suit
from arena.errors import ArenaError, CardError
from arena.ladder.accounts import Login, login_of
from arena.ladder.control import Ladder
from arena.ladder.intake import TooOften
from arena.ladder.queries import base
from arena.rating.pages import Templates
from arena.web.guard import PageLimits
from arena.web.security import page_headers, secure
from arena.web.sitting import Sittings

__all__ = [
    "COOKIE", "HELPERS", "ID_DIGITS", "REFRESH_S", "REPORT_SECURITY", "SCRIPT", "SECURITY", "SEEDS", "STYLE",
    "SUBMISSION_SLACK", "SUBMIT_PATHS", "TEMPLATES", "Refusal", "Site", "SiteLimits", "Submitted", "href",
    "sees_all",
]  # fmt: skip

COOKIE = "ladder_login"
"""The login cookie's name."""
SUBMISSION_SLACK = 64 << 10
"""Bytes of a submission's request beyond its file's limit: the multipart framing and the form's other fields."""
SUBMIT_PATHS = ("/submit", "/api/submit")
SEEDS = 1 << 31
"""A sitting without a seed of its entrant's gets one drawn below this."""
ID_DIGITS = 18
"""The most digits of an id in a path or a form: every such number fits the database's 64-bit integers."""
REFRESH_S = {"board": 30, "playing": 10}
"""Seconds between reloads of the pages that a projector shows (their script reloads them)."""
_LOG = logging.getLogger("arena.web.ladder")
_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True)
class SiteLimits(PageLimits):
    """What clients may cost the ladder's process (:class:`~arena.web.guard.PageLimits`, and what a site that
    takes uploads and logins needs besides)."""

    threads: int = 4
    """Threads that read the database and make answers."""
    per_address: int = 32
    """Connections (and requests through the proxy) open at once from one client address: an eighth of the
    whole, so that one client cannot take every connection."""
    body_s: float = 300.0
    """Seconds, from its first byte, for an upload's request and its body to arrive whole (a slow link)."""
    form_s: float = 10.0
    """Seconds, from its first byte, for any other request and its body (a form, at most 64 KiB) to arrive
    whole."""
    uploads: int = 2
    """Threads that unpack uploads (never the threads that answer pages); an entrant has one upload at a time."""
    logins_per_minute: int = 10
    """Wrong tokens (at the login form, or given to ``/api/submit`` or the organiser's JSON) one address may give
    in a minute; after them, every login from it is refused until a minute has passed."""
    addresses: int = 10_000
    """Addresses whose attempts are remembered at once (the oldest are forgotten first)."""
    sittings: int = 4
    """Sittings (``/play``) in play at once, over all entrants (each entrant has one at most)."""
    sitting_idle_s: float = 1800.0
    """Seconds a sitting waits for its entrant to ask for anything before it is stopped and forgotten."""


# -- what every answer carries ---------------------------------------------------------------------

TEMPLATES = Templates("arena.web", "arena.rating")
"""The site's templates (``ladder_*.html``), and report.html's pieces they draw cards and tables with."""
SCRIPT = TEMPLATES.script("ladder.js")
"""Reloads the pages a projector shows, every few seconds (a page without it is the same page, not refreshed)."""
SECURITY = page_headers(SCRIPT, forms=True)
"""The security header fields of every answer."""
STYLE = TEMPLATES.style("base.css", "report.css", "ladder.css")
"""The report's style (cards, tables, charts) and the site's own after it."""
REPORT_SECURITY = page_headers(TEMPLATES.script("report.js"))
"""What the final's report.html needs: its own script."""


# -- what templates are made of --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Face:
    """A card as drawn: rank and suit symbol (or the text as it came, when it is no card), and its classes."""

    label: str
    classes: str


@functools.cache
def _face(text: str, lead: bool = False, win: bool = False) -> _Face:
    """A card as a page draws it; ``lead``: it was led; ``win``: it won the trick."""
    classes = ("card", *(("lead",) if lead else ()), *(("win",) if win else ()))
    try:
        card = Card.parse(text)
    except CardError:
        return _Face(text, " ".join(classes))
    rank = "10" if card.rank.letter == "T" else card.rank.letter
    red = ("red",) if card.suit in (Suit.HEARTS, Suit.DIAMONDS) else ()
    return _Face(f"{rank}{card.suit.symbol}", " ".join((*classes[:1], *red, *classes[1:])))


def _trump(letter: str) -> str:
    suit = Suit.parse(letter)
    return f"{suit.symbol} {suit.noun}"


def _when(moment: datetime | None) -> str:
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


def _number(value: float | None, form: str = "{:.2f}") -> str:
    return "–" if value is None or not math.isfinite(value) else form.format(value)


def href(*parts: object) -> str:
    """A path of the site from its parts, each quoted (an entrant's name may hold spaces, ``#`` or ``+``)."""
    return "/" + "/".join(urllib.parse.quote(str(part), safe="") for part in parts)


HELPERS: dict[str, object] = {"face": _face, "trump": _trump, "when": _when, "number": _number, "href": href}
"""What every template may call."""


def sees_all(login: Login | None, name: str) -> bool:
    """The login sees all of entrant ``name``'s checks (their detail, hand and stderr): theirs, or the
    organiser's."""
    return login is not None and (login.organiser or (login.entrant or "").casefold() == name.casefold())


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A request refused: its status and the sentence that says why."""

    status: int
    why: str


@dataclasses.dataclass(frozen=True)
class Submitted:
    """What came of an upload: the status to answer, the refusal (empty for none), the version made."""

    status: int
    problem: str
    version: str = ""
    state: str = ""


# -- the site --------------------------------------------------------------------------------------


class Site:
    """What the site's answers share: each reads the database in one transaction, in a thread of
    :attr:`makers`."""

    def __init__(self, ladder: Ladder, limits: SiteLimits, makers: concurrent.futures.Executor,
                 unpackers: concurrent.futures.Executor, sittings: Sittings) -> None:
        self.ladder = ladder
        self.limits = limits
        self.makers = makers
        self.unpackers = unpackers
        """Threads of their own for uploads, which take seconds where a page takes milliseconds."""
        self.sittings = sittings

    async def off_loop(self, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)`` in a thread of :attr:`makers`."""
        return await asyncio.get_running_loop().run_in_executor(self.makers, functools.partial(work, *args))

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        with self.ladder.session() as session:
            yield session

    async def read(self, request: Request, make: Callable[[Session, Login | None], Response]) -> Response:
        """``make``'s answer, from the database as it is now and the request's login."""
        cookie = request.cookies.get(COOKIE, "")

        def work() -> Response:
            with self.session() as session:
                return make(session, login_of(session, cookie) if cookie else None)

        return await self.off_loop(work)

    async def login(self, request: Request) -> Login | None:
        """The login of the request's cookie, if any."""
        cookie = request.cookies.get(COOKIE, "")
        if not cookie:
            return None

        def work() -> Login | None:
            with self.session() as session:
                return login_of(session, cookie)

        return await self.off_loop(work)

    def mine(self, login: Login | None) -> int | None:
        """The number of the login's sitting in play, if any (read on the loop, where sittings change)."""
        held = [h for h in self.sittings.in_play() if login is not None and h.owner == login.entrant]
        return held[0].number if held else None

    async def unpacked(self, entrant: str, filename: str, data: bytes) -> Submitted:
        """Submits an upload of ``entrant``'s in a thread of :attr:`unpackers` (429 when they have submitted as
        often as an hour allows, or have an upload being unpacked)."""
        def work() -> Submitted:
            try:
                version = self.ladder.submit(entrant, filename, data)
            except ArenaError as err:
                return Submitted(429 if isinstance(err, TooOften) else 400, str(err))
            return Submitted(200, "", version.label, str(version.state))

        return await asyncio.get_running_loop().run_in_executor(self.unpackers, work)

    # -- pages and refusals ------------------------------------------------------------------------

    def page(self, session: Session, login: Login | None, template: str, title: str, status: int = 200,
             refresh: int = 0, **context: Any) -> HTMLResponse:
        """The page ``template`` in the site's frame (its name, state and login)."""
        frame = {"name": self.ladder.settings.name, "title": title, "login": login,
                 "state": base.ladder_view(session, self.ladder.folder), "refresh": refresh}
        text = TEMPLATES.render(template, site=frame, style=STYLE, script=SCRIPT, **HELPERS, **context)
        return HTMLResponse(text, status)

    def message(self, session: Session | None, login: Login | None, status: int, why: str,
                title: str = "") -> HTMLResponse:
        """A page that says one thing."""
        heading = title or {400: "Refused", 401: "Not logged in", 403: "Not allowed", 404: "Not found",
                            405: "Not allowed", 413: "Too large", 429: "Too many attempts", 431: "Too long"}.get(
            status, "The site cannot answer")
        frame: dict[str, object] = {"name": self.ladder.settings.name, "title": heading, "login": login,
                                    "state": None, "refresh": 0}
        if session is not None:
            frame["state"] = base.ladder_view(session, self.ladder.folder)
        text = TEMPLATES.render("ladder_message.html", site=frame, style=STYLE, script=SCRIPT, why=why,
                                status=status, **HELPERS)
        return HTMLResponse(text, status)

    async def say(self, request: Request, refusal: Refusal) -> Response:
        """The page of a refusal, for the request's login."""
        login = await self.login(request)

        def work() -> Response:
            with self.session() as session:
                return self.message(session, login, refusal.status, refusal.why)

        return await self.off_loop(work)

    def refuse(self, scope: Scope, status: int, why: str) -> Response:
        """The answer to a request refused before it reached a page: JSON under /api/, a page elsewhere."""
        path: str = scope["path"]
        if path.startswith("/api/"):
            return JSONResponse({"error": why}, status)
        return self.message(None, None, status, why)

    async def refused(self, request: Request, exc: Exception) -> Response:
        """Starlette's refusals (404, 405, 400 for a form it cannot read) in the site's words."""
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else ""
        why = {404: f"there is no page at {request.url.path}", 405: f"{request.url.path} does not take "
               f"{request.method} requests"}.get(status, str(detail) or "the request cannot be read")
        return self.refuse(request.scope, status, why)

    async def failed(self, request: Request, exc: Exception) -> Response:
        """An answer that failed: logged, and a 500 in the site's words."""
        if not isinstance(exc, ClientDisconnect):  # a body ended by its deadline, or by its client: nothing failed
            _LOG.error("the ladder's site failed on %s", request.url.path, exc_info=exc)
        return secure(self.refuse(request.scope, 500, "the site failed to make this answer; the ladder plays on"),
                      SECURITY)
