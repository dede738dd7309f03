"""The standings pass over a whole field: a datum that leaves out the bot's own results, intervals
clustered by deal set that cover the truth, one streaming read whose memory does not grow with the
rounds, the same numbers whatever order the games were recorded in, and the exports (units, the
head-to-head file for any field, the winner under ``master``)."""

from __future__ import annotations

import asyncio
import csv
import io
import itertools
import json
import random
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.core.cards import Hand, Suit
from arena.core.game import places
from arena.core.rules import Rules
from arena.errors import RecordsError
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.rating.ratings import tally
from arena.rating.report import HEAD_TO_HEAD_FILE, folder_report, write_standings
from arena.rating.tables import render_standings
from arena.records.format import GameRecords, RoundRecord, TornLine, iter_records
from benchmarks.coverage import SKEWED, STRONG, Model, coverage_counts
from benchmarks.standings_memory import synthesise

RULES = Rules.profile()
HAND_VALUE = (30, -20, 10, -5)


def record(game: str, seats: Sequence[str], round_number: int, scores: Sequence[int], totals: Sequence[int],
           final: bool) -> RoundRecord:
    """One round of ``r<R>-g<G>-d<D>-p<P>``, with every field a reader needs."""
    number, group, deal_set, rotation = (int(part[1:]) for part in game.split("-"))
    return RoundRecord(
        line=0, version=2, tournament="t", game=game, block=game.rsplit("-p", 1)[0], schedule_round=number,
        group=group, deal_set=deal_set, rotation=rotation, seed=1, deals="seed", rules=RULES, seats=tuple(seats),
        first_dealer=3, deal=f"{deal_set}.{round_number}.0", round=round_number, attempt=0,
        dealer=(2 + round_number) % 4, trump=Suit.SPADES, hands=(Hand(),) * 4, calls=(3, 3, 3, 3), tricks=(),
        tricks_won=(4, 3, 3, 3), scores=tuple(scores), totals=tuple(totals), faults=(), redeals=(),
        fallbacks=(0, 0, 0, 0), final=final, places=places(totals) if final else (), versions=("", "", "", ""),
        think_ms=(),
    )


def field(groups: Sequence[Sequence[str]], skill: dict[str, int], deal_sets: int = 2) -> list[GameRecords]:
    """Every group plays every deal set in its four cyclic rotations, five rounds a game; a bot scores
    the hand's value plus its skill (no luck beyond the cards, so the truth is exact)."""
    games = []
    for deal_set in range(1, deal_sets + 1):
        for group, order in enumerate(groups, start=1):
            for rotation in range(4):
                seats = [order[(s - rotation) % 4] for s in range(4)]
                totals = [0, 0, 0, 0]
                rounds = []
                for r in range(1, 6):
                    scores = [HAND_VALUE[(s + r + deal_set) % 4] * r + skill[b] for s, b in enumerate(seats)]
                    totals = [t + x for t, x in zip(totals, scores, strict=True)]
                    rounds.append(record(f"r{deal_set}-g{group}-d{deal_set}-p{rotation}", seats, r, scores, totals,
                                         r == 5))
                games.append(GameRecords(tuple(rounds)))
    return games


# -- the datum ------------------------------------------------------------------------------------


def test_six_bots_a_known_edge_is_not_shrunk() -> None:
    # ace is 10 tenths a round better than five equal bots. It holds every hand at 10 tables a round;
    # its datum is the other bots' 50 results, never its own 9 others (which shrank it to 0.85).
    bots = ["ace", "b", "c", "d", "e", "f"]
    skill = {bot: 10 if bot == "ace" else 0 for bot in bots}
    rows = {row.bot: row for row in tally(field(list(itertools.combinations(bots, 4)), skill)).standings()}
    assert rows["ace"].dup_per_game == pytest.approx(50.0)  # 5 rounds x 10, the whole edge
    for bot in bots[1:]:
        assert rows[bot].dup_per_game == pytest.approx(-10.0)  # 0 - 10 / 5 per round, x 5
    assert all(row.games == 80 and row.dup_games == pytest.approx(80) and row.clusters == 2 for row in rows.values())


