"""Standings from crafted records: duplicate scores, shared places, house bots last."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import pytest

from arena.core.game import places
from arena.core.rules import Rules
from arena.rating.ratings import tally
from arena.rating.tables import render_standings
from arena.records.format import RoundRecord, parse_record

Record = dict[str, Any]
RULES = Rules.profile().to_dict()


def typed(record: Record, line: int) -> RoundRecord:
    """A record as the store reads it, from the fields a test cares about and plain defaults."""
    faults = [{"detail": "", "round": record["round"], "trick": None, **fault} for fault in record["faults"]]
    return parse_record({
        "v": 2, "tournament": "t", "seed": 1, "deals": "seed", "rules": RULES, "first_dealer": 3, "attempt": 0,
        "trump": "S", "hands": ["", "", "", ""], "tricks": [], "redeals": [], "fallbacks": [0, 0, 0, 0],
        "versions": ["", "", "", ""], **record, "faults": faults,
    }, line)

HAND_VALUE = (30, -20, 10, -5)
"""What each seat's cards are worth on the crafted deal: the luck that duplicate scoring cancels."""


def game(game_id: str, seats: Sequence[str], scores: Sequence[Sequence[int]], *, deal_set: int = 1,
         faults: Sequence[Record] = (), final: bool = True) -> list[RoundRecord]:
    """The records of one game: one line per round, ``scores[round][seat]``."""
    match = re.fullmatch(r"r(\d+)-g(\d+)-d(\d+)-p(\d+)", game_id)
    assert match is not None
    round_number, group_number, deal_text, rotation = match.groups()
    lines = []
    totals = [0, 0, 0, 0]
    for index, round_scores in enumerate(scores):
        totals = [t + s for t, s in zip(totals, round_scores, strict=True)]
        last = index == len(scores) - 1
        record: Record = {
            "game": game_id, "block": game_id.rsplit("-p", 1)[0], "schedule_round": int(round_number),
            "group": int(group_number), "deal_set": int(deal_text), "rotation": int(rotation),
            "seats": list(seats), "deal": f"{deal_set}.{index + 1}.0", "round": index + 1, "dealer": 3,
            "calls": [3, 3, 3, 3], "tricks_won": [4, 3, 3, 3], "scores": list(round_scores), "totals": list(totals),
            "faults": list(faults) if index == 0 else [], "final": last and final,
        }
        if last and final:
            record["places"] = list(places(totals))
        lines.append(typed(record, index + 1))
    return lines


def duplicate_block(bots: Sequence[str], skill: dict[str, int], round_number: int = 1,
                    deal_set: int = 1) -> list[RoundRecord]:
    """One deal set in its four cyclic rotations: every bot holds every seat's hand once."""
    out = []
    for rotation in range(4):
        seats = [bots[(seat - rotation) % 4] for seat in range(4)]
        scores = [[HAND_VALUE[seat] + skill[seats[seat]] for seat in range(4)]]
        out += game(f"r{round_number}-g1-d{deal_set}-p{rotation}", seats, scores, deal_set=deal_set)
    return out


SKILL = {"ace": 12, "bea": 4, "cal": 0, "dot": -8}


def by_bot(rows: Sequence[Any]) -> dict[str, Any]:
    return {row.bot: row for row in rows}


def test_duplicate_score_cancels_the_cards_and_sums_to_zero() -> None:
    records = duplicate_block(list(SKILL), SKILL) + duplicate_block(list(SKILL), SKILL, round_number=2, deal_set=2)
    rows = tally(records).standings()
    assert [row.bot for row in rows] == ["ace", "bea", "cal", "dot"]
    assert sum(row.dup_per_game for row in rows) == pytest.approx(0.0)
    for bot, row in by_bot(rows).items():
        others = [v for b, v in SKILL.items() if b != bot]
        # The hand values cancel: only the bot's edge over the others who held the same cards is left.
        assert row.dup_per_game == pytest.approx(SKILL[bot] - sum(others) / 3)
        assert row.games == 8 and row.rounds == 8 and row.blocks == 2
        assert row.mean_total == pytest.approx(sum(HAND_VALUE) / 4 + SKILL[bot])


def test_matchpoints_rank_the_results_on_each_hand() -> None:
    rows = by_bot(tally(duplicate_block(list(SKILL), SKILL)).standings())
    assert [rows[b].matchpoint_pct for b in SKILL] == pytest.approx([100.0, 200 / 3, 100 / 3, 0.0])


