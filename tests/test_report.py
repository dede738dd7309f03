"""The report of a results folder (``arena.rating.report.folder_report`` and ``callbreak-arena standings``)
on the folders of small in-process tournaments, in every format."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.event.plan.manifest import Manifest
from arena.event.plan.plan import Plan
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.rating.live import LiveJudge
from arena.rating.report import folder_report
from arena.rating.standing import Standing
from arena.records.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent
RANDOM = "sample_bots.random_bot:RandomBot"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
FORMATS = ("table", "markdown", "json", "csv")
COLUMNS = ("points per game", "95% interval", "mean round", "mean total", "place points", "matchpoints %",
           "skill mu", "skill sigma", "skill ordinal", "calls made %", "call error", "overtricks", "over/under %",
           "fallback %", "faults", "status")
"""The columns ``docs/standings.md`` explains."""


def bots(*entries: tuple[str, str, int]) -> str:
    return "".join(f'\n[[bots]]\nname = "{name}"\npython = "{spec}"\nseed = {seed}\n' for name, spec, seed in entries)


FIELD = (("heur", HEURISTIC, 1), ("rand1", RANDOM, 2), ("rand2", RANDOM, 3), ("rand3", RANDOM, 4))


def play(text: str, folder: Path) -> Path:
    config = parse_config(text)
    asyncio.run(asyncio.wait_for(Tournament(config, folder, judge=LiveJudge(folder, config)).run(), 120))
    return folder


@pytest.fixture(scope="module")
def round_robin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = '[tournament]\nname = "rr"\nseed = 21\ndeal_sets = 2\nconcurrency = 4\n' + bots(*FIELD)
    return play(text, tmp_path_factory.mktemp("report") / "rr")


@pytest.fixture(scope="module")
def head_to_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = ('[tournament]\nname = "h2h"\nseed = 22\ndeal_sets = 4\nformat = "head-to-head"\n'
            '[head-to-head]\na = "heur"\nb = "rand1"\nopponents = ["rand2", "rand3"]\n' + bots(*FIELD))
    return play(text, tmp_path_factory.mktemp("report") / "h2h")


def standings_cli(folder: Path, fmt: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``callbreak-arena standings``; stdout decoded without newline
    translation (CSV rows end in CRLF, as RFC 4180 has them)."""
    done = subprocess.run([sys.executable, "-m", "arena", "standings", str(folder), "--format", fmt], cwd=ROOT,
                          capture_output=True, timeout=60, check=False)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8", "replace")


def test_the_docs_explain_every_column() -> None:
    docs = (ROOT / "docs" / "standings.md").read_text(encoding="utf-8")
    for column in COLUMNS:
        assert column in docs, column


def test_table_lists_every_bot_and_every_column(round_robin: Path) -> None:
    text = folder_report(round_robin, "table", wide=True)
    assert text.startswith("Winner: heur (")  # the event has ended: its winner heads the standings
    header = text.splitlines()[2]
    for column in COLUMNS:
        assert column in header, column
    for name, _, _ in FIELD:
        assert re.search(rf"^\d(-\d)?\s+{name}\s", text, re.MULTILINE), name  # its rank range, then its name
    assert "Head to head" in text and "Seats (mean round score across all bots, in points)" in text
    assert "Scores in points" in text and "clustered by deal set" in text and "2 deal sets, 1 df" in text
    assert "Which number answers which question" in text
    assert "duplicate difference" not in text  # no A-B comparison in a round robin
    for position in ("seat 0", "seat 3", "dealer +1", "dealer +3", "dealer"):
        assert position in text


def test_markdown_is_github_tables(round_robin: Path) -> None:
    text = folder_report(round_robin, "markdown", wide=True)
    assert text.splitlines()[2].startswith("| rank")
    assert "|---" in text or "|:--" in text
    for column in COLUMNS:
        assert f" {column} " in text.splitlines()[2], column
    assert sum(1 for line in text.splitlines() if line.startswith("|") and "heur" in line) >= 2