def test_gauntlet_the_champion_keeps_its_whole_edge() -> None:
    # The champion with every trio of a field of five: it holds each hand at all 10 tables, each
    # field bot at 6. A field bot's datum is every other result on the hand, the champion's 10 among 34.
    others = ["f1", "f2", "f3", "f4", "f5"]
    skill = {"champ": 10, **dict.fromkeys(others, 0)}
    groups = [("champ", *trio) for trio in itertools.combinations(others, 3)]
    rows = {row.bot: row for row in tally(field(groups, skill)).standings()}
    assert rows["champ"].dup_per_game == pytest.approx(50.0)
    for bot in others:
        assert rows[bot].dup_per_game == pytest.approx(5 * (0 - 10 * 10 / 34))


# -- coverage -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bots", "replicates"), [(4, 60), (6, 20)])
@pytest.mark.parametrize("model", [STRONG, SKEWED], ids=["normal", "skewed"])
def test_intervals_cover_the_true_duplicate_score_under_a_strong_interaction(bots: int, replicates: int,
                                                                            model: Model) -> None:
    # A short, seeded version of benchmarks/coverage.py (which runs a thousand tournaments per cell).
    # With blocks taken as independent and the bot's own results in the datum, 6 bots covered about
    # half the time; clustered by deal set, about 95 %.
    covered, total, _ = coverage_counts(bots, replicates, seed=bots, deal_sets=6, model=model)
    assert total == bots * replicates
    assert covered / total >= 0.88, covered / total


# -- one streaming pass ---------------------------------------------------------------------------

