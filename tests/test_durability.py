"""Durability as docs/records.md promises it, and what must not outlive the arena.

- Each record is fsynced by a group commit on a worker thread, started at most 0.2 s after the
  record was written, whether or not an event loop runs and however slow the disk; never more
  often than every 0.2 s; and always when the store closes. ``os.fsync`` is wrapped to see when it
  is called, on which file and on which thread.
- A results folder whose manifest is missing is refused (records untouched) unless ``--fresh``;
  a damaged line in the middle of the records is one line on stderr naming the file, the line and
  the fault.
- A launched bot is killed with the arena, even by ``kill -9``, even one that never reads its
  standard input (Linux).
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.event.store import ResultsStore
from tests.data.runs import ROOT, cli, copy_results, finished_tournament, tournament_text, write

INTERVAL = 0.2
SLACK = 0.3
"""Time allowed for a thread to be scheduled on a busy machine, on top of the interval."""


class FsyncLog:
    """Wraps ``os.fsync``: when each call on the records file began and ended, and on which thread."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.calls: list[tuple[float, float, str]] = []
        self.delay = delay
        self.fail = fail
        self._real = os.fsync

    def __call__(self, fd: int) -> None:
        start = time.monotonic()
        if os.readlink(f"/proc/self/fd/{fd}").endswith("records.jsonl"):
            if self.fail:
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            time.sleep(self.delay)
            self._real(fd)
            self.calls.append((start, time.monotonic(), threading.current_thread().name))
        else:
            self._real(fd)

    def starts(self) -> list[float]:
        return [start for start, _, _ in self.calls]


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> Iterator[FsyncLog]:
    log = FsyncLog()
    monkeypatch.setattr(os, "fsync", log)
    yield log


def covered(write_time: float, log: FsyncLog) -> bool:
    """Whether an fsync began after ``write_time``, soon enough."""
    return any(write_time <= start <= write_time + INTERVAL + SLACK for start in log.starts())


def commit_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "fsync records"]


def test_a_record_is_fsynced_within_the_interval_with_no_event_loop(tmp_path: Path, fsyncs: FsyncLog) -> None:
    store = ResultsStore(tmp_path)
    written = []
    for k in range(3):
        store.append([f'{{"line": {k}}}\n'])
        written.append(time.monotonic())
        time.sleep(0.05)
    time.sleep(INTERVAL + SLACK + 0.2)
    assert store.unsynced == 0
    assert all(covered(w, fsyncs) for w in written), (written, fsyncs.calls)
    assert 1 <= len(fsyncs.calls) <= 2  # a group commit, not an fsync per line
    assert {thread for _, _, thread in fsyncs.calls} == {"fsync records"}  # never the caller's thread
    store.close()


def test_a_record_written_during_a_slow_fsync_gets_one_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   ) -> None:
    """The case the old loop timer missed: its timer found an fsync in flight and gave up."""
    log = FsyncLog(delay=0.35)
    monkeypatch.setattr(os, "fsync", log)

    async def scenario() -> tuple[float, float]:
        store = ResultsStore(tmp_path)
        store.append(['{"line": 1}\n'])
        await asyncio.sleep(0.1)  # the first fsync is under way
        start = time.monotonic()
        store.append(['{"line": 2}\n'])
        second = time.monotonic()
        await asyncio.sleep(1.2)  # the loop keeps running: nothing else is written
        assert store.unsynced == 0, log.calls
        store.close()
        return second, second - start

    second, append_took = asyncio.run(scenario())
    assert append_took < 0.05  # the slow disk never holds up the caller
    assert any(second <= start <= second + 0.35 + INTERVAL + SLACK for start in log.starts()), (second, log.calls)


def test_a_steady_stream_is_fsynced_at_most_once_per_interval(tmp_path: Path, fsyncs: FsyncLog) -> None:
    store = ResultsStore(tmp_path)
    written = []
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        store.append(['{"round": 1}\n'])
        written.append(time.monotonic())
        time.sleep(0.01)
    time.sleep(INTERVAL + SLACK)
    starts = fsyncs.starts()
    assert len(written) > 40
    assert all(covered(w, fsyncs) for w in written)
    assert all(b - a >= INTERVAL - 0.01 for a, b in itertools.pairwise(starts)), starts
    assert len(starts) <= 1.0 / INTERVAL + 2
    store.close()


def test_close_fsyncs_what_is_left_and_leaves_no_thread(tmp_path: Path, fsyncs: FsyncLog) -> None:
    store = ResultsStore(tmp_path)
    store.append(['{"line": 1}\n'])
    store.append(['{"line": 2}\n'])  # within the interval: waiting for the group commit
    store.close()
    closed = time.monotonic()
    assert fsyncs.calls[-1][2] == threading.current_thread().name  # close() made it durable itself
    assert store.unsynced == 0
    time.sleep(INTERVAL + 0.1)
    assert not commit_threads()
    assert all(start <= closed for start in fsyncs.starts())  # no commit ran on after close
    assert (tmp_path / "records.jsonl").read_text(encoding="utf-8") == '{"line": 1}\n{"line": 2}\n'


