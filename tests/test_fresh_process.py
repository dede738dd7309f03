"""Launched bots forget between games: every event that replays a deal set (every format, a ladder's blocks and
final, ``rate``, ``check-bot``) gives each launched bot a new process for every game unless the configuration
says ``fresh_process = false``, and the results then say that bots kept their processes.

The bot that tries is :mod:`tests.helpers.memory_bot`, a real kit bot in real processes (sandboxed where
bubblewrap runs): it keeps the cards every seat played in each round it saw, and says at each call which
process it is and whether it has held any of those cards before. Kept from one rotation to the next, it
recognises the deal in every round after the first rotation, and then knows the other hands.

A results folder an earlier version began (its manifest saying ``fresh_process = false``, that version's default)
is refused by a configuration of the user's, in a sentence that gives the line to add; the events whose
configuration the arena writes itself (a ladder's block and final, ``rate``'s blocks) resume it as it began.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.event.check import BotUnderTest, check_bot
from arena.event.plan.manifest import digest
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.ladder.blocks import block_config, block_seed, bot_table, event_text
from arena.ladder.db import Block, BlockState, Version, utc_now
from arena.ladder.settings import LadderSettings
from arena.rating.zoo import CANDIDATE, Zoo, load_zoo, rate
from tests.helpers.ladder import done_blocks, make_ladder, serve_until
from tests.helpers.runs import RANDOM, cli, keep_games, kinds_text, records, tournament_text, write

MEMORY_BOT = Path(__file__).resolve().parent / "helpers" / "memory_bot.py"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"


def _said(lines: Iterable[str]) -> list[dict[str, object]]:
    """The memory bot's lines (one per round it played) among a log's lines."""
    return [json.loads(line) for line in lines if line.startswith('{"pid"')]


def _memory_copy(folder: Path) -> Path:
    """The memory bot in a folder of its own (the one its sandbox shows it)."""
    folder.mkdir()
    return Path(shutil.copy(MEMORY_BOT, folder / "memory.py"))


def _run_text(bot: Path, *, name: str, tournament: str = "") -> str:
    """The memory bot and three in-process bots, a duplicate round robin of one deal set (four games, one table
    at a time, so that each game's rounds are over before the next game's begin)."""
    text = kinds_text([("memory", "command", f"{{python}} {bot} --arena {{address}}"), ("r2", "python", RANDOM),
                       ("r3", "python", HEURISTIC), ("r4", "python", RANDOM)],
                      name=name, seed=11, deal_sets=1, concurrency=1, time="deadline_ms = 10000")
    return text.replace("[tournament]\n", f"[tournament]\n{tournament}", 1)


# --- a run ------------------------------------------------------------------------------------------------


def test_a_launched_bot_gets_a_new_process_for_every_game_and_recognises_no_deal(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", _run_text(_memory_copy(tmp_path / "memory"), name="forget"))
    done = cli("run", config, "--results", tmp_path / "out", "--no-progress", timeout=180)
    assert done.returncode == 0, done.stderr
    said = _said((tmp_path / "out" / "logs" / "memory.log").read_text().splitlines())
    games = {record["game"] for record in records(tmp_path / "out")}
    assert len(said) == len(records(tmp_path / "out")) and len(games) == 4
    assert len({line["process"] for line in said}) == 4  # a process per game
    assert not any(line["recognised"] for line in said)
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["config"]["fresh_process"] is True
    standings = json.loads((tmp_path / "out" / "standings.json").read_text())["standings"]
    assert not any(row["kept_process"] for row in standings)
    assert "kept their processes" not in (tmp_path / "out" / "standings.txt").read_text()


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the memory bot under ``fresh_process = false``, finished: the folder holds ``t.toml``,
    ``results`` and the bot's own folder."""
    base = tmp_path_factory.mktemp("kept")
    config = write(base / "t.toml", _run_text(_memory_copy(base / "memory"), name="kept",
                                              tournament="fresh_process = false\n"))
    done = cli("run", config, "--results", base / "results", "--no-progress", timeout=180)
    assert done.returncode == 0, done.stderr
    return base


