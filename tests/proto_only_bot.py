"""A bot written from protocol/callbreak.proto alone, as a stranger would write it.

It imports grpc and the code that ``protoc`` generated from the .proto (from the folder given with
``--gen``), and nothing else of the project: its only knowledge of the game is what each request
says (the legal calls and cards, the trump, the trick so far).

    python tests/proto_only_bot.py --gen DIR --arena HOST:PORT --token T [--name N] [--seed N]

It calls its aces and top trumps, then wins a trick as cheaply as it can while its call is not
made, and plays low otherwise. At the end it prints one JSON line: the stream's status and the
top-level modules it loaded, so a test can check that it used nothing of the project.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from typing import Any

RANKS = "23456789TJQKA"
SUIT_LETTERS = {1: "S", 2: "H", 3: "D", 4: "C"}  # the Suit enum of the .proto


def rank(card: str) -> int:
    return RANKS.index(card[0])


def beats(card: str, best: str, trump: str) -> bool:
    """True when ``card`` takes the trick from ``best`` (section 4: a trump beats any other suit)."""
    if card[1] == best[1]:
        return rank(card) > rank(best)
    return card[1] == trump


def choose_call(request: Any) -> int:
    trump = SUIT_LETTERS[request.view.trump]
    hand = list(request.view.hand)
    sure = sum(1 for c in hand if c[0] == "A") + sum(1 for c in hand if c[1] == trump and c[0] in "KQ")
    sure += max(0, sum(1 for c in hand if c[1] == trump) - 4)
    legal = list(request.legal_calls)
    return min(max(sure, legal[0]), legal[-1])


def choose_card(request: Any, rng: random.Random) -> str:
    view = request.view
    trump = SUIT_LETTERS[view.trump]
    legal = sorted(request.legal_cards, key=lambda c: (c[1] == trump, rank(c), rng.random()))
    called = {call.seat: call.value for call in view.calls}.get(view.seat, 0)
    won = view.tricks_won[view.seat]
    trick = list(view.current_trick.cards)
    if won >= called or not trick:
        return legal[0]
    best = trick[0]
    for card in trick[1:]:
        if beats(card, best, trump):
            best = card
    winners = [c for c in legal if beats(c, best, trump)]
    return winners[0] if winners else legal[0]


async def play(args: argparse.Namespace, grpc: Any, pb: Any, pb_grpc: Any) -> str:
    rng = random.Random(args.seed)
    options = [("grpc.keepalive_time_ms", 20000), ("grpc.keepalive_permit_without_calls", 1)]
    async with grpc.aio.insecure_channel(args.arena, options=options) as channel:
        stream = pb_grpc.ArenaStub(channel).Connect()
        await stream.write(pb.ConnectRequest(hello=pb.Hello(
            bot_name=args.name, bot_version="1", token=args.token, protocol_version=1,
        )))
        try:
            while True:
                msg = await stream.read()
                if msg == grpc.aio.EOF:
                    return str((await stream.code()).name)
                kind = msg.WhichOneof("kind")
                if kind == "call_request":
                    request = msg.call_request
                    answer = pb.CallAnswer(request_id=request.request_id, call=choose_call(request))
                    await stream.write(pb.ConnectRequest(call=answer))
                elif kind == "play_request":
                    request = msg.play_request
                    card = pb.PlayAnswer(request_id=request.request_id, card=choose_card(request, rng))
                    await stream.write(pb.ConnectRequest(play=card))
                elif kind == "notice":
                    print(json.dumps({"notice": pb.NoticeKind.Name(msg.notice.kind)}), flush=True)
                elif kind == "refusal":
                    print(json.dumps({"refusal": pb.RefusalReason.Name(msg.refusal.reason)}), flush=True)
        except grpc.aio.AioRpcError as err:
            return str(err.code().name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gen", required=True, help="the folder with callbreak_pb2.py and callbreak_pb2_grpc.py")
    parser.add_argument("--arena", required=True, metavar="HOST:PORT")
    parser.add_argument("--token", required=True)
    parser.add_argument("--name", default="", help="the organiser's name for the bot (default: none)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sys.path.insert(0, args.gen)  # the generated code, wherever protoc wrote it
    import callbreak_pb2 as pb
    import callbreak_pb2_grpc as pb_grpc
    import grpc
    end = asyncio.run(play(args, grpc, pb, pb_grpc))
    modules = sorted({name.partition(".")[0] for name in sys.modules})
    print(json.dumps({"end": end, "modules": modules, "pb_file": pb.__file__}), flush=True)
    return 0 if end == "OK" else 1


if __name__ == "__main__":
    raise SystemExit(main())
