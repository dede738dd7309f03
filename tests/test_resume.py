"""Resume: a run on an existing folder continues where it stopped, even after kill -9, and ends
with the records and standings of an uninterrupted run."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.runs import (
    COMMAND,
    CRASHER,
    KEPT,
    NO_FAST,
    ROOT,
    SLOW,
    cli,
    games,
    keep_games,
    records,
    run,
    standings,
    stripped,
    stripped_list,
    tournament_text,
    write,
)


def test_resume_after_a_crash_gives_the_uninterrupted_records(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(("a", "b", "c", "d", "e"), spec=NO_FAST, deal_sets=2))
    whole = run(config, tmp_path / "whole")
    assert (whole.played, whole.skipped) == (40, 0)
    keep_games(tmp_path / "whole", tmp_path / "part", 13, torn=True, partial=2)
    resumed = run(config, tmp_path / "part")
    assert (resumed.played, resumed.skipped) == (27, 13)
    assert stripped_list(tmp_path / "part") == stripped_list(tmp_path / "whole")
    assert standings(tmp_path / "part") == standings(tmp_path / "whole")
    again = run(config, tmp_path / "part")  # a finished tournament has nothing left to play
    assert (again.played, again.skipped) == (0, 40)
    assert len(records(tmp_path / "part")) == 200


def test_resume_may_change_the_concurrency(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(concurrency=1))
    run(config, tmp_path / "whole")
    keep_games(tmp_path / "whole", tmp_path / "part", 3)
    write(config, tournament_text(concurrency=8))
    assert run(config, tmp_path / "part").played == 5
    assert stripped(tmp_path / "part") == stripped(tmp_path / "whole")


def test_a_changed_configuration_is_refused_unless_fresh(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(seed=1, deal_sets=1))
    folder = tmp_path / "out"
    assert cli("run", config, "--results", folder, "--no-progress").returncode == 0
    before = (folder / "records.jsonl").read_bytes()
    write(config, tournament_text(seed=2, deal_sets=1))
    refused = cli("run", config, "--results", folder, "--no-progress")
    assert refused.returncode == 1
    assert "seed was 1, now 2" in refused.stderr
    assert "--fresh" in refused.stderr
    assert (folder / "records.jsonl").read_bytes() == before
    fresh = cli("run", config, "--results", folder, "--no-progress", "--fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert "4 games played, 0 already recorded" in fresh.stderr
    assert {r["seed"] for r in records(folder)} == {2}
    assert cli("verify", folder).returncode == 0


def test_a_swiss_tournament_resumed_mid_round_plans_as_before(tmp_path: Path) -> None:
    # The tables of a swiss round follow the standings of the rounds before it; games of the round
    # in progress, already recorded when the run stopped, must not change them.
    config = write(tmp_path / "t.toml", tournament_text(
        [f"s{i}" for i in range(1, 9)], deal_sets=4, extra="[swiss]\nopening_rounds = 1\n",
        tournament='format = "swiss"\n'))
    run(config, tmp_path / "whole")
    order = list(games(tmp_path / "whole"))
    third = next(i for i, game in enumerate(order) if game.startswith("r3-"))
    keep_games(tmp_path / "whole", tmp_path / "part", third + 5)  # stopped in the middle of round 3
    run(config, tmp_path / "part")
    assert stripped(tmp_path / "part") == stripped(tmp_path / "whole")
    assert cli("verify", tmp_path / "part").returncode == 0


def test_a_disqualification_survives_a_resume(tmp_path: Path) -> None:
    # Fault counts are part of the state: a resumed run must disqualify where the whole run did.
    config = write(tmp_path / "t.toml", tournament_text(
        ("crash", "b", "c", "d", "e"), spec=NO_FAST, crash=CRASHER, deal_sets=2, concurrency=1,
        extra="[faults]\ndisqualify_after = 30\n"))
    whole = run(config, tmp_path / "whole")
    assert "crash" in whole.disqualified
    keep_games(tmp_path / "whole", tmp_path / "part", 8)
    resumed = run(config, tmp_path / "part")
    assert resumed.disqualified == whole.disqualified
    assert stripped(tmp_path / "part") == stripped(tmp_path / "whole")


def start(config: Path, folder: Path, log: Path) -> subprocess.Popen[bytes]:
    """``callbreak-arena run`` in a process group of its own (so its bots die with it)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "arena", "run", str(config), "--results", str(folder), "--no-progress"],
            cwd=ROOT, stdout=out, stderr=out, start_new_session=True)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """kill -9 of the run and of the bots it launched."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


def complete_games(folder: Path) -> int:
    path = folder / "records.jsonl"
    if not path.exists():
        return 0
    return path.read_bytes().count(b'"final":true')


def kill_and_resume(config: Path, folder: Path, log: Path, seed: int, kills: int, games_per_kill: int = 3) -> int:
    """Runs the tournament, killing it with SIGKILL ``kills`` times at seeded random points: once
    1 to ``games_per_kill`` more games are recorded, after a random wait of up to 0.3 s (so in the
    middle of a game, or of writing one); then lets it finish. Returns how many kills hit a run
    that was still going."""
    rng = random.Random(seed)
    in_the_middle = 0
    for _ in range(kills):
        target = complete_games(folder) + rng.randint(1, games_per_kill)
        process = start(config, folder, log)
        try:
            while process.poll() is None and complete_games(folder) < target:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.3))
            running = process.poll() is None
        finally:
            kill_group(process)
        if not running:  # it finished before the kill: nothing left to interrupt
            break
        in_the_middle += 1
    process = start(config, folder, log)
    try:
        assert process.wait(120) == 0, log.read_text(encoding="utf-8", errors="replace")
    finally:
        kill_group(process)
    return in_the_middle


def check_same_as_uninterrupted(killed: Path, whole: Path) -> None:
    assert stripped_list(killed) == stripped_list(whole)
    assert cli("standings", killed, "--format", "json").stdout == cli("standings", whole, "--format", "json").stdout
    verify = cli("verify", killed)
    assert verify.returncode == 0, verify.stdout


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_gives_the_uninterrupted_result(tmp_path: Path) -> None:
    # In-process bots without the fast path that sleep 1 ms per decision: about 0.3 s a game, 12 games.
    config = write(tmp_path / "t.toml", tournament_text(spec=SLOW, deal_sets=3, seed=5))
    log = tmp_path / "run.log"
    whole = start(config, tmp_path / "whole", tmp_path / "whole.log")  # the reference, alongside
    try:
        hits = kill_and_resume(config, tmp_path / "killed", log, seed=20261129, kills=5, games_per_kill=2)
        assert whole.wait(120) == 0
    finally:
        kill_group(whole)
    assert hits >= 4, f"only {hits} kills landed in the middle of the run; see {log}"
    assert "already recorded" in log.read_text(encoding="utf-8")
    check_same_as_uninterrupted(tmp_path / "killed", tmp_path / "whole")


def test_sigkill_with_bots_over_grpc_then_resume(tmp_path: Path) -> None:
    # The sample random bot as four processes of their own for the whole run, connected over real gRPC (the
    # arena's kill is tested, not the bots' starts: a process per game would be 96 of them in each run).
    config = write(tmp_path / "t.toml", tournament_text(kind="command", spec=COMMAND, deal_sets=3, seed=8,
                                                       concurrency=2, tournament=KEPT))
    log = tmp_path / "run.log"
    whole = start(config, tmp_path / "whole", tmp_path / "whole.log")
    try:
        hits = kill_and_resume(config, tmp_path / "killed", log, seed=7, kills=1, games_per_kill=6)
        assert whole.wait(120) == 0
    finally:
        kill_group(whole)
    assert hits == 1, f"the kill did not land in the middle of the run; see {log}"
    check_same_as_uninterrupted(tmp_path / "killed", tmp_path / "whole")
