"""The command line around tournaments: the embedded demo, standings in every format, replay,
deals, help and exit statuses."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import build_parser, main
from arena.core.dealing import DealFile, seeded_deal
from arena.event.setup.config import read_deal_file
from tests.helpers.runs import cli, run, standings, tournament_text, write

DEMO_BOTS = {"heuristic", "heuristic-bold", "random-a", "random-b"}


@pytest.mark.slow
def test_the_embedded_demo_runs_over_grpc_and_verifies(tmp_path: Path) -> None:
    # The README's first command (`make demo`) runs this: four sample bots as processes over gRPC.
    folder = tmp_path / "demo"
    result = cli("run", "--results", folder, "--no-progress", timeout=180)
    assert result.returncode == 0, result.stderr
    assert "64 games played, 0 already recorded, 0 faults" in result.stderr
    winner, table_text = result.stdout.split("\n\n")[:2]
    assert winner.startswith("Winner: ") and "; runner-up: " in winner
    table = table_text.splitlines()
    assert table[0].split()[:3] == ["rank", "bot", "points"] and table[1].split()[:2] == ["per", "game"]
    assert max(len(line) for line in result.stdout.split("\n\n")[1].splitlines()) <= 100  # fits a terminal
    words = [line for line in result.stdout.splitlines() if not line.startswith(("heuristic", "random", "vs ", "---"))]
    assert max(len(line) for line in words) <= 100  # the notes and the paragraph on measures too
    assert f"the report of this event, for a browser: {folder / 'report.html'}" in result.stderr
    assert {line.split()[1] for line in table[3:]} == DEMO_BOTS
    ranks = [line.split()[0] for line in table[3:]]  # rank ranges: 1, or 1-2
    assert all(re.fullmatch(r"\d(-\d)?", rank) for rank in ranks) and ranks[0].startswith("1")
    assert {p.name for p in (folder / "logs").iterdir()} == {f"{bot}.log" for bot in DEMO_BOTS}
    assert (folder / "standings.txt").exists() and (folder / "standings.json").exists()
    verified = cli("verify", folder)
    assert verified.returncode == 0, verified.stdout
    assert verified.stdout.startswith(f"ok: 64 games in {folder}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished in-process tournament of five random bots: 20 games per deal set, 2 deal sets."""
    base = tmp_path_factory.mktemp("cli")
    config = write(base / "t.toml", tournament_text(("ann", "bob", "cy", "dee", "eve"), seed=4))
    run(config, base / "results")
    return base / "results"


