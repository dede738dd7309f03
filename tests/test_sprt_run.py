"""``format = "sprt"`` tournaments with in-process bots: the run stops by itself when the sequential
test decides, its folder passes the audit, and the report judges the same blocks the run did."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.errors import ConfigError
from arena.event.audit import audit
from arena.event.run.summary import RunSummary
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.event.setup.formats import SPRT_DEAL_SETS
from arena.rating.live import LiveJudge
from arena.rating.ratings import compare
from arena.rating.report import folder_report, read_folder
from arena.rating.sequential import SprtResult, describe, fishtest_line, sprt
from arena.records.store import ResultsStore

RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
HEUR = ("heur", HEURISTIC, 1)
RAND = ("rand", RANDOM, 2)


def config(a: tuple[str, str, int], b: tuple[str, str, int], *, delta1: float, deal_sets: int = 40,
           seed: int = 3, method: str | None = "alt", burn_in: int | None = 10) -> str:
    # The tests pin the burn-in and the method (the tournament defaults are 30 blocks and el) unless
    # given None.
    sprt_keys = "".join(f"{key} = {value}\n" for key, value in (("method", f'"{method}"'), ("burn_in", burn_in))
                        if value not in (None, '"None"'))
    tables = "".join(f'\n[[bots]]\nname = "{name}"\npython = "{spec}"\nseed = {bot_seed}\n'
                     for name, spec, bot_seed in (a, b))
    return (f'[tournament]\nname = "sprt"\nseed = {seed}\ndeal_sets = {deal_sets}\nformat = "sprt"\nconcurrency = 4\n'
            f'[sprt]\na = "{a[0]}"\nb = "{b[0]}"\ndelta1 = {delta1}\n{sprt_keys}' + tables)


def run(text: str, folder: Path) -> tuple[RunSummary, LiveJudge]:
    config = parse_config(text)
    judge = LiveJudge(folder, config)
    summary = asyncio.run(asyncio.wait_for(Tournament(config, folder, judge=judge).run(), 120))
    return summary, judge


def state(judge: LiveJudge) -> SprtResult:
    """The run's sequential test as it ended."""
    result = judge.sprt_state()
    assert result is not None
    return result


def block_differences(folder: Path, a: str, b: str) -> list[float]:
    """(A's total - B's total) per game, one number per block, in schedule order (tenths)."""
    blocks: dict[int, list[int]] = {}
    for record in ResultsStore(folder).records():
        if record.final:
            seats = record.seats
            blocks.setdefault(record.schedule_round, []).append(
                record.totals[seats.index(a)] - record.totals[seats.index(b)])
    assert all(len(d) == 4 for d in blocks.values())
    return [sum(blocks[k]) / 4 for k in sorted(blocks)]


def check_folder(folder: Path, blocks: int) -> dict[str, Any]:
    """The folder holds exactly the first ``blocks`` planned blocks, whole, and passes the audit;
    returns its JSON report."""
    records = ResultsStore(folder).records()
    games = {r.game for r in records}
    assert len(games) == 4 * blocks
    assert {r.block for r in records} == {f"r{n}-g1-d{n}" for n in range(1, blocks + 1)}
    assert audit(folder) is None
    report: dict[str, Any] = json.loads(folder_report(folder, "json"))
    return report


def test_a_clearly_stronger_bot_is_accepted_right_after_the_burn_in(tmp_path: Path) -> None:
    # The heuristic bot is about 40 points per game better than the random bot; delta1 = 20 points.
    summary, judge = run(config(HEUR, RAND, delta1=20), tmp_path / "h1")
    result = state(judge)
    assert result.verdict == "H1" and result.n == 10
    assert summary.stopped_early and summary.played == 40
    report = check_folder(tmp_path / "h1", 10)
    verdict = report["comparison"]["sprt"]
    assert verdict["verdict"] == "H1" and verdict["n"] == 10
    assert verdict["llr"] == pytest.approx(result.llr) and verdict["llr"] >= verdict["upper"]
    diffs = block_differences(tmp_path / "h1", "heur", "rand")
    # Deltas in tenths per game.
    assert result == sprt(diffs, 0.0, 200.0, burn_in=10, cap=40, method="alt", per_point=10, a="heur", b="rand")
    assert "SPRT: H1 accepted after 10 blocks: heur scores more than rand; measured: heur - rand +" in folder_report(
        tmp_path / "h1", "table")
    # The second copies that fill the tables are not ranked: only the two versions under test are.
    rows = read_folder(tmp_path / "h1").standings
    assert [(row.bot, row.rank) for row in rows if row.rank is not None] == [("heur", 1), ("rand", 2)]
    copies = {row.bot: row.reason for row in rows if row.rank is None}
    assert copies == {"heur#2": "a second copy of heur (fills the table)",
                      "rand#2": "a second copy of rand (fills the table)"}


