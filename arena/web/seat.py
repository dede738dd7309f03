"""The page of a seat in the browser (``callbreak-arena play --web``): a Starlette application
(:func:`seat_app`) that :class:`SeatSite` serves with uvicorn on the event loop the sitting plays on.

=========================  =================================================================================
``GET /``                  the page: the seats and their calls, the trick on the table and the last one won, the
                           hand by suit in a grid, the scores by round, what happened (every trick's cards)
``GET /table?since=N``     the table alone (what the page's script fetches), once it has changed since version
                           ``N`` or after a few seconds; at once without ``since``
``POST /call``             ``call=N``: the person's call
``POST /play``             ``card=QS``: the person's card (clicked, or typed as ``QS``, ``10s`` or ``Q♠``)
``POST /next``             the next game of the deal set, once a game is over
``GET /healthz``           ``ok``
=========================  =================================================================================

The table is the person's alone. :class:`SeatSite` serves it behind a secret of its own (a capability, as notebook
servers do): the address it prints ends in ``?token=...``; that request sets a cookie holding the secret
(``HttpOnly``, ``SameSite=Strict``, named after the port) and is sent on to the page, and every other request
without the cookie, or with another secret, is refused (403) in one sentence, whatever address it came to
(loopback too: every user of a machine reaches its loopback). Every form carries the sitting's own token
(``csrf``), and a POST that names an ``Origin`` must name one of the addresses the page is served at (never
compared with the request's own ``Host``, which a page of another site makes its own by DNS rebinding); a
refused answer is explained in the rules' words and asked again, nothing lost. An answer made by the
page's script (``X-Seat-Script: 1``) is the table alone; a plain form's is a redirect to the page. The forms
and the script name these paths relative to the page, so that a site may mount the application under a prefix
(the ladder's site serves a sitting at ``/play/N/``; Starlette's ``root_path`` says where). A request
the page cannot read (a missing field, a body too large, a stale token) is answered with one sentence. Every
answer carries the Content-Security-Policy (no script but the page's own, by its hash; nothing fetched but
this server), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin`` and
``X-Frame-Options: DENY``; the templates autoescape every value.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import secrets
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from markupsafe import Markup
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.core.cards import Card
from arena.core.scoring import format_score
from arena.errors import CardError
from arena.players.base import DecisionKind
from arena.players.web import SeatState, TrickLine
from arena.web.faces import STYLE, SUITS, TEMPLATES, face
from arena.web.guard import Heads, PageLimits, QuietServer, guard, listen, server_config, start_server, stop_server
from arena.web.security import (
    Bodies,
    Secured,
    csrf_ok,
    csrf_token,
    page_headers,
    read_form,
    same_origin,
    secure,
    whole_number,
)
from arena.web.sitting import Sitting

__all__ = ["BODY_BYTES", "NOT_YOURS", "POLL_S", "SeatSite", "card_text", "render_table", "seat_app"]

BODY_BYTES = 4096
"""The largest body of a POST the page reads (its forms hold a token and a few characters)."""
POLL_S = 15.0
"""The longest a ``GET /table?since=N`` waits for a change."""
_SCRIPT = TEMPLATES.script("seat.js")
_SECURITY = page_headers(_SCRIPT, fetches=True, forms=True)
_LIMITS = PageLimits(connections=64, threads=1)
NOT_YOURS = ("This table is someone's own: open it at the address that callbreak-arena play --web printed, the one "
             "that ends in ?token=...\n")
"""The answer to a request without the table's secret."""


def _trick(state: SeatState, trick: TrickLine) -> dict[str, Any]:
    """A trick won as the page draws it: its number and round, who won it, and its cards by seat."""
    return {"number": trick.number, "round": trick.round_number, "winner": state.who(trick.winner),
            "cards": [{"who": state.who(seat), **face(card), "win": seat == trick.winner}
                      for seat, card in trick.cards]}


def _context(sitting: Sitting, token: str) -> dict[str, Any]:
    state: SeatState = sitting.seat.state
    rules = state.rules
    names = state.names or ("", "", "", "")
    hand = [{"suit": suit.noun.lower(), "symbol": suit.symbol,
             "cards": [{**face(card), "legal": card in state.legal} for card in state.hand if card.suit is suit]}
            for suit in SUITS]
    order = sorted(range(4), key=lambda s: (state.places[s], s)) if state.over else []
    seats = [{"seat": s, "name": state.who(s), "dealer": s == state.dealer and bool(state.round_number),
              "call": state.calls[s], "won": state.tricks_won[s], "total": format_score(rules, state.totals[s]),
              "you": s == state.seat} for s in range(4)]
    return {
        "token": token, "state": state, "version": state.version, "seats": seats, "hand": hand,
        "trick": [{"who": state.who(seat), **face(card), "win": False} for seat, card in state.trick],
        "last": _trick(state, state.last) if state.last is not None else None,
        "log": [{"text": line.text, "trick": _trick(state, line.trick) if line.trick is not None else None}
                for line in state.log],
        "asked": state.asked.value if state.asked is not None else "",
        "calling": state.asked is DecisionKind.CALL, "playing": state.asked is DecisionKind.PLAY,
        "trump": {"symbol": state.trump.symbol, "noun": state.trump.noun} if state.round_number else None,
        "rounds": [{"number": r.number, "cells": [
            {"call": r.calls[s], "won": r.tricks_won[s], "score": format_score(rules, r.scores[s]),
             "total": format_score(rules, r.totals[s])} for s in range(4)]} for r in state.rounds],
        "names": [state.who(s) for s in range(4)] if state.names else list(names),
        "standings": [{"place": state.places[s], "name": state.who(s), "total": format_score(rules, state.totals[s])}
                      for s in order],
        "game": sitting.number, "games": len(sitting.games), "done": sitting.done, "folder": str(sitting.folder),
        "records": sitting.records,
        "rules": rules.profile_name, "round_count": rules.rounds,
    }


