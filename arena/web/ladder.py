"""The ladder's web site and its JSON API: a Starlette application (:func:`ladder_app`) that :class:`LadderSite`
serves with uvicorn on the event loop of the program that runs the ladder.

Every page has a JSON twin under ``/api/`` with the same data, both made from :mod:`arena.ladder.queries`:

=====================================  ==========================================================================
``/``, ``/api/leaderboard``            the ranked versions (rank, ``=`` for a statistical tie) and those in placement
``/entrants/NAME``, ``/api/...``       an entrant: versions, checks and where they failed, rating over time, recent
                                       games, faults
``/blocks/ID``, ``/api/blocks/ID``     a block: seats, state, results, its four games once it is done or void
``/games/BLOCK/GAME``, ``/api/...``    a game's replay, cards as cards; 404 for a block queued or in play
``/playing``, ``/api/playing``         the blocks in play: seats, kind, since when; never a card
``/tests``, ``/tests/ID``, ``/api/..`` sequential tests (LLR, bounds, decision, LLR over time) and scrimmages
``/organiser``, ``/api/organiser``     the organiser's switches (organiser only: 403 for others)
``/play``, ``/api/play``               what one may play against at a table of one's own: the sample bots and
                                       the active versions the ladder starts itself
``/play/N/``                           sitting ``N``'s seat (:func:`~arena.web.seat.seat_app`, its forms carrying
                                       the seat's own token), for the entrant who dealt it alone
``/final``                             the final's report.html, once the final is done
``/healthz``                           ``ok``
=====================================  ==========================================================================

Forms (each POST of a logged-in browser carries the login's CSRF token in its ``csrf`` field, and an ``Origin``
of this site when the browser names one, else 403):
``/login`` (a token; sets an HttpOnly, SameSite=Strict cookie, Secure over https) and ``/logout``; ``/submit``
(a .py file or an archive: :meth:`~arena.ladder.control.Ladder.submit`); ``/tests`` and ``/scrimmages`` (ask
for a test of two versions, a scrimmage of a version against three); ``/organiser/ACTION`` (pause, resume,
freeze, unfreeze, revoke, final, stop-test); ``/play`` (an entrant's sitting: three opponents and a seed, or a
fresh one). ``POST /api/submit`` is the command line's: the token in ``Authorization: Bearer``, the file in the
multipart field ``file``, a JSON answer, no cookie and no CSRF.

A sitting (:class:`~arena.web.sitting.Sitting`) is one deal set of an entrant against three bots, played in their
browser, unrated: it seats its bots as a block does (the ladder's rules, deadline and sandbox; a launched version
a process of its own for each game), and records its games in ``sittings/NNNNNN`` of the ladder's folder, a
results folder ``verify`` reads. Each entrant has at most one in play, and the ladder at most
:attr:`SiteLimits.sittings`; one whose entrant asks nothing of it for :attr:`SiteLimits.sitting_idle_s` is
stopped and forgotten, and :meth:`LadderSite.stop` stops them all, with every bot they launched.

What a client may cost the ladder is bounded (:class:`SiteLimits`), and an anonymous one gives up its place
fast: the connections, all and of one client address (behind ``--proxy``, the address it forwards; the guard
of :mod:`arena.web.guard`, and :class:`_Door` for the requests a proxy brings), the time a request and its body
take to arrive (an upload's body :attr:`SiteLimits.body_s`, any other :attr:`SiteLimits.form_s`), a body's size
before it is parsed (its Content-Length, then a count as it streams: a submission's limit and 64 KiB of form
around it, 64 KiB for any other form), a form's login and origin checked before its body is read (an anonymous
POST is refused at once), the login attempts of one address (:attr:`SiteLimits.logins_per_minute`, counted
and checked as one step, then 429), ids that do not fit the database (404). The database is read at every
request, in threads of the site's own (:attr:`~arena.web.guard.PageLimits.threads`), never on the loop that
plays the blocks; an upload is unpacked in threads of its own (:attr:`SiteLimits.uploads`), within the time
and bytes of :mod:`arena.ladder.intake`, so that uploads never hold the threads that answer pages.

What one entrant sees of another is public only: a failed check says which check failed and where (the game,
the round, the trick) to everyone, and its detail, the bot's hand and the end of its stderr to that entrant and
the organiser alone; no page or answer names a path of the server (:func:`~arena.ladder.queries.public_text`).
Every text an entrant chose is escaped (the templates autoescape), and every answer carries the
Content-Security-Policy (no script but the site's own, by its hash; nothing fetched),
``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin`` and ``X-Frame-Options: DENY``.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import math
import secrets
import socket
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import uvicorn
from sqlalchemy.orm import Session
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.core.cards import Card, Suit
from arena.errors import ArenaError, CardError, ConfigError
from arena.event.check import OPPONENTS
from arena.ladder import queries
from arena.ladder.accounts import LOGIN_HOURS, Login, log_in, log_out, login_of, who_has
from arena.ladder.blocks import bot_table
from arena.ladder.control import REMOTE, Ladder, version_labelled
from arena.ladder.db import Entrant, Organiser, VersionState
from arena.ladder.intake import ARCHIVES, TooOften
from arena.rating.pages import Markup, Templates
from arena.rating.plots import Series, color, dash, line_chart
from arena.web.guard import (
    PageLimits,
    QuietServer,
    client_key,
    guard,
    listen,
    serve_until_stopped,
    stop_server,
    too_long,
)
from arena.web.seat import seat_app
from arena.web.security import (
    FORM_BYTES,
    Bodies,
    Secured,
    csrf_ok,
    csrf_token,
    page_headers,
    read_form,
    same_origin,
    secure,
)
from arena.web.sitting import Held, Sitting, Sittings

__all__ = ["COOKIE", "FORM_BYTES", "SEEDS", "SUBMISSION_SLACK", "LadderSite", "SiteLimits", "ladder_app",
           "sittings_of"]

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
_LOG = logging.getLogger(__name__)
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


_LIMITS = SiteLimits()


class _Id(Convertor[int]):
    """An id in a path (``/blocks/ID``): at most :data:`ID_DIGITS` digits, so that it fits the database; a longer
    one matches no page (404), where the database would fail on it."""

    regex = f"[0-9]{{1,{ID_DIGITS}}}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("id", _Id())


# -- what every answer carries ---------------------------------------------------------------------

_TEMPLATES = Templates("arena.web", "arena.rating")
"""The site's templates (``ladder_*.html``), and report.html's pieces they draw cards and tables with."""
_SCRIPT = _TEMPLATES.script("ladder.js")
"""Reloads the pages a projector shows, every few seconds (a page without it is the same page, not refreshed)."""
_SECURITY = page_headers(_SCRIPT, forms=True)
"""The security header fields of every answer."""
_STYLE = _TEMPLATES.style("base.css", "report.css", "ladder.css")
"""The report's style (cards, tables, charts) and the site's own after it."""
_REPORT_SECURITY = page_headers(_TEMPLATES.script("report.js"))
"""What the final's report.html needs: its own script."""


