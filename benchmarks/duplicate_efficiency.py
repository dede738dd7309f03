"""How many fewer games duplicate play needs than independent deals, measured on real bots.

Two comparisons, A against B at one table with two heuristic opponents (A and B opposite each other):

- close: the heuristic bot against the same bot with ``aggression`` 0.3 (0.3 added to its trick
  estimate before the call is floored);
- far: the heuristic bot against the random bot.

Each is played in two designs, with the same number of games, in blocks of 4 games:

- duplicate: one deal set played in its 4 cyclic seat rotations;
- independent: every game has its own deal set (seats rotated the same way, so seats stay balanced).

Per block, d = (A's total - B's total) per game, averaged over the block's 4 games (points/game).

What is measured: games, not deal sets. Deal sets cost nothing; games cost the time. The precision of
the A - B estimate after G games is Var(d)/(G/4) in both designs, so at the same number of games

    ratio = s_ind^2 / s_dup^2

(the sample variances of the block values of d) is how many times fewer games duplicate needs for
the same standard error, whatever the size of the A - B difference. 4 s^2 is the per-game variance:
what the variance of one game's worth of evidence is (the mean of G games has variance 4 s^2 / G).
The independent design's single-game variance is printed beside it as a check; it can differ a
little, since a single game does not balance the seats. Means of d are not used in the ratio: they are noisy and
would only add their own noise (the difference itself is printed, with its t interval, for context).

Interval: the two designs are played on different deal sets, so the two sample variances are
independent, and for normally distributed block values (ratio / true ratio) follows the
F distribution with (n_ind - 1, n_dup - 1) degrees of freedom. The 95 % interval is

    [ratio / F(0.975; n_ind - 1, n_dup - 1),  ratio / F(0.025; n_ind - 1, n_dup - 1)].

F quantiles are computed here in pure Python: the F distribution function is the regularized
incomplete beta I_u(d1/2, d2/2) at u = d1 x / (d1 x + d2) (continued fraction, Numerical Recipes
6.4), inverted by bisection on u. It is checked at every start against printed table values and
closed forms (below). The F interval leans on normality: the excess kurtosis of the block values is
printed, and beside it an asymptotic interval on log(ratio) that uses the sample kurtosis instead
(var log s^2 ~ 2/(n - 1) + kurtosis/n), which is wider when the tails are heavy.

Rotation "once": what it costs in games. The same two comparisons are also played, on deal sets of their own, as
two more designs against the house bot (the arena's, seed 0, as ``rotation = "once"`` seats it):

- full rotation: one deal set in its 4 cyclic rotations, A and B opposite each other, two house bots beside them
  (4 games a deal set);
- once: A plays the deal set once against the house trio, in the seat ``rotation = "once"`` gives its round
  (``arena.event.plan.schedule.once_seat``), and B plays it once in the same seat against the same trio (2 games a deal
  set); d = A's total - B's, the difference on the same cards.

For each design, with s^2 the sample variance of its deal-set values of d (points/game) and g its games a deal set,
the games needed to separate two bots 1 point a game apart are

    g * ((z(0.975) + z(0.80)) * s / 1)^2

the deal sets a two-sided 5 % test of "A - B = 0" needs to detect a true difference of 1 point a game 80 % of the
time (z(0.975) + z(0.80) = 2.80), in games. The ratio of "once" to the full rotation against the same house bots,
(2 s_once^2) / (4 s_full^2), gets the F interval above (its deal sets are independent of the other design's); a
figure against the two heuristic opponents of the first design is printed beside it.

    python benchmarks/duplicate_efficiency.py [--blocks 500] [--jobs N] [--profile nepali] [--seed 11]

Every game is seeded (deals by --seed, bots by their role), so the figures do not depend on --jobs.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import functools
import math
import os
import platform
import resource
import statistics
import time
from typing import Any

from arena.core.dealing import seeded_deals
from arena.core.game import Game
from arena.core.rules import Rules
from arena.event.plan.schedule import once_seat
from arena.players.house import HouseBot
from arena.players.local import play_out
from arena.rating.stats import mean_ci, normal_quantile, t_quantile
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.random_bot import RandomBot

TARGET = 2.5
"""The README's target: duplicate needs at least this many times fewer games."""
LEVEL = 0.95

