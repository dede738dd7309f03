"""Live events with unreliable participants, end to end over real gRPC and real processes: absent
bots and the forfeit policies, launched bots that fail, a frozen bot, a bot that drops between
games, the live status, and plans that grow or change between runs."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena.event.plan.manifest import Manifest
from arena.event.plan.status import Progress
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.kit.session import play_session
from sample_bots.random_bot import RandomBot
from tests.conftest import free_port
from tests.helpers.runs import (
    BOTS,
    COMMAND,
    KEPT,
    NO_FAST,
    RANDOM,
    ROOT,
    STUBBORN,
    UNSANDBOXED,
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
EVENT_BOTS = ROOT / "tests" / "helpers" / "event_bots.py"
FAKE_BOTS = ROOT / "tests" / "fake_bots.py"


def with_ghost(policy: str, *, absent_after: float = 1.0, port: int = 0) -> str:
    """Four in-process bots and a remote bot ``ghost`` (token ``boo``), under ``policy``."""
    text = tournament_text(("a", "b", "c", "d"), spec=RANDOM, tournament=f'forfeit = "{policy}"\n',
                           extra=f"[server]\nport = {port}\n")
    text = text.replace("absent_after_s = 30", f"absent_after_s = {absent_after}")
    return text + '\n[[bots]]\nname = "ghost"\nremote = true\ntoken = "boo"\n'


def rows(folder: Path) -> dict[str, Any]:
    return {row["bot"]: row for row in standings(folder)["standings"]}


# --- a bot that never comes -------------------------------------------------------------------------


def test_under_wait_run_stops_with_the_games_outstanding_and_names_the_bot(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", with_ghost("wait"))
    began = time.monotonic()
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    took = time.monotonic() - began
    assert result.returncode == 3, result.stderr
    assert "stopped with 32 games outstanding, waiting for: ghost (never connected in 1 s)" in result.stderr
    assert "8 games played" in result.stderr  # the one group without ghost played both deal sets
    assert took < 1.0 + 20
    assert rows(tmp_path / "out")["ghost"]["status"] == "absent"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["statuses"]["ghost"]["status"] == "absent"
    assert cli("verify", tmp_path / "out").returncode == 1  # not over: the games are missing


def test_under_fallback_the_fallback_player_takes_the_absent_bots_seats(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", with_ghost("fallback"))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "ghost is absent (never connected in 1 s): the fallback player takes its seats" in result.stderr
    played = games(tmp_path / "out")
    assert len(played) == 40
    ghost_games = [rounds for rounds in played.values() if "ghost" in rounds[0]["seats"]]
    assert len(ghost_games) == 32
    for rounds in ghost_games:
        faults = [f for r in rounds for f in r["faults"]]
        assert [f["kind"] for f in faults] == ["absent"]  # marked once per game; every decision counted
        seat = rounds[0]["seats"].index("ghost")
        assert all(r["fallbacks"][seat] == 14 for r in rounds)
    row = rows(tmp_path / "out")["ghost"]
    assert row["fallback_pct"] == 100.0 and row["status"] == "absent"
    assert all(rows(tmp_path / "out")[b]["fallback_pct"] == 0.0 for b in "abcd")
    assert cli("verify", tmp_path / "out").returncode == 0


def test_under_fallback_a_bot_that_comes_after_all_plays_its_blocks_not_begun(tmp_path: Path) -> None:
    text = tournament_text(("a", "b", "c"), spec=NO_FAST, deal_sets=6, concurrency=1,
                           tournament='forfeit = "fallback"\n', extra="[server]\nport = 0\n")
    text = text.replace("absent_after_s = 30", "absent_after_s = 0.2")
    text += '\n[[bots]]\nname = "ghost"\nremote = true\ntoken = "boo"\n'
    lines: list[str] = []
    tournament = Tournament(parse_config(text), tmp_path / "out", log=lines.append)

    async def play() -> None:
        running = asyncio.ensure_future(tournament.run())
        while not any(line.startswith("ghost is absent") for line in lines):
            assert not running.done(), lines
            await asyncio.sleep(0.01)
        # In this process, so that it connects at once: the blocks the fallback player has not begun yet wait.
        session = asyncio.ensure_future(play_session(RandomBot, tournament.address, "boo"))
        await running
        await session

    asyncio.run(asyncio.wait_for(play(), 60))
    assert "ghost is back" in lines
    played = [[f["kind"] for r in rounds for f in r["faults"]] for rounds in games(tmp_path / "out").values()]
    assert len(played) == 24 and "absent" in played[0]
    assert not any("absent" in kinds for kinds in played[-4:])  # the last block was its own again
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert "ghost" not in manifest["statuses"]


def test_under_withdraw_the_bot_is_withdrawn_and_its_blocks_dropped(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", with_ghost("withdraw"))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "ghost was withdrawn: absent: never connected in 1 s" in result.stderr
    assert len(games(tmp_path / "out")) == 8
    row = {r["bot"]: r for r in json.loads(result.stdout)["standings"]}["ghost"]
    assert row["status"] == "withdrawn" and row["rank"] is None
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    plan = Manifest.from_dict(manifest).plan
    assert plan.dropped_count == 8 and all("ghost" in block.bots for block in plan.dropped())
    assert not any("ghost" in block.bots for block in plan.blocks())
    assert cli("verify", tmp_path / "out").returncode == 0


@pytest.mark.slow
def test_serve_waits_for_the_absent_bot_says_so_and_finishes_when_it_comes(tmp_path: Path) -> None:
    port = free_port()
    config = write(tmp_path / "t.toml", with_ghost("wait", port=port))
    folder = tmp_path / "out"
    arena = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(config), "--results", str(folder),
                              "--no-progress"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bot = None
    try:
        deadline = time.monotonic() + 30
        while True:
            status = cli("status", folder, "--json")
            data = json.loads(status.stdout) if status.returncode == 0 and status.stdout.strip() else None
            if data and data["state"] == "waiting":
                break
            assert time.monotonic() < deadline, "the arena never said it was waiting"
            time.sleep(0.2)
        assert data["awaited"] == ["ghost"] and data["live"] and data["games_done"] == 8
        assert data["address"] == f"127.0.0.1:{port}"
        text = cli("status", folder).stdout
        assert "waiting for: ghost" in text and "absent (never connected" in text
        # The standings are kept fresh while the event runs (at most every few seconds).
        deadline = time.monotonic() + 15
        while "Standings" not in text:
            assert time.monotonic() < deadline, "no standings while the event runs"
            time.sleep(0.5)
            text = cli("status", folder).stdout
        assert all(name in text.split("Standings")[1] for name in ("a", "b", "c", "d"))
        bot = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--arena", f"127.0.0.1:{port}",
                                "--token", "boo"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while arena.poll() is None:  # once the bot is back and playing, the event is no longer waiting
            data = json.loads(cli("status", folder, "--json").stdout)
            if data["games_done"] > 8 and data["state"] != "finished":
                assert data["state"] == "running" and data["awaited"] == [], data
                break
            time.sleep(0.1)
        _, err = arena.communicate(timeout=60)
    finally:
        for process in (arena, bot):
            if process is not None and process.poll() is None:
                process.kill()
    assert arena.returncode == 0, err
    assert f"arena listening on 127.0.0.1:{port} (plaintext)" in err
    assert len(games(folder)) == 40
    assert json.loads(cli("status", folder, "--json").stdout)["state"] == "finished"


# --- launched bots that fail ---------------------------------------------------------------------------


@pytest.mark.parametrize("fresh", [False, True])
def test_a_launched_bot_that_fails_to_start_is_absent_at_once(tmp_path: Path, fresh: bool) -> None:
    text = tournament_text(("a", "b", "c", "d"), spec=RANDOM, tournament=(
        'forfeit = "withdraw"\n' + ("fresh_process = true\n" if fresh else "")))
    text = text.replace("absent_after_s = 30", "absent_after_s = 600")  # a failed start does not wait for it
    text += '\n[[bots]]\nname = "broken"\ncommand = "{python} no_such_bot.py --arena {address}"\n'
    config = write(tmp_path / "t.toml", text)
    began = time.monotonic()
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress", timeout=120)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - began < 60
    assert "broken was withdrawn" in result.stderr
    assert "before it connected" in result.stderr
    assert rows(tmp_path / "out")["broken"]["status"] == "withdrawn"
    assert "can't open file" in (tmp_path / "out" / "logs" / "broken.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_frozen_launched_bot_is_faulted_at_its_deadline_and_the_event_goes_on(tmp_path: Path) -> None:
    pidfile = tmp_path / "frozen.pid"
    frozen = f"{{python}} {EVENT_BOTS} PidRandom --arena {{address}} --option pidfile={pidfile}"
    # One process of the bot for the whole run, frozen once: 160 starts of a process per game would add nothing.
    text = tournament_text(FIVE, kind="command", spec=COMMAND, deal_sets=2, concurrency=2,
                           tournament='forfeit = "fallback"\n' + KEPT, a=frozen, extra=UNSANDBOXED)
    # Patience enough for the launched bots to start (python and grpc take a moment on a busy machine).
    text = text.replace("deadline_ms = 10000", "deadline_ms = 1000").replace("absent_after_s = 30",
                                                                            "absent_after_s = 10")
    text = text.replace("[time]\n", "[time]\nreconnect_grace_s = 1\n")
    config = write(tmp_path / "t.toml", text)
    folder = tmp_path / "out"
    arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results", str(folder),
                              "--no-progress"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = 0
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and (folder / "records.jsonl").exists()
                   and len((folder / "records.jsonl").read_text(encoding="utf-8").splitlines()) >= 6):
            assert time.monotonic() < deadline and arena.poll() is None, "the run did not get going"
            time.sleep(0.05)
        pid = int(pidfile.read_text(encoding="utf-8"))
        os.kill(pid, signal.SIGSTOP)
        _, err = arena.communicate(timeout=120)
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):  # the arena ended it
                os.kill(pid, signal.SIGCONT)
        if arena.poll() is None:
            arena.kill()
    assert arena.returncode == 0, err
    faults = [(r["seats"][f["seat"]], f) for r in records(folder) for f in r["faults"]]
    others = [(bot, f["kind"], f["detail"]) for bot, f in faults if bot != "a"]
    assert faults and not others, others  # no other bot was charged anything
    late = [f for _, f in faults if f["kind"] == "late"]
    assert late, [f["kind"] for _, f in faults]
    for fault in late:  # judged by its deadline, whatever the transport did
        waited = int(fault["detail"].split(" within ")[1].split(" ms")[0])
        assert 1000 <= waited <= 1000 + 1000
    assert "stalled" in {f["kind"] for _, f in faults}
    assert len(games(folder)) == 40
    assert cli("verify", folder).returncode == 0


@pytest.mark.slow
def test_a_bot_that_drops_while_waiting_and_comes_back_plays_all_its_games_itself(tmp_path: Path) -> None:
    port = free_port()
    config = write(tmp_path / "t.toml", with_ghost("wait", absent_after=30, port=port))
    log = tmp_path / "fake.out"
    with log.open("w", encoding="utf-8") as out:
        fake = subprocess.Popen([sys.executable, str(FAKE_BOTS), "drop-idle", "--arena", f"127.0.0.1:{port}",
                                 "--token", "boo", "--sleep", "1"], cwd=ROOT,
                                env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=out, stderr=subprocess.DEVNULL)
        try:
            summary = run(config, tmp_path / "out")
            fake.wait(20)
        finally:
            if fake.poll() is None:
                fake.kill()
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert {"dropped": True} in lines and sum("welcome" in line for line in lines) == 2
    assert summary.played == 40 and summary.faults == 0  # no game went to the dead session


# --- the live status ------------------------------------------------------------------------------------


def test_status_of_a_finished_run(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(FIVE, spec=RANDOM))
    run(config, tmp_path / "out")
    data = json.loads(cli("status", tmp_path / "out", "--json").stdout)
    assert data["state"] == "finished" and not data["live"]
    assert (data["games_done"], data["games_planned"]) == (40, 40)
    assert {b["bot"]: b["games_done"] for b in data["bots"]} == dict.fromkeys(FIVE, 32)
    assert {b["state"] for b in data["bots"]} == {"finished"}  # not "playing" once the event has ended
    text = cli("status", tmp_path / "out")
    assert text.returncode == 0
    assert "t: finished" in text.stdout and "games: 40 of 40 done" in text.stdout
    assert "Standings" in text.stdout and "Winner: " in text.stdout and " playing" not in text.stdout


def test_status_of_a_folder_that_is_not_one(tmp_path: Path) -> None:
    result = cli("status", tmp_path)
    assert result.returncode == 2 and "is not a results folder" in result.stderr


# --- plans that change between runs -------------------------------------------------------------------


@pytest.mark.parametrize("names", [FIVE, tuple(f"p{i}" for i in range(1, 10))], ids=["complete", "partitioned"])
def test_more_deal_sets_play_only_the_new_blocks_and_equal_a_fresh_run(tmp_path: Path, names: tuple[str, ...]) -> None:
    small = write(tmp_path / "small.toml", tournament_text(names, deal_sets=3))
    large = write(tmp_path / "large.toml", tournament_text(names, deal_sets=4))
    run(small, tmp_path / "out")
    before = len(games(tmp_path / "out"))
    result = cli("run", large, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "plan changed: deal sets: 3 -> 4 (round 4 added)" in result.stderr
    assert f"{before // 3} games played, {before} already recorded" in result.stderr
    run(large, tmp_path / "fresh")
    assert stripped(tmp_path / "out") == stripped(tmp_path / "fresh")
    assert cli("verify", tmp_path / "out").returncode == 0


def test_a_late_entrant_adds_its_blocks_and_changes_none(tmp_path: Path) -> None:
    four = write(tmp_path / "four.toml", tournament_text(("a", "b", "c", "d"), deal_sets=2))
    five = write(tmp_path / "five.toml", tournament_text(FIVE, deal_sets=2))
    run(four, tmp_path / "out")
    kept = stripped(tmp_path / "out")
    result = cli("run", five, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "plan changed: late entrant: e" in result.stderr
    assert "plan changed: 8 new blocks to play" in result.stderr
    assert kept <= stripped(tmp_path / "out")
    run(five, tmp_path / "fresh")
    assert stripped(tmp_path / "out") == stripped(tmp_path / "fresh")  # e added last: the same plan


def test_a_bot_removed_from_the_configuration_is_withdrawn_keeping_its_games(tmp_path: Path) -> None:
    five = write(tmp_path / "five.toml", tournament_text(FIVE, deal_sets=1))
    run(five, tmp_path / "out")
    four = write(tmp_path / "four.toml", tournament_text(("a", "b", "c", "d"), deal_sets=2))
    result = cli("run", four, "--results", tmp_path / "out", "--no-progress", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "plan changed: e is no longer in the configuration: withdrawn (its played blocks stay)" in result.stderr
    row = {r["bot"]: r for r in json.loads(result.stdout)["standings"]}["e"]
    assert row["status"] == "withdrawn" and row["games"] == 16
    assert cli("verify", tmp_path / "out").returncode == 0


def test_fewer_deal_sets_than_played_is_refused(tmp_path: Path) -> None:
    three = write(tmp_path / "three.toml", tournament_text(deal_sets=3))
    run(three, tmp_path / "out")
    two = write(tmp_path / "two.toml", tournament_text(deal_sets=2))
    result = cli("run", two, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 1
    assert "keep at least 3 deal sets" in result.stderr


def test_a_bot_whose_definition_changed_is_refused(tmp_path: Path) -> None:
    first = write(tmp_path / "a.toml", tournament_text(deal_sets=1))
    run(first, tmp_path / "out")
    changed = write(tmp_path / "b.toml", tournament_text(deal_sets=1, r2=NO_FAST))
    result = cli("run", changed, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 1
    assert "bot 'r2' is not the bot its recorded games were played by" in result.stderr
    assert "Give the new version a new name" in result.stderr


def test_the_progress_bar_names_the_bots_awaited() -> None:
    out = io.StringIO()
    bar = Progress(40, 8, True, file=out)
    bar.update(3, {"ghost": "never connected in 31 s"})
    bar.update(3, {"ghost": "never connected in 32 s"}, step=0)
    bar.close()
    assert "faults 3, waiting for ghost (never connected in 32 s)" in out.getvalue()
    assert "9/40" in out.getvalue()


def test_status_of_a_run_whose_arena_ended_without_finishing(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(deal_sets=1))
    run(config, tmp_path / "out")
    path = tmp_path / "out" / "status.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path.write_text(json.dumps(dict(data, state="running", pid=int(dead.stdout))), encoding="utf-8")
    text = cli("status", tmp_path / "out").stdout
    assert "not running (the arena that wrote this status has ended without finishing: run it again to resume)" in text


# --- in-process bots off the arena's loop -----------------------------------------------------------


@pytest.mark.slow
def test_a_sleeping_in_process_bot_is_late_and_no_bot_at_another_table_is(tmp_path: Path) -> None:
    # The sleeper sits at some tables, four launched bots over gRPC at all of them: while it sleeps
    # past its deadline in its own thread, the arena's loop keeps serving the gRPC bots everywhere.
    # The loop, not the bots' processes, is what is tested: they keep theirs, and no start competes for the CPU.
    text = tournament_text(("r1", "r2", "r3", "r4"), kind="command", spec=COMMAND, deal_sets=1, concurrency=4,
                           tournament=KEPT)
    text = text.replace("deadline_ms = 10000", "deadline_ms = 1000")
    text += f'\n[[bots]]\nname = "sleepy"\npython = "{BOTS}:Sleeper"\noptions = {{ delay = 1.6, at = 3 }}\n'
    config = write(tmp_path / "t.toml", text)
    summary = run(config, tmp_path / "out")
    assert summary.played == 20
    faults = [(r["seats"][f["seat"]], f["kind"]) for r in records(tmp_path / "out") for f in r["faults"]]
    assert faults and {bot for bot, _ in faults} == {"sleepy"}
    assert {kind for _, kind in faults} == {"late"}
    assert cli("verify", tmp_path / "out").returncode == 0


def test_sys_exit_in_an_in_process_bot_is_its_crash_and_the_tournament_completes(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(spec=NO_FAST, r2=f"{BOTS}:Exiter", deal_sets=2))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "8 games played" in result.stderr
    faults = [f for r in records(tmp_path / "out") for f in r["faults"]]
    assert faults and {f["kind"] for f in faults} == {"crash"}
    assert all("the bot raised SystemExit" in f["detail"] for f in faults)


@pytest.mark.parametrize(("spec", "raised"), [("BadModel", "RuntimeError: cannot load my model file"),
                                              ("ExitingModel", "SystemExit: 4")])
@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "normal-table"])
def test_an_in_process_bot_that_cannot_be_made_crashes_its_game_not_the_arena(
    tmp_path: Path, spec: str, raised: str, fast: bool
) -> None:
    others = RANDOM if fast else NO_FAST
    config = write(tmp_path / "t.toml", tournament_text(spec=others, r4=f"{EVENT_BOTS}:{spec}", deal_sets=2))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "8 games played" in result.stderr
    faults = [f for r in records(tmp_path / "out") for f in r["faults"]]
    assert [(f["kind"], f["detail"]) for f in faults] == [("crash", f"creating the bot raised {raised}")]
    assert cli("verify", tmp_path / "out").returncode == 0


# --- taken out, and run again ---------------------------------------------------------------------------


def test_a_run_again_after_a_disqualification_plays_nothing_and_changes_nothing(tmp_path: Path) -> None:
    names = [f"p{i}" for i in range(1, 10)]  # a partitioned field (padded with house bots)
    config = write(tmp_path / "t.toml", tournament_text(names, deal_sets=2, concurrency=4, p9=STUBBORN,
                                                        extra="[faults]\ndisqualify_after = 1\n"))
    first = run(config, tmp_path / "out")
    assert list(first.disqualified) == ["p9"]
    manifest = (tmp_path / "out" / "manifest.json").read_text(encoding="utf-8")
    again = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert again.returncode == 0, again.stderr
    assert f"0 games played, {first.played} already recorded" in again.stderr
    assert "plan changed" not in again.stderr
    assert json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))["plan"] == json.loads(
        manifest)["plan"]
    assert cli("verify", tmp_path / "out").returncode == 0


def test_swiss_pairs_the_rounds_after_a_disqualification_without_the_bot(tmp_path: Path) -> None:
    names = [f"s{i}" for i in range(1, 9)]
    config = write(tmp_path / "t.toml", tournament_text(
        names, deal_sets=4, concurrency=4, s8=STUBBORN, tournament='format = "swiss"\n',
        extra="[faults]\ndisqualify_after = 1\n[swiss]\nopening_rounds = 1\n"))
    summary = run(config, tmp_path / "out")
    assert list(summary.disqualified) == ["s8"]
    per_bot: dict[str, int] = {}
    for rounds in games(tmp_path / "out").values():
        for bot in rounds[0]["seats"]:
            per_bot[bot] = per_bot.get(bot, 0) + 1
    # s8 played its first block only; every other bot played every round; a house bot took its place.
    assert per_bot.pop("s8") == 4
    assert set(per_bot.values()) - {16, 12} == set() and all(per_bot[b] == 16 for b in names[:-1])
    assert cli("verify", tmp_path / "out").returncode == 0


def test_an_absent_bot_removed_from_the_configuration_is_reported(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", with_ghost("wait"))
    assert cli("run", config, "--results", tmp_path / "out", "--no-progress").returncode == 3
    without = write(tmp_path / "u.toml", tournament_text(("a", "b", "c", "d"), spec=RANDOM,
                                                        tournament='forfeit = "wait"\n', extra="[server]\nport = 0\n"))
    result = cli("run", without, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "plan changed: ghost is no longer in the configuration (it had played no game)" in result.stderr
    assert "plan changed: 8 unplayed blocks dropped" in result.stderr
    assert cli("verify", tmp_path / "out").returncode == 0


def test_a_results_folder_that_cannot_be_made_is_one_line_and_status_2(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(deal_sets=1))
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    result = cli("run", config, "--results", tmp_path / "file" / "out", "--no-progress")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("callbreak-arena: error: cannot use ")
    assert "Traceback" not in result.stderr


def test_while_no_bot_can_sit_the_arena_does_not_release_the_whole_plan(tmp_path: Path) -> None:
    # Four remote bots that never come, and a plan of 2,000 deal sets: looking further ahead cannot find a
    # game to start, so the arena waits with its usual window released, not the whole plan (which costs it
    # time in proportion to the plan's size squared, before launched bots have even connected).
    text = tournament_text(FIVE[:4], spec=RANDOM, deal_sets=2000, tournament='forfeit = "wait"\n')
    text = text.replace("absent_after_s = 30", "absent_after_s = 0.5")
    for name in FIVE[:4]:
        text = text.replace(f'name = "{name}"\npython = "{RANDOM}"',
                            f'name = "{name}"\nremote = true\ntoken = "t{name}"')
    tournament = Tournament(parse_config(text), tmp_path / "out")
    summary = asyncio.run(asyncio.wait_for(tournament.run(), 60))
    assert summary.played == 0 and summary.outstanding == 8000
    assert tournament._release is not None and tournament._release.number < 100