def test_alt2_with_delta1_five_points_stops_right_after_the_burn_in(tmp_path: Path) -> None:
    summary, judge = run(config(HEUR, RAND, delta1=5, method="alt2"), tmp_path / "alt2")
    assert state(judge).verdict == "H1" and state(judge).n == 10
    assert summary.stopped_early and summary.played == 40
    report = check_folder(tmp_path / "alt2", 10)
    assert report["comparison"]["sprt"]["verdict"] == "H1"
    diffs = block_differences(tmp_path / "alt2", "heur", "rand")
    assert report["comparison"]["sprt"]["llr"] == pytest.approx(sprt(diffs, 0.0, 50.0, method="alt2").llr)


def test_alt_with_delta1_far_below_the_true_difference_still_stops_with_h1(tmp_path: Path) -> None:
    # With the true difference about 8 x delta1 both hypotheses fit badly and "alt"'s LLR grows by
    # only about ln(64/49)/2 per block: H1 comes, but well after the burn-in (23 blocks on this seed).
    summary, judge = run(config(HEUR, RAND, delta1=5, deal_sets=60), tmp_path / "alt")
    result = state(judge)
    assert result.verdict == "H1" and 10 <= result.n < 60 and summary.stopped_early
    assert summary.played == 4 * result.n
    report = check_folder(tmp_path / "alt", result.n)
    assert report["comparison"]["sprt"]["verdict"] == "H1" and report["comparison"]["sprt"]["n"] == result.n


@pytest.mark.parametrize(("a", "b"), [
    (("r1", RANDOM, 7), ("r2", RANDOM, 7)),
    (("h1", HEURISTIC, 4), ("h2", HEURISTIC, 4)),
], ids=["random", "heuristic"])
def test_identical_bots_accept_h0(a: tuple[str, str, int], b: tuple[str, str, int], tmp_path: Path) -> None:
    # Two copies of each play every seat: identical bots on the same hands play identically, so
    # every block difference is exactly 0.
    summary, judge = run(config(a, b, delta1=5), tmp_path / "h0")
    result = state(judge)
    assert result.verdict == "H0" and result.n == 10 and result.mean == 0 and result.sd == 0
    assert summary.stopped_early
    assert block_differences(tmp_path / "h0", a[0], b[0]) == [0.0] * 10
    report = check_folder(tmp_path / "h0", 10)
    assert report["comparison"]["sprt"]["verdict"] == "H0"
    assert report["comparison"]["diff"]["mean"] == 0 and report["comparison"]["los"] == 0.5


@pytest.mark.parametrize(("a", "b"), [(HEUR, RAND), (RAND, HEUR)])
def test_the_cap_gives_no_decision(a: tuple[str, str, int], b: tuple[str, str, int], tmp_path: Path) -> None:
    # delta1 = 0.01 points per game: 12 blocks cannot tell 0 from 0.01 however far apart the bots are,
    # and at the cap the test says so rather than guess from the mean.
    summary, judge = run(config(a, b, delta1=0.01, deal_sets=12, burn_in=10), tmp_path / "cap")
    result = state(judge)
    assert result.verdict == "no decision" and result.n == 12 == result.cap
    assert result.lower < result.llr < result.upper
    assert not summary.stopped_early and summary.played == 48
    assert judge.decided()  # nothing more to play: the plan is done
    report = check_folder(tmp_path / "cap", 12)
    assert report["comparison"]["sprt"]["verdict"] == "no decision"
    assert describe(result).startswith("no decision: the cap of 12 blocks was reached with the LLR ")


