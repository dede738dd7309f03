"""The ladder's site assembled and served: :func:`ladder_app` wires the pages, the JSON API, the forms and the
logins (:mod:`~arena.web.ladder.pages`, :mod:`~arena.web.ladder.api`, :mod:`~arena.web.ladder.forms`,
:mod:`~arena.web.ladder.auth`) to their paths behind the site's doors, and :class:`LadderSite` serves it with
uvicorn on the event loop of the program that runs the ladder."""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.errors import ConfigError
from arena.ladder.control import Ladder
from arena.web.guard import Heads, QuietServer, client_key, guard, listen, server_config, start_server, stop_server
from arena.web.ladder.api import Api
from arena.web.ladder.auth import Auth
from arena.web.ladder.forms import Forms
from arena.web.ladder.pages import Pages
from arena.web.ladder.site import ID_DIGITS, SECURITY, SUBMISSION_SLACK, SUBMIT_PATHS, Site, SiteLimits
from arena.web.security import FORM_BYTES, Bodies, Secured
from arena.web.sitting import Sittings

__all__ = ["LadderSite", "ladder_app", "sittings_of"]

_LIMITS = SiteLimits()


class _Id(Convertor[int]):
    """An id in a path (``/blocks/ID``): at most :data:`~arena.web.ladder.site.ID_DIGITS` digits, so that it fits
    the database; a longer one matches no page (404), where the database would fail on it."""

    regex = f"[0-9]{{1,{ID_DIGITS}}}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("id", _Id())


class _Door:
    """Turns away, before routing, a client with :attr:`per_address` requests in hand already (503: the guard
    counts connections by their address, and this counts the requests a reverse proxy brings by the address it
    forwards)."""

    def __init__(self, app: ASGIApp, per_address: int, refuse: Callable[[Scope, int, str], Response]) -> None:
        self.app = app
        self.per_address = per_address
        self.refuse = refuse
        self.in_hand: collections.Counter[str] = collections.Counter()
        """Requests being answered, by client address (on the serving loop: no lock)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
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
    site = Site(ladder, limits, makers or concurrent.futures.ThreadPoolExecutor(limits.threads,
                                                                               thread_name_prefix="ladder-site"),
                unpackers or concurrent.futures.ThreadPoolExecutor(limits.uploads, thread_name_prefix="ladder-upload"),
                sittings or sittings_of(ladder, limits))
    auth = Auth(site)
    pages = Pages(site)
    api = Api(site, auth, pages)
    forms = Forms(site, auth, pages)
    routes = [
        Route("/", pages.leaderboard), Route("/api/leaderboard", api.leaderboard),
        Route("/entrants/{name}", pages.entrant), Route("/api/entrants/{name}", api.entrant),
        Route("/bot-token", forms.bot_token, methods=["POST"]),
        Route("/blocks/{block_id:id}", pages.block), Route("/api/blocks/{block_id:id}", api.block),
        Route("/games/{block_id:id}/{game_id}", pages.game), Route("/api/games/{block_id:id}/{game_id}", api.game),
        Route("/playing", pages.playing), Route("/api/playing", api.playing),
        Route("/tests", pages.tests), Route("/tests", forms.ask_test, methods=["POST"]),
        Route("/api/tests", api.tests), Route("/scrimmages", forms.ask_scrimmage, methods=["POST"]),
        Route("/tests/{test_id:id}", pages.test), Route("/api/tests/{test_id:id}", api.test),
        Route("/login", pages.login_form), Route("/login", auth.login, methods=["POST"]),
        Route("/logout", auth.logout, methods=["POST"]),
        Route("/submit", pages.submit_form), Route("/submit", forms.submit, methods=["POST"]),
        Route("/api/submit", api.submit, methods=["POST"]),
        Route("/organiser", pages.organiser), Route("/api/organiser", api.organiser),
        Route("/organiser/{action}", forms.organiser_act, methods=["POST"]),
        Route("/play", pages.play_form), Route("/play", forms.start_sitting, methods=["POST"]),
        Route("/api/play", api.play),
        Mount("/play/{number:id}", app=forms.seat),
        Route("/final", pages.final), Route("/healthz", pages.healthz),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        HTTPException: site.refused, Exception: site.failed}
    submission_bytes = ladder.settings.submissions.max_bytes
    return Starlette(routes=routes, exception_handlers=handlers, middleware=[
        Middleware(Secured, fields=SECURITY),
        Middleware(Heads, head_bytes=limits.head_bytes, refuse=site.refuse),
        Middleware(_Door, per_address=limits.per_address, refuse=site.refuse),
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
        protocol = guard("_SiteGuard", self.limits, SECURITY, "the ladder's site has too many connections open: it "
                         "answers again in a few seconds\n", self.limits.body_s, form_s=self.limits.form_s,
                         long_bodies=SUBMIT_PATHS, exempt=frozenset(a.strip() for a in proxy.split(",") if a.strip()))
        # uvicorn logs nothing (a failing answer is logged by the site) and leaves the program's logging alone.
        app = ladder_app(self.ladder, self.limits, makers, self.sittings, unpackers)
        config = server_config(app, protocol, self.limits.head_bytes, proxy_headers=bool(proxy),
                               forwarded_allow_ips=proxy or None, ssl_certfile=tls[0] if tls else None,
                               ssl_keyfile=tls[1] if tls else None)
        try:
            config.load()
        except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
            for pool in pools:
                pool.shutdown(wait=False)
            listener.close()
            raise ConfigError(f"the ladder's site cannot use its TLS files: {err}") from None
        try:
            server, task = await start_server(config, listener, "the ladder's site", f"{host}:{port}")
        except ConfigError:
            for pool in pools:
                pool.shutdown(wait=False)
            raise
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
