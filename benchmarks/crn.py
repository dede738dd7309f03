"""How many fewer games a sequential test between two close versions of a stochastic bot needs when both
draw their random numbers from the arena's seat seeds (common random numbers).

Two Monte Carlo bots that differ only in their deals per decision (``--samples-a`` against
``--samples-b``, 8 against 12 by default) meet at one table, opposite each other, with two heuristic
bots between them; each deal set is played in its 4 cyclic rotations (a duplicate block), as
``benchmarks/strength.py`` plays it. Every deal set is played twice:

- **shared draws**: both versions with the same seed (0), so on the same seat and cards they key their
  generators with the same seat seed and draw the same deals (what the arena's ``seat_seed`` gives; the games
  are given a fixed key of the seat seeds made from the deal seed, where an event draws a random one);
- **independent draws**: the versions with different seeds (1 and 2), so their draws have nothing in
  common, as for bots that seed themselves from the clock or from anything of their own.

The unit of evidence is the deal set: its A - B points per game over the 4 games. Printed for each
way: the mean difference with its 95 % t interval (the same pair of bots: the two should agree) and
the standard deviation across deal sets. Then the saving:

- the **variance ratio** (independent / shared): under the normal approximation an SPRT's expected
  number of blocks is proportional to the variance of a block, so this is the ratio of games needed;
- the **SPRT's games** simulated: the project's own test (:class:`arena.rating.sequential.SequentialTest`,
  H0 0 against H1 ``--delta`` points per game, alpha = beta = 0.05) run ``--runs`` times on blocks drawn
  from each way's own deal sets (their deviations from their mean, plus a true difference of 0 or of
  ``--delta``), the mean number of blocks to a decision in each way, and their ratio.

Each ratio's 95 % interval comes from resampling the deal sets (the same deal sets for both ways, as
they were played) ``--resamples`` times and computing the ratio again.

    python benchmarks/crn.py [--deal-sets 200] [--samples-a 8] [--samples-b 12] [--delta 0.5]
                             [--jobs N] [--runs 400] [--resamples 200] [--seed 17]

Deals, seat seeds, bots and resampling are seeded: the figures do not depend on ``--jobs``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import platform
import random
import statistics
import time

from arena.core.dealing import seeded_deals
from arena.core.game import Game
from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.players.local import play_out
from arena.rating.sequential import SequentialTest
from arena.rating.stats import ClusteredMean
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.montecarlo_bot import MonteCarloBot

WAYS = (("shared draws", 0, 0), ("independent draws", 1, 2))
"""(label, A's seed, B's seed)."""


def seat_key(deal_seed: int) -> bytes:
    """The key of the seat seeds: fixed by the deal seed, so the figures can be had again."""
    return hashlib.sha256(f"benchmarks/crn/seat-key/{deal_seed}".encode()).digest()


def block(deal_set: int, seed_a: int, seed_b: int, samples_a: int, samples_b: int, deal_seed: int) -> float:
    """One deal set in its 4 rotations: A's points minus B's, per game."""
    rules = Rules.profile("nepali")
    key = seat_key(deal_seed)
    order = ("a", "o1", "b", "o2")
    diff = 0
    for rotation in range(4):
        roles = [order[(s - rotation) % 4] for s in range(4)]
        bots = {"a": MonteCarloBot(seed_a, samples=samples_a), "b": MonteCarloBot(seed_b, samples=samples_b),
                "o1": HeuristicBot(1), "o2": HeuristicBot(2)}
        game = Game(rules, seeded_deals(deal_seed, deal_set), game_number=deal_set, seat_key=key)
        play_out(game, [bots[role] for role in roles])
        diff += game.totals[roles.index("a")] - game.totals[roles.index("b")]
    return diff / tenths_per_point(rules) / 4


def _task(args: tuple[int, int, int, int, int, int]) -> float:
    return block(*args)


def blocks_to_decide(residuals: list[float], effect: float, delta: float, runs: int, rng: random.Random) -> float:
    """The mean number of blocks the SPRT takes to decide, on blocks drawn from ``residuals`` plus ``effect``."""
    total = 0
    for _ in range(runs):
        test = SequentialTest(0.0, delta, cap=20_000)
        while not test.add(rng.choice(residuals) + effect):
            pass
        total += len(test.values)
    return total / runs


def ratios(shared: list[float], independent: list[float], delta: float, runs: int,
           rng: random.Random) -> tuple[float, float, float]:
    """The variance ratio and the SPRT's games ratio at a true difference of 0 and of ``delta``."""
    centred = [[v - statistics.fmean(way) for v in way] for way in (shared, independent)]
    variance = statistics.variance(independent) / statistics.variance(shared)
    at = [blocks_to_decide(centred[1], effect, delta, runs, rng)
          / blocks_to_decide(centred[0], effect, delta, runs, rng) for effect in (0.0, delta)]
    return variance, at[0], at[1]


