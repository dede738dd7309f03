"""Worker processes die with the arena: after a ``kill -9`` of a run with ``--workers``, no process the
arena started (the workers, the forkserver, the resource tracker) lives on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.runs import ROOT, SLOW, bot_tables, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)")


def _stat(pid: int) -> tuple[int, str, int] | None:
    """A process's parent, state and start time (``None`` when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
    return int(fields[1]), fields[0], int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every process below ``root``, with its start time (which tells it from a later one of the same pid)."""
    parents: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                parents[int(entry)] = (stat[0], stat[2])
    found: dict[int, int] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, started) in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = started
                frontier.append(pid)
    return found


def alive(pids: dict[int, int]) -> list[int]:
    """Those of ``pids`` still running (a zombie no one reaps has ended: it holds no memory)."""
    out = []
    for pid, started in pids.items():
        stat = _stat(pid)
        if stat is not None and stat[2] == started and stat[1] != "Z":
            out.append(pid)
    return out


def test_a_killed_arena_leaves_no_worker_forkserver_or_tracker_behind(tmp_path: Path) -> None:
    # Slowed bots on normal tables, enough deal sets that the workers are busy when the arena is killed.
    names = ("a", "b", "c", "d")
    config = write(tmp_path / "t.toml", '[tournament]\nname = "orphans"\nseed = 3\ndeal_sets = 200\nconcurrency = 2\n'
                   "\n[time]\ndeadline_ms = 10000\n" + bot_tables(names, spec=SLOW))
    log = tmp_path / "arena.err"
    with log.open("wb") as stderr:
        arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results",
                                  str(tmp_path / "results"), "--workers", "2", "--no-progress"],
                                 cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr)
    tree: dict[int, int] = {}
    try:
        records = tmp_path / "results" / "records.jsonl"
        deadline = time.monotonic() + 60
        # The workers have played a chunk (the records grew) and both exist: the tracker, the
        # forkserver and two workers at least.
        while time.monotonic() < deadline and arena.poll() is None:
            tree = descendants(arena.pid)
            if len(tree) >= 4 and records.exists() and records.stat().st_size > 0:
                break
            time.sleep(0.05)
        assert arena.poll() is None, log.read_text(encoding="utf-8")
        assert len(tree) >= 4, (tree, log.read_text(encoding="utf-8"))
        tree.update(descendants(arena.pid))
        os.kill(arena.pid, signal.SIGKILL)
        arena.wait(10)
        deadline = time.monotonic() + 10
        while alive(tree) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = alive(tree)
        assert left == [], [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left]
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait(10)
        for pid in alive(tree):  # this test's own leftovers, by the pids it recorded
            os.kill(pid, signal.SIGKILL)
