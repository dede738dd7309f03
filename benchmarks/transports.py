"""What each way in costs: the arena's CPU per decision and deals per second, every transport, one run.

Each row is a real tournament (``arena.event.run.tournament.Tournament``, records written to a temporary
results folder as in a real run) of four bots of one kind that think not at all, at 1 table and at 4
tables (``concurrency``), each tournament in a process of its own:

- ``in-process, fast path``: the sample random bot named by import path (the house bot's class), which
  has the fast path: what research and self-play runs get;
- ``in-process, kit class``: ``benchmarks/trivial_bots.py``'s bot-kit class, which has no fast path: the table
  runner plays it, with a view per decision;
- ``stdio``: ``sample_bots/stdio/lowest_bot.py``, JSON lines, a process per seat per game;
- ``gRPC, protocol bot``: launched, written straight against the generated stubs
  (``benchmarks/trivial_bots.py``), one process per bot for the whole run;
- ``gRPC, kit bot``: launched, the same bot made with the Python bot kit (a view object per request);
- ``Bhoos HTTP``: launched, a contest-style HTTP server in the standard library, an instance per seat per
  game in a network namespace of its own, one HTTP request per decision;
- ``bare gRPC table``: ``benchmarks/grpc_table.py``'s bare server, for scale: 56 requests a deal pushed
  down real gRPC streams to the protocol bots, with no rules, no views and no records.

Launched bots run as the configuration's ``[sandbox]`` says by default: in bubblewrap where it runs. Each
plan is sized to about ``--seconds`` of play on the machine the benchmark was written on (:data:`PACE`). The
clock runs from the start of the first game to the record of the last, so the run's start (the server, the
gRPC bots' processes and their connections) is left out and printed apart, as is its end. Printed: deals
played, deals/s (min / median / max over the repetitions, interleaved so that every row shares the
machine's noise), the median CPU of the arena's own process per decision in µs (its bots' processes left
out; what the arena does to start the processes of each game counted in), the median seconds from the run's
start to its first game's, and the faults (none, from such bots).

    python benchmarks/transports.py [--seconds 4] [--repeats 3] [--tables 1 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import grpc
from grpc_table import measured as grpc_table_measured  # benchmarks/grpc_table.py

from arena.event.launch.sandbox import bwrap_problem
from arena.event.plan.schedule import Assignment
from arena.event.play.seats import Seat
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.records.format import GameRecord, GameRecords

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "benchmarks" / "trivial_bots.py"
PACE = {
    "in-process, fast path": (3_500, 4_500), "in-process, kit class": (110, 130), "stdio": (9, 11),
    "gRPC, protocol bot": (17, 32), "gRPC, kit bot": (11, 24), "Bhoos HTTP": (3, 4),
}
"""Deals/s of each row at 1 table and at more, about as this benchmark measured them on a 2-core VM: they
size each tournament's plan to about ``--seconds`` of play. Not a plan of hours cut short: while launched bots
connect, the arena looks through the whole plan for a game it can start, again and again (2,500 deal sets of
gRPC bots cost it 12 s of CPU before the first game on that VM)."""

BHOOS_BOT = '''\
"""A contest-style bot with no thought: the lowest call, and its first legal card under the nepali rules."""
import json
from http.server import BaseHTTPRequestHandler, HTTPServer

RANKS = "23456789TJQK1"


def legal(cards, played):
    """Follow suit and beat the winning card if it can; void, trump (over a trump if it can); else anything."""
    if not played:
        return cards
    win = played[0]
    for card in played[1:]:
        if (card[1] == win[1] and RANKS.index(card[0]) > RANKS.index(win[0])) or (card[1] == "S" != win[1]):
            win = card
    same = [card for card in cards if card[1] == played[0][1]]
    if same:
        return [card for card in same if win[1] == same[0][1] and RANKS.index(card[0]) > RANKS.index(win[0])] or same
    spades = [card for card in cards if card[1] == "S"]
    if spades and win[1] == "S":
        return [card for card in spades if RANKS.index(card[0]) > RANKS.index(win[0])] or cards
    return spades or cards


class Bot(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, value):
        data = json.dumps({"value": value}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply("hello")

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.reply(1 if self.path == "/bid" else legal(body["cards"], body["played"])[0])


HTTPServer(("127.0.0.1", 7000), Bot).serve_forever()
'''
"""The Bhoos row's bot, written into the run's folder: a contest bot listens on port 7000 of 127.0.0.1."""

SETUPS = {
    "in-process, fast path": 'python = "sample_bots.random_bot:RandomBot"',
    "in-process, kit class": f'python = "{BOTS}:TrivialBot"',
    "stdio": f'stdio = "{{python}} {ROOT / "sample_bots" / "stdio" / "lowest_bot.py"}"',
    "gRPC, protocol bot": f'command = "{{python}} {BOTS} protocol {{address}}"',
    "gRPC, kit bot": f'command = "{{python}} {BOTS} kit --arena {{address}}"',
    "Bhoos HTTP": 'bhoos = "{python} {folder}/bot.py"\nfolder = "{folder}"',
    "bare gRPC table": "",
}
"""Each row's ``[[bots]]`` line (the bare table is no tournament: ``benchmarks/grpc_table.py`` measures it)."""
PER_GAME = ("stdio", "Bhoos HTTP")
"""The rows whose bots the arena starts for every seat of every game."""