class _Door:
    """Turns away, before routing, a client with :attr:`per_address` requests in hand already (503: the guard
    counts connections by their address, and this counts the requests a reverse proxy brings by the address it
    forwards) and heads too long (431)."""

    def __init__(self, app: ASGIApp, head_bytes: int, per_address: int,
                 refuse: Callable[[Scope, int, str], Response]) -> None:
        self.app = app
        self.head_bytes = head_bytes
        self.per_address = per_address
        self.refuse = refuse
        self.in_hand: collections.Counter[str] = collections.Counter()
        """Requests being answered, by client address (on the serving loop: no lock)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if too_long(scope, self.head_bytes):
            await self.refuse(scope, 431, "the request is too long")(scope, receive, send)
            return
        client = client_key(scope["client"][0]) if scope.get("client") else ""
        if self.in_hand[client] >= self.per_address:
            await self.refuse(scope, 503, f"too many requests from your address at once: at most "
                                          f"{self.per_address}; it answers again once some of them end")(
                scope, receive, send)
            return
        self.in_hand[client] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_hand[client] -= 1
            if self.in_hand[client] <= 0:
                del self.in_hand[client]


def _body_limit(submission_bytes: int) -> Callable[[str], int]:
    """The largest body of a request to each path: a submission's files and its form, or a form."""
    return lambda path: submission_bytes + SUBMISSION_SLACK if path in SUBMIT_PATHS else FORM_BYTES


def _too_large(submission_bytes: int) -> Callable[[str, int], str]:
    """What a body too large is told."""
    def why(path: str, limit: int) -> str:
        if path in SUBMIT_PATHS:
            return (f"the upload is larger than a submission may be: at most {submission_bytes:,} bytes of "
                    "files (make the bot smaller: leave out data it does not need)")
        return f"the request's body is larger than the {limit:,} bytes the site reads"
    return why


# -- login attempts --------------------------------------------------------------------------------


