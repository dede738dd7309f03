"""Misbehaving bots for the fault tests, written straight against the protocol like a stranger's bot.

    python tests/fake_bots.py MODE --arena HOST:PORT --token T [--at N] [--sleep S] [--events] [--dump]

Modes (``--at N`` picks the Nth request, counting call and play requests from 1):

- ``good``: the first legal call or card, at once;
- ``slow``: answers the Nth request after sleeping ``--sleep`` seconds, the others at once;
- ``silent``: answers calls, never a play request;
- ``crash``: the process dies (``os._exit(3)``) on receiving the Nth request;
- ``illegal``: the first call is 99, again and again; at the first play where it holds a card it may
  not play, it answers that card, then cards it does not hold and text that is no card, until the
  arena gives up; everything else is good;
- ``garbage``: on the first request, sends a ConnectRequest with nothing set and a second Hello,
  then plays well;
- ``wrong-id``: answers the Nth request with its request_id + 1000 first, then correctly;
- ``wrong-kind``: answers the first play request with a CallAnswer first, then correctly;
- ``drop``: on the Nth request drops its connection without answering, waits ``--sleep`` seconds,
  connects again (a new stream and Hello) and plays well from then on (``dropped`` and ``hello`` lines);
- ``drop-idle``: drops its connection right after its first Welcome, before any request, waits
  ``--sleep`` seconds, connects again and plays well;
- ``flap``: drops its connection on every request, without answering, and connects again after
  ``--sleep`` seconds.

The bot connects once and never reconnects (except in the ``drop`` modes). It prints JSON lines to
stdout, for the tests to read: ``hello`` for each connection, ``welcome``, ``refusal``, every
``request`` (and what it ``answer``-ed), every ``notice``, every ``event`` kind, with ``--dump``
every message received (``raw``: base64 of its bytes), ``dropped`` when it drops its connection,
and at the end the stream's status (``end``). It exits 0 when the arena closed the stream with OK, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
from typing import Any

import grpc

from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

MODES = ("good", "slow", "silent", "crash", "illegal", "garbage", "wrong-id", "wrong-kind", "drop", "drop-idle",
         "flap")


class Drop(Exception):
    """Raised to drop the connection in the ``drop`` modes."""

# Every card text, to find one the bot does not hold.
DECK = [rank + suit for suit in "SHDC" for rank in "23456789TJQKA"]


def say(**fields: Any) -> None:
    """One JSON line on stdout, flushed at once (the test may read it while the bot runs)."""
    print(json.dumps(fields, sort_keys=True), flush=True)


class FakeBot:
    """The state of one misbehaving bot on one stream."""

    def __init__(self, args: argparse.Namespace, stream: Any) -> None:
        self.mode: str = args.mode
        self.at: int = args.at
        self.sleep: float = args.sleep
        self.stream = stream
        self.lock = asyncio.Lock()
        self.requests = 0
        """Requests received so far (calls and plays, retries included)."""
        self.fresh_calls = 0
        self.plays = 0
        self.illegal_target: int | None = None
        """For ``illegal``: the number of the fresh play request it misplays (with its retries)."""
        self.illegal_attempts = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.dropped = False

    async def send(self, msg: pb.ConnectRequest) -> None:
        async with self.lock:  # the slow mode answers from a task while the main loop answers others
            await self.stream.write(msg)

    async def answer(self, request_id: int, *, call: int | None = None, card: str | None = None) -> None:
        say(answer="call" if call is not None else "play", id=request_id, value=call if call is not None else card)
        if call is not None:
            await self.send(pb.ConnectRequest(call=pb.CallAnswer(request_id=request_id, call=call)))
        else:
            await self.send(pb.ConnectRequest(play=pb.PlayAnswer(request_id=request_id, card=card)))

    async def on_request(self, request: pb.CallRequest | pb.PlayRequest, calling: bool) -> None:
        self.requests += 1
        n = self.requests
        say(
            request="call" if calling else "play", n=n, id=request.request_id, table=request.table_id,
            seat=request.seat, deadline_ms=request.deadline_ms, time_bank_ms=request.time_bank_ms,
            retry_reason=request.retry_reason, trump=request.view.trump, hand=list(request.view.hand),
            legal=list(request.legal_calls) if calling else list(request.legal_cards), game=request.view.game_id,
            names=list(request.view.player_names),
        )
        if calling and not request.retry_reason:
            self.fresh_calls += 1
        if not calling and not request.retry_reason:
            self.plays += 1
        good_call = request.legal_calls[0] if calling else None
        good_card = None if calling else request.legal_cards[0]
        mode = self.mode
        if mode == "flap":
            raise Drop
        if mode == "drop" and n == self.at and not self.dropped:
            self.dropped = True
            raise Drop
        if mode == "crash" and n == self.at:
            say(crash=n)
            sys.stdout.flush()
            os._exit(3)
        if mode == "garbage" and n == 1:
            await self.send(pb.ConnectRequest())
            await self.send(pb.ConnectRequest(hello=pb.Hello(bot_name="again", token="x", protocol_version=1)))
        if mode == "wrong-id" and n == self.at:
            if calling:
                await self.answer(request.request_id + 1000, call=good_call)
            else:
                await self.answer(request.request_id + 1000, card=good_card)
        if mode == "wrong-kind" and not calling and self.plays == 1 and not request.retry_reason:
            await self.answer(request.request_id, call=1)
        if mode == "silent" and not calling:
            return
        if mode == "slow" and n == self.at:
            task = asyncio.create_task(self.late(request, good_call, good_card))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            return
        if mode == "illegal":
            if calling and self.fresh_calls == 1:
                await self.answer(request.request_id, call=99)
                return
            if not calling:
                card = self.illegal_card(request)
                if card is not None:
                    await self.answer(request.request_id, card=card)
                    return
        if calling:
            await self.answer(request.request_id, call=good_call)
        else:
            await self.answer(request.request_id, card=good_card)

    def illegal_card(self, request: pb.PlayRequest) -> str | None:
        """The wrong card for this request in ``illegal`` mode, or None to play well."""
        hand, legal = list(request.view.hand), list(request.legal_cards)
        if self.illegal_target is None and not request.retry_reason:
            held_not_legal = [c for c in hand if c not in legal]
            if held_not_legal:
                self.illegal_target = self.plays
        if self.illegal_target != self.plays:
            return None
        self.illegal_attempts += 1
        not_held = next(c for c in DECK if c not in hand)
        if self.illegal_attempts == 1:
            return next(c for c in hand if c not in legal)  # held, but the rules forbid it now
        return "XX" if self.illegal_attempts == 3 else not_held

    async def late(self, request: pb.CallRequest | pb.PlayRequest, call: int | None, card: str | None) -> None:
        await asyncio.sleep(self.sleep)
        await self.answer(request.request_id, call=call, card=card)


async def main(args: argparse.Namespace) -> int:
    bot: FakeBot | None = None
    while True:
        try:
            return await one_stream(args, bot)
        except Drop as drop:
            bot = drop.args[0] if drop.args else bot
            say(dropped=True)
            await asyncio.sleep(args.sleep)


async def one_stream(args: argparse.Namespace, bot: FakeBot | None) -> int:
    async with grpc.aio.insecure_channel(args.arena) as channel:
        stream = pb_grpc.ArenaStub(channel).Connect()
        if bot is None:
            bot = FakeBot(args, stream)
        else:
            bot.stream = stream
        await stream.write(pb.ConnectRequest(hello=pb.Hello(
            bot_name=args.name, bot_version="fake", token=args.token,
            protocol_version=args.protocol_version, events=args.events,
        )))
        say(hello=True)
        try:
            while True:
                msg = await stream.read()
                if msg is grpc.aio.EOF:
                    break
                if args.dump:
                    say(raw=base64.b64encode(msg.SerializeToString()).decode("ascii"))
                kind = msg.WhichOneof("kind")
                if kind == "welcome":
                    w = msg.welcome
                    say(welcome=w.session_id, max_retries=w.max_retries, deadline_ms=w.deadline_ms,
                        max_tables=w.max_tables, profile=w.rules.profile, grace_ms=w.reconnect_grace_ms)
                    if bot.mode == "drop-idle" and not bot.dropped:
                        bot.dropped = True
                        await asyncio.sleep(0.3)
                        raise Drop(bot)
                elif kind == "refusal":
                    say(refusal=pb.RefusalReason.Name(msg.refusal.reason), detail=msg.refusal.detail)
                elif kind == "notice":
                    n = msg.notice
                    say(notice=pb.NoticeKind.Name(n.kind), id=n.request_id, table=n.table_id, detail=n.detail)
                elif kind == "event":
                    say(event=msg.event.WhichOneof("kind"), table=msg.event.table_id, seat=msg.event.seat,
                        game=msg.event.game_id)
                elif kind == "call_request":
                    await bot.on_request(msg.call_request, calling=True)
                elif kind == "play_request":
                    await bot.on_request(msg.play_request, calling=False)
            code = await stream.code()
            details = await stream.details()
        except Drop:
            raise Drop(bot) from None
        except grpc.aio.AioRpcError as err:
            code, details = err.code(), err.details()
        say(end=code.name, details=details)
        return 0 if code is grpc.StatusCode.OK else 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--arena", required=True, metavar="HOST:PORT")
    parser.add_argument("--token", default="")
    parser.add_argument("--name", default="", help="Hello.bot_name (default: none)")
    parser.add_argument("--at", type=int, default=1, help="the request (from 1) that goes wrong")
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds the slow mode waits")
    parser.add_argument("--events", action="store_true", help="ask the arena for events")
    parser.add_argument("--dump", action="store_true", help="print every message received")
    parser.add_argument("--protocol-version", type=int, default=1)
    return parser.parse_args(argv)


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(parse_args())))
