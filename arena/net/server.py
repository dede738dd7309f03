"""The arena server: bots connect as gRPC clients, and tables seat them.

:class:`ArenaServer` runs a ``grpc.aio`` server with the ``callbreak.v1.Arena`` service, the
standard health service and server reflection (so ``grpcurl`` can list the API). The servicer is
thin: it checks the ``Hello`` (token, protocol version, bars, session limits), opens a
:class:`~arena.net.remote.Session`, and hands every later message to it. The :class:`Lobby` knows
which sessions are connected and tells whoever watches it when that changes; a table takes a seat
from it (:meth:`ArenaServer.seat`) and gets a :class:`~arena.net.remote.RemotePlayer`. Many tables
play at once on one event loop.

Keepalive policy: a bot may send HTTP/2 keepalive pings at most once every :data:`MIN_PING_S`
seconds (a bot that pings more often is cut off by gRPC with "too many pings"); the arena pings
every connection every :data:`ARENA_PING_S` seconds and drops one that does not answer within
:data:`PING_TIMEOUT_S` seconds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena import __version__
from arena.core.dealing import DealSource
from arena.core.rules import Rules
from arena.net.remote import RemotePlayer, Session
from arena.net.wire import rules_to_proto
from arena.players.table import GameRecord, TableSettings, play_game
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

__all__ = ["ARENA_PING_S", "MIN_PING_S", "PING_TIMEOUT_S", "PROTOCOL_VERSION", "ArenaServer", "Lobby",
           "ServerSettings"]

PROTOCOL_VERSION = 1
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Arena"].full_name
MIN_PING_S = 10
"""The shortest interval between a bot's keepalive pings that the arena accepts."""
ARENA_PING_S = 30
"""How often the arena pings each connection."""
PING_TIMEOUT_S = 10
"""How long the arena waits for the answer to its ping before it drops the connection."""


@dataclasses.dataclass(frozen=True)
class ServerSettings:
    """How the arena admits bots and times their decisions."""

    rules: Rules
    tokens: Mapping[str, str]
    """Token -> bot name. A bot is known by its token; the name in its Hello is only informative."""
    table: TableSettings = dataclasses.field(default_factory=TableSettings)
    max_tables: int = 8
    """Tables one session may be given at once."""
    max_sessions: int = 4
    """Live sessions one bot may hold at once."""
    max_sessions_total: int = 4096
    """Live sessions the whole arena takes; past it a Hello is refused with ARENA_FULL."""
    reconnect_grace_s: float = 5.0
    """How long a seat whose bot's stream ended waits for the bot to come back."""
    unresponsive_after: int = 3
    """Requests in a row left unanswered (with nothing else heard) after which a session is dropped; 0: never."""
    tls_cert: Path | None = None
    """PEM certificate chain; with ``tls_key``, the arena speaks TLS only."""
    tls_key: Path | None = None


