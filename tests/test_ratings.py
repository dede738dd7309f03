"""The standings, head-to-head comparisons and seat report of ``arena.rating.ratings``, checked against
hand computations on crafted records and against independent recomputations on the records of
small in-process tournaments."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from statistics import mean, stdev
from typing import Any

import pytest
from openskill.models import PlackettLuce

from arena.core.rules import Rules
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.rating.ratings import compare, head_to_head, tally
from arena.rating.sequential import describe, sprt
from arena.rating.standing import NOT_RANKED_TITLE, Standing
from arena.rating.stats import pentanomial_elo, t_cdf, t_quantile
from arena.rating.tables import render_comparison, render_head_to_head, render_seat_report, render_standings
from arena.records.format import RoundRecord, parse_record
from arena.records.store import ResultsStore

Record = dict[str, Any]
RULES = Rules.profile().to_dict()

RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
T_975_1 = 12.706204736174694
"""t(0.975, 1): the 95 % interval of two block values."""


# -- crafted records ------------------------------------------------------------------------------


def places_of(totals: Sequence[int]) -> list[int]:
    """Places 1-4 by seat, exact ties sharing the best place they span."""
    return [1 + sum(1 for other in totals if other > total) for total in totals]


def typed(record: Record, line: int) -> RoundRecord:
    """A record as the store reads it, from the fields a test cares about and plain defaults."""
    faults = [{"detail": "", "round": record["round"], "trick": None, **fault} for fault in record["faults"]]
    return parse_record({
        "v": 2, "tournament": "t", "seed": 1, "deals": "seed", "rules": RULES, "attempt": 0, "trump": "S",
        "hands": ["", "", "", ""], "tricks": [], "redeals": [], "fallbacks": [0, 0, 0, 0],
        "versions": ["", "", "", ""], **record, "faults": faults,
    }, line)


def game(
    game_id: str, seats: Sequence[str], scores: Sequence[Sequence[int]], *,
    calls: Sequence[Sequence[int]] | None = None, tricks: Sequence[Sequence[int]] | None = None,
    faults: Sequence[Sequence[Record]] | None = None, final: bool = True, first_dealer: int = 3,
) -> list[RoundRecord]:
    """The round records of one game ``r<R>-g<G>-d<D>-p<P>``: ``scores[round][seat]``."""
    round_text, group_text, deal_text, rotation_text = (part[1:] for part in game_id.split("-"))
    deal_set = int(deal_text)
    out: list[RoundRecord] = []
    totals = [0, 0, 0, 0]
    for index, round_scores in enumerate(scores):
        totals = [t + s for t, s in zip(totals, round_scores, strict=True)]
        last = final and index == len(scores) - 1
        record: Record = {
            "game": game_id, "block": game_id.rsplit("-p", 1)[0], "schedule_round": int(round_text),
            "group": int(group_text), "deal_set": deal_set, "rotation": int(rotation_text),
            "seats": list(seats), "first_dealer": first_dealer, "deal": f"{deal_set}.{index + 1}.0",
            "round": index + 1, "dealer": (first_dealer + index) % 4,
            "calls": list(calls[index]) if calls else [3, 3, 3, 3],
            "tricks_won": list(tricks[index]) if tricks else [4, 3, 3, 3],
            "scores": list(round_scores), "totals": list(totals),
            "faults": list(faults[index]) if faults else [], "final": last,
        }
        if last:
            record["places"] = places_of(totals)
        out.append(typed(record, index + 1))
    return out


def cyclic_block(order: Sequence[str], matrix: Sequence[Sequence[int]], *, schedule_round: int = 1,
                 deal_set: int = 1, group: int = 1) -> list[RoundRecord]:
    """One deal set at one table in its 4 cyclic rotations, one round per game;
    ``matrix[seat][k]`` is the score of ``order[k]`` when it holds that seat's hand."""
    out = []
    for rotation in range(4):
        seats = [order[(seat - rotation) % 4] for seat in range(4)]
        scores = [[matrix[seat][order.index(seats[seat])] for seat in range(4)]]
        out += game(f"r{schedule_round}-g{group}-d{deal_set}-p{rotation}", seats, scores)
    return out


