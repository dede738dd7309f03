"""Many tables in one arena: 1,000 concurrent tables (4,000 bot streams) at a 1 s deadline.

The arena runs in this process; the bots run in ``--fleets`` other processes, each holding its
share of the 4,000 streams on one asyncio loop (a light bot: the first legal call or card, at once).
Every table plays ``--games`` seeded games at the same time as all the others. Printed: tables,
streams, games, decisions per second, the arena's CPU per decision, its memory per table (the rise
in resident memory from before the bots connected to the end, over the tables), the deadline
misses (``late`` faults), which should be 0, and the time the arena's garbage collector stood the
process still (the arena does not count it against the bots: :mod:`arena.players.pauses`).

    python benchmarks/many_tables.py                 # 1,000 tables
    python benchmarks/many_tables.py --tables 50     # a quick look
    python benchmarks/many_tables.py --default-collector   # as the arena ran before it tuned the collector
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.core.dealing import seeded_deals  # noqa: E402
from arena.core.faults import FaultKind  # noqa: E402
from arena.core.rules import Rules  # noqa: E402
from arena.players.pauses import paused_s  # noqa: E402
from arena.players.table import TableSettings  # noqa: E402
from arena.records.format import GameRecord  # noqa: E402
from arena.transports.grpc.server import ArenaServer, ServerSettings  # noqa: E402
from arena.transports.grpc.tokens import token_sha256  # noqa: E402
from protocol import callbreak_pb2 as pb  # noqa: E402
from protocol import callbreak_pb2_grpc as pb_grpc  # noqa: E402
from tests.helpers.seating import seat_and_play  # noqa: E402

DEADLINE_MS = 1000


def token(n: int) -> str:
    return f"many-tables-token-{n}"


# -- the bots: one process holds many streams -------------------------------------------------------


async def light_bot(channel: grpc.aio.Channel, n: int, handshakes: asyncio.Semaphore) -> None:
    """One stream: the first legal call or card, at once. Like any bot, it connects again when its
    stream fails before the Welcome (a client opening thousands of streams at once sees some fail)."""
    while True:
        async with handshakes:
            stream = pb_grpc.ArenaStub(channel).Connect()
            try:
                await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token(n), protocol_version=1)))
                welcome = await stream.read()
            except grpc.aio.AioRpcError:
                welcome = None
        if welcome is not None and welcome is not grpc.aio.EOF and welcome.HasField("welcome"):
            break
        await asyncio.sleep(0.2)
    while True:
        msg = await stream.read()
        if msg is grpc.aio.EOF:
            return
        kind = msg.WhichOneof("kind")
        if kind == "play_request":
            request = msg.play_request
            await stream.write(pb.ConnectRequest(
                play=pb.PlayAnswer(request_id=request.request_id, card=request.legal_cards[0])))
        elif kind == "call_request":
            call = msg.call_request
            await stream.write(pb.ConnectRequest(call=pb.CallAnswer(request_id=call.request_id,
                                                                    call=call.legal_calls[0])))


async def fleet(address: str, first: int, count: int) -> None:
    """``count`` bots, numbered from ``first``, over a few channels (HTTP/2 connections), at most 100
    of them saying Hello at a time."""
    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(max(1, count // 100))]
    for channel in channels:
        await channel.channel_ready()
    handshakes = asyncio.Semaphore(100)
    await asyncio.gather(*(light_bot(channels[i % len(channels)], first + i, handshakes) for i in range(count)),
                         return_exceptions=True)


# -- the arena ----------------------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    """User and system CPU seconds of a process so far (Linux; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb() -> float:
    """This process's resident memory now, in MB (Linux)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return pages * resource.getpagesize() / 1e6


async def arena(
    tables: int, games: int, fleets: int, deadline_ms: int = DEADLINE_MS, default_collector: bool = False,
) -> dict[str, float]:
    bots = 4 * tables
    server = ArenaServer(ServerSettings(
        rules=Rules.profile(), tokens={token_sha256(token(n)): f"bot-{n}" for n in range(bots)},
        table=TableSettings(deadline_ms=deadline_ms), max_tables=1, max_sessions_total=bots + 16,
    ))
    port = await server.start("127.0.0.1:0")
    if default_collector:  # the interpreter's own settings, as before the arena tuned them (pauses still forgiven)
        gc.set_threshold(700, 10, 10)
        gc.unfreeze()
    before = rss_mb()
    share = -(-bots // fleets)
    procs = [subprocess.Popen([sys.executable, __file__, "--fleet", f"127.0.0.1:{port}", str(f * share),
                               str(min(share, bots - f * share))], stderr=subprocess.DEVNULL)
             for f in range(fleets) if f * share < bots]
    try:
        connect = time.perf_counter()
        for n in range(bots):  # every bot connected before the clock starts
            await server.lobby.release(await server.lobby.claim(f"bot-{n}", timeout=300))
        connected_s = time.perf_counter() - connect

        async def table(t: int) -> list[GameRecord]:
            seats = [f"bot-{4 * t + s}" for s in range(4)]
            return [await seat_and_play(server, seats, seeded_deals(t + 1, game), table_id=f"t{t}",
                                        game_id=f"t{t}-g{game}", timeout=60) for game in range(1, games + 1)]

        cpu, bots_cpu, paused = time.process_time(), sum(cpu_s(proc.pid) for proc in procs), paused_s()
        start = time.perf_counter()
        played = await asyncio.gather(*(table(t) for t in range(tables)))
        wall = time.perf_counter() - start
        cpu, bots_cpu = time.process_time() - cpu, sum(cpu_s(proc.pid) for proc in procs) - bots_cpu
        paused = paused_s() - paused
        after = rss_mb()
    finally:
        for proc in procs:
            proc.kill()
        await server.stop(0)
    records = [record for per_table in played for record in per_table]
    decisions = sum(sum(record.decisions) for record in records)
    late = sum(1 for record in records for fault in record.faults if fault.kind is FaultKind.LATE)
    other = sum(1 for record in records for fault in record.faults if fault.kind is not FaultKind.LATE)
    return {"tables": tables, "streams": bots, "games": len(records), "decisions": decisions, "wall": wall,
            "connect": connected_s, "cpu_us": cpu / decisions * 1e6,
            "bots_cpu_us": bots_cpu / decisions * 1e6, "rate": decisions / wall, "paused": paused,
            "memory_kb": (after - before) * 1000 / tables, "late": late, "other": other}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000, help="concurrent tables (default: 1000)")
    parser.add_argument("--games", type=int, default=1, help="games each table plays (default: 1)")
    parser.add_argument("--fleets", type=int, default=2, help="bot processes (default: 2)")
    parser.add_argument("--deadline-ms", type=int, default=DEADLINE_MS, help=f"the deadline (default: {DEADLINE_MS})")
    parser.add_argument("--default-collector", action="store_true",
                        help="run the arena with the interpreter's garbage-collector settings, not the arena's")
    parser.add_argument("--fleet", nargs=3, metavar=("ADDRESS", "FIRST", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fleet:
        asyncio.run(fleet(args.fleet[0], int(args.fleet[1]), int(args.fleet[2])))
        return 0
    print(f"machine: {platform.platform()}, {platform.python_implementation()} {platform.python_version()}, "
          f"{len(os.sched_getaffinity(0))} CPUs")
    result = asyncio.run(arena(args.tables, args.games, args.fleets, args.deadline_ms, args.default_collector))
    print(f"tables {result['tables']:,.0f} ({result['streams']:,.0f} bot streams in {args.fleets} processes, "
          f"all connected in {result['connect']:.1f} s), deadline {args.deadline_ms} ms, "
          f"{'the interpreter' if args.default_collector else 'the arena'}'s garbage-collector settings")
    print(f"games {result['games']:,.0f}, decisions {result['decisions']:,.0f} in {result['wall']:.1f} s: "
          f"{result['rate']:,.0f} decisions/s")
    print(f"arena CPU per decision {result['cpu_us']:.0f} µs (the bots' processes: {result['bots_cpu_us']:.0f} µs); "
          f"arena memory per table {result['memory_kb']:.0f} kB")
    print(f"deadline misses {result['late']:,.0f}; other faults {result['other']:,.0f}; the arena's garbage "
          f"collector stood it still for {result['paused']:.2f} s in all (not counted against the bots)")
    return 0 if result["late"] == 0 and result["other"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
