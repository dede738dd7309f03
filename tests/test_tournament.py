"""Tournaments end to end: determinism whatever the concurrency, the fast path, faults and
disqualification, house bots, deal files and a fresh process per game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.core.cards import Hand
from arena.core.dealing import seeded_deal
from arena.event.plan.manifest import Manifest
from arena.event.setup.config import load_config, read_deal_file
from tests.helpers.runs import (
    BOTS,
    COMMAND,
    CRASHER,
    KEPT,
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
    # A new process for every game at one table, one process each for the whole run at four: the same records.
    for name, concurrency, kept in (("grpc1", 1, ""), ("grpc4", 4, KEPT)):
        config = write(tmp_path / f"{name}.toml", tournament_text(kind="command", spec=COMMAND,
                                                                  concurrency=concurrency, seed=3, tournament=kept))
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


def test_a_faulty_bot_is_disqualified_its_blocks_dropped_and_the_run_finishes(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(
        FIVE, spec=NO_FAST, a=CRASHER, deal_sets=2, concurrency=1, extra="[faults]\ndisqualify_after = 40\n"))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress", "--format", "json")
    assert result.returncode == 0, result.stderr
    # One game of the crasher is 65 faulty decisions (every card), past the limit of 40.
    assert "a was disqualified: 65 faulty decisions, all crashes (the limit is 40)" in result.stderr
    played = games(tmp_path / "out")
    with_a = [g for g, rounds in played.items() if "a" in rounds[0]["seats"]]
    without_a = [g for g, rounds in played.items() if "a" not in rounds[0]["seats"]]
    # The block it was playing is finished (by the fallback player); its other 7 blocks are dropped.
    assert len(with_a) == 4 and len({g.rsplit("-p", 1)[0] for g in with_a}) == 1
    assert len(without_a) == 8  # the two blocks of b, c, d, e
    faults = {g: [f for r in played[g] for f in r["faults"]] for g in with_a}
    first, *rest = sorted(with_a, key=lambda g: min(i for i, r in enumerate(records(tmp_path / "out"))
                                                     if r["game"] == g))
    assert [f["kind"] for f in faults[first]] == ["crash"] * 65
    for game in rest:
        [fault] = faults[game]
        assert fault["kind"] == "absent" and fault["detail"].startswith("a is disqualified: 65 faulty decisions")
    assert all(not r["faults"] for g in without_a for r in played[g])
    rows = {row["bot"]: row for row in json.loads(result.stdout)["standings"]}
    assert rows["a"]["status"] == "disqualified" and rows["a"]["rank"] is None
    assert [rows[b]["rank"] for b in "bcde"] != [None] * 4 and all(rows[b]["status"] == "finished" for b in "bcde")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["statuses"]["a"]["status"] == "disqualified"
    plan = Manifest.from_dict(manifest).plan
    assert plan.dropped_count == 7 and len(list(plan.dropped())) == 7
    assert all("a" in block.bots for block in plan.dropped())
    assert cli("verify", tmp_path / "out").returncode == 0
    # The faults column counts fault records (a crash per card, a game the fallback sat in), the limit decisions:
    # a note says which is which; the report calls the games after the disqualification what they were.
    text = cli("standings", tmp_path / "out").stdout
    assert "a's 68 faults are every fault recorded (crash 65, disqualified 3)" in " ".join(text.split())
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "crash 65, disqualified 3" in report and "absent 3" not in report
    # A resume keeps the disqualification and plays nothing more.
    again = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert again.returncode == 0 and "0 games played, 12 already recorded" in again.stderr


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
    ranks = [line.split()[0] for line in table[5:14]]  # after the winner and a two-line header
    # One deal set tells nobody apart: every ranked bot could be 1st to 9th; their places are 1 to 9.
    assert table[0].startswith("Winner: ") and ranks == ["1-9"] * 9
    assert [row["rank"] for row in rows] == [*range(1, 10), None, None, None]
    assert [row["rank_range"] for row in rows] == [[1, 9]] * 9 + [None] * 3


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
    published = read_deal_file(deals)
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


def test_fresh_process_launches_a_process_per_game(tmp_path: Path) -> None:
    # Two bots launched as commands, two in-process: each game launches its own two processes.
    text = tournament_text(("r1", "r2"), kind="command", spec=COMMAND, deal_sets=1, tournament="fresh_process = true\n")
    text += "".join(f'\n[[bots]]\nname = "r{n}"\npython = "{RANDOM}"\nseed = {n}\n' for n in (3, 4))
    config = write(tmp_path / "fresh.toml", text)
    assert [b.kind for b in load_config(config).bots] == ["command", "command", "python", "python"]
    assert [b.seed for b in load_config(config).bots] == [1, 2, 3, 4]
    summary = run(config, tmp_path / "fresh")
    assert summary.played == 4
    logs = tmp_path / "fresh" / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["r1.log", "r2.log"]
    for name in ("r1", "r2"):
        text = (logs / f"{name}.log").read_text(encoding="utf-8")
        assert text.count(" launched: ") == 4  # a process of its own for each game
        assert "--token" not in text  # the token is in the environment, never on the command line or in the log
    # The random bot plays the same in a fresh process as anywhere else.
    same = write(tmp_path / "local.toml", tournament_text(deal_sets=1))
    run(same, tmp_path / "local")
    assert stripped(tmp_path / "fresh") == stripped(tmp_path / "local")


@pytest.mark.slow
def test_a_launched_bot_that_keeps_dying_is_restarted_then_waited_for_or_played_by_fallback(tmp_path: Path) -> None:
    # Its process exits at its 30th card, every time: the arena starts it again (3 times by default),
    # then counts it as broken. Under forfeit = "wait", run stops with the games outstanding and says
    # why; under "fallback", the fallback player takes its seats and the run completes.
    quitter = f"{{python}} {BOTS} Quitter --arena {{address}}"
    text = tournament_text(kind="command", spec=COMMAND, r1=quitter, concurrency=1, tournament=KEPT).replace(
        "[time]\n", "[time]\nreconnect_grace_s = 0.5\n")
    waiting = write(tmp_path / "wait.toml", text)
    result = cli("run", waiting, "--results", tmp_path / "out", "--no-progress", timeout=90)
    assert result.returncode == 3, result.stderr
    assert "games outstanding, waiting for: r1 (its process ended 4 times, the last time with exit status 3" in (
        result.stderr)
    log = (tmp_path / "out" / "logs" / "r1.log").read_text(encoding="utf-8")
    assert log.count(" launched: ") == 4 and log.count("ended with exit status 3") == 4
    assert cli("verify", tmp_path / "out").returncode == 1  # games are missing: the run is not over
    assert "4 games played" in result.stderr  # one game per process: it dies in each
    # Resumed with one restart and the fallback policy: two more processes, two more games, then the
    # fallback player takes r1's seats in the last two.
    changed = text.replace("[tournament]\n", '[tournament]\nforfeit = "fallback"\n')
    falling_back = write(tmp_path / "fallback.toml", changed.replace("[time]\n", "[faults]\nrestarts = 1\n[time]\n"))
    result = cli("run", falling_back, "--results", tmp_path / "out", "--no-progress", timeout=90)
    assert result.returncode == 0, result.stderr
    assert "4 games played, 4 already recorded" in result.stderr
    faults = {game: [f for r in rounds for f in r["faults"]] for game, rounds in games(tmp_path / "out").items()}
    kinds = sorted(f["kind"] for found in faults.values() for f in found)
    assert kinds == ["absent"] * 2 + ["disconnect"] * 6
    assert all(f["detail"].startswith("r1 is absent: its process ended 2 times") for found in faults.values()
               for f in found if f["kind"] == "absent")
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
                                                     "'r3' (RandomBot) with options {'aggression': 0.5}")
    assert not (tmp_path / "out").exists()