def test_a_bot_kept_across_rotations_recognises_the_deal_and_the_results_say_it_was_kept(kept: Path) -> None:
    results = kept / "results"
    said = _said((results / "logs" / "memory.log").read_text().splitlines())
    rounds = len(records(results))
    assert len(said) == rounds and len({line["process"] for line in said}) == 1
    # The first game's rounds are new to it; every round of the three rotations after it is a deal seen before.
    assert [line["recognised"] for line in said] == [False] * (rounds // 4) + [True] * (3 * rounds // 4)
    sentence = "Launched bots kept their processes from game to game (fresh_process = false): memory."
    for name in ("standings.txt", "standings.md", "report.html"):
        assert sentence in " ".join((results / name).read_text().split()), name
    standings = json.loads((results / "standings.json").read_text())["standings"]
    assert {row["bot"]: row["kept_process"] for row in standings} == {
        "memory": True, "r2": False, "r3": False, "r4": False}
    csv = (results / "standings.csv").read_text().splitlines()
    column = csv[0].split(",").index("kept_process")
    assert {row.split(",")[0]: row.split(",")[column] for row in csv[1:]} == {
        "memory": "True", "r2": "False", "r3": "False", "r4": "False"}
    assert json.loads((results / "manifest.json").read_text())["config"]["fresh_process"] is False


def test_a_folder_begun_with_kept_processes_resumes_only_once_the_configuration_says_so(
        kept: Path, tmp_path: Path) -> None:
    # As a run of an earlier version stopped after one game: its manifest says fresh_process = false, as the
    # default then wrote it, and the configuration says nothing of it.
    keep_games(kept / "results", tmp_path / "part", 1)
    text = (kept / "t.toml").read_text().replace("fresh_process = false\n", "")
    config = write(tmp_path / "t.toml", text)  # the same bot: its command names the file it was played from
    refused = cli("run", config, "--results", tmp_path / "part", "--no-progress", timeout=180)
    assert refused.returncode == 1
    said = " ".join(refused.stderr.split())
    assert "was begun with fresh_process = false: its launched bots kept their processes from game to game" in said
    assert ("To finish it as it was begun, put the line fresh_process = false in the configuration's [tournament] "
            "table") in said
    assert len(records(tmp_path / "part")) == len(records(kept / "results")) // 4  # nothing played, nothing lost
    write(config, text.replace("[tournament]\n", "[tournament]\nfresh_process = false\n", 1))
    resumed = cli("run", config, "--results", tmp_path / "part", "--no-progress", timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert len(records(tmp_path / "part")) == len(records(kept / "results"))
    assert "kept their processes" in (tmp_path / "part" / "standings.txt").read_text()


# --- the ladder ------------------------------------------------------------------------------------------


def test_a_submitted_version_gets_a_new_process_for_every_game_of_its_block(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", tables="1", check_games="4")
    for name, bot in (("rand-a", RANDOM), ("heur-a", HEURISTIC), ("rand-b", RANDOM)):
        ladder.add_entrant(name, python=bot)
    ladder.add_entrant("mem")
    version = ladder.submit("mem", "memory.py", MEMORY_BOT.read_bytes())

    def played(session: Session) -> list[Block]:
        return [b for b in session.scalars(select(Block).where(Block.state == BlockState.DONE))
                if version.id in b.seats]

    serve_until(ladder, lambda session: bool(played(session)), timeout=180)
    with ladder.session() as session:
        block = played(session)[0]
        folder = tmp_path / "ladder" / block.folder
    assert folder.parent.name == "blocks" and len(records(folder)) >= 4
    said = _said((folder / "logs" / f"{version.label}.log").read_text().splitlines())
    assert len(said) == len(records(folder))
    assert len({line["process"] for line in said}) == 4  # a process for each rotation
    assert not any(line["recognised"] for line in said)
    ladder.close()


def test_a_block_an_earlier_version_began_with_kept_processes_resumes_as_it_began(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", tables="1")
    for name, bot in (("rand-a", RANDOM), ("heur-a", HEURISTIC), ("rand-b", RANDOM), ("heur-b", HEURISTIC)):
        ladder.add_entrant(name, python=bot)
    serve_until(ladder, lambda session: done_blocks(session) >= 1)
    # The block an earlier version was playing when the ladder stopped: one game of it recorded, its manifest
    # saying fresh_process = false (that version's default).
    with ladder.session() as session:
        done = session.scalars(select(Block).where(Block.state == BlockState.DONE)).first()
        block = Block(deal_set=1, seat0=done.seat0, seat1=done.seat1, seat2=done.seat2, seat3=done.seat3,
                      state=BlockState.PLAYING, rated=False, kind=done.kind, created=utc_now(), started=utc_now())
        session.add(block)
        session.flush()
        block.seed = block_seed(ladder.settings.seed, block.id)
        block_id, folder = block.id, tmp_path / "ladder" / block.folder
        bots = [bot_table(session.get(Version, v), tmp_path / "ladder") for v in block.seats]
    config = dataclasses.replace(block_config(block_id, block.seed, bots, ladder.settings), fresh_process=False)
    asyncio.run(Tournament(config, tmp_path / "whole").run())
    keep_games(tmp_path / "whole", folder, 1)
    serve_until(ladder, lambda session: session.get(Block, block_id).state != BlockState.PLAYING)
    with ladder.session() as session:
        assert session.get(Block, block_id).state == BlockState.DONE, session.get(Block, block_id).note
    assert len(records(folder)) == len(records(tmp_path / "whole"))
    assert json.loads((folder / "manifest.json").read_text())["config"]["fresh_process"] is False
    ladder.close()


def test_the_ladders_blocks_and_final_give_launched_bots_a_new_process_for_every_game() -> None:
    bots = [{"name": f"v{n}", "command": [sys.executable, str(MEMORY_BOT), "--arena", "{address}"]}
            for n in range(4)]
    for deal_sets in (1, 30):  # a block's one deal set; a final's many
        assert parse_config(event_text("e", 1, deal_sets, bots, LadderSettings("cup", "sqlite://"))).fresh_process


# --- rate and check-bot ----------------------------------------------------------------------------------


def test_rate_gives_the_candidate_a_new_process_for_every_game(tmp_path: Path) -> None:
    zoo = load_zoo()
    fast = [m for m in zoo.members if not m.name.startswith("montecarlo") and not m.extra]  # no extra needed
    members = (*fast, *(dataclasses.replace(m, name=f"{m.name}-2") for m in fast))[:3]
    trio = Zoo(members, zoo.pool_seed, zoo.profile, zoo.blocks)  # three members: a cycle of one block
    assert trio.cycle == 1
    bot = _memory_copy(tmp_path / "memory")
    candidate = {"command": [sys.executable, str(bot), "--arena", "{address}"]}
    rating = asyncio.run(rate(candidate, trio, tmp_path / "rated", max_blocks=1))
    assert rating.blocks == 1
    said = _said((tmp_path / "rated" / "0000" / "logs" / f"{CANDIDATE}.log").read_text().splitlines())
    assert len({line["process"] for line in said}) == 4 and not any(line["recognised"] for line in said)


def _as_an_earlier_version_began_it(folder: Path) -> None:
    """Rewrites ``folder``'s manifest as an earlier version wrote it: fresh_process = false, its default then."""
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["config"]["fresh_process"] = False
    keys = parse_config(tournament_text()).identity()
    manifest["identity"] = digest({key: manifest["config"][key] for key in keys})
    path.write_text(json.dumps(manifest, indent=1))


def test_rate_reads_a_block_an_earlier_version_recorded_as_it_was_played(tmp_path: Path) -> None:
    zoo = load_zoo()
    fast = [m for m in zoo.members if not m.name.startswith("montecarlo") and not m.extra]  # no extra needed
    trio = Zoo((*fast, *(dataclasses.replace(m, name=f"{m.name}-2") for m in fast))[:3], zoo.pool_seed, zoo.profile,
               zoo.blocks)
    first = asyncio.run(rate({"python": RANDOM}, trio, tmp_path / "rated", max_blocks=1))
    _as_an_earlier_version_began_it(tmp_path / "rated" / "0000")
    lines = (tmp_path / "rated" / "0000" / "records.jsonl").read_bytes()
    again = asyncio.run(rate({"python": RANDOM}, trio, tmp_path / "rated", max_blocks=1))
    assert again.scores == first.scores and (tmp_path / "rated" / "0000" / "records.jsonl").read_bytes() == lines


def test_check_bot_gives_the_bot_a_new_process_for_every_game(tmp_path: Path) -> None:
    log = tmp_path / "said.jsonl"
    bot = BotUnderTest("command", argv=(sys.executable, str(_memory_copy(tmp_path / "memory")), "--arena",
                                        "{address}", "--option", f"log={log}"), sandbox="off")
    checks = check_bot(bot, games=4, profiles=("nepali",), logs=tmp_path / "logs", log=lambda text: None)
    assert all(check.ok for check in checks), [check.lines for check in checks]
    said = _said(log.read_text().splitlines())
    assert len(said) >= 4 * 5 and len({line["process"] for line in said}) == 4
    assert not any(line["recognised"] for line in said)
