"""How often the fair-play reports of the standings flag an honest bot, and how soon they flag a cheat.

Prints, for the memory test (``memory_test`` of each bot: its duplicate score on its first game of each deal set
against its later ones, one-sided t at 1 %, clustered by deal set) and the pair report (``pairs``: each bot's
margin over its other tablemates with a given bot at its table and without, Holm at 5 % over the report):

1. the memory test's false-alarm rate over simulated honest fields, with its simulation error. The fields are
   made of real games: events of the sample bots are played through the arena (the fast path) and their deal
   sets resampled with replacement; each resampled deal set gets a fresh order of play drawn as the arena draws it
   (:func:`~arena.event.plan.schedule.play_order`), which decides each bot's first game. For honest bots the order
   changes nothing they do, so this is the design the arena runs, on real (skewed, clustered) scores.
2. the same for honest bots seated beside a cheat: real events of three heuristic bots and
   :class:`~benchmarks.planted_bots.RememberingBot`, played at tables in their drawn order, deal sets resampled
   with the order they were played in.
3. how many deal sets the cheat plays before it is flagged: several real runs of the same four, the test taken
   after every deal set (median and range; a run not flagged by the end counts as its length, marked ``>``); and
   its gain.
4. the pair report's false-alarm rate (any pair flagged) over honest 5-bot fields resampled from a large corpus of
   real games (large, so that the corpus's own chance differences between pairs, which every resampled field
   inherits, are small against a field's), and its power against a planted pair: two
   :class:`~benchmarks.planted_bots.FeedingBot` that throw tricks to each other, with three heuristic bots.

``python benchmarks/memory_test.py`` (about 40 minutes on 2 cores); ``--quick`` for a short run. The statistics are
the standings' own (:func:`~arena.rating.stats.one_sided_difference`, :class:`~arena.rating.pairs.PairReport`);
each real run is also read back by the standings' pass, whose verdict is printed beside the benchmark's.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.event.plan.schedule import play_order
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.rating.pairs import PairReport
from arena.rating.report import read_folder
from arena.rating.standing import MEMORY_LEVEL, PAIR_LEVEL
from arena.rating.stats import ClusteredMean, ClusteredPair, field_datum_diffs, one_sided_difference
from arena.records.format import GameRecords
from arena.records.store import ResultsStore
from benchmarks.planted_bots import RememberingBot

HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
RANDOM = "sample_bots.random_bot:RandomBot"
HONEST_FOUR = [("heur", HEURISTIC, ""), ("bold", HEURISTIC, "options = { aggression = 0.3 }\n"),
               ("meek", HEURISTIC, "options = { aggression = -0.3 }\n"), ("rand", RANDOM, "seed = 2\n")]
HONEST_FIVE = [*HONEST_FOUR, ("rand2", RANDOM, "seed = 5\n")]
CHEAT_FOUR = [("cheat", "benchmarks.planted_bots:RememberingBot", ""), ("h1", HEURISTIC, ""),
              ("h2", HEURISTIC, "seed = 2\n"), ("h3", HEURISTIC, "options = { aggression = 0.3 }\n")]
FEED_FIVE = [("friend", "benchmarks.planted_bots:FeedingBot", 'options = { friend = "feeder" }\n'),
             ("feeder", "benchmarks.planted_bots:FeedingBot", 'options = { friend = "friend" }\n'),
             ("h1", HEURISTIC, ""), ("h2", HEURISTIC, "seed = 2\n"),
             ("h3", HEURISTIC, "options = { aggression = 0.3 }\n")]


@dataclass
class Game:
    """A game as the fair-play reports read it."""

    seats: tuple[str, ...]
    totals: tuple[int, ...]
    order: tuple[int, int, int]
    """Where the arena draws it in the order of play: the block's draw, its group, its rotation's turn."""
    dup: dict[str, float]
    """Each bot's duplicate points in the game (tenths)."""
    read: int
    """Its place in the records."""


DealSet = list[Game]


def play(bots: Sequence[tuple[str, str, str]], deal_sets: int, seed: int, folder: Path, concurrency: int = 1) -> Path:
    """Plays a round robin of ``bots`` through the arena; returns its results folder."""
    tables = "".join(f'\n[[bots]]\nname = "{name}"\npython = "{spec}"\n{extra}' for name, spec, extra in bots)
    config = parse_config(f'[tournament]\nname = "bench"\nseed = {seed}\ndeal_sets = {deal_sets}\n'
                          f"concurrency = {concurrency}\n\n[time]\ndeadline_ms = 0\n{tables}")
    asyncio.run(Tournament(config, folder, fresh=True).run())
    return folder


