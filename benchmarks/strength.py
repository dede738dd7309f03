"""How much stronger each sample bot is than the one below it: random < heuristic < Monte Carlo.

Two comparisons, each A against B at one table with two heuristic opponents, A and B opposite
each other:

- Monte Carlo - heuristic: :class:`MonteCarloBot` (a fixed number of sampled deals per decision,
  ``--samples``, so the run is reproducible) against :class:`HeuristicBot`;
- heuristic - random: :class:`HeuristicBot` against :class:`RandomBot`.

Each deal set is played in its 4 cyclic seat rotations (a duplicate block): A and B hold the same
hands, in the same seats, against the same opponents, and each role keeps its seed through the
rotations. The games of a deal set share their cards, so the deal set is the unit of evidence: its
A - B total over the 4 games is one cluster of the project's clustered ratio
(:class:`arena.rating.stats.ClusteredMean`, the one the standings use), which gives the difference
in points per game and its 95 % t interval on (deal sets - 1) degrees of freedom.

Also printed: each bot's time per decision (mean and longest, over every call and card it made,
timed with ``time.perf_counter`` around the call in the worker processes, so a loaded machine shows
in them), and the elapsed time. The bots are in-process, asked through their seat views as a table
would ask them.

    python benchmarks/strength.py [--deal-sets 200] [--samples 32] [--jobs N] [--profile nepali] [--seed 13]

Every game is seeded (deals by ``--seed``, bots by their role), so the figures other than the times
do not depend on ``--jobs``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import platform
import time
from typing import Any

from arena.core.cards import Card
from arena.core.dealing import seeded_deals
from arena.core.game import Game
from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.core.views import View
from arena.players.local import play_out
from arena.rating.stats import ClusteredMean
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.montecarlo_bot import MonteCarloBot
from sample_bots.random_bot import RandomBot

LEVEL = 0.95
"""The confidence level of the intervals."""

COMPARISONS = (
    ("Monte Carlo - heuristic", "montecarlo", "heuristic", "heuristic"),
    ("heuristic - random", "heuristic", "random", "heuristic"),
)
"""(label, A, B, the two opponents)."""


def make(name: str, seed: int, samples: int) -> Any:
    """A fresh bot of the sample ladder."""
    if name == "montecarlo":
        return MonteCarloBot(seed, samples=samples)
    if name == "heuristic":
        return HeuristicBot(seed)
    return RandomBot(seed)


@dataclasses.dataclass
class Tally:
    """Decisions timed for one bot: how many, their total and the longest, in seconds."""

    decisions: int = 0
    seconds: float = 0.0
    longest: float = 0.0

    def add(self, seconds: float) -> None:
        self.decisions += 1
        self.seconds += seconds
        self.longest = max(self.longest, seconds)

    def merge(self, other: Tally) -> None:
        self.decisions += other.decisions
        self.seconds += other.seconds
        self.longest = max(self.longest, other.longest)


class Timed:
    """A bot whose every call and card is timed into a tally; it decides exactly as the bot does."""

    def __init__(self, bot: Any, tally: Tally) -> None:
        self.bot = bot
        self.tally = tally

    def call(self, view: View) -> int:
        start = time.perf_counter()
        call = self.bot.call(view)
        self.tally.add(time.perf_counter() - start)
        return int(call)

    def play(self, view: View) -> Card | str:
        start = time.perf_counter()
        card = self.bot.play(view)
        self.tally.add(time.perf_counter() - start)
        return card  # type: ignore[no-any-return]


def block(
    profile: str, a: str, b: str, opponent: str, seed: int, deal_set: int, samples: int,
) -> tuple[int, dict[str, Tally]]:
    """One deal set in its 4 rotations: A's total minus B's over the 4 games (in the rules' score
    units), and the decisions timed, by bot."""
    rules = Rules.profile(profile)
    order = ["a", "o1", "b", "o2"]
    names = {"a": a, "b": b, "o1": opponent, "o2": opponent}
    tallies = {name: Tally() for name in names.values()}
    diff = 0
    for rotation in range(4):
        seats = [order[(s - rotation) % 4] for s in range(4)]
        bots = [Timed(make(names[role], order.index(role) + 1, samples), tallies[names[role]]) for role in seats]
        game = Game(rules, seeded_deals(seed, deal_set), game_number=deal_set)
        play_out(game, bots)
        diff += game.totals[seats.index("a")] - game.totals[seats.index("b")]
    return diff, tallies


def _block_task(args: tuple[str, str, str, str, int, int, int]) -> tuple[int, dict[str, Tally]]:
    return block(*args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=200,
                        help="duplicate deal sets per comparison, 4 games each (default 200)")
    parser.add_argument("--samples", type=int, default=32,
                        help="deals the Monte Carlo bot samples per decision (default 32)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    parser.add_argument("--profile", default="nepali", help="rules profile (default nepali)")
    parser.add_argument("--seed", type=int, default=13, help="deal seed (default 13)")
    args = parser.parse_args(argv)
    if args.deal_sets < 2:
        parser.error("--deal-sets must be at least 2: an interval needs two deal sets")
    if args.samples < 1 or args.jobs < 1:
        parser.error("--samples and --jobs must be at least 1")
    rules = Rules.profile(args.profile)
    unit = tenths_per_point(rules)
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}; {args.jobs} worker process(es)")
    print(f"rules {args.profile}; {args.deal_sets} deal sets x 4 rotations = {4 * args.deal_sets} games per "
          f"comparison; Monte Carlo at {args.samples} deals per decision; deal seed {args.seed}", flush=True)
    start = time.perf_counter()
    tallies: dict[str, Tally] = {}
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for label, a, b, opponent in COMPARISONS:
            began = time.perf_counter()
            tasks = [(args.profile, a, b, opponent, args.seed, n, args.samples) for n in range(1, args.deal_sets + 1)]
            gap = ClusteredMean()
            for diff, timed in pool.map(_block_task, tasks):
                gap.add(diff / unit, 4)  # one cluster: the deal set's A - B points over its 4 games
                for name, tally in timed.items():
                    tallies.setdefault(name, Tally()).merge(tally)
            ci = gap.interval(LEVEL)
            excludes = "yes" if ci.low > 0 or ci.high < 0 else "no"
            print(f"\n{label}: {ci.mean:+.2f} points/game, {LEVEL:.0%} CI [{ci.low:+.2f}, {ci.high:+.2f}] "
                  f"(clustered by deal set, {ci.df} df; {time.perf_counter() - began:.0f} s)")
            print(f"  interval excludes 0: {excludes}", flush=True)
    print("\ntime per decision (every call and card, timed in the worker processes):")
    for name in ("montecarlo", "heuristic", "random"):
        tally = tallies[name]
        print(f"  {name:10s} mean {1000 * tally.seconds / tally.decisions:8.3f} ms, "
              f"max {1000 * tally.longest:8.1f} ms ({tally.decisions:,} decisions)")
    print(f"\nelapsed: {time.perf_counter() - start:.0f} s wall, {args.jobs} worker process(es)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
