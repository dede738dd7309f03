"""Standings that say who really played (status, reason, the share of decisions made by fallback,
withdrawn and disqualified bots listed apart), and the live judge of a run: its standings files
and its sequential test over complete blocks in plan order."""

from __future__ import annotations

import csv
import io
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.core.game import places
from arena.core.rules import Rules
from arena.event.plan.manifest import BotStatus, Manifest
from arena.event.plan.plan import Plan
from arena.event.plan.schedule import Assignment, Block
from arena.event.setup.config import TournamentConfig, parse_config
from arena.rating.live import LiveJudge
from arena.rating.ratings import tally
from arena.rating.report import STANDINGS_FILES, folder_report, write_standings
from arena.rating.standing import NOT_RANKED_TITLE, Standing
from arena.rating.tables import render_standings
from arena.records.format import GameRecord, GameRecords, RoundRecord, parse_record
from arena.records.store import ResultsStore

Record = dict[str, Any]
RULES = Rules.profile()
HAND_VALUE = (30, -20, 10, -5)
SKILL = {"ace": 12, "bea": 4, "cal": 0, "dot": -8}


def record_data(game_id: str, seats: Sequence[str], score: Sequence[int], *, fallbacks: Sequence[int] = (0, 0, 0, 0),
                faults: Sequence[Record] = (), redeals: int = 0) -> Record:
    """The one round of a one-round game, as a line of ``records.jsonl``."""
    round_number, group, deal_set, rotation = (int(part[1:]) for part in game_id.split("-"))
    return {
        "v": 2, "tournament": "t", "game": game_id, "block": game_id.rsplit("-p", 1)[0],
        "schedule_round": round_number, "group": group, "deal_set": deal_set, "rotation": rotation, "seed": 1,
        "deals": "seed", "rules": RULES.to_dict(), "seats": list(seats), "first_dealer": 3,
        "deal": f"{deal_set}.1.{redeals}", "round": 1, "attempt": redeals, "dealer": 3, "trump": "S",
        "hands": ["", "", "", ""], "calls": [3, 3, 3, 3], "tricks": [], "tricks_won": [4, 3, 3, 3],
        "scores": list(score), "totals": list(score),
        "faults": [{"detail": "", "round": 1, "trick": None, "fallback": None, **f} for f in faults],
        "redeals": [{"attempt": n, "reason": "no spade"} for n in range(redeals)],
        "fallbacks": list(fallbacks), "final": True, "places": list(places(score)), "versions": ["", "", "", ""],
    }


def block_data(bots: Sequence[str], round_number: int = 1, **extra: Any) -> list[Record]:
    """One deal set in its four cyclic rotations; ``extra`` goes to every game."""
    out = []
    for rotation in range(4):
        seats = [bots[(seat - rotation) % 4] for seat in range(4)]
        score = [HAND_VALUE[seat] + SKILL[seats[seat]] for seat in range(4)]
        out.append(record_data(f"r{round_number}-g1-d{round_number}-p{rotation}", seats, score, **extra))
    return out


def typed(lines: Sequence[Record]) -> list[RoundRecord]:
    return [parse_record(data, number) for number, data in enumerate(lines, start=1)]


def field() -> list[RoundRecord]:
    return typed(block_data(list(SKILL)) + block_data(list(SKILL), round_number=2))


STATUSES = {
    "ace": BotStatus("disqualified", "6 faulty decisions (the limit is 5)"),
    "dot": BotStatus("withdrawn", "removed from the configuration"),
    "bea": BotStatus("absent", "never connected in 31 s"),
}


def by_bot(rows: Sequence[Standing]) -> dict[str, Standing]:
    return {row.bot: row for row in rows}


# -- status and rank --------------------------------------------------------------------------------


def test_withdrawn_and_disqualified_bots_are_listed_apart_without_a_rank() -> None:
    rows = tally(field()).standings(statuses=STATUSES)
    # ace is the best bot of the field, but disqualified: it follows the ranking, unranked.
    assert [(r.bot, r.rank, r.status) for r in rows] == [
        ("bea", 1, "absent"), ("cal", 2, "playing"), ("ace", None, "disqualified"), ("dot", None, "withdrawn"),
    ]
    rows_by_bot = by_bot(rows)
    assert rows_by_bot["ace"].reason == "6 faulty decisions (the limit is 5)"
    assert rows_by_bot["cal"].reason == ""
    # Their numbers are unchanged: a status takes a bot out of the ranking, not out of the records.
    plain = by_bot(tally(field()).standings())
    for bot, row in rows_by_bot.items():
        assert (row.dup_per_game, row.games, row.mu) == (plain[bot].dup_per_game, plain[bot].games, plain[bot].mu)
    assert [r.rank for r in plain.values()] == [1, 2, 3, 4] and all(r.status == "playing" for r in plain.values())


