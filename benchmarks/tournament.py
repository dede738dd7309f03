"""A whole in-process tournament of random bots, records included: deals per second.

Four sample random bots, named by import path, play a duplicate round robin through the
in-process fast path; the records are written to a temporary results folder exactly as in a
real run. Prints deals per second (a deal is one round played at one table) for each repetition,
each run in a process of its own.

With ``--workers N`` (default 2), each repetition also runs it with N worker processes playing the
games (``tournament.workers``; the arena's own process then only hands out games and writes the
records), and the ratio of the medians to one process is printed.

With ``--kinds python,command,stdio``, each kind of bot gets its own tournament of four bots, timed with
one process and with N workers, interleaved: ``python`` as above, ``command`` the sample random bot as a
process of its own over gRPC (one process per bot, kept across games), ``stdio`` the sample lowest-card bot
over its standard streams (a process per seat per game), each at ``--tables`` tables, launched as the
configuration's ``[sandbox]`` says by default (in bubblewrap where it runs). For each kind it prints deals
per second with 1 and N workers, their ratio, the CPU the arena's own (parent) process spends per deal and
its ratio, against the targets (at most 0.2 x the one process's CPU per deal, at least 1.3 x as fast), and
the hours a million deals would take. ``command-native`` and ``stdio-native`` are the same with the trivial
C++ gRPC bot and C stdio bot of ``benchmarks/native/`` (built on first use; they need a C and C++ compiler,
protoc and the gRPC C++ library, on Debian ``libgrpc++-dev protobuf-compiler-grpc``): the first legal call
or card at once, so that the bots cost next to nothing and the arena's own work is what is measured.
Where ``/proc/stat`` is there, it also prints the CPU the whole machine spent per deal (the arena, its
workers, every bot's process) and the deals per second the machine's cores would allow at that cost: workers
cannot beat that ceiling. ``--launched-deal-sets`` sizes the tournaments of launched bots.

With ``--baseline DIR``, each repetition also runs the same tournament with the code in DIR
(another copy of the project, e.g. ``git worktree add /tmp/before <commit>``), the two interleaved
so that they share the machine's noise, and the ratio of the medians is printed.

    python benchmarks/tournament.py [--deal-sets 500] [--repeats 3] [--workers 2] [--baseline DIR]
    python benchmarks/tournament.py --kinds python,command,stdio [--launched-deal-sets 15] [--tables 4]
    python benchmarks/tournament.py --kinds command-native,stdio-native
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trivial_bots import NATIVE_BUILD, native_bots

from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.rating.report import write_standings

TARGET = 10_000
ROOT = Path(__file__).resolve().parent.parent

CONFIG = """
[tournament]
name = "bench"
seed = 7
deal_sets = {deal_sets}
format = "round-robin"
concurrency = 1

[[bots]]
name = "r1"
python = "sample_bots.random_bot:RandomBot"
seed = 1
[[bots]]
name = "r2"
python = "sample_bots.random_bot:RandomBot"
seed = 2
[[bots]]
name = "r3"
python = "sample_bots.random_bot:RandomBot"
seed = 3
[[bots]]
name = "r4"
python = "sample_bots.random_bot:RandomBot"
seed = 4
"""


STDIO = ROOT / "sample_bots" / "stdio" / "lowest_bot.py"
LAUNCHED = {
    "command": 'command = "{{python}} -m sample_bots.random_bot --arena {{address}} --seed {{seed}}"',
    "stdio": f'stdio = "{{{{python}}}} {STDIO}"',
    "command-native": f'command = "{NATIVE_BUILD / "trivial_bot"} --arena {{{{address}}}}"',
    "stdio-native": f'stdio = "{NATIVE_BUILD / "trivial_stdio"}"',
}
"""The ``[[bots]]`` line of each kind of launched bot (doubled braces: the placeholders stay). The ``-native``
kinds are the trivial C++ gRPC bot and C stdio bot of ``benchmarks/native/``, built on first use: what the
arena costs when the bots themselves cost next to nothing, as a compiled entry does."""
KIND_TARGETS = (0.2, 1.3)
"""With workers: the most of the one process's CPU per deal the arena's process may spend, and the least
speed-up."""


def kind_config(kind: str, deal_sets: int, tables: int) -> str:
    """A tournament of four bots of ``kind`` (``python``: the in-process random bot, on the fast path)."""
    if kind == "python":
        return CONFIG.format(deal_sets=deal_sets)
    # A gRPC bot keeps its process for the whole run (benchmarks/fresh_process.py measures one per game).
    head = CONFIG.split("[[bots]]")[0].replace("concurrency = 1", f"concurrency = {tables}\nfresh_process = false")
    bots = "".join(f'[[bots]]\nname = "r{i}"\n{LAUNCHED[kind].format()}\nseed = {i}\n' for i in range(1, 5))
    return head.format(deal_sets=deal_sets) + bots


def busy_cpu_s() -> float | None:
    """The CPU seconds every core of this machine has spent busy since it started (``/proc/stat``: all but
    idle and iowait), or ``None`` where there is no such file."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = [int(field) for field in fields[:8]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def once(deal_sets: int, workers: int = 1, text: str | None = None) -> tuple[float, float, int, float, float | None]:
    """(deals/s for games and records, deals/s for the whole run, deals, CPU µs of the arena's own
    process per deal while playing, CPU µs of the whole machine per deal while playing: the arena, its
    workers and every bot's process, and anything else running) of one tournament.

    A run from the command line ends by recomputing the standings from the records file; that pass
    is timed on its own and added for the second figure."""
    config = parse_config(text if text is not None else CONFIG.format(deal_sets=deal_sets))
    if workers > 1:
        config = dataclasses.replace(config, workers=workers)
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "bench"
        tournament = Tournament(config, results)
        start, cpu, machine = time.perf_counter(), time.process_time(), busy_cpu_s()
        summary = asyncio.run(tournament.run())
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        after = busy_cpu_s()
        machine = after - machine if after is not None and machine is not None else None
        start = time.perf_counter()
        write_standings(results)
        standings = time.perf_counter() - start
        deals = sum(1 for _ in (results / "records.jsonl").open())
    assert summary.played * 5 == deals
    return (deals / elapsed, deals / (elapsed + standings), deals, cpu / deals * 1e6,
            machine / deals * 1e6 if machine is not None else None)