BOTS = ["A", "B", "C", "D"]
BLOCK1 = [  # rows: the hand of seat 0-3; columns: A, B, C, D
    [30, 20, 10, 0],
    [-20, -30, -30, -40],
    [10, 10, 0, -20],
    [5, 0, 10, 0],
]
BLOCK2 = [
    [40, 10, 20, 30],
    [0, 0, 0, 0],
    [-10, 20, -30, 0],
    [20, -10, 10, 0],
]


def example() -> list[RoundRecord]:
    """Two blocks of known scores (deal sets 1 and 2)."""
    return cyclic_block(BOTS, BLOCK1) + cyclic_block(BOTS, BLOCK2, schedule_round=2, deal_set=2)


def by_bot(rows: Iterable[Standing]) -> dict[str, Standing]:
    return {row.bot: row for row in rows}


# -- independent recomputations -------------------------------------------------------------------


def complete_games(records: Iterable[RoundRecord]) -> list[list[RoundRecord]]:
    games: dict[str, list[RoundRecord]] = {}
    for record in records:
        games.setdefault(record.game, []).append(record)
    done = [rounds for rounds in games.values() if rounds[-1].final]
    return sorted(done, key=lambda g: (g[0].schedule_round, g[0].group, g[0].deal_set, g[0].rotation))


def field_by_bot(records: Iterable[RoundRecord]) -> tuple[dict[str, float], dict[str, dict[int, list[float]]]]:
    """Duplicate score per bot (sum over hands of own - mean of the *other bots'* results on the hand),
    and per deal set (the cluster) the bot's diffs, one per round it played (every game here is
    complete, so a round is a fifth of a game)."""
    hands: dict[tuple[str, int], list[tuple[str, int, int]]] = {}
    for rounds in complete_games(records):
        for record in rounds:
            for seat, bot in enumerate(record.seats):
                hands.setdefault((record.deal, seat), []).append((bot, record.deal_set, record.scores[seat]))
    total: dict[str, float] = {}
    clusters: dict[str, dict[int, list[float]]] = {}
    for results in hands.values():
        for bot, deal_set, score in results:
            others = [s for b, _, s in results if b != bot]
            if not others:
                continue
            diff = score - sum(others) / len(others)
            total[bot] = total.get(bot, 0.0) + diff
            clusters.setdefault(bot, {}).setdefault(deal_set, []).append(diff)
    return total, clusters


def openskill_reference(records: Iterable[RoundRecord]) -> dict[str, Any]:
    model = PlackettLuce(tau=0.0)
    ratings: dict[str, Any] = {}
    for rounds in complete_games(records):
        final = rounds[-1]
        teams = [[ratings.get(bot) or model.rating(name=bot)] for bot in final.seats]
        rated = model.rate(teams, ranks=list(final.places))
        for seat, bot in enumerate(final.seats):
            ratings[bot] = rated[seat][0]
    return ratings


# -- real tournaments -----------------------------------------------------------------------------


def run_tournament(text: str, folder: Path) -> list[RoundRecord]:
    asyncio.run(asyncio.wait_for(Tournament(parse_config(text), folder).run(), 120))
    return ResultsStore(folder).records()


def bot_table(name: str, spec: str, seed: int, options: str = "") -> str:
    return f'\n[[bots]]\nname = "{name}"\npython = "{spec}"\nseed = {seed}\n{options}\n'


ROUND_ROBIN = (
    '[tournament]\nname = "rr"\nseed = 11\ndeal_sets = 2\nconcurrency = 4\n'
    + bot_table("heur", HEURISTIC, 1)
    + bot_table("bold", HEURISTIC, 2, "options = { aggression = 1.0 }")
    + bot_table("rand1", RANDOM, 3) + bot_table("rand2", RANDOM, 4) + bot_table("rand3", RANDOM, 5)
)
HEAD_TO_HEAD = (
    '[tournament]\nname = "h2h"\nseed = 5\ndeal_sets = 6\nformat = "head-to-head"\nconcurrency = 4\n'
    '[head-to-head]\na = "heur"\nb = "rand1"\nopponents = ["rand2", "rand3", "bold"]\n'
    + bot_table("heur", HEURISTIC, 1)
    + bot_table("bold", HEURISTIC, 2, "options = { aggression = 1.0 }")
    + bot_table("rand1", RANDOM, 3) + bot_table("rand2", RANDOM, 4) + bot_table("rand3", RANDOM, 5)
)