def output(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_standings_in_every_format_agree(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = {}
    for fmt in ("table", "markdown", "json", "csv"):
        status, out, _ = output(capsys, "standings", folder, "--format", fmt)
        assert status == 0
        outputs[fmt] = out
    rows = json.loads(outputs["json"])["standings"]
    assert rows == standings(folder)["standings"]
    order = [row["bot"] for row in rows]
    assert sorted(order) == ["ann", "bob", "cy", "dee", "eve"]
    assert all(row["games"] == 32 for row in rows)  # each bot is in 4 of the 5 groups, 4 rotations, 2 deal sets
    dups = [row["dup_per_game"] for row in rows]
    assert dups == sorted(dups, reverse=True)
    assert abs(sum(dups)) < 1e-6  # duplicate scores cancel over a complete design
    as_csv = list(csv.DictReader(io.StringIO(outputs["csv"])))
    assert [r["bot"] for r in as_csv] == order
    assert [float(r["dup_per_game"]) for r in as_csv] == pytest.approx(dups)
    assert [int(r["games"]) for r in as_csv] == [32] * 5
    table_rows = outputs["table"].split("\n\n")[1].splitlines()[3:]  # after the winner, a two-line header
    assert [line.split()[1] for line in table_rows] == order
    # Every format is in points (the JSON says so); the tables show two decimals.
    assert json.loads(outputs["json"])["unit"] == "points"
    assert [line.split()[2] for line in table_rows] == [f"{d:+.2f}" for d in dups]
    markdown_rows = [line for line in outputs["markdown"].split("\n\n")[1].splitlines() if line.startswith("|")][2:]
    assert [line.split("|")[2].strip() for line in markdown_rows] == order
    assert [line.split("|")[3].strip() for line in markdown_rows] == [f"{d:+.2f}" for d in dups]


def test_standings_of_a_folder_that_is_not_one_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = output(capsys, "standings", tmp_path)
    assert status == 2
    assert "is not a results folder" in err and err.count("\n") == 1


def test_replay_prints_the_four_hands_and_13_tricks(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = next(json.loads(line) for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()
                  if json.loads(line)["round"] == 3)
    status, out, _ = output(capsys, "replay", folder, record["game"], "--round", "3")
    assert status == 0
    assert out.startswith(f"game {record['game']}: deal set {record['deal_set']}, rotation {record['rotation']}")
    assert out.count("\nRound ") == 1
    assert f"Round 3 (deal {record['deal']}), dealer: seat {record['dealer']}, trump spades" in out
    for seat, bot in enumerate(record["seats"]):
        line = next(line for line in out.splitlines() if line.startswith(f"  seat {seat} {bot}"))
        assert len(line.split()) == 3 + 13  # "seat", the number, the bot, and 13 cards
    tricks = re.findall(r"^  trick +(\d+) .* -> seat (\d)$", out, re.MULTILINE)
    assert [int(n) for n, _ in tricks] == list(range(1, 14))
    assert [int(w) for _, w in tricks] == [t["winner"] for t in record["tricks"]]
    assert "calls: " in out


def test_replay_of_a_whole_game_prints_every_round(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = output(capsys, "replay", folder, "r1-g1-d1-p0")
    assert status == 0
    assert out.count("\nRound ") == 5
    assert len(re.findall(r"^  trick ", out, re.MULTILINE)) == 65


@pytest.mark.parametrize(("args", "words"), [
    (["r9-g9-d9-p9"], "no game 'r9-g9-d9-p9'"),
    (["r1-g1-d1-p0", "--round", "9"], "has no round 9"),
])
def test_replay_of_something_not_recorded_is_a_usage_error(
    folder: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    status, _, err = output(capsys, "replay", folder, *args)
    assert status == 2
    assert words in err


def test_deals_writes_a_deal_file_that_reads_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "contest.deals"
    status, out, _ = output(capsys, "deals", "--seed", "42", "--count", "3", "--out", path)
    assert status == 0
    assert out == f"wrote 15 deals to {path}\n"
    deals = read_deal_file(path)
    assert deals.games == [1, 2, 3]
    assert len(deals.deals) == 15
    for (game, round_number, attempt), deal in deals.deals.items():
        assert attempt == 0
        assert deal == seeded_deal(42, game, round_number)
    status, printed, _ = output(capsys, "deals", "--seed", "42", "--count", "3")
    assert status == 0
    assert printed == path.read_text(encoding="utf-8")  # printed and written are the same text


def test_deals_under_dy_have_ten_rounds(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = output(capsys, "deals", "--seed", "1", "--count", "1", "--profile", "dy")
    assert status == 0
    assert len(DealFile.parse(out).deals) == 10


def test_game_prints_a_seeded_game(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = output(capsys, "game", "--seed", "3")
    assert status == 0
    assert out.count("Round ") == 5
    assert "Final standings" in out
    assert output(capsys, "game", "--seed", "3")[1] == out  # seeded: the same game again


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[list[str]]:
    """Every command and subcommand of the parser, as the words that name it (the top level: none)."""
    yield list(prefix)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*prefix, name))


HELP = list(commands(build_parser()))


def test_the_walk_finds_every_command_and_subcommand() -> None:
    assert ["ladder", "init"] in HELP and ["rules", "legal"] in HELP and ["check-bot"] in HELP


@pytest.mark.parametrize("command", HELP, ids=[" ".join(c) or "top" for c in HELP])
def test_every_subcommand_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([*command, "--help"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("usage: callbreak-arena")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("callbreak-arena ")


USAGE = [
    [],
    ["tournament"],
    ["run", "--format", "xml"],
    ["run", "--bogus"],
    ["standings"],
    ["replay", "somewhere"],
    ["deals", "--count", "3"],
    ["deals", "--seed", "1", "--count", "0"],
    ["deals", "--seed", "-1", "--count", "1"],
    ["deals", "--seed", "1", "--count", "x"],
    ["deals", "--seed", "1", "--count", "1", "--rounds", "0"],
    ["rules"],
    ["rules", "score", "--call", "99", "--tricks", "3"],
    ["rules", "legal", "--hand", "XX"],
    ["game", "--profile", "nope"],
]


@pytest.mark.parametrize("args", USAGE, ids=[" ".join(a) or "nothing" for a in USAGE])
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        status = main(args)
    except SystemExit as caught:  # argparse's own refusals
        status = int(str(caught.code))
    assert status == 2
    err = capsys.readouterr().err
    assert "error" in err
    assert err.strip().splitlines()[-1].startswith(("callbreak-arena", "usage"))


def test_usage_error_from_a_real_process(tmp_path: Path) -> None:
    result = cli("replay", tmp_path, "r1-g1-d1-p0")
    assert result.returncode == 2
    assert result.stderr == f"callbreak-arena: error: {tmp_path} is not a results folder (it has no manifest.json)\n"
