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

What a client may cost the ladder is bounded (:class:`SiteLimits`): the connections, the time a request and its
body take to arrive (the guard of :mod:`arena.web.guard`), a body's size before it is parsed (its
Content-Length, then a count as it streams: a submission's limit and 64 KiB of form around it, 64 KiB for any
other form), the login attempts of one address (:attr:`SiteLimits.logins_per_minute`, then 429). The database is
read at every request, in threads of the site's own (:attr:`~arena.web.guard.PageLimits.threads`), never on the
loop that plays the blocks. Every text an entrant chose is escaped (the templates autoescape), and every answer
carries the Content-Security-Policy (no script but the site's own, by its hash; nothing fetched),
``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin`` and ``X-Frame-Options: DENY``.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import dataclasses
import functools
import importlib.resources
import logging
import math
import secrets
import socket
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import uvicorn
from sqlalchemy.orm import Session
from starlette.applications import Starlette
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.core.cards import Card, Suit
from arena.errors import ArenaError, CardError, ConfigError
from arena.event.check import OPPONENTS
from arena.ladder import queries
from arena.ladder.accounts import LOGIN_HOURS, Login, log_in, log_out, login_of, who_has
from arena.ladder.blocks import bot_table
from arena.ladder.control import REMOTE, Ladder, version_labelled
from arena.ladder.db import Entrant, VersionState
from arena.ladder.intake import ARCHIVES
from arena.rating.pages import Markup, policy, render, script, style
from arena.rating.plots import Series, color, dash, line_chart
from arena.web.guard import (
    HEADER_LINES,
    PageLimits,
    QuietServer,
    guard,
    head_size,
    listen,
    serve_until_stopped,
    stop_server,
)
from arena.web.seat import seat_app
from arena.web.sitting import Held, Sitting, Sittings

__all__ = ["COOKIE", "FORM_BYTES", "SEEDS", "SUBMISSION_SLACK", "LadderSite", "SiteLimits", "ladder_app",
           "sittings_of"]

COOKIE = "ladder_login"
"""The login cookie's name."""
SUBMISSION_SLACK = 64 << 10
"""Bytes of a submission's request beyond its file's limit: the multipart framing and the form's other fields."""
FORM_BYTES = 64 << 10
"""The largest body of any other request."""
SUBMIT_PATHS = ("/submit", "/api/submit")
SEEDS = 1 << 31
"""A sitting without a seed of its entrant's gets one drawn below this."""
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
    body_s: float = 300.0
    """Seconds, from its first byte, for a request and its body to arrive whole (an upload on a slow link)."""
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


# -- what every answer carries ---------------------------------------------------------------------

_SCRIPT = script("ladder.js")
"""Reloads the pages a projector shows, every few seconds (a page without it is the same page, not refreshed)."""
_POLICY = policy(_SCRIPT, "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'")
_SECURITY = (("Content-Security-Policy", _POLICY), ("X-Content-Type-Options", "nosniff"),
             ("Referrer-Policy", "same-origin"), ("X-Frame-Options", "DENY"))
"""The security header fields of every answer."""
_STYLE = Markup(style("report.css") + importlib.resources.files("arena.rating").joinpath(
    "templates/ladder.css").read_text(encoding="utf-8"))
"""The report's style (cards, tables, charts) and the site's own after it."""
_REPORT_POLICY = policy(script("report.js"), "frame-ancestors 'none'")
"""What the final's report.html needs: its own script."""


class _Headers:
    """Adds the security header fields to every answer, and ends the connection after it (one request per
    connection: the guard's deadlines are per connection)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sent(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in (*_SECURITY, ("Cache-Control", "no-store"), ("Connection", "close")):
                    if name.lower().encode() not in present:
                        headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sent)


class _TooLarge(Exception):
    """A request's body grew past its limit as it streamed."""


class _Door:
    """Turns away, before routing, heads too long (431) and bodies too large (413): by their Content-Length
    before any of the body is read, else by counting as it streams. A body a little too large is read to its end
    first (at most its limit again), so that a client that sends it all before reading sees the answer."""

    def __init__(self, app: ASGIApp, head_bytes: int, submission_bytes: int,
                 refuse: Callable[[Scope, int, str], Response]) -> None:
        self.app = app
        self.head_bytes = head_bytes
        self.submission_bytes = submission_bytes
        self.refuse = refuse

    def limit(self, path: str) -> int:
        return self.submission_bytes + SUBMISSION_SLACK if path in SUBMIT_PATHS else FORM_BYTES

    def too_large(self, path: str, limit: int) -> str:
        if path in SUBMIT_PATHS:
            return (f"the upload is larger than a submission may be: at most {self.submission_bytes:,} bytes of "
                    "files (make the bot smaller: leave out data it does not need)")
        return f"the request's body is larger than the {limit:,} bytes the site reads"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if head_size(scope) > self.head_bytes or len(scope["headers"]) >= HEADER_LINES:
            await self.refuse(scope, 431, "the request is too long")(scope, receive, send)
            return
        path, limit = scope["path"], self.limit(scope["path"])
        length = _length(scope)
        if length is not None and length > limit:
            if length <= 2 * limit:
                await _drain(receive, length)
            await self.refuse(scope, 413, self.too_large(path, limit))(scope, receive, send)
            return
        seen = 0
        started = whole = False

        async def counted() -> Message:
            nonlocal seen, whole
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                whole = not message.get("more_body", False)
                if seen > limit:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if started:
                raise
            if not whole:  # once the body has ended, receive() would wait for the client to go
                await _drain(receive, limit)
            await self.refuse(scope, 413, self.too_large(path, limit))(scope, receive, send)


def _length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _drain(receive: Receive, budget: int) -> None:
    """Reads and drops what is left of a request's body, at most ``budget`` bytes."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


# -- login attempts --------------------------------------------------------------------------------


class _Attempts:
    """Failed login attempts by client address over the last minute (the threads that answer share it).

    Only a token that admits nobody counts: a class behind one address that logs in and submits with good
    tokens is never turned away, and guessing stops after :attr:`per_minute` wrong tokens."""

    def __init__(self, per_minute: int, addresses: int) -> None:
        self.per_minute = per_minute
        self.addresses = addresses
        self._seen: collections.OrderedDict[str, collections.deque[float]] = collections.OrderedDict()
        self._lock = threading.Lock()

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
                 sittings: Sittings) -> None:
        self.ladder = ladder
        self.limits = limits
        self.makers = makers
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
        text = render(template, site=frame, style=_STYLE, script=_SCRIPT, **_HELPERS, **context)
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
        text = render("ladder_message.html", site=frame, style=_STYLE, script=_SCRIPT, why=why, status=status,
                      **_HELPERS)
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
        _LOG.error("the ladder's site failed on %s", request.url.path, exc_info=exc)
        response = self.refuse(request.scope, 500, "the site failed to make this answer; the ladder plays on")
        for name, value in _SECURITY:
            response.headers[name] = value
        return response

    async def _form(self, request: Request) -> FormData:
        """A small form (no file) as it came."""
        return await request.form(max_files=0, max_fields=20, max_part_size=FORM_BYTES)

    async def _posted(self, request: Request) -> tuple[Login | None, FormData, _Refusal | None]:
        """A browser's POST: its login and form, refused (403) without a login or without the login's CSRF."""
        form = await self._form(request)
        login = await self._login(request)
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
        """Refuses a form without a login, without the login's CSRF token, or sent by another site's page."""
        if login is None:
            return _Refusal(403, "log in first: this form is for logged-in entrants (log in at /login)")
        sent = form.get("csrf")
        if not isinstance(sent, str) or not login.csrf_ok(sent):
            return _Refusal(403, "this form is out of date or did not come from this site (its CSRF token does "
                                 "not match your login): open the page again and send it from there")
        if not _same_origin(request):
            return _Refusal(403, "this form did not come from a page of this site")
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

    async def entrant(self, request: Request) -> Response:
        name = request.path_params["name"]

        def make(session: Session, login: Login | None) -> Response:
            view = queries.entrant(session, self.ladder.folder, name,
                                   placement_blocks=self.ladder.settings.matchmaking.placement_blocks)
            if isinstance(view, queries.Missing):
                return self._message(session, login, 404, view.why)
            legend = [(s.version, color(i)) for i, s in enumerate(r for r in view.ratings if r.marks)]
            return self._page(session, login, "ladder_entrant.html", view.display, entrant=view,
                              chart=self._entrant_chart(view), legend=legend)

        return await self._read(request, make)

    async def entrant_json(self, request: Request) -> Response:
        name = request.path_params["name"]

        def make(session: Session, login: Login | None) -> Response:
            view = queries.entrant(session, self.ladder.folder, name,
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
        xs = [mark.n for mark in detail.marks]
        lines = [Series("LLR", [mark.llr for mark in detail.marks], color(0)),
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
                    test = self.ladder.ask_test(login.entrant or "organiser", a, b)
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
                                                     int(blocks_text))
                except ArenaError as err:
                    problem = str(err)
                else:
                    return RedirectResponse(_href("tests", test.id), 303)
            with self._session() as session:
                return self._tests_page(session, login, 400, problem, sent)

        return await self._off_loop(work)

    # -- logging in and out --------------------------------------------------------------------

    def _address(self, request: Request) -> str:
        return request.client.host if request.client is not None else ""

    def _too_many(self, request: Request) -> _Refusal | None:
        address = self._address(request)
        if not self.attempts.blocked(address):
            return None
        return _Refusal(429, f"too many login attempts from your address in the last minute (at most "
                             f"{self.limits.logins_per_minute}): try again in {self.attempts.wait_s(address)} seconds")

    async def login_form(self, request: Request) -> Response:
        return await self._read(request, lambda session, login: self._page(
            session, login, "ladder_login.html", "Log in", problem=""))

    async def login(self, request: Request) -> Response:
        too_many = self._too_many(request)
        if too_many is not None:
            return await self._say(request, too_many)
        if not _same_origin(request):
            return await self._say(request, _Refusal(403, "this login form did not come from this site"))
        form = await self._form(request)
        token = str(form.get("token", ""))

        def work() -> Response:
            with self._session() as session:
                done = log_in(session, token)
                if done is None:
                    self.attempts.failed(self._address(request))
                    return self._page(session, None, "ladder_login.html", "Log in", 401,
                                      problem="that token admits nobody on this ladder: check it, or ask the "
                                              "organiser for a new one")
                cookie, login = done
            target = "/organiser" if login.organiser else _href("entrants", login.entrant or "")
            answer = RedirectResponse(target, 303)
            answer.set_cookie(COOKIE, cookie, max_age=LOGIN_HOURS * 3600, path="/", secure=_secure(request),
                              httponly=True, samesite="strict")
            return answer

        return await self._off_loop(work)

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
                          versions=versions, limits=self.ladder.settings.submissions, archives=ARCHIVES)

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
        entrant = login.entrant
        async with request.form(max_files=1, max_fields=4, max_part_size=FORM_BYTES) as form:
            refusal = self._csrf(request, login, form)
            if refusal is not None:
                return await self._say(request, refusal)
            upload = form.get("file")
            if not isinstance(upload, UploadFile) or not upload.filename:
                problem, status = "choose your bot's file (a .py file, or an archive of its folder) first", 400
            else:
                filename, data = upload.filename, await upload.read()
                done = await self._off_loop(self._submitted, entrant, filename, data)
                if not done.problem:
                    return RedirectResponse(_href("entrants", entrant), 303)
                problem, status = done.problem, done.status

        def work() -> Response:
            with self._session() as session:
                return self._submit_page(session, login, status, problem)

        return await self._off_loop(work)

    def _submitted(self, entrant: str, filename: str, data: bytes) -> _Submitted:
        """Submits an upload of ``entrant``'s (429 when they have submitted as often as an hour allows)."""
        try:
            version = self.ladder.submit(entrant, filename, data)
        except ArenaError as err:
            with self._session() as session:
                many = queries.recent_submissions(session, entrant) >= self.ladder.settings.submissions.per_hour
            return _Submitted(429 if many else 400, str(err))
        return _Submitted(200, "", version.label, str(version.state))

    async def submit_api(self, request: Request) -> Response:
        too_many = self._too_many(request)
        if too_many is not None:
            return JSONResponse({"error": too_many.why}, too_many.status)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return JSONResponse({"error": "give your token: Authorization: Bearer TOKEN"}, 401)

        def holder() -> str | None:
            with self._session() as session:
                who = who_has(session, token)
                return who.name if isinstance(who, Entrant) else None

        entrant = await self._off_loop(holder)
        if entrant is None:
            self.attempts.failed(self._address(request))
            return JSONResponse({"error": "that token admits no entrant of this ladder"}, 401)
        async with request.form(max_files=1, max_fields=2, max_part_size=FORM_BYTES) as form:
            upload = form.get("file")
            if not isinstance(upload, UploadFile) or not upload.filename:
                return JSONResponse({"error": "send the bot as the multipart field 'file', with its file name"}, 400)
            filename, data = upload.filename, await upload.read()
        done = await self._off_loop(self._submitted, entrant, filename, data)
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

        def make() -> Response:
            with self._session() as session:
                if scheme.lower() == "bearer" and token.strip():
                    who = who_has(session, token)
                    allowed = who is not None and not isinstance(who, Entrant)
                    if who is None:
                        self.attempts.failed(self._address(request))
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
            text = queries.final_report(self.ladder.folder).read_text(encoding="utf-8")
            return HTMLResponse(text, headers={"Content-Security-Policy": _REPORT_POLICY})

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
    return int(text)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _same_origin(request: Request) -> bool:
    """A form sent from a page of this site, as far as the browser says: its Origin (when given) is this host."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    return urllib.parse.urlsplit(origin).netloc == request.headers.get("host", "")


def sittings_of(ladder: Ladder, limits: SiteLimits = _LIMITS) -> Sittings:
    """The sittings a site of ``ladder`` holds, none yet, their records in ``sittings/`` of its folder."""
    return Sittings(ladder.folder / "sittings", at_once=limits.sittings, idle_s=limits.sitting_idle_s)


def ladder_app(ladder: Ladder, limits: SiteLimits = _LIMITS,
               makers: concurrent.futures.Executor | None = None, sittings: Sittings | None = None) -> Starlette:
    """The site of ``ladder`` as an ASGI application; its answers are made by ``makers`` (threads that read the
    database: by default a pool of :attr:`SiteLimits.threads` of its own), never on the event loop; the sittings
    it starts are held in ``sittings`` (by default, its own)."""
    site = _Site(ladder, limits, makers or concurrent.futures.ThreadPoolExecutor(limits.threads,
                                                                                thread_name_prefix="ladder-site"),
                 sittings or sittings_of(ladder, limits))
    routes = [
        Route("/", site.leaderboard), Route("/api/leaderboard", site.leaderboard_json),
        Route("/entrants/{name}", site.entrant), Route("/api/entrants/{name}", site.entrant_json),
        Route("/blocks/{block_id:int}", site.block), Route("/api/blocks/{block_id:int}", site.block_json),
        Route("/games/{block_id:int}/{game_id}", site.game),
        Route("/api/games/{block_id:int}/{game_id}", site.game_json),
        Route("/playing", site.playing), Route("/api/playing", site.playing_json),
        Route("/tests", site.tests), Route("/tests", site.ask_test, methods=["POST"]),
        Route("/api/tests", site.tests_json), Route("/scrimmages", site.ask_scrimmage, methods=["POST"]),
        Route("/tests/{test_id:int}", site.test), Route("/api/tests/{test_id:int}", site.test_json),
        Route("/login", site.login_form), Route("/login", site.login, methods=["POST"]),
        Route("/logout", site.logout, methods=["POST"]),
        Route("/submit", site.submit_form), Route("/submit", site.submit, methods=["POST"]),
        Route("/api/submit", site.submit_api, methods=["POST"]),
        Route("/organiser", site.organiser), Route("/api/organiser", site.organiser_json),
        Route("/organiser/{action}", site.organiser_act, methods=["POST"]),
        Route("/play", site.play_form), Route("/play", site.start_sitting, methods=["POST"]),
        Route("/api/play", site.play_json),
        Mount("/play/{number:int}", app=site.seat),
        Route("/final", site.final), Route("/healthz", site.healthz),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        HTTPException: site.refused, Exception: site.failed}
    return Starlette(routes=routes, exception_handlers=handlers, middleware=[
        Middleware(_Headers),
        Middleware(_Door, head_bytes=limits.head_bytes, submission_bytes=ladder.settings.submissions.max_bytes,
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
        self._makers: concurrent.futures.ThreadPoolExecutor | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 8080, *, tls: tuple[Path, Path] | None = None,
                    proxy: str = "") -> str:
        """Serves from now on, until :meth:`stop`; a :class:`ConfigError` when the address cannot be listened on.

        ``tls``: (certificate chain, private key) as PEM files, and the site speaks HTTPS only. ``proxy``: the
        address of a reverse proxy in front of the site (``127.0.0.1``); the ``X-Forwarded-For`` and
        ``X-Forwarded-Proto`` it sends are then believed (from it alone), so that logins are limited per client
        and the cookie is Secure when the proxy speaks HTTPS."""
        if self._server is not None:
            raise ConfigError("the ladder's site is serving already")
        for path in tls or ():
            if not path.is_file():
                raise ConfigError(f"the ladder's site: there is no TLS file {path}")
        listener = listen("the ladder's site", host, port)
        makers = concurrent.futures.ThreadPoolExecutor(self.limits.threads, thread_name_prefix="ladder-site")
        protocol = guard("_SiteGuard", self.limits, _SECURITY, "the ladder's site has too many connections open: it "
                         "answers again in a few seconds\n", self.limits.body_s)
        # uvicorn logs nothing (a failing answer is logged by the site) and leaves the program's logging alone.
        config = uvicorn.Config(ladder_app(self.ladder, self.limits, makers, self.sittings), http=protocol, ws="none",
                                lifespan="off", log_config=None, log_level=logging.CRITICAL, access_log=False,
                                proxy_headers=bool(proxy), forwarded_allow_ips=proxy or None,
                                ssl_certfile=tls[0] if tls else None, ssl_keyfile=tls[1] if tls else None,
                                server_header=False, date_header=False,
                                h11_max_incomplete_event_size=self.limits.head_bytes)
        try:
            config.load()
        except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
            makers.shutdown(wait=False)
            listener.close()
            raise ConfigError(f"the ladder's site cannot use its TLS files: {err}") from None
        server = QuietServer(config)
        task = asyncio.ensure_future(serve_until_stopped(server, listener))
        listening = asyncio.ensure_future(server.listening.wait())
        await asyncio.wait((task, listening), return_when=asyncio.FIRST_COMPLETED)
        if not listening.done():
            listening.cancel()
            makers.shutdown(wait=False)
            listener.close()
            error = task.exception() if not task.cancelled() else None
            raise ConfigError(f"the ladder's site could not start on {host}:{port}: {error}")
        self._server, self._task, self._listener, self._makers = server, task, listener, makers
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
        if self._makers is not None:
            self._makers.shutdown(wait=False, cancel_futures=True)
        if self._listener is not None:
            self._listener.close()
        self._server = self._task = self._listener = self._makers = None