@pytest.fixture(scope="module")
def round_robin(tmp_path_factory: pytest.TempPathFactory) -> list[RoundRecord]:
    """5 bots, every group of four, 2 deal sets: 5 tables x 4 rotations x 2 = 40 games."""
    return run_tournament(ROUND_ROBIN, tmp_path_factory.mktemp("rr"))


@pytest.fixture(scope="module")
def h2h(tmp_path_factory: pytest.TempPathFactory) -> list[RoundRecord]:
    """heur against rand1, opposite each other, 6 blocks with opponents drawn from a pool of 3."""
    return run_tournament(HEAD_TO_HEAD, tmp_path_factory.mktemp("h2h"))


# -- the duplicate score ----------------------------------------------------------------------------


def test_hand_computed_example() -> None:
    rows = by_bot(tally(example()).standings())
    a = rows["A"]
    # Block 1, A on each hand: own - mean of the other three = (4x - S)/3.
    block1 = Fraction(4 * 30 - 60, 3) + Fraction(4 * -20 + 120, 3) + Fraction(4 * 10 - 0, 3) + Fraction(4 * 5 - 15, 3)
    block2 = Fraction(4 * 40 - 100, 3) + Fraction(0) + Fraction(4 * -10 + 20, 3) + Fraction(4 * 20 - 20, 3)
    assert (block1, block2) == (Fraction(145, 3), Fraction(100, 3))
    assert a.games == 8 and a.rounds == 8 and a.blocks == 2
    assert a.dup_per_game == pytest.approx(245 / 24)
    values = [145 / 12, 100 / 12]  # per block: the diffs over its 4 games
    half = T_975_1 * stdev(values) / math.sqrt(2)
    assert half == pytest.approx(23.8241338803)
    assert (a.dup_low, a.dup_high) == pytest.approx((245 / 24 - half, 245 / 24 + half))
    # Matchpoints, hand by hand: 1, 1, 2.5/3 (a tie with B), 2/3; 1, 1.5/3 (all tie), 1/3, 1.
    assert a.matchpoint_pct == pytest.approx(100 * (1 + 1 + 2.5 / 3 + 2 / 3 + 1 + 0.5 + 1 / 3 + 1) / 8)
    # Places by game: block 1: 1st, 4th, tied 1st with C (2.5), 2nd; block 2: 1st, 4th, tied 3rd (0.5), 1st.
    assert a.place_points == pytest.approx((3 + 0 + 2.5 + 2 + 3 + 0 + 0.5 + 3) / 8)
    assert a.mean_total == pytest.approx((30 - 20 + 10 + 5 + 40 + 0 - 10 + 20) / 8)
    assert a.mean_round == a.mean_total  # one round per game
    # Two tied firsts share 3 + 2: block 1, rotation 1 (B and C on 10) and rotation 2 (C and A on 10).
    c = rows["C"]
    assert c.place_points == pytest.approx((1.5 + 2.5 + 2.5 + 0 + 0 + 1 + 3 + 0.5) / 8)
    assert sum(row.place_points for row in rows.values()) == pytest.approx(6.0)


def test_example_against_an_independent_recomputation() -> None:
    records = example()
    rows = by_bot(tally(records).standings())
    total, clusters = field_by_bot(records)
    for bot, row in rows.items():
        assert row.dup_per_game == pytest.approx(total[bot] / row.games)
        per_block = [sum(diffs) / 4 for diffs in clusters[bot].values()]  # one block per deal set
        ci = mean(per_block), T_975_1 * stdev(per_block) / math.sqrt(len(per_block))
        assert (row.dup_low, row.dup_high) == pytest.approx((ci[0] - ci[1], ci[0] + ci[1]))
    assert sum(row.dup_per_game for row in rows.values()) == pytest.approx(0.0, abs=1e-9)
    assert sum(row.matchpoint_pct for row in rows.values()) == pytest.approx(200.0)  # 50 % on average