CONFIG = """
[tournament]
name = "pass"
seed = 9
deal_sets = 3
concurrency = 4
""" + "".join(f'\n[[bots]]\nname = "{name}"\npython = "sample_bots.random_bot:RandomBot"\nseed = {seed}\n'
              for seed, name in enumerate(("r1", "r2", "r3", "r4", "r5"), start=1))


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five random bots, every group of four, three deal sets (100 record lines a deal set)."""
    folder = tmp_path_factory.mktemp("pass") / "results"
    asyncio.run(asyncio.wait_for(Tournament(parse_config(CONFIG), folder).run(), 120))
    return folder


def _interleaved(lines: list[str], key: str, seed: int) -> list[str]:
    """The lines with their groups (by ``key``: a game, or a deal set) interleaved at random, each group's lines in
    their order."""
    groups: dict[object, list[str]] = {}
    for line in lines:
        groups.setdefault(json.loads(line)[key], []).append(line)
    rng = random.Random(seed)
    queues = [list(group) for group in groups.values()]
    rng.shuffle(queues)
    shuffled: list[str] = []
    while queues:
        queue = rng.choice(queues)
        shuffled.append(queue.pop(0))
        if not queue:
            queues.remove(queue)
    assert shuffled != lines
    return shuffled


def _folder(played: Path, folder: Path, lines: list[str]) -> Path:
    folder.mkdir()
    (folder / "manifest.json").write_text((played / "manifest.json").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_the_order_games_were_recorded_in_changes_nothing(played: Path, tmp_path: Path) -> None:
    lines = (played / "records.jsonl").read_text(encoding="utf-8").splitlines()
    # The deal sets interleaved at random, as concurrent tables and workers record them: each bot's games on a
    # deal set stay in the order it played them (a run never overlaps them), later rounds come before earlier ones.
    folder = _folder(played, tmp_path / "shuffled", _interleaved(lines, "deal_set", 3))
    for fmt in ("json", "table", "csv"):
        assert folder_report(folder, fmt) == folder_report(played, fmt)
    # Games interleaved in any order at all (which no run writes): only the memory test, which reads which of a bot's
    # games on a deal set came first, can change.
    anyhow = json.loads(folder_report(_folder(played, tmp_path / "anyhow", _interleaved(lines, "game", 3)), "json"))
    before = json.loads(folder_report(played, "json"))
    for report in (anyhow, before):
        for row in report["standings"]:
            row.pop("memory_test")
    assert anyhow == before


def test_a_torn_last_line_is_left_out_and_damage_is_an_error(played: Path, tmp_path: Path) -> None:
    lines = (played / "records.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[0][: len(lines[0]) // 2], encoding="utf-8")
    assert len(list(iter_records(path, TornLine.SKIP))) == len(lines)
    path.write_text("\n".join(lines[:3]) + "\n{not json\n" + "\n".join(lines[3:]) + "\n", encoding="utf-8")
    with pytest.raises(RecordsError, match="line 4: not a JSON record"):
        list(iter_records(path, TornLine.SKIP))


def _peak(folder: Path) -> int:
    tracemalloc.start()
    try:
        write_standings(folder)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_does_not_grow_with_the_rounds(played: Path, tmp_path: Path) -> None:
    # The standings pass holds a round's games until the round is complete, then only running sums:
    # four times the rounds, about the same peak (the records of 8,000 rounds take 13 MB on disk).
    small, large = tmp_path / "small", tmp_path / "large"
    assert synthesise(played, small, 2000) == 2000
    assert synthesise(played, large, 8000) == 8000
    _peak(small)  # the first pass warms caches (imports, the ratings model) that later passes reuse
    peaks = _peak(small), _peak(large)
    # Held records would cost about 17 KB a round: 6,000 more rounds, about 100 MB more. A few
    # hundred KB either way is the rounds in flight and the allocator.
    assert peaks[1] - peaks[0] < 1_000_000, peaks
    assert peaks[1] < 8_000_000, peaks
    data = json.loads((large / "standings.json").read_text(encoding="utf-8"))
    assert all(row["games"] == 8000 // 5 // 5 * 4 for row in data["standings"])
    assert data["intervals"]["clusters"] == 80


# -- exports ----------------------------------------------------------------------------------------


def test_json_and_csv_are_in_points_and_say_so(played: Path) -> None:
    data = json.loads(folder_report(played, "json"))
    table = list(csv.DictReader(io.StringIO(folder_report(played, "csv"))))
    text = folder_report(played, "table").splitlines()
    assert data["unit"] == "points" and {row["unit"] for row in table} == {"points"}
    for row, line in zip(data["standings"], table, strict=True):
        shown = next(x for x in text if x.split()[1:2] == [row["bot"]] and not x.startswith("Winner"))
        assert shown.split()[2] == f"{row['dup_per_game']:+.2f}"  # the same number as the text: points
        assert float(line["mean_total"]) == pytest.approx(row["mean_total"])
    for pair in data["head_to_head"]:
        assert pair["unit"] == "points" and pair["diff"]["clusters"] == 3 and pair["los_df"] == 2


def test_the_head_to_head_file_holds_every_pair_whatever_the_field(tmp_path: Path) -> None:
    names = [f"p{i:02}" for i in range(13)]
    text = ('[tournament]\nname = "big"\nseed = 2\ndeal_sets = 1\nconcurrency = 4\n'
            + "".join(f'\n[[bots]]\nname = "{name}"\npython = "sample_bots.random_bot:RandomBot"\nseed = {i}\n'
                      for i, name in enumerate(names, start=1)))
    folder = tmp_path / "big"
    asyncio.run(asyncio.wait_for(Tournament(parse_config(text), folder).run(), 120))
    write_standings(folder)
    report = folder_report(folder, "table")
    assert "Head to head: 16 bots are too many for a table here" in report and HEAD_TO_HEAD_FILE in report
    pairs = list(csv.DictReader(io.StringIO((folder / HEAD_TO_HEAD_FILE).read_text(encoding="utf-8"))))
    # 16 bots (13 and 3 house bots) in 4 tables: 6 pairs a table, both ways.
    assert len(pairs) == 4 * 6 * 2 and {"a", "b", "diff", "los", "elo", "pairs_ww"} <= set(pairs[0])
    assert len(json.loads(folder_report(folder, "json"))["head_to_head"]) == 48


def test_master_names_the_winner_and_the_runner_up() -> None:
    bots = ["ace", "bea", "cal", "dot"]
    rows = tally(field([bots], {"ace": 2, "bea": 9, "cal": 0, "dot": 5})).standings()
    master = Rules.profile("master")
    text = render_standings(rows, master)
    assert "Winner: bea; runner-up: dot (the first two ranked bots" in text
    assert json.loads(render_standings(rows, master, "json"))["result"]["winner"] == "bea"
    assert json.loads(render_standings(rows, master, "json"))["result"]["runner_up"] == "dot"
    assert "Winner" not in render_standings(rows, RULES)
    assert json.loads(render_standings(rows, RULES, "json"))["result"] is None