def measured(deal_sets: int, tree: Path, workers: int = 1) -> tuple[float, float, int, float | None]:
    """:func:`once` in a process of its own, with the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    extra = ["--child-workers", str(workers)] if workers > 1 else []
    out = subprocess.run([sys.executable, __file__, "--child", str(deal_sets), *extra], env=env, cwd=tree,
                         capture_output=True, text=True, check=True).stdout
    rate, overall, deals, *cpu = json.loads(out.splitlines()[-1])  # an older tree gives no CPU figure
    return float(rate), float(overall), int(deals), float(cpu[0]) if cpu and cpu[0] is not None else None


def measured_kind(kind: str, deal_sets: int, tables: int, workers: int) -> tuple[float, int, float, float | None]:
    """(deals/s playing and recording, deals, the arena's CPU µs per deal, the machine's CPU µs per deal) of one
    tournament of ``kind``, in a process of its own."""
    out = subprocess.run([sys.executable, __file__, "--child", str(deal_sets), "--child-workers", str(workers),
                          "--child-kind", kind, "--tables", str(tables)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    rate, _, deals, cpu, machine = json.loads(out.splitlines()[-1])
    return float(rate), int(deals), float(cpu), machine


def kinds(args: argparse.Namespace) -> int:
    """Each kind of bot with one process and with ``--workers`` workers, interleaved."""
    names = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in names if k != "python" and k not in LAUNCHED]
    if unknown or args.workers < 2:
        print(f"--kinds takes python, {', '.join(LAUNCHED)}, with --workers 2 or more (not {', '.join(unknown)})",
              file=sys.stderr)
        return 2
    if any(kind.endswith("-native") for kind in names):
        try:
            native_bots()
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 2
    setups = [(kind, workers) for kind in names for workers in (1, args.workers)]
    rates: dict[tuple[str, int], list[float]] = {setup: [] for setup in setups}
    cpus: dict[tuple[str, int], list[float]] = {setup: [] for setup in setups}
    machines: dict[tuple[str, int], list[float]] = {setup: [] for setup in setups}
    for repeat in range(args.repeats):
        for kind, workers in (setups if repeat % 2 == 0 else setups[::-1]):
            deal_sets = args.deal_sets if kind == "python" else args.launched_deal_sets
            rate, deals, cpu, machine = measured_kind(kind, deal_sets, args.tables, workers)
            rates[kind, workers].append(rate)
            cpus[kind, workers].append(cpu)
            busy = ""
            if machine is not None:
                machines[kind, workers].append(machine)
                busy = f"; the machine {machine:8,.0f} µs CPU a deal, {machine * rate / 1e6:4.2f} cores busy"
            print(f"{kind:8s} {workers} worker{'s' if workers > 1 else ' '} {deals:6d} deals: {rate:8,.0f} deals/s; "
                  f"the arena's process {cpu:8,.0f} µs CPU a deal{busy}", flush=True)
    most, least = KIND_TARGETS
    print(f"medians of {args.repeats}; {args.workers} workers against one process, at {args.tables} tables "
          f"(launched bots) on {os.cpu_count()} cores:")
    print(f"{'kind':8s} {'1 process':>12s} {f'{args.workers} workers':>12s} {'ratio':>7s} "
          f"{'parent µs/deal 1':>17s} {f'{args.workers}':>6s} {'ratio':>6s} {'1M deals: hours 1':>18s} "
          f"{f'{args.workers}':>6s}")
    for kind in names:
        one, many = statistics.median(rates[kind, 1]), statistics.median(rates[kind, args.workers])
        cpu_one, cpu_many = statistics.median(cpus[kind, 1]), statistics.median(cpus[kind, args.workers])
        speed, share = many / one, cpu_many / cpu_one
        verdict = "meets both targets" if share <= most and speed >= least else (
            f"misses: {'CPU ratio > ' + str(most) if share > most else ''}"
            f"{', ' if share > most and speed < least else ''}{'speed-up < ' + str(least) if speed < least else ''}")
        print(f"{kind:8s} {one:12,.0f} {many:12,.0f} {speed:6.2f}x {cpu_one:17,.0f} {cpu_many:6,.0f} {share:6.2f} "
              f"{1e6 / one / 3600:18.2f} {1e6 / many / 3600:6.2f}  {verdict}")
    if all(machines.values()):
        # Where one process already keeps the cores busy, workers cannot make it faster: the ceiling is the
        # machine's cores over its CPU per deal.
        print(f"the machine's CPU per deal (the arena, workers and bots), and the deals/s its {os.cpu_count()} cores "
              "would allow at that cost:")
        for kind in names:
            for workers in (1, args.workers):
                machine = statistics.median(machines[kind, workers])
                print(f"{kind:8s} {workers} worker{'s' if workers > 1 else ' '} {machine:10,.0f} µs a deal; "
                      f"ceiling {(os.cpu_count() or 1) * 1e6 / machine:8,.0f} deals/s; measured "
                      f"{statistics.median(rates[kind, workers]):8,.0f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=500, help="deal sets per tournament (4 games each)")
    parser.add_argument("--repeats", type=int, default=3, help="tournaments to time")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another copy of the project to time the same way, interleaved")
    parser.add_argument("--workers", type=int, default=2, metavar="N",
                        help="also time this tree with N worker processes (1: only one process)")
    parser.add_argument("--kinds", default="", metavar="KINDS",
                        help="python, command, stdio, command-native and/or stdio-native, comma-separated: each "
                             "kind with 1 and N workers")
    parser.add_argument("--launched-deal-sets", type=int, default=15,
                        help="deal sets of the tournaments of launched bots (--kinds)")
    parser.add_argument("--tables", type=int, default=4, help="tables at once for launched bots (concurrency)")
    parser.add_argument("--child", type=int, metavar="DEAL_SETS", help=argparse.SUPPRESS)
    parser.add_argument("--child-workers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--child-kind", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        text = kind_config(args.child_kind, args.child, args.tables) if args.child_kind else None
        print(json.dumps(once(args.child, args.child_workers, text)))
        return 0
    if args.kinds:
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
              f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        status = kinds(args)
        print(f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        return status
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    trees = {"this": ROOT}
    if args.baseline is not None:
        trees["before"] = args.baseline.resolve()
    pooled = f"{args.workers}w" if args.workers > 1 else ""
    if pooled:  # the same tree, its games played by worker processes
        trees[pooled] = ROOT
    rates: dict[str, list[float]] = {label: [] for label in trees}
    whole: dict[str, list[float]] = {label: [] for label in trees}
    cpus: dict[str, list[float]] = {label: [] for label in trees}
    for repeat in range(args.repeats):
        # The trees take turns, each first in every other repetition, so that neither gains from going first.
        for label, tree in (list(trees.items()) if repeat % 2 == 0 else list(trees.items())[::-1]):
            rate, overall, deals, cpu = measured(args.deal_sets, tree, args.workers if label == pooled else 1)
            rates[label].append(rate)
            whole[label].append(overall)
            if cpu is not None:
                cpus[label].append(cpu)
            arena = f" (the arena's process: {cpu:,.0f} µs CPU a deal)" if cpu is not None else ""
            print(f"{label:6s} {deals} deals: {rate:,.0f} deals/s playing and recording; "
                  f"{overall:,.0f} deals/s with the final standings{arena}")
    for label in trees:
        print(f"{label:6s} median {statistics.median(rates[label]):,.0f} deals/s playing and recording "
              f"(target >= {TARGET:,}); {statistics.median(whole[label]):,.0f} deals/s with the final standings")
    if pooled:
        ratio = statistics.median(rates[pooled]) / statistics.median(rates["this"])
        overall = statistics.median(whole[pooled]) / statistics.median(whole["this"])
        print(f"{args.workers} workers / 1: {ratio:.2f} x playing and recording; {overall:.2f} x with the final "
              f"standings (this machine has {os.cpu_count()} cores, shared by the arena's process and the workers)")
    if args.baseline is not None:
        # Each repetition's two runs are next to each other in time: the median of their ratios is less
        # moved by a machine whose load changes than the ratio of the medians.
        ratio = statistics.median(this / before for this, before in zip(rates["this"], rates["before"], strict=True))
        overall = statistics.median(this / before for this, before in zip(whole["this"], whole["before"], strict=True))
        print(f"this / before: {ratio:.2f} x playing and recording (target >= 1.3); {overall:.2f} x with the "
              "final standings (medians of each repetition's ratio)")
        if len(cpus["this"]) == len(cpus["before"]) == args.repeats:  # per CPU second: the clock's noise left out
            ratio = statistics.median(before / this for this, before in zip(cpus["this"], cpus["before"], strict=True))
            print(f"this / before, deals per second of the arena process's CPU: {ratio:.2f} x (median "
                  f"{statistics.median(cpus['this']):,.0f} against {statistics.median(cpus['before']):,.0f} µs a deal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
