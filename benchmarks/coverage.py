"""Coverage of the standings' 95 % intervals of the duplicate score, by simulating whole tournaments.

Each replicate is a duplicate round robin of B bots (every group of four plays every deal set in its
four cyclic rotations, as the arena schedules 4 to 8 bots), D deal sets of five-round games. Every
round score (tenths) is

    score = card(hand) + skill(bot) + interaction(bot, hand) + noise

- card: what the hand (deal set, round, seat) is worth to anyone; the same at every table of the round;
- skill: the bot's true edge per round, fixed and known;
- interaction: how well this bot in particular plays this hand, the same at every table where it
  holds the hand (deterministic bots meet the same cards the same way); this is what makes a bot's
  blocks of one round share their luck. Two shapes: normal, and skewed as real round scores are
  (mostly a little better than average, now and then far worse, as when a missed call costs the
  whole call): a centred exponential, skewness −2, with the same standard deviation;
- noise: everything else, fresh at every table.

The games are built as records (:class:`~arena.records.format.GameRecords`) and go through
``tally(records).standings()``; a bot's true duplicate score per game is 5 × (its skill − the mean skill of
the others), which its interval should cover 95 % of the time. Printed per field size: the share of
intervals that covered the truth, its binomial standard error, and the mean interval width.

    python benchmarks/coverage.py                     # 1,000 tournaments per field size and model
    python benchmarks/coverage.py --replicates 200 --bots 6
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import multiprocessing
import os
import platform
import random
import time
from collections.abc import Sequence

from arena.core.cards import Hand, Suit
from arena.core.game import places
from arena.core.rules import Rules
from arena.rating.ratings import tally
from arena.records.format import GameRecords, RoundRecord

RULES = Rules.profile()
ROUNDS = 5


@dataclasses.dataclass(frozen=True)
class Model:
    """Standard deviations of the parts of a round score, in tenths."""

    card: float = 35.0
    interaction: float = 25.0
    noise: float = 15.0
    skill_spread: float = 4.0
    """Skills are evenly spaced from −spread to +spread tenths per round."""
    skewed: bool = False
    """The interaction drawn from a centred exponential (skewness −2) instead of a normal."""
    name: str = "normal"


STRONG = Model()
"""A strong bot × hand interaction: larger than the fresh noise at each table."""
SKEWED = Model(skewed=True, name="skewed")
"""The same, with the interaction skewed like real round scores."""
MODELS = {model.name: model for model in (STRONG, SKEWED)}


def skills(bots: int, model: Model) -> list[float]:
    return [model.skill_spread * (2 * i / (bots - 1) - 1) for i in range(bots)]


def truth(bots: int, model: Model) -> list[float]:
    """True duplicate score per game of each bot: five rounds of its edge over the mean of the others."""
    s = skills(bots, model)
    return [ROUNDS * (x - (sum(s) - x) / (bots - 1)) for x in s]


def _record(game: str, block: str, number: int, group: int, deal_set: int, rotation: int, seats: tuple[str, ...],
            round_number: int, scores: tuple[int, ...], totals: tuple[int, ...], final: bool) -> RoundRecord:
    return RoundRecord(
        line=0, version=2, tournament="coverage", game=game, block=block, schedule_round=number, group=group,
        deal_set=deal_set, rotation=rotation, seed=0, deals="seed", rules=RULES, seats=seats, first_dealer=3,
        deal=f"{deal_set}.{round_number}.0", round=round_number, attempt=0, dealer=(3 + round_number - 1) % 4,
        trump=Suit.SPADES, hands=(Hand(),) * 4, calls=(3, 3, 3, 3), tricks=(), tricks_won=(3, 3, 3, 4), scores=scores,
        totals=totals, faults=(), redeals=(), fallbacks=(0, 0, 0, 0), final=final,
        places=places(totals) if final else (), versions=("", "", "", ""),
        think_ms=(),
    )


def _interaction(rng: random.Random, model: Model) -> float:
    if model.skewed:  # 1 − Exp(1): mean 0, sd 1, a long tail of bad hands
        return model.interaction * (1.0 - rng.expovariate(1.0))
    return rng.gauss(0.0, model.interaction)


Deal = tuple[dict[tuple[int, int], float], dict[tuple[str, int, int], float]]
"""One deal set's card values by (round, seat) and interactions by (bot, round, seat)."""


def deal(rng: random.Random, names: Sequence[str], model: Model) -> Deal:
    """The card values and the bots' interactions of one deal set."""
    card = {(r, s): rng.gauss(0.0, model.card) for r in range(1, ROUNDS + 1) for s in range(4)}
    interaction = {(b, r, s): _interaction(rng, model) for b in names for r in range(1, ROUNDS + 1) for s in range(4)}
    return card, interaction