def deal_sets_of(folder: Path, seed: int) -> list[DealSet]:
    """The deal sets of a results folder, each game with every bot's duplicate points in it."""
    by_round: dict[int, list[GameRecords]] = {}
    for game in ResultsStore(folder).games():
        by_round.setdefault(game.first.schedule_round, []).append(game)
    out: list[DealSet] = []
    read = 0
    for number in sorted(by_round):
        games = by_round[number]
        hands: dict[tuple[str, int], list[tuple[str, int, int]]] = {}
        for index, game in enumerate(games):
            for record in game.rounds:
                for seat, bot in enumerate(record.seats):
                    hands.setdefault((record.deal, seat), []).append((bot, record.scores[seat], index))
        dup: list[dict[str, float]] = [{} for _ in games]
        for results in hands.values():
            diffs = field_datum_diffs([r[1] for r in results], [r[0] for r in results])
            for (bot, _, index), diff in zip(results, diffs, strict=True):
                if diff is not None:
                    dup[index][bot] = dup[index].get(bot, 0.0) + diff
        deal_set: DealSet = []
        for game, points in zip(games, dup, strict=True):
            first = game.first
            order = play_order(seed, number, first.deal_set, game.seats, 4)
            read += 1
            deal_set.append(Game(game.seats, game.final.totals, (order.draw, first.group, order.turn(first.rotation)),
                                 points, read))
        out.append(deal_set)
    return out


def redrawn(deal_set: DealSet, rng: random.Random) -> DealSet:
    """The deal set with a fresh order of play, drawn as the arena draws it (a new seed)."""
    seed = rng.getrandbits(62)
    out = []
    for game in deal_set:
        order = play_order(seed, 1, 1, game.seats, 4)
        rotation = next(r for r in range(4) if game.order[2] == r)  # the game's rotation's old turn, kept as a label
        out.append(Game(game.seats, game.totals, (order.draw, game.order[1], order.rotations.index(rotation)),
                        game.dup, 0))
    return out


class MemoryTests:
    """Each bot's memory test over deal sets added one at a time (the standings' arithmetic)."""

    def __init__(self) -> None:
        self.first: dict[str, ClusteredMean] = {}
        self.later: dict[str, ClusteredMean] = {}
        self.both: dict[str, ClusteredPair] = {}

    def add(self, deal_set: DealSet, by_records: bool) -> None:
        firsts: dict[str, Game] = {}
        for game in deal_set:
            for bot in game.seats:
                key = (lambda g: g.read) if by_records else (lambda g: g.order)
                if bot not in firsts or key(game) < key(firsts[bot]):
                    firsts[bot] = game
        for bot, first in firsts.items():
            later = [g.dup[bot] for g in deal_set if bot in g.seats and g is not first and bot in g.dup]
            first_points = first.dup.get(bot)
            self.first.setdefault(bot, ClusteredMean()).add(first_points or 0.0, 1.0 if first_points is not None else 0)
            self.later.setdefault(bot, ClusteredMean()).add(sum(later), len(later))
            self.both.setdefault(bot, ClusteredPair()).add(sum(later), len(later), first_points or 0.0,
                                                           1.0 if first_points is not None else 0)

    def test(self, bot: str) -> tuple[float, float]:
        """(later − first in points, one-sided p)."""
        diff, _, _, p, _ = one_sided_difference(self.both[bot], self.later[bot], self.first[bot])
        return diff / 10, p


def rate(hits: int, tests: int) -> str:
    share = hits / tests
    return f"{share:.4f} (± {math.sqrt(share * (1 - share) / tests):.4f}, {hits} of {tests})"


def skew(values: Sequence[float]) -> float:
    mean = statistics.fmean(values)
    sd = statistics.pstdev(values)
    return statistics.fmean(((v - mean) / sd) ** 3 for v in values) if sd else 0.0


def honest_fields(corpus: list[DealSet], fields: int, size: int, rng: random.Random, redraw: bool,
                  skip: Sequence[str] = ()) -> tuple[int, int]:
    """Flags and tests of the memory test over ``fields`` fields of ``size`` deal sets resampled from ``corpus``."""
    flagged = tests = 0
    for _ in range(fields):
        tally = MemoryTests()
        for _ in range(size):
            deal_set = rng.choice(corpus)
            tally.add(redrawn(deal_set, rng) if redraw else deal_set, by_records=not redraw)
        for bot in tally.both:
            if bot in skip:
                continue
            _, p = tally.test(bot)
            tests += 1
            flagged += p < MEMORY_LEVEL
    return flagged, tests