def interval(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[int(0.025 * (len(ordered) - 1))], ordered[int(0.975 * (len(ordered) - 1))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=200, help="deal sets, 4 games each, per way (default 200)")
    parser.add_argument("--samples-a", type=int, default=8, help="deals per decision of version A (default 8)")
    parser.add_argument("--samples-b", type=int, default=12, help="deals per decision of version B (default 12)")
    parser.add_argument("--delta", type=float, default=0.5,
                        help="the SPRT's H1, in points per game (H0 is 0; default 0.5)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    parser.add_argument("--runs", type=int, default=400,
                        help="simulated SPRTs per way and true difference (default 400)")
    parser.add_argument("--resamples", type=int, default=200, help="resamplings of the deal sets (default 200)")
    parser.add_argument("--seed", type=int, default=17, help="deal seed (default 17)")
    args = parser.parse_args(argv)
    if args.deal_sets < 10:
        parser.error("--deal-sets must be at least 10")
    if min(args.samples_a, args.samples_b, args.jobs, args.runs, args.resamples) < 1:
        parser.error("--samples-a, --samples-b, --jobs, --runs and --resamples must be at least 1")
    if not args.delta > 0:
        parser.error("--delta must be a positive number of points per game")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}; {args.jobs} worker process(es)")
    print(f"Monte Carlo at {args.samples_a} (A) against {args.samples_b} (B) deals per decision, two heuristic bots; "
          f"nepali rules; {args.deal_sets} deal sets x 4 rotations per way; deal seed {args.seed}", flush=True)
    start = time.perf_counter()
    found: dict[str, list[float]] = {}
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for label, seed_a, seed_b in WAYS:
            tasks = [(n, seed_a, seed_b, args.samples_a, args.samples_b, args.seed)
                     for n in range(1, args.deal_sets + 1)]
            found[label] = list(pool.map(_task, tasks))
            gap = ClusteredMean()
            for value in found[label]:
                gap.add(4 * value, 4)
            ci = gap.interval(0.95)
            print(f"  {label:<18} A - B {ci.mean:+.2f} [{ci.low:+.2f}, {ci.high:+.2f}] points per game; "
                  f"sd across deal sets {statistics.stdev(found[label]):.2f}", flush=True)
    shared, independent = found["shared draws"], found["independent draws"]
    rng = random.Random(args.seed)
    point = ratios(shared, independent, args.delta, args.runs, rng)
    again: list[tuple[float, float, float]] = []
    for _ in range(args.resamples):
        picks = [rng.randrange(args.deal_sets) for _ in range(args.deal_sets)]
        again.append(ratios([shared[i] for i in picks], [independent[i] for i in picks], args.delta,
                            max(1, args.runs // 4), rng))
    names = ("variance ratio (independent / shared)",
             f"SPRT games ratio, true difference 0 (H0 0 vs H1 {args.delta:+g})",
             f"SPRT games ratio, true difference {args.delta:+g}")
    for k, name in enumerate(names):
        low, high = interval([r[k] for r in again])
        print(f"  {name}: {point[k]:.2f} [{low:.2f}, {high:.2f}]")
    print(f"  so an SPRT between these two versions needs about {point[1]:.1f} to {point[2]:.1f} times as many games "
          "with independent draws as with shared ones")
    print(f"elapsed {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
