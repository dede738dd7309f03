"""How much duplicate rotation saves, measured on real bots.

Two comparisons, A against B at one table with two opponents (A and B opposite each other):

- the heuristic bot against the random bot;
- two heuristic variants that differ slightly (``aggression`` 0 and 0.3).

Each is played twice, with the same number of games:

- duplicate: each deal set is played in its 4 cyclic rotations (a block of 4 games);
- independent: each game has its own deal set, seats rotated the same way (a block of 4 games).

For each design the per-block statistic is d = (A's total - B's total) per game. The number of
blocks needed to separate A from B at 95 % is n = (1.96 sd / mean)^2; duplicate needs n_dup deal
sets (and 4 n_dup games), independent needs 4 n_ind deal sets (and 4 n_ind games). Printed: the
mean and sd of d in both designs, the blocks, games and deal sets each needs, and the ratios.

    python benchmarks/duplicate_efficiency.py [--blocks 300] [--profile nepali]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from arena.core.dealing import seeded_deals
from arena.core.game import Game
from arena.core.rules import Rules
from arena.players.local import play_out
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.random_bot import RandomBot

TARGET = 2.5

Factory = Callable[[int], Any]


def play(rules: Rules, bots: list[Any], seed: int, deal_set: int) -> list[int]:
    """One game, step by step, in-process; returns the totals by seat."""
    game = Game(rules, seeded_deals(seed, deal_set), game_number=deal_set)
    play_out(game, bots)
    return list(game.totals)


def block(rules: Rules, a: Factory, b: Factory, opponent: Factory, seed: int, index: int, duplicate: bool) -> float:
    """d for one block: (A's total - B's total) per game over the 4 rotations."""
    order = ["a", "o1", "b", "o2"]
    makers = {"a": a, "b": b, "o1": opponent, "o2": opponent}
    diffs = []
    for rotation in range(4):
        seats = [order[(s - rotation) % 4] for s in range(4)]
        deal_set = index if duplicate else 4 * index + rotation
        # Each role keeps its seed through the rotations: a seeded bot that holds the same hand
        # in the same seat decides the same way, as duplicate scoring expects.
        bots = [makers[name](order.index(name) + 1) for name in seats]
        totals = play(rules, bots, seed if duplicate else seed + 1, deal_set)
        diffs.append(totals[seats.index("a")] - totals[seats.index("b")])
    return sum(diffs) / 4


def needed(values: list[float]) -> float:
    """Blocks needed for mean / standard error to reach 1.96."""
    mean = statistics.fmean(values)
    sd = statistics.stdev(values)
    return math.inf if mean == 0 else (1.96 * sd / mean) ** 2


def measure(name: str, rules: Rules, a: Factory, b: Factory, opponent: Factory, blocks: int, seed: int) -> float:
    start = time.perf_counter()
    dup = [block(rules, a, b, opponent, seed, i + 1, True) for i in range(blocks)]
    ind = [block(rules, a, b, opponent, seed, i + 1, False) for i in range(blocks)]
    n_dup, n_ind = needed(dup), needed(ind)
    print(f"\n{name} ({blocks} blocks of 4 games per design, {time.perf_counter() - start:.0f} s)")
    for label, values, n, deal_sets in (("duplicate", dup, n_dup, n_dup), ("independent", ind, n_ind, 4 * n_ind)):
        mean, sd = statistics.fmean(values) / 10, statistics.stdev(values) / 10
        print(f"  {label:12s} d = {mean:+7.2f} points/game, sd {sd:6.2f}  -> {n:8.1f} blocks = {4 * n:8.1f} games"
              f" = {deal_sets:8.1f} deal sets to separate at 95%")
    games_ratio = n_ind / n_dup
    print(f"  duplicate needs {games_ratio:.2f}x fewer games and {4 * games_ratio:.2f}x fewer deal sets")
    return games_ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=300, help="blocks per design and comparison")
    parser.add_argument("--profile", default="nepali", help="rules profile")
    parser.add_argument("--seed", type=int, default=11, help="deal seed")
    args = parser.parse_args(argv)
    rules = Rules.profile(args.profile)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    heuristic: Factory = lambda seed: HeuristicBot(seed)  # noqa: E731
    bold: Factory = lambda seed: HeuristicBot(seed, aggression=0.3)  # noqa: E731
    random_bot: Factory = lambda seed: RandomBot(seed)  # noqa: E731
    ratios = [
        measure("heuristic vs random (opponents: two heuristic bots)", rules, heuristic, random_bot, heuristic,
                args.blocks, args.seed),
        measure("heuristic vs heuristic aggression=0.3 (opponents: two heuristic bots)", rules, heuristic, bold,
                heuristic, args.blocks, args.seed),
    ]
    print(f"\nduplicate needs {min(ratios):.2f}x to {max(ratios):.2f}x fewer games for the same confidence "
          f"(target >= {TARGET}x fewer deal sets; per game is the stricter measure)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