def render_table(sitting: Sitting, token: str) -> str:
    """The table as the page shows it (what ``GET /table`` answers)."""
    return TEMPLATES.render("seat_table.html", **_context(sitting, token))


def _page(sitting: Sitting, token: str) -> str:
    return TEMPLATES.render("seat.html", table=Markup(render_table(sitting, token)), script=_SCRIPT, style=STYLE,
                            token=token)


class _Refused(Exception):
    """A request the page cannot take, with its status and the sentence that says why."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def _said(scope: Scope, status: int, why: str) -> Response:
    """A refusal in one sentence, as the page's script shows it."""
    return PlainTextResponse(why[:1].upper() + why[1:] + "\n", status_code=status)


def _too_large(path: str, limit: int) -> str:
    return f"the request's body is larger than the {limit:,} bytes the page reads"


def seat_app(sitting: Sitting, token: str | None = None, origins: Collection[str] | None = None,
             head_bytes: int = PageLimits.head_bytes) -> Starlette:
    """The page of ``sitting``'s seat as an ASGI application; ``token`` is what every form must carry (a fresh
    one if not given); ``origins`` the origins a form may come from (``scheme://host:port``; ``None``: the page's
    own, as the request names it, where the site that mounts the page holds its own addresses); ``head_bytes``
    the longest request head it reads."""
    secret = token or csrf_token()

    async def form(request: Request) -> FormData:
        if not same_origin(request, origins):
            raise _Refused(403, "this form comes from another site: play from the page itself")
        fields = await read_form(request)
        if not csrf_ok(secret, fields.get("csrf")):
            raise _Refused(403, "this page is out of date (the game was started again): reload it")
        return fields

    def reply(request: Request) -> Response:
        if request.headers.get("x-seat-script") == "1":
            return HTMLResponse(render_table(sitting, secret))
        return RedirectResponse(_base(request) + "/", status_code=303)

    async def guarded(request: Request, act: Callable[[Request], Awaitable[Response]]) -> Response:
        try:
            return await act(request)
        except _Refused as refused:
            return _said(request.scope, refused.status, refused.text)

    async def page(request: Request) -> Response:
        return HTMLResponse(_page(sitting, secret))

    async def table(request: Request) -> Response:
        since = request.query_params.get("since")
        if since is not None:
            version = whole_number(since, 12)
            if version is None:
                return PlainTextResponse("?since= takes the version the page shows, a whole number\n", status_code=400)
            await sitting.seat.changed(version, POLL_S)
        return HTMLResponse(render_table(sitting, secret))

    async def call(request: Request) -> Response:
        async def act(request: Request) -> Response:
            fields = await form(request)
            given = str(fields.get("call", "")).strip()
            if not given:
                raise _Refused(400, "the form has no call: give a whole number")
            if sitting.seat.state.asked is not DecisionKind.CALL:
                raise _Refused(409, "it is not your call now: the page asks you when it is")
            number = whole_number(given, 5, signed=True)
            await sitting.seat.answer(given if number is None else number)
            return reply(request)
        return await guarded(request, act)

    async def play(request: Request) -> Response:
        async def act(request: Request) -> Response:
            fields = await form(request)
            given = str(fields.get("card", "")).strip()
            if not given:
                raise _Refused(400, "the form has no card: click a card, or type one like QS")
            if sitting.seat.state.asked is not DecisionKind.PLAY:
                raise _Refused(409, "it is not your turn to play: the page asks you when it is")
            await sitting.seat.answer(card_text(given))
            return reply(request)
        return await guarded(request, act)

    async def next_game(request: Request) -> Response:
        async def act(request: Request) -> Response:
            await form(request)
            why = sitting.next_game()
            if why is not None:
                raise _Refused(409, why)
            await sitting.seat.changed(sitting.seat.state.version, 2.0)  # the next game's first view
            return reply(request)
        return await guarded(request, act)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(f"Not found: the table is at {_base(request)}/\n", status_code=404)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return PlainTextResponse("The page does not take that method here\n", status_code=405)

    async def unreadable(request: Request, exc: Exception) -> Response:
        """A form the reader refuses (400), in its words."""
        assert isinstance(exc, HTTPException)
        return _said(request.scope, exc.status_code, str(exc.detail) or "the request cannot be read")

    return Starlette(routes=[
        Route("/", page), Route("/table", table), Route("/call", call, methods=["POST"]),
        Route("/play", play, methods=["POST"]), Route("/next", next_game, methods=["POST"]),
        Route("/healthz", healthz),
    ], exception_handlers={404: not_found, 405: not_allowed, HTTPException: unreadable}, middleware=[
        Middleware(Secured, fields=_SECURITY),
        Middleware(Heads, head_bytes=head_bytes, refuse=_said),
        Middleware(Bodies, limit=lambda path: BODY_BYTES, too_large=_too_large, refuse=_said)])


