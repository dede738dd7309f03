"""The fair-play reports: the order of play that makes a bot's first game on a deal set a random one, the memory
test that compares it with the later ones, and the pair report (docs/statistics.md, "Fair play")."""

from __future__ import annotations

import csv
import io
import json
import math
import random
import shutil
from pathlib import Path

import pytest

from arena.core.rules import Rules
from arena.event.plan.schedule import Block, play_order
from arena.event.play.dispatcher import BlockState, Dispatcher
from arena.rating.fairplay import memory_text
from arena.rating.report import read_folder, render_report
from arena.rating.standing import MEMORY_LEVEL, MemoryTest
from benchmarks.planted_bots import RememberingBot
from tests.helpers.runs import records, run, tournament_text, write

GOLDEN = Path(__file__).resolve().parent / "golden"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"


def _block(round_number: int, group: int, bots: tuple[str, str, str, str]) -> Block:
    return Block(round_number, group, round_number, bots, 3)


def _seat(bot: str, state: BlockState) -> str:
    return bot


def test_a_bot_plays_the_games_of_a_deal_set_one_after_another_in_the_drawn_order() -> None:
    # Bots that can take any number of tables: before, all four rotations of a block started at once, in rotation
    # order, so a bot met the deal set in four games at the same time and its first game was always rotation 0.
    dispatcher: Dispatcher[str] = Dispatcher("cyclic", seed=11)
    block = _block(1, 1, ("a", "b", "c", "d"))
    dispatcher.add(block)
    order = play_order(11, 1, 1, block.order, 4)
    played = []
    for _ in range(4):
        picked = dispatcher.pick(8, _seat, lambda seat: None)
        assert len(picked) == 1  # the others wait for this one to be recorded
        played.append(picked[0][0].rotation)
        dispatcher.finished(picked[0][0])
    assert played == list(order.rotations)
    # The drawn orders differ from block to block and are not the rotations' own.
    orders = {play_order(seed, 1, 1, block.order, 4).rotations for seed in range(40)}
    assert len(orders) > 10


def test_a_game_waiting_for_an_absent_bot_lets_the_next_go_first() -> None:
    dispatcher: Dispatcher[str] = Dispatcher("cyclic", seed=3)
    bots = ("a", "b", "c", "d", "ghost")
    for group, members in enumerate([m for m in __import__("itertools").combinations(bots, 4)], start=1):
        dispatcher.add(_block(1, group, (members[0], members[1], members[2], members[3])))
    done = 0
    while True:
        picked = dispatcher.pick(8, lambda bot, state: None if bot == "ghost" else bot, lambda seat: None)
        if not picked:
            break
        for game, _ in picked:
            assert "ghost" not in game.seats
            dispatcher.finished(game)
            done += 1
    assert done == 4  # every game without the ghost, though the ghost's blocks come first for some bots
    assert dispatcher.refused_bots == {"ghost"}


def test_games_of_a_lane_follow_each_other_within_one_pick_and_stop_at_the_first_that_must_wait() -> None:
    dispatcher: Dispatcher[str] = Dispatcher("cyclic", seed=5)
    first, second = _block(1, 1, ("a", "b", "c", "d")), _block(2, 1, ("a", "b", "c", "d"))
    dispatcher.add(first)
    dispatcher.add(second)
    picked = dispatcher.pick(6, _seat, lambda seat: None, lane=lambda state: True)
    # Played one after another as returned: the four games of round 1 in their drawn order, then round 2's.
    assert [(g.round, g.rotation) for g, _ in picked] == (
        [(1, r) for r in play_order(5, 1, 1, first.order, 4).rotations]
        + [(2, r) for r in play_order(5, 2, 2, second.order, 4).rotations[:2]])
    # Round 2's next game waits for its two games still out; nothing else is taken out of order meanwhile.
    assert dispatcher.pick(6, _seat, lambda seat: None, lane=lambda state: True) == []
    for game, _ in picked:
        dispatcher.finished(game)
    assert len(dispatcher.pick(6, _seat, lambda seat: None, lane=lambda state: True)) == 2


