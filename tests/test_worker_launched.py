"""Launched bots on workers: with ``workers = 2``, the tables of ``command``, ``stdio`` and ``bhoos`` bots are
played by worker processes that launch the bots themselves, and the records are those of one process but for
their timings. Real bot processes, real sockets, real files."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.event.launch.sandbox import bwrap_problem
from arena.event.play.backends import REPLACEMENTS
from tests.conftest import free_port
from tests.helpers.bhoos import BHOOS_BOT
from tests.helpers.runs import (
    BOTS,
    COMMAND,
    KEPT,
    RANDOM,
    ROOT,
    UNSANDBOXED,
    cli,
    faults_of,
    kinds_text,
    run,
    standings,
    stripped_list,
    write,
)

PROBLEM = bwrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"bhoos bots need the sandbox: {PROBLEM}")
STDIO = f"{{python}} {ROOT / 'sample_bots' / 'stdio' / 'lowest_bot.py'}"
WORKERS = "workers = 2\n"


def both(tmp_path: Path, text: str, *, extra_one: str = "") -> tuple[Path, Path]:
    """Runs ``text`` in one process and with two workers; the two results folders."""
    one = write(tmp_path / "one.toml", text)
    two = write(tmp_path / "two.toml", text.replace("concurrency = 2\n", "concurrency = 2\n" + WORKERS, 1))
    assert one.read_text() != two.read_text()
    first = run(one, tmp_path / "one")
    second = run(two, tmp_path / "two")
    assert (first.played, first.faults, first.outstanding) == (second.played, second.faults, second.outstanding)
    assert first.played > 0 and first.outstanding == 0
    return tmp_path / "one", tmp_path / "two"


def launches(log: Path) -> int:
    return len(re.findall(r"\blaunched\b", log.read_text()))


@pytest.mark.slow
def test_command_bots_on_workers_give_the_records_of_one_process(tmp_path: Path) -> None:
    # Four long-lived gRPC bots and one in-process, 5 groups of 4 games: every table is a worker's.
    text = kinds_text([("a", "command", COMMAND), ("b", "command", COMMAND), ("c", "command", COMMAND),
                       ("d", "command", COMMAND), ("e", "python", RANDOM)], name="cmd", seed=3, deal_sets=1,
                      extra=UNSANDBOXED).replace("concurrency = 2\n", "concurrency = 2\n" + KEPT)
    one, two = both(tmp_path, text)
    assert stripped_list(one) == stripped_list(two)
    assert cli("verify", two).returncode == 0
    # One process per worker and bot, kept across the games and chunks: at most one per worker.
    for name in "abcd":
        assert 1 <= launches(two / "logs" / f"{name}.log") <= 2
        assert launches(one / "logs" / f"{name}.log") == 1


@pytest.mark.slow
def test_command_bots_launched_for_each_game_on_workers(tmp_path: Path) -> None:
    text = kinds_text([(n, "command", COMMAND) for n in "abcd"], name="fresh", seed=4, deal_sets=1,
                      extra=UNSANDBOXED).replace("concurrency = 2\n", "concurrency = 2\nfresh_process = true\n")
    one, two = both(tmp_path, text)
    assert stripped_list(one) == stripped_list(two)
    assert launches(two / "logs" / "a.log") == 4  # one process for each of its games


def test_stdio_bots_on_workers_give_the_records_of_one_process(tmp_path: Path) -> None:
    # The lowest-card bot, which first notes who started it: with workers, never the arena's process.
    parents = tmp_path / "parents.txt"
    lowest = str(ROOT / "sample_bots" / "stdio" / "lowest_bot.py")
    noting = write(tmp_path / "noting.py", f"import os, runpy\nwith open({str(parents)!r}, 'a') as out:\n"
                                           f"    out.write(f'{{os.getppid()}}\\n')\nrunpy.run_path({lowest!r})\n")
    text = kinds_text([("s1", "stdio", f"{{python}} {noting}"), ("s2", "stdio", STDIO), ("r1", "python", RANDOM),
                       ("r2", "python", RANDOM)], name="stdio", seed=5, deal_sets=2, extra=UNSANDBOXED)
    one = write(tmp_path / "one.toml", text)
    run(one, tmp_path / "one")
    assert set(parents.read_text().split()) == {str(os.getpid())}
    parents.unlink()
    two = write(tmp_path / "two.toml", text.replace("concurrency = 2\n", "concurrency = 2\n" + WORKERS, 1))
    summary = run(two, tmp_path / "two")
    assert (summary.played, summary.faults, summary.outstanding) == (8, 0, 0)
    started_by = set(parents.read_text().split())
    assert len(parents.read_text().split()) == 8 and str(os.getpid()) not in started_by
    assert stripped_list(tmp_path / "one") == stripped_list(tmp_path / "two")
    assert cli("verify", tmp_path / "two").returncode == 0
    assert launches(tmp_path / "two" / "logs" / "s2.log") == 8  # a process for each seat of each game


def _with_remote(text: str, port: int, token: str) -> str:
    return text.replace("[time]", f"[server]\nport = {port}\n\n[time]", 1) + (
        f'\n[[bots]]\nname = "g"\nremote = true\ntoken = "{token}"\n')


def _run_with_remote(config: Path, folder: Path, port: int, token: str) -> None:
    """Runs ``config`` with the remote bot ``g`` (the sample random bot, connecting by itself)."""
    bot = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--arena", f"127.0.0.1:{port}",
                            "--token", token], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        summary = run(config, folder)
        assert (summary.played, summary.faults, summary.outstanding) == (20, 0, 0)
        bot.wait(20)
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()


@pytest.mark.slow
def test_tables_without_a_remote_bot_go_to_the_workers_and_the_others_stay(tmp_path: Path) -> None:
    # Five bots, one of them remote: of the 5 groups of four, the one without the remote bot is the workers',
    # the four with it the arena's, launched bots included. Each stdio process notes who started it.
    parents = tmp_path / "parents.txt"
    lowest = str(ROOT / "sample_bots" / "stdio" / "lowest_bot.py")
    noting = write(tmp_path / "noting.py", f"import os, runpy\nwith open({str(parents)!r}, 'a') as out:\n"
                                           f"    out.write(f'{{os.getppid()}}\\n')\nrunpy.run_path({lowest!r})\n")
    text = kinds_text([("s1", "stdio", f"{{python}} {noting}"), ("c1", "command", COMMAND), ("s2", "stdio", STDIO),
                       ("r1", "python", RANDOM)], name="mixed", seed=8, deal_sets=1,
                      extra=UNSANDBOXED).replace("concurrency = 2\n", "concurrency = 2\n" + KEPT)
    port_one, port_two = free_port(), free_port()
    _run_with_remote(write(tmp_path / "one.toml", _with_remote(text, port_one, "ghost-1")), tmp_path / "one",
                     port_one, "ghost-1")
    assert set(parents.read_text().split()) == {str(os.getpid())}
    parents.unlink()
    two = _with_remote(text, port_two, "ghost-2").replace("concurrency = 2\n", "concurrency = 2\n" + WORKERS, 1)
    _run_with_remote(write(tmp_path / "two.toml", two), tmp_path / "two", port_two, "ghost-2")
    started_by = parents.read_text().split()
    # s1 plays 4 games in each of the 4 groups without one of the others: 12 at the arena's tables (with g)
    # and 4 at the workers' (without g).
    assert len(started_by) == 16
    assert started_by.count(str(os.getpid())) == 12
    assert stripped_list(tmp_path / "one") == stripped_list(tmp_path / "two")
    assert cli("verify", tmp_path / "two").returncode == 0
    # The long-lived command bot: the arena's own, and at most one per worker for the group without g.
    assert 2 <= launches(tmp_path / "two" / "logs" / "c1.log") <= 3


def test_a_long_lived_bot_that_dies_is_restarted_by_its_worker(tmp_path: Path) -> None:
    # Its process exits at its 30th card, every time: the worker starts it again, then gives up on it; the
    # arena then counts it broken, and the fallback player takes its seats in the games left.
    quitter = f"{{python}} {BOTS} Quitter --arena {{address}}"
    text = kinds_text([("q", "command", quitter), ("a", "command", COMMAND), ("r1", "python", RANDOM),
                       ("r2", "python", RANDOM)], name="quit", seed=2, deal_sets=2, concurrency=1,
                      time="deadline_ms = 2000\nreconnect_grace_s = 0.5\nabsent_after_s = 1",
                      extra=UNSANDBOXED + "[faults]\nrestarts = 1\n").replace(
        "concurrency = 1\n", 'concurrency = 1\nforfeit = "fallback"\nworkers = 2\n' + KEPT)
    summary = run(write(tmp_path / "t.toml", text), tmp_path / "out")
    assert (summary.played, summary.outstanding) == (8, 0)
    log = (tmp_path / "out" / "logs" / "q.log").read_text(encoding="utf-8")
    assert log.count(" launched: ") >= 2 and "ended with exit status 3" in log
    assert set(faults_of(tmp_path / "out")) == {"q"}
    assert launches(tmp_path / "out" / "logs" / "a.log") <= 2  # the other bot: once per worker at most
    assert cli("verify", tmp_path / "out").returncode == 0


def test_a_stdio_bot_that_cannot_start_is_broken_on_a_worker_as_in_one_process(tmp_path: Path) -> None:
    # Its program does not exist: its launches fail, the bot is broken, and its games are played by the
    # fallback player once the absence policy says so, as in one process.
    missing = f"{{python}} {tmp_path / 'nowhere.py'}"
    text = kinds_text([("s1", "stdio", missing), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="broken", seed=6, deal_sets=1,
                      time="deadline_ms = 2000\nabsent_after_s = 0").replace(
        "concurrency = 2\n", 'concurrency = 2\nforfeit = "fallback"\n')
    one, two = both(tmp_path, text)
    assert stripped_list(one) == stripped_list(two)
    assert set(faults_of(two)) == {"s1"}


@needs_bwrap
@pytest.mark.slow
def test_bhoos_bots_on_workers_give_the_records_of_one_process(tmp_path: Path) -> None:
    bot = write(tmp_path / "bot.py", BHOOS_BOT)
    text = kinds_text([(n, "bhoos", f"{{python}} {bot} modern") for n in ("b1", "b2", "b3")]
                      + [("r1", "python", RANDOM)], name="bhoos", seed=5, deal_sets=1,
                      rules='profile = "bhoos"\nrounds = 2')
    one, two = both(tmp_path, text)
    assert stripped_list(one) == stripped_list(two)
    assert cli("verify", two).returncode == 0
    assert "in the sandbox" in (two / "logs" / "b1.log").read_text()


# -- kill -9 of a worker, and of the arena ---------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _cmdline(pid: int) -> str:
    try:
        return (Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
    except OSError:
        return ""


def _workers(arena: int) -> list[int]:
    """The worker processes of an arena: the children of its forkserver that launched bots."""
    found = []
    for server in _children(arena):
        if "forkserver" in _cmdline(server):
            found += [pid for pid in _children(server) if _children(pid)]
    return found


def _games_in(folder: Path) -> int:
    path = folder / "records.jsonl"
    return path.read_text(encoding="utf-8").count('"final":true') if path.exists() else 0


KILLED = kinds_text([("a", "command", COMMAND), ("b", "command", COMMAND), ("c", "stdio", STDIO),
                     ("d", "stdio", STDIO), ("e", "python", RANDOM)], name="killed", seed=8, deal_sets=4,
                    extra=UNSANDBOXED).replace("concurrency = 2\n", "concurrency = 2\nworkers = 2\n" + KEPT)


_KILLED: set[int] = set()
"""Workers already returned by :func:`_when_playing` (a pid is not reused within a test)."""


def _start(config: Path, folder: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as stderr:
        return subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results", str(folder),
                                 "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr)


def _when_playing(arena: subprocess.Popen[bytes], folder: Path, log: Path, killed: bool = False) -> list[int]:
    """Waits until the run has recorded a few games and both workers run bots (``killed``: workers started
    since the last were killed, and no more than a few games); the workers."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and arena.poll() is None:
        workers = [pid for pid in _workers(arena.pid) if pid not in _KILLED]
        if len(workers) == 2 and (_games_in(folder) >= 8 or killed):
            _KILLED.update(workers)
            return workers
        time.sleep(0.05)
    raise AssertionError(f"the run did not get going: {log.read_text(encoding='utf-8')}")


