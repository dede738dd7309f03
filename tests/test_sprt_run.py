"""``format = "sprt"`` tournaments with in-process bots: the run stops by itself when the sequential
test decides, its folder passes the audit, and the report judges the same blocks the run did."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from arena.event.audit import audit
from arena.event.config import parse_config
from arena.event.store import ResultsStore
from arena.event.tournament import RunSummary, Tournament
from arena.rating.live import LiveJudge
from arena.rating.ratings import compare
from arena.rating.report import folder_report
from arena.rating.sequential import SprtResult, sprt

RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
HEUR = ("heur", HEURISTIC, 1)
RAND = ("rand", RANDOM, 2)


def config(a: tuple[str, str, int], b: tuple[str, str, int], *, delta1: float, deal_sets: int = 40,
           seed: int = 3, method: str = "alt", burn_in: int = 10) -> str:
    # The tests pin the burn-in and the method (the tournament defaults are 30 blocks and alt2).
    sprt_keys = f'method = "{method}"\nburn_in = {burn_in}\n'
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
    assert result == sprt(diffs, 0.0, 200.0, burn_in=10, cap=40, method="alt")  # deltas in tenths per game
    assert "verdict: H1" in folder_report(tmp_path / "h1", "table")


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


@pytest.mark.parametrize(("a", "b", "verdict"), [(HEUR, RAND, "H1 (cap)"), (RAND, HEUR, "H0 (cap)")])
def test_the_cap_gives_a_fixed_sample_verdict(a: tuple[str, str, int], b: tuple[str, str, int], verdict: str,
                                              tmp_path: Path) -> None:
    # delta1 = 0.01 points per game: 12 blocks cannot tell 0 from 0.01, so the cap decides by the mean.
    summary, judge = run(config(a, b, delta1=0.01, deal_sets=12), tmp_path / "cap")
    result = state(judge)
    assert result.verdict == verdict and result.verdict.endswith("(cap)") and result.n == 12
    assert not summary.stopped_early and summary.played == 48
    report = check_folder(tmp_path / "cap", 12)
    assert report["comparison"]["sprt"]["verdict"] == verdict
    assert f"verdict: {verdict}" in folder_report(tmp_path / "cap", "table")


def test_alt2_changes_the_statistic_only(tmp_path: Path) -> None:
    _, alt = run(config(HEUR, RAND, delta1=20), tmp_path / "alt")
    _, alt2 = run(config(HEUR, RAND, delta1=20, method="alt2"), tmp_path / "alt2")
    assert alt2.config.format_options["method"] == "alt2" and alt.config.format_options["method"] == "alt"

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
    assert state(alt2) == sprt(diffs, 0.0, 200.0, cap=40, method="alt2")
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
