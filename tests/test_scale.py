"""Scale: a plan described by its design rather than listed, worker processes that play the games of
in-process bots, and records that stay those of one process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.event.plan.manifest import Manifest
from arena.event.plan.schedule import Schedule, play_order
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from tests.helpers.runs import (
    COMMAND,
    CRASHER,
    NO_FAST,
    RANDOM,
    cli,
    keep_games,
    records,
    run,
    stripped,
    stripped_list,
    tournament_text,
    write,
)

FIVE = ("a", "b", "c", "d", "e")
WORKERS = "workers = 2\n"


def manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return data


def as_format_2(folder: Path) -> None:
    """Rewrites a folder's manifest in the earlier form, which listed every block."""
    data = manifest(folder)
    plan = Manifest.from_dict(data).plan
    data["format_version"] = 2
    data["plan"] = {"rotation": plan.rotation, "rounds": plan.rounds, "adaptive": plan.adaptive,
                    "sequential": plan.sequential, "field": plan.field,
                    "blocks": [b.to_list() for b in plan.blocks()],
                    "dropped": [plan.seat(b).to_list() for b in plan.dropped()]}
    (folder / "manifest.json").write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")


# -- the plan -----------------------------------------------------------------------------------------


def test_a_plan_of_many_deal_sets_is_described_not_listed(tmp_path: Path) -> None:
    text = tournament_text(deal_sets=200_000)
    tournament = Tournament(parse_config(text), tmp_path / "out")
    tournament.prepare()
    data = manifest(tmp_path / "out")
    assert (tmp_path / "out" / "manifest.json").stat().st_size < 4000
    assert data["format_version"] == 3 and data["plan"]["listed"] == [] and data["plan"]["cuts"] == {}
    assert data["plan"]["design"]["deal_sets"] == [[1, 200_000]]
    assert data["plan"]["block_count"] == 200_000 and len(data["plan"]["sha256"]) == 64
    plan = Manifest.from_dict(data).plan
    plan.verify()
    # Any round is made again on its own, seated as a schedule seats it.
    made = plan.seat(plan.round_at(123_456).blocks[0])
    assert (made.round, made.deal_set, made.bots) == (123_456, 123_456, frozenset({"r1", "r2", "r3", "r4"}))
    schedule = Schedule(bots=["r1", "r2", "r3", "r4"], format="round-robin", rotation="cyclic",
                        deal_sets=range(1, 200_001), seed=7)
    assert made == schedule.round_blocks(123_456)[0]


def test_the_plan_made_again_must_match_its_sha256_and_the_seats_recorded(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(FIVE, deal_sets=1))
    run(config, tmp_path / "out")
    original = manifest(tmp_path / "out")

    def tampered(edit: Any) -> None:
        data = json.loads(json.dumps(original))
        edit(data["plan"]["design"])
        (tmp_path / "out" / "manifest.json").write_text(json.dumps(data), encoding="utf-8")

    # As if a version that plans differently had made the blocks: other deal sets for the rounds.
    tampered(lambda design: design.update(deal_sets=[[2, 3]]))
    verified = cli("verify", tmp_path / "out")
    assert verified.returncode == 1 and "does not make the plan it was written with" in verified.stdout
    resumed = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert resumed.returncode == 1
    assert "does not make the plan it was written with" in resumed.stderr.splitlines()[-1]
    # The seats within a block are drawn from the seed, outside the SHA-256: the records say where they
    # were, and the audit holds the plan to them. A run plans from its configuration, whose seed is the
    # folder's, and writes the manifest again.
    tampered(lambda design: design.update(seed=8))
    verified = cli("verify", tmp_path / "out")
    assert verified.returncode == 1 and "are not the planned" in verified.stdout
    resumed = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert resumed.returncode == 0 and "0 games played, 20 already recorded" in resumed.stderr
    assert manifest(tmp_path / "out")["plan"] == original["plan"]
    assert cli("verify", tmp_path / "out").returncode == 0


