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
        run(LowestBot)

``run()`` reads ``--arena HOST:PORT --token T`` (see ``--help``), connects, answers every request
on the stream (several tables at once are fine: each request carries its own view), reconnects
with backoff when the connection drops, and stops when the arena ends the tournament or refuses
the bot. The ``view`` is a :class:`~arena.net.wire.RemoteView` (a :class:`~arena.core.views.View`)
with the same attributes as the in-process :class:`~arena.core.views.SeatView`, so the same class
plays both ways.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc

from arena.core.cards import Card
from arena.core.views import View
from arena.net.wire import view_from_proto
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

__all__ = ["Bot", "Refused", "parse_args", "play_session", "run"]

PROTOCOL_VERSION = 1

# Refusals that a retry cannot mend: the bot stops instead of reconnecting.
_FINAL = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
}


class Bot:
    """Base class of a bot: override :meth:`call` and :meth:`play`; the rest is optional."""

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

    def on_notice(self, notice: pb.Notice) -> None:
        """Called for every notice; prints it to stderr by default."""
        kind = pb.NoticeKind.Name(notice.kind)
        print(f"[{self.name}] arena notice {kind}: {notice.detail}", file=sys.stderr)


class Refused(Exception):
    """The arena refused the bot for a reason a retry cannot mend (bad token, disqualified, ...)."""


def _wants_events(bot: Bot) -> bool:
    return type(bot).on_event is not Bot.on_event


async def play_session(
    bot: Bot, address: str, token: str, *, credentials: grpc.ChannelCredentials | None = None,
) -> None:
    """Plays one session: connect, hello, answer until the stream ends. Raises on a refusal."""
    options = [("grpc.keepalive_time_ms", 20000), ("grpc.keepalive_permit_without_calls", 1)]
    if credentials is None:
        channel = grpc.aio.insecure_channel(address, options=options)
    else:
        channel = grpc.aio.secure_channel(address, credentials, options=options)
    async with channel:
        stub = pb_grpc.ArenaStub(channel)
        stream = stub.Connect()
        await stream.write(pb.ConnectRequest(hello=pb.Hello(
            bot_name=bot.name, bot_version=str(bot.version), token=token, protocol_version=PROTOCOL_VERSION,
            events=_wants_events(bot),
        )))
        while True:
            msg = await stream.read()
            if msg is grpc.aio.EOF:
                return
            kind = msg.WhichOneof("kind")
            if kind == "call_request":
                await _answer(bot, stream, msg.call_request, calling=True)
            elif kind == "play_request":
                await _answer(bot, stream, msg.play_request, calling=False)
            elif kind == "event":
                bot.on_event(msg.event)
            elif kind == "notice":
                bot.on_notice(msg.notice)
            elif kind == "refusal":
                raise Refused(f"{pb.RefusalReason.Name(msg.refusal.reason)}: {msg.refusal.detail}")


async def _answer(bot: Bot, stream: object, request: pb.CallRequest | pb.PlayRequest, *, calling: bool) -> None:
    try:
        if calling:
            view = view_from_proto(request.view, request.table_id, legal_calls=request.legal_calls,
                                   retry_reason=request.retry_reason)
            answer = pb.ConnectRequest(call=pb.CallAnswer(request_id=request.request_id, call=int(bot.call(view))))
        else:
            view = view_from_proto(request.view, request.table_id, legal_cards=request.legal_cards,
                                   retry_reason=request.retry_reason)
            card = str(bot.play(view))
            answer = pb.ConnectRequest(play=pb.PlayAnswer(request_id=request.request_id, card=card))
    except Exception:  # a bug in the bot: say so, and let the arena's deadline take its course
        traceback.print_exc()
        return
    await stream.write(answer)  # type: ignore[attr-defined]


def parse_args(argv: Sequence[str] | None = None, description: str = "A Callbreak bot.") -> argparse.Namespace:
    """The bot command line: ``--arena``, ``--token`` and friends."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--arena", required=True, metavar="HOST:PORT", help="the arena's address")
    parser.add_argument(
        "--token", default=os.environ.get("CALLBREAK_TOKEN", ""),
        help="the token the organiser gave this bot (default: $CALLBREAK_TOKEN)",
    )
    parser.add_argument("--name", default=None, help="the name to announce (default: the bot's own)")
    parser.add_argument("--seed", type=int, default=0, help="seed for bots that use randomness (default: 0)")
    parser.add_argument("--tls-ca", type=Path, default=None, metavar="FILE",
                        help="connect with TLS, trusting this PEM root certificate")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the bot's class (repeatable); numbers and true/false are converted")
    parser.add_argument("--once", action="store_true", help="do not reconnect when the connection drops")
    parser.add_argument("--max-backoff", type=float, default=10.0, help="longest wait between reconnects, s")
    return parser.parse_args(argv)


def _options(items: Sequence[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--option {item!r}: write KEY=VALUE, like aggression=0.5")
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


def run(factory: Callable[..., Bot], argv: Sequence[str] | None = None) -> int:
    """Runs a bot from the command line until the arena ends the tournament; returns the exit status."""
    args = parse_args(argv, (factory.__doc__ or "A Callbreak bot.").strip().splitlines()[0])
    options = _options(args.option)
    try:
        bot = factory(seed=args.seed, **options)
    except TypeError:  # a factory that takes no seed
        bot = factory(**options)
    if args.name:
        bot.name = args.name
    credentials = None
    if args.tls_ca is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=args.tls_ca.read_bytes())
    try:
        return asyncio.run(_keep_playing(bot, args, credentials))
    except KeyboardInterrupt:
        return 1


async def _keep_playing(bot: Bot, args: argparse.Namespace, credentials: grpc.ChannelCredentials | None) -> int:
    backoff = 0.25
    parent = os.getppid()
    while True:
        if os.getppid() != parent:
            # Whoever started the bot (an arena that launched it, a shell) is gone: nobody is left
            # to play for, so stop instead of reconnecting for ever.
            print(f"[{bot.name}] the process that started this bot has ended; stopping", file=sys.stderr)
            return 1
        try:
            await play_session(bot, args.arena, args.token, credentials=credentials)
            return 0  # the arena closed the stream normally: the tournament is over
        except Refused as err:
            print(f"[{bot.name}] refused by the arena: {err}", file=sys.stderr)
            return 1
        except grpc.aio.AioRpcError as err:
            if err.code() in _FINAL:
                print(f"[{bot.name}] the arena ended the session: {err.code().name}: {err.details()}",
                      file=sys.stderr)
                return 1
            if args.once:
                print(f"[{bot.name}] connection lost: {err.code().name}", file=sys.stderr)
                return 1
            print(f"[{bot.name}] connection lost ({err.code().name}); reconnecting in {backoff:.2f} s",
                  file=sys.stderr)
        await asyncio.sleep(backoff)
        backoff = min(args.max_backoff, backoff * 2)
