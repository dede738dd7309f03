"""The arena server: bots connect as gRPC clients, and tables seat them.

:class:`ArenaServer` runs a ``grpc.aio`` server with the ``callbreak.v1.Arena`` service, the
standard health service and server reflection (so ``grpcurl`` can list the API). The servicer is
thin: it checks the ``Hello`` (token, protocol version, bars, session limits), opens a
:class:`~arena.transports.grpc.session.Session`, and hands every later message to it. The
:class:`~arena.transports.grpc.lobby.Lobby` knows which sessions are connected and tells whoever watches
it when that changes; a table takes a seat from it (:meth:`ArenaServer.seat`) and gets a
:class:`~arena.transports.grpc.remote.RemotePlayer`. Many tables play at once on one event loop.
Requests and events reach the stream already serialized (:mod:`arena.transports.grpc.encoder`); the
service's serializer passes such bytes through as they are.

Keepalive policy: a bot may send HTTP/2 keepalive pings at most once every :data:`MIN_PING_S`
seconds (a bot that pings more often is cut off by gRPC with "too many pings"); the arena pings
every connection every :data:`ARENA_PING_S` seconds and drops one that does not answer within
:data:`PING_TIMEOUT_S` seconds.

Hostile input: a message larger than :data:`MAX_MESSAGE_BYTES` is refused by gRPC itself (the stream
ends with RESOURCE_EXHAUSTED); bytes that are not a ``ConnectRequest`` end the stream with
INVALID_ARGUMENT and a one-line reason; the stray messages of a session are counted and a flood
ends its stream (:mod:`arena.transports.grpc.session`). Only the handler of a stream ends it, never another task:
the arena decides (:meth:`~arena.transports.grpc.session.Session.kick`), the handler writes the status.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import itertools
import logging
import socket
import time
from collections.abc import Mapping
from pathlib import Path

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena import __version__
from arena.core.faults import FREE_TEXT_LIMIT, FaultKind, bounded, shown
from arena.core.rules import Rules
from arena.core.words import listed
from arena.errors import ConfigError
from arena.players.pauses import settle
from arena.players.table import TableSettings
from arena.transports.grpc.lobby import Lobby
from arena.transports.grpc.remote import RemotePlayer
from arena.transports.grpc.session import END_WAIT_S, Session
from arena.transports.grpc.strays import StrayLog
from arena.transports.grpc.tokens import find_bot, new_token, token_sha256
from arena.transports.grpc.wire import rules_to_proto
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

__all__ = ["ARENA_PING_S", "MAX_MESSAGE_BYTES", "MIN_PING_S", "PING_TIMEOUT_S", "PROTOCOL_VERSION", "ArenaServer",
           "ServerSettings", "check_address"]

PROTOCOL_VERSION = 1
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Arena"].full_name
MIN_PING_S = 10
"""The shortest interval between a bot's keepalive pings that the arena accepts."""
ARENA_PING_S = 30
"""How often the arena pings each connection."""
PING_TIMEOUT_S = 10
"""How long the arena waits for the answer to its ping before it drops the connection."""
MAX_MESSAGE_BYTES = 64 * 1024
HELLO_TIMEOUT_S = 10.0
"""Seconds a new stream has to send its Hello; a stream that stays silent longer is ended with
DEADLINE_EXCEEDED, so idle connections cannot pile up in the arena."""
"""The largest message a bot may send; a bot's messages are a few dozen bytes."""

TOKEN_LENGTH = len(new_token())
"""Characters in a token the arena makes; an organiser may choose tokens of another length."""

_LOG = logging.getLogger("arena.transports.grpc")