def block_games(rng: random.Random, dealt: Deal, skill: dict[str, float], order: tuple[str, ...], model: Model,
                number: int, group: int, deal_set: int) -> list[GameRecords]:
    """The four games of one block: ``order`` seated in the four cyclic rotations on the deal set ``dealt``."""
    card, interaction = dealt
    block = f"r{number}-g{group}-d{deal_set}"
    games = []
    for rotation in range(4):
        seats = tuple(order[(s - rotation) % 4] for s in range(4))
        game = f"{block}-p{rotation}"
        totals = (0, 0, 0, 0)
        rounds = []
        for r in range(1, ROUNDS + 1):
            scores = tuple(round(card[r, s] + skill[b] + interaction[b, r, s] + rng.gauss(0.0, model.noise))
                           for s, b in enumerate(seats))
            totals = tuple(t + x for t, x in zip(totals, scores, strict=True))
            rounds.append(_record(game, block, number, group, deal_set, rotation, seats, r, scores, totals,
                                  r == ROUNDS))
        games.append(GameRecords(tuple(rounds)))
    return games


def tournament(rng: random.Random, bots: int, deal_sets: int, model: Model) -> list[GameRecords]:
    """The games of one simulated round robin."""
    names = [f"b{i}" for i in range(bots)]
    skill = dict(zip(names, skills(bots, model), strict=True))
    games: list[GameRecords] = []
    for deal_set in range(1, deal_sets + 1):
        dealt = deal(rng, names, model)
        for group, order in enumerate(itertools.combinations(names, 4), start=1):
            order = tuple(rng.sample(order, 4))  # which bot sits on whose left varies from block to block
            games += block_games(rng, dealt, skill, order, model, deal_set, group, deal_set)
    return games


def coverage_counts(bots: int, replicates: int, seed: int, deal_sets: int = 8,
                    model: Model = STRONG) -> tuple[int, int, float]:
    """(intervals that covered the truth, intervals, summed widths) over ``replicates`` tournaments."""
    rng = random.Random(seed)
    true = dict(zip((f"b{i}" for i in range(bots)), truth(bots, model), strict=True))
    covered = total = 0
    width = 0.0
    for _ in range(replicates):
        for row in tally(tournament(rng, bots, deal_sets, model)).standings():
            covered += row.dup_low <= true[row.bot] <= row.dup_high
            total += 1
            width += row.dup_high - row.dup_low
    return covered, total, width


def _chunk(job: tuple[int, int, int, int, str]) -> tuple[int, int, float]:
    bots, replicates, seed, deal_sets, model = job
    return coverage_counts(bots, replicates, seed, deal_sets, MODELS[model])


def add_simulation_options(parser: argparse.ArgumentParser) -> None:
    """The options every simulation of these benchmarks takes: the seed, the worker processes, the models."""
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS),
                        help="the shape of the bot x hand interaction")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, nargs="+", default=[4, 6, 8], help="field sizes (4 to 8)")
    parser.add_argument("--replicates", type=int, default=1000, help="tournaments per field size and model")
    parser.add_argument("--deal-sets", type=int, default=8, help="deal sets (schedule rounds) per tournament")
    add_simulation_options(parser)
    args = parser.parse_args(argv)
    m = STRONG
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"model (tenths per round): card {m.card:g}, bot x hand interaction {m.interaction:g} (normal, or "
          f"skewed: a centred exponential), noise {m.noise:g}, skills from -{m.skill_spread:g} to "
          f"+{m.skill_spread:g}; {args.deal_sets} deal sets of {ROUNDS}-round games")
    chunks = 20
    with multiprocessing.Pool(args.workers) as pool:
        for bots, model in itertools.product(args.bots, args.models):
            start = time.perf_counter()
            per = -(-args.replicates // chunks)
            jobs = [(bots, min(per, args.replicates - i * per), args.seed * 1000 + bots * 100 + i, args.deal_sets,
                     model) for i in range(chunks) if args.replicates - i * per > 0]
            results = pool.map(_chunk, jobs)
            covered = sum(r[0] for r in results)
            total = sum(r[1] for r in results)
            width = sum(r[2] for r in results) / total
            share = covered / total
            se = math.sqrt(share * (1 - share) / total)
            print(f"{bots} bots, {model} interaction: 95% interval coverage {share:.3f} (± {se:.3f}; "
                  f"{total:,} intervals in {args.replicates:,} tournaments), "
                  f"mean width {width / 10:.2f} points per game, {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