class Watch:
    """A judge that only watches: the clock starts as the first game starts and stops as the last is recorded;
    it counts their deals, decisions and faults and the CPU of this, the arena's, process in between."""

    def __init__(self) -> None:
        self.begun = time.perf_counter()
        self.first: tuple[float, float] | None = None
        """(wall, CPU) as the first game started."""
        self.last = (0.0, 0.0)
        self.deals = self.decisions = self.faults = 0

    def watch(self, tournament: Tournament) -> None:
        """Marks the start of ``tournament``'s first game, whoever plays it (the fast path plays it in ``start``)."""
        start = tournament.tables.start

        def started(game: Assignment, seats: list[Seat]) -> None:
            if self.first is None:
                self.first = (time.perf_counter(), time.process_time())
            start(game, seats)

        tournament.tables.start = started  # type: ignore[method-assign]

    def start(self, games: Sequence[GameRecords]) -> None:
        pass

    def game_done(self, game: Assignment, record: GameRecord) -> None:
        self.last = (time.perf_counter(), time.process_time())
        self.deals += len(record.rounds)
        self.decisions += sum(record.decisions)
        self.faults += len(record.faults)

    def decided(self) -> bool:
        return False

    def refresh(self, force: bool = False) -> None:
        pass

    def progress_line(self) -> str | None:
        return None


def config_text(setup: str, tables: int, folder: Path, seconds: float) -> str:
    """Four bots of ``setup`` in a round robin at ``tables`` tables, its plan about ``seconds`` long."""
    pace = PACE[setup][0 if tables == 1 else 1]
    deal_sets = max(1, round(pace * seconds / 20))  # a deal set is 4 games (its rotations) of 5 deals
    bots = "".join(f'[[bots]]\nname = "b{i}"\n{SETUPS[setup].replace("{folder}", str(folder))}\nseed = {i}\n\n'
                   for i in range(1, 5))
    # gRPC bots keep their processes for the whole run: the transport is measured, not the start of a process
    # per game (benchmarks/fresh_process.py measures that).
    return (f'[tournament]\nname = "transports"\nseed = 7\ndeal_sets = {deal_sets}\nconcurrency = {tables}\n'
            "fresh_process = false\n\n" + bots)


Measured = tuple[float, float, float, float, int, int]
"""Deals/s, the arena's CPU µs per decision, decisions per deal, seconds to the first game's start, faults, deals."""


def once(setup: str, tables: int, seconds: float) -> Measured:
    """One tournament of ``setup`` at ``tables`` tables, in this process (:data:`Measured`)."""
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        (folder / "bot.py").write_text(BHOOS_BOT, encoding="utf-8")
        watch = Watch()
        tournament = Tournament(parse_config(config_text(setup, tables, folder, seconds)), folder / "results",
                                judge=watch)
        watch.watch(tournament)
        asyncio.run(tournament.run())
    assert watch.first is not None and watch.deals, f"{setup}: no game recorded"
    wall, cpu = watch.last[0] - watch.first[0], watch.last[1] - watch.first[1]
    return (watch.deals / wall, cpu / watch.decisions * 1e6, watch.decisions / watch.deals,
            watch.first[0] - watch.begun, watch.faults, watch.deals)