def pair_fields(corpus: list[DealSet], fields: int, size: int, rng: random.Random, pair: tuple[str, str] | None
                ) -> tuple[int, int, list[float]]:
    """Fields with any pair flagged (or, given ``pair``, with that pair flagged), fields, and the pair's effects."""
    hits = 0
    effects: list[float] = []
    for _ in range(fields):
        report = PairReport()
        bots: set[str] = set()
        for _ in range(size):
            deal_set = rng.choice(corpus)
            blocks: dict[tuple[int, int], list[Game]] = {}
            for game in deal_set:
                blocks.setdefault((game.order[0], game.order[1]), []).append(game)
                bots.update(game.seats)
            report.add_round(list(blocks.values()), bots)
        found = report.report(bots)
        if pair is None:
            hits += any(e.flagged for e in found)
        else:
            chosen = [e for e in found if (e.bot, e.other) == pair]
            hits += bool(chosen and chosen[0].flagged)
            effects.extend(e.effect / 10 for e in chosen)
    return hits, fields, effects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fields", type=int, default=1000, help="simulated fields per figure (default 1000)")
    parser.add_argument("--deal-sets", type=int, default=30, help="deal sets in a simulated field (default 30)")
    parser.add_argument("--corpus", type=int, default=400, help="real deal sets played per honest corpus")
    parser.add_argument("--five", type=int, default=2000,
                        help="real deal sets of the honest 5-bot corpus the pair report's fields are drawn from")
    parser.add_argument("--fed", type=int, default=200, help="real deal sets played with the planted pair")
    parser.add_argument("--runs", type=int, default=10, help="real runs of the cheat (default 10)")
    parser.add_argument("--run-length", type=int, default=150, help="deal sets in a run of the cheat (default 150)")
    parser.add_argument("--quick", action="store_true", help="a short run (small corpora, 200 fields)")
    args = parser.parse_args()
    if args.quick:
        args.fields, args.corpus, args.five, args.fed, args.runs, args.run_length = 200, 60, 60, 20, 3, 30
    rng = random.Random(20260)
    began = time.perf_counter()
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.system()}; memory test one-sided at {MEMORY_LEVEL:.0%}, pair report Holm at {PAIR_LEVEL:.0%}")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        four = deal_sets_of(play(HONEST_FOUR, args.corpus, 101, root / "four"), 101)
        five = deal_sets_of(play(HONEST_FIVE, args.five, 202, root / "five"), 202)
        per_game = [g.dup[b] / 10 for ds in four for g in ds for b in g.seats if b in g.dup]
        print(f"honest corpora: 4 sample bots, {len(four)} deal sets; 5 sample bots, {len(five)} deal sets "
              f"(played through the arena's fast path); a game's duplicate points: sd "
              f"{statistics.pstdev(per_game):.1f}, skewness {skew(per_game):+.2f}")
        for name, corpus in (("4 bots", four), ("5 bots", five)):
            hits, tests = honest_fields(corpus, args.fields, args.deal_sets, rng, redraw=True)
            print(f"memory test, honest {name}, {args.deal_sets} deal sets a field: false alarms {rate(hits, tests)}")

        RememberingBot.forget()
        cheat_runs = []
        for run in range(args.runs):
            RememberingBot.forget()
            folder = play(CHEAT_FOUR, args.run_length, 1000 + run, root / f"cheat{run}")
            cheat_runs.append((folder, deal_sets_of(folder, 1000 + run)))
        needed: list[tuple[int, bool]] = []
        gains: list[float] = []
        standings_said = []
        for folder, deal_sets in cheat_runs:
            tally = MemoryTests()
            when = None
            for count, deal_set in enumerate(deal_sets, start=1):
                tally.add(deal_set, by_records=True)
                if count >= 2 and when is None and tally.test("cheat")[1] < MEMORY_LEVEL:
                    when = count
            needed.append((when or len(deal_sets), when is not None))
            gains.append(tally.test("cheat")[0])
            row = next(r for r in read_folder(folder).standings if r.bot == "cheat")
            standings_said.append(row.memory_test.flagged)
        counts = sorted(n for n, _ in needed)
        shown = ", ".join(f"{n}" if hit else f">{n}" for n, hit in sorted(needed))
        print(f"memory test, the cheat (heuristic play, calls what the earlier holder of its hand took) with 3 "
              f"heuristic bots, {len(needed)} runs of {args.run_length} deal sets, the test taken after each: first "
              f"flagged after a median of {statistics.median(counts):g} deal sets ({shown}); later − first "
              f"{statistics.fmean(gains):+.1f} points a game over a whole run ({min(gains):+.1f} to "
              f"{max(gains):+.1f}); flagged at the end of {sum(standings_said)} of {len(standings_said)} runs "
              "(the standings' own pass over each run's folder)")
        beside = [ds for _, run_sets in cheat_runs for ds in run_sets]
        hits, tests = honest_fields(beside, args.fields, args.deal_sets, rng, redraw=False, skip=("cheat",))
        print(f"memory test, honest heuristic bots beside the cheat ({len(beside)} real deal sets resampled), "
              f"{args.deal_sets} deal sets a field: false alarms {rate(hits, tests)}")

        hits, fields, _ = pair_fields(five, args.fields, args.deal_sets, rng, None)
        print(f"pair report, honest 5 bots (20 ordered pairs), {args.deal_sets} deal sets a field: a field with any "
              f"pair flagged {rate(hits, fields)}")
        fed = deal_sets_of(play(FEED_FIVE, args.fed, 303, root / "fed", concurrency=2), 303)
        for size in (args.deal_sets, 2 * args.deal_sets, 4 * args.deal_sets):
            hits, fields, effects = pair_fields(fed, args.fields // 2, size, rng, ("friend", "feeder"))
            print(f"pair report, two bots that throw tricks to each other ({len(fed)} real deal sets resampled), "
                  f"{size} deal sets a field: the pair flagged in {rate(hits, fields)} (friend with feeder "
                  f"{statistics.fmean(effects):+.1f} points a game against its other tablemates)")
    print(f"{time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