def test_alt2_changes_the_statistic_only(tmp_path: Path) -> None:
    _, alt = run(config(HEUR, RAND, delta1=20), tmp_path / "alt")
    _, alt2 = run(config(HEUR, RAND, delta1=20, method="alt2"), tmp_path / "alt2")
    assert alt2.config.format_options.method == "alt2" and alt.config.format_options.method == "alt"

    def lines(folder: Path) -> list[str]:
        # Everything but the timings, and the line each record was read from (games finish in any order).
        return sorted(repr(dataclasses.replace(record, line=0, think_ms=()))
                      for record in ResultsStore(folder).records())

    assert lines(tmp_path / "alt") == lines(tmp_path / "alt2")
    manifests = [json.loads((tmp_path / name / "manifest.json").read_text()) for name in ("alt", "alt2")]
    assert manifests[0]["plan"] == manifests[1]["plan"]
    assert manifests[0]["config"]["format_options"] == {**manifests[1]["config"]["format_options"], "method": "alt"}
    assert manifests[0]["identity"] != manifests[1]["identity"]  # a different test: no resume across methods
    diffs = block_differences(tmp_path / "alt2", "heur", "rand")
    assert state(alt2) == sprt(diffs, 0.0, 200.0, cap=40, method="alt2", per_point=10, a="heur", b="rand")
    assert state(alt).llr != state(alt2).llr
    report = json.loads(folder_report(tmp_path / "alt2", "json"))["comparison"]["sprt"]
    assert report["llr"] == pytest.approx(state(alt2).llr)
    records = ResultsStore(tmp_path / "alt2").records()
    assert compare(records, "heur", "rand", delta1=200.0, cap=40, method="alt2", burn_in=10).sprt == state(alt2)


def test_a_decided_run_resumed_plays_nothing(tmp_path: Path) -> None:
    text = config(("r1", RANDOM, 7), ("r2", RANDOM, 7), delta1=5)
    run(text, tmp_path / "again")
    before = ResultsStore(tmp_path / "again").records()
    summary, judge = run(text, tmp_path / "again")
    assert summary.played == 0 and summary.stopped_early and state(judge).verdict == "H0"
    assert ResultsStore(tmp_path / "again").records() == before


def test_the_default_method_is_el_and_decides(tmp_path: Path) -> None:
    # The heuristic bot is about 41 points per game better than the random bot: H1 at 20 points is
    # accepted right after the burn-in, in words that name the bots and restate the test.
    text = config(HEUR, RAND, delta1=20, method=None)
    assert parse_config(text).format_options.method == "el"
    summary, judge = run(text, tmp_path / "el")
    result = state(judge)
    assert (result.verdict, result.n, result.method, result.per_point) == ("H1", 10, "el", 10)
    assert summary.stopped_early and summary.played == 40
    assert result == sprt(block_differences(tmp_path / "el", "heur", "rand"), 0.0, 200.0, burn_in=10, cap=40,
                          per_point=10, a="heur", b="rand")
    assert describe(result).startswith("H1 accepted after 10 blocks: heur scores more than rand; measured: "
                                       "heur - rand +")
    assert describe(result).endswith(") (H0: heur - rand = +0.00 points per game; "
                                     "H1: heur - rand = +20.00; alpha 0.05, beta 0.05)")
    assert describe(result).count("heur scores more than rand") == 1
    line = judge.progress_line()
    assert line == fishtest_line(result) and line is not None
    assert line.startswith(f"LLR {result.llr:.2f} (-2.94, 2.94) [0.00, 20.00] 10 blocks, heur - rand +")