def measured(setup: str, tables: int, seconds: float) -> Measured:
    """One measurement in a process of its own (:data:`Measured`)."""
    if setup == "bare gRPC table":
        deals, cpu, _, _ = grpc_table_measured("bare", tables, seconds, ROOT)
        return deals, cpu, 56.0, 0.0, 0, round(deals * seconds)
    out = subprocess.run([sys.executable, __file__, "--child", setup, str(tables), str(seconds)], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=True)
    deals, cpu, per_deal, first, faults, played = json.loads(out.stdout.splitlines()[-1])
    return float(deals), float(cpu), float(per_deal), float(first), int(faults), int(played)


def summary(values: list[float]) -> str:
    return f"{min(values):9,.0f} / {statistics.median(values):9,.0f} / {max(values):9,.0f}"


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0,
                        help="about how long each tournament plays (its plan is sized to it)")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of each row")
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 4], help="table counts to measure")
    parser.add_argument("--only", nargs="+", choices=list(SETUPS), metavar="ROW", help="measure these rows only")
    parser.add_argument("--child", nargs=3, metavar=("SETUP", "TABLES", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        setup, tables, seconds = args.child
        print(json.dumps(once(setup, int(tables), float(seconds))))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"grpcio {grpc.__version__}; load average {load()}")
    problem = bwrap_problem()
    print("launched bots: in the bubblewrap sandbox" if problem is None else f"launched bots: unsandboxed ({problem})")
    setups = args.only or list(SETUPS)
    if problem is not None and "Bhoos HTTP" in setups:
        setups.remove("Bhoos HTTP")
        print("Bhoos HTTP left out: its bots need the sandbox")
    rows = [(setup, tables) for tables in args.tables for setup in setups]
    results: dict[tuple[str, int], list[Measured]] = {row: [] for row in rows}
    started = time.perf_counter()
    for repeat in range(args.repeats):
        # Each repetition in the other order, so that no row always follows the same one.
        for setup, tables in (rows if repeat % 2 == 0 else rows[::-1]):
            results[setup, tables].append(measured(setup, tables, args.seconds))
        print(f"repetition {repeat + 1} of {args.repeats} done after {time.perf_counter() - started:.0f} s", flush=True)
    print(f"{'transport':24s} {'tables':>6s} {'deals':>6s} {'deals/s min / median / max':>33s} "
          f"{'arena CPU µs/decision':>22s} {'start s':>8s} {'faults':>6s}")
    for setup, tables in sorted(rows, key=lambda row: (row[1], setups.index(row[0]))):
        runs = results[setup, tables]
        cpu, first = statistics.median(run[1] for run in runs), statistics.median(run[3] for run in runs)
        deals = statistics.median(run[5] for run in runs)
        start = "" if setup == "bare gRPC table" else f"{first:.2f}"
        print(f"{setup:24s} {tables:6d} {deals:6,.0f} {summary([run[0] for run in runs]):>33s} {cpu:22,.0f} "
              f"{start:>8s} {sum(run[4] for run in runs):6d}")
    per_deal = sorted({round(run[2], 2) for (setup, _), runs in results.items() for run in runs
                       if setup != "bare gRPC table"})
    print(f"decisions per deal in the tournaments: {', '.join(f'{n:g}' for n in per_deal)} (4 calls and 52 cards)")
    print(f"medians of {args.repeats}; plans of about {args.seconds:g} s; "
          f"{', '.join(s for s in PER_GAME if s in setups)}: a process per seat per game, its start counted in; "
          "gRPC bots: a process per bot for the whole run; bare gRPC table (benchmarks/grpc_table.py, "
          f"{args.seconds:g} s): no rules, no views, no records")
    print(f"load average at the end {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