@dataclasses.dataclass(frozen=True)
class ServerSettings:
    """How the arena admits bots and times their decisions."""

    rules: Rules
    tokens: Mapping[str, str]
    """SHA-256 digest of a token (:func:`~arena.transports.grpc.tokens.token_sha256`) -> the bot key it admits (the
    bot's name, or ``bot@game`` for a process launched for one game). The arena never holds a token."""
    table: TableSettings = dataclasses.field(default_factory=TableSettings)
    max_tables: int = 8
    """Tables one session may be given at once."""
    max_sessions: int = 1
    """Live sessions one bot may hold at once (``[server] sessions_per_bot``); past it a Hello is refused
    with DUPLICATE_SESSION."""
    max_sessions_total: int = 4096
    """Live sessions the whole arena takes; past it a Hello is refused with ARENA_FULL."""
    reconnect_grace_s: float = 5.0
    """How long a seat whose bot's stream ended waits for the bot to come back."""
    unresponsive_after: int = 3
    """Requests in a row left unanswered (with nothing else heard) after which a session is dropped; 0: never."""
    tls_cert: Path | None = None
    """PEM certificate chain; with ``tls_key``, the arena speaks TLS only."""
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    """PEM certificate of the CA that signs bots' client certificates: with it (and TLS), a bot must present
    a certificate that CA signed (mutual TLS)."""
    tls_client_names: bool = False
    """With mutual TLS: a bot's certificate must also name it (its common name, or one of its DNS names,
    is the bot's name), so a stolen token is no use without that bot's key too."""
    hello_timeout_s: float = HELLO_TIMEOUT_S
    """Seconds a new stream has to send its Hello."""


class ArenaServicer(pb_grpc.ArenaServicer):  # type: ignore[misc]
    """The ``callbreak.v1.Arena`` service: validate, convert, delegate."""

    def __init__(self, server: ArenaServer) -> None:
        self.server = server
        self._ids = itertools.count(1)

    async def Connect(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:
        wait = self.server.settings.hello_timeout_s
        try:
            first = await asyncio.wait_for(context.read(), wait)
        except DecodeError as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, not_a_message(err))
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"no Hello within {wait:g} s of opening the stream: send Hello first")
        if first is grpc.aio.EOF:
            return
        if first.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message of the stream must be a Hello")
        hello = first.hello
        bot, refusal = self.server.admit(hello, _certificate_names(context))
        if refusal is not None:
            reason, code, detail = refusal
            await context.write(pb.ConnectResponse(refusal=pb.Refusal(reason=reason, detail=detail)))
            await context.abort(code, detail)
        settings = self.server.settings
        lobby = self.server.lobby
        session = Session(
            f"s-{next(self._ids)}", bot, context.write, self.server.rules_msg, max_tables=settings.max_tables,
            wants_events=hello.events, version=bounded(hello.bot_version),
            unresponsive_after=settings.unresponsive_after, on_close=lobby.remove, stray_log=self.server.stray_log,
        )
        handler = asyncio.current_task()
        assert handler is not None
        session.handler = handler
        # The Welcome is the first message of the outbox, and the session is in the lobby before the bot can
        # read it: no await in between, so a disqualification (or a table) cannot miss the new session.
        session.send(pb.ConnectResponse(welcome=pb.Welcome(
            session_id=session.session_id, arena_version=__version__, protocol_version=PROTOCOL_VERSION,
            rules=self.server.rules_msg, max_tables=settings.max_tables,
            max_retries=settings.table.max_retries, deadline_ms=settings.table.deadline_ms,
            reconnect_grace_ms=int(settings.reconnect_grace_s * 1000), takes_bot_errors=True,
        )))
        session.start()
        lobby.add(session)
        streams = self.server.streams
        streams.add(handler)
        if self.server.ending is not None:  # welcomed as the arena stops
            session.kick(*self.server.ending)
        # The bot's messages are read by a task of their own, so that this handler, never cancelled by
        # the arena, is the one to end the stream, with the status the arena chose, when it chooses.
        loop = asyncio.get_running_loop()
        reader = loop.create_task(_read(session, context))
        ended = loop.create_task(session.ended.wait())
        try:
            await asyncio.wait((reader, ended), return_when=asyncio.FIRST_COMPLETED)
            if session.kicked is not None:
                await ended  # what was queued (a last notice) is written first, even if the bot half-closed
                if session.kicked[0] is not grpc.StatusCode.OK:  # OK: its tournament is over; the handler returns
                    await context.abort(*session.kicked)
        except asyncio.CancelledError:  # gRPC ends the call: the bot dropped it, or the server stops
            session.close("the connection ended")
            raise
        finally:
            ended.cancel()
            reader.cancel()
            session.close("the stream ended")
            streams.discard(handler)


