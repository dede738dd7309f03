"""Bots with no thought, for the benchmarks: the first legal call or card, at once, over gRPC.

Two of them, so that what is measured is the transport: one written straight against the protocol's
generated stubs (:func:`raw_bot`), one made with the Python bot kit (:class:`TrivialBot`), which reads every
request into a view first. ``benchmarks/grpc_table.py`` connects them to a bare table and to the arena;
``benchmarks/transports.py`` has the arena launch them in tournaments, as a user's bots are launched:

    python benchmarks/trivial_bots.py protocol ADDRESS      # the token in $CALLBREAK_TOKEN
    python benchmarks/trivial_bots.py kit --arena ADDRESS   # the kit's command line (run())
"""

from __future__ import annotations

import asyncio
import os
import sys

import grpc

from arena.botkit import Bot, run
from arena.core.views import View
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

__all__ = ["TrivialBot", "raw_bot", "trivial_answer"]


class TrivialBot(Bot):
    """The lowest legal call and the first legal card: all transport, no thought."""

    name = "trivial"

    def call(self, view: View) -> int:
        return view.legal_calls[0]

    def play(self, view: View) -> str:
        return str(view.legal.cards()[0])


def trivial_answer(msg: pb.ConnectResponse) -> pb.ConnectRequest | None:
    """The first legal call or card, for a request; ``None`` for anything else."""
    kind = msg.WhichOneof("kind")
    if kind == "play_request":
        request = msg.play_request
        return pb.ConnectRequest(play=pb.PlayAnswer(request_id=request.request_id, card=request.legal_cards[0]))
    if kind == "call_request":
        call = msg.call_request
        return pb.ConnectRequest(call=pb.CallAnswer(request_id=call.request_id, call=call.legal_calls[0]))
    return None


async def raw_bot(address: str, token: str = "x") -> None:
    """A trivial bot written straight against the protocol: the first legal call or card, at once."""
    async with grpc.aio.insecure_channel(address) as channel:
        stream = pb_grpc.ArenaStub(channel).Connect()
        await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token, protocol_version=1)))
        while True:
            msg = await stream.read()
            if msg is grpc.aio.EOF:
                return
            answer = trivial_answer(msg)
            if answer is not None:
                await stream.write(answer)


def main(argv: list[str]) -> int:
    if argv[:1] == ["protocol"] and len(argv) == 2:
        asyncio.run(raw_bot(argv[1], os.environ.get("CALLBREAK_TOKEN", "").strip()))
        return 0
    if argv[:1] == ["kit"]:
        return run(TrivialBot, argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