class Lobby:
    """The connected sessions, by bot, the seats they hold, and who is barred.

    Everything here is synchronous and runs on the event loop; watchers (:meth:`watch`) are
    called after every change, so a dispatcher can start games as soon as a bot comes back.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, list[Session]] = {}
        self.barred: dict[str, tuple[int, str]] = {}
        """Bot -> (refusal reason, detail): disqualified or withdrawn bots, refused at Hello."""
        self.last_seen: dict[str, float] = {}
        """Bot -> ``time.monotonic()`` when its last session ended."""
        self._changed = asyncio.Event()
        self._watchers: list[Callable[[], None]] = []

    def watch(self, callback: Callable[[], None]) -> None:
        """Calls ``callback`` after every change of sessions or free seats."""
        self._watchers.append(callback)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        for callback in self._watchers:
            callback()

    def add(self, session: Session) -> None:
        self.sessions.setdefault(session.bot, []).append(session)
        self._notify()

    def remove(self, session: Session) -> None:
        """Forgets a session at once (its stream ended, in whatever state)."""
        live = self.sessions.get(session.bot, [])
        if session in live:
            live.remove(session)
            self.last_seen[session.bot] = time.monotonic()
            self._notify()

    def is_barred(self, key: str) -> bool:
        """True when the bot of a session key (``bot``, or ``bot@game`` for a process launched for one
        game) is disqualified or withdrawn."""
        return key in self.barred or key.split("@", 1)[0] in self.barred

    def barred_detail(self, key: str) -> str:
        """Why the bot of ``key`` is barred."""
        return self.barred.get(key, self.barred.get(key.split("@", 1)[0], (0, "")))[1]

    def live(self, bot: str) -> list[Session]:
        """The open sessions of a bot."""
        return [s for s in self.sessions.get(bot, []) if not s.closed.is_set()]

    def all_live(self) -> list[Session]:
        """Every open session."""
        return [s for sessions in self.sessions.values() for s in sessions if not s.closed.is_set()]

    def present(self, bot: str) -> bool:
        """True when the bot has an open session."""
        return any(not s.closed.is_set() for s in self.sessions.get(bot, ()))

    def free_tables(self, bot: str) -> int:
        """Seats the bot's open sessions can still take."""
        return sum(max(0, s.max_tables - s.tables) for s in self.live(bot))

    def try_claim(self, bot: str) -> Session | None:
        """Takes one table of an open session of ``bot`` with room, or ``None``."""
        for session in self.live(bot):
            if session.tables < session.max_tables:
                session.tables += 1
                return session
        return None

    async def claim(self, bot: str, timeout: float | None = None) -> Session:
        """Waits up to ``timeout`` s for an open session of ``bot`` with a free table and takes one table."""
        loop = asyncio.get_running_loop()
        end = None if timeout is None else loop.time() + timeout
        while True:
            session = self.try_claim(bot)
            if session is not None:
                return session
            left = None if end is None else end - loop.time()
            if left is not None and left <= 0:
                raise TimeoutError(f"{bot} has no free seat")
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                continue

    def give_back(self, session: Session) -> None:
        """Returns one table of ``session``."""
        session.tables = max(0, session.tables - 1)
        self._notify()

    async def release(self, session: Session) -> None:
        """:meth:`give_back`, for callers that await."""
        self.give_back(session)


