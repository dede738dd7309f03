"""The results folder: records in their public format, the manifest, torn lines and damage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.core.cards import Card
from arena.core.dealing import seeded_deals
from arena.core.rules import Rules
from arena.errors import RecordsError
from arena.event.plan.manifest import Manifest, describe_difference, digest
from arena.event.plan.schedule import Assignment
from arena.event.setup.config import load_config
from arena.players.fast import play_fast
from arena.records.format import game_lines, read_records, round_dict, round_json
from arena.records.store import ResultsStore
from sample_bots.random_bot import RandomBot
from tests.helpers.runs import copy_results, finished_tournament, games, records, run, write

FIELDS = {
    "v", "tournament", "game", "block", "schedule_round", "group", "deal_set", "rotation", "seed", "deals", "rules",
    "seats", "first_dealer", "deal", "round", "attempt", "dealer", "trump", "hands", "calls", "tricks", "tricks_won",
    "scores", "totals", "faults", "redeals", "fallbacks", "final", "timings",
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished tournament: 4 random bots, 2 deal sets, 8 games of 5 rounds."""
    return finished_tournament(tmp_path_factory.mktemp("store"), seed=11)


@pytest.fixture
def folder(finished: Path, tmp_path: Path) -> Path:
    """A private copy of the finished tournament's results folder (with its configuration beside)."""
    return copy_results(finished, tmp_path)


def test_one_line_per_round_with_every_field(finished: Path) -> None:
    lines = records(finished / "results")
    assert len(lines) == 8 * 5
    for record in lines:
        assert set(record) == FIELDS | ({"places", "versions"} if record["final"] else set())
        assert record["v"] == 2 and record["fallbacks"] == [0, 0, 0, 0]
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


def test_manifest_holds_the_config_and_the_plan(finished: Path) -> None:
    manifest = json.loads((finished / "results" / "manifest.json").read_text(encoding="utf-8"))
    config = load_config(finished / "t.toml")
    assert manifest["format_version"] == 3
    assert manifest["config"] == config.to_dict()
    assert manifest["identity"] == digest(config.identity())
    plan = Manifest.from_dict(manifest).plan
    assert plan.adaptive is False and plan.rotation == "cyclic" and plan.rounds == 2
    assert sorted(a.id for a in plan.games()) == sorted(games(finished / "results"))
    assert manifest["house_bots"] == [] and manifest["statuses"] == {}
    assert manifest["tournament"] == "t"


def test_the_records_file_reads_back_as_typed_records(folder: Path) -> None:
    typed = read_records(folder / "records.jsonl")
    raw = records(folder)
    assert [r.game for r in typed] == [r["game"] for r in raw]
    assert [list(r.scores) for r in typed] == [r["scores"] for r in raw]
    assert [r.line for r in typed] == list(range(1, 41))
    assert [r.tricks[0].cards for r in typed] == [tuple(map(Card.parse, r["tricks"][0]["cards"])) for r in raw]
    assert read_records(folder / "nothing.jsonl") == []


@pytest.mark.parametrize(("edit", "words"), [
    (lambda r: r.pop("scores"), "line 13: the record has no 'scores' field"),
    (lambda r: r.update(seats=["a", "b"]), "line 13: field 'seats' must be a list of 4 strings"),
    (lambda r: r.update(final="yes"), "line 13: field 'final' must be true or false, not 'yes'"),
    (lambda r: r.update(v=9), "line 13: record format version 9 is not one this arena reads"),
    (lambda r: r.update(faults=[{"seat": 0}]), "line 13 (a fault): the record has no 'kind' field"),
    (lambda r: r.clear(), "line 13: the record has no 'v' field"),
])
def test_a_record_with_a_wrong_field_is_refused_naming_the_line_and_the_field(
    folder: Path, edit: Any, words: str
) -> None:
    path = folder / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[12])
    edit(record)
    lines[12] = json.dumps(record) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RecordsError) as caught:
        read_records(path)
    assert words in str(caught.value)


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


def test_open_on_a_new_folder_finds_nothing(tmp_path: Path) -> None:
    assert ResultsStore(tmp_path / "new").open() == []
    assert not (tmp_path / "new" / "records.jsonl").exists()