def _serialize(msg: pb.ConnectResponse | bytes) -> bytes:
    """A message to a bot as bytes: requests and events come already serialized
    (:mod:`arena.transports.grpc.encoder`)."""
    return msg if type(msg) is bytes else msg.SerializeToString()  # type: ignore[union-attr]


def _add_servicer(servicer: ArenaServicer, server: grpc.aio.Server) -> None:
    """``add_ArenaServicer_to_server`` of the generated code, with :func:`_serialize` for what goes out."""
    handlers = {"Connect": grpc.stream_stream_rpc_method_handler(
        servicer.Connect, request_deserializer=pb.ConnectRequest.FromString, response_serializer=_serialize,
    )}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)


def _certificate_names(context: grpc.aio.ServicerContext) -> set[str] | None:
    """The names on the client certificate of the stream (common name and DNS names), or ``None``
    when the bot showed none."""
    auth = context.auth_context()
    names = [*auth.get("x509_common_name", []), *auth.get("x509_subject_alternative_name", [])]
    found = {name.decode(errors="replace") for name in names if name}
    return found or None


_SPACES = {"\n": "a newline", "\r": "a carriage return", " ": "a space", "\t": "a tab"}
"""The characters a token is most often copied with, as a student calls them."""


def token_hint(token: str) -> str:
    """Why an unknown token may be the right one copied badly, or "": what surrounds it (a newline from
    the file it was read from, a space), or a length other than that of the tokens the arena makes
    (:func:`~arena.transports.grpc.tokens.new_token`). It tells nothing of the tokens the arena knows."""
    stripped = token.strip()
    if stripped != token and stripped:
        where, extra = ("ends", token[len(token.rstrip()):]) if token.rstrip() != token else (
            "begins", token[:len(token) - len(token.lstrip())])
        names = [_SPACES.get(char, f"the character {char!r}") for char in dict.fromkeys(extra)]
        return f"this one {where} with {listed(names)}: it was copied with the token; send the token alone"
    if len(token) != TOKEN_LENGTH and token.isprintable() and len(token) <= 4 * TOKEN_LENGTH:
        return (f"a token made by callbreak-arena is {TOKEN_LENGTH} characters; this one has {len(token)}: is it the "
                "whole token, and only the token?")
    return ""


def not_a_message(err: DecodeError) -> str:
    """The one-line reason a stream that carried bytes that are not a ConnectRequest ends."""
    why = str(err).rpartition(": ")[2] or "protobuf cannot parse them"
    return (f"the stream carried bytes that are not a ConnectRequest of callbreak.v1 ({bounded(why)}): "
            "send each message serialized by code generated from callbreak.proto")


async def _read(session: Session, context: grpc.aio.ServicerContext) -> None:
    """Hands each message of the stream to the session until the stream ends; a message that is not a
    ConnectRequest, or one the arena fails on, makes the arena end it."""
    while True:
        try:
            msg = await context.read()
        except DecodeError as err:
            detail = not_a_message(err)
            session.fault(FaultKind.MALFORMED, detail)
            session.kick(grpc.StatusCode.INVALID_ARGUMENT, detail)
            return
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the stream is over: the connection broke, or the arena ended it
            session.close(f"the connection broke: {bounded(str(err))}")
            return
        if msg is grpc.aio.EOF:
            session.close("the bot closed its stream")
            return
        try:
            session.receive(msg)
        except Exception:  # the arena's own error: logged for the organiser, never sent to the bot
            _LOG.exception("arena: %s (bot %s) could not handle a message", session.session_id, session.bot)
            session.kick(grpc.StatusCode.INTERNAL, "the arena failed on a message of this stream (the arena's "
                         "error, not the bot's): the organiser has it in the log")
            return


