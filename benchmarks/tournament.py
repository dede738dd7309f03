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

from arena.config import parse_config
from arena.tournament import Tournament

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


def once(deal_sets: int) -> tuple[float, int]:
    """(deals/s, deals) of one whole tournament."""
    config = parse_config(CONFIG.format(deal_sets=deal_sets))
    with tempfile.TemporaryDirectory() as folder:
        tournament = Tournament(config, Path(folder) / "bench")
        start = time.perf_counter()
        summary = asyncio.run(tournament.run())
        elapsed = time.perf_counter() - start
        deals = sum(1 for _ in (Path(folder) / "bench" / "records.jsonl").open())
    assert summary.played * 5 == deals
    return deals / elapsed, deals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=500, help="deal sets per tournament (4 games each)")
    parser.add_argument("--repeats", type=int, default=3, help="tournaments to time")
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    rates = []
    for _ in range(args.repeats):
        rate, deals = once(args.deal_sets)
        rates.append(rate)
        print(f"{deals} deals: {rate:,.0f} deals/s")
    print(f"median {statistics.median(rates):,.0f} deals/s (target >= {TARGET:,})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
