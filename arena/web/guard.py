"""What clients may cost the process that serves a page: uvicorn's HTTP/1.1 protocol with a connection count
and one deadline per connection, shared by the live page (:mod:`arena.web.live`), the ladder's site
(:mod:`arena.web.ladder`) and the seat in the browser (:mod:`arena.web.seat`), and the bound on a whole head
(:class:`Heads`); and the uvicorn server the last two run on the caller's event loop (:class:`QuietServer`,
:func:`start_server`, :func:`serve_until_stopped`, :func:`stop_server`).

uvicorn keeps none of these bounds by itself: its ``limit_concurrency`` counts a connection only once its
request has arrived, it gives a request no time limit, and it waits as long as a client takes to read.
:class:`Guard` keeps them (:class:`PageLimits`): a connection is a socket on the serving loop, never a thread;
one more than the limit, or than one client address's share of it (:func:`client_key`), is refused at once; a
request must arrive whole within seconds, however slowly it trickles; and its answer be taken within seconds.
What the protocol answers itself, before any request reaches the application (503, 408, 431, 400), is a whole
answer in bytes (:func:`plain`) with the header fields of the server's own answers.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import email.utils
import ipaddress
import logging
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.errors import ConfigError
from arena.transports.grpc.server import check_address

__all__ = [
    "HEADER_LINES", "TEXT", "Fields", "Guard", "Heads", "PageLimits", "QuietServer", "client_key", "fields", "guard",
    "head_size", "listen", "plain", "serve_until_stopped", "server_config", "start_server", "stop_server",
]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class PageLimits:
    """What clients may cost the arena's process: the page may be open to a whole class network."""

    connections: int = 256
    """Connections open at once; one more is answered 503 and closed at once."""
    per_address: int = 256
    """Connections open at once from one client address (:func:`client_key`); one more is answered 503 and closed
    at once."""
    head_s: float = 10.0
    """Seconds a client has to send its whole request (line and headers), however slowly it trickles."""
    answer_s: float = 10.0
    """Seconds a client has to take the whole answer."""
    head_bytes: int = 32 << 10
    """The longest request (line and headers) read; the page reads no body."""
    threads: int = 2
    """Threads that make answers (each reads the results folder); the only threads requests cost."""


_REASONS = {400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large",
            503: "Service Unavailable"}
HEADER_LINES = 100
"""The most header lines a request may have (as the standard library's server)."""
TEXT = "text/plain; charset=utf-8"

Fields = Sequence[tuple[str, str]]
"""Header fields as names and values."""


def fields(kind: str, length: int, security: Fields) -> list[tuple[bytes, bytes]]:
    """The header fields of a whole answer of ``length`` bytes of type ``kind``: the server, the date, the type
    and length, no caching, then ``security`` (the page's own), then that the connection closes."""
    written = [("Server", "callbreak-arena"), ("Date", email.utils.formatdate(usegmt=True)), ("Content-Type", kind),
               ("Content-Length", str(length)), ("Cache-Control", "no-store"), *security, ("Connection", "close")]
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in written]


def plain(code: int, text: str, security: Fields) -> bytes:
    """A whole answer in bytes, for what the protocol answers before any request reaches the application."""
    data = text.encode()
    head = [f"HTTP/1.1 {code} {_REASONS[code]}".encode()] + [name + b": " + value
                                                              for name, value in fields(TEXT, len(data), security)]
    return b"\r\n".join(head) + b"\r\n\r\n" + data