def test_raw_totals_without_rotation_reward_the_lucky_seat() -> None:
    # One rotation only: the bot on the best hand leads on totals, but duplicate scoring has no
    # other result on the same hand to compare with, so it says nothing (no number, not 0).
    records = game("r1-g1-d1-p0", ["dot", "ace", "bea", "cal"],
                   [[HAND_VALUE[s] + SKILL[b] for s, b in enumerate(["dot", "ace", "bea", "cal"])]])
    rows = by_bot(tally(records).standings())
    assert rows["dot"].mean_total > rows["ace"].mean_total
    assert all(math.isnan(row.dup_per_game) and row.dup_games == 0 for row in rows.values())


@pytest.mark.parametrize(("totals", "points"), [
    ([50, 50, 10, 0], [2.5, 2.5, 1.0, 0.0]),
    ([50, 20, 20, 0], [3.0, 1.5, 1.5, 0.0]),
    ([50, 20, 0, 0], [3.0, 2.0, 0.5, 0.5]),
    ([5, 5, 5, 0], [2.0, 2.0, 2.0, 0.0]),
    ([7, 7, 7, 7], [1.5, 1.5, 1.5, 1.5]),
    ([1, 2, 3, 4], [0.0, 1.0, 2.0, 3.0]),
])
def test_tied_places_share_their_points(totals: list[int], points: list[float]) -> None:
    seats = ["w", "x", "y", "z"]
    rows = by_bot(tally(game("r1-g1-d1-p0", seats, [totals])).standings())
    assert [rows[b].place_points for b in seats] == points
    assert sum(points) == 6.0


def test_house_bots_are_sorted_last_and_unranked() -> None:
    skill = {"house-1": 50, "ace": 12, "bea": 4, "cal": 0}
    rows = tally(duplicate_block(list(skill), skill)).standings(house=["house-1"])
    assert [row.bot for row in rows] == ["ace", "bea", "cal", "house-1"]
    assert rows[-1].house and rows[-1].dup_per_game > rows[0].dup_per_game
    text = render_standings(rows, Rules.profile(), "table")
    table = text.split("\n\n")[0].splitlines()
    # The house bot is listed apart; one deal set tells the others apart in no order: each could be 1st to 3rd.
    assert [line.split()[0] for line in table[2:]] == ["1-3", "1-3", "1-3"]
    assert [row.rank for row in rows] == [1, 2, 3, None]
    assert any(line.split()[:3] == ["-", "house-1", "(house)"] for line in text.splitlines())


def test_unfinished_games_do_not_count() -> None:
    records = duplicate_block(list(SKILL), SKILL)
    records += game("r2-g1-d2-p0", list(SKILL), [[100, 0, 0, 0]], deal_set=2, final=False)
    rows = by_bot(tally(records).standings())
    assert rows["ace"].games == 4
    assert rows["ace"].mean_total == pytest.approx(30 / 4 + 12 - 15 / 4 + 0)  # unchanged by the unfinished game


def test_faults_are_counted_by_kind() -> None:
    faults = [{"seat": 1, "kind": "late"}, {"seat": 1, "kind": "crash"}, {"seat": 1, "kind": "late"}]
    records = game("r1-g1-d1-p0", ["w", "x", "y", "z"], [[1, 2, 3, 4], [1, 2, 3, 4]], faults=faults)
    rows = by_bot(tally(records).standings())
    assert rows["x"].faults == 3 and rows["x"].faults_by_kind == {"late": 2, "crash": 1}
    assert rows["w"].faults == 0 and rows["w"].faults_by_kind == {}


def test_every_rendering_lists_every_bot() -> None:
    rows = tally(duplicate_block(list(SKILL), SKILL)).standings()
    rules = Rules.profile()
    for fmt in ("table", "markdown", "csv"):
        text = render_standings(rows, rules, fmt)
        assert all(bot in text for bot in SKILL)
    data = json.loads(render_standings(rows, rules, "json"))["standings"]
    assert [row["bot"] for row in data] == list(SKILL)
    assert data[0]["dup_low"] is None or isinstance(data[0]["dup_low"], float)  # nan is written as null


def test_dy_scores_are_points_not_tenths() -> None:
    rows = tally(duplicate_block(list(SKILL), SKILL)).standings()
    dy = render_standings(rows, Rules.profile("dy"), "table").splitlines()[2]
    nepali = render_standings(rows, Rules.profile(), "table").splitlines()[2]
    assert dy.split()[2] == "+13.33"  # ace: 12 - (4 + 0 - 8) / 3, in DY points
    assert nepali.split()[2] == "+1.33"  # the same number read as tenths of a point