class ArenaServer:
    """A running arena: the gRPC server, its lobby, and tables that play remote seats."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._tokens = dict(settings.tokens)
        self.rules_msg = rules_to_proto(settings.rules)
        self.lobby = Lobby()
        self.port = 0
        self.address = ""
        """``host:port`` the arena listens on, once started."""
        self._server: grpc.aio.Server | None = None
        self._ticker: asyncio.Task[None] | None = None
        self.stray_log = StrayLog()
        """Where the stray messages of every session are told to the organiser."""
        self.streams: set[asyncio.Task[object]] = set()
        """The handlers of the welcomed streams not yet ended."""
        self.ending: tuple[grpc.StatusCode, str] | None = None
        """How every stream ends once the arena is stopping (a stream welcomed then is ended at once)."""
        self._health = health.aio.HealthServicer()

    @property
    def tls(self) -> bool:
        """True when the arena speaks TLS only."""
        return self.settings.tls_cert is not None and self.settings.tls_key is not None

    def admit(
        self, hello: pb.Hello, certificate: set[str] | None = None,
    ) -> tuple[str, tuple[int, grpc.StatusCode, str] | None]:
        """The bot a Hello speaks for, or why it is refused (reason, status, detail); ``certificate``:
        the names on the stream's client certificate, if it showed one."""
        if hello.protocol_version != PROTOCOL_VERSION:
            return "", (pb.REFUSAL_REASON_UNSUPPORTED_PROTOCOL, grpc.StatusCode.FAILED_PRECONDITION,
                        f"this arena speaks protocol version {PROTOCOL_VERSION}, not {hello.protocol_version}")
        if not hello.token:
            return "", (pb.REFUSAL_REASON_MISSING_TOKEN, grpc.StatusCode.UNAUTHENTICATED,
                        "no token: set Hello.token to the token the organiser gave your bot (the bot kit reads "
                        "it from CALLBREAK_TOKEN or --token)")
        bot = find_bot(self._tokens, hello.token)
        if bot is None:
            hint = token_hint(hello.token)
            return "", (pb.REFUSAL_REASON_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED,
                        "this token is not known to the arena: check the token the organiser gave your bot"
                        + (f" ({hint})" if hint else ""))
        name = bot.split("@", 1)[0]  # a process launched for one game holds the key bot@game
        if hello.bot_name and hello.bot_name != name:
            return "", (pb.REFUSAL_REASON_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED,
                        f"this token belongs to the bot {name!r}, but the Hello names "
                        f"{shown(hello.bot_name, FREE_TEXT_LIMIT)}: use your own bot's token, and send the name the "
                        "organiser gave your bot or no name at all")
        if self.settings.tls_client_names and certificate is not None and name not in certificate:
            return "", (pb.REFUSAL_REASON_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED,
                        f"this token belongs to the bot {name!r}, but your client certificate is made out to "
                        f"{shown(', '.join(sorted(certificate)), FREE_TEXT_LIMIT)}: connect with the certificate "
                        "the organiser made for your bot")
        if self.lobby.is_barred(bot):
            reason, detail = self.lobby.barred.get(bot) or self.lobby.barred[name]
            return bot, (reason, grpc.StatusCode.PERMISSION_DENIED, detail)
        # A stream the bot already dropped may not have been served its cancellation yet (its handler is
        # being cancelled): it is gone, and must not make a bot that reconnects at once a duplicate.
        live = [s for s in self.lobby.live(bot)
                if s.handler is None or not (s.handler.done() or s.handler.cancelling())]
        most = self.settings.max_sessions
        if len(live) >= most:
            held = "a live session" if most == 1 else f"{most} live sessions"
            return bot, (pb.REFUSAL_REASON_DUPLICATE_SESSION, grpc.StatusCode.ALREADY_EXISTS,
                         f"the bot {name!r} already has {held}, the most this arena allows: another copy of it "
                         "is connected with the same token; stop that copy, or wait until its connection ends")
        if self.lobby.count >= self.settings.max_sessions_total:
            return bot, (pb.REFUSAL_REASON_ARENA_FULL, grpc.StatusCode.RESOURCE_EXHAUSTED,
                         f"the arena already serves {self.settings.max_sessions_total} sessions, the most it "
                         "takes: try again later")
        return bot, None

    async def start(self, address: str = "127.0.0.1:0", *, unix_socket: Path | None = None) -> int:
        """Starts serving on ``address`` (port 0: any free port); returns the port. With ``unix_socket``
        the arena also listens, in plaintext, on that Unix domain socket: sandboxed bots, which have no
        network, reach it there (the socket's folder decides who may connect)."""
        settle()
        server = grpc.aio.server(options=[
            ("grpc.keepalive_time_ms", ARENA_PING_S * 1000),
            ("grpc.keepalive_timeout_ms", PING_TIMEOUT_S * 1000),
            ("grpc.keepalive_permit_without_calls", 1),
            # A little under MIN_PING_S, so a bot pinging exactly every MIN_PING_S never trips it.
            ("grpc.http2.min_ping_interval_without_data_ms", MIN_PING_S * 1000 - 500),
            ("grpc.http2.max_ping_strikes", 2),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ])
        _add_servicer(ArenaServicer(self), server)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            server,
        )
        settings = self.settings

        def read_pem(path: Path, what: str) -> bytes:
            try:
                return path.read_bytes()
            except OSError as err:
                raise ConfigError(f"cannot read the TLS {what} {path}: {err.strerror or err}") from None

        if settings.tls_client_ca is not None and not self.tls:
            raise ConfigError("a client CA (mutual TLS) needs the arena's own TLS certificate and key too")
        if self.tls:
            assert settings.tls_cert is not None and settings.tls_key is not None
            pair = (read_pem(settings.tls_key, "key"), read_pem(settings.tls_cert, "certificate"))
            if settings.tls_client_ca is None:
                credentials = grpc.ssl_server_credentials([pair])
            else:  # mutual TLS: a bot without a certificate the CA signed fails the handshake
                credentials = grpc.ssl_server_credentials(
                    [pair], root_certificates=read_pem(settings.tls_client_ca, "client CA certificate"),
                    require_client_auth=True,
                )
            self.port = server.add_secure_port(address, credentials)
        else:
            self.port = server.add_insecure_port(address)
        if unix_socket is not None:
            server.add_insecure_port(f"unix:{unix_socket}")
        self._server = server  # from here on, stop() stops it: also when this start is cancelled part way
        await server.start()
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        await self._health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        self.address = f"{address.rpartition(':')[0]}:{self.port}"
        self._ticker = asyncio.get_running_loop().create_task(self._check_stalls())
        return self.port

    async def _check_stalls(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for session in self.lobby.all_live():
                session.check_stall(now)

    async def stop(self, grace: float | None = 1.0, *, over: bool = True, why: str = "") -> None:
        """Stops serving. Open streams end with status OK when the tournament is ``over``; otherwise
        (a run that stopped with games left, or was interrupted, or a next part follows at the same address)
        with UNAVAILABLE, so bots keep trying to reconnect for when it resumes; ``why`` replaces the usual
        words of that status."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._server is not None:
            server, self._server = self._server, None
            try:
                await self._health.enter_graceful_shutdown()
                self.ending = (grpc.StatusCode.OK, "the tournament is over") if over else (
                    grpc.StatusCode.UNAVAILABLE, why or "the arena stopped before the tournament is over: reconnect, "
                    "it will resume")
                for session in self.lobby.all_live():
                    session.kick(*self.ending)
                if self.streams:  # each stream, and any the arena was already ending, gets its own status; the
                    # server would cancel what is left (a stream ends once the bot is quiet, END_WAIT_S at most)
                    await asyncio.wait(self.streams, timeout=END_WAIT_S + 1.5)
            finally:  # also when this stop is cancelled on the way: nothing keeps listening
                await server.stop(grace)

    def add_token(self, token: str, bot: str) -> None:
        """Admits one more token (for a bot process launched during the tournament); only its digest is kept."""
        self._tokens[token_sha256(token)] = bot

    def remove_token(self, token: str) -> None:
        """Forgets a token admitted by :meth:`add_token` (a process launched for a game that is over):
        a Hello with it is refused from now on."""
        self._tokens.pop(token_sha256(token), None)

    def player(self, session: Session, name: str | None = None) -> RemotePlayer:
        """A seat on a table already taken from ``session``."""
        return RemotePlayer(session, name, lobby=self.lobby, grace_s=self.settings.reconnect_grace_s)

    def seat(self, bot: str, name: str | None = None) -> RemotePlayer | None:
        """A seat for ``bot`` from one of its sessions with room, or ``None`` if it has none now."""
        session = self.lobby.try_claim(bot)
        return None if session is None else self.player(session, name)

    async def claim(self, bot: str, timeout: float | None = None) -> RemotePlayer:
        """A seat for ``bot``, waiting up to ``timeout`` s for it to connect."""
        return self.player(await self.lobby.claim(bot, timeout))

    def bar(self, bot: str, reason: int, detail: str, notice: int | None, code: grpc.StatusCode) -> None:
        """Ends the bot's sessions with ``code`` (after a notice, if given); later Hellos are refused."""
        self.lobby.barred[bot] = (reason, detail)
        for session in [s for s in self.lobby.all_live() if self.lobby.is_barred(s.bot) and
                        s.bot.split("@", 1)[0] == bot]:
            if notice is not None:
                session.notice(notice, 0, "", detail)
            session.kick(code, detail)

    def disqualify(self, bot: str, reason: str) -> None:
        """Disqualifies a bot: a notice, its streams end with PERMISSION_DENIED, later Hellos are refused."""
        self.bar(bot, pb.REFUSAL_REASON_DISQUALIFIED, f"{bot} is disqualified: {reason}",
                 pb.NOTICE_KIND_DISQUALIFIED, grpc.StatusCode.PERMISSION_DENIED)

    def withdraw(self, bot: str, reason: str) -> None:
        """Withdraws a bot: its streams end with OK (its tournament is over), later Hellos are refused."""
        self.bar(bot, pb.REFUSAL_REASON_WITHDRAWN, f"{bot} is withdrawn from the tournament: {reason}", None,
                 grpc.StatusCode.OK)


def check_address(host: str, port: int) -> None:
    """Refuses, in words and before anything runs, an address the arena server could not listen on
    (gRPC would only log a line of its own and say that binding failed)."""
    where = f"cannot listen on {host}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as err:
        raise ConfigError(f"{where}: {host!r} is not a host name or address known here ({err})") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as a server does: TIME_WAIT is no obstacle
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                why = f"port {port} is in use by another program (choose another port, or 0 for any free one)"
            elif err.errno == errno.EADDRNOTAVAIL:
                why = (f"{host} is not an address of this machine (listen on 127.0.0.1, on 0.0.0.0 for every "
                       "interface, or on one of this machine's own addresses)")
            elif err.errno == errno.EACCES:
                why = f"port {port} needs privileges this user lacks (ports below 1024 do): choose a higher one"
            else:
                why = err.strerror or str(err)
            raise ConfigError(f"{where}: {why}") from None
