"""The live page's server: the board of a results folder as a Starlette application, served by uvicorn.

The application (:func:`live_app`) answers ``/`` the page, ``/board`` the board alone (what the page's
script fetches) and ``/live.json`` the same as data, every answer with the page's security header fields
(:data:`SECURITY`: no script but the page's own, nothing fetched but the board), and
the spectators' pages ``/watch`` and ``/watch/GAME`` (:mod:`arena.web.watch`);
:class:`LivePage` serves it with uvicorn on an event loop of a thread of its own, so that the arena's own
loop never waits for a browser, loopback only unless asked otherwise. What clients may cost the arena is
bounded (:class:`PageLimits`): a connection is a socket on that loop, never a thread, so connections
that send nothing hold no thread; at most 256 are open at once, and one more is refused at once; a
request must arrive whole within seconds, however slowly it trickles, and its answer be taken within
seconds; two threads make the answers. uvicorn keeps none of these bounds by itself: the guard of
:mod:`arena.web.guard`, its HTTP protocol with a connection count and one deadline per connection, keeps them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import socket
import threading
import time
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.rating.leaderboard import SCRIPT, Board, render_board, render_page
from arena.web.guard import TEXT, Heads, PageLimits, fields, guard, listen, server_config
from arena.web.security import page_headers
from arena.web.watch import Watch, WatchOptions, watch_routes

__all__ = ["PATHS", "SECURITY", "SPECTATORS", "LivePage", "PageLimits", "live_app"]

_TEXT = TEXT
SECURITY = page_headers(SCRIPT, fetches=True)
"""The security header fields of every answer of the page, after the common ones."""
PATHS = ("/", "/board", "/live.json")
"""What the page answers; anything else is 404."""
_LIMITS = PageLimits()
SPECTATORS = WatchOptions()
"""The spectators' pages of a live page unless told otherwise: the public view, a card every 2 seconds."""


def _fields(kind: str, length: int) -> list[tuple[bytes, bytes]]:
    """The header fields of every answer of the page, in the order and spelling it has always sent them."""
    return fields(kind, length, SECURITY)


class _Answer(Response):
    """An answer of the application, with the header fields of :func:`_fields` (Starlette's are lower case)."""

    def init_headers(self, headers: object = None) -> None:
        self.raw_headers = _fields(self.media_type or _TEXT, len(self.body))


def _answer(board: Board, path: str) -> tuple[int, str, bytes]:
    """The status, type and body of the answer for one of :data:`PATHS`; made by a thread of the page's."""
    try:
        snapshot = board.snapshot()
        if path == "/live.json":
            kind, text = "application/json", json.dumps(snapshot.to_dict())
        else:
            kind = "text/html; charset=utf-8"
            text = render_page(snapshot) if path == "/" else render_board(snapshot)
    except Exception as err:  # the page says it failed; the arena plays on
        return 500, _TEXT, f"the board cannot be made: {err}\n".encode()
    return 200, kind, text.encode("utf-8")