def test_house_bots_stay_after_the_ranked_bots_and_before_the_bots_apart() -> None:
    rows = tally(field()).standings(house=["bea"], statuses={"ace": STATUSES["ace"]})
    assert [(r.bot, r.rank) for r in rows] == [("cal", 1), ("dot", 2), ("bea", None), ("ace", None)]
    assert rows[2].house and rows[2].status == "playing"


def test_a_bot_taken_out_before_finishing_a_game_still_has_its_line() -> None:
    statuses = {"eve": BotStatus("withdrawn", "absent: never connected in 30 s"),
                "gus": BotStatus("absent", "never connected in 30 s")}
    rows = tally(field()).standings(statuses=statuses)
    assert [r.bot for r in rows] == ["ace", "bea", "cal", "dot", "eve", "gus"]  # both listed apart, unranked
    eve, gus = rows[-2:]
    assert eve.games == 0 and eve.rank is None and eve.status == "withdrawn"
    assert gus.games == 0 and gus.rank is None and gus.status == "absent"
    text = render_standings(rows, RULES, "table")
    tables = text.rsplit("\n\n", 1)[0]  # the notes follow the tables
    line = tables.splitlines()[-2]
    assert line.split()[:4] == ["-", "eve", "-", "[-,"] and "withdrawn: absent: never connected in 30 s" in line
    assert "absent: never connected in 30 s" in tables.splitlines()[-1]
    assert "nan" not in text
    data = json.loads(render_standings(rows, RULES, "json"), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    data = data["standings"]
    assert data[-2]["games"] == 0 and data[-2]["dup_per_game"] is None and data[-2]["fallback_pct"] is None


# -- the fallback share -------------------------------------------------------------------------------


def test_the_fallback_share_counts_decisions_made_for_the_bot() -> None:
    # cal's first game: the fallback player took all its 14 decisions (an absent bot); its second:
    # 3 of 15 (one redeal adds a call). Others never.
    lines = block_data(list(SKILL))
    cal_games = [data for data in lines if "cal" in data["seats"]]
    first, second = cal_games[0], cal_games[1]
    first["fallbacks"][first["seats"].index("cal")] = 14
    first["faults"] = [{"seat": first["seats"].index("cal"), "kind": "absent", "detail": "cal is absent",
                        "round": 1, "trick": None, "fallback": None}]
    second.update(record_data(second["game"], second["seats"], second["scores"], redeals=1,
                              fallbacks=[3 if bot == "cal" else 0 for bot in second["seats"]]))
    rows = by_bot(tally(typed(lines)).standings())
    cal = rows["cal"]
    assert (cal.decisions, cal.fallbacks) == (14 * 3 + 15, 17)
    assert cal.fallback_pct == pytest.approx(100 * 17 / 57)
    assert cal.faults_by_kind == {"absent": 1}
    assert rows["ace"].decisions == 14 * 3 + 15 and rows["ace"].fallback_pct == 0.0
    # Ranked, and the share is there for all to see.
    assert cal.rank is not None
    table = render_standings(list(rows.values()), RULES, "table")
    header = table.splitlines()[0]
    line = next(x for x in table.splitlines() if x.split()[1:2] == ["cal"])
    assert "fallback %" in header and line.split()[-4:] == ["29.8", "absent", "1", "playing"]


def test_version_1_records_have_no_fallbacks() -> None:
    lines = block_data(list(SKILL))
    for data in lines:
        data["v"] = 1
        del data["fallbacks"], data["versions"]
    rows = tally(typed(lines)).standings()
    assert all(r.fallbacks == 0 and r.fallback_pct == 0.0 and r.decisions == 4 * 14 for r in rows)


# -- every format ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_text_has_a_section_of_its_own_for_the_bots_not_ranked(fmt: str) -> None:
    rows = tally(field()).standings(statuses=STATUSES)
    text = render_standings(rows, RULES, fmt)
    ranking, apart = text.split(NOT_RANKED_TITLE)
    assert "Not ranked: house bots filling tables, withdrawn or disqualified bots, and bots that did not play" in text
    assert not re.search(r"\b(ace|dot)\b", ranking)
    assert re.search(r"^\|? *1 *\|? *bea ", ranking, re.MULTILINE)
    assert re.search(r"absent: never connected in 31 s", ranking)
    for bot in ("ace", "dot"):
        line = next(x for x in apart.splitlines() if f" {bot} " in x)
        assert re.match(r"^\|? *- *\|? *" + bot, line), line  # no rank number
    assert "disqualified: 6 faulty decisions (the limit is 5)" in apart
    assert "withdrawn: removed from the configuration" in apart
    assert apart.count("fallback %") == 1 and ranking.count("fallback %") == 1  # the same columns
    if fmt == "markdown":
        assert f"\n{NOT_RANKED_TITLE}\n\n|" in text


def test_json_and_csv_carry_rank_status_reason_and_the_fallback_share() -> None:
    rows = tally(field()).standings(statuses=STATUSES)
    data = json.loads(render_standings(rows, RULES, "json"))["standings"]
    assert [(d["bot"], d["rank"], d["status"]) for d in data] == [
        ("bea", 1, "absent"), ("cal", 2, "playing"), ("ace", None, "disqualified"), ("dot", None, "withdrawn"),
    ]
    assert data[2]["reason"] == "6 faulty decisions (the limit is 5)"
    assert {"decisions", "fallbacks", "fallback_pct"} <= set(data[0])
    table = list(csv.DictReader(io.StringIO(render_standings(rows, RULES, "csv"))))
    assert [(r["bot"], r["rank"], r["status"], r["reason"]) for r in table] == [
        (d["bot"], "" if d["rank"] is None else str(d["rank"]), d["status"], d["reason"]) for d in data
    ]
    assert [float(r["fallback_pct"]) for r in table] == [0.0] * 4


# -- the results folder and the live judge ------------------------------------------------------------

BOTS = "".join(f'\n[[bots]]\nname = "{name}"\npython = "sample_bots.random_bot:RandomBot"\n'
               for name in ("A", "B", "O1", "O2"))


def config(fmt: str = "sprt", deal_sets: int = 12) -> TournamentConfig:
    """A against B with two opponents; under ``sprt``, delta1 = 1 point per game and a burn-in of 10 blocks."""
    test = 'delta1 = 1.0\nburn_in = 10\nmethod = "alt2"\n' if fmt == "sprt" else ""
    return parse_config(f'[tournament]\nname = "t"\nseed = 1\ndeal_sets = {deal_sets}\nformat = "{fmt}"\n'
                        f'[{fmt}]\na = "A"\nb = "B"\nopponents = ["O1", "O2"]\n{test}' + BOTS)


def plan_blocks(count: int) -> list[Block]:
    return [Block(n, 1, n, ("A", "O1", "B", "O2"), 3) for n in range(1, count + 1)]


def folder_with_manifest(tmp_path: Path, cfg: TournamentConfig, blocks: Sequence[Block],
                         statuses: dict[str, BotStatus] | None = None) -> Path:
    folder = tmp_path / "results"
    store = ResultsStore(folder)
    store.write_manifest(Manifest(
        tournament="t", config=cfg.to_dict(), identity="0",
        plan=Plan("cyclic", len(blocks), False, cfg.format == "sprt", list(blocks), []), house=[],
        statuses=statuses or {},
    ).to_dict())
    return folder


def game_record(game: Assignment, a_minus_b: int) -> GameRecord:
    """A finished game in which A scored ``a_minus_b`` more than B (only the totals matter here)."""
    totals = tuple(a_minus_b if bot == "A" else 0 if bot == "B" else -50 for bot in game.seats)
    return GameRecord(
        table_id="t0", game=game.id, deal_set=game.deal_set, rules=RULES, seats=game.seats,
        first_dealer=game.first_dealer, rounds=[], redeals=[], faults=[], totals=totals, places=places(totals),
        think_ms=[0.0] * 4, decisions=[0] * 4,
    )


def differences(blocks: Sequence[Block], seed: int, mean: float = 20) -> dict[str, int]:
    """A's total minus B's for every game: A ``mean`` tenths better per game, give or take 4 points."""
    rng = random.Random(seed)
    return {game.id: round(rng.gauss(mean, 40)) for block in blocks for game in block.games("cyclic")}


def test_the_verdict_does_not_depend_on_which_games_finished_first(tmp_path: Path) -> None:
    cfg = config()
    blocks = plan_blocks(12)
    folder = folder_with_manifest(tmp_path, cfg, blocks)
    diffs = differences(blocks, seed=4)
    games = [game for block in blocks for game in block.games("cyclic")]
    shuffled = random.Random(9).sample(games, len(games))

    def judge_of(done: Sequence[Assignment]) -> LiveJudge:
        judge = LiveJudge(folder, cfg)
        judge.start([])
        for game in done:
            judge.game_done(game, game_record(game, diffs[game.id]))
        return judge

    in_order = judge_of(games)
    final = in_order.sprt_state()
    assert final is not None and final.verdict == "H1" and in_order.decided()
    out_of_order = LiveJudge(folder, cfg)
    out_of_order.start([])
    for count, game in enumerate(shuffled, start=1):
        out_of_order.game_done(game, game_record(game, diffs[game.id]))
        # Always the judge of the same games taken in plan order, and only whole blocks of a prefix.
        same = judge_of([g for g in games if g in shuffled[:count]])
        assert out_of_order.sprt_state() == same.sprt_state()
        assert out_of_order.decided() == same.decided()
    assert out_of_order.sprt_state() == final


def test_blocks_after_a_block_not_complete_wait_for_it(tmp_path: Path) -> None:
    cfg = config()
    blocks = plan_blocks(12)
    folder = folder_with_manifest(tmp_path, cfg, blocks)
    judge = LiveJudge(folder, cfg)
    judge.start([])
    for block in blocks:
        for game in block.games("cyclic")[: 3 if block.round == 3 else 4]:  # block 3 lacks a game
            judge.game_done(game, game_record(game, 400))
    state = judge.sprt_state()
    assert state is not None and state.n == 2 and not judge.decided()  # far too few blocks for a verdict
    last = blocks[2].games("cyclic")[3]
    judge.game_done(last, game_record(last, 400))
    state = judge.sprt_state()
    assert state is not None and state.n == 10 and state.verdict == "H1" and judge.decided()


def test_games_recorded_before_the_run_count_as_if_played_now(tmp_path: Path) -> None:
    cfg = config(deal_sets=10)
    blocks = plan_blocks(10)
    folder = folder_with_manifest(tmp_path, cfg, blocks)
    diffs = differences(blocks, seed=5, mean=5)  # half way between delta0 and delta1: no early verdict
    games = [game for block in blocks for game in block.games("cyclic")]
    before, now = games[::2], games[1::2]
    recorded = [
        GameRecords((parse_record(record_data(game.id, game.seats, game_record(game, diffs[game.id]).totals), 1),))
        for game in before
    ]
    resumed = LiveJudge(folder, cfg)
    resumed.start(recorded)
    whole = LiveJudge(folder, cfg)
    whole.start([])
    for game in now:
        resumed.game_done(game, game_record(game, diffs[game.id]))
    for game in games:
        whole.game_done(game, game_record(game, diffs[game.id]))
    state = resumed.sprt_state()
    assert state is not None and state == whole.sprt_state() and state.n == 10
    assert state.verdict == "no decision" and state.cap == 10  # the cap is the planned blocks
    # The report of the folder reads the same blocks the same way.
    lines = [record_data(g.id, g.seats, game_record(g, diffs[g.id]).totals) for g in games]
    (folder / "records.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report = json.loads(folder_report(folder, "json"))["comparison"]["sprt"]
    assert (report["n"], report["verdict"], report["llr"]) == (state.n, state.verdict, pytest.approx(state.llr))


def test_other_formats_never_decide(tmp_path: Path) -> None:
    cfg = config("head-to-head")
    blocks = plan_blocks(12)
    folder = folder_with_manifest(tmp_path, cfg, blocks)
    judge = LiveJudge(folder, cfg)
    judge.start([])
    for block in blocks:
        for game in block.games("cyclic"):
            judge.game_done(game, game_record(game, 400))
    assert not judge.decided() and judge.sprt_state() is None


def test_the_standings_files_appear_with_the_status(tmp_path: Path) -> None:
    cfg = config("head-to-head")
    statuses = {"ace": STATUSES["ace"], "bea": STATUSES["bea"]}
    folder = folder_with_manifest(tmp_path, cfg, plan_blocks(2), statuses)
    lines = block_data(list(SKILL)) + block_data(list(SKILL), round_number=2)
    (folder / "records.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    judge = LiveJudge(folder, cfg)
    judge.refresh()
    assert sorted(p.name for p in folder.glob("standings.*")) == sorted(STANDINGS_FILES)
    assert not list(folder.glob("*.tmp"))
    for name in ("standings.txt", "standings.md"):
        text = (folder / name).read_text(encoding="utf-8")
        assert NOT_RANKED_TITLE in text and "disqualified: 6 faulty decisions" in text, name
        assert "absent: never connected in 31 s" in text, name
    # The compact table of standings.txt gives the reasons under it; the wide one of standings.md in its rows.
    assert "absent: never connected in 31 s" in (folder / "standings.md").read_text().split(NOT_RANKED_TITLE)[0]
    data = json.loads((folder / "standings.json").read_text(encoding="utf-8"))["standings"]
    assert {d["bot"]: (d["rank"], d["status"]) for d in data} == {
        "bea": (1, "absent"), "cal": (2, "finished"), "dot": (3, "finished"), "ace": (None, "disqualified"),
    }
    table = list(csv.DictReader(io.StringIO((folder / "standings.csv").read_text(encoding="utf-8"))))
    assert [(r["bot"], r["status"]) for r in table] == [(d["bot"], d["status"]) for d in data]
    # Refreshed at most every few seconds, unless forced; the same text as write_standings.
    (folder / "standings.txt").unlink()
    judge.refresh()
    assert not (folder / "standings.txt").exists()
    judge.refresh(force=True)
    text = (folder / "standings.txt").read_text(encoding="utf-8")
    write_standings(folder)
    assert (folder / "standings.txt").read_text(encoding="utf-8") == text
    # The standings first, then (a head-to-head configuration) the comparison of its two bots.
    rows = tally(ResultsStore(folder).games()).standings((), statuses)
    for row in rows:  # every game of the plan is recorded: the event has ended
        row.status = "finished" if row.status == "playing" else row.status
    assert text.startswith(render_standings(rows, RULES, wide=False))
    assert "A vs B: 0 blocks" in text


def test_a_bot_the_fallback_played_for_is_not_ranked() -> None:
    # A student who never connected, under forfeit = "fallback": every decision of theirs was the fallback's.
    lines = block_data(list(SKILL))
    for data in lines:
        data["fallbacks"][data["seats"].index("cal")] = 14
    rows = by_bot(tally(typed(lines)).standings())
    assert rows["cal"].fallback_pct == 100.0 and rows["cal"].rank is None
    assert sorted(row.rank for row in rows.values() if row.rank is not None) == [1, 2, 3]
    ranking, apart = render_standings(list(rows.values()), RULES, "table").split(NOT_RANKED_TITLE)
    assert " cal " not in ranking
    assert "the fallback played 100% for it" in apart
    assert rows["cal"].not_ranked in " ".join(apart.split()) and "faults.unranked_above_fallback_pct" in apart
    # faults.unranked_above_fallback_pct = 100: every bot with a game is ranked, the fallback's too.
    rows = by_bot(tally(typed(lines)).standings(fallback_limit=100))
    assert rows["cal"].rank is not None and rows["cal"].not_ranked == ""
    assert NOT_RANKED_TITLE not in render_standings(list(rows.values()), RULES, "table")


@pytest.mark.parametrize("wide", [True, False])
def test_markdown_rows_have_as_many_cells_as_the_header(wide: bool) -> None:
    rows = tally(field()).standings(statuses=STATUSES)
    text = render_standings(rows, RULES, "markdown", wide=wide)
    tables = [line for line in text.splitlines() if line.startswith("|")]
    cells = {len(re.split(r"(?<!\\)\|", line)) for line in tables}
    assert len(tables) > 4 and len(cells) == 1, text


def test_the_compact_table_fits_a_terminal_of_100_columns() -> None:
    rows = tally(field()).standings(statuses=STATUSES)
    text = render_standings(rows, RULES, "table", wide=False)
    assert max(len(line) for line in text.splitlines() if not line.startswith(("ace:", "bea:", "dot:"))) <= 100
    assert "skill" not in text and "--wide shows every measure" in text