BOTS: dict[str, tuple[type, dict[str, Any]]] = {
    "heuristic": (HeuristicBot, {}),
    "heuristic aggression=0.3": (HeuristicBot, {"aggression": 0.3}),
    "random": (RandomBot, {}),
    "house": (HouseBot, {}),
}
HOUSE_SEED = 0
"""The house bots' seed, as the arena's house trio has it."""
POWER = 0.80
"""The chance of detecting the difference, in the games-needed figure."""
DIFFERENCE = 1.0
"""The difference to separate, in points per game."""
PAIRS = (
    ("close", "heuristic", "heuristic aggression=0.3", "heuristic"),
    ("far", "heuristic", "random", "heuristic"),
)
"""(label, A, B, the two opponents)."""


# -- the F distribution -------------------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    # The continued fraction of the incomplete beta by the modified Lentz method (Numerical Recipes 6.4).
    tiny = 1e-300
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            delta = c * d
            h *= delta
        if abs(delta - 1.0) < 1e-15:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (a={a}, b={b}, x={x})")


def beta_inc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    # The fraction converges fast on the side of the mean a / (a + b); use the symmetry on the other.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def f_cdf(x: float, d1: int, d2: int) -> float:
    """P(F ≤ x) for the F distribution with (d1, d2) degrees of freedom."""
    return 0.0 if x <= 0 else beta_inc(d1 / 2, d2 / 2, d1 * x / (d1 * x + d2))