def client_key(host: str) -> str:
    """What one client's connections are counted by: its IPv4 address (an IPv4 address mapped into IPv6 is that
    address), or its IPv6 /64 network, since one machine is given a whole /64; any other text as it is."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def head_size(scope: Scope) -> int:
    """The length of a request's head (its line and fields) as a client spelled it, from its parsed ``scope``.

    uvicorn's parser bounds the head it holds incomplete, not one that arrives whole in a single read: the
    application checks the length of the whole head with this."""
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    line = len(scope["method"]) + len(scope["raw_path"]) + len(scope["query_string"]) + len(" ? HTTP/1.1\r\n")
    return line + sum(len(name) + len(value) + len(": \r\n") for name, value in headers) + len("\r\n")


class Heads:
    """Refuses, before routing, a request whose head is longer than ``head_bytes`` (:func:`head_size`) or has
    :data:`HEADER_LINES` lines or more: 431, ``refuse``'s answer. uvicorn's parser bounds the head it holds
    incomplete, not one that arrives whole in a single read: this bounds that one."""

    def __init__(self, app: ASGIApp, head_bytes: int, refuse: Callable[[Scope, int, str], ASGIApp]) -> None:
        self.app = app
        self.head_bytes = head_bytes
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (head_size(scope) > self.head_bytes or len(scope["headers"]) >= HEADER_LINES):
            await self.refuse(scope, 431, "the request is too long")(scope, receive, send)
            return
        await self.app(scope, receive, send)


class Guard(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the bounds of :attr:`limits` that uvicorn does not keep.

    One deadline per connection, never a thread: from the first byte, :attr:`PageLimits.head_s` for the
    request to arrive whole (else 408), and, where the server reads bodies, :attr:`body_s` for the body of a
    request to one of :attr:`long_bodies` and :attr:`form_s` for any other body; from the answer handed to the
    socket, :attr:`PageLimits.answer_s` for the client to take it (else the connection is dropped): uvicorn
    would wait for ever on all three. A connection beyond :attr:`PageLimits.connections`, or beyond
    :attr:`PageLimits.per_address` from its client's address, is refused as it opens, where uvicorn's own limit
    would hold it until its request came. A server makes its own with :func:`guard`.
    """

    limits: ClassVar[PageLimits] = PageLimits()
    security: ClassVar[Fields] = ()
    """The header fields of the protocol's own answers, after the common ones (:func:`fields`)."""
    crowded: ClassVar[str] = "the page has too many connections open: it answers again in a few seconds\n"
    """What a connection beyond the limit is told."""
    body_s: ClassVar[float] = 0.0
    """Seconds, from the first byte, for a request to one of :attr:`long_bodies` and its body to arrive whole (0:
    the server reads no body, and only the head has a deadline)."""
    form_s: ClassVar[float] = 0.0
    """Seconds, from the first byte, for any other request and its body to arrive whole (0: no deadline beyond
    the head's, for a server that reads no body)."""
    long_bodies: ClassVar[tuple[str, ...]] = ()
    """The paths whose bodies may take :attr:`body_s` (uploads); every other body has :attr:`form_s`."""
    exempt: ClassVar[frozenset[str]] = frozenset()
    """Client addresses whose connections are not counted by address: a reverse proxy's, whose connections are
    each some other client's (the application counts those by the address the proxy forwards)."""
    by_address: ClassVar[collections.Counter[str]] = collections.Counter()
    """The connections open from each client address (each server's :func:`guard` has its own)."""
    _deadline: asyncio.TimerHandle | None = None
    _client: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        client = client_key(str(peer[0])) if isinstance(peer, tuple) and peer else ""
        if len(self.connections) >= self.limits.connections:
            self._refuse(transport, self.crowded)
            return
        if client not in self.exempt:
            if self.by_address[client] >= self.limits.per_address:
                self._refuse(transport, f"too many connections from your address: at most {self.limits.per_address} "
                                        "at once; it answers again once some of them close\n")
                return
            self.by_address[client] += 1
            self._client = client
        super().connection_made(transport)
        self._within(self.limits.head_s, self._head_late)

    def _refuse(self, transport: asyncio.Transport, why: str) -> None:
        """Refuses a connection as it opens, in a line a browser shows; the answer fits the socket's buffer."""
        self.transport = transport  # what connection_lost closes
        transport.write(plain(503, why, self.security))
        transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._within(None, None)
        if self._client is not None:
            self.by_address[self._client] -= 1
            if self.by_address[self._client] <= 0:
                del self.by_address[self._client]
            self._client = None
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """What uvicorn answers to a request its parser refuses: a line that is not HTTP, or a head that grew
        beyond :attr:`PageLimits.head_bytes` before it was whole."""
        if len(self.conn.trailing_data[0]) > self.limits.head_bytes:
            self._close_with(plain(431, "the request is too long\n", self.security))
        else:
            self._close_with(plain(400, "not an HTTP request\n", self.security))

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._within(self.limits.answer_s, self.transport.abort)

    def _head_late(self) -> None:
        if self.cycle is None:  # no request yet: once it has come, the answer's deadline follows it
            self._close_with(plain(408, f"the request did not arrive whole within {self.limits.head_s:g} seconds\n",
                                   self.security))
            return
        if not self.cycle.more_body or self.cycle.response_complete:
            return
        allowed = self.body_s if self.cycle.scope["path"] in self.long_bodies else self.form_s
        if allowed > self.limits.head_s:
            self._within(allowed - self.limits.head_s, lambda: self._body_late(allowed))
        elif allowed:
            self._body_late(allowed)

    def _body_late(self, allowed: float) -> None:
        cycle = self.cycle
        if cycle is None or not cycle.more_body or cycle.response_complete:
            return
        if cycle.response_started:  # answered already, but the client still sends: nothing more to say
            self.transport.abort()
            return
        cycle.disconnected = True  # the application reading the body is told the client has gone
        cycle.message_event.set()
        self._close_with(plain(408, f"the request's body did not arrive whole within {allowed:g} seconds\n",
                               self.security))

    def _close_with(self, answer: bytes) -> None:
        self.transport.write(answer)
        self.transport.close()
        self._within(self.limits.answer_s, self.transport.abort)

    def _within(self, seconds: float | None, then: Callable[[], object] | None) -> None:
        """Replaces the connection's deadline: ``then`` in ``seconds``, or none."""
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None if seconds is None or then is None else self.loop.call_later(seconds, then)


