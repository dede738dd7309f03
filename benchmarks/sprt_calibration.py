"""How often the sequential test accepts the wrong hypothesis, measured on block differences of real games.

CORPUS (``corpus``): two bots play a duplicate ``head-to-head`` tournament through the arena's own
machinery (:class:`arena.event.run.tournament.Tournament`, in-process sample bots, copies of A and B
filling the other two seats), and every block of 4 cyclic rotations gives
d = (A's total − B's total) per game. Two pairs, of two skews:

- ``heuristic-random``: the heuristic bot against the random bot (strongly skewed);
- ``heuristic-aggressive``: the heuristic bot against its variant with ``aggression`` 0.3 (close bots).

The corpus files (``benchmarks/data/``) hold one integer per block: A's total minus B's summed over
the block's 4 games, in tenths (so d = value / 4 tenths per game).

CALIBRATION (the default): each test draws blocks at random, with replacement, from a corpus whose
values are shifted so that their mean is Δ0 (to measure how often H1 is wrongly accepted, α) or Δ1
(how often H0 is wrongly accepted, β). The shift keeps the corpus's skew; the mirror image (every
value negated, as if A and B were swapped) gives the opposite skew. Δ0 = 0 and Δ1 = 0.2 standard
deviations of the corpus (about 130 blocks per test), α = β = 0.05. Printed per corpus, skew,
method and burn-in: the share of tests that accepted the wrong hypothesis with its 95 % (Wilson)
interval, and the mean number of blocks.

    python benchmarks/sprt_calibration.py [--tests 5000] [--burn-in 10 30] [--methods el alt alt2]
    python benchmarks/sprt_calibration.py corpus [--blocks 3000] [--out benchmarks/data]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from arena.event.plan.schedule import Assignment
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.rating.sequential import METHODS, Method, RunningLlr
from arena.records.format import GameRecord, GameRecords

DATA = Path(__file__).parent / "data"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
RANDOM = "sample_bots.random_bot:RandomBot"


@dataclasses.dataclass(frozen=True)
class Pair:
    """Two bots whose block differences make a corpus."""

    name: str
    """The corpus file's stem."""
    a: str
    b: str
    a_options: str = ""
    b_options: str = ""
    seed: int = 11


PAIRS = {
    "heuristic-random": Pair("heuristic-random", HEURISTIC, RANDOM),
    "heuristic-aggressive": Pair("heuristic-aggressive", HEURISTIC, HEURISTIC, b_options="aggression = 0.3"),
}


# -- the corpus ------------------------------------------------------------------------------------

CONFIG = """
[tournament]
name = "corpus"
seed = {seed}
deal_sets = {blocks}
format = "head-to-head"
concurrency = 1

[head-to-head]
a = "a"
b = "b"

[[bots]]
name = "a"
python = "{a}"
seed = 1
options = {{ {a_options} }}

[[bots]]
name = "b"
python = "{b}"
seed = 2
options = {{ {b_options} }}
"""


class _Collector:
    """A tournament judge that keeps A's total minus B's of every game, by block."""

    def __init__(self) -> None:
        self.blocks: dict[tuple[int, str], list[int]] = {}

    def start(self, games: Sequence[GameRecords]) -> None:
        """Nothing was played before: the folder is fresh."""

    def game_done(self, game: Assignment, record: GameRecord) -> None:
        seats = list(game.seats)
        diff = record.totals[seats.index("a")] - record.totals[seats.index("b")]
        self.blocks.setdefault((game.round, game.block), []).append(diff)

    def decided(self) -> bool:
        return False

    def refresh(self, force: bool = False) -> None:
        """No standings files: only the differences matter here."""

    def progress_line(self) -> str | None:
        return None


def build_corpus(pair: Pair, blocks: int) -> list[int]:
    """Plays ``blocks`` deal sets of A against B; per block, A's total minus B's over its 4 games (tenths)."""
    config = parse_config(CONFIG.format(seed=pair.seed, blocks=blocks, a=pair.a, b=pair.b,
                                        a_options=pair.a_options, b_options=pair.b_options))
    collector = _Collector()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(Tournament(config, Path(folder) / "corpus", judge=collector).run())
    complete = [diffs for _, diffs in sorted(collector.blocks.items()) if len(diffs) == 4]
    assert len(complete) == blocks, "every block holds its 4 games"
    return [sum(diffs) for diffs in complete]


