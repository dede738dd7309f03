"""A whole in-process tournament of random bots, records included: deals per second.

Four sample random bots, named by import path, play a duplicate round robin through the
in-process fast path; the records are written to a temporary results folder exactly as in a
real run. Prints deals per second (a deal is one round played at one table) for each repetition,
each run in a process of its own.

With ``--workers N`` (default 2), each repetition also runs it with N worker processes playing the
games (``tournament.workers``; the arena's own process then only hands out games and writes the
records), and the ratio of the medians to one process is printed.

With ``--baseline DIR``, each repetition also runs the same tournament with the code in DIR
(another copy of the project, e.g. ``git worktree add /tmp/before <commit>``), the two interleaved
so that they share the machine's noise, and the ratio of the medians is printed.

    python benchmarks/tournament.py [--deal-sets 500] [--repeats 3] [--workers 2] [--baseline DIR]
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

from arena.event.config import parse_config
from arena.event.tournament import Tournament
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


def once(deal_sets: int, workers: int = 1) -> tuple[float, float, int, float]:
    """(deals/s for games and records, deals/s for the whole run, deals, CPU µs of the arena's own
    process per deal while playing) of one tournament.

    A run from the command line ends by recomputing the standings from the records file; that pass
    is timed on its own and added for the second figure."""
    config = parse_config(CONFIG.format(deal_sets=deal_sets))
    if workers > 1:
        config = dataclasses.replace(config, workers=workers)
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "bench"
        tournament = Tournament(config, results)
        start, cpu = time.perf_counter(), time.process_time()
        summary = asyncio.run(tournament.run())
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        write_standings(results)
        standings = time.perf_counter() - start
        deals = sum(1 for _ in (results / "records.jsonl").open())
    assert summary.played * 5 == deals
    return deals / elapsed, deals / (elapsed + standings), deals, cpu / deals * 1e6


def measured(deal_sets: int, tree: Path, workers: int = 1) -> tuple[float, float, int, float | None]:
    """:func:`once` in a process of its own, with the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    extra = ["--child-workers", str(workers)] if workers > 1 else []
    out = subprocess.run([sys.executable, __file__, "--child", str(deal_sets), *extra], env=env, cwd=tree,
                         capture_output=True, text=True, check=True).stdout
    rate, overall, deals, *cpu = json.loads(out.splitlines()[-1])  # an older tree gives no CPU figure
    return float(rate), float(overall), int(deals), float(cpu[0]) if cpu else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=500, help="deal sets per tournament (4 games each)")
    parser.add_argument("--repeats", type=int, default=3, help="tournaments to time")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another copy of the project to time the same way, interleaved")
    parser.add_argument("--workers", type=int, default=2, metavar="N",
                        help="also time this tree with N worker processes (1: only one process)")
    parser.add_argument("--child", type=int, metavar="DEAL_SETS", help=argparse.SUPPRESS)
    parser.add_argument("--child-workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(once(args.child, args.child_workers)))
        return 0
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