class _Attempts:
    """Failed login attempts by client address over the last minute (the threads that answer share it).

    Only a token that admits nobody counts: a class behind one address that logs in and submits with good
    tokens is never turned away, and guessing stops after exactly :attr:`per_minute` wrong tokens, however many
    are sent at once: each address's attempts take their :meth:`turn` one after the other, so that the check,
    the token's lookup and the count are one step."""

    def __init__(self, per_minute: int, addresses: int) -> None:
        self.per_minute = per_minute
        self.addresses = addresses
        self._seen: collections.OrderedDict[str, collections.deque[float]] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._turns: dict[str, asyncio.Lock] = {}
        self._waiting: collections.Counter[str] = collections.Counter()

    @contextlib.asynccontextmanager
    async def turn(self, address: str) -> AsyncIterator[None]:
        """The attempt of ``address`` whose turn it is, alone (on the serving loop: a waiting attempt holds no
        thread); an address's lock is forgotten once nobody waits for it."""
        lock = self._turns.setdefault(address, asyncio.Lock())
        self._waiting[address] += 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[address] -= 1
            if self._waiting[address] <= 0:
                del self._waiting[address]
                self._turns.pop(address, None)

    def _recent(self, address: str, now: float) -> collections.deque[float]:
        times = self._seen.pop(address, None) or collections.deque()
        while times and times[0] <= now - 60:
            times.popleft()
        self._seen[address] = times
        while len(self._seen) > self.addresses:
            self._seen.popitem(last=False)
        return times

    def blocked(self, address: str, now: float | None = None) -> bool:
        """Whether ``address`` has given :attr:`per_minute` wrong tokens in the last minute."""
        with self._lock:
            return len(self._recent(address, time.monotonic() if now is None else now)) >= self.per_minute

    def failed(self, address: str, now: float | None = None) -> None:
        """Counts a wrong token given from ``address``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._recent(address, now).append(now)

    def wait_s(self, address: str, now: float | None = None) -> int:
        """Seconds before ``address`` may try again."""
        now = time.monotonic() if now is None else now
        times = self._seen.get(address)
        return max(1, math.ceil(times[0] + 60 - now)) if times else 1


# -- what templates and JSON are made of -----------------------------------------------------------


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


def _href(*parts: object) -> str:
    """A path of the site from its parts, each quoted (an entrant's name may hold spaces, ``#`` or ``+``)."""
    return "/" + "/".join(urllib.parse.quote(str(part), safe="") for part in parts)


_HELPERS: dict[str, object] = {"face": _face, "trump": _trump, "when": _when, "number": _number, "href": _href}
"""What every template may call."""


def _plain(value: object) -> object:
    """A query's answer as JSON takes it: dataclasses as objects, times in ISO 8601, no infinite numbers."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _json(data: object, status: int = 200) -> JSONResponse:
    return JSONResponse(_plain(data), status)


def _is_api(scope: Scope) -> bool:
    path: str = scope["path"]
    return path.startswith("/api/")


def _sees_all(login: Login | None, name: str) -> bool:
    """The login sees all of entrant ``name``'s checks (their detail, hand and stderr): theirs, or the
    organiser's."""
    return login is not None and (login.organiser or (login.entrant or "").casefold() == name.casefold())


def _owns(login: Login, label: str) -> bool:
    """The logged-in entrant's version is ``label`` (``entrant#number``), or the login is the organiser's."""
    return login.organiser or (login.entrant is not None and
                               label.rpartition("#")[0].casefold() == login.entrant.casefold())


@dataclasses.dataclass(frozen=True)
class _Submitted:
    """What came of an upload: the status to answer, the refusal (empty for none), the version made."""

    status: int
    problem: str
    version: str = ""
    state: str = ""


@dataclasses.dataclass(frozen=True)
class _Refusal:
    """A request refused: its status and the sentence that says why."""

    status: int
    why: str


# -- the application -------------------------------------------------------------------------------


class _Site:
    """The site's answers: each reads the database in one transaction, in a thread of :attr:`makers`."""

    def __init__(self, ladder: Ladder, limits: SiteLimits, makers: concurrent.futures.Executor,
                 unpackers: concurrent.futures.Executor, sittings: Sittings) -> None:
        self.ladder = ladder
        self.limits = limits
        self.makers = makers
        self.unpackers = unpackers
        """Threads of their own for uploads, which take seconds where a page takes milliseconds."""
        self.sittings = sittings
        self.attempts = _Attempts(limits.logins_per_minute, limits.addresses)

    # -- plumbing ------------------------------------------------------------------------------

    async def _off_loop(self, work: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.get_running_loop().run_in_executor(self.makers, functools.partial(work, *args))

    @contextlib.contextmanager
    def _session(self) -> Iterator[Session]:
        with self.ladder.session() as session:
            yield session

    async def _read(self, request: Request, make: Callable[[Session, Login | None], Response]) -> Response:
        """``make``'s answer, from the database as it is now and the request's login."""
        cookie = request.cookies.get(COOKIE, "")

        def work() -> Response:
            with self._session() as session:
                return make(session, login_of(session, cookie) if cookie else None)

        return await self._off_loop(work)

    def _page(self, session: Session, login: Login | None, template: str, title: str, status: int = 200,
              refresh: int = 0, **context: Any) -> HTMLResponse:
        frame = {"name": self.ladder.settings.name, "title": title, "login": login,
                 "state": queries.ladder_view(session, self.ladder.folder), "refresh": refresh}
        text = _TEMPLATES.render(template, site=frame, style=_STYLE, script=_SCRIPT, **_HELPERS, **context)
        return HTMLResponse(text, status)

    def _message(self, session: Session | None, login: Login | None, status: int, why: str,
                 title: str = "") -> HTMLResponse:
        """A page that says one thing."""
        heading = title or {400: "Refused", 401: "Not logged in", 403: "Not allowed", 404: "Not found",
                            405: "Not allowed", 413: "Too large", 429: "Too many attempts", 431: "Too long"}.get(
            status, "The site cannot answer")
        frame: dict[str, object] = {"name": self.ladder.settings.name, "title": heading, "login": login,
                                    "state": None, "refresh": 0}
        if session is not None:
            frame["state"] = queries.ladder_view(session, self.ladder.folder)
        text = _TEMPLATES.render("ladder_message.html", site=frame, style=_STYLE, script=_SCRIPT, why=why,
                                 status=status, **_HELPERS)
        return HTMLResponse(text, status)

    def refuse(self, scope: Scope, status: int, why: str) -> Response:
        """The answer to a request refused before it reached a page: JSON under /api/, a page elsewhere."""
        if _is_api(scope):
            return JSONResponse({"error": why}, status)
        return self._message(None, None, status, why)

    async def refused(self, request: Request, exc: Exception) -> Response:
        """Starlette's refusals (404, 405, 400 for a form it cannot parse) in the site's words."""
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else ""
        why = {404: f"there is no page at {request.url.path}", 405: f"{request.url.path} does not take "
               f"{request.method} requests"}.get(status, str(detail) or "the request cannot be read")
        return self.refuse(request.scope, status, why)

    async def failed(self, request: Request, exc: Exception) -> Response:
        if not isinstance(exc, ClientDisconnect):  # a body ended by its deadline, or by its client: nothing failed
            _LOG.error("the ladder's site failed on %s", request.url.path, exc_info=exc)
        return secure(self.refuse(request.scope, 500, "the site failed to make this answer; the ladder plays on"),
                      _SECURITY)

    async def _posted(self, request: Request) -> tuple[Login | None, FormData, _Refusal | None]:
        """A browser's POST: its login and form, refused (403) without a login or from another site's page before
        its body is read (an anonymous client is answered at once), then without the login's CSRF token."""
        login = await self._login(request)
        early = _anonymous(request, login)
        if early is not None:
            return login, FormData(), early
        form = await read_form(request)
        return login, form, self._csrf(request, login, form)

    async def _login(self, request: Request) -> Login | None:
        cookie = request.cookies.get(COOKIE, "")
        if not cookie:
            return None

        def work() -> Login | None:
            with self._session() as session:
                return login_of(session, cookie)

        return await self._off_loop(work)

    @staticmethod
    def _csrf(request: Request, login: Login | None, form: FormData) -> _Refusal | None:
        """Refuses a form without a login, sent by another site's page, or without the login's CSRF token."""
        early = _anonymous(request, login)
        if early is not None:
            return early
        assert login is not None
        sent = form.get("csrf")
        if not csrf_ok(login.csrf, sent):
            return _Refusal(403, "this form is out of date or did not come from this site (its CSRF token does "
                                 "not match your login): open the page again and send it from there")
        return None

    async def _say(self, request: Request, refusal: _Refusal) -> Response:
        login = await self._login(request)

        def work() -> Response:
            with self._session() as session:
                return self._message(session, login, refusal.status, refusal.why)

        return await self._off_loop(work)

    # -- the leaderboard -----------------------------------------------------------------------

    def _board(self, session: Session) -> queries.Leaderboard:
        return queries.leaderboard(session, self.ladder.settings.matchmaking.placement_blocks)

    async def leaderboard(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            return self._page(session, login, "ladder_board.html", "Leaderboard", refresh=REFRESH_S["board"],
                              board=self._board(session))

        return await self._read(request, make)

    async def leaderboard_json(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            board = self._board(session)
            return _json([*board.ranked, *board.placement])

        return await self._read(request, make)

    # -- an entrant ----------------------------------------------------------------------------

    def _entrant_chart(self, view: queries.EntrantView) -> Markup | None:
        series = [s for s in view.ratings if s.marks]
        if not series:
            return None
        longest = max(len(s.marks) for s in series)
        lines = [Series(s.version, [m.ordinal for m in s.marks] + [math.nan] * (longest - len(s.marks)),
                        color(index), dash(index)) for index, s in enumerate(series)]
        # The chart escapes every label it draws (a version's label); the rest is its own numbers and colours.
        return Markup(line_chart(lines, list(range(1, longest + 1)), "rated blocks played",
                                 "ordinal (mu − 3 sigma)", f"The rating of {view.name}'s versions after each block"))

    def _entrant_page(self, session: Session, login: Login | None, name: str, bot_token: str = "") -> Response:
        """An entrant's page; ``bot_token``: the bot token just made, shown to its entrant this once."""
        view = queries.entrant(session, self.ladder.folder, name, private=_sees_all(login, name),
                               placement_blocks=self.ladder.settings.matchmaking.placement_blocks)
        if isinstance(view, queries.Missing):
            return self._message(session, login, 404, view.why)
        legend = [(s.version, color(i)) for i, s in enumerate(r for r in view.ratings if r.marks)]
        own = login is not None and login.entrant is not None and login.entrant.casefold() == view.name.casefold()
        return self._page(session, login, "ladder_entrant.html", view.display, entrant=view,
                          chart=self._entrant_chart(view), legend=legend, own=own, bot_token=bot_token)

    async def entrant(self, request: Request) -> Response:
        name = request.path_params["name"]
        return await self._read(request, lambda session, login: self._entrant_page(session, login, name))

    async def bot_token(self, request: Request) -> Response:
        """A new bot token for the logged-in entrant (their bot's old one stops working), shown on their page once."""
        login, _, refusal = await self._posted(request)
        if refusal is None and (login is None or login.entrant is None):
            refusal = _Refusal(403, "only an entrant has a bot token: log in with your own token")
        if refusal is not None:
            return await self._say(request, refusal)
        assert login is not None and login.entrant is not None
        name = login.entrant

        def work() -> Response:
            token = self.ladder.bot_token(name)
            with self._session() as session:
                return self._entrant_page(session, login, name, token)

        return await self._off_loop(work)

    async def entrant_json(self, request: Request) -> Response:
        name = request.path_params["name"]

        def make(session: Session, login: Login | None) -> Response:
            view = queries.entrant(session, self.ladder.folder, name, private=_sees_all(login, name),
                                   placement_blocks=self.ladder.settings.matchmaking.placement_blocks)
            return _json({"error": view.why}, 404) if isinstance(view, queries.Missing) else _json(view)

        return await self._read(request, make)

    # -- blocks and games ----------------------------------------------------------------------

    async def block(self, request: Request) -> Response:
        block_id = request.path_params["block_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = queries.block(session, self.ladder.folder, block_id)
            if isinstance(view, queries.Missing):
                return self._message(session, login, 404, view.why)
            return self._page(session, login, "ladder_block.html", f"Block {block_id}", block=view)

        return await self._read(request, make)

    async def block_json(self, request: Request) -> Response:
        block_id = request.path_params["block_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = queries.block(session, self.ladder.folder, block_id)
            return _json({"error": view.why}, 404) if isinstance(view, queries.Missing) else _json(view)

        return await self._read(request, make)

    async def game(self, request: Request) -> Response:
        block_id, game_id = request.path_params["block_id"], request.path_params["game_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = queries.game(session, self.ladder.folder, block_id, game_id)
            if isinstance(view, queries.Missing):
                return self._message(session, login, 404, view.why)
            return self._page(session, login, "ladder_game.html", f"Game {game_id} of block {block_id}", game=view)

        return await self._read(request, make)

    async def game_json(self, request: Request) -> Response:
        block_id, game_id = request.path_params["block_id"], request.path_params["game_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = queries.game(session, self.ladder.folder, block_id, game_id)
            return _json({"error": view.why}, 404) if isinstance(view, queries.Missing) else _json(view)

        return await self._read(request, make)

    async def playing(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            return self._page(session, login, "ladder_playing.html", "Playing now", refresh=REFRESH_S["playing"],
                              playing=queries.playing(session))

        return await self._read(request, make)

    async def playing_json(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            now = queries.playing(session)
            return _json({"blocks": now.blocks, "queued": now.queued,
                          "state": queries.ladder_view(session, self.ladder.folder)})

        return await self._read(request, make)

    # -- tests ---------------------------------------------------------------------------------

    def _tests_page(self, session: Session, login: Login | None, status: int = 200, problem: str = "",
                    sent: Mapping[str, str] | None = None) -> HTMLResponse:
        offered = queries.choices(session, None if login is None or login.organiser else login.entrant)
        return self._page(session, login, "ladder_tests.html", "Tests and scrimmages", status,
                          tests=queries.tests(session), choices=offered, problem=problem, sent=sent or {},
                          settings=self.ladder.settings.tests)

    async def tests(self, request: Request) -> Response:
        return await self._read(request, self._tests_page)

    async def tests_json(self, request: Request) -> Response:
        return await self._read(request, lambda session, login: _json(queries.tests(session)))

    def _test_chart(self, detail: queries.TestDetail) -> Markup | None:
        test = detail.test
        if not detail.marks or test.lower is None or test.upper is None:
            return None
        marks = [mark for mark in detail.marks if mark.llr is not None]  # none before the blocks have a spread
        if not marks:
            return None
        xs = [mark.n for mark in marks]
        lines = [Series("LLR", [mark.llr for mark in marks if mark.llr is not None], color(0)),
                 Series("accept H1", [test.upper] * len(xs), color(2), "7 4"),
                 Series("accept H0", [test.lower] * len(xs), color(1), "7 4")]
        return Markup(line_chart(lines, xs, "blocks", "log-likelihood ratio",
                                 f"The LLR of test {test.id} after each block, between its two bounds"))

    async def test(self, request: Request) -> Response:
        test_id = request.path_params["test_id"]

        def make(session: Session, login: Login | None) -> Response:
            detail = queries.test(session, test_id)
            if isinstance(detail, queries.Missing):
                return self._message(session, login, 404, detail.why)
            return self._page(session, login, "ladder_test.html", f"Test {test_id}", detail=detail,
                              chart=self._test_chart(detail))

        return await self._read(request, make)

    async def test_json(self, request: Request) -> Response:
        test_id = request.path_params["test_id"]

        def make(session: Session, login: Login | None) -> Response:
            detail = queries.test(session, test_id)
            return _json({"error": detail.why}, 404) if isinstance(detail, queries.Missing) else _json(detail)

        return await self._read(request, make)

    async def ask_test(self, request: Request) -> Response:
        login, form, refusal = await self._posted(request)
        if refusal is not None:
            return await self._say(request, refusal)
        assert login is not None
        a, b = str(form.get("a", "")).strip(), str(form.get("b", "")).strip()

        def work() -> Response:
            problem = ""
            if not (_owns(login, a) or _owns(login, b)):
                problem = "a test you ask for compares one of your own versions with another version"
            else:
                try:
                    test = self.ladder.ask_test(login.entrant or "organiser", a, b, organiser=login.organiser)
                except ArenaError as err:
                    problem = str(err)
                else:
                    return RedirectResponse(_href("tests", test.id), 303)
            with self._session() as session:
                return self._tests_page(session, login, 400, problem, {"a": a, "b": b})

        return await self._off_loop(work)

    async def ask_scrimmage(self, request: Request) -> Response:
        login, form, refusal = await self._posted(request)
        if refusal is not None:
            return await self._say(request, refusal)
        assert login is not None
        version = str(form.get("version", "")).strip()
        opponents = [str(form.get(f"opponent{i}", "")).strip() for i in (1, 2, 3)]
        blocks_text = str(form.get("blocks", "")).strip()
        sent = {"version": version, "blocks": blocks_text, **{f"opponent{i}": o for i, o in enumerate(opponents, 1)}}

        def work() -> Response:
            problem = ""
            if not _owns(login, version):
                problem = f"{version or 'the version'} is not yours: a scrimmage plays one of your own versions"
            elif not blocks_text.isdigit():
                problem = f"the number of blocks must be a whole number, not {blocks_text!r}"
            else:
                try:
                    test = self.ladder.ask_scrimmage(login.entrant or "organiser", version, opponents,
                                                     _whole(blocks_text, "the number of blocks"),
                                                     organiser=login.organiser)
                except ArenaError as err:
                    problem = str(err)
                else:
                    return RedirectResponse(_href("tests", test.id), 303)
            with self._session() as session:
                return self._tests_page(session, login, 400, problem, sent)

        return await self._off_loop(work)

    # -- logging in and out --------------------------------------------------------------------

    def _address(self, request: Request) -> str:
        return client_key(request.client.host) if request.client is not None else ""

    def _too_many(self, request: Request) -> _Refusal | None:
        address = self._address(request)
        if not self.attempts.blocked(address):
            return None
        return _Refusal(429, f"too many login attempts from your address in the last minute (at most "
                             f"{self.limits.logins_per_minute}): try again in {self.attempts.wait_s(address)} seconds")

    async def login_form(self, request: Request) -> Response:
        return await self._read(request, lambda session, login: self._page(
            session, login, "ladder_login.html", "Log in", problem=""))

    async def _by_token(self, request: Request, find: Callable[[Session], _T | None]) -> _T | _Refusal | None:
        """What ``find`` makes of the token a request gives (``None``: it admits nobody, and counts against the
        client's address), or 429 once the address has given too many wrong tokens: the check, the lookup and
        the count are one step (:meth:`_Attempts.turn`), so that tokens sent at once cannot pass the limit."""
        address = self._address(request)
        async with self.attempts.turn(address):
            too_many = self._too_many(request)
            if too_many is not None:
                return too_many

            def work() -> _T | None:
                with self._session() as session:
                    found = find(session)
                if found is None:
                    self.attempts.failed(address)
                return found

            return await self._off_loop(work)

    async def login(self, request: Request) -> Response:
        too_many = self._too_many(request)  # at once, before the body: the step that counts is below
        if too_many is not None:
            return await self._say(request, too_many)
        if not same_origin(request):
            return await self._say(request, _Refusal(403, "this login form did not come from this site"))
        form = await read_form(request)
        token = str(form.get("token", ""))
        done = await self._by_token(request, lambda session: log_in(session, token, csrf_token()))
        if isinstance(done, _Refusal):
            return await self._say(request, done)
        if done is None:
            def refused() -> Response:
                with self._session() as session:
                    return self._page(session, None, "ladder_login.html", "Log in", 401,
                                      problem="that token admits nobody on this ladder: check it, or ask the "
                                              "organiser for a new one")

            return await self._off_loop(refused)
        cookie, login = done
        target = "/organiser" if login.organiser else _href("entrants", login.entrant or "")
        answer = RedirectResponse(target, 303)
        answer.set_cookie(COOKIE, cookie, max_age=LOGIN_HOURS * 3600, path="/", secure=_secure(request),
                          httponly=True, samesite="strict")
        return answer

    async def logout(self, request: Request) -> Response:
        _, _, refusal = await self._posted(request)
        if refusal is not None:
            return await self._say(request, refusal)
        cookie = request.cookies.get(COOKIE, "")

        def work() -> Response:
            with self._session() as session:
                log_out(session, cookie)
            answer = RedirectResponse("/", 303)
            answer.delete_cookie(COOKIE, path="/", secure=_secure(request), httponly=True, samesite="strict")
            return answer

        return await self._off_loop(work)

    # -- submissions ---------------------------------------------------------------------------

    def _submit_page(self, session: Session, login: Login, status: int = 200, problem: str = "") -> HTMLResponse:
        view = queries.entrant(session, self.ladder.folder, login.entrant or "", recent_blocks=0)
        versions = view.versions[:10] if isinstance(view, queries.EntrantView) else ()
        return self._page(session, login, "ladder_submit.html", "Submit a version", status, problem=problem,
                          versions=versions, limits=self.ladder.settings.submissions, archives=ARCHIVES,
                          profile=self.ladder.settings.rules.profile_name)  # the profile its check plays

    async def submit_form(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            if login is None:
                return RedirectResponse("/login", 303)
            if login.entrant is None:
                return self._message(session, login, 403, "the organiser submits no bot: log in with an entrant's "
                                                          "token to submit one")
            return self._submit_page(session, login)

        return await self._read(request, make)

    async def submit(self, request: Request) -> Response:
        login = await self._login(request)
        if login is None or login.entrant is None:
            return await self._say(request, _Refusal(403, "log in with your entrant's token to submit a version"))
        early = _anonymous(request, login)
        if early is not None:
            return await self._say(request, early)
        entrant = login.entrant
        async with read_form(request, files=1, fields=4) as form:
            refusal = self._csrf(request, login, form)
            if refusal is not None:
                return await self._say(request, refusal)
            upload = form.get("file")
            if not isinstance(upload, UploadFile) or not upload.filename:
                problem, status = "choose your bot's file (a .py file, or an archive of its folder) first", 400
            else:
                filename, data = upload.filename, await upload.read()
                done = await self._unpacked(entrant, filename, data)
                if not done.problem:
                    return RedirectResponse(_href("entrants", entrant), 303)
                problem, status = done.problem, done.status

        def work() -> Response:
            with self._session() as session:
                return self._submit_page(session, login, status, problem)

        return await self._off_loop(work)

    async def _unpacked(self, entrant: str, filename: str, data: bytes) -> _Submitted:
        """Submits an upload of ``entrant``'s in a thread of :attr:`unpackers` (429 when they have submitted as
        often as an hour allows, or have an upload being unpacked)."""
        def work() -> _Submitted:
            try:
                version = self.ladder.submit(entrant, filename, data)
            except ArenaError as err:
                return _Submitted(429 if isinstance(err, TooOften) else 400, str(err))
            return _Submitted(200, "", version.label, str(version.state))

        return await asyncio.get_running_loop().run_in_executor(self.unpackers, work)

    async def submit_api(self, request: Request) -> Response:
        too_many = self._too_many(request)
        if too_many is not None:
            return JSONResponse({"error": too_many.why}, too_many.status)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return JSONResponse({"error": "give your token: Authorization: Bearer TOKEN"}, 401)
        who = await self._by_token(request, lambda session: _holder(who_has(session, token)))
        if isinstance(who, _Refusal):
            return JSONResponse({"error": who.why}, who.status)
        if who is None or who.entrant is None:
            return JSONResponse({"error": "that token admits no entrant of this ladder"}, 401)
        entrant = who.entrant
        async with read_form(request, files=1, fields=2) as form:
            upload = form.get("file")
            if not isinstance(upload, UploadFile) or not upload.filename:
                return JSONResponse({"error": "send the bot as the multipart field 'file', with its file name"}, 400)
            filename, data = upload.filename, await upload.read()
        done = await self._unpacked(entrant, filename, data)
        if done.problem:
            return JSONResponse({"error": done.problem}, done.status)
        return JSONResponse({"version": done.version, "state": done.state, "page": _href("entrants", entrant)})

    # -- the organiser -------------------------------------------------------------------------

    def _organiser_page(self, session: Session, login: Login, status: int = 200, problem: str = "") -> HTMLResponse:
        return self._page(session, login, "ladder_organiser.html", "Organiser", status, problem=problem,
                          view=queries.organiser(session))

    async def organiser(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            if login is None or not login.organiser:
                return self._message(session, login, 403, "this page is the organiser's: log in with the "
                                                          "organiser's token")
            return self._organiser_page(session, login)

        return await self._read(request, make)

    async def organiser_json(self, request: Request) -> Response:
        too_many = self._too_many(request)
        if too_many is not None:
            return JSONResponse({"error": too_many.why}, too_many.status)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        cookie = request.cookies.get(COOKIE, "")
        bearer = scheme.lower() == "bearer" and bool(token.strip())
        who = await self._by_token(request, lambda session: _holder(who_has(session, token))) if bearer else None
        if isinstance(who, _Refusal):
            return JSONResponse({"error": who.why}, who.status)

        def make() -> Response:
            with self._session() as session:
                if bearer:
                    allowed = who is not None and who.organiser
                else:
                    login = login_of(session, cookie) if cookie else None
                    allowed = login is not None and login.organiser
                if not allowed:
                    return JSONResponse({"error": "this is the organiser's: give the organiser's token"}, 403)
                view = queries.organiser(session)
                return _json({"state": queries.ladder_view(session, self.ladder.folder), "entrants": view.entrants,
                              "running": view.running, "blocks": view.blocks,
                              "active_versions": view.active_versions, "pairs": view.pairs,
                              "pair_lines": view.pair_lines})

        return await self._off_loop(make)

    async def organiser_act(self, request: Request) -> Response:
        action = request.path_params["action"]
        login, form, refusal = await self._posted(request)
        if refusal is None and (login is None or not login.organiser):
            refusal = _Refusal(403, "only the organiser may do this")
        if refusal is not None:
            return await self._say(request, refusal)
        assert login is not None
        acts: dict[str, Callable[[], None]] = {
            "pause": lambda: self.ladder.pause(True), "resume": lambda: self.ladder.pause(False),
            "freeze": lambda: self.ladder.freeze(True), "unfreeze": lambda: self.ladder.freeze(False),
            "revoke": lambda: self.ladder.revoke(str(form.get("name", "")).strip()),
            "final": lambda: self.ladder.start_final(_whole(form.get("deal_sets"), "the number of deal sets")),
            "stop-test": lambda: self.ladder.stop_test(_whole(form.get("test"), "the test's number")),
        }
        act = acts.get(action)
        if act is None:
            return await self._say(request, _Refusal(404, f"the organiser has no action {action!r}"))

        def work() -> Response:
            try:
                act()
            except ArenaError as err:
                with self._session() as session:
                    return self._organiser_page(session, login, 400, str(err))
            return RedirectResponse("/organiser", 303)

        return await self._off_loop(work)

    async def final(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            state = queries.ladder_view(session, self.ladder.folder)
            if not state.final_report:
                return self._message(session, login, 404, "the final has not been played yet: its report is here "
                                                          "once it is over")
            text = queries.public_text(queries.final_report(self.ladder.folder).read_text(encoding="utf-8"),
                                       self.ladder.folder)
            return secure(HTMLResponse(text), _REPORT_SECURITY)

        return await self._read(request, make)

    # -- sittings ------------------------------------------------------------------------------

    def _play_page(self, session: Session, login: Login | None, status: int = 200, problem: str = "",
                   sent: Mapping[str, str] | None = None, mine: int | None = None) -> HTMLResponse:
        return self._page(session, login, "ladder_play.html", "Play against a version", status,
                          samples=tuple(OPPONENTS), versions=queries.opponents(session), problem=problem,
                          sent=sent or {}, mine=mine, idle_minutes=f"{self.limits.sitting_idle_s / 60:g}")

    def _mine(self, login: Login | None) -> int | None:
        """The number of the login's sitting in play, if any (read on the loop, where sittings change)."""
        held = [h for h in self.sittings.in_play() if login is not None and h.owner == login.entrant]
        return held[0].number if held else None

    async def play_form(self, request: Request) -> Response:
        login = await self._login(request)
        mine = self._mine(login)

        def work() -> Response:
            with self._session() as session:
                return self._play_page(session, login, mine=mine)

        return await self._off_loop(work)

    async def play_json(self, request: Request) -> Response:
        return await self._read(request, lambda session, login: _json(
            {"samples": list(OPPONENTS), "versions": queries.opponents(session)}))

    def _opponents(self, chosen: list[str]) -> list[str | dict[str, Any]]:
        """The three opponents chosen: a sample bot by its name, a version as its ``[[bots]]`` table; a
        :class:`ConfigError` for anything else."""
        tables: list[str | dict[str, Any]] = []
        with self._session() as session:
            for label in chosen:
                if label in OPPONENTS:
                    tables.append(label)
                    continue
                if not label:
                    raise ConfigError("choose an opponent for each of the three seats")
                version = version_labelled(session, label)
                if version.state != VersionState.ACTIVE or version.kind == REMOTE:
                    raise ConfigError(f"{label} cannot be played against: only active versions that the ladder "
                                      "starts itself can")
                tables.append(bot_table(version, self.ladder.folder))
        return tables

    async def start_sitting(self, request: Request) -> Response:
        login, form, refusal = await self._posted(request)
        if refusal is None and login is not None and login.entrant is None:
            refusal = _Refusal(403, "the organiser plays no sitting: log in with an entrant's token to play")
        if refusal is not None:
            return await self._say(request, refusal)
        assert login is not None and login.entrant is not None
        chosen = [str(form.get(f"opponent{n}", "")).strip() for n in (1, 2, 3)]
        seed_text = str(form.get("seed", "")).strip()
        sent = {"seed": seed_text, **{f"opponent{n}": name for n, name in enumerate(chosen, start=1)}}
        try:
            seed = _whole(seed_text, "the seed") if seed_text else secrets.randbelow(SEEDS)
            dealt = self._deal(login.entrant, seed, await self._off_loop(self._opponents, chosen))
        except ArenaError as err:
            dealt = _Refusal(400, str(err))
        if isinstance(dealt, Held):
            return RedirectResponse(f"/play/{dealt.number}/", 303)
        mine = self._mine(login)

        def work() -> Response:
            with self._session() as session:
                return self._play_page(session, login, dealt.status, dealt.why, sent, mine)

        return await self._off_loop(work)

    def _deal(self, entrant: str, seed: int, opponents: list[str | dict[str, Any]]) -> Held | _Refusal:
        """Starts a sitting of ``entrant``'s, or says why not. It runs on the loop and awaits nothing, so that no
        other request starts one in between."""
        busy = self.sittings.refusal(entrant)
        if busy is not None:
            return _Refusal(409, busy)
        number, folder = self.sittings.next_folder()
        settings = self.ladder.settings
        sitting = Sitting(settings.rules, seed, opponents, folder, deadline_ms=settings.deadline_ms,
                          sandbox=settings.sandbox, records=f"kept by the ladder, in its folder sittings/{folder.name}")
        return self.sittings.hold(number, entrant, sitting, seat_app(sitting))

    async def seat(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A sitting's seat, for its entrant alone: the requests of its page, handed to its own application."""
        request = Request(scope, receive)
        number = scope["path_params"]["number"]
        held = self.sittings.get(number)
        login = await self._login(request)
        if held is None:
            answer = await self._say(request, _Refusal(404, f"there is no sitting {number} now: it is over, or was "
                                                            "never started (start one at /play)"))
        elif login is None or login.entrant != held.owner:
            answer = await self._say(request, _Refusal(403, "this sitting is another entrant's, or you are not "
                                                            "logged in: log in, and start your own at /play"))
        else:
            if not (request.url.path.endswith("/table") and "since" in request.query_params):
                held.touch()  # the page's own wait for a change is not its entrant asking
            await held.page(scope, receive, send)
            return
        await answer(scope, receive, send)

    async def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok")


def _whole(value: object, what: str) -> int:
    text = str(value or "").strip()
    if not text.isdigit():
        raise ConfigError(f"{what} must be a whole number, not {text!r}")
    if len(text.lstrip("0")) > ID_DIGITS:
        raise ConfigError(f"{what} must be a whole number of at most {ID_DIGITS} digits")
    return int(text)


@dataclasses.dataclass(frozen=True)
class _Holder:
    """Whom a token admits: an entrant (by name) or the organiser."""

    entrant: str | None
    organiser: bool


def _holder(who: Entrant | Organiser | None) -> _Holder | None:
    """:func:`~arena.ladder.accounts.who_has`'s answer as plain data (``None``: the token admits nobody)."""
    if who is None:
        return None
    return _Holder(who.name, False) if isinstance(who, Entrant) else _Holder(None, True)


def _anonymous(request: Request, login: Login | None) -> _Refusal | None:
    """Refuses, from its head alone, a form without a login or sent by another site's page."""
    if login is None:
        return _Refusal(403, "log in first: this form is for logged-in entrants (log in at /login)")
    if not same_origin(request):
        return _Refusal(403, "this form did not come from a page of this site")
    return None


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def sittings_of(ladder: Ladder, limits: SiteLimits = _LIMITS) -> Sittings:
    """The sittings a site of ``ladder`` holds, none yet, their records in ``sittings/`` of its folder."""
    return Sittings(ladder.folder / "sittings", at_once=limits.sittings, idle_s=limits.sitting_idle_s)


def ladder_app(ladder: Ladder, limits: SiteLimits = _LIMITS,
               makers: concurrent.futures.Executor | None = None, sittings: Sittings | None = None,
               unpackers: concurrent.futures.Executor | None = None) -> Starlette:
    """The site of ``ladder`` as an ASGI application; its answers are made by ``makers`` (threads that read the
    database: by default a pool of :attr:`SiteLimits.threads` of its own) and its uploads unpacked by
    ``unpackers`` (by default :attr:`SiteLimits.uploads` threads of its own), never on the event loop; the
    sittings it starts are held in ``sittings`` (by default, its own)."""
    site = _Site(ladder, limits, makers or concurrent.futures.ThreadPoolExecutor(limits.threads,
                                                                                thread_name_prefix="ladder-site"),
                 unpackers or concurrent.futures.ThreadPoolExecutor(limits.uploads, thread_name_prefix="ladder-upload"),
                 sittings or sittings_of(ladder, limits))
    routes = [
        Route("/", site.leaderboard), Route("/api/leaderboard", site.leaderboard_json),
        Route("/entrants/{name}", site.entrant), Route("/api/entrants/{name}", site.entrant_json),
        Route("/bot-token", site.bot_token, methods=["POST"]),
        Route("/blocks/{block_id:id}", site.block), Route("/api/blocks/{block_id:id}", site.block_json),
        Route("/games/{block_id:id}/{game_id}", site.game),
        Route("/api/games/{block_id:id}/{game_id}", site.game_json),
        Route("/playing", site.playing), Route("/api/playing", site.playing_json),
        Route("/tests", site.tests), Route("/tests", site.ask_test, methods=["POST"]),
        Route("/api/tests", site.tests_json), Route("/scrimmages", site.ask_scrimmage, methods=["POST"]),
        Route("/tests/{test_id:id}", site.test), Route("/api/tests/{test_id:id}", site.test_json),
        Route("/login", site.login_form), Route("/login", site.login, methods=["POST"]),
        Route("/logout", site.logout, methods=["POST"]),
        Route("/submit", site.submit_form), Route("/submit", site.submit, methods=["POST"]),
        Route("/api/submit", site.submit_api, methods=["POST"]),
        Route("/organiser", site.organiser), Route("/api/organiser", site.organiser_json),
        Route("/organiser/{action}", site.organiser_act, methods=["POST"]),
        Route("/play", site.play_form), Route("/play", site.start_sitting, methods=["POST"]),
        Route("/api/play", site.play_json),
        Mount("/play/{number:id}", app=site.seat),
        Route("/final", site.final), Route("/healthz", site.healthz),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        HTTPException: site.refused, Exception: site.failed}
    submission_bytes = ladder.settings.submissions.max_bytes
    return Starlette(routes=routes, exception_handlers=handlers, middleware=[
        Middleware(Secured, fields=_SECURITY),
        Middleware(_Door, head_bytes=limits.head_bytes, per_address=limits.per_address, refuse=site.refuse),
        Middleware(Bodies, limit=_body_limit(submission_bytes), too_large=_too_large(submission_bytes),
                   refuse=site.refuse)])


# -- serving it ------------------------------------------------------------------------------------


class LadderSite:
    """The site of ``ladder``, served with uvicorn on the running event loop, within :class:`SiteLimits`.

    ``address = await site.start(host, port)`` (port 0: a free one) listens and returns ``host:port`` as bound;
    ``await site.stop()`` stops listening, ends the connections still open and stops every sitting.
    """

    def __init__(self, ladder: Ladder, limits: SiteLimits = _LIMITS) -> None:
        self.ladder = ladder
        self.limits = limits
        self.sittings = sittings_of(ladder, limits)
        self._server: QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._listener: socket.socket | None = None
        self._pools: tuple[concurrent.futures.ThreadPoolExecutor, ...] = ()

    async def start(self, host: str = "127.0.0.1", port: int = 8080, *, tls: tuple[Path, Path] | None = None,
                    proxy: str = "") -> str:
        """Serves from now on, until :meth:`stop`; a :class:`ConfigError` when the address cannot be listened on.

        ``tls``: (certificate chain, private key) as PEM files, and the site speaks HTTPS only. ``proxy``: the
        address of a reverse proxy in front of the site (``127.0.0.1``); the ``X-Forwarded-For`` and
        ``X-Forwarded-Proto`` it sends are then believed (from it alone), so that logins and requests at once are
        limited per client, and the cookie is Secure when the proxy speaks HTTPS; the proxy's own connections
        are not counted by address."""
        if self._server is not None:
            raise ConfigError("the ladder's site is serving already")
        for path in tls or ():
            if not path.is_file():
                raise ConfigError(f"the ladder's site: there is no TLS file {path}")
        listener = listen("the ladder's site", host, port)
        makers = concurrent.futures.ThreadPoolExecutor(self.limits.threads, thread_name_prefix="ladder-site")
        unpackers = concurrent.futures.ThreadPoolExecutor(self.limits.uploads, thread_name_prefix="ladder-upload")
        pools = (makers, unpackers)
        protocol = guard("_SiteGuard", self.limits, _SECURITY, "the ladder's site has too many connections open: it "
                         "answers again in a few seconds\n", self.limits.body_s, form_s=self.limits.form_s,
                         long_bodies=SUBMIT_PATHS, exempt=frozenset(a.strip() for a in proxy.split(",") if a.strip()))
        # uvicorn logs nothing (a failing answer is logged by the site) and leaves the program's logging alone.
        app = ladder_app(self.ladder, self.limits, makers, self.sittings, unpackers)
        config = uvicorn.Config(app, http=protocol, ws="none",
                                lifespan="off", log_config=None, log_level=logging.CRITICAL, access_log=False,
                                proxy_headers=bool(proxy), forwarded_allow_ips=proxy or None,
                                ssl_certfile=tls[0] if tls else None, ssl_keyfile=tls[1] if tls else None,
                                server_header=False, date_header=False,
                                h11_max_incomplete_event_size=self.limits.head_bytes)
        try:
            config.load()
        except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
            for pool in pools:
                pool.shutdown(wait=False)
            listener.close()
            raise ConfigError(f"the ladder's site cannot use its TLS files: {err}") from None
        server = QuietServer(config)
        task = asyncio.ensure_future(serve_until_stopped(server, listener))
        listening = asyncio.ensure_future(server.listening.wait())
        await asyncio.wait((task, listening), return_when=asyncio.FIRST_COMPLETED)
        if not listening.done():
            listening.cancel()
            for pool in pools:
                pool.shutdown(wait=False)
            listener.close()
            error = task.exception() if not task.cancelled() else None
            raise ConfigError(f"the ladder's site could not start on {host}:{port}: {error}")
        self._server, self._task, self._listener, self._pools = server, task, listener, pools
        bound_host, bound_port = listener.getsockname()[:2]
        return f"[{bound_host}]:{bound_port}" if ":" in bound_host else f"{bound_host}:{bound_port}"

    async def stop(self) -> None:
        """Stops listening, ends the connections still open (an answer being made is dropped) and stops every
        sitting, with the bots it launched."""
        server, task = self._server, self._task
        if server is None or task is None:
            return
        await stop_server(server, task)
        await self.sittings.stop()
        for pool in self._pools:
            pool.shutdown(wait=False, cancel_futures=True)
        if self._listener is not None:
            self._listener.close()
        self._server = self._task = self._listener = None
        self._pools = ()

