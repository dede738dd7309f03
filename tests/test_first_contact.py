"""What a new student, teacher or researcher meets in their first hour, tried from their side: the
terminal, the messages, the files they open."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.event.plan.status import Progress
from arena.event.run.tournament import Tournament, woken
from arena.event.setup.config import parse_config
from tests.helpers.runs import ROOT, bot_tables, cli, tournament_text, write


def test_a_log_line_clears_the_progress_bar_and_the_bar_comes_back_after_it() -> None:
    terminal = io.StringIO()
    bar = Progress(10, 0, True, file=terminal)
    bar.update(0, {}, step=1)
    with bar.writing():
        terminal.write("callbreak-arena: ghost is absent\n")
    bar.update(0, {}, step=1)
    bar.close()
    shown = terminal.getvalue()
    before, after = shown.split("callbreak-arena: ghost is absent\n")
    # The line starts on a cleared line (no bar text before it), and the bar is drawn again below it.
    assert before.endswith("\r") and before.split("\r")[-2].strip() == ""
    assert "game/s" in after


def test_the_tournament_log_goes_around_its_progress_bar(tmp_path: Path) -> None:
    lines: list[str] = []
    tournament = Tournament(parse_config(tournament_text()), tmp_path / "out", log=lines.append)
    terminal = io.StringIO()
    tournament.monitor.bar = Progress(4, 0, True, file=terminal)
    tournament.log("a line")
    # The bar was cleared for the line (the log's own stream is its terminal too), then drawn again.
    assert lines == ["a line"] and "\r" + " " * 20 in terminal.getvalue()
    assert terminal.getvalue().endswith("game/s]")


def test_a_cancel_that_comes_as_the_dispatcher_is_woken_is_not_lost() -> None:
    # The first Ctrl-C cancels the run's main task; arriving just as the event it waits on is set, it was dropped
    # (asyncio.wait_for in Python 3.11) and the event played on to its end.
    async def race() -> bool:
        event = asyncio.Event()
        waiting = asyncio.create_task(woken(event, 10.0))
        await asyncio.sleep(0)
        event.set()
        waiting.cancel()
        try:
            await waiting
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(race())


CTRL_C = f"""
[tournament]
name = "ctrl-c"
seed = 5
deal_sets = 30
concurrency = 2

[[bots]]
name = "launched"
command = "{{python}} -m sample_bots.random_bot --arena {{address}} --seed {{seed}}"
{bot_tables(("r2", "r3", "r4"))}
"""


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_first_ctrl_c_stops_a_run_says_how_to_resume_and_exits_130(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", CTRL_C)
    folder = tmp_path / "out"
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of its own, as a person's shell gives it
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "arena", "run", str(config), "--results", str(folder)])
    shown = b""

    def read(seconds: float) -> None:
        nonlocal shown
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    shown += os.read(fd, 65536)
                except OSError:
                    return

    try:
        deadline = time.monotonic() + 60
        while not (folder / "records.jsonl").exists() or (folder / "records.jsonl").stat().st_size < 20_000:
            read(0.2)
            assert time.monotonic() < deadline, shown.decode(errors="replace")
        bots = _descendants(pid)
        assert bots, "the launched bot runs below the arena"
        os.write(fd, b"\x03")  # Ctrl-C, as the terminal sends it: SIGINT to the foreground process group
        stopped = time.monotonic()
        status = None
        while status is None and time.monotonic() - stopped < 15:
            read(0.2)
            done, code = os.waitpid(pid, os.WNOHANG)
            status = os.waitstatus_to_exitcode(code) if done else None
        read(0.5)
        text = shown.decode(errors="replace")
        assert status == 130, text
        assert "stopped by Ctrl-C" in text and "To resume, run the same command again" in text
        assert not {p for p in bots if Path(f"/proc/{p}").exists() and "Z" not in _state(p)}, "bots left running"
    finally:
        with contextlib.suppress(ChildProcessError, ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    # The records are whole: the same command resumes and finishes, and the folder verifies.
    resumed = cli("run", config, "--results", folder, "--no-progress", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert cli("verify", folder).returncode == 0


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_a_key_in_the_wrong_table_is_pointed_to_its_own(tmp_path: Path) -> None:
    text = tournament_text(tournament="absent_after_s = 60\n")
    result = cli("run", write(tmp_path / "t.toml", text), "--results", tmp_path / "out")
    assert result.returncode == 2
    assert "unknown key tournament.'absent_after_s'; absent_after_s belongs in the [time] table, not here" in (
        result.stderr)
    typo = cli("run", write(tmp_path / "u.toml", tournament_text(tournament="deal_set = 3\n")))
    assert "did you mean 'deal_sets'?" in typo.stderr


def test_waiting_on_an_event_already_set_still_lets_the_loop_run() -> None:
    # The dispatcher sets its own event; a wait that returned without yielding spun and starved the bots.
    async def order() -> list[str]:
        seen: list[str] = []

        async def other() -> None:
            seen.append("other task")

        event = asyncio.Event()
        event.set()
        task = asyncio.create_task(other())
        await woken(event, 10.0)
        seen.append("woken")
        await task
        return seen

    assert asyncio.run(order()) == ["other task", "woken"]


def test_sigterm_stops_a_waiting_serve_even_where_ctrl_c_is_ignored(tmp_path: Path) -> None:
    # A background job or nohup starts the arena with SIGINT ignored: SIGTERM must still stop it, cleanly.
    text = tournament_text(("r1", "r2", "r3", "r4"), deal_sets=1) + (
        '\n[[bots]]\nname = "ghost"\nremote = true\ntoken_sha256 = "' + "7c" * 32 + '"\n')
    config = write(tmp_path / "t.toml", text)
    arena = subprocess.Popen([sys.executable, "-m", "arena", "serve", str(config), "--results", str(tmp_path / "out"),
                              "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert arena.stderr is not None
        said = ""
        while "arena listening on" not in said:
            line = arena.stderr.readline()
            assert line, said
            said += line
        time.sleep(1.0)  # the games without the ghost are played; the arena waits for it
        arena.send_signal(signal.SIGTERM)
        _, rest = arena.communicate(timeout=30)
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
    assert arena.returncode == 143, said + rest
    assert "stopped by SIGTERM" in rest and "To resume, run the same command again" in rest