class ArenaServicer(pb_grpc.ArenaServicer):  # type: ignore[misc]
    """The ``callbreak.v1.Arena`` service: validate, convert, delegate."""

    def __init__(self, server: ArenaServer) -> None:
        self.server = server
        self._ids = itertools.count(1)

    async def Connect(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:
        first = await context.read()
        if first is grpc.aio.EOF:
            return
        if first.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message of the stream must be a Hello")
        hello = first.hello
        bot, refusal = self.server.admit(hello)
        if refusal is not None:
            reason, code, detail = refusal
            await context.write(pb.ConnectResponse(refusal=pb.Refusal(reason=reason, detail=detail)))
            await context.abort(code, detail)
        settings = self.server.settings
        lobby = self.server.lobby
        session = Session(
            f"s-{next(self._ids)}", bot, context.write, self.server.rules_msg, max_tables=settings.max_tables,
            wants_events=hello.events, version=hello.bot_version, unresponsive_after=settings.unresponsive_after,
            on_close=lobby.remove,
        )
        session.handler = asyncio.current_task()
        await context.write(pb.ConnectResponse(welcome=pb.Welcome(
            session_id=session.session_id, arena_version=__version__, protocol_version=PROTOCOL_VERSION,
            rules=self.server.rules_msg, max_tables=settings.max_tables,
            max_retries=settings.table.max_retries, deadline_ms=settings.table.deadline_ms,
            reconnect_grace_ms=int(settings.reconnect_grace_s * 1000),
        )))
        session.start()
        lobby.add(session)
        try:
            while True:
                msg = await context.read()
                if msg is grpc.aio.EOF:
                    session.close("the bot closed its stream")
                    break
                await session.receive(msg)
        except asyncio.CancelledError:
            if session.kicked is None:
                session.close("the arena is shutting down")
                raise
            session.close(session.kicked[1])
            if session.kicked[0] is not grpc.StatusCode.OK:  # OK: the arena ended the tournament
                await context.abort(*session.kicked)
        except grpc.RpcError as err:  # the connection broke
            session.close(f"the connection broke: {err}")
        finally:
            session.close("the stream ended")


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
        self._health = health.aio.HealthServicer()

    @property
    def tls(self) -> bool:
        """True when the arena speaks TLS only."""
        return self.settings.tls_cert is not None and self.settings.tls_key is not None

    def admit(self, hello: pb.Hello) -> tuple[str, tuple[int, grpc.StatusCode, str] | None]:
        """The bot a Hello speaks for, or why it is refused (reason, status, detail)."""
        if hello.protocol_version != PROTOCOL_VERSION:
            return "", (pb.REFUSAL_REASON_UNSUPPORTED_PROTOCOL, grpc.StatusCode.FAILED_PRECONDITION,
                        f"this arena speaks protocol version {PROTOCOL_VERSION}, not {hello.protocol_version}")
        if not hello.token:
            return "", (pb.REFUSAL_REASON_MISSING_TOKEN, grpc.StatusCode.UNAUTHENTICATED,
                        "no token: set Hello.token to the token the organiser gave your bot")
        bot = self._tokens.get(hello.token)
        if bot is None:
            return "", (pb.REFUSAL_REASON_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED,
                        "this token is not known to the arena: check the token the organiser gave your bot")
        if self.lobby.is_barred(bot):
            reason, detail = self.lobby.barred.get(bot) or self.lobby.barred[bot.split("@", 1)[0]]
            return bot, (reason, grpc.StatusCode.PERMISSION_DENIED, detail)
        if len(self.lobby.live(bot)) >= self.settings.max_sessions:
            return bot, (pb.REFUSAL_REASON_DUPLICATE_SESSION, grpc.StatusCode.ALREADY_EXISTS,
                         f"{bot} already has {self.settings.max_sessions} live sessions, the most allowed")
        if len(self.lobby.all_live()) >= self.settings.max_sessions_total:
            return bot, (pb.REFUSAL_REASON_ARENA_FULL, grpc.StatusCode.RESOURCE_EXHAUSTED,
                         f"the arena already serves {self.settings.max_sessions_total} sessions, the most it "
                         "takes: try again later")
        return bot, None

    async def start(self, address: str = "127.0.0.1:0") -> int:
        """Starts serving on ``address`` (port 0: any free port); returns the port."""
        server = grpc.aio.server(options=[
            ("grpc.keepalive_time_ms", ARENA_PING_S * 1000),
            ("grpc.keepalive_timeout_ms", PING_TIMEOUT_S * 1000),
            ("grpc.keepalive_permit_without_calls", 1),
            # A little under MIN_PING_S, so a bot pinging exactly every MIN_PING_S never trips it.
            ("grpc.http2.min_ping_interval_without_data_ms", MIN_PING_S * 1000 - 500),
            ("grpc.http2.max_ping_strikes", 2),
        ])
        pb_grpc.add_ArenaServicer_to_server(ArenaServicer(self), server)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            server,
        )
        if self.tls:
            assert self.settings.tls_cert is not None and self.settings.tls_key is not None
            credentials = grpc.ssl_server_credentials(
                [(self.settings.tls_key.read_bytes(), self.settings.tls_cert.read_bytes())]
            )
            self.port = server.add_secure_port(address, credentials)
        else:
            self.port = server.add_insecure_port(address)
        await server.start()
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        await self._health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        self._server = server
        self.address = f"{address.rpartition(':')[0]}:{self.port}"
        self._ticker = asyncio.get_running_loop().create_task(self._check_stalls())
        return self.port

    async def _check_stalls(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for session in self.lobby.all_live():
                session.check_stall(now)

    async def stop(self, grace: float | None = 1.0, *, over: bool = True) -> None:
        """Stops serving. Open streams end with status OK when the tournament is ``over``; otherwise
        (a run that stopped with games left, or was interrupted) with UNAVAILABLE, so bots keep
        trying to reconnect for when it resumes."""
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._server is not None:
            await self._health.enter_graceful_shutdown()
            handlers = []
            for session in self.lobby.all_live():
                if over:
                    session.kick(grpc.StatusCode.OK, "the tournament is over")
                else:
                    session.kick(grpc.StatusCode.UNAVAILABLE, "the arena stopped before the tournament is over: "
                                 "reconnect, it will resume")
                if session.handler is not None:
                    handlers.append(session.handler)
            if handlers:  # each stream ends with OK at once; the server would cancel what is left
                await asyncio.wait(handlers, timeout=1.0)
            await self._server.stop(grace)
            self._server = None

    def add_token(self, token: str, bot: str) -> None:
        """Admits one more token (for a bot process launched during the tournament)."""
        self._tokens[token] = bot

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

    async def play(
        self, bots: Sequence[str], deals: DealSource, *, table_id: str = "t1", game_id: str = "g1",
        game_number: int = 1, first_dealer: int = 3, timeout: float | None = None,
    ) -> GameRecord:
        """Seats four connected bots (by seat) and plays one game."""
        players: list[RemotePlayer] = []
        try:
            for bot in bots:
                players.append(await self.claim(bot, timeout))
            return await play_game(
                self.settings.rules, players, deals, table_id=table_id, game_id=game_id,
                game_number=game_number, first_dealer=first_dealer, settings=self.settings.table,
            )
        finally:
            for player in players:
                await player.close()

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
