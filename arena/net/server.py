"""The arena server: bots connect as gRPC clients, and tables seat them.

:class:`ArenaServer` runs a ``grpc.aio`` server with the ``callbreak.v1.Arena`` service, the
standard health service and server reflection (so ``grpcurl`` can list the API). The servicer is
thin: it checks the ``Hello`` (token, protocol version, disqualification), opens a
:class:`~arena.net.remote.Session`, and hands every later message to it. The :class:`Lobby` knows
which sessions are connected; a table claims a seat from it with :meth:`ArenaServer.claim` and
gets a :class:`~arena.net.remote.RemotePlayer`. Many tables can play at once on one event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Mapping, Sequence
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

__all__ = ["PROTOCOL_VERSION", "ArenaServer", "Lobby", "ServerSettings"]

PROTOCOL_VERSION = 1
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Arena"].full_name


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
    tls_cert: Path | None = None
    """PEM certificate chain; with ``tls_key``, the arena speaks TLS only."""
    tls_key: Path | None = None


class Lobby:
    """The connected sessions, by bot, and the seats they hold."""

    def __init__(self, disqualify_after: int = 0) -> None:
        self.sessions: dict[str, list[Session]] = {}
        self.disqualified: dict[str, str] = {}
        """Bot -> the reason it was disqualified."""
        self.fault_counts: dict[str, int] = {}
        self.disqualify_after = disqualify_after
        self._changed = asyncio.Condition()

    async def add(self, session: Session) -> None:
        async with self._changed:
            self.sessions.setdefault(session.bot, []).append(session)
            self._changed.notify_all()

    async def remove(self, session: Session) -> None:
        async with self._changed:
            live = self.sessions.get(session.bot, [])
            if session in live:
                live.remove(session)
            self._changed.notify_all()

    def live(self, bot: str) -> list[Session]:
        """The open sessions of a bot."""
        return [s for s in self.sessions.get(bot, []) if not s.closed.is_set()]

    async def claim(self, bot: str, timeout: float | None = None) -> Session:
        """Waits for an open session of ``bot`` with a free table and takes one table of it."""

        def free() -> Session | None:
            for session in self.live(bot):
                if session.tables < session.max_tables:
                    return session
            return None

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: free() is not None), timeout)
            session = free()
            assert session is not None
            session.tables += 1
            return session

    async def release(self, session: Session) -> None:
        async with self._changed:
            session.tables -= 1
            self._changed.notify_all()

    def count_faults(self, bot: str, faults: int) -> bool:
        """Adds a game's faults to the bot's tally; true when that disqualifies it now."""
        self.fault_counts[bot] = self.fault_counts.get(bot, 0) + faults
        limit = self.disqualify_after
        if limit and bot not in self.disqualified and self.fault_counts[bot] >= limit:
            self.disqualified[bot] = f"{self.fault_counts[bot]} faults (the limit is {limit})"
            return True
        return False


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
        session = Session(
            f"s-{next(self._ids)}", bot, context.write, self.server.rules_msg,
            max_tables=settings.max_tables, wants_events=hello.events,
        )
        session.handler = asyncio.current_task()
        await context.write(pb.ConnectResponse(welcome=pb.Welcome(
            session_id=session.session_id, arena_version=__version__, protocol_version=PROTOCOL_VERSION,
            rules=self.server.rules_msg, max_tables=settings.max_tables,
            max_retries=settings.table.limits.max_retries, deadline_ms=settings.table.deadline_ms,
        )))
        await self.server.lobby.add(session)
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
            await self.server.lobby.remove(session)


class ArenaServer:
    """A running arena: the gRPC server, its lobby, and tables that play remote seats."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._tokens = dict(settings.tokens)
        self.rules_msg = rules_to_proto(settings.rules)
        self.lobby = Lobby(settings.table.limits.disqualify_after)
        self.port = 0
        self._server: grpc.aio.Server | None = None
        self._health = health.aio.HealthServicer()

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
        if bot in self.lobby.disqualified:
            return bot, (pb.REFUSAL_REASON_DISQUALIFIED, grpc.StatusCode.PERMISSION_DENIED,
                         f"{bot} is disqualified: {self.lobby.disqualified[bot]}")
        if len(self.lobby.live(bot)) >= self.settings.max_sessions:
            return bot, (pb.REFUSAL_REASON_DUPLICATE_SESSION, grpc.StatusCode.ALREADY_EXISTS,
                         f"{bot} already has {self.settings.max_sessions} live sessions, the most allowed")
        return bot, None

    async def start(self, address: str = "127.0.0.1:0") -> int:
        """Starts serving on ``address`` (port 0: any free port); returns the port."""
        server = grpc.aio.server(options=[
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        ])
        pb_grpc.add_ArenaServicer_to_server(ArenaServicer(self), server)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            server,
        )
        if self.settings.tls_cert is not None and self.settings.tls_key is not None:
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
        return self.port

    async def stop(self, grace: float | None = 1.0) -> None:
        """Stops serving; open streams end with status OK: the tournament is over."""
        if self._server is not None:
            await self._health.enter_graceful_shutdown()
            handlers = []
            for sessions in list(self.lobby.sessions.values()):
                for session in list(sessions):
                    session.kick(grpc.StatusCode.OK, "the tournament is over")
                    if session.handler is not None:
                        handlers.append(session.handler)
            if handlers:  # each stream ends with OK at once; the server would cancel what is left
                await asyncio.wait(handlers, timeout=1.0)
            await self._server.stop(grace)
            self._server = None

    def add_token(self, token: str, bot: str) -> None:
        """Admits one more token (for a bot process launched during the tournament)."""
        self._tokens[token] = bot

    async def claim(self, bot: str, timeout: float | None = None) -> RemotePlayer:
        """A seat for ``bot`` from one of its sessions, waiting up to ``timeout`` s for it to connect."""
        return RemotePlayer(await self.lobby.claim(bot, timeout))

    async def play(
        self, bots: Sequence[str], deals: DealSource, *, table_id: str = "t1", game_id: str = "g1",
        game_number: int = 1, first_dealer: int = 3, timeout: float | None = None,
    ) -> GameRecord:
        """Seats four connected bots (by seat) and plays one game; faults count toward disqualification."""
        players: list[RemotePlayer] = []
        try:
            for bot in bots:
                players.append(await self.claim(bot, timeout))
            record = await play_game(
                self.settings.rules, players, deals, table_id=table_id, game_id=game_id,
                game_number=game_number, first_dealer=first_dealer, settings=self.settings.table,
            )
        finally:
            for player in players:
                await self.lobby.release(player.session)
        for seat, bot in enumerate(bots):
            faults = sum(1 for f in record.faults if f.seat == seat)
            if faults and self.lobby.count_faults(bot, faults):
                await self.disqualify(bot)
        return record

    async def disqualify(self, bot: str) -> None:
        """Ends the bot's sessions with PERMISSION_DENIED; later Hellos are refused."""
        reason = self.lobby.disqualified.setdefault(bot, "disqualified by the organiser")
        for session in self.lobby.live(bot):
            await session.notice(pb.NOTICE_KIND_DISQUALIFIED, 0, "", f"{bot} is disqualified: {reason}")
            session.kick(grpc.StatusCode.PERMISSION_DENIED, f"{bot} is disqualified: {reason}")