def _uninterrupted(tmp_path: Path) -> Path:
    """The configuration of the killed runs, played once without a kill into ``whole``."""
    config = write(tmp_path / "t.toml", KILLED)
    whole = run(config, tmp_path / "whole", timeout=300)
    assert (whole.played, whole.outstanding) == (80, 0)
    return config


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)")
def test_kill_9_of_a_worker_gives_the_uninterrupted_records(tmp_path: Path) -> None:
    config = _uninterrupted(tmp_path)
    # A worker killed: new workers play the games that were in play, and the run ends as if nothing had
    # happened, with the same records.
    arena = _start(config, tmp_path / "handed", tmp_path / "handed.err")
    try:
        worker = _when_playing(arena, tmp_path / "handed", tmp_path / "handed.err")[0]
        os.kill(worker, signal.SIGKILL)
        assert arena.wait(240) == 0, (tmp_path / "handed.err").read_text(encoding="utf-8")
    finally:
        arena.kill()
        arena.wait()
    assert "a worker died while playing games" in (tmp_path / "handed.err").read_text(encoding="utf-8")
    assert stripped_list(tmp_path / "handed") == stripped_list(tmp_path / "whole")
    assert cli("verify", tmp_path / "handed").returncode == 0


@pytest.mark.slow
@pytest.mark.soak  # three runs killed and resumed; one killed worker is the test above
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)")
def test_workers_that_keep_dying_end_the_run_and_an_arena_killed_takes_its_workers_then_resume(tmp_path: Path) -> None:
    config = _uninterrupted(tmp_path)
    # Workers that keep dying: past the restarts a run allows, it ends with status 2 and the reason; the
    # games in flight are lost, the records written stay, and a resumed run plays the rest.
    arena = _start(config, tmp_path / "part", tmp_path / "one.err")
    try:
        for _ in range(REPLACEMENTS + 1):
            os.kill(_when_playing(arena, tmp_path / "part", tmp_path / "one.err", killed=True)[0], signal.SIGKILL)
        assert arena.wait(60) == 2
    finally:
        arena.kill()
        arena.wait()
    reason = (tmp_path / "one.err").read_text(encoding="utf-8").splitlines()[-1]
    assert "a worker could not play games" in reason and "terminated abruptly" in reason

    # The arena killed, in the middle of the resumed run: its workers and their bots end with it.
    arena = _start(config, tmp_path / "part", tmp_path / "two.err")
    try:
        workers = _when_playing(arena, tmp_path / "part", tmp_path / "two.err")
        bots = [pid for worker in workers for pid in _children(worker)]
        arena.send_signal(signal.SIGKILL)
        arena.wait(10)
    finally:
        arena.kill()
        arena.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() and _cmdline(pid)
                                              for pid in workers + bots):
        time.sleep(0.1)
    assert [pid for pid in workers + bots if _cmdline(pid)] == []

    resumed = cli("run", config, "--results", tmp_path / "part", "--no-progress", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert stripped_list(tmp_path / "part") == stripped_list(tmp_path / "whole")
    assert standings(tmp_path / "part")["standings"] == standings(tmp_path / "whole")["standings"]
    assert cli("verify", tmp_path / "part").returncode == 0