def write_corpus(path: Path, pair: Pair, sums: Sequence[int], note: str = "") -> None:
    """The corpus as text: a header of ``#`` lines, then the block sums, 20 to a line."""
    header = [
        f"# SPRT calibration corpus {pair.name}: A = {pair.a} ({pair.a_options or 'defaults'}, seed 1), "
        f"B = {pair.b} ({pair.b_options or 'defaults'}, seed 2)",
        f"# head-to-head, copies of A and B in the other seats, nepali rules, tournament seed {pair.seed}, "
        f"{len(sums)} blocks of 4 cyclic rotations{note}",
        "# per block: A's total minus B's, summed over the block's 4 games, in tenths (d = value / 4 per game)",
    ]
    lines = [" ".join(str(v) for v in sums[i: i + 20]) for i in range(0, len(sums), 20)]
    path.write_text("\n".join(header + lines) + "\n", encoding="utf-8")


def read_corpus(path: Path) -> list[float]:
    """The block differences of a corpus file: d in tenths per game, in the order played."""
    values: list[float] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            values.extend(int(v) / 4 for v in line.split())
    return values


# -- the calibration -------------------------------------------------------------------------------

ALPHA = BETA = 0.05
LOWER = math.log(BETA / (1 - ALPHA))
UPPER = math.log((1 - BETA) / ALPHA)
EFFECT = 0.2
"""Δ1 in standard deviations of the corpus: 2·0.9·2.944/0.2² ≈ 132 blocks per test at either hypothesis."""
CAP = 20_000
"""A safety net far past any test's length; the tests that reach it are counted."""


@dataclasses.dataclass(frozen=True)
class Cell:
    """The tests of one corpus, skew, hypothesis, method and burn-in."""

    tests: int
    wrong: int
    """Tests that accepted the other hypothesis."""
    blocks: int
    """Blocks used, summed over the tests."""
    capped: int

    @property
    def rate(self) -> float:
        return self.wrong / self.tests

    @property
    def mean_blocks(self) -> float:
        return self.blocks / self.tests


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95 % Wilson score interval of a binomial proportion."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def one_test(rng: random.Random, values: Sequence[float], delta1: float, methods: Sequence[Method],
             burn_ins: Sequence[int]) -> dict[tuple[Method, int], tuple[str, int]]:
    """One path of blocks drawn from ``values``, judged by every method at every burn-in: (verdict, blocks)."""
    running = {method: RunningLlr(0.0, delta1, method) for method in methods}
    verdicts: dict[tuple[Method, int], tuple[str, int]] = {}
    drawn = 0
    while len(verdicts) < len(methods) * len(burn_ins) and drawn < CAP:
        for value in rng.choices(values, k=32):
            drawn += 1
            for method in methods:
                if all((method, b) in verdicts for b in burn_ins):
                    continue
                llr = running[method].add(value)
                for burn_in in burn_ins:
                    if (method, burn_in) not in verdicts and drawn >= burn_in and (llr >= UPPER or llr <= LOWER):
                        verdicts[(method, burn_in)] = ("H1" if llr >= UPPER else "H0", drawn)
    for method in methods:
        for burn_in in burn_ins:
            verdicts.setdefault((method, burn_in), ("cap", drawn))
    return verdicts


def shifted(values: Sequence[float], mean: float) -> list[float]:
    """The values moved so that their mean is ``mean``: the same shape, the truth known."""
    centre = statistics.fmean(values)
    return [v - centre + mean for v in values]


def run_group(job: tuple[str, str, str, list[float], float, int, int, tuple[Method, ...], tuple[int, ...]]
              ) -> tuple[str, str, str, dict[tuple[Method, int], Cell]]:
    """The tests of one corpus, skew and hypothesis, shared by every method and burn-in."""
    corpus, skew, hypothesis, values, delta1, tests, seed, methods, burn_ins = job
    rng = random.Random(f"{seed}/{corpus}/{skew}/{hypothesis}")
    population = shifted(values, 0.0 if hypothesis == "H0" else delta1)
    wrong = "H1" if hypothesis == "H0" else "H0"
    counts: dict[tuple[Method, int], list[int]] = {(m, b): [0, 0, 0] for m in methods for b in burn_ins}
    for _ in range(tests):
        for key, (verdict, blocks) in one_test(rng, population, delta1, methods, burn_ins).items():
            counts[key][0] += verdict == wrong
            counts[key][1] += blocks
            counts[key][2] += verdict == "cap"
    return corpus, skew, hypothesis, {key: Cell(tests, *c) for key, c in counts.items()}