def f_quantile(p: float, d1: int, d2: int) -> float:
    """The p-quantile of the F distribution with (d1, d2) degrees of freedom, by bisection."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie in (0, 1), not {p}")
    low, high = 0.0, 1.0  # on u = d1 x / (d1 x + d2), which the incomplete beta takes directly
    for _ in range(200):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if beta_inc(d1 / 2, d2 / 2, mid) < p:
            low = mid
        else:
            high = mid
    u = (low + high) / 2
    return d2 * u / (d1 * (1.0 - u))


F_TABLE = (
    # (p, d1, d2, F): values of printed F tables, to 3 decimals
    (0.95, 5, 10, 3.326),
    (0.95, 10, 10, 2.978),
    (0.95, 20, 20, 2.124),
    (0.95, 4, 30, 2.690),
    (0.99, 3, 20, 4.938),
    (0.99, 10, 10, 4.849),
    (0.975, 10, 20, 2.774),
    (0.95, 1, 1, 161.448),
)


def check_f_quantile() -> int:
    """Checks f_quantile against table values and closed forms; returns how many checks passed."""
    checks: list[tuple[str, float, float, float]] = [
        (f"F({p}; {d1}, {d2}) table", f_quantile(p, d1, d2), value, 5e-4 * value) for p, d1, d2, value in F_TABLE
    ]
    for p, d2 in ((0.95, 10), (0.975, 7), (0.025, 40), (0.5, 3)):
        # F(2, d2) has P(F > x) = (1 + 2x/d2)^(-d2/2) exactly.
        exact = d2 / 2 * ((1 - p) ** (-2 / d2) - 1)
        checks.append((f"F({p}; 2, {d2}) closed form", f_quantile(p, 2, d2), exact, 1e-9 * exact))
    for p, d2 in ((0.95, 9), (0.99, 30), (0.9, 499)):
        # F(1, d2) is the square of Student's t with d2 degrees of freedom.
        exact = t_quantile((1 + p) / 2, d2) ** 2
        checks.append((f"F({p}; 1, {d2}) = t²", f_quantile(p, 1, d2), exact, 1e-8 * exact))
    for p, d1, d2 in ((0.025, 499, 499), (0.025, 12, 5)):
        # The lower quantile is the reciprocal of the upper quantile with the degrees swapped.
        exact = 1 / f_quantile(1 - p, d2, d1)
        checks.append((f"F({p}; {d1}, {d2}) by symmetry", f_quantile(p, d1, d2), exact, 1e-9 * exact))
    # Large degrees of freedom: log F is close to normal with variance 2/d1 + 2/d2 (Fisher's z).
    big = f_quantile(0.975, 5000, 5000)
    checks.append(("F(0.975; 5000, 5000) ≈ Fisher's z", big, math.exp(1.959964 * math.sqrt(4 / 5000)), 2e-3))
    bad = [f"{name}: {got:.6g}, expected {want:.6g}" for name, got, want, tol in checks if abs(got - want) > tol]
    if bad:
        raise AssertionError("F quantile check failed: " + "; ".join(bad))
    return len(checks)


# -- playing ------------------------------------------------------------------------------------


@functools.cache
def _rules(profile: str) -> Rules:
    return Rules.profile(profile)


def _make(name: str, seed: int) -> Any:
    cls, options = BOTS[name]
    return cls(HOUSE_SEED if name == "house" else seed, **options)


def block(profile: str, a: str, b: str, opponent: str, seed: int, index: int, duplicate: bool) -> list[int]:
    """One block of 4 games: (A's total - B's total) of each game, in tenths."""
    rules = _rules(profile)
    order = ["a", "o1", "b", "o2"]
    names = {"a": a, "b": b, "o1": opponent, "o2": opponent}
    diffs = []
    for rotation in range(4):
        seats = [order[(s - rotation) % 4] for s in range(4)]
        deal_set = index if duplicate else 4 * index + rotation
        # Each role keeps its seed through the rotations: a seeded bot that holds the same hand
        # in the same seat decides the same way, as duplicate scoring expects.
        bots = [_make(names[role], order.index(role) + 1) for role in seats]
        # The two designs use different deal seeds, so their samples are independent.
        game = Game(rules, seeded_deals(seed if duplicate else seed + 1, deal_set), game_number=deal_set)
        play_out(game, bots)
        diffs.append(game.totals[seats.index("a")] - game.totals[seats.index("b")])
    return diffs


def once_block(profile: str, a: str, b: str, seed: int, index: int) -> list[int]:
    """One deal set under ``rotation = "once"``: A's game and B's, each in the round's seat against the house
    trio; (A's total - B's total) on the same cards, in tenths, as a list of one."""
    rules = _rules(profile)
    seat = once_seat(seed, index)
    totals = []
    for name, role_seed in ((a, 1), (b, 3)):  # the seeds block() gives A and B
        bots = [_make(name, role_seed) if place == seat else _make("house", HOUSE_SEED) for place in range(4)]
        game = Game(rules, seeded_deals(seed + 3, index), game_number=index)  # deals of their own: independent
        play_out(game, bots)
        totals.append(game.totals[seat])
    return [totals[0] - totals[1]]


def _block_task(args: tuple[str, str, str, str, int, int, bool]) -> list[int]:
    return block(*args)


def _house_task(args: tuple[str, str, str, int, int, bool]) -> list[int]:
    """A deal set against the house bots: its 4 cyclic rotations (deal seed + 2), or under "once" A's and B's game."""
    profile, a, b, seed, index, once = args
    return once_block(profile, a, b, seed, index) if once else block(profile, a, b, "house", seed + 2, index, True)


# -- statistics ---------------------------------------------------------------------------------


def excess_kurtosis(values: list[float]) -> float:
    """The sample excess kurtosis m4/m2² - 3 (0 for normal data)."""
    mean = statistics.fmean(values)
    m2 = statistics.fmean([(x - mean) ** 2 for x in values])
    m4 = statistics.fmean([(x - mean) ** 4 for x in values])
    return m4 / m2**2 - 3.0


@dataclasses.dataclass(frozen=True)
class Design:
    """One design's block values of d (points/game) and the single-game differences."""

    blocks: list[float]
    games: list[float]

    @property
    def block_var(self) -> float:
        return statistics.variance(self.blocks)

    @property
    def per_game_var(self) -> float:
        """4 s²: the mean of G games has variance per_game_var / G."""
        return 4 * self.block_var