def test_open_returns_the_complete_games_and_drops_unfinished_ones(folder: Path) -> None:
    path = folder / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    ids = list(games(folder))
    # The last game lost its last two rounds (and so its final line) in a crash.
    path.write_text("".join(lines[:-2]), encoding="utf-8")
    done = ResultsStore(folder).open()
    assert [g.game for g in done] == ids[:-1]
    kept = records(folder)
    assert len(kept) == 35 and {r["game"] for r in kept} == set(ids[:-1])
    assert "".join(lines[:35]) == path.read_text(encoding="utf-8")  # the complete games are kept as they were


def test_open_repairs_a_torn_line_and_drops_its_game(folder: Path) -> None:
    path = folder / "records.jsonl"
    raw = path.read_bytes()
    lines = raw.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-3]) + lines[-3][:100])  # killed while writing the last game
    assert len(ResultsStore(folder).open()) == 7
    assert path.read_bytes() == b"".join(lines[:35])


def test_records_without_their_manifest_are_refused_not_deleted(folder: Path) -> None:
    (folder / "manifest.json").unlink()
    before = (folder / "records.jsonl").read_bytes()
    with pytest.raises(RecordsError, match=r"manifest\.json is missing"):
        ResultsStore(folder).open()
    with pytest.raises(RecordsError, match=r"manifest\.json is missing"):
        run(folder.parent / "t.toml", folder)
    assert (folder / "records.jsonl").read_bytes() == before


def test_a_run_refuses_a_folder_of_another_configuration(folder: Path) -> None:
    text = (folder.parent / "t.toml").read_text(encoding="utf-8")
    changed = write(folder.parent / "changed.toml", text.replace("seed = 11", "seed = 12"))
    status = (folder / "status.json").read_bytes()
    with pytest.raises(RecordsError) as caught:
        run(changed, folder)
    # A refused run writes nothing: the status is still the finished run's, not "ended without finishing".
    assert (folder / "status.json").read_bytes() == status and json.loads(status)["state"] == "finished"
    message = str(caught.value)
    assert "holds another tournament's results" in message
    assert "seed was 11, now 12" in message
    assert "--fresh" in message
    assert len(records(folder)) == 40  # nothing touched
    # Fresh: the old records go, the new manifest is written.
    run(changed, folder, fresh=True)
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["config"]["seed"] == 12
    assert {r["seed"] for r in records(folder)} == {12}


def test_append_then_close_makes_the_lines_readable(folder: Path, tmp_path: Path) -> None:
    lines = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    store = ResultsStore(tmp_path / "copy", sync_interval=0.0)
    store.folder.mkdir()
    store.append(lines[:5])
    store.append(lines[5:12])
    store.close()
    assert [r.game for r in store.records()] == [json.loads(line)["game"] for line in lines[:12]]
    assert [len(g.rounds) for g in store.games()] == [5, 5]  # the third game is not complete


def test_a_manifest_that_is_not_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(RecordsError, match="cannot be read"):
        ResultsStore(tmp_path).manifest()


CONFIG: dict[str, Any] = {
    "name": "t", "seed": 1, "rules": {"profile": "nepali", "rounds": 5}, "deal_file": None,
    "format_options": {"opponents": ["a", "b"]},
}


@pytest.mark.parametrize(("change", "words"), [
    (lambda c: c.update(seed=2), "seed was 1, now 2"),
    (lambda c: c["rules"].update(rounds=10), "rules.rounds was 5, now 10"),
    (lambda c: c["format_options"]["opponents"].append("c"), "format_options.opponents was ['a', 'b'], now "
                                                            "['a', 'b', 'c']"),
    (lambda c: c.update(deal_file="x.deals"), "deal_file is new (now 'x.deals')"),
    (lambda c: None, "nothing"),
])
def test_difference_names_the_first_changed_key_in_words(change: Any, words: str) -> None:
    new = json.loads(json.dumps(CONFIG))
    change(new)
    assert describe_difference(CONFIG, new) == words


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