def test_real_round_robin_duplicate_scores_sum_to_zero_and_rank_like_mean_totals(
    round_robin: list[RoundRecord],
) -> None:
    rows = tally(round_robin).standings()
    assert {row.bot for row in rows} == {"heur", "bold", "rand1", "rand2", "rand3"}
    assert all(row.games == 32 and row.rounds == 160 and row.blocks == 8 and row.clusters == 2 for row in rows)
    assert sum(row.dup_per_game for row in rows) == pytest.approx(0.0, abs=1e-6)
    # A complete design: the ranking by duplicate score is the ranking by mean total.
    assert [r.bot for r in rows] == [r.bot for r in sorted(rows, key=lambda r: -r.mean_total)]
    assert [r.dup_per_game for r in rows] == sorted((r.dup_per_game for r in rows), reverse=True)
    # Every bot holds every hand 4 times among 20 results, and is compared with the 16 of the other
    # bots only: per hand, S_b - 4 (S - S_b) / 16 = (5 S_b - S) / 4, so dup/game is 5/4 of the gap
    # between its mean total and the field's (20/19 if its own results were in the datum).
    totals = [r.mean_total for r in rows]
    assert [r.dup_per_game for r in rows] == pytest.approx([5 / 4 * (t - mean(totals)) for t in totals])
    total, clusters = field_by_bot(round_robin)
    for row in rows:
        assert row.dup_per_game == pytest.approx(total[row.bot] / 32)
        # One cluster per deal set: the bot's 16 games of the round (4 tables, 4 rotations) share its cards.
        per_round = [sum(diffs) / 16 for diffs in clusters[row.bot].values()]
        half = t_quantile(0.975, 1) * stdev(per_round) / math.sqrt(2)
        assert (row.dup_low, row.dup_high) == pytest.approx((mean(per_round) - half, mean(per_round) + half))
        assert row.dup_low < row.dup_per_game < row.dup_high
    assert sum(r.matchpoint_pct for r in rows) / 5 == pytest.approx(50.0)
    assert sum(r.place_points for r in rows) / 5 == pytest.approx(1.5)


# -- OpenSkill --------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["example", "round_robin"])
def test_openskill_matches_plackett_luce_fed_in_schedule_order(source: str, request: pytest.FixtureRequest) -> None:
    records = example() if source == "example" else request.getfixturevalue("round_robin")
    reference = openskill_reference(records)
    rows = tally(records).standings()
    assert {row.bot for row in rows} == set(reference)
    for row in rows:
        rating = reference[row.bot]
        assert (row.mu, row.sigma) == pytest.approx((rating.mu, rating.sigma), rel=1e-12)
        assert row.ordinal == pytest.approx(rating.ordinal()) and row.ordinal == pytest.approx(row.mu - 3 * row.sigma)


def test_openskill_uses_schedule_order_not_file_order(round_robin: list[RoundRecord]) -> None:
    # Records are appended as games finish; shuffled lines must rate the same.
    shuffled = list(reversed(round_robin))
    by_game: dict[str, list[RoundRecord]] = {}
    for record in shuffled:
        by_game.setdefault(record.game, []).append(record)
    regrouped = [r for rounds in by_game.values() for r in sorted(rounds, key=lambda r: r.round)]
    assert [(r.bot, r.mu, r.sigma) for r in tally(regrouped).standings()] == \
        [(r.bot, r.mu, r.sigma) for r in tally(round_robin).standings()]


def test_openskill_with_tied_places() -> None:
    records = game("r1-g1-d1-p0", BOTS, [[50, 50, 10, 10]]) + game("r2-g1-d2-p0", BOTS, [[0, 20, 20, 20]])
    reference = openskill_reference(records)
    assert records[-1].places == (4, 1, 1, 1)
    for row in tally(records).standings():
        assert (row.mu, row.sigma) == pytest.approx((reference[row.bot].mu, reference[row.bot].sigma))


# -- calling and faults -----------------------------------------------------------------------------


def test_bid_metrics_on_a_crafted_game() -> None:
    calls = [[3, 2, 4, 4], [4, 3, 3, 3], [2, 3, 3, 4], [1, 4, 4, 4]]
    tricks = [[5, 2, 3, 3], [2, 4, 4, 3], [2, 4, 3, 4], [1, 4, 4, 4]]
    records = game("r1-g1-d1-p0", BOTS, [[10, 20, -40, -40]] * 4, calls=calls, tricks=tricks)
    rows = by_bot(tally(records).standings())
    a = rows["A"]  # 3/5 over by 2, 4/2 missed by 2, 2/2, 1/1
    assert a.made_pct == pytest.approx(75.0)
    assert a.abs_error == pytest.approx(1.0)
    assert a.overtricks == pytest.approx(0.5)
    assert (a.too_high_pct, a.too_low_pct) == pytest.approx((25.0, 25.0))
    b = rows["B"]  # 2/2, 3/4, 3/4, 4/4
    assert (b.made_pct, b.abs_error, b.overtricks, b.too_high_pct, b.too_low_pct) == pytest.approx(
        (100.0, 0.5, 0.5, 0.0, 50.0))
    c = rows["C"]  # 4/3, 3/4, 3/3, 4/4
    assert (c.made_pct, c.abs_error, c.overtricks, c.too_high_pct, c.too_low_pct) == pytest.approx(
        (75.0, 0.5, 0.25, 25.0, 25.0))
    line = next(x for x in render_standings(tally(records).standings(), Rules.profile()).splitlines()
                if x.split()[1:2] == ["A"])
    assert "75" in line.split() and "1.00" in line.split() and "0.50" in line.split() and "25/25" in line.split()


