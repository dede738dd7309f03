"""Coverage and width of the rank ranges (``1``, ``2-4``), by simulating events and ladders.

**Events.** Each replicate is a duplicate tournament of B bots over D deal sets of five-round games,
scheduled as the arena schedules them: a round robin of every group of four for 4 to 6 bots, and for
more a fresh partition of the field into tables of four every round (every table of a round plays the
same deal set). Round scores are those of ``benchmarks/coverage.py`` (card value + skill + a bot × hand
interaction, the same at every table, normal or skewed like real round scores + fresh noise). The skills
come in tiers, as a class's bots do: tiers of 1, 3 and 2 bots in turn, 12 tenths a round (6 points a
game) apart, the bots of a tier 1 tenth a round (half a point a game) apart, and the last bot a
random-like one far below the rest. The games go through the real standings pass, and each ranked bot's
``rank_range`` is checked against its true rank (one plus the bots of higher skill).

**Ladders.** Each replicate is a ladder of V versions with the same tiers of skill. Blocks seat four
versions (at random while the ratings are young, then the anchor, the version with fewest blocks, with
three of the seven closest in rating, as the ladder's matchmaking does), play one deal set in four rotations
with the scores above, and are rated by the ladder's own rating code (one update per game on its places);
the leaderboard's ranges are computed by the ladder's own function from the ratings and the duplicate
scores, and checked against the true ranks.

Printed per cell: the share of ranges that held the true rank (with its binomial standard error), the
lowest share of any one position of the field (the near-tied bots are the hard ones), the mean width of a
range in ranks (1 is a single rank), and the same for the foil, each pair judged by its own 95 % test
(Chatbot Arena's rule without sharing the error among a bot's comparisons).

    python benchmarks/rank_ranges.py                        # 400 replicates a cell
    python benchmarks/rank_ranges.py --replicates 100 --bots 8 --part events
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
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from arena.ladder.blocks import RatingModel
from arena.ladder.queries.leaderboard import Standing as LadderStanding
from arena.ladder.queries.leaderboard import rank_versions, score_interval
from arena.rating.ratings import tally
from arena.rating.standing import listed_apart
from arena.records.format import GameRecords

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from benchmarks.coverage import MODELS, STRONG, Model, add_simulation_options, block_games, deal  # noqa: E402

TIER_SIZES = (1, 3, 2)
TIER_GAP = 12.0
"""Tenths a round between two tiers (6 points a game)."""
TIE_STEP = 1.0
"""Tenths a round between two bots of a tier (half a point a game)."""
LAST_GAP = 30.0
"""Tenths a round the random-like last bot lies below the tier above it."""


FIELDS = ("tiers", "level")
"""The shapes of a field: tiers (:func:`field_skills`), or every bot of the same skill (every comparison a true
tie: the hardest case for coverage, where any wrong claim that one is ahead moves a range off rank 1)."""


def field_skills(bots: int, shape: str = "tiers") -> list[float]:
    """Skills in tenths a round, best first: tiers of :data:`TIER_SIZES` bots, then a random-like last bot; or
    all 0 for a ``level`` field."""
    if shape == "level":
        return [0.0] * bots
    out: list[float] = []
    level = 0.0
    for size in itertools.cycle(TIER_SIZES):
        for k in range(size):
            if len(out) == bots - 1:
                return [*out, out[-1] - LAST_GAP]
            out.append(level - k * TIE_STEP)
        level -= TIER_GAP
    raise AssertionError("unreachable")


def true_ranks(skills: Sequence[float]) -> list[int]:
    return [1 + sum(other > mine for other in skills) for mine in skills]


def _tables(rng: random.Random, names: Sequence[str]) -> list[tuple[str, ...]]:
    """The tables of one round: every group of four for up to six bots, else a fresh partition."""
    if len(names) <= 6:
        return [tuple(rng.sample(group, 4)) for group in itertools.combinations(names, 4)]
    order = rng.sample(list(names), len(names))
    return [tuple(order[i:i + 4]) for i in range(0, len(order), 4)]


def event(rng: random.Random, bots: int, deal_sets: int, model: Model, shape: str = "tiers") -> list[GameRecords]:
    """The games of one simulated event; bot ``b0`` is the best."""
    names = [f"b{i}" for i in range(bots)]
    skill = dict(zip(names, field_skills(bots, shape), strict=True))
    games: list[GameRecords] = []
    for deal_set in range(1, deal_sets + 1):
        dealt = deal(rng, names, model)
        for group, order in enumerate(_tables(rng, names), start=1):
            games += block_games(rng, dealt, skill, order, model, deal_set, group, deal_set)
    return games


@dataclasses.dataclass
class Counts:
    """Ranges that held the true rank, ranges, summed widths, and per position of the field (held, ranges)."""

    held: int = 0
    ranges: int = 0
    width: int = 0
    by_position: dict[int, list[int]] = dataclasses.field(default_factory=dict)

    def add(self, position: int, best: int, worst: int, truth: int) -> None:
        ok = best <= truth <= worst
        self.held += ok
        self.ranges += 1
        self.width += worst - best + 1
        cell = self.by_position.setdefault(position, [0, 0])
        cell[0] += ok
        cell[1] += 1

    def merge(self, other: Counts) -> None:
        self.held += other.held
        self.ranges += other.ranges
        self.width += other.width
        for position, (ok, n) in other.by_position.items():
            cell = self.by_position.setdefault(position, [0, 0])
            cell[0] += ok
            cell[1] += n


def event_counts(bots: int, replicates: int, seed: int, deal_sets: int = 12, model: Model = STRONG,
                 shape: str = "tiers") -> tuple[Counts, Counts]:
    """(the standings' ranges, the foil's) over ``replicates`` simulated events."""
    rng = random.Random(seed)
    truth = dict(zip((f"b{i}" for i in range(bots)), true_ranks(field_skills(bots, shape)), strict=True))
    ours, foil = Counts(), Counts()
    for _ in range(replicates):
        folded = tally(event(rng, bots, deal_sets, model, shape))
        ranked = [row for row in folded.standings() if not listed_apart(row)]
        for row in ranked:
            assert row.rank_range is not None
            ours.add(int(row.bot[1:]), *row.rank_range, truth[row.bot])
        for row, span in zip(ranked, folded.rank_ranges(ranked, adjusted=False), strict=True):
            foil.add(int(row.bot[1:]), span.best, span.worst, truth[row.bot])
    return ours, foil


# -- ladders ---------------------------------------------------------------------------------------

PLACEMENT_BLOCKS = 4
WINDOW = 7


def ladder_counts(versions: int, replicates: int, seed: int, blocks_each: int = 12, model: Model = STRONG,
                  shape: str = "tiers") -> tuple[Counts, Counts]:
    """(the leaderboard's ranges, the foil's) over ``replicates`` simulated ladders, each playing
    ``blocks_each`` × versions / 4 blocks."""
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(versions)]
    skill = dict(zip(names, field_skills(versions, shape), strict=True))
    truth = dict(zip(names, true_ranks(field_skills(versions, shape)), strict=True))
    rating_model = RatingModel(beta=25 / 6, tau=0.0)
    ours, foil = Counts(), Counts()
    for _ in range(replicates):
        ratings = {name: rating_model.initial() for name in names}
        scores: dict[str, list[float]] = {name: [] for name in names}
        for number in range(1, blocks_each * versions // 4 + 1):
            anchor = min(names, key=lambda n: (len(scores[n]), rng.random()))
            others = [n for n in names if n != anchor]
            if len(scores[anchor]) < PLACEMENT_BLOCKS:
                chosen = rng.sample(others, 3)
            else:
                mu = ratings[anchor][0]
                window = sorted(others, key=lambda n: (abs(ratings[n][0] - mu), n))[:WINDOW]
                chosen = rng.sample(window, 3)
            order = tuple(rng.sample([anchor, *chosen], 4))
            games = block_games(rng, deal(rng, order, model), skill, order, model, number, 1, number)
            for game in games:
                final = game.final
                after = rating_model.rate([ratings[b] for b in final.seats], final.places)
                for bot, rated in zip(final.seats, after, strict=True):
                    ratings[bot] = rated
            for bot in order:
                mean_total = sum(g.final.totals[g.final.seats.index(bot)] - sum(g.final.totals) / 4 for g in games)
                scores[bot].append(mean_total / len(games))
        rows = []
        for name in names:
            mu, sigma = ratings[name]
            block_scores = scores[name]
            ci = score_interval(len(block_scores), sum(block_scores), sum(x * x for x in block_scores))
            rows.append(LadderStanding(
                entrant=name, display=name, version=name, games=4 * len(block_scores), blocks=len(block_scores),
                mu=mu, sigma=sigma, ordinal=mu - 3 * sigma, duplicate_score=ci.mean / 10,
                interval=(ci.low / 10, ci.high / 10) if len(block_scores) > 1 else None, faults=0, rank=None,
                rank_range=None, tie=False, placement=False))
        for adjusted, counts in ((True, ours), (False, foil)):
            for row in rank_versions(rows, adjusted=adjusted):
                assert row.rank_range is not None and row.rank is not None
                counts.add(int(row.version[1:]), *row.rank_range, truth[row.version])
    return ours, foil


# -- printing --------------------------------------------------------------------------------------


def _chunk(job: tuple[str, int, int, int, int, str, str]) -> tuple[Counts, Counts]:
    part, bots, replicates, seed, size, model, shape = job
    counter = event_counts if part == "events" else ladder_counts
    return counter(bots, replicates, seed, size, MODELS[model], shape)


def _line(name: str, counts: Counts) -> str:
    share = counts.held / counts.ranges
    se = math.sqrt(share * (1 - share) / counts.ranges)
    worst = min(ok / n for ok, n in counts.by_position.values())
    return (f"{name} {share:.3f} (± {se:.3f}), lowest position {worst:.3f}, "
            f"mean width {counts.width / counts.ranges:.2f} ranks")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("events", "ladders", "both"), default="both")
    parser.add_argument("--bots", type=int, nargs="+", default=[4, 6, 8, 12, 16], help="field sizes (4 to 16)")
    parser.add_argument("--replicates", type=int, default=400, help="events or ladders per cell")
    parser.add_argument("--deal-sets", type=int, nargs="+", default=[12], help="deal sets (schedule rounds) per event")
    parser.add_argument("--blocks", type=int, nargs="+", default=[12], help="blocks per version of a ladder")
    parser.add_argument("--fields", nargs="+", choices=FIELDS, default=list(FIELDS), help="the shapes of the field")
    add_simulation_options(parser)
    args = parser.parse_args(argv)
    m = STRONG
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"model (tenths per round): card {m.card:g}, bot x hand interaction {m.interaction:g} (normal, or skewed), "
          f"noise {m.noise:g}; skills in tiers of {', '.join(map(str, TIER_SIZES))} bots, {TIER_GAP:g} apart, "
          f"{TIE_STEP:g} apart within a tier, the last bot {LAST_GAP:g} below")
    parts = ["events", "ladders"] if args.part == "both" else [args.part]
    chunks = 20
    with multiprocessing.Pool(args.workers) as pool:
        cells = [(part, shape, size, bots, model) for part in parts for shape in args.fields
                 for size in (args.deal_sets if part == "events" else args.blocks)
                 for bots in args.bots for model in args.models]
        for part, shape, size, bots, model in cells:
            start = time.perf_counter()
            per = -(-args.replicates // chunks)
            jobs = [(part, bots, min(per, args.replicates - i * per), args.seed * 1000 + bots * 100 + i, size, model,
                     shape) for i in range(chunks) if args.replicates - i * per > 0]
            ours, foil = Counts(), Counts()
            for a, b in pool.map(_chunk, jobs):
                ours.merge(a)
                foil.merge(b)
            what = f"{size} deal sets" if part == "events" else f"{size * bots // 4} blocks ({size} a version)"
            print(f"{part}, {shape} field of {bots}, {model} interaction, {what}, {args.replicates} replicates "
                  f"({time.perf_counter() - start:.0f} s):")
            print(f"  {_line('rank ranges:', ours)}")
            print(f"  {_line('foil, each pair alone at 95%:', foil)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
