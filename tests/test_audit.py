"""``verify``: an independent audit passes on real output and finds every kind of tampering,
printing where it is."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.event.audit import audit
from tests.helpers.runs import CRASHER, NO_FAST, run, tournament_text, write

Record = dict[str, Any]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small tournament with some faults in it: 4 bots, 2 deal sets, 8 games."""
    base = tmp_path_factory.mktemp("audit")
    config = write(base / "t.toml", tournament_text(spec=NO_FAST, r4=CRASHER, seed=21))
    run(config, base / "results")
    return base / "results"


@pytest.fixture
def folder(finished: Path, tmp_path: Path) -> Path:
    shutil.copytree(finished, tmp_path / "results")
    return tmp_path / "results"


def load(folder: Path) -> list[Record]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def save(folder: Path, records: list[Record]) -> None:
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def verify(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["verify", str(folder)])
    return status, capsys.readouterr().out


def test_real_output_passes(finished: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert any(r["faults"] for r in load(finished))  # faults and fallbacks are audited too
    assert audit(finished) is None
    status, out = verify(finished, capsys)
    assert status == 0
    assert out.startswith(f"ok: 8 games in {finished}")


def swap_cards_in_a_trick(records: list[Record]) -> int:
    trick = records[7]["tricks"][5]
    trick["cards"][0], trick["cards"][1] = trick["cards"][1], trick["cards"][0]
    return 7


def change_a_played_card(records: list[Record]) -> int:
    # Replace the last card of the last trick by the first card of the first: played twice now.
    records[3]["tricks"][12]["cards"][3] = records[3]["tricks"][0]["cards"][0]
    return 3


def change_a_trick_winner(records: list[Record]) -> int:
    trick = records[12]["tricks"][2]
    trick["winner"] = (trick["winner"] + 1) % 4
    return 12


def change_tricks_won(records: list[Record]) -> int:
    won = records[9]["tricks_won"]
    won[0], won[1] = won[0] + 1, won[1] - 1
    if won[1] < 0:
        won[0], won[1] = won[0] - 2, won[1] + 2
    return 9


def change_a_score(records: list[Record]) -> int:
    records[16]["scores"][2] += 10
    return 16


def change_a_total(records: list[Record]) -> int:
    records[21]["totals"][1] += 1
    return 21


def change_a_call(records: list[Record]) -> int:
    records[5]["calls"][0] = 14
    return 5


def change_a_hand(records: list[Record]) -> int:
    # Swap one card between two hands: every hand still holds 13 cards, but not the dealt ones.
    hands = [h.split() for h in records[2]["hands"]]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    records[2]["hands"] = [" ".join(h) for h in hands]
    return 2


def change_the_seed(records: list[Record]) -> int:
    records[30]["seed"] += 1
    return 30


def change_a_place(records: list[Record]) -> int:
    final = next(i for i, r in enumerate(records) if r["final"])
    records[final]["places"] = [4, 3, 2, 1] if records[final]["places"] != [4, 3, 2, 1] else [1, 2, 3, 4]
    return final


def change_the_dealer(records: list[Record]) -> int:
    records[1]["dealer"] = (records[1]["dealer"] + 1) % 4
    return 1


TAMPERING: dict[str, tuple[Callable[[list[Record]], int], str]] = {
    "two cards of a trick swapped": (swap_cards_in_a_trick, "trick 5"),
    "a card played twice": (change_a_played_card, "trick 12"),
    "a trick winner": (change_a_trick_winner, "trick 2 was won by seat"),
    "tricks won": (change_tricks_won, "tricks won are"),
    "a score": (change_a_score, "the round scores are"),
    "a total": (change_a_total, "the totals are"),
    "a call": (change_a_call, "call 14 is illegal"),
    "a hand": (change_a_hand, "is not the hand its deal gives"),
    "the seed": (change_the_seed, "is not the hand its deal gives"),
    "the places": (change_a_place, "the places are"),
    "the dealer": (change_the_dealer, "the deal passes on"),
}


@pytest.mark.parametrize("name", list(TAMPERING))
def test_tampering_is_found_with_its_location(folder: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    tamper, words = TAMPERING[name]
    records = load(folder)
    index = tamper(records)
    save(folder, records)
    status, out = verify(folder, capsys)
    assert status == 1
    record = records[index]
    assert out.startswith(f"violation: records.jsonl line {index + 1} (game {record['game']}, "
                          f"round {record['round']}): "), out
    assert words in out, out
    assert out.count("\n") == 1


def test_a_missing_rotation_is_found(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = load(folder)
    missing = records[-1]["game"]
    save(folder, [r for r in records if r["game"] != missing])
    status, out = verify(folder, capsys)
    assert status == 1
    assert f"planned game {missing} is missing (1 missing in all)" in out


def test_an_unfinished_game_is_found(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = load(folder)
    save(folder, records[:-1])  # the last game lost its final round
    status, out = verify(folder, capsys)
    assert status == 1
    last = max(line for line, r in enumerate(records[:-1], start=1) if r["game"] == records[-1]["game"])
    assert f"records.jsonl line {last} (game {records[-1]['game']})" in out
    assert "not complete" in out


def test_an_unplanned_game_is_found(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = load(folder)
    first = records[0]["game"]
    extra = [dict(r, game="r9-g1-d1-p0", block="r9-g1-d1", schedule_round=9) for r in records if r["game"] == first]
    save(folder, records + extra)
    status, out = verify(folder, capsys)
    assert status == 1
    assert "game r9-g1-d1-p0 was not in the plan" in out


def test_a_game_played_in_other_seats_than_planned_is_found(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = load(folder)
    first = records[0]["game"]
    planned = records[0]["seats"]
    swapped = [planned[1], planned[0], *planned[2:]]
    save(folder, [dict(r, seats=swapped) if r["game"] == first else r for r in records])
    status, out = verify(folder, capsys)
    assert status == 1
    assert f"(game {first}): the seats {swapped} (first dealer 3) are not the planned {planned}" in out


def test_a_duplicated_game_is_found(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = load(folder)
    first = records[0]["game"]
    again = [r for r in records if r["game"] == first]
    save(folder, records + again)
    status, out = verify(folder, capsys)
    assert status == 1
    assert f"game {first}" in out
    assert f"records.jsonl line {len(records) + 1}" in out  # where the second copy starts
    assert "twice" in out


def test_a_torn_records_file_is_a_violation(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = folder / "records.jsonl"
    path.write_bytes(path.read_bytes()[:-40])
    status, out = verify(folder, capsys)
    assert status == 1
    assert "line 40: the last record is incomplete" in out


def test_a_folder_without_manifest_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path)]) == 2
    assert "is not a results folder" in capsys.readouterr().err


def test_several_folders_are_verified_in_one_run_each_with_its_verdict(
        finished: Path, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(finished), str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"ok: 8 games in {finished} follow from their rules and seeds",
                   f"ok: 8 games in {folder} follow from their rules and seeds",
                   "2 of 2 folders follow from their rules and seeds"]

    records = load(folder)
    index = change_a_trick_winner(records)
    save(folder, records)
    assert main(["verify", str(folder), str(finished)]) == 1  # a violation fails the whole, whichever comes first
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"violation in {folder}: records.jsonl line {index + 1} "), out
    assert out[1:] == [f"ok: 8 games in {finished} follow from their rules and seeds",
                       "1 of 2 folders follow from their rules and seeds"]


def test_a_folder_that_is_not_one_among_several_is_refused_before_any_audit(
        finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(finished), str(tmp_path / "nothing")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{tmp_path / 'nothing'} is not a results folder" in captured.err