@dataclasses.dataclass(frozen=True)
class Result:
    label: str
    dup: Design
    ind: Design
    ratio: float
    low: float
    high: float
    df: tuple[int, int]
    kurtosis_low: float
    kurtosis_high: float


def compare(label: str, dup: Design, ind: Design) -> Result:
    """The games ratio s_ind² / s_dup² with its F interval and a kurtosis-adjusted check."""
    n_ind, n_dup = len(ind.blocks), len(dup.blocks)
    df = (n_ind - 1, n_dup - 1)
    ratio = ind.block_var / dup.block_var
    tail = (1 - LEVEL) / 2
    low = ratio / f_quantile(1 - tail, *df)
    high = ratio / f_quantile(tail, *df)
    # Asymptotically var(log s²) = 2/(n - 1) + κ/n, κ the excess kurtosis; F assumes κ = 0.
    spread = math.sqrt(sum(2 / (n - 1) + excess_kurtosis(d.blocks) / n for d, n in ((ind, n_ind), (dup, n_dup))))
    z = normal_quantile(1 - tail)
    return Result(label, dup, ind, ratio, low, high, df, ratio * math.exp(-z * spread), ratio * math.exp(z * spread))


@dataclasses.dataclass(frozen=True)
class Cost:
    """Games to separate two bots :data:`DIFFERENCE` points a game apart, under the full rotation and under once."""

    label: str
    full: float
    """Against the house bots, 4 games a deal set."""
    once: float
    heuristic: float
    """The full rotation against two heuristic opponents (the first design)."""
    ratio: float
    """once / full, against the same house bots."""
    low: float
    high: float


def games_needed(values: list[float], games_per_deal_set: int) -> float:
    """Games for a two-sided 5 % test to detect :data:`DIFFERENCE` points a game :data:`POWER` of the time."""
    z = normal_quantile(1 - (1 - LEVEL) / 2) + normal_quantile(POWER)
    return games_per_deal_set * (z * math.sqrt(statistics.variance(values)) / DIFFERENCE) ** 2


def cost(label: str, full: Design, once: Design, heuristic: Design) -> Cost:
    """What once costs in games against the full rotation, with the ratio's F interval."""
    ratio = 2 * once.block_var / (4 * full.block_var)
    df = (len(once.blocks) - 1, len(full.blocks) - 1)
    tail = (1 - LEVEL) / 2
    return Cost(label, games_needed(full.blocks, 4), games_needed(once.blocks, 2), games_needed(heuristic.blocks, 4),
                ratio, ratio / f_quantile(1 - tail, *df), ratio / f_quantile(tail, *df))


def report_cost(found: Cost, a: str, b: str) -> None:
    print(f"  games to separate {a} and {b} if {DIFFERENCE:g} point a game apart (5% two-sided, power {POWER:.0%}):"
          f" full rotation {found.full:,.0f} against two house bots ({found.heuristic:,.0f} against two heuristic"
          f" bots), once {found.once:,.0f} against the house trio: once needs {found.ratio:.2f}x the games"
          f" [95% CI {found.low:.2f}, {found.high:.2f}]")


def verdict(result: Result) -> str:
    if result.low >= TARGET:
        return f"meets the {TARGET}x target (the whole interval is above it)"
    if result.high < TARGET:
        return f"does not meet the {TARGET}x target (the whole interval is below it)"
    side = "above" if result.ratio >= TARGET else "below"
    return f"estimate {side} the {TARGET}x target, but the interval includes it"


