"""Deals per second over real gRPC: the arena against a bare table of the same shape, same run.

Two setups, each with 1 table (4 bot processes) and 4 tables (16 bot processes), on loopback:

- ``bare``: an asyncio gRPC server that pushes a small request down one bidi stream per bot
  process and waits for the answer, seat after seat, 56 decisions a deal, no rules, no views;
- ``arena``: the real ArenaServer with the rules core and full seat views, with the same trivial
  bot processes (written straight against the protocol: first legal call or card, at once);
- ``arena+kit``: the same arena with trivial bots made with the Python bot kit, which reads every
  request into a view object first (what a Python bot author gets).

Printed: deals/s (min / median / max over the repetitions, interleaved so all share the machine's
noise), the arena process's CPU per decision, the part of it spent in the thread that runs the event
loop (all of the arena's Python; the rest is gRPC's own threads), and the ratios to the bare table. Then the arena's own
work per decision with the transport faked (``faked``): the same tables, the bots' answers handed
straight to the sessions with no gRPC, no process and no socket in between; the fake bots' own time
(reading the request, making the answer) is measured and left out. Every measurement runs in a
process of its own.

With ``--baseline DIR``, every arena measurement is also made with the code in DIR (another copy of
the project, e.g. ``git worktree add /tmp/before <commit>``), interleaved with this one's, and both
are printed side by side.

    python benchmarks/grpc_table.py [--seconds 4] [--repeats 3] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import grpc
from trivial_bots import TrivialBot, raw_bot, trivial_answer  # benchmarks/trivial_bots.py

from arena.botkit import play_session
from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.players.table import TableSettings
from arena.transports.grpc.server import ArenaServer, ServerSettings
from arena.transports.grpc.session import Session
from arena.transports.grpc.tokens import token_sha256
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for the tests' table helper
from tests.helpers.seating import seat_and_play

DECISIONS_PER_DEAL = 56
LEGAL = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"]
ROOT = Path(__file__).resolve().parent.parent


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
            await context.write(bare_request(request_id, decisions % 4))
            answer = await context.read()
            assert answer.play.request_id == request_id
            decisions += 1
    return decisions


# -- drivers -----------------------------------------------------------------------------------


def spawn(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, *args], stderr=subprocess.DEVNULL)


Measured = tuple[float, float, float, float]
"""Deals/s, CPU µs per decision, the bytes of a request (0: not known), and the CPU µs per decision of
the event loop's thread."""


async def measure(run: Callable[[float], Awaitable[int]], seconds: float) -> tuple[float, float, int, float]:
    """(deals/s, CPU µs per decision, decisions, CPU µs per decision of this, the event loop's, thread)
    of ``run`` over ``seconds``."""
    cpu, thread = time.process_time(), time.thread_time()
    start = time.perf_counter()
    decisions = await run(start + seconds)
    wall = time.perf_counter() - start
    cpu, thread = time.process_time() - cpu, time.thread_time() - thread
    return decisions / DECISIONS_PER_DEAL / wall, cpu / decisions * 1e6, decisions, thread / decisions * 1e6


def bare_request(request_id: int, seat: int) -> pb.ConnectResponse:
    return pb.ConnectResponse(play_request=pb.PlayRequest(
        request_id=request_id, table_id="t1", seat=seat, deadline_ms=1000, legal_cards=LEGAL,
    ))


async def run_bare(tables: int, seconds: float) -> Measured:
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
        deals, cpu, _, thread = await measure(run, seconds)
        return deals, cpu, len(bare_request(1000, 1).SerializeToString()), thread
    finally:
        for _, done in entries:
            done.set_result(None)
        for proc in procs:
            proc.kill()
        await server.stop(0)


def arena_server(tables: int) -> tuple[ArenaServer, dict[str, str]]:
    tokens = {f"token-{i}": f"bot-{i}" for i in range(4 * tables)}
    server = ArenaServer(ServerSettings(
        rules=Rules.profile(), tokens={token_sha256(t): name for t, name in tokens.items()},
        table=TableSettings(deadline_ms=5000), max_tables=1,
    ))
    return server, tokens


async def play_tables(server: ArenaServer, tables: int, seconds: float) -> tuple[float, float, int, float]:
    """Plays games at ``tables`` tables of connected bots for ``seconds``: :func:`measure`'s figures."""
    decisions = [0] * tables

    async def table(t: int, stop: float) -> None:
        bots = [f"bot-{4 * t + s}" for s in range(4)]
        game = 0
        while time.perf_counter() < stop:
            game += 1
            record = await seat_and_play(server, bots, seeded_deals(1, game), table_id=f"t{t}",
                                         game_id=f"g{t}-{game}", timeout=30)
            assert not record.faults, record.faults
            decisions[t] += sum(record.decisions)

    async def run(stop: float) -> int:
        await asyncio.gather(*(table(t, stop) for t in range(tables)))
        return sum(decisions)

    return await measure(run, seconds)


async def run_arena(tables: int, seconds: float, bot: str = "--kit-bot") -> Measured:
    server, tokens = arena_server(tables)
    port = await server.start()
    procs = [spawn([bot, f"127.0.0.1:{port}", token]) for token in tokens]
    try:
        for name in tokens.values():  # wait until every bot has connected before the clock starts
            await server.lobby.release(await server.lobby.claim(name, timeout=30))
        deals, cpu, _, thread = await play_tables(server, tables, seconds)
        return deals, cpu, 0.0, thread
    finally:
        for proc in procs:
            proc.kill()
        await server.stop(0)


