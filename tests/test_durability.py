"""Durability as docs/records.md promises it, and what must not outlive the arena.

- Each record is fsynced by a group commit on a worker thread, started at most 0.2 s after the
  record was written, whether or not an event loop runs and however slow the disk; never more
  often than every 0.2 s; and always when the store closes. ``os.fsync`` is wrapped to see when it
  is called, on which file and on which thread. The store's clock is a fake one the tests move on,
  so the timings asserted are exact and no test sleeps; one test runs the store on the real clock.
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
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.records.store import ResultsStore
from tests.helpers.processes import gone, running
from tests.helpers.runs import ROOT, cli, copy_results, finished_tournament, tournament_text, write

INTERVAL = 0.2
EPSILON = 1e-9
"""For sums of fake seconds (0.1 + 0.1 is not 0.2 in floating point)."""
STUCK = 30.0
"""Seconds after which a thread that should have gone on is taken to be stuck (a failure, not a hang)."""


class FakeClock:
    """Monotonic seconds that move only when :meth:`advance` says; the store's timers follow them."""

    def __init__(self) -> None:
        self.now = 0.0
        self.changed = threading.Condition()
        self.timers: list[FakeTimer] = []

    def __call__(self) -> float:
        with self.changed:
            return self.now

    def timer(self, delay: float, function: Callable[[], None]) -> threading.Timer:
        """What the store gets for ``threading.Timer``: due ``delay`` seconds from now on this clock."""
        made = FakeTimer(self, self() + delay, function)
        self.timers.append(made)
        return made

    def advance(self, seconds: float = 0.0) -> None:
        """Moves the clock on by ``seconds``, stopping at each timer due on the way to let it run (and
        those it starts), as time passing would; ``advance()`` alone settles what is due now."""
        target = self.now + seconds
        self._settle()
        while due := [t.due for t in self.timers if t.is_alive() and self.now < t.due <= target + EPSILON]:
            self.move(min(due) - self.now)
            self._settle()
        self.move(target - self.now)
        self._settle()

    def move(self, seconds: float) -> None:
        """Moves the clock on without waiting for any timer (one may be held up in a slow fsync)."""
        with self.changed:
            self.now += seconds
            self.changed.notify_all()

    def _settle(self) -> None:
        while due := [t for t in self.timers if t.is_alive() and t.due <= self.now + EPSILON]:
            for made in due:
                made.join(STUCK)
                assert not made.is_alive(), "a group commit never finished"


class FakeTimer(threading.Timer):
    """A ``threading.Timer`` that waits for a :class:`FakeClock` to reach its time instead of sleeping."""

    def __init__(self, clock: FakeClock, due: float, function: Callable[[], None]) -> None:
        super().__init__(0.0, function)
        self.clock = clock
        self.due = due

    def run(self) -> None:
        with self.clock.changed:
            self.clock.changed.wait_for(lambda: self.finished.is_set() or self.clock.now >= self.due - EPSILON)
        if not self.finished.is_set():
            self.function()
        self.finished.set()

    def cancel(self) -> None:
        super().cancel()
        with self.clock.changed:
            self.clock.changed.notify_all()