def report(result: Result, a: str, b: str, opponent: str, seconds: float) -> None:
    n = len(result.dup.blocks)
    print(
        f"\n{result.label}: {a} (A) vs {b} (B), opponents two {opponent} bots"
        f" ({n} blocks = {4 * n} games per design, {seconds:.0f} s)"
    )
    for name, design in (("duplicate", result.dup), ("independent", result.ind)):
        ci = mean_ci(design.blocks, LEVEL)
        print(
            f"  {name:12s} A - B = {ci.mean:+6.2f} points/game [{ci.low:+6.2f}, {ci.high:+6.2f}];"
            f" block variance {design.block_var:7.2f}, per game (x4) {design.per_game_var:7.1f}"
            f"; block excess kurtosis {excess_kurtosis(design.blocks):+.2f}"
        )
    print(
        f"  {'':12s} single-game variance of the independent design {statistics.variance(result.ind.games):.1f}"
        " (seats not balanced within a game)"
    )
    print(
        f"  duplicate needs {result.ratio:.2f}x fewer games, 95% CI [{result.low:.2f}, {result.high:.2f}]"
        f" (F with {result.df[0]}, {result.df[1]} df; kurtosis-adjusted"
        f" [{result.kurtosis_low:.2f}, {result.kurtosis_high:.2f}])"
    )
    print(f"  {verdict(result)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--blocks",
        type=int,
        default=500,
        help="blocks of 4 games per design and comparison (default 500; more narrows the interval)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    parser.add_argument("--profile", default="nepali", help="rules profile")
    parser.add_argument("--seed", type=int, default=11, help="deal seed")
    args = parser.parse_args(argv)
    if args.blocks < 2:
        parser.error("--blocks must be at least 2")
    checks = check_f_quantile()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()};"
        f" {args.jobs} worker process(es); F quantiles checked ({checks} table values and closed forms)"
    )
    start = time.perf_counter()
    results = []
    costs = []
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for label, a, b, opponent in PAIRS:
            pair_start = time.perf_counter()
            designs = []
            for duplicate in (True, False):
                tasks = [(args.profile, a, b, opponent, args.seed, i + 1, duplicate) for i in range(args.blocks)]
                diffs = list(pool.map(_block_task, tasks, chunksize=8))
                designs.append(Design([sum(d) / 40 for d in diffs], [x / 10 for d in diffs for x in d]))
            result = compare(label, *designs)
            report(result, a, b, opponent, time.perf_counter() - pair_start)
            results.append(result)
            house = []
            for once in (False, True):
                tasks_ = [(args.profile, a, b, args.seed, i + 1, once) for i in range(args.blocks)]
                diffs = list(pool.map(_house_task, tasks_, chunksize=8))
                house.append(Design([sum(d) / (10 * len(d)) for d in diffs], [x / 10 for d in diffs for x in d]))
            costs.append(cost(label, house[0], house[1], designs[0]))
            report_cost(costs[-1], a, b)
    total = time.perf_counter() - start
    # The workers have been reaped, so their CPU time is counted: on a busy machine, wall time is not.
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    print(f"\n{(4 + 4 + 4 + 2) * args.blocks * len(PAIRS)} games in {total:.0f} s wall, {cpu:.0f} s CPU in the"
          " workers")
    for result in results:
        print(
            f"  {result.label}: {result.ratio:.2f}x fewer games [{result.low:.2f}, {result.high:.2f}]"
            f" -> {verdict(result)}"
        )
    for found in costs:
        print(f"  {found.label}, games to separate two bots {DIFFERENCE:g} point a game apart: full rotation"
              f" {found.full:,.0f}, once {found.once:,.0f} ({found.ratio:.2f}x [{found.low:.2f}, {found.high:.2f}])")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
