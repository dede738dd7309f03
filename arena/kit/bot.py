"""The Python bot kit: write ``call(view)`` and ``play(view)``, then ``run()``.

A whole bot::

    from arena.botkit import Bot, run

    class LowestBot(Bot):
        name = "lowest"

        def call(self, view):
            return view.legal_calls[0]

        def play(self, view):
            return view.legal.cards()[-1]

    if __name__ == "__main__":
        raise SystemExit(run(LowestBot))

The ``view`` is a :class:`~arena.kit.view.RemoteView` (a :class:`~arena.core.views.View`) with the
same attributes as the in-process :class:`~arena.core.views.SeatView`, so the same class plays both
ways; ``view.deadline_ms`` is the time the arena gives the decision (0: no limit), for a bot that
budgets its thinking. ``run(factory)`` reads the command line (``--help`` lists it all; the token comes from
``$CALLBREAK_TOKEN`` unless ``--token`` is given), then keeps the bot connected until the tournament
is over. The hello names the bot only when ``--name`` says how the organiser calls it: the arena
refuses a token that belongs to a bot of another name. Spaces and line ends around the token are
dropped (a token read from a file often ends with a newline); no token holds them.

Instances and threads. ``factory`` (usually the class) is called with ``seed=`` (when it takes a
seed) and the ``--option`` values. It is called once at start-up, to check the options and to
read the bot's name, version and whether it overrides ``on_event``, and then once for every game
the arena seats the bot in: each (table, seat, game) gets a FRESH instance, so an instance may
keep state in ``self`` without locks. Each such instance belongs to one worker thread, which makes
it and then calls its ``call``, ``play``, ``on_event`` and ``on_notice`` one at a time, in the
order the arena sent the messages. Games run in parallel threads: a slow decision at one table
never delays the answer at another table. (The threads share one interpreter lock, so pure Python
arithmetic still takes turns; waiting, sleeping and most native code do not.) The answer is
computed in the worker thread and written to the stream by the event loop. An instance is dropped
when its game ends: at the game's GameEnd event, when a request or event of a later game comes
for the same table and seat, when the session ends, and, least recently used first, beyond
``max(8, 4 * max_tables)`` live games. Notices about a table go to the instance of the latest game
at that table; the others to the start-up instance, in a worker thread of their own.
``play_session(bot, ...)`` accepts such a zero-argument factory too; given a single :class:`Bot`
instance instead, it makes all the calls to it from one worker thread, one at a time (safe for an
instance with state, but then a slow decision delays every other table).

A ``call``, ``play`` or ``on_event`` that raises has its traceback printed to stderr, and the bot
plays on. When ``call`` or ``play`` raised (or the instance for the game could not be made), the kit
tells the arena at once with a ``BotError`` (the exception's type and message, and the file and line
of the bot's own code where it was raised: :func:`~arena.players.local.raised_at`); the arena
records a ``crash`` fault with them, plays its fallback for that decision and asks the bot again at
its next one. An arena that does not read ``BotError`` (``Welcome.takes_bot_errors`` unset: an older
one) is sent none; that decision is then left unanswered and the arena's deadline takes its course.

Connecting and stopping. Every connection and every failure prints one line to stderr, starting
with ``[name]``. ``run()`` returns the exit status:

- 0: the arena ended the stream with status OK (the tournament is over); or the bot was launched
  by an arena (below) that has ended.
- 1: the arena refused the bot (bad or missing token, disqualified, unsupported protocol), or ended
  the stream with UNAUTHENTICATED, PERMISSION_DENIED, FAILED_PRECONDITION or INVALID_ARGUMENT;
  with ``--once``, any failure to connect or lost connection; Ctrl-C.
- 2: a configuration error that retrying cannot mend: a bad command line or ``--option``, a factory
  that rejects the options, a ``--tls-ca`` file that cannot be read or holds no PEM certificate,
  a ``--tls-cert``/``--tls-key`` pair that is not a certificate and its key, a plaintext bot
  against an arena that speaks TLS, a failed TLS handshake (the arena does not speak TLS, or the
  CA file did not sign its certificate, or the certificate does not name the host), an arena that
  asks for a client certificate (mutual TLS) and got none, or one its CA did not sign.

Anything else (the arena unreachable, the connection broken, the arena restarting, a refusal for
ARENA_FULL or DUPLICATE_SESSION, any other status) means: reconnect, after 0.5 s, then twice as
long each time up to ``--max-backoff`` seconds, for ever; the wait starts again from 0.5 s after a
session the arena welcomed. Before the Welcome a failure reads ``cannot reach the arena at
HOST:PORT: <reason>; retrying in 0.5 s``, after it ``connection to the arena lost (<reason>);
reconnecting in 0.5 s``. The channel sends keepalive pings every 30 s, so that NAT boxes keep an
idle stream open; an arena accepts them no more often than every 10 s, and if it closes the
connection for too many pings the line says so, and the kit reconnects.

Launched by an arena. An arena that starts a bot process sets ``CALLBREAK_LAUNCHED=1`` and connects
the bot's standard input to a pipe it holds open for as long as it runs. With that variable set,
``run()`` reads its standard input in a daemon thread, discarding what it reads, and stops (status
0, one line: "the arena that launched this bot has ended; stopping") when it reaches end of file,
even while disconnected and waiting to retry. Without it, the kit never reads standard input.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import inspect
import os
import queue
import re
import socket
import ssl
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc

from arena.core.cards import Card
from arena.core.views import View
from arena.errors import ArenaError
from arena.kit.view import view_from_proto
from arena.players.local import raised_at
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

__all__ = ["Bot", "Refused", "parse_args", "play_session", "run"]

PROTOCOL_VERSION = 1

ERROR_TEXT_LIMIT = 1000
"""Characters of an exception's message a ``BotError`` carries (the arena keeps fewer): a message of
megabytes would make the whole message too large for the stream."""

KEEPALIVE_MS = 30_000
"""How often the channel pings an idle connection; arenas refuse pings more often than every 10 s."""

FIRST_BACKOFF = 0.5
"""Seconds before the first reconnection attempt; it doubles with each failure, up to ``--max-backoff``."""

# Statuses that end the session for a reason a retry cannot mend: the bot stops.
_FINAL = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
}

# Refusals that say "not now" rather than "never": the bot tries again later.
_PASSING_REFUSALS = {pb.REFUSAL_REASON_ARENA_FULL, pb.REFUSAL_REASON_DUPLICATE_SESSION}


class Bot:
    """Base class of a bot: override :meth:`call` and :meth:`play`; the rest is optional.

    Over the network the kit calls these methods from a worker thread, never two at a time on one
    instance.
    """

    name = "bot"
    version = "0"

    def call(self, view: View) -> int:
        """How many tricks to call: a value of ``view.legal_calls``."""
        raise NotImplementedError

    def play(self, view: View) -> Card | str:
        """Which card to play: one of ``view.legal``."""
        raise NotImplementedError

    def on_event(self, event: pb.Event) -> None:
        """Called for every event when overridden (the kit then asks the arena for events)."""

    @property
    def wants_events(self) -> bool:
        """True when the class overrides :meth:`on_event` (an arena asks ``wants_events`` of any bot)."""
        return type(self).on_event is not Bot.on_event

    def on_notice(self, notice: pb.Notice) -> None:
        """Called for every notice; prints it to stderr by default."""
        kind = _enum_name(pb.NoticeKind, notice.kind)
        print(f"[{self.name}] arena notice {kind}: {notice.detail}", file=sys.stderr, flush=True)


class Refused(ArenaError):
    """The arena refused the bot; ``reason`` is the ``RefusalReason`` value, ``detail`` its words."""

    def __init__(self, reason: int, detail: str) -> None:
        super().__init__(f"{_enum_name(pb.RefusalReason, reason)}: {detail}")
        self.reason = reason
        self.detail = detail


def _enum_name(enum: Any, value: int) -> str:
    """The name of a protocol enum value, or its number when this kit is older than the arena."""
    try:
        return str(enum.Name(value))
    except ValueError:
        return str(value)


# --- one session -----------------------------------------------------------------------------

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

    def __init__(self, session: _Session, request: pb.CallRequest | pb.PlayRequest, *, calling: bool) -> None:
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


class _Session:
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
        session = _Session(bot, None, name=name)
    else:
        session = _Session(bot(), bot, name=name)
    await session.run(address, token, credentials)


# --- the command line ------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None, description: str = "A Callbreak bot.") -> argparse.Namespace:
    """The bot command line: ``--arena``, ``--token`` and friends."""
    parser = argparse.ArgumentParser(
        description=description,
        epilog="Exit status: 0 when the tournament is over (or the arena that launched the bot has ended), "
               "1 when the arena refuses the bot for good, 2 on a configuration error (bad options, "
               "TLS mismatch). Other failures are retried for ever, unless --once.",
    )
    parser.add_argument("--arena", required=True, metavar="HOST:PORT", help="the arena's address")
    parser.add_argument(
        "--token", default=os.environ.get("CALLBREAK_TOKEN", ""),
        help="the token the organiser gave this bot (default: $CALLBREAK_TOKEN, the better place: a command "
             "line is visible to every user of the machine)",
    )
    parser.add_argument("--name", default=None,
                        help="the name the organiser gave this bot, sent in the hello: the arena then refuses a "
                             "token of another bot (default: no name is sent; the logs use the bot's own)")
    parser.add_argument("--seed", type=int, default=0, help="seed for bots that use randomness (default: 0)")
    parser.add_argument("--tls-ca", type=Path, default=None, metavar="FILE",
                        help="connect with TLS, trusting this PEM root certificate (the organiser's CA)")
    parser.add_argument("--tls-cert", type=Path, default=None, metavar="FILE",
                        help="this bot's client certificate (PEM), for an arena that asks for one (mutual TLS); "
                             "with --tls-key and --tls-ca")
    parser.add_argument("--tls-key", type=Path, default=None, metavar="FILE",
                        help="the private key (PEM) of --tls-cert")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the bot's class (repeatable); numbers and true/false are converted")
    parser.add_argument("--once", action="store_true",
                        help="stop (status 1) instead of reconnecting when the connection fails or drops")
    parser.add_argument("--max-backoff", type=float, default=10.0, metavar="S",
                        help="longest wait between reconnection attempts, in seconds (default: 10)")
    return parser.parse_args(argv)


class _ConfigError(Exception):
    """A mistake in how the bot was started: one line, exit status 2."""


def _options(items: Sequence[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise _ConfigError(f"--option {item!r}: write KEY=VALUE, like aggression=0.5")
        value: object = text
        if text.lower() in ("true", "false"):
            value = text.lower() == "true"
        else:
            for kind in (int, float):
                try:
                    value = kind(text)
                    break
                except ValueError:
                    pass
        options[key] = value
    return options


def _maker(factory: Callable[..., Bot], seed: int, options: dict[str, object], name: str | None) -> Callable[[], Bot]:
    """A zero-argument factory: ``factory`` with the seed (when it takes one), the options and the name."""
    try:
        params = inspect.signature(factory).parameters.values()
        takes_seed = any(p.name == "seed" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    except (TypeError, ValueError):  # no signature to read (a builtin): try the seed
        takes_seed = True
    kwargs = {"seed": seed, **options} if takes_seed else dict(options)

    def make() -> Bot:
        bot = factory(**kwargs)
        if name:
            bot.name = name
        return bot

    return make


def _read(option: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise _ConfigError(f"cannot read {option} {path}: {err.strerror or err}") from None


def _credentials(
    path: Path | None, cert: Path | None = None, key: Path | None = None,
) -> grpc.ChannelCredentials | None:
    """TLS credentials from ``--tls-ca`` (and the client certificate ``--tls-cert``/``--tls-key``), or ``None``."""
    if (cert is None) != (key is None):
        raise _ConfigError("--tls-cert and --tls-key go together: the client certificate and its private key")
    if cert is not None and path is None:
        raise _ConfigError("--tls-cert needs --tls-ca too: the organiser's CA certificate, to check the arena's")
    if path is None:
        return None
    pem = _read("--tls-ca", path)
    try:
        ssl.create_default_context(cadata=pem.decode("ascii"))
    except (ssl.SSLError, UnicodeDecodeError, ValueError):
        raise _ConfigError(f"--tls-ca {path} holds no PEM certificate (a file starting with "
                           "-----BEGIN CERTIFICATE-----)") from None
    if cert is None or key is None:
        return grpc.ssl_channel_credentials(root_certificates=pem)
    chain, private_key = _read("--tls-cert", cert), _read("--tls-key", key)
    try:
        ssl.create_default_context().load_cert_chain(cert, key)
    except (ssl.SSLError, ValueError):
        raise _ConfigError(f"--tls-cert {cert} and --tls-key {key} are not a PEM certificate and its private "
                           "key") from None
    return grpc.ssl_channel_credentials(root_certificates=pem, private_key=private_key, certificate_chain=chain)


def _say(name: str, line: str) -> None:
    print(f"[{name}] {line}", file=sys.stderr, flush=True)


def run(factory: Callable[..., Bot], argv: Sequence[str] | None = None) -> int:
    """Runs a bot from the command line until the arena ends the tournament; returns the exit status."""
    args = parse_args(argv, (factory.__doc__ or "A Callbreak bot.").strip().splitlines()[0])
    label = args.name or str(getattr(factory, "name", "bot"))
    try:
        make = _maker(factory, args.seed, _options(args.option), args.name)
        try:
            first = make()
        except Exception as err:
            raise _ConfigError(f"cannot make the bot: {type(err).__name__}: {err}") from None
        label = first.name
        credentials = _credentials(args.tls_ca, args.tls_cert, args.tls_key)
    except _ConfigError as err:
        _say(label, str(err))
        return 2
    try:
        return asyncio.run(_Runner(first, make, args, credentials).keep_playing())
    except KeyboardInterrupt:
        return 1


# --- staying connected -----------------------------------------------------------------------


class _Stop(Exception):
    """The bot must stop now with ``status``; the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Runner:
    """Connects, plays, and decides after each session whether to stop or to try again."""

    def __init__(
        self, first: Bot, make: Callable[[], Bot], args: argparse.Namespace,
        credentials: grpc.ChannelCredentials | None,
    ) -> None:
        self.first = first
        self.make = make
        self.args = args
        self.credentials = credentials
        self.name = first.name
        self.address: str = args.arena

    async def keep_playing(self) -> int:
        launched = asyncio.Event()
        if os.environ.get("CALLBREAK_LAUNCHED") == "1":
            _watch_stdin(asyncio.get_running_loop(), launched)
        stopper = asyncio.ensure_future(launched.wait())
        backoff = FIRST_BACKOFF
        try:
            while True:
                session = _Session(self.first, self.make, self._welcomed, name=self.args.name or "")
                attempt = asyncio.ensure_future(session.run(self.args.arena, self.args.token, self.credentials))
                await asyncio.wait({attempt, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if not attempt.done():
                    attempt.cancel()
                    await asyncio.wait({attempt})
                    _say(self.name, "the arena that launched this bot has ended; stopping")
                    return 0
                if session.welcome is not None:
                    backoff = FIRST_BACKOFF
                try:
                    what = await self._outcome(session, attempt)
                except _Stop as stop:
                    _say(self.name, str(stop))
                    return stop.status
                if self.args.once:
                    _say(self.name, f"{what}; not {'reconnecting' if session.welcome else 'retrying'} (--once)")
                    return 1
                _say(self.name, f"{what}; {'reconnecting' if session.welcome else 'retrying'} in {backoff:.1f} s")
                await asyncio.wait({stopper}, timeout=backoff)
                if stopper.done():
                    _say(self.name, "the arena that launched this bot has ended; stopping")
                    return 0
                backoff = min(self.args.max_backoff, backoff * 2)
        finally:
            stopper.cancel()

    def _welcomed(self, welcome: pb.Welcome) -> None:
        _say(self.name, f"connected to the arena at {self.address} (session {welcome.session_id}, "
                        f"up to {welcome.max_tables} tables at once)")

    async def _outcome(self, session: _Session, attempt: asyncio.Future[None]) -> str:
        """What happened, in words, when it is worth another try; raises :class:`_Stop` otherwise."""
        err = attempt.exception()
        if err is None:
            raise _Stop(0, "the arena ended the stream: the tournament is over; stopping")
        if isinstance(err, Refused):
            if err.reason in _PASSING_REFUSALS:
                return f"refused by the arena for now: {err}"
            raise _Stop(1, f"refused by the arena: {err}; stopping")
        if not isinstance(err, grpc.aio.AioRpcError):
            raise err
        code, details = err.code(), err.details() or ""
        if code in _FINAL:
            raise _Stop(1, f"the arena ended the session with {code.name}: {details}; stopping")
        if "too many pings" in details.lower() or "too_many_pings" in details.lower():
            return ("the arena closed the connection because this bot sent keepalive pings too often: "
                    "ping at most every 10 s")
        self._check_tls(details)
        if (session.welcome is None and self.credentials is None and _closed_at_once(details)
                and await _in_daemon_thread(lambda: _speaks_tls(self.address))):
            raise _Stop(2, f"the arena at {self.address} speaks TLS: run the bot with --tls-ca FILE "
                           "(the organiser's CA certificate)")
        if (session.welcome is None and self.credentials is not None and _closed_at_once(details)
                and await _in_daemon_thread(lambda: _refuses_client(self.address, self.args))):
            cert = self.args.tls_cert
            if cert is None:
                raise _Stop(2, f"the arena at {self.address} asks for a client certificate (mutual TLS): run the "
                               "bot with --tls-cert FILE --tls-key FILE (the certificate and key from the organiser)")
            raise _Stop(2, f"the arena at {self.address} did not accept the client certificate {cert}: it is not "
                           "signed by the CA the arena trusts; ask the organiser for the right certificate")
        reason = _reason(code, details)
        if session.welcome is None:
            return f"cannot reach the arena at {self.address}: {reason}"
        return f"connection to the arena lost ({reason})"

    def _check_tls(self, details: str) -> None:
        """Raises :class:`_Stop` (status 2) when the TLS handshake failed: only the operator can fix that."""
        lower = details.lower()
        if "handshake failed" not in lower and "hostname verification" not in lower:
            return
        ca, where = self.args.tls_ca, f"the arena at {self.address}"
        if "wrong_version_number" in lower:
            raise _Stop(2, f"the TLS handshake failed: {where} does not speak TLS: run the bot without --tls-ca")
        if "certificate_verify_failed" in lower:
            raise _Stop(2, f"the TLS handshake failed: {ca} is not the CA that signed the certificate of {where}: "
                           "ask the organiser for the right CA certificate")
        if "hostname verification" in lower:
            raise _Stop(2, f"the TLS handshake failed: the certificate of {where} does not name "
                           f"{_host_port(self.address)[0]}: use the host name the organiser gave")
        raise _Stop(2, f"the TLS handshake failed: {where} does not speak TLS (drop --tls-ca), or {ca} is not "
                       f"the CA that signed its certificate ({_reason(grpc.StatusCode.UNAVAILABLE, details)})")


def _closed_at_once(details: str) -> bool:
    """The connection was closed before any HTTP/2 frame: what a TLS server does to a plaintext client."""
    return _reason(grpc.StatusCode.UNAVAILABLE, details) == "the connection was closed"


def _reason(code: grpc.StatusCode, details: str) -> str:
    """grpc's account of a failure, in a few words."""
    text = details.rpartition("last error: ")[2]
    text = re.sub(r"^[A-Z_]+: ", "", text)  # the status of the last attempt
    text = re.sub(r"^(ipv4|ipv6|unix|unix-abstract):\S+: ", "", text)  # the address the user already knows
    lower = text.lower()
    if "connection refused" in lower:
        text = "connection refused"
    elif "server shutdown" in lower or lower == "cancelling all calls":
        text = "the arena shut down"
    elif lower == "socket closed":
        text = "the connection was closed"
    elif lower.startswith("errors resolving"):
        text = "the host name does not resolve" + (f" ({text.rpartition(': ')[2].rstrip(']')})" if ": " in text else "")
    if not text:
        return str(code.name)
    return text if code is grpc.StatusCode.UNAVAILABLE else f"{code.name}: {text}"


def _host_port(address: str) -> tuple[str, int]:
    """The host and port of a gRPC target such as ``host:port``, ``[::1]:port`` or ``dns:///host:port``."""
    target = address.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, sep, port = target.rpartition(":")
        if not sep:
            host, port = target, ""
    try:
        return host, int(port) if port else 443  # gRPC's default port
    except ValueError:
        return host, 0


def _speaks_tls(address: str, timeout: float = 2.0) -> bool:
    """True when a TLS handshake (certificate unchecked) succeeds at ``address``."""
    host, port = _host_port(address)
    if not host or not port:
        return False
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw, context.wrap_socket(
            raw, server_hostname=host
        ):
            return True
    except (OSError, ValueError):
        return False


def _refuses_client(address: str, args: argparse.Namespace, timeout: float = 2.0) -> bool:
    """True when the arena completes a TLS handshake with this bot's CA and client certificate (if any)
    and then closes the connection at once: it turned the client certificate (or its absence) down.
    An arena that accepts the client sends its HTTP/2 settings first."""
    host, port = _host_port(address)
    if not host or not port:
        return False
    try:
        context = ssl.create_default_context(cafile=str(args.tls_ca))
        context.check_hostname = False  # a wrong host name fails the gRPC handshake itself, with its own line
        context.set_alpn_protocols(["h2"])
        if args.tls_cert is not None:
            context.load_cert_chain(args.tls_cert, args.tls_key)
        with socket.create_connection((host, port), timeout=timeout) as raw, context.wrap_socket(
            raw, server_hostname=host
        ) as tls:
            try:
                return tls.recv(1) == b""
            except ssl.SSLError as err:  # a TLS 1.3 server may say why, in an alert, after the handshake
                return "ALERT" in str(err.reason or "").upper()
    except (OSError, ValueError):  # ssl.SSLError is an OSError: the handshake failed for another reason
        return False


async def _in_daemon_thread(work: Callable[[], bool]) -> bool:
    """``work()`` in a daemon thread, awaited: unlike the default executor, it never delays exit."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bool] = loop.create_future()

    def settle(result: bool) -> None:
        if not done.done():
            done.set_result(result)

    def target() -> None:
        result = work()
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(settle, result)

    threading.Thread(target=target, name="callbreak-probe", daemon=True).start()
    return await done


def _watch_stdin(loop: asyncio.AbstractEventLoop, ended: asyncio.Event) -> None:
    """Sets ``ended`` when standard input reaches end of file: the launching arena has gone."""

    def wait_for_eof() -> None:
        try:
            fd = sys.stdin.fileno()
            while os.read(fd, 65536):
                pass
        except (OSError, ValueError, AttributeError):  # no standard input at all: nobody holds it open
            pass
        with contextlib.suppress(RuntimeError):  # a closed loop: the bot is stopping anyway
            loop.call_soon_threadsafe(ended.set)

    threading.Thread(target=wait_for_eof, name="callbreak-stdin", daemon=True).start()