class FsyncLog:
    """Wraps ``os.fsync``: when each call on the records file began and ended (on ``clock``), and on
    which thread. With ``gate``, each call on the records file waits for it: a disk as slow as the
    test wants."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, fail: bool = False,
                 gate: threading.Event | None = None) -> None:
        self.calls: list[tuple[float, float, str]] = []
        self.clock = clock
        self.fail = fail
        self.gate = gate
        self.entered = threading.Event()
        """Set when an fsync of the records file has begun."""
        self._real = os.fsync

    def __call__(self, fd: int) -> None:
        start = self.clock()
        if os.readlink(f"/proc/self/fd/{fd}").endswith("records.jsonl"):
            self.entered.set()
            if self.fail:
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            if self.gate is not None:
                assert self.gate.wait(STUCK), "the test never let the fsync finish"
            self._real(fd)
            self.calls.append((start, self.clock(), threading.current_thread().name))
        else:
            self._real(fd)

    def starts(self) -> list[float]:
        return [start for start, _, _ in self.calls]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> Iterator[FsyncLog]:
    log = FsyncLog(clock)
    monkeypatch.setattr(os, "fsync", log)
    yield log


def store_on(folder: Path, clock: FakeClock, sync_interval: float = INTERVAL) -> ResultsStore:
    """A store whose group commit runs on ``clock``."""
    return ResultsStore(folder, sync_interval, clock=clock, timer=clock.timer)


def covered(write_time: float, log: FsyncLog) -> bool:
    """Whether an fsync began after ``write_time``, within the interval."""
    return any(write_time - EPSILON <= start <= write_time + INTERVAL + EPSILON for start in log.starts())


def commit_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "fsync records"]


def test_a_record_is_fsynced_within_the_interval_with_no_event_loop(tmp_path: Path, clock: FakeClock,
                                                                    fsyncs: FsyncLog) -> None:
    store = store_on(tmp_path, clock)
    written = []
    for k in range(3):
        store.append([f'{{"line": {k}}}\n'])
        written.append(clock())
        clock.advance(0.05)
    clock.advance(INTERVAL)
    assert store.unsynced == 0
    assert all(covered(w, fsyncs) for w in written), (written, fsyncs.calls)
    assert fsyncs.starts() == pytest.approx([0.0, INTERVAL])  # at once, then the two later lines in one commit
    assert {thread for _, _, thread in fsyncs.calls} == {"fsync records"}  # never the caller's thread
    store.close()


def test_a_record_written_during_a_slow_fsync_gets_one_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   clock: FakeClock) -> None:
    """The case the old loop timer missed: its timer found an fsync in flight and gave up."""
    gate = threading.Event()
    log = FsyncLog(clock, gate=gate)
    monkeypatch.setattr(os, "fsync", log)

    async def scenario() -> ResultsStore:
        store = store_on(tmp_path, clock)
        store.append(['{"line": 1}\n'])
        assert log.entered.wait(STUCK)  # the first fsync is under way, and stays so until the gate opens
        clock.move(0.1)
        store.append(['{"line": 2}\n'])  # returns with the fsync still in flight: the disk never holds it up
        assert not log.calls and store.unsynced == 2
        gate.set()
        clock.advance()  # the first commit ends, covering line 1 only, and starts one for line 2
        assert store.unsynced == 1 and log.starts() == [0.0]
        clock.advance(0.1)
        assert store.unsynced == 0
        return store

    store = asyncio.run(scenario())  # an event loop runs meanwhile, and changes nothing
    assert log.starts() == pytest.approx([0.0, INTERVAL])  # line 2's own fsync, an interval after the first began
    store.close()


def test_a_steady_stream_is_fsynced_at_most_once_per_interval(tmp_path: Path, clock: FakeClock,
                                                              fsyncs: FsyncLog) -> None:
    store = store_on(tmp_path, clock)
    written = []
    for _ in range(100):  # a line every 10 ms for a second
        store.append(['{"round": 1}\n'])
        written.append(clock())
        clock.advance(0.01)
    clock.advance(INTERVAL)
    starts = fsyncs.starts()
    assert store.unsynced == 0
    assert all(covered(w, fsyncs) for w in written), (written, starts)
    assert all(b - a >= INTERVAL - EPSILON for a, b in itertools.pairwise(starts)), starts
    assert starts == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    store.close()


def test_close_fsyncs_what_is_left_and_leaves_no_thread(tmp_path: Path, clock: FakeClock, fsyncs: FsyncLog) -> None:
    store = store_on(tmp_path, clock)
    store.append(['{"line": 1}\n'])
    clock.advance()
    store.append(['{"line": 2}\n'])  # within the interval: waiting for the group commit
    store.close()
    assert fsyncs.calls[-1][2] == threading.current_thread().name  # close() made it durable itself
    assert store.unsynced == 0
    clock.advance(INTERVAL + 0.1)
    assert not commit_threads()
    assert fsyncs.starts() == [0.0, 0.0]  # the first commit, then close(): no commit ran on after close
    assert (tmp_path / "records.jsonl").read_text(encoding="utf-8") == '{"line": 1}\n{"line": 2}\n'


def test_interval_zero_fsyncs_in_every_append(tmp_path: Path, clock: FakeClock, fsyncs: FsyncLog) -> None:
    store = store_on(tmp_path, clock, sync_interval=0)
    for k in range(3):
        store.append([f'{{"line": {k}}}\n'])
        assert len(fsyncs.calls) == k + 1
    assert not clock.timers
    store.close()


def test_a_failed_fsync_is_raised_by_the_next_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     clock: FakeClock) -> None:
    monkeypatch.setattr(os, "fsync", FsyncLog(clock, fail=True))
    store = store_on(tmp_path, clock)
    store.append(['{"line": 1}\n'])
    clock.advance()
    with pytest.raises(OSError, match="Input/output error"):
        store.append(['{"line": 2}\n'])
    monkeypatch.undo()
    store.close()


def test_on_the_real_clock_a_record_is_fsynced_by_the_commit_thread(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as the arena makes it (``time.monotonic``, ``threading.Timer``): no timing is asserted,
    only that the commit happens, on its own thread."""
    log = FsyncLog()
    monkeypatch.setattr(os, "fsync", log)
    store = ResultsStore(tmp_path)
    store.append(['{"line": 1}\n'])
    store.append(['{"line": 2}\n'])
    deadline = time.monotonic() + STUCK
    while store.unsynced and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store.unsynced == 0
    assert {thread for _, _, thread in log.calls} == {"fsync records"}
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

