"""The results folder: records in their public format, the manifest, torn lines and damage."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.errors import RecordsError
from arena.event.config import load_config
from arena.event.schedule import Assignment
from arena.event.store import ResultsStore, _difference, game_lines, read_records, round_json
from arena.event.tournament import Tournament
from arena.players.fast import play_fast
from arena.players.table import round_dict
from sample_bots.random_bot import RandomBot
from tests.data.runs import games, records, run, tournament_text, write

FIELDS = {
    "v", "tournament", "game", "block", "schedule_round", "group", "deal_set", "rotation", "seed", "deals", "rules",
    "seats", "first_dealer", "deal", "round", "attempt", "dealer", "trump", "hands", "calls", "tricks", "tricks_won",
    "scores", "totals", "faults", "redeals", "final", "timings",
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished tournament: 4 random bots, 2 deal sets, 8 games of 5 rounds."""
    base = tmp_path_factory.mktemp("store")
    config = write(base / "t.toml", tournament_text(seed=11))
    run(config, base / "results")
    return base


@pytest.fixture
def folder(finished: Path, tmp_path: Path) -> Path:
    """A private copy of the finished tournament's results folder (with its configuration beside)."""
    shutil.copy(finished / "t.toml", tmp_path / "t.toml")
    shutil.copytree(finished / "results", tmp_path / "results")
    return tmp_path / "results"


def test_one_line_per_round_with_every_field(finished: Path) -> None:
    lines = records(finished / "results")
    assert len(lines) == 8 * 5
    for record in lines:
        assert set(record) == FIELDS | ({"places"} if record["final"] else set())
        assert record["tournament"] == "t" and record["seed"] == 11 and record["deals"] == "seed"
        assert record["game"] == f"{record['block']}-p{record['rotation']}"
        assert record["block"] == f"r{record['schedule_round']}-g{record['group']}-d{record['deal_set']}"
        assert record["deal"] == f"{record['deal_set']}.{record['round']}.{record['attempt']}"
        assert record["rules"]["profile"] == "nepali"
        assert len(record["hands"]) == 4 and all(len(h.split()) == 13 for h in record["hands"])
        assert len(record["tricks"]) == 13 and all(len(t["cards"]) == 4 for t in record["tricks"])
        assert sum(record["tricks_won"]) == 13
        assert all(isinstance(s, int) for s in record["scores"] + record["totals"])  # tenths, whole numbers
        if record["final"]:
            assert len(record["timings"]["think_ms"]) == 4
        else:
            assert record["timings"] == {}
    for rounds in games(finished / "results").values():
        assert [r["round"] for r in rounds] == [1, 2, 3, 4, 5]
        assert [r["final"] for r in rounds] == [False] * 4 + [True]
        assert [r["dealer"] for r in rounds] == [(rounds[0]["first_dealer"] + i) % 4 for i in range(5)]
        totals = [0, 0, 0, 0]
        for r in rounds:
            totals = [t + s for t, s in zip(totals, r["scores"], strict=True)]
            assert r["totals"] == totals


def test_manifest_holds_the_config_and_the_plan_with_its_hash(finished: Path) -> None:
    manifest = json.loads((finished / "results" / "manifest.json").read_text(encoding="utf-8"))
    config = load_config(finished / "t.toml")
    tournament = Tournament(config, finished / "results")
    assert manifest["config"] == config.to_dict()
    assert manifest["plan"]["adaptive"] is False
    assert manifest["plan"]["games"] == [a.id for a in tournament.schedule]
    assert len(manifest["plan"]["games"]) == 8
    body = json.dumps({"config": manifest["config"], "plan": manifest["plan"]}, sort_keys=True)
    assert manifest["plan_hash"] == hashlib.sha256(body.encode()).hexdigest()
    assert manifest["plan_hash"] == tournament.manifest()["plan_hash"]
    assert manifest["house_bots"] == []
    assert manifest["tournament"] == "t"


def test_the_records_file_reads_back(folder: Path) -> None:
    assert read_records(folder / "records.jsonl") == records(folder)
    assert read_records(folder / "nothing.jsonl") == []


def test_a_torn_last_line_is_an_error_unless_repaired(folder: Path) -> None:
    path = folder / "records.jsonl"
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    torn = b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]  # a write cut in the middle
    path.write_bytes(torn)
    with pytest.raises(RecordsError, match=r"line 40: the last record is incomplete \(a torn write\)"):
        read_records(path)
    assert path.read_bytes() == torn  # reading alone never changes the file
    assert len(read_records(path, repair=True)) == 39
    assert path.read_bytes() == b"".join(lines[:-1])


def test_a_complete_last_line_that_is_not_json_is_cut_off(folder: Path) -> None:
    path = folder / "records.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"v":1,"game":\n')
    assert len(read_records(path, repair=True)) == 40
    assert path.read_bytes() == whole


def test_a_torn_line_of_only_a_few_bytes_is_cut_off(folder: Path) -> None:
    path = folder / "records.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"v')
    assert len(read_records(path, repair=True)) == 40
    assert path.read_bytes() == whole


@pytest.mark.parametrize("damage", [b"garbage\n", b"\n", b'["a list"]\n', b'{"v":1\n'])
def test_damage_in_the_middle_is_refused_with_its_line(folder: Path, damage: bytes) -> None:
    path = folder / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = b"".join(lines[:12]) + damage + b"".join(lines[12:])
    path.write_bytes(damaged)
    for repair in (False, True):
        with pytest.raises(RecordsError, match=r"line 13: not a JSON record; the file is damaged"):
            read_records(path, repair=repair)
    assert path.read_bytes() == damaged  # never "repaired" by cutting good records away


