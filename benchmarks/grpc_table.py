"""Deals per second over real gRPC: the arena against a bare table of the same shape, same run.

Two setups, each with 1 table (4 bot processes) and 4 tables (16 bot processes), on loopback:

- ``bare``: an asyncio gRPC server that pushes a small request down one bidi stream per bot
  process and waits for the answer, seat after seat, 56 decisions a deal, no rules, no views;
- ``arena``: the real ArenaServer with the rules core and full seat views, with the same trivial
  bot processes (written straight against the protocol: first legal call or card, at once);
- ``arena+kit``: the same arena with trivial bots made with the Python bot kit, which reads every
  request into a view object first (what a Python bot author gets).

Printed: deals/s (min / median / max over the repetitions, interleaved so both share the
machine's noise), the arena process's CPU per decision, and the ratios.

    python benchmarks/grpc_table.py [--seconds 4] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import grpc

from arena.botkit import Bot, play_session
from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.core.views import View
from arena.net.server import ArenaServer, ServerSettings
from arena.net.tokens import token_sha256
from arena.players.table import TableSettings
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

DECISIONS_PER_DEAL = 56
LEGAL = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"]


class TrivialBot(Bot):
    """The lowest legal call and the first legal card: all transport, no thought."""

    name = "trivial"

    def call(self, view: View) -> int:
        return view.legal_calls[0]

    def play(self, view: View) -> str:
        return str(view.legal.cards()[0])


# -- the bare table ----------------------------------------------------------------------------


class BareServicer(pb_grpc.ArenaServicer):  # type: ignore[misc]
    """Seats each stream in the order it connects; tables of four ask their seats in turn."""

    def __init__(self) -> None:
        self.streams: asyncio.Queue[grpc.aio.ServicerContext] = asyncio.Queue()

    async def Connect(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:
        await context.read()  # the hello
        done = asyncio.get_running_loop().create_future()
        await self.streams.put((context, done))
        await done


async def bare_table(seats: list[grpc.aio.ServicerContext], stop: float) -> int:
    """Pushes requests round the table until ``stop``; returns decisions made."""
    decisions = 0
    request_id = 0
    while time.perf_counter() < stop:
        for _ in range(DECISIONS_PER_DEAL):
            context = seats[decisions % 4]
            request_id += 1
            await context.write(pb.ConnectResponse(play_request=pb.PlayRequest(
                request_id=request_id, table_id="t1", seat=decisions % 4, deadline_ms=1000, legal_cards=LEGAL,
            )))
            answer = await context.read()
            assert answer.play.request_id == request_id
            decisions += 1
    return decisions


async def raw_bot(address: str, token: str = "x") -> None:
    """A trivial bot written straight against the protocol: the first legal call or card, at once."""
    async with grpc.aio.insecure_channel(address) as channel:
        stream = pb_grpc.ArenaStub(channel).Connect()
        await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token, protocol_version=1)))
        while True:
            msg = await stream.read()
            if msg is grpc.aio.EOF:
                return
            kind = msg.WhichOneof("kind")
            if kind == "play_request":
                request = msg.play_request
                await stream.write(pb.ConnectRequest(
                    play=pb.PlayAnswer(request_id=request.request_id, card=request.legal_cards[0])
                ))
            elif kind == "call_request":
                call = msg.call_request
                await stream.write(pb.ConnectRequest(
                    call=pb.CallAnswer(request_id=call.request_id, call=call.legal_calls[0])
                ))


# -- drivers -----------------------------------------------------------------------------------


def spawn(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, *args], stderr=subprocess.DEVNULL)


async def measure(run: Callable[[float], Awaitable[int]], seconds: float) -> tuple[float, float]:
    """(deals/s, arena CPU µs per decision) of ``run`` over ``seconds``."""
    cpu = time.process_time()
    start = time.perf_counter()
    decisions = await run(start + seconds)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return decisions / DECISIONS_PER_DEAL / wall, cpu / decisions * 1e6


async def run_bare(tables: int, seconds: float) -> tuple[float, float]:
    servicer = BareServicer()
    server = grpc.aio.server()
    pb_grpc.add_ArenaServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    procs = [spawn(["--raw-bot", f"127.0.0.1:{port}", "x"]) for _ in range(4 * tables)]
    entries = [await servicer.streams.get() for _ in range(4 * tables)]
    contexts = [context for context, _ in entries]

    async def run(stop: float) -> int:
        counts = await asyncio.gather(*(bare_table(contexts[4 * t: 4 * t + 4], stop) for t in range(tables)))
        return sum(counts)

    try:
        return await measure(run, seconds)
    finally:
        for _, done in entries:
            done.set_result(None)
        for proc in procs:
            proc.kill()
        await server.stop(0)


async def run_arena(tables: int, seconds: float, bot: str = "--kit-bot") -> tuple[float, float]:
    tokens = {f"token-{i}": f"bot-{i}" for i in range(4 * tables)}
    server = ArenaServer(ServerSettings(
        rules=Rules.profile(), tokens={token_sha256(t): name for t, name in tokens.items()},
        table=TableSettings(deadline_ms=5000), max_tables=1,
    ))
    port = await server.start()
    procs = [spawn([bot, f"127.0.0.1:{port}", token]) for token in tokens]
    decisions = [0] * tables

    async def table(t: int, stop: float) -> None:
        bots = [f"bot-{4 * t + s}" for s in range(4)]
        game = 0
        while time.perf_counter() < stop:
            game += 1
            record = await server.play(bots, seeded_deals(1, game), table_id=f"t{t}", game_id=f"g{t}-{game}",
                                       timeout=30)
            assert not record.faults, record.faults
            decisions[t] += sum(record.decisions)

    async def run(stop: float) -> int:
        await asyncio.gather(*(table(t, stop) for t in range(tables)))
        return sum(decisions)

    try:
        for bot in tokens.values():  # wait until every bot has connected before the clock starts
            await server.lobby.release(await server.lobby.claim(bot, timeout=30))
        return await measure(run, seconds)
    finally:
        for proc in procs:
            proc.kill()
        await server.stop(0)


SETUPS: dict[str, Callable[[int, float], Awaitable[tuple[float, float]]]] = {
    "bare": run_bare,
    "arena": lambda tables, seconds: run_arena(tables, seconds, "--raw-bot"),
    "arena+kit": lambda tables, seconds: run_arena(tables, seconds, "--kit-bot"),
}


def summary(values: list[float]) -> str:
    return f"{min(values):8.1f} / {statistics.median(values):8.1f} / {max(values):8.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="length of one measured run")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of each configuration")
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 4], help="table counts to measure")
    parser.add_argument("--raw-bot", nargs=2, metavar=("ADDRESS", "TOKEN"), help=argparse.SUPPRESS)
    parser.add_argument("--kit-bot", nargs=2, metavar=("ADDRESS", "TOKEN"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.raw_bot:
        asyncio.run(raw_bot(*args.raw_bot))
        return 0
    if args.kit_bot:
        asyncio.run(play_session(TrivialBot(), *args.kit_bot))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"grpcio {grpc.__version__}")
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.repeats):
        for tables in args.tables:
            for kind, runner in SETUPS.items():
                results.setdefault((kind, tables), []).append(asyncio.run(runner(tables, args.seconds)))
    print(f"{'setup':18s} {'deals/s min / median / max':>30s} {'arena CPU µs/decision (median)':>32s}")
    for (kind, tables), runs in sorted(results.items(), key=lambda item: (item[0][1], item[0][0])):
        deals = [d for d, _ in runs]
        cpu = statistics.median(c for _, c in runs)
        print(f"{kind + f', {tables} table(s)':18s} {summary(deals):>30s} {cpu:32.1f}")
    for tables in args.tables:
        bare = results[("bare", tables)]
        for kind in ("arena", "arena+kit"):
            runs = results[(kind, tables)]
            ratio = statistics.median(d for d, _ in runs) / statistics.median(d for d, _ in bare)
            extra = statistics.median(c for _, c in runs) - statistics.median(c for _, c in bare)
            print(f"{tables} table(s), {kind}: deals/s {ratio:.2f} x bare (target >= 0.85); arena CPU "
                  f"{statistics.median(c for _, c in runs):.0f} µs per decision, {extra:+.0f} µs beside bare's")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