class _Door:
    """Turns away, before routing, the requests the page does not serve: methods but GET and HEAD (501), once
    the head's length is checked (:class:`~arena.web.guard.Heads`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in ("GET", "HEAD"):
            await _Answer(b"the live page answers GET and HEAD only\n", 501)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _refused(scope: Scope, status: int, why: str) -> Response:
    return _Answer(f"{why}\n".encode(), status)


def live_app(board: Board, makers: concurrent.futures.Executor, head_bytes: int = PageLimits.head_bytes,
             watch: Watch | None = None) -> Starlette:
    """The live page of ``board`` as an ASGI application; its answers are made by ``makers`` (each reads the
    results folder), never on the event loop. With ``watch``, the spectators' pages too (:mod:`arena.web.watch`)."""

    async def answer(request: Request) -> Response:
        path = request.scope["path"]
        code, kind, data = await asyncio.get_running_loop().run_in_executor(makers, _answer, board, path)
        return _Answer(data, code, media_type=kind)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _Answer(b"not found: the live page is at /\n", 404)

    spectators = list(watch_routes(watch, makers)) if watch is not None else []
    return Starlette(routes=[*(Route(path, answer) for path in PATHS), *spectators],
                     exception_handlers={404: not_found},
                     middleware=[Middleware(Heads, head_bytes=head_bytes, refuse=_refused), Middleware(_Door)])


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, saying when it listens."""

    def __init__(self, config: uvicorn.Config, listening: threading.Event) -> None:
        super().__init__(config)
        self.listening = listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


class _Server:
    """The page's application served by uvicorn on an event loop of its own thread, within ``limits``."""

    def __init__(self, board: Board, listener: socket.socket, limits: PageLimits, watch: Watch | None) -> None:
        self._listener = listener
        self._makers = concurrent.futures.ThreadPoolExecutor(limits.threads, thread_name_prefix="live-page-answer")
        protocol = guard("_PageGuard", limits, SECURITY, "the live page has too many connections open: it answers "
                         "again in a few seconds\n")
        # Its own lines are not the arena's: uvicorn logs nothing (a failing answer is a 500 the page makes),
        # and leaves the process's logging as it found it.
        config = server_config(live_app(board, self._makers, limits.head_bytes, watch), protocol, limits.head_bytes)
        self._ready = threading.Event()
        self._uvicorn = _Uvicorn(config, self._ready)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="live-page", daemon=True)

    def start(self) -> None:
        """Serves from now on, until :meth:`close`."""
        self._thread.start()
        self._ready.wait()

    def close(self) -> None:
        """Stops listening, ends the connections still open, and the threads."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop)
            self._thread.join(5)
        self._makers.shutdown(wait=True, cancel_futures=True)
        self._listener.close()

    def _stop(self) -> None:
        """On the page's loop: uvicorn ends without waiting for the connections, which end here."""
        self._uvicorn.should_exit = self._uvicorn.force_exit = True
        for connection in list(self._uvicorn.server_state.connections):
            if isinstance(connection, H11Protocol):
                connection.transport.abort()

    def _run(self) -> None:
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._ready.set()
            self._loop.close()

    async def _serve(self) -> None:
        try:
            await self._uvicorn.serve(sockets=[self._listener])
        finally:  # answers still being made end with the page
            tasks = list(self._uvicorn.server_state.tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


class LivePage:
    """The live page of a results folder, served on a thread of its own within :class:`PageLimits`."""

    def __init__(self, folder: Path, *, roster: Path | None = None, title: str = "", host: str = "127.0.0.1",
                 port: int = 0, limits: PageLimits = _LIMITS, watch: WatchOptions | None = SPECTATORS) -> None:
        self.board = Board(folder, roster, title)
        self.watch = Watch(folder, watch) if watch is not None else None
        """The spectators' pages (``/watch``), unless ``watch`` is ``None``."""
        self.host = host
        self.port = port
        self.limits = limits
        self._server: _Server | None = None

    def start(self) -> str:
        """Starts serving and returns the page's address; a :class:`ConfigError` when the address cannot be
        listened on."""
        listener = listen("the live page", self.host, self.port)
        self.port = int(listener.getsockname()[1])
        self._server = _Server(self.board, listener, self.limits, self.watch)
        self._server.start()
        return self.url

    @property
    def url(self) -> str:
        """Where the page is, as this machine reaches it."""
        host = self.host.strip("[]")
        if host in ("", "0.0.0.0"):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        return f"http://[{host}]:{self.port}/" if ":" in host else f"http://{host}:{self.port}/"

    @property
    def everywhere(self) -> bool:
        """True when the page is open to other machines (not loopback only)."""
        return self.host.strip("[]") not in ("127.0.0.1", "::1", "localhost")

    def close(self, linger: float = 0.0) -> None:
        """Stops serving, after ``linger`` seconds (so that browsers fetch the final board)."""
        if self._server is None:
            return
        if linger > 0:
            time.sleep(linger)
        self._server.close()
        self._server = None