def test_a_folder_of_the_earlier_manifest_form_resumes_and_verifies(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(FIVE, deal_sets=2))
    run(config, tmp_path / "whole")
    keep_games(tmp_path / "whole", tmp_path / "part", 13, torn=True, partial=2)
    as_format_2(tmp_path / "part")
    assert cli("verify", tmp_path / "whole").returncode == 0
    resumed = run(config, tmp_path / "part")
    assert (resumed.played, resumed.skipped) == (27, 13)
    assert stripped_list(tmp_path / "part") == stripped_list(tmp_path / "whole")
    assert manifest(tmp_path / "part")["format_version"] == 3
    assert manifest(tmp_path / "part")["plan"] == manifest(tmp_path / "whole")["plan"]
    as_format_2(tmp_path / "whole")  # a finished folder of the earlier form passes the audit as it is
    assert cli("verify", tmp_path / "whole").returncode == 0


def test_a_late_entrant_and_more_deal_sets_plan_as_from_the_start(tmp_path: Path) -> None:
    # Four bots for 2 deal sets, then a fifth bot and 3 deal sets: the plan is the one a run with
    # five bots and 3 deal sets makes, and so are the records.
    config = write(tmp_path / "t.toml", tournament_text(FIVE[:4], deal_sets=2))
    run(config, tmp_path / "grown")
    write(config, tournament_text(FIVE, deal_sets=3))
    run(config, tmp_path / "grown")
    whole = write(tmp_path / "whole.toml", tournament_text(FIVE, deal_sets=3))
    run(whole, tmp_path / "whole")
    assert manifest(tmp_path / "grown")["plan"] == manifest(tmp_path / "whole")["plan"]
    assert stripped(tmp_path / "grown") == stripped(tmp_path / "whole")
    assert cli("verify", tmp_path / "grown").returncode == 0


# -- worker processes ---------------------------------------------------------------------------------


def test_workers_write_the_records_of_one_process_byte_for_byte(tmp_path: Path) -> None:
    one = write(tmp_path / "one.toml", tournament_text(FIVE, deal_sets=3))
    two = write(tmp_path / "two.toml", tournament_text(FIVE, deal_sets=3, tournament=WORKERS))
    run(one, tmp_path / "one")
    summary = run(two, tmp_path / "two")
    assert (summary.played, summary.faults) == (60, 0)
    # The fast path records no timings, and the parent writes the chunks in the order it handed them
    # out: the very same bytes.
    assert (tmp_path / "one" / "records.jsonl").read_bytes() == (tmp_path / "two" / "records.jsonl").read_bytes()
    assert cli("verify", tmp_path / "two").returncode == 0


def test_workers_play_normal_tables_with_their_faults_as_one_process_does(tmp_path: Path) -> None:
    # Bots without the fast path, one of them crashing on every card: normal tables, fallbacks and faults.
    text = tournament_text(FIVE, spec=NO_FAST, a=CRASHER, deal_sets=1)
    one = write(tmp_path / "one.toml", text)
    two = write(tmp_path / "two.toml", text.replace("concurrency = 2\n", "concurrency = 2\n" + WORKERS))
    run(one, tmp_path / "one")
    summary = run(two, tmp_path / "two")
    assert summary.faults == 4 * 4 * 5 * 13  # a's four games of each of its 4 blocks: every card a crash
    assert stripped_list(tmp_path / "one") == stripped_list(tmp_path / "two")
    # Records come back in the order the games were handed out, which is the order of play drawn from the seed.
    finals = [r for r in records(tmp_path / "two") if r["final"]]

    def turn(r: dict[str, Any]) -> tuple[int, int, int, int]:
        order = play_order(7, r["schedule_round"], r["deal_set"], r["seats"], 4)
        return r["schedule_round"], order.draw, r["group"], order.turn(r["rotation"])

    assert [r["game"] for r in finals] == [r["game"] for r in sorted(finals, key=turn)]
    assert [r["rotation"] for r in finals[:4]] != [0, 1, 2, 3]  # not the order of the rotations