def test_json_has_every_part(round_robin: Path) -> None:
    data = json.loads(folder_report(round_robin, "json"), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert set(data) == {"unit", "intervals", "result", "ended", "winner", "runner_up", "standings", "comparison",
                         "head_to_head", "seats", "pairs"}
    assert data["ended"] is True and data["winner"] == "heur"
    assert data["unit"] == "points" and data["result"] is None  # only the master profile names a winner
    assert data["intervals"] == {"level": 0.95, "method": "Student's t on the clusters, ratio estimator",
                                 "clustered_by": "deal set", "clusters": 2, "df": 1}
    assert data["comparison"] is None
    assert sorted(row["bot"] for row in data["standings"]) == sorted(name for name, _, _ in FIELD)
    assert set(data["standings"][0]) == {f.name for f in Standing.__dataclass_fields__.values()}
    assert all(row["games"] == 8 and row["blocks"] == 2 and row["clusters"] == 2 for row in data["standings"])
    assert len(data["head_to_head"]) == 12  # every ordered pair of 4 bots that met
    assert {c["a"] for c in data["head_to_head"]} == {name for name, _, _ in FIELD}
    assert [s["position"] for s in data["seats"]] == ["seat 0", "seat 1", "seat 2", "seat 3",
                                                      "dealer +1", "dealer +2", "dealer +3", "dealer"]
    assert all(s["rounds"] == 8 * 5 and s["mean"]["clusters"] == 2 for s in data["seats"])


def test_csv_has_a_header_and_one_row_per_bot(round_robin: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(folder_report(round_robin, "csv"))))
    assert len(rows) == len(FIELD)
    assert sorted(row["bot"] for row in rows) == sorted(name for name, _, _ in FIELD)
    assert {"bot", "dup_per_game", "dup_low", "dup_high", "matchpoint_pct", "mu", "sigma", "ordinal",
            "made_pct", "faults"} <= set(rows[0])
    data = json.loads(folder_report(round_robin, "json"))["standings"]
    assert [row["bot"] for row in rows] == [row["bot"] for row in data]
    assert [float(row["dup_per_game"]) for row in rows] == pytest.approx([row["dup_per_game"] for row in data])


def test_head_to_head_folder_shows_the_comparison(head_to_head: Path) -> None:
    text = folder_report(head_to_head, "table")
    assert "heur vs rand1: 4 blocks" in text
    assert "duplicate difference per game" in text and "(95% CI [" in text
    assert "likelihood of superiority" in text
    assert "head-to-head Elo (pentanomial, 8 game pairs in 4 deal sets)" in text
    assert "likelihood of superiority" in text and "(t, 3 df)" in text
    assert "SPRT" not in text  # a fixed-length comparison has no sequential test
    data: dict[str, Any] = json.loads(folder_report(head_to_head, "json"))
    comparison = data["comparison"]
    assert comparison["a"] == "heur" and comparison["b"] == "rand1" and comparison["blocks"] == 4
    assert comparison["pairs"] == 8 and comparison["sprt"] is None
    assert comparison["elo"]["pairs"] == 8 and comparison["elo"]["clusters"] == 4
    assert sum(comparison["elo"]["counts"].values()) == 8 and set(comparison["elo"]["counts"]) == {
        "LL", "LD", "WL+DD", "WD", "WW"}
    assert comparison["unit"] == "points" and comparison["diff"]["clusters"] == 4 and comparison["los_df"] == 3
    assert 0.0 <= comparison["los"] <= 1.0
    assert comparison["diff"]["low"] <= comparison["diff"]["mean"] <= comparison["diff"]["high"]
    assert "duplicate difference" in folder_report(head_to_head, "markdown")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_command_line_prints_the_folder_report(fmt: str, round_robin: Path, head_to_head: Path) -> None:
    folders = (round_robin, head_to_head) if fmt in ("table", "json") else (round_robin,)
    for folder in folders:
        status, out, err = standings_cli(folder, fmt)
        assert status == 0, err
        assert out == folder_report(folder, fmt)


def test_standings_of_a_folder_without_records(tmp_path: Path) -> None:
    # A run that planned its games and was stopped before the first one finished.
    store = ResultsStore(tmp_path / "empty")
    store.write_manifest(Manifest(tournament="empty", config={}, identity="0",
                                  plan=Plan("cyclic", 0, False, False, [], []), house=[]).to_dict())
    store.open()
    store.close()
    for fmt in FORMATS:
        folder_report(tmp_path / "empty", fmt)
    assert json.loads(folder_report(tmp_path / "empty", "json"))["standings"] == []


def test_an_sprt_on_a_deal_file_is_capped_by_the_file_in_the_report(tmp_path: Path, capsys: Any) -> None:
    # The run stops at the deal file's last deal set; the report must judge the same blocks, not
    # the configuration's deal_sets (not used when a deal file is given).
    deals = tmp_path / "contest.deals"
    assert main(["deals", "--seed", "5", "--count", "12", "--out", str(deals)]) == 0
    capsys.readouterr()
    text = (f'[tournament]\nname = "df"\nseed = 1\ndeal_file = "{deals}"\nformat = "sprt"\n'
            '[sprt]\na = "heur"\nb = "rand1"\ndelta1 = 0.01\nburn_in = 12\n' + bots(FIELD[0], FIELD[1]))
    folder = play(text, tmp_path / "df")
    assert len({r.block for r in ResultsStore(folder).records()}) == 12
    sprt = json.loads(folder_report(folder, "json"))["comparison"]["sprt"]
    assert sprt["n"] == 12 and sprt["verdict"] == "no decision" and sprt["cap"] == 12