async def run_faked(tables: int, seconds: float) -> Measured:
    """The arena's own work: sessions whose bots answer at once, in the arena's process, with no gRPC.

    Returns :data:`Measured`, the fake bots' time left out of the CPU."""
    server, tokens = arena_server(tables)
    loop = asyncio.get_running_loop()
    bots_time = 0.0
    requests = [0, 0]

    def deliver(session: Session, answer: pb.ConnectRequest) -> None:
        handled = session.receive(answer)
        if handled is not None:  # a release whose sessions take messages in a coroutine: it never waits
            with contextlib.suppress(StopIteration):
                handled.send(None)  # type: ignore[attr-defined]

    def session_of(index: int, name: str) -> Session:
        async def write(msg: pb.ConnectResponse | bytes) -> None:
            nonlocal bots_time
            # What gRPC would do with the message, in the arena's process: serialize it.
            data = msg if isinstance(msg, bytes) else msg.SerializeToString()
            start = time.thread_time()  # CPU time, like the arena's (a wall clock would count the machine's noise)
            answer = trivial_answer(pb.ConnectResponse.FromString(data))
            bots_time += time.thread_time() - start
            if answer is not None:
                requests[0] += 1
                requests[1] += len(data)
                loop.call_soon(deliver, session, answer)

        session = Session(f"s-{index}", name, write, server.rules_msg, max_tables=1, on_close=server.lobby.remove)
        return session

    for index, name in enumerate(tokens.values()):
        session = session_of(index, name)
        session.start()
        server.lobby.add(session)
    deals, cpu, decisions, thread = await play_tables(server, tables, seconds)
    bots = bots_time / decisions * 1e6
    return deals, cpu - bots, requests[1] / requests[0], thread - bots


SETUPS: dict[str, Callable[[int, float], Coroutine[Any, Any, Measured]]] = {
    "bare": run_bare,
    "arena": lambda tables, seconds: run_arena(tables, seconds, "--raw-bot"),
    "arena+kit": lambda tables, seconds: run_arena(tables, seconds, "--kit-bot"),
    "faked": run_faked,
}


def measured(setup: str, tables: int, seconds: float, tree: Path) -> Measured:
    """One measurement, in a process of its own, with the code of ``tree`` (:data:`Measured`)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, __file__, "--child", setup, str(tables), str(seconds)], env=env,
                         cwd=tree, capture_output=True, text=True, check=True).stdout
    deals, cpu, size, thread = json.loads(out.splitlines()[-1])
    return float(deals), float(cpu), float(size), float(thread)


def summary(values: list[float]) -> str:
    return f"{min(values):8.1f} / {statistics.median(values):8.1f} / {max(values):8.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="length of one measured run")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of each configuration")
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 4], help="table counts to measure")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another copy of the project to measure the same way, interleaved")
    parser.add_argument("--raw-bot", nargs=2, metavar=("ADDRESS", "TOKEN"), help=argparse.SUPPRESS)
    parser.add_argument("--kit-bot", nargs=2, metavar=("ADDRESS", "TOKEN"), help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=3, metavar=("SETUP", "TABLES", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.raw_bot:
        asyncio.run(raw_bot(*args.raw_bot))
        return 0
    if args.kit_bot:
        asyncio.run(play_session(TrivialBot(), *args.kit_bot))
        return 0
    if args.child:
        setup, tables, seconds = args.child
        print(json.dumps(asyncio.run(SETUPS[setup](int(tables), float(seconds)))))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"grpcio {grpc.__version__}")
    trees = {"": ROOT}
    if args.baseline is not None:
        trees["before"] = args.baseline.resolve()
    results: dict[tuple[str, int, str], list[Measured]] = {}
    for _ in range(args.repeats):
        for tables in args.tables:
            for setup in SETUPS:
                for label, tree in trees.items():
                    if setup == "bare" and label:
                        continue  # no arena code in it: measured once
                    results.setdefault((setup, tables, label), []).append(measured(setup, tables, args.seconds, tree))

    def median(runs: list[Measured], field: int) -> float:
        return statistics.median(run[field] for run in runs)

    print(f"{'setup':32s} {'deals/s min / median / max':>30s} {'CPU µs/decision (median)':>26s} "
          f"{'of it, event-loop thread':>26s}")
    for (setup, tables, label), runs in sorted(results.items(), key=lambda item: (item[0][1], item[0][0], item[0][2])):
        name = f"{setup}{f' ({label})' if label else ''}, {tables} table(s)"
        print(f"{name:32s} {summary([run[0] for run in runs]):>30s} {median(runs, 1):26.1f} {median(runs, 3):26.1f}")
    for tables in args.tables:
        bare = results[("bare", tables, "")]
        bare_deals, bare_cpu, bare_thread = median(bare, 0), median(bare, 1), median(bare, 3)
        for label in trees:
            for setup in ("arena", "arena+kit"):
                runs = results[(setup, tables, label)]
                cpu, thread = median(runs, 1), median(runs, 3)
                name = f"{setup}{f' ({label})' if label else ''}"
                print(f"{tables} table(s), {name}: deals/s {median(runs, 0) / bare_deals:.2f} x bare (target >= 0.85); "
                      f"arena CPU {cpu:.0f} µs per decision, {cpu - bare_cpu:+.0f} µs beside bare's (target <= +60); "
                      f"in the event loop's thread {thread - bare_thread:+.0f} µs, in gRPC's threads "
                      f"{(cpu - thread) - (bare_cpu - bare_thread):+.0f} µs")
            faked = results[("faked", tables, label)]
            print(f"{tables} table(s){f' ({label})' if label else ''}: the arena's own work with the transport "
                  f"faked: {median(faked, 1):.0f} µs of CPU per decision; a request "
                  f"{median(faked, 2):.0f} bytes (bare: {bare[0][2]:.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