def test_faults_are_counted_by_kind_per_bot() -> None:
    faults = [
        [{"seat": 0, "kind": "late"}, {"seat": 2, "kind": "illegal_card"}],
        [{"seat": 0, "kind": "late"}, {"seat": 0, "kind": "crash"}],
    ]
    records = game("r1-g1-d1-p0", BOTS, [[1, 2, 3, 4], [1, 2, 3, 4]], faults=faults)
    records += game("r1-g1-d1-p1", ["D", "A", "B", "C"], [[1, 2, 3, 4]], faults=[[{"seat": 1, "kind": "late"}]])
    rows = by_bot(tally(records).standings())
    assert rows["A"].faults == 4 and rows["A"].faults_by_kind == {"late": 3, "crash": 1}
    assert rows["C"].faults == 1 and rows["C"].faults_by_kind == {"illegal_card": 1}
    assert rows["B"].faults == 0 and rows["D"].faults_by_kind == {}
    table = render_standings(list(rows.values()), Rules.profile())
    assert "crash 1, late 3" in table and "illegal_card 1" in table


# -- edge cases -------------------------------------------------------------------------------------


def test_one_block_has_an_unbounded_interval_and_renders() -> None:
    rows = tally(cyclic_block(BOTS, BLOCK1)).standings()
    assert all(row.blocks == 1 and row.dup_low == -math.inf and row.dup_high == math.inf for row in rows)
    assert all(row.clusters == 1 and math.isinf(row.matchpoint_low) for row in rows)
    rules = Rules.profile()
    assert "[-inf, inf]" in render_standings(rows, rules, "table")
    assert "[-inf, inf]" in render_standings(rows, rules, "markdown")
    data = json.loads(render_standings(rows, rules, "json"), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert data["standings"][0]["dup_low"] is None and data["standings"][0]["dup_high"] is None
    assert data["intervals"]["clusters"] == 1 and data["intervals"]["df"] == 0
    assert len(render_standings(rows, rules, "csv").splitlines()) == 5


def test_zero_variance_collapses_the_interval() -> None:
    records = cyclic_block(BOTS, BLOCK1) + cyclic_block(BOTS, BLOCK1, schedule_round=2, deal_set=2)
    for row in tally(records).standings():
        assert row.blocks == 2
        assert row.dup_low == pytest.approx(row.dup_per_game) and row.dup_high == pytest.approx(row.dup_per_game)
    text = render_standings(tally(records).standings(), Rules.profile())
    assert "inf" not in text and "nan" not in text


def test_a_bot_without_finished_games_is_absent() -> None:
    records = example() + game("r3-g1-d3-p0", ["A", "ghost", "B", "C"], [[10, 20, 30, 40]], final=False)
    rows = tally(records).standings()
    assert [r.bot for r in rows] == [r.bot for r in tally(example()).standings()]
    assert all(r.games == 8 for r in rows)
    matrix = head_to_head(records, [*BOTS, "ghost"])
    assert len(matrix) == 12 and not any("ghost" in pair for pair in matrix)
    c = compare(records, "A", "ghost", delta1=10.0)
    assert c.sprt is not None and c.sprt.verdict == "continue"
    assert c.blocks == 0 and c.pairs == 0 and math.isnan(c.diff.mean)
    assert "A vs ghost: 0 blocks" in render_comparison(c, Rules.profile())
    assert tally([]).standings() == []
    assert tally(records[-1:]).standings() == []


def test_a_lone_result_on_a_hand_is_not_compared() -> None:
    # Only the first rotation of a block: no hand has a second result yet. Nothing is compared: no
    # duplicate score, no matchpoints (not 0 and 50 %), though the game is played and counted.
    records = cyclic_block(BOTS, BLOCK1)[:1]
    rows = tally(records).standings()
    assert all(math.isnan(r.dup_per_game) and math.isnan(r.matchpoint_pct) for r in rows)
    assert all(r.games == 1 and r.dup_games == 0 and r.clusters == 0 for r in rows)
    text = render_standings(rows, Rules.profile())
    assert "nan" not in text and [line.split()[2] for line in text.splitlines()[2:6]] == ["-"] * 4


def test_hands_nobody_else_has_played_yet_count_neither_as_zero_nor_as_a_game() -> None:
    # Mid-round: deal set 1 played in all its rotations, deal set 2 in its first only.
    whole = tally(cyclic_block(BOTS, BLOCK1)).standings()
    rows = by_bot(tally(cyclic_block(BOTS, BLOCK1) + cyclic_block(BOTS, BLOCK2, schedule_round=2,
                                                                              deal_set=2)[:1]).standings())
    for row in whole:
        assert rows[row.bot].games == 5 and rows[row.bot].dup_games == 4 and rows[row.bot].clusters == 1
        assert rows[row.bot].dup_per_game == pytest.approx(row.dup_per_game)  # not diluted by a fifth game
        assert rows[row.bot].matchpoint_pct == pytest.approx(row.matchpoint_pct)


def test_ties_everywhere() -> None:
    flat = [[7, 7, 7, 7]] * 4
    records = cyclic_block(BOTS, flat) + cyclic_block(BOTS, flat, schedule_round=2, deal_set=2)
    rows = tally(records).standings()
    assert [r.bot for r in rows] == BOTS  # every key equal: the name decides
    for row in rows:
        assert row.dup_per_game == 0 and row.dup_low == 0 and row.dup_high == 0
        assert row.matchpoint_pct == 50.0 and row.place_points == 1.5 and row.mean_total == 7
    assert len({(r.mu, r.sigma) for r in rows}) == 1
    reference = openskill_reference(records)["A"]
    assert (rows[0].mu, rows[0].sigma) == pytest.approx((reference.mu, reference.sigma))
    c = compare(records, "A", "C")  # opposite each other: 2 game pairs per block, each a double draw
    assert c.diff.mean == 0 and c.los == 0.5 and c.pairs == 4
    assert c.elo.elo == 0.0 and c.elo.describe() == "+0.0 (no interval: all 2 deal sets scored alike)"
    render_standings(rows, Rules.profile())
    render_comparison(c, Rules.profile())
    # Neighbours never hold each other's hands under cyclic rotation: no pairs, no Elo, still rendered.
    neighbours = compare(records, "A", "B")
    assert neighbours.pairs == 0 and math.isnan(neighbours.elo.elo)
    assert "0 game pairs" in render_comparison(neighbours, Rules.profile())


def test_house_bots_are_last_unranked_and_listed_apart() -> None:
    rows = tally(example()).standings(house=["A"])  # A is the best bot of the example
    assert [r.bot for r in rows][-1] == "A" and rows[-1].house
    assert rows[-1].dup_per_game > rows[0].dup_per_game
    ranking, apart = render_standings(rows, Rules.profile()).split(NOT_RANKED_TITLE)
    lines = ranking.split("\n\n")[0].splitlines()[2:]
    # The rank column gives each ranked bot its rank range (one deal set: nothing tells them apart).
    assert [line.split()[0] for line in lines] == ["1-3", "1-3", "1-3"]
    assert [r.rank for r in rows] == [1, 2, 3, None] and rows[-1].rank_range is None
    line = apart.strip().splitlines()[2]
    assert line.split()[:3] == ["-", "A", "(house)"] and "house bot (fills tables)" in line
    assert json.loads(render_standings(rows, Rules.profile(), "json"))["standings"][-1]["house"] is True


# -- head to head -----------------------------------------------------------------------------------


def h2h_block(number: int, a_minus_b: Sequence[int]) -> list[RoundRecord]:
    """A and B opposite each other (seats 0 and 2 of the order) with opponents O1 and O2; one round
    per game; ``a_minus_b[rotation]`` is A's score minus B's (A scores it, B 0)."""
    order = ["A", "O1", "B", "O2"]
    out = []
    for rotation, diff in enumerate(a_minus_b):
        seats = [order[(seat - rotation) % 4] for seat in range(4)]
        scores = [[diff if bot == "A" else 0 if bot == "B" else -50 for bot in seats]]
        out += game(f"r{number}-g1-d{number}-p{rotation}", seats, scores)
    return out


H2H_DIFFS = [[10, -5, 20, 0], [30, 10, -10, 10], [-20, 5, 0, 15]]


def test_head_to_head_difference_los_and_pairs_by_hand() -> None:
    records = [r for n, diffs in enumerate(H2H_DIFFS, start=1) for r in h2h_block(n, diffs)]
    c = compare(records, "A", "B")
    blocks = [6.25, 10.0, 0.0]
    assert c.blocks == 3 and c.diff.mean == pytest.approx(65 / 12)
    se = stdev(blocks) / math.sqrt(3)
    assert c.diff.se == pytest.approx(se)
    # LOS from the t distribution on 2 df (3 deal sets): 0.8978, where the normal said 0.9684.
    assert c.los == pytest.approx(t_cdf((65 / 12) / se, 2)) and c.los == pytest.approx(0.897794, abs=1e-6)
    half = t_quantile(0.975, 2) * se
    assert (c.diff.low, c.diff.high) == pytest.approx((65 / 12 - half, 65 / 12 + half))
    # Pairs: rotations 0 and 2, 1 and 3 (A and B swap hands): 1+1, 0+0.5; 1+0, 1+1; 0+0.5, 1+1.
    assert c.pairs == 6
    # Each block is a deal set of its own here, and its two pairs one cluster.
    assert c.elo == pentanomial_elo([2, 0.5, 1, 2, 0.5, 2], clusters=[1, 1, 2, 2, 3, 3])
    assert c.elo.elo == pytest.approx(-400 * math.log10(1 / (8 / 12) - 1))  # mean score 2/3: +120.4 Elo
    reverse = compare(records, "B", "A")
    assert reverse.diff.mean == pytest.approx(-c.diff.mean) and reverse.los == pytest.approx(1 - c.los)
    assert reverse.elo.elo == pytest.approx(-c.elo.elo)
    assert (reverse.elo.low, reverse.elo.high) == pytest.approx((-c.elo.high, -c.elo.low))
    matrix = head_to_head(records, ["A", "B", "O1", "O2"])
    assert matrix[("A", "B")].diff == c.diff and len(matrix) == 12
    text = render_head_to_head(matrix, ["A", "B", "O1", "O2"], Rules.profile())
    assert "+0.54 (90%)" in text  # 5.42 tenths per game, LOS 90 %


@pytest.mark.parametrize("method", ["alt", "alt2"])
def test_compare_sprt_is_stats_sprt_on_the_block_differences(method: Any) -> None:
    records = [r for n, diffs in enumerate(H2H_DIFFS * 4, start=1) for r in h2h_block(n, diffs)]
    blocks = [6.25, 10.0, 0.0] * 4
    for delta1 in (3.0, 20.0, 0.5):
        c = compare(records, "A", "B", delta1=delta1, burn_in=3, cap=12, method=method)
        assert c.sprt == sprt(blocks, 0.0, delta1, burn_in=3, cap=12, method=method, per_point=10, a="A", b="B")
    c = compare(records, "A", "B", delta0=1.0, delta1=4.0, alpha=0.1, beta=0.2, burn_in=5, method=method)
    assert c.sprt == sprt(blocks, 1.0, 4.0, alpha=0.1, beta=0.2, burn_in=5, method=method, per_point=10, a="A", b="B")
    assert compare(records, "A", "B").sprt is None
    assert f"SPRT: {describe(c.sprt)}" in render_comparison(c, Rules.profile())


def test_head_to_head_tournament(h2h: list[RoundRecord]) -> None:
    games = complete_games(h2h)
    blocks: dict[str, list[int]] = {}
    for rounds in games:
        final = rounds[-1]
        seats = final.seats
        assert seats.index("rand1") == (seats.index("heur") + 2) % 4  # opposite each other
        blocks.setdefault(final.block, []).append(final.totals[seats.index("heur")]
                                                  - final.totals[seats.index("rand1")])
    diffs = [sum(d) / len(d) for d in blocks.values()]
    assert len(diffs) == 6 and all(len(d) == 4 for d in blocks.values())
    c = compare(h2h, "heur", "rand1", delta1=50.0, burn_in=3)
    assert c.blocks == 6 and c.diff.mean == pytest.approx(mean(diffs))
    assert c.los == pytest.approx(t_cdf(mean(diffs) / (stdev(diffs) / math.sqrt(6)), 5))
    assert c.sprt == sprt(diffs, 0.0, 50.0, burn_in=3, per_point=10, a="heur", b="rand1")
    # The pairs: in rotation r and r + 2 heur and rand1 hold each other's hands.
    assert c.pairs == 2 * 6
    pairs = []
    for block in blocks:
        by_rotation = {g[-1].rotation: g[-1] for g in games if g[-1].block == block}
        for first in (0, 1):
            score = 0.0
            for final in (by_rotation[first], by_rotation[first + 2]):
                seats = final.seats
                d = final.totals[seats.index("heur")] - final.totals[seats.index("rand1")]
                score += 1.0 if d > 0 else 0.5 if d == 0 else 0.0
            pairs.append(score)
            a_seat = by_rotation[first].seats.index("heur")
            assert by_rotation[first + 2].seats[a_seat] == "rand1"
    assert c.elo == pentanomial_elo(pairs, clusters=[n // 2 for n in range(len(pairs))])  # a block per deal set
    text = render_comparison(c, Rules.profile())
    assert "12 game pairs" in text and "likelihood of superiority" in text and "SPRT" in text


# -- seats ------------------------------------------------------------------------------------------


def test_seat_report_on_a_crafted_game() -> None:
    # One game of 4 rounds, dealers 3, 0, 1, 2: every seat is at every distance once.
    scores = [[10, 20, 30, 40], [1, 2, 3, 4], [-10, -20, -30, -40], [5, 5, 5, 5]]
    rows = tally(game("r1-g1-d1-p0", BOTS, scores)).seats()
    assert [r.position for r in rows] == ["seat 0", "seat 1", "seat 2", "seat 3",
                                          "dealer +1", "dealer +2", "dealer +3", "dealer"]
    assert all(r.rounds == 4 and r.mean.n == 1 for r in rows)
    means = {r.position: r.mean.mean for r in rows}
    assert [means[f"seat {s}"] for s in range(4)] == pytest.approx([1.5, 1.75, 2.0, 2.25])
    # Round 1 dealer 3: distance d is seat (3 + d) % 4; round 2 dealer 0; round 3 dealer 1; round 4 dealer 2.
    expected = {d: mean(scores[k][(3 + k + d) % 4] for k in range(4)) for d in range(4)}
    assert means["dealer +1"] == pytest.approx(expected[1]) and means["dealer"] == pytest.approx(expected[0])
    assert means["dealer +2"] == pytest.approx(expected[2]) and means["dealer +3"] == pytest.approx(expected[3])
    assert "[-inf, inf]" in render_seat_report(rows, Rules.profile())


def test_seat_report_on_a_real_tournament(round_robin: list[RoundRecord]) -> None:
    rows = tally(round_robin).seats()
    assert len(rows) == 8
    rounds = len(round_robin)
    assert rounds == 40 * 5
    assert all(r.rounds == rounds for r in rows)
    per_deal_set: dict[str, dict[int, list[int]]] = {}
    for record in round_robin:
        for seat in range(4):
            distance = (seat - record.dealer) % 4
            for key in (f"seat {seat}", f"dealer +{distance}" if distance else "dealer"):
                per_deal_set.setdefault(key, {}).setdefault(record.deal_set, []).append(record.scores[seat])
    for row in rows:
        # Every table of a round holds the same cards at the same seat: one cluster per deal set.
        values = [mean(v) for v in per_deal_set[row.position].values()]
        assert row.mean.n == 2 and row.mean.mean == pytest.approx(mean(values))
        half = t_quantile(0.975, 1) * stdev(values) / math.sqrt(2)
        assert (row.mean.low, row.mean.high) == pytest.approx((mean(values) - half, mean(values) + half))
    # Seats and distances are two views of the same rounds: their overall means agree.
    assert mean(r.mean.mean for r in rows[:4]) == pytest.approx(mean(r.mean.mean for r in rows[4:]))
    text = render_seat_report(rows, Rules.profile(), "markdown")
    assert text.count("\n") == 10 and "dealer +1" in text