def test_start_on_a_new_folder_writes_the_manifest(tmp_path: Path, finished: Path) -> None:
    tournament = Tournament(load_config(finished / "t.toml"), tmp_path / "new")
    assert tournament.store.start(tournament.manifest()) == set()
    assert json.loads((tmp_path / "new" / "manifest.json").read_text(encoding="utf-8")) == tournament.manifest()
    assert not (tmp_path / "new" / "records.jsonl").exists()


def test_start_returns_the_complete_games_and_drops_unfinished_ones(folder: Path) -> None:
    path = folder / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    by_game = games(folder)
    ids = list(by_game)
    # The last game lost its last two rounds (and so its final line) in a crash.
    path.write_text("".join(lines[:-2]), encoding="utf-8")
    tournament = Tournament(load_config(folder.parent / "t.toml"), folder)
    done = tournament.store.start(tournament.manifest())
    assert done == set(ids[:-1])
    kept = records(folder)
    assert len(kept) == 35 and {r["game"] for r in kept} == set(ids[:-1])
    assert "".join(lines[:35]) == path.read_text(encoding="utf-8")  # the complete games are kept as they were


def test_start_repairs_a_torn_line_and_drops_its_game(folder: Path) -> None:
    path = folder / "records.jsonl"
    raw = path.read_bytes()
    lines = raw.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-3]) + lines[-3][:100])  # killed while writing the last game
    tournament = Tournament(load_config(folder.parent / "t.toml"), folder)
    done = tournament.store.start(tournament.manifest())
    assert len(done) == 7
    assert path.read_bytes() == b"".join(lines[:35])


def test_start_refuses_a_folder_of_another_configuration(folder: Path) -> None:
    text = (folder.parent / "t.toml").read_text(encoding="utf-8")
    changed = write(folder.parent / "changed.toml", text.replace("seed = 11", "seed = 12"))
    tournament = Tournament(load_config(changed), folder)
    with pytest.raises(RecordsError) as caught:
        tournament.store.start(tournament.manifest())
    message = str(caught.value)
    assert "holds another tournament's results" in message
    assert "seed was 11, now 12" in message
    assert "--fresh" in message
    assert len(records(folder)) == 40  # nothing touched
    # Fresh: the old records go, the new manifest is written.
    assert tournament.store.start(tournament.manifest(), fresh=True) == set()
    assert not (folder / "records.jsonl").exists()
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["config"]["seed"] == 12


def test_append_then_close_makes_the_lines_readable(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path, sync_interval=0.0)
    store.append(['{"game":"a","final":false}\n', '{"game":"a","final":true}\n'])
    store.append(['{"game":"b","final":true}\n'])
    store.close()
    assert [r["game"] for r in store.records()] == ["a", "a", "b"]
    assert [len(rounds) for rounds in store.games()] == [2, 1]


def test_games_yields_complete_games_only(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    (tmp_path / "records.jsonl").write_text(
        '{"game":"a","final":false}\n{"game":"b","final":true}\n{"game":"a","final":true}\n'
        '{"game":"c","final":false}\n', encoding="utf-8")
    assert [[r["game"] for r in rounds] for rounds in store.games()] == [["a", "a"], ["b"]]


def test_a_manifest_that_is_not_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(RecordsError, match="cannot be read"):
        ResultsStore(tmp_path).manifest()


CONFIG: dict[str, Any] = {
    "name": "t", "seed": 1, "rules": {"profile": "nepali", "rounds": 5},
    "bots": [{"name": "a", "seed": 0}, {"name": "b", "seed": 1}],
}


@pytest.mark.parametrize(("change", "words"), [
    (lambda c: c.update(seed=2), "seed was 1, now 2"),
    (lambda c: c["rules"].update(rounds=10), "rules.rounds was 5, now 10"),
    (lambda c: c["bots"][1].update(seed=5), "bots[1].seed was 1, now 5"),
    (lambda c: c["bots"].append({"name": "c", "seed": 2}), "bots was"),
    (lambda c: c.update(deal_file="x.deals"), 'deal_file was null, now "x.deals"'),
    (lambda c: None, "the planned schedule differs"),
])
def test_difference_names_the_first_changed_key(change: Any, words: str) -> None:
    new = json.loads(json.dumps(CONFIG))
    change(new)
    assert words in _difference(CONFIG, new)


# --- the hand-built record line -------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["nepali", "dy", "pagat"])
def test_record_lines_are_the_json_of_the_round_dicts(profile: str) -> None:
    # round_json builds each line's round fields by string formatting, for speed; it must stay
    # exactly json.dumps of round_dict, the readable definition of the format.
    rules = Rules.profile(profile)
    assignment = Assignment(1, 1, 3, 0, ("a", "b", "c", "d"), 3)
    for game in range(1, 40):
        record = play_fast(rules, [RandomBot(s) for s in range(4)], assignment.seats, seeded_deals(9, game),
                           table_id="t1", game_id=assignment.id, game_number=game, first_dealer=3)
        assert record is not None
        for result in record.rounds:
            assert round_json(result) == json.dumps(round_dict(result), separators=(",", ":"))
        lines = game_lines("t", 9, "seed", assignment, record)
        parsed = [json.loads(line) for line in lines]
        assert [p["final"] for p in parsed] == [False] * (len(parsed) - 1) + [True]
        assert parsed[-1]["places"] == list(record.places)
        assert [p["scores"] for p in parsed] == [list(r.scores) for r in record.rounds]