def guard(name: str, limits: PageLimits, security: Fields, crowded: str, body_s: float = 0.0, *,
          form_s: float = 0.0, long_bodies: tuple[str, ...] = (), exempt: frozenset[str] = frozenset()) -> type[Guard]:
    """A :class:`Guard` of a server's own (uvicorn takes the protocol as a class), with its own count of
    connections by address: its limits, the header fields of its own answers, what a connection beyond the
    limit is told, the deadlines of bodies (:attr:`Guard.body_s` for ``long_bodies``, :attr:`Guard.form_s` for
    the others) and the addresses not counted (:attr:`Guard.exempt`)."""
    return type(name, (Guard,), {"limits": limits, "security": tuple(security), "crowded": crowded,
                                 "body_s": body_s, "form_s": form_s, "long_bodies": long_bodies,
                                 "exempt": frozenset(client_key(a) for a in exempt),
                                 "by_address": collections.Counter()})


def server_config(app: ASGIApp, protocol: type[Guard], head_bytes: int, **more: Any) -> uvicorn.Config:
    """uvicorn's configuration of a page's server: ``app`` spoken to by the guard's ``protocol``, no websockets and
    no lifespan, no log of its own (a failing answer is the application's to log or say, and the program's logging
    is left as it is), no ``Server`` or ``Date`` field of its own (the answers write theirs), a head bounded to
    ``head_bytes`` as it arrives, and no proxy believed; ``more`` (TLS files, a proxy) as uvicorn takes it."""
    return uvicorn.Config(app, **{
        "http": protocol, "ws": "none", "lifespan": "off", "log_config": None, "log_level": logging.CRITICAL,
        "access_log": False, "proxy_headers": False, "server_header": False, "date_header": False,
        "h11_max_incomplete_event_size": head_bytes, **more})


class QuietServer(uvicorn.Server):
    """uvicorn's server on the caller's event loop: it says when it listens, and leaves the program's signals to
    the program (uvicorn would take Ctrl-C for itself)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


def listen(page: str, host: str, port: int, backlog: int = 128) -> socket.socket:
    """A socket listening on ``host:port`` (IPv6 when the host has a colon, brackets or not) for ``page`` (``the
    live page``, say); a :class:`ConfigError` naming the page when the address is not one or cannot be had."""
    try:
        check_address(host, port)
    except ConfigError as err:
        raise ConfigError(f"{page}: {err}") from None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family, backlog=backlog)
    except OSError as err:
        raise ConfigError(f"{page}: cannot listen on {host}:{port}: {err.strerror}") from None


async def start_server(config: uvicorn.Config, listener: socket.socket, page: str,
                       at: str) -> tuple[QuietServer, asyncio.Task[None]]:
    """Serves ``config``'s application on ``listener`` from now on (until :func:`stop_server`), once it listens:
    the server and the task that serves it; a :class:`ConfigError` naming ``page`` and the address ``at`` it was
    asked for when it cannot start (the listener is then closed)."""
    server = QuietServer(config)
    task = asyncio.ensure_future(serve_until_stopped(server, listener))
    listening = asyncio.ensure_future(server.listening.wait())
    await asyncio.wait((task, listening), return_when=asyncio.FIRST_COMPLETED)
    if not listening.done():
        listening.cancel()
        listener.close()
        error = task.exception() if not task.cancelled() else None
        raise ConfigError(f"{page} could not start on {at}: {error}")
    return server, task


async def serve_until_stopped(server: QuietServer, listener: socket.socket) -> None:
    """Serves on ``listener`` until stopped; answers still being made end with the server."""
    try:
        await server.serve(sockets=[listener])
    finally:
        tasks = list(server.server_state.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def stop_server(server: QuietServer, task: asyncio.Future[None]) -> None:
    """Stops ``server`` (served by ``task``) and ends the connections still open (an answer being made is
    dropped), waiting at most 5 seconds."""
    server.should_exit = server.force_exit = True
    for connection in list(server.server_state.connections):
        if isinstance(connection, H11Protocol):
            connection.transport.abort()
    with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, SystemExit):
        await asyncio.wait_for(task, 5)