def test_interval_zero_fsyncs_in_every_append(tmp_path: Path, fsyncs: FsyncLog) -> None:
    store = ResultsStore(tmp_path, sync_interval=0)
    for k in range(3):
        store.append([f'{{"line": {k}}}\n'])
        assert len(fsyncs.calls) == k + 1
    store.close()


def test_a_failed_fsync_is_raised_by_the_next_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", FsyncLog(fail=True))
    store = ResultsStore(tmp_path)
    store.append(['{"line": 1}\n'])
    time.sleep(INTERVAL + SLACK)
    with pytest.raises(OSError, match="Input/output error"):
        store.append(['{"line": 2}\n'])
    monkeypatch.undo()
    store.close()


# -- folders the run must not touch ---------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished in-process tournament (8 games of 5 rounds) and its configuration."""
    return finished_tournament(tmp_path_factory.mktemp("durability"), seed=5)


@pytest.fixture
def folder(finished: Path, tmp_path: Path) -> Path:
    return copy_results(finished, tmp_path)


def one_line(stderr: str) -> str:
    """The error line of a run's stderr (after the banner line ``run`` prints first)."""
    lines = [line for line in stderr.splitlines() if not line.startswith("callbreak-arena 0.")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_records_without_a_manifest_are_refused_and_kept(folder: Path) -> None:
    (folder / "manifest.json").unlink()
    before = (folder / "records.jsonl").read_bytes()
    result = cli("run", folder.parent / "t.toml", "--results", folder, "--no-progress")
    assert result.returncode == 1  # a folder of unknown configuration, as docs/operations.md says
    line = one_line(result.stderr)
    assert "manifest.json is missing" in line and "--fresh" in line
    assert (folder / "records.jsonl").read_bytes() == before
    assert not (folder / "manifest.json").exists()
    again = cli("run", folder.parent / "t.toml", "--results", folder, "--no-progress", "--fresh")
    assert again.returncode == 0, again.stderr
    assert (folder / "manifest.json").exists()


@pytest.mark.parametrize(("damage", "words"), [
    ("{}", "the record has no 'v' field"),
    ('{"v": 2}', "the record has no 'final' field"),
    ("[1, 2]", "not a JSON record"),
    ("not json", "not a JSON record"),
])
def test_a_damaged_middle_line_is_one_line_naming_the_file_and_the_line(folder: Path, damage: str, words: str,
                                                                        ) -> None:
    path = folder / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[6] = damage + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    result = cli("run", folder.parent / "t.toml", "--results", folder, "--no-progress")
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert f"{path}, line 7" in line and words in line, line
    assert path.read_text(encoding="utf-8") == "".join(lines)  # nothing cut away
    for command in ("standings", "replay"):
        args = (folder, "r1-g1-d1-p1") if command == "replay" else (folder,)
        shown = cli(command, *args)
        assert shown.returncode == 1
        assert f"{path}, line 7" in one_line(shown.stderr)


def test_a_torn_last_line_is_still_cut_off_and_its_game_played_again(folder: Path) -> None:
    path = folder / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])
    result = cli("run", folder.parent / "t.toml", "--results", folder, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "1 games played, 7 already recorded" in result.stderr
    assert len(path.read_bytes().splitlines()) == 40


# -- launched bots die with the arena ------------------------------------------------------------

SLEEPER = """\
import time
time.sleep(600)  # never reads its standard input, never connects
"""


def gone(pid: int) -> bool:
    """True when the process has ended (a zombie waiting for a reaper counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def running(script: Path) -> dict[int, list[str]]:
    """The live processes whose command line names ``script`` (the bot, and the steps that start it)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if str(script) in argv and not gone(int(entry.name)):
                found[int(entry.name)] = argv
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_a_launched_bot_dies_with_an_arena_killed_at_start(tmp_path: Path, sandbox: str) -> None:
    script = write(tmp_path / "sleeper.py", SLEEPER)
    extra = f'\n[sandbox]\nmode = "{sandbox}"\n\n[[bots]]\nname = "sleeper"\ncommand = "{{python}} {script}"\n'
    config = write(tmp_path / "t.toml", tournament_text(("r1", "r2", "r3"), name="kill", extra=extra))
    arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results", str(tmp_path / "out"),
                              "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not any(argv[1:2] == [str(script)] for argv in running(script).values()):  # the bot itself runs
            assert arena.poll() is None, arena.communicate()[1]
            assert time.monotonic() < deadline, "the bot was never launched"
            time.sleep(0.01)
        pids = list(running(script))
        arena.kill()  # SIGKILL, at once: no clean-up code of the arena runs
        arena.wait()
        deadline = time.monotonic() + 5
        while running(script) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(script), "the launched bot outlived the arena"
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
        for pid in pids:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
        if arena.stderr is not None:
            arena.stderr.close()

