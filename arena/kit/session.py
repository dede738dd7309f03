"""A session with the arena over gRPC: the hello, then each request and event handed to the bot's instance.

Instances and threads. ``play_session(bot, ...)`` takes a zero-argument factory or a single
:class:`~arena.kit.bot.Bot`. With a factory (:func:`arena.kit.runner.run` makes one of the bot's class,
called with ``seed=`` when it takes a seed, and the ``--option`` values), the factory is called once
more for the hello, to read the bot's name, version and whether it overrides ``on_event``, and then
once for every game the arena seats the bot in: each (table, seat, game) gets a FRESH instance, so an
instance may keep state in ``self`` without locks. Each such instance belongs to one worker thread,
which makes it and then calls its ``call``, ``play``, ``on_event`` and ``on_notice`` one at a time, in
the order the arena sent the messages. Games run in parallel threads: a slow decision at one table
never delays the answer at another table. (The threads share one interpreter lock, so pure Python
arithmetic still takes turns; waiting, sleeping and most native code do not.) The answer is
computed in the worker thread and written to the stream by the event loop. An instance is dropped
when its game ends: at the game's GameEnd event, when a request or event of a later game comes
for the same table and seat, when the session ends, and, least recently used first, beyond
``max(8, 4 * max_tables)`` live games. Notices about a table go to the instance of the latest game
at that table; the others to the start-up instance, in a worker thread of their own. Given a single
:class:`~arena.kit.bot.Bot` instance instead, the session makes all the calls to it from one worker
thread, one at a time (safe for an instance with state, but then a slow decision delays every other
table).

The channel sends keepalive pings every :data:`KEEPALIVE_MS` milliseconds, so that NAT boxes keep an
idle stream open.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import queue
import sys
import threading
import traceback
from collections.abc import Callable

import grpc

from arena.kit.bot import Bot, Refused
from arena.kit.view import view_from_proto
from arena.players.tracebacks import raised_at
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

__all__ = ["ERROR_TEXT_LIMIT", "KEEPALIVE_MS", "PROTOCOL_VERSION", "BotSession", "play_session"]

PROTOCOL_VERSION = 1

ERROR_TEXT_LIMIT = 1000
"""Characters of an exception's message a ``BotError`` carries (the arena keeps fewer): a message of
megabytes would make the whole message too large for the stream."""

KEEPALIVE_MS = 30_000
"""How often the channel pings an idle connection; arenas refuse pings more often than every 10 s."""


_Key = tuple[str, int, str]
"""(table_id, seat, game_id): what one bot instance plays."""


class _Lane:
    """One daemon thread and the bot instance that only it calls, running jobs in order.

    A daemon thread, so a decision that never returns cannot keep the process alive after the
    kit has decided to stop.
    """

    def __init__(self, name: str, make: Callable[[], Bot] | None, bot: Bot | None = None) -> None:
        self._make = make
        self._bot = bot
        self._jobs: queue.SimpleQueue[Callable[[Bot], None] | None] = queue.SimpleQueue()
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def submit(self, job: Callable[[Bot], None]) -> None:
        self._jobs.put(job)

    def close(self) -> None:
        """Ends the thread once the jobs already submitted are done."""
        self._jobs.put(None)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                if self._bot is None:
                    assert self._make is not None
                    self._bot = self._make()
                job(self._bot)
            except BaseException as err:  # a bug in the bot, SystemExit included: say so, and play on
                traceback.print_exc()
                sys.stderr.flush()
                if isinstance(job, _Decision):  # a decision the arena waits for: tell it at once
                    job.failed(err)


class _Decision:
    """A job that answers one request: the bot's call or card, or, when it raises, a ``BotError``."""

    def __init__(self, session: BotSession, request: pb.CallRequest | pb.PlayRequest, *, calling: bool) -> None:
        self.session = session
        self.request = request
        self.calling = calling

    def __call__(self, bot: Bot) -> None:
        session, request = self.session, self.request
        if session.closed:
            return
        if self.calling:
            view = view_from_proto(request.view, request.table_id, legal_calls=request.legal_calls,
                                   retry_reason=request.retry_reason, deadline_ms=request.deadline_ms)
            answer = pb.ConnectRequest(call=pb.CallAnswer(request_id=request.request_id, call=int(bot.call(view))))
        else:
            view = view_from_proto(request.view, request.table_id, legal_cards=request.legal_cards,
                                   retry_reason=request.retry_reason, deadline_ms=request.deadline_ms)
            answer = pb.ConnectRequest(play=pb.PlayAnswer(request_id=request.request_id, card=str(bot.play(view))))
        session.post(answer)

    def failed(self, error: BaseException) -> None:
        """The bot raised ``error`` on this request: a ``BotError``, to an arena that reads it."""
        welcome = self.session.welcome
        if welcome is None or not welcome.takes_bot_errors:
            return  # an older arena would take it for a malformed message: its deadline takes its course
        try:
            message = str(error)
        except Exception:  # an exception whose str() fails still has a type
            message = ""
        file, line = raised_at(error) or ("", 0)
        self.session.post(pb.ConnectRequest(error=pb.BotError(
            request_id=self.request.request_id, error_type=type(error).__name__[:ERROR_TEXT_LIMIT],
            message=message[:ERROR_TEXT_LIMIT], file=file[-ERROR_TEXT_LIMIT:], line=line,
        )))