def _base(request: Request) -> str:
    """The path the page is served under: empty at the root, ``/play/N`` where a site mounts it."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def card_text(given: str) -> str:
    """A card as a person types it (``QS``, ``qs``, ``10s``, ``Q♠``) in the form the rules read, or the text as
    typed (the rules then say why it is no card)."""
    try:
        return str(Card.parse(given))
    except CardError:
        return given


class _Capability:
    """Lets through the requests that carry the table's secret: in the cookie it sets, or once in the address it
    printed (``?token=``), which then sets the cookie and sends the browser on to the same page without it."""

    def __init__(self, app: ASGIApp, secret: str, cookie: str) -> None:
        self.app, self.secret, self.cookie = app, secret, cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/healthz":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token")
        if given is not None and secrets.compare_digest(given.encode(), self.secret.encode()):
            kept = urllib.parse.urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
            answer: Response = RedirectResponse(request.url.path + (f"?{kept}" if kept else ""), status_code=303)
            answer.set_cookie(self.cookie, self.secret, httponly=True, samesite="strict", path="/")
        elif given is None and secrets.compare_digest(request.cookies.get(self.cookie, "").encode(),
                                                     self.secret.encode()):
            await self.app(scope, receive, send)
            return
        else:
            answer = PlainTextResponse(NOT_YOURS, status_code=403)
        await secure(answer, _SECURITY)(scope, receive, send)


def _served_at(host: str, bound: str, port: int) -> list[str]:
    """The origins of a page listening on ``bound`` (asked for as ``host``) and ``port``: the address itself and
    the names given, loopback's names on loopback, and this machine's names and addresses when it listens on
    every address."""
    names = {host.strip("[]"), bound}
    wildcard = bound in ("0.0.0.0", "::")
    try:
        loopback = ipaddress.ip_address(bound).is_loopback
    except ValueError:
        loopback = False
    if loopback or wildcard:
        names |= {"127.0.0.1", "localhost", "::1"}
    if wildcard:
        names |= {socket.gethostname(), socket.getfqdn()}
        with contextlib.suppress(OSError):
            names |= {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    return sorted(f"http://[{name}]:{port}" if ":" in name else f"http://{name}:{port}" for name in names if name)


class SeatSite:
    """The page of a sitting, served with uvicorn on the running event loop, within :class:`PageLimits`, to whoever
    holds its secret (the ``?token=`` of the address :meth:`start` returns)."""

    def __init__(self, sitting: Sitting, limits: PageLimits = _LIMITS) -> None:
        self.sitting = sitting
        self.limits = limits
        self._server: QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._listener: socket.socket | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 8000) -> str:
        """Serves from now on, until :meth:`stop`; returns the page's address with its secret
        (``http://host:port/?token=...``)."""
        listener = listen("the seat's page", host, port, backlog=64)
        protocol = guard("_SeatGuard", self.limits, _SECURITY, "the page has too many connections open: it answers "
                         "again in a few seconds\n", form_s=30.0)
        bound_host, bound_port = listener.getsockname()[:2]
        secret = secrets.token_urlsafe(24)
        app = _Capability(seat_app(self.sitting, origins=_served_at(host, bound_host, bound_port),
                                   head_bytes=self.limits.head_bytes), secret, f"seat-{bound_port}")
        config = server_config(app, protocol, self.limits.head_bytes)
        server, task = await start_server(config, listener, "the seat's page", f"{host}:{port}")
        self._task = task
        self._server, self._listener = server, listener
        shown = "127.0.0.1" if bound_host == "0.0.0.0" else "::1" if bound_host == "::" else bound_host
        at = f"[{shown}]" if ":" in shown else shown
        return f"http://{at}:{bound_port}/?token={secret}"

    async def stop(self) -> None:
        """Stops listening and ends the connections still open."""
        server, task = self._server, self._task
        if server is None or task is None:
            return
        await stop_server(server, task)
        if self._listener is not None:
            self._listener.close()
        self._server = self._task = self._listener = None