def moments(values: Sequence[float]) -> tuple[float, float, float, float]:
    """Mean, standard deviation, skewness and excess kurtosis."""
    n = len(values)
    mean = statistics.fmean(values)
    var = sum((v - mean) ** 2 for v in values) / n
    skew = sum((v - mean) ** 3 for v in values) / n / var**1.5
    kurt = sum((v - mean) ** 4 for v in values) / n / var**2 - 3
    return mean, math.sqrt(var), skew, kurt


def calibrate(corpora: dict[str, list[float]], tests: int, seed: int, methods: Sequence[Method],
              burn_ins: Sequence[int], jobs: int = 1) -> dict[tuple[str, str, str], dict[tuple[Method, int], Cell]]:
    """Every corpus, as played and mirrored, under H0 and H1: the cells of every method and burn-in."""
    work = []
    for name, values in corpora.items():
        delta1 = EFFECT * moments(values)[1]
        for skew, sign in (("as played", 1.0), ("mirrored", -1.0)):
            for hypothesis in ("H0", "H1"):
                work.append((name, skew, hypothesis, [sign * v for v in values], delta1, tests, seed,
                             tuple(methods), tuple(burn_ins)))
    if jobs > 1:
        from multiprocessing import Pool

        with Pool(jobs) as pool:
            done = pool.map(run_group, work, chunksize=1)
    else:
        done = [run_group(job) for job in work]
    return {(corpus, skew, hypothesis): cells for corpus, skew, hypothesis, cells in done}


def _rate(cell: Cell) -> str:
    low, high = wilson(cell.wrong, cell.tests)
    return f"{cell.rate:.3f} [{low:.3f}, {high:.3f}]"


def report(corpora: dict[str, list[float]], results: dict[tuple[str, str, str], dict[tuple[Method, int], Cell]],
           methods: Sequence[Method], burn_ins: Sequence[int]) -> str:
    """The calibration table as Markdown."""
    lines = ["| corpus | skew | method | burn-in | accepts H1 under H0 (α) | blocks | "
             "accepts H0 under H1 (β) | blocks |", "|---|---|---|---|---|---|---|---|"]
    for name in corpora:
        for skew in ("as played", "mirrored"):
            for method in methods:
                for burn_in in burn_ins:
                    h0 = results[(name, skew, "H0")][(method, burn_in)]
                    h1 = results[(name, skew, "H1")][(method, burn_in)]
                    capped = f" (capped: {h0.capped + h1.capped})" if h0.capped + h1.capped else ""
                    lines.append(f"| {name} | {skew} | {method} | {burn_in} | {_rate(h0)} | {h0.mean_blocks:.0f} | "
                                 f"{_rate(h1)} | {h1.mean_blocks:.0f}{capped} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=("calibrate", "corpus"), default="calibrate")
    parser.add_argument("--tests", type=int, default=5000, help="tests per hypothesis, corpus and skew")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--burn-in", nargs="+", type=int, default=[10, 30], dest="burn_ins")
    parser.add_argument("--data", type=Path, default=DATA, help="the folder of the corpus files")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--blocks", type=int, default=3000, help="corpus: blocks per pair")
    parser.add_argument("--out", type=Path, default=DATA, help="corpus: the folder to write to")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus")
    if args.command == "corpus":
        args.out.mkdir(parents=True, exist_ok=True)
        for pair in PAIRS.values():
            sums = build_corpus(pair, args.blocks)
            write_corpus(args.out / f"{pair.name}.txt", pair, sums)
            print(f"{pair.name}: {len(sums)} blocks ({time.perf_counter() - start:.0f} s)")
        return 0
    corpora = {name: read_corpus(args.data / f"{name}.txt") for name in PAIRS}
    for name, values in corpora.items():
        mean, sd, skew, kurt = moments(values)
        print(f"{name}: {len(values)} blocks, d mean {mean / 10:+.2f} points per game, sd {sd / 10:.2f}, "
              f"skewness {skew:+.2f}, excess kurtosis {kurt:+.2f}; Δ1 = {EFFECT} sd = {EFFECT * sd / 10:.2f}")
    results = calibrate(corpora, args.tests, args.seed, args.methods, args.burn_ins, args.jobs)
    print(f"\n{args.tests} tests per hypothesis, corpus and skew; α = β = {ALPHA}; seed {args.seed}; "
          f"{time.perf_counter() - start:.0f} s\n")
    print(report(corpora, results, args.methods, args.burn_ins))
    return 0


if __name__ == "__main__":
    sys.exit(main())
