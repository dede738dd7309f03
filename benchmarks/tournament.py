"""A whole in-process tournament of random bots, records included: deals per second.

Four sample random bots, named by import path, play a duplicate round robin through the
in-process fast path; the records are written to a temporary results folder exactly as in a
real run. Prints deals per second (a deal is one round played at one table) for each repetition.

    python benchmarks/tournament.py [--deal-sets 500] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from arena.event.config import parse_config
from arena.event.tournament import Tournament
from arena.rating.report import write_standings

TARGET = 10_000

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


def once(deal_sets: int) -> tuple[float, float, int]:
    """(deals/s for games and records, deals/s for the whole run, deals) of one tournament.

    A run from the command line ends by recomputing the standings from the records file; that pass
    is timed on its own and added for the second figure."""
    config = parse_config(CONFIG.format(deal_sets=deal_sets))
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "bench"
        tournament = Tournament(config, results)
        start = time.perf_counter()
        summary = asyncio.run(tournament.run())
        elapsed = time.perf_counter() - start
        start = time.perf_counter()
        write_standings(results)
        standings = time.perf_counter() - start
        deals = sum(1 for _ in (results / "records.jsonl").open())
    assert summary.played * 5 == deals
    return deals / elapsed, deals / (elapsed + standings), deals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=500, help="deal sets per tournament (4 games each)")
    parser.add_argument("--repeats", type=int, default=3, help="tournaments to time")
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    rates, whole = [], []
    for _ in range(args.repeats):
        rate, overall, deals = once(args.deal_sets)
        rates.append(rate)
        whole.append(overall)
        print(f"{deals} deals: {rate:,.0f} deals/s playing and recording; "
              f"{overall:,.0f} deals/s with the final standings")
    print(f"median {statistics.median(rates):,.0f} deals/s playing and recording (target >= {TARGET:,}); "
          f"{statistics.median(whole):,.0f} deals/s with the final standings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