def test_the_progress_line_belongs_to_the_sprt_format(tmp_path: Path) -> None:
    text = config(HEUR, RAND, delta1=20).replace('format = "sprt"', 'format = "head-to-head"').replace(
        "[sprt]", "[head-to-head]")
    text = "\n".join(line for line in text.splitlines() if not line.startswith(("delta1", "method", "burn_in")))
    judge = LiveJudge(tmp_path / "h2h", parse_config(text))
    assert judge.progress_line() is None and judge.sprt_state() is None


# -- configurations that cannot decide ------------------------------------------------------------


def test_the_defaults_can_decide(tmp_path: Path) -> None:
    # Under sprt, deal_sets defaults to a cap far above what a test needs, not to 8 (with a burn-in
    # of 30 that could only end in "no decision"); the run stops when the test decides.
    text = config(HEUR, RAND, delta1=20, deal_sets=8, burn_in=None, method=None).replace("deal_sets = 8\n", "")
    assert parse_config(text).deal_sets == SPRT_DEAL_SETS == 10_000
    summary, judge = run(text, tmp_path / "defaults")
    assert (state(judge).verdict, state(judge).n, state(judge).cap) == ("H1", 30, 10_000)
    assert summary.stopped_early and summary.played == 120


def test_a_cap_below_the_burn_in_is_refused_naming_both_keys() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(config(HEUR, RAND, delta1=1, deal_sets=8, burn_in=None))
    assert str(refused.value) == (
        "sprt.burn_in is 30 (the default) but tournament.deal_sets is 8: the test reads one block per "
        "deal set and gives no verdict before the burn-in, so it could never decide; set tournament.deal_sets to "
        "30 or more (sprt.burn_in cannot go below 10); a test usually needs a few hundred blocks")
    with pytest.raises(ConfigError, match=r"sprt.burn_in is 25 but tournament.deal_sets is 20: .*; set "
                                          r"tournament.deal_sets to 25 or more, or sprt.burn_in to 20 or less;"):
        parse_config(config(HEUR, RAND, delta1=1, deal_sets=20, burn_in=25))
    with pytest.raises(ConfigError, match=r"tournament\.deal_sets is 9"):
        parse_config(config(HEUR, RAND, delta1=1, deal_sets=9, burn_in=10))
    assert parse_config(config(HEUR, RAND, delta1=1, deal_sets=30, burn_in=None)).format_options.burn_in == 30


def test_the_smallest_configuration_allowed_can_decide(tmp_path: Path) -> None:
    # 10 deal sets and a burn-in of 10 (the least allowed): the test may decide at its one chance.
    summary, judge = run(config(HEUR, RAND, delta1=20, deal_sets=10, method=None), tmp_path / "least")
    assert (state(judge).verdict, state(judge).n) == ("H1", 10)
    assert summary.played == 40 and not summary.stopped_early  # it decided at the plan's last block


def test_a_deal_file_shorter_than_the_burn_in_is_refused_before_the_run(tmp_path: Path, capsys: Any) -> None:
    # The configuration cannot count a deal file's games; the live judge does, before anything runs.
    deals = tmp_path / "short.deals"
    assert main(["deals", "--seed", "5", "--count", "12", "--out", str(deals)]) == 0
    capsys.readouterr()
    text = config(HEUR, RAND, delta1=1, burn_in=None).replace("deal_sets = 40", f'deal_file = "{deals}"')
    cfg = parse_config(text)
    with pytest.raises(ConfigError) as refused:
        LiveJudge(tmp_path / "df", cfg)
    assert str(refused.value) == (
        "sprt.burn_in is 30 but the deal file tournament.deal_file (short.deals) holds 12 games: the test reads one "
        "block per game of the file and gives no verdict before the burn-in, so it could never decide; use a deal "
        "file of 30 games or more, or set sprt.burn_in to 12 or less")
    assert not (tmp_path / "df").exists()
    config_file = tmp_path / "df.toml"
    config_file.write_text(text, encoding="utf-8")
    assert main(["run", str(config_file), "--results", str(tmp_path / "df")]) == 2
    assert "error: sprt.burn_in is 30 but the deal file" in capsys.readouterr().err
    LiveJudge(tmp_path / "df", parse_config(text.replace("[sprt]\n", "[sprt]\nburn_in = 12\n")))  # accepted
