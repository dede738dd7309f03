"""Tournaments end to end: determinism whatever the concurrency, the fast path, faults and
disqualification, house bots, deal files and a fresh process per game."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.core.cards import Hand
from arena.core.dealing import DealFile, seeded_deal
from arena.event.config import load_config
from arena.event.tournament import Tournament
from tests.data.runs import (
    BOTS,
    COMMAND,
    CRASHER,
    NO_FAST,
    RANDOM,
    STUBBORN,
    cli,
    games,
    records,
    run,
    standings,
    stripped,
    tournament_text,
    write,
)

FIVE = ("a", "b", "c", "d", "e")


def think_ms(folder: Path) -> list[float]:
    return [t for r in records(folder) if r["final"] for t in r["timings"]["think_ms"]]


def test_the_same_seed_gives_the_same_records_whatever_the_concurrency(tmp_path: Path) -> None:
    one = write(tmp_path / "one.toml", tournament_text(FIVE, concurrency=1))
    four = write(tmp_path / "four.toml", tournament_text(FIVE, concurrency=4))
    run(one, tmp_path / "one")
    run(four, tmp_path / "four")
    assert len(records(tmp_path / "one")) == 5 * 4 * 2 * 5
    assert stripped(tmp_path / "one") == stripped(tmp_path / "four")
    other_seed = write(tmp_path / "seed.toml", tournament_text(FIVE, seed=8))
    run(other_seed, tmp_path / "seed")
    assert stripped(tmp_path / "seed").isdisjoint(stripped(tmp_path / "one"))


def test_records_are_byte_identical_apart_from_timings(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(FIVE, concurrency=1))
    run(config, tmp_path / "x")
    run(config, tmp_path / "y")

    def lines(folder: Path) -> list[bytes]:
        # The timings come last on each line: cut them off and compare the bytes before them.
        return [line.split(b',"timings"')[0] for line in (folder / "records.jsonl").read_bytes().splitlines()]

    assert lines(tmp_path / "x") == lines(tmp_path / "y")


def test_bots_over_grpc_give_the_same_records_at_any_concurrency_and_as_in_process(tmp_path: Path) -> None:
    for name, concurrency in (("grpc1", 1), ("grpc4", 4)):
        config = write(tmp_path / f"{name}.toml",
                       tournament_text(kind="command", spec=COMMAND, concurrency=concurrency, seed=3))
        summary = run(config, tmp_path / name)
        assert (summary.played, summary.faults) == (8, 0)
    in_process = write(tmp_path / "local.toml", tournament_text(seed=3))
    run(in_process, tmp_path / "local")
    assert stripped(tmp_path / "grpc1") == stripped(tmp_path / "grpc4") == stripped(tmp_path / "local")
    assert sorted(p.name for p in (tmp_path / "grpc1" / "logs").iterdir()) == [f"r{i}.log" for i in (1, 2, 3, 4)]


def test_the_fast_path_gives_the_records_of_the_normal_table(tmp_path: Path) -> None:
    fast = write(tmp_path / "fast.toml", tournament_text(FIVE, spec=RANDOM))
    normal = write(tmp_path / "normal.toml", tournament_text(FIVE, spec=NO_FAST))
    run(fast, tmp_path / "fast")
    run(normal, tmp_path / "normal")
    assert stripped(tmp_path / "fast") == stripped(tmp_path / "normal")
    # The fast path measures no thinking time; the normal table does: both paths really ran.
    assert set(think_ms(tmp_path / "fast")) == {0.0}
    assert any(t > 0 for t in think_ms(tmp_path / "normal"))


def test_a_mixed_table_falls_back_to_the_normal_path(tmp_path: Path) -> None:
    mixed = write(tmp_path / "mixed.toml", tournament_text(FIVE, spec=RANDOM, c=NO_FAST))
    fast = write(tmp_path / "fast.toml", tournament_text(FIVE, spec=RANDOM))
    run(mixed, tmp_path / "mixed")
    run(fast, tmp_path / "fast")
    assert stripped(tmp_path / "mixed") == stripped(tmp_path / "fast")
    by_game = games(tmp_path / "mixed")
    for rounds in by_game.values():
        timings = rounds[-1]["timings"]["think_ms"]
        if "c" not in rounds[0]["seats"]:
            assert timings == [0.0] * 4


def test_a_faulty_bot_is_disqualified_and_the_run_finishes(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(
        FIVE, spec=NO_FAST, a=CRASHER, deal_sets=2, concurrency=1, extra="[faults]\ndisqualify_after = 40\n"))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "a was disqualified: 40 faults (the limit is 40)" in result.stderr
    order = list(games(tmp_path / "out"))
    assert len(order) == 40  # every planned game was played
    kinds: list[tuple[str, str]] = []
    for game in order:
        for record in games(tmp_path / "out")[game]:
            seats = record["seats"]
            assert all(seats[f["seat"]] == "a" for f in record["faults"])  # only the crasher faults
            kinds.extend((game, f["kind"]) for f in record["faults"])
    crashes = [k for _, k in kinds if k == "crash"]
    assert len(crashes) >= 40
    first_dq = next(i for i, (_, kind) in enumerate(kinds) if kind == "disconnect")
    assert all(kind == "crash" for _, kind in kinds[:first_dq])
    assert all(kind == "disconnect" for _, kind in kinds[first_dq:])  # later games: fallbacks only
    detail = next(f["detail"] for r in records(tmp_path / "out") for f in r["faults"] if f["kind"] == "disconnect")
    assert "a is disqualified" in detail
    rows = {row["bot"]: row for row in json.loads(result.stdout)["standings"]}
    assert rows["a"]["faults"] == len(kinds)
    assert all(rows[b]["faults"] == 0 for b in "bcde")
    assert cli("verify", tmp_path / "out").returncode == 0


def test_without_a_limit_a_faulty_bot_plays_every_game_with_fallbacks(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(spec=NO_FAST, r1=CRASHER, deal_sets=1))
    summary = run(config, tmp_path / "out")
    assert summary.disqualified == {}
    assert summary.played == 4
    faults = [f for r in records(tmp_path / "out") for f in r["faults"]]
    assert {f["kind"] for f in faults} == {"crash"}
    assert len(faults) == 4 * 5 * 13  # one per card the crasher was asked for
    assert all(f["fallback"] for f in faults)


def test_house_bots_fill_the_field_and_are_unranked(tmp_path: Path) -> None:
    names = [f"p{i}" for i in range(1, 10)]
    config = write(tmp_path / "t.toml", tournament_text(names, deal_sets=1))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["house_bots"] == ["house-1", "house-2", "house-3"]
    seated = {bot for r in records(tmp_path / "out") for bot in r["seats"]}
    assert seated == set(names) | {"house-1", "house-2", "house-3"}
    rows = standings(tmp_path / "out")["standings"]
    assert [row["house"] for row in rows] == [False] * 9 + [True] * 3
    table = result.stdout.splitlines()
    house_lines = [line for line in table if "(house)" in line]
    assert len(house_lines) == 3
    assert all(line.split()[0] == "-" for line in house_lines)
    ranks = [line.split()[0] for line in table[2:11]]
    assert ranks == [str(i) for i in range(1, 10)]


def test_head_to_head_with_copies_plays_two_of_each(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(
        ("v2", "v1"), deal_sets=2, tournament='format = "head-to-head"\n',
        extra='[head-to-head]\na = "v2"\nb = "v1"\n'))
    summary = run(config, tmp_path / "out")
    assert summary.played == 8
    assert {frozenset(r["seats"]) for r in records(tmp_path / "out")} == {frozenset({"v2", "v1", "v2#2", "v1#2"})}


def test_a_deal_file_tournament_replays_exactly_those_deals(tmp_path: Path) -> None:
    deals = tmp_path / "contest.deals"
    made = cli("deals", "--seed", "99", "--count", "2", "--out", deals)
    assert made.returncode == 0, made.stderr
    write(tmp_path / "t.toml", tournament_text(seed=1, deal_sets=0, tournament='deal_file = "contest.deals"\n'))
    # Run from the configuration's folder, by a relative path, as an organiser would ...
    result = cli("run", "t.toml", "--results", "out", "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "8 games played" in result.stderr
    published = DealFile.read(deals)
    lines = records(tmp_path / "out")
    assert {r["deals"] for r in lines} == {"file:contest.deals"}
    assert {r["deal_set"] for r in lines} == {1, 2}
    for record in lines:
        deal = published.deals[(record["deal_set"], record["round"], record["attempt"])]
        for position in range(4):
            seat = (record["dealer"] + 1 + position) % 4
            assert Hand.parse(record["hands"][seat]) == deal.hands[position]
        assert deal != seeded_deal(1, record["deal_set"], record["round"])  # not the config's own seed
        assert deal == seeded_deal(99, record["deal_set"], record["round"])
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["config"]["deal_file_sha256"]) == 64
    # ... and verify from anywhere else: the manifest must still locate the deal file.
    verified = cli("verify", tmp_path / "out")
    assert verified.returncode == 0, verified.stdout


def test_fresh_process_launches_a_process_per_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two bots launched as commands, two in-process: each game launches its own two processes.
    text = tournament_text(("r1", "r2"), kind="command", spec=COMMAND, deal_sets=1, tournament="fresh_process = true\n")
    text += "".join(f'\n[[bots]]\nname = "r{n}"\npython = "{RANDOM}"\nseed = {n}\n' for n in (3, 4))
    config = write(tmp_path / "fresh.toml", text)
    assert [b.kind for b in load_config(config).bots] == ["command", "command", "python", "python"]
    assert [b.seed for b in load_config(config).bots] == [1, 2, 3, 4]
    launched: list[tuple[str, str]] = []
    original = Tournament._launch

    def counting(self: Tournament, bot: Any, token: str) -> Any:
        launched.append((bot.name, token))
        return original(self, bot, token)

    monkeypatch.setattr(Tournament, "_launch", counting)
    summary = run(config, tmp_path / "fresh")
    assert summary.played == 4
    assert sorted(name for name, _ in launched) == ["r1"] * 4 + ["r2"] * 4
    assert len({token for _, token in launched}) == 8  # a token of its own for each process
    assert sorted(p.name for p in (tmp_path / "fresh" / "logs").iterdir()) == ["r1.log", "r2.log"]
    # The random bot plays the same in a fresh process as anywhere else.
    same = write(tmp_path / "local.toml", tournament_text(deal_sets=1))
    run(same, tmp_path / "local")
    assert stripped(tmp_path / "fresh") == stripped(tmp_path / "local")


def test_a_launched_bot_that_dies_plays_on_with_fallbacks(tmp_path: Path) -> None:
    # Its process exits in the middle of the first game: that game and every later one record the
    # fault and play the fallback for it; the tournament does not wait for it, nor stop.
    quitter = f"{{python}} {BOTS} Quitter --arena {{address}} --token {{token}}"
    config = write(tmp_path / "t.toml", tournament_text(kind="command", spec=COMMAND, r1=quitter, concurrency=1)
                   .replace("connect_timeout_s = 30", "connect_timeout_s = 20"))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "8 games played, 0 already recorded, 8 faults" in result.stderr
    faults = {game: [f for r in rounds for f in r["faults"]] for game, rounds in games(tmp_path / "out").items()}
    assert all(len(found) == 1 and found[0]["kind"] == "disconnect" for found in faults.values())
    gone = [game for game, found in faults.items() if "r1 is gone: its process ended with exit status 3" in
            found[0]["detail"]]
    assert len(gone) == 7  # every game after the one it died in
    assert cli("verify", tmp_path / "out").returncode == 0


def test_illegal_answers_are_refused_then_the_fallback_is_played(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(spec=NO_FAST, r2=STUBBORN, deal_sets=1,
                                                       extra="[faults]\nmax_retries = 2\n"))
    run(config, tmp_path / "out")
    for record in records(tmp_path / "out"):
        faults = record["faults"]
        assert {f["kind"] for f in faults} <= {"illegal_card"}
        assert all(record["seats"][f["seat"]] == "r2" for f in faults)
        # Three illegal answers (the first and two retries) for each card, the last with the fallback.
        fallbacks = [f for f in faults if f["fallback"]]
        assert len(faults) == 3 * len(fallbacks)
    assert cli("verify", tmp_path / "out").returncode == 0


@pytest.mark.parametrize(("special", "words"), [
    ({"r2": "sample_bots.nothing_here:Bot"}, "cannot load the in-process bot 'sample_bots.nothing_here:Bot'"),
    ({"r2": "sample_bots.random_bot:NoSuchClass"}, "cannot load the in-process bot"),
])
def test_an_in_process_bot_that_cannot_be_loaded_is_refused_before_anything_runs(
    tmp_path: Path, special: dict[str, str], words: str
) -> None:
    config = write(tmp_path / "t.toml", tournament_text(**special))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 2
    assert words in result.stderr
    assert not (tmp_path / "out").exists()


def test_options_a_bot_does_not_take_are_refused_before_anything_runs(tmp_path: Path) -> None:
    text = tournament_text().replace('name = "r3"\n', 'name = "r3"\noptions = { aggression = 0.5 }\n')
    result = cli("run", write(tmp_path / "t.toml", text), "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith("callbreak-arena: error: cannot create the in-process bot "
                                                     "RandomBot with options {'aggression': 0.5}")
    assert not (tmp_path / "out").exists()