def _event_job(event: pb.Event) -> Callable[[Bot], None]:
    return lambda bot: bot.on_event(event)


def _notice_job(notice: pb.Notice) -> Callable[[Bot], None]:
    return lambda bot: bot.on_notice(notice)


class BotSession:
    """One stream: hello, then requests and events handed to lanes, answers written back in order."""

    def __init__(
        self, hello_bot: Bot, make: Callable[[], Bot] | None, on_welcome: Callable[[pb.Welcome], None] | None = None,
        name: str = "",
    ) -> None:
        self.hello_bot = hello_bot
        self.name = name
        """``Hello.bot_name``: the organiser's name for the bot, or "" (the token alone says which bot)."""
        self.make = make
        """A fresh instance per game; ``None``: every call goes to ``hello_bot`` in one lane."""
        self.on_welcome = on_welcome
        self.welcome: pb.Welcome | None = None
        self._games: collections.OrderedDict[_Key, _Lane] = collections.OrderedDict()
        self._current: dict[tuple[str, int], _Key] = {}
        self._latest_at_table: dict[str, _Key] = {}
        self._own: _Lane | None = None
        self.closed = False
        """True once the stream has ended: answers still being computed are dropped."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbox: asyncio.Queue[pb.ConnectRequest] = asyncio.Queue()

    async def run(self, address: str, token: str, credentials: grpc.ChannelCredentials | None) -> None:
        """Plays until the stream ends: returns on status OK, raises otherwise."""
        self._loop = asyncio.get_running_loop()
        options = [
            ("grpc.keepalive_time_ms", KEEPALIVE_MS),
            ("grpc.keepalive_permit_without_calls", 1),
            # Keep pinging an idle stream (between games) for as long as it lasts, not twice only
            # (grpc's default), so that NAT boxes keep the connection open.
            ("grpc.http2.max_pings_without_data", 0),
        ]
        if credentials is None:
            channel = grpc.aio.insecure_channel(address, options=options)
        else:
            channel = grpc.aio.secure_channel(address, credentials, options=options)
        bot = self.hello_bot
        try:
            async with channel:
                stream = pb_grpc.ArenaStub(channel).Connect()
                await stream.write(pb.ConnectRequest(hello=pb.Hello(
                    # A token copied from a file or a message often brings its newline along; no token
                    # holds spaces or line ends, so they are dropped rather than refused as a bad token.
                    bot_name=self.name, bot_version=str(bot.version), token=token.strip(),
                    protocol_version=PROTOCOL_VERSION, events=bot.wants_events,
                )))
                writer = asyncio.create_task(self._write(stream))
                try:
                    await self._read(stream)
                finally:
                    writer.cancel()
        finally:
            self._close()

    async def _read(self, stream: grpc.aio.StreamStreamCall) -> None:
        while True:
            msg = await stream.read()
            if msg is grpc.aio.EOF:
                code = await stream.code()
                if code is not grpc.StatusCode.OK:  # read() raises on these; kept in case it does not
                    raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), await stream.details())
                return
            kind = msg.WhichOneof("kind")
            if kind == "call_request" or kind == "play_request":
                request = getattr(msg, kind)
                key = (request.table_id, request.seat, request.view.game_id)
                self._lane(key).submit(_Decision(self, request, calling=kind == "call_request"))
            elif kind == "event":
                event = msg.event
                key = (event.table_id, event.seat, event.game_id)
                self._lane(key).submit(_event_job(event))
                if event.WhichOneof("kind") == "game_end":
                    self._drop(key)
            elif kind == "notice":
                notice = msg.notice
                table_key = self._latest_at_table.get(notice.table_id)
                lane = self._games.get(table_key) if table_key is not None else None
                if lane is None:
                    lane = self._session_lane()
                lane.submit(_notice_job(notice))
            elif kind == "welcome":
                self.welcome = msg.welcome
                if self.on_welcome is not None:
                    self.on_welcome(msg.welcome)
            elif kind == "refusal":
                raise Refused(msg.refusal.reason, msg.refusal.detail)

    async def _write(self, stream: grpc.aio.StreamStreamCall) -> None:
        # The only writer of the stream after the hello: grpc.aio calls belong to the event loop.
        while True:
            answer = await self._outbox.get()
            try:
                await stream.write(answer)
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
                return  # the stream is over; the reader reports why

    def post(self, answer: pb.ConnectRequest) -> None:
        """Hands an answer from a worker thread to the event loop, which writes it."""
        if self.closed or self._loop is None:
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: the session is over, nobody waits
            self._loop.call_soon_threadsafe(self._outbox.put_nowait, answer)

    def _session_lane(self) -> _Lane:
        if self._own is None:
            self._own = _Lane("callbreak-session", None, self.hello_bot)
        return self._own

    def _lane(self, key: _Key) -> _Lane:
        if self.make is None:
            return self._session_lane()
        table, seat, game = key
        self._latest_at_table[table] = key
        lane = self._games.get(key)
        if lane is not None:
            self._games.move_to_end(key)
            return lane
        previous = self._current.get((table, seat))
        if previous is not None and previous != key:
            self._drop(previous)  # a table plays one game at a time: that game is over
        self._current[(table, seat)] = key
        lane = self._games[key] = _Lane(f"callbreak-{table}-{seat}-{game}", self.make)
        max_tables = self.welcome.max_tables if self.welcome is not None else 1
        while len(self._games) > max(8, 4 * max_tables):
            self._drop(next(iter(self._games)))
        return lane

    def _drop(self, key: _Key) -> None:
        lane = self._games.pop(key, None)
        if lane is not None:
            lane.close()
        if self._current.get(key[:2]) == key:
            del self._current[key[:2]]

    def _close(self) -> None:
        self.closed = True
        for lane in self._games.values():
            lane.close()
        self._games.clear()
        if self._own is not None:
            self._own.close()


async def play_session(
    bot: Bot | Callable[[], Bot], address: str, token: str, *, credentials: grpc.ChannelCredentials | None = None,
    name: str = "",
) -> None:
    """Plays one session: returns when the arena ends the stream with OK; raises :class:`Refused`
    on a refusal and ``grpc.aio.AioRpcError`` when the stream fails.

    ``bot`` is a zero-argument factory (a fresh instance per game, called once more for the hello)
    or a single instance (then called from one worker thread, one decision at a time). ``name``, when
    given, is sent as ``Hello.bot_name`` and must be the organiser's name for the bot its token belongs to.
    """
    if isinstance(bot, Bot) or not callable(bot):
        session = BotSession(bot, None, name=name)
    else:
        session = BotSession(bot(), bot, name=name)
    await session.run(address, token, credentials)