def test_the_memory_test_flags_a_bot_that_remembers_deals_and_passes_the_honest_ones(tmp_path: Path) -> None:
    # The planted bot plays like the heuristic bot but calls what the earlier holder of its hand took; three
    # heuristic bots play beside it. Seeded: the same records every time.
    RememberingBot.forget()
    text = tournament_text(("cheat", "h1", "h2", "h3"), seed=4, deal_sets=24, concurrency=4, spec=HEURISTIC,
                           cheat="benchmarks.planted_bots:RememberingBot")
    run(write(tmp_path / "t.toml", text), tmp_path / "out")
    report = read_folder(tmp_path / "out")
    rows = {row.bot: row for row in report.standings}
    cheat = rows["cheat"].memory_test
    assert cheat.flagged and cheat.p < MEMORY_LEVEL and cheat.difference > 0 and cheat.low > 0
    assert cheat.deal_sets == 24 and cheat.first_games == 24 and cheat.later_games == 72
    assert not any(rows[bot].memory_test.flagged for bot in ("h1", "h2", "h3"))
    # Each bot's games on a deal set are in the records one after another, in the drawn order.
    finals = [r for r in records(tmp_path / "out") if r["final"]]
    for number in range(1, 25):
        rotations = [r["rotation"] for r in finals if r["schedule_round"] == number]
        assert rotations == list(play_order(4, number, number, finals[0]["seats"], 4).rotations)
    data = json.loads(render_report(report, "json"))
    line = next(row for row in data["standings"] if row["bot"] == "cheat")
    assert set(line["memory_test"]) == {"first", "later", "difference", "interval", "p", "flagged"}
    assert line["memory_test"]["flagged"] is True and line["memory_test"]["interval"][0] > 0
    text_report = " ".join(render_report(report, "table", wide=False).split())  # wrapped at 100 characters
    assert "cheat did better on deals it had seen before: +" in text_report
    assert "a bot that remembers deals would; see docs/statistics.md" in text_report
    table = list(csv.DictReader(io.StringIO(render_report(report, "csv"))))
    flagged = {row["bot"]: row["memory_flagged"] for row in table}
    assert flagged == {"cheat": "True", "h1": "False", "h2": "False", "h3": "False"}


def test_a_folder_played_before_the_order_was_drawn_has_no_memory_test(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    shutil.copytree(GOLDEN / "format-round-robin", folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    del manifest["play_order"]
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    data = json.loads(render_report(read_folder(folder), "json"))
    for row in data["standings"]:
        assert row["memory_test"] == {"first": None, "later": None, "difference": None, "interval": None,
                                      "p": None, "flagged": False}


def test_a_bot_that_saw_no_deal_set_twice_has_first_games_only_and_is_not_flagged() -> None:
    test = MemoryTest(first=12.0, first_games=3.0)
    assert not test.flagged and test.to_dict(10) == {"first": 1.2, "later": None, "difference": None,
                                                     "interval": None, "p": None, "flagged": False}
    assert "no later games" in memory_text("x", test, Rules.profile())
    assert math.isnan(MemoryTest().p)


def _feeding_pair(folder: Path, deal_sets: int) -> Path:
    """A 5-bot round robin in ``folder``: a pair that throws tricks to each other (each lets the other keep a trick
    it is winning, ducks before it, and takes from the others the tricks it lost) and three heuristic bots."""
    text = tournament_text(
        ("friend", "feeder", "h1", "h2", "h3"), seed=303, deal_sets=deal_sets, concurrency=2, spec=HEURISTIC,
        friend="benchmarks.planted_bots:FeedingBot", feeder="benchmarks.planted_bots:FeedingBot")
    text = text.replace('name = "friend"\n', 'name = "friend"\noptions = { friend = "feeder" }\n')
    text = text.replace('name = "feeder"\n', 'name = "feeder"\noptions = { friend = "friend" }\n')
    run(write(folder / "t.toml", text), folder / "out", timeout=900)
    return folder / "out"


@pytest.mark.slow
def test_the_pair_report_compares_every_pair_of_a_short_event_with_and_without_each_other(tmp_path: Path) -> None:
    # The short form of the planted pair below (make test runs it; the flag itself needs 120 deal sets): every
    # ordered pair is compared, in blocks with and without the other, in the report and in standings.json.
    out = _feeding_pair(tmp_path, 6)
    report = read_folder(out)
    assert len(report.pairs) == 20 and all(e.deal_sets == 6 and e.games_with and e.games_without
                                           for e in report.pairs)
    fed = next(e for e in report.pairs if (e.bot, e.other) == ("friend", "feeder"))
    assert fed.low <= fed.effect <= fed.high and 0 <= fed.p <= 1
    written = json.loads((out / "standings.json").read_text(encoding="utf-8"))["pairs"]
    assert {(e["bot"], e["other"]) for e in written} == {(e.bot, e.other) for e in report.pairs}
    assert render_report(report, "table").count("Pair report (20 ordered pairs compared") == 1


@pytest.mark.slow
@pytest.mark.soak
def test_the_pair_report_flags_two_bots_that_throw_tricks_to_each_other(tmp_path: Path) -> None:
    report = read_folder(_feeding_pair(tmp_path, 120))
    flagged = {(e.bot, e.other) for e in report.pairs if e.flagged}
    assert flagged and flagged <= {("friend", "feeder"), ("feeder", "friend")}
    said = render_report(report, "table")
    assert "did better against its other tablemates when" in said


def test_a_short_version_of_the_benchmark_flags_honest_bots_about_as_often_as_it_says(tmp_path: Path) -> None:
    # benchmarks/memory_test.py in small: real games of the sample bots, their deal sets resampled, each with an
    # order of play drawn afresh; the benchmark runs 1,000 fields of 30 deal sets on 400 real deal sets.
    from benchmarks.memory_test import HONEST_FOUR, deal_sets_of, honest_fields, play

    corpus = deal_sets_of(play(HONEST_FOUR, 30, 101, tmp_path / "four"), 101)
    hits, tests = honest_fields(corpus, 100, 20, random.Random(7), redraw=True)
    assert tests == 400 and hits / tests < 0.03  # 1 % expected; a test that ignored the order would flag far more