def test_the_workers_flag_resumes_a_run_and_a_run_without_it_resumes_one_with_it(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(FIVE, deal_sets=2))
    run(config, tmp_path / "whole")
    keep_games(tmp_path / "whole", tmp_path / "part", 7, torn=True, partial=3)
    resumed = cli("run", config, "--results", tmp_path / "part", "--no-progress", "--workers", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert "33 games played, 7 already recorded" in resumed.stderr
    assert stripped_list(tmp_path / "part") == stripped_list(tmp_path / "whole")
    assert cli("verify", tmp_path / "part").returncode == 0
    refused = cli("run", config, "--results", tmp_path / "part", "--no-progress", "--workers", "0")
    assert refused.returncode == 2 and refused.stderr.splitlines()[-1] == (
        "callbreak-arena: error: --workers must be 1 or more, not 0")


def test_launched_bots_play_in_the_arena_while_workers_play_the_in_process_tables(tmp_path: Path) -> None:
    # One bot over gRPC and four in-process: of the 5 groups, the one of the four in-process bots is
    # played by the workers, the 4 with the bot over gRPC here. The sample random bot plays the same
    # over gRPC as in-process, so the records are those of five in-process bots in one process.
    text = tournament_text(FIVE, deal_sets=1)
    mixed = text.replace(f'name = "a"\npython = "{RANDOM}"', f'name = "a"\ncommand = "{COMMAND}"')
    assert mixed != text
    summary = run(write(tmp_path / "mixed.toml", mixed.replace("concurrency = 2\n", "concurrency = 2\n" + WORKERS)),
                  tmp_path / "mixed")
    assert (summary.played, summary.faults) == (20, 0)
    assert (tmp_path / "mixed" / "logs" / "a.log").exists()  # launched by the arena, as without workers
    run(write(tmp_path / "local.toml", text), tmp_path / "local")
    assert stripped(tmp_path / "mixed") == stripped(tmp_path / "local")


def test_a_resume_refuses_records_seated_otherwise_than_the_plan_seats_them(tmp_path: Path) -> None:
    # As if the folder had been played by a version that draws the seats of a block differently.
    config = write(tmp_path / "t.toml", tournament_text(deal_sets=2))
    run(config, tmp_path / "whole")
    keep_games(tmp_path / "whole", tmp_path / "part", 2)
    lines = []
    for record in records(tmp_path / "part"):
        if record["game"] == "r1-g1-d1-p0":
            record["seats"] = record["seats"][1:] + record["seats"][:1]
        lines.append(json.dumps(record) + "\n")
    (tmp_path / "part" / "records.jsonl").write_text("".join(lines), encoding="utf-8")
    resumed = cli("run", config, "--results", tmp_path / "part", "--no-progress")
    assert resumed.returncode == 1
    assert "game r1-g1-d1-p0 of" in resumed.stderr and "seats blocks differently" in resumed.stderr


def test_a_bot_taken_out_of_a_long_plan_is_cut_and_the_plan_written_down_again(tmp_path: Path) -> None:
    tournament = Tournament(parse_config(tournament_text(FIVE, deal_sets=40)), tmp_path / "out")
    tournament.prepare()
    assert tournament.manifest is not None
    plan = tournament.manifest.plan
    before = [(r.number, [plan.seat(b) for b in r.blocks]) for r in plan.walk()]
    # Rounds 1-25 released; a's blocks of rounds 24 and 25 not begun; one of its blocks of round 30 played
    # in an earlier run.
    dropped_now = [b for number, blocks in before if number in (24, 25) for b in blocks if "a" in b.bots]
    played = {next(b.id for b in before[29][1] if "a" in b.bots)}
    assert plan.take_out("a", 25, dropped_now, played) == len(dropped_now) + 4 * 15 - 1
    expected = []
    for number, blocks in before:
        gone = [b for b in blocks if "a" in b.bots and (
            b in dropped_now if number <= 25 else b.id not in played)]
        expected.append((number, [b.id for b in blocks if b not in gone], sorted(b.id for b in gone)))
    walked = [(r.number, [b.id for b in r.blocks], sorted(b.id for b in r.dropped)) for r in plan.walk()]
    assert walked == expected
    # Cut from the round after the last it keeps a block in; only the rounds the cut does not make are stored.
    assert plan.cuts == {"a": 31} and sorted(plan.listed) == [24, 25, 26, 27, 28, 29, 30]
    plan.verify()
    again = Manifest.from_dict(json.loads(json.dumps(tournament.manifest.to_dict()))).plan
    again.verify()
    assert [(r.number, [b.id for b in r.blocks]) for r in again.walk()] == [(n, k) for n, k, _ in expected]
