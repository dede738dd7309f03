"""The sandbox of launched bots: a bot that spies finds nothing, under real bubblewrap.

A spy bot, launched by a real tournament, tries at start what a hostile student's file would: read the
records of the run, reach the network, read another bot's folder, see the arena's environment and its
processes, allocate more memory than its limit, start 200 processes, and fill its ``/tmp``, its ``/dev/shm`` and
the rest of its file system. It writes what it managed into its log, then plays as the random bot does. Under
``mode = "off"`` the same bot manages all of it (but the processes, where a cgroup caps them in every mode), so the
tests would catch a sandbox that confines nothing.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.event.launch import cgroups
from arena.event.launch.sandbox import LIFELINE_FD, bot_environment, bwrap_problem, own_folder, sandboxed
from arena.event.launch.startstep import limited, memory_file
from arena.event.setup.config import load_config, parse_config
from arena.event.setup.sandboxing import SandboxSettings
from tests.helpers.processes import running
from tests.helpers.runs import ROOT, cli, run, tournament_text, write

PROBLEM = bwrap_problem()
PROCESSES = 32
"""The spy's ``[sandbox] processes``: it tries to start 200."""
FILL = 16 << 20
"""What the spy tries to write to each place; its ``tmp_mb`` is 4."""
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"no sandbox on this machine: {PROBLEM}")

SPY = '''\
import json, os, resource, signal, socket, sys, tempfile, time
from arena.botkit import run
from sample_bots.random_bot import RandomBot

found = {}
def attempt(what, action):
    try:
        found[what] = repr(action())[:200]
    except BaseException as err:
        found[what] = "refused: " + type(err).__name__

def processes():
    children = []
    for _ in range(200):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return len(children)

def fill(folder):
    written = 0
    handle, path = tempfile.mkstemp(dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            while written < FILL:
                out.write(bytes(1 << 20))
                out.flush()
                written += 1 << 20
    except OSError:
        pass
    finally:
        os.unlink(path)
    return written

found["processes"] = processes()
found["tmp"] = fill("/tmp")
found["shm"] = fill("/dev/shm")
attempt("root", lambda: open("/callbreak-spy", "wb").close())

attempt("results", lambda: os.listdir(RESULTS))
attempt("manifest", lambda: open(os.path.join(RESULTS, "manifest.json")).read(100))
attempt("other bot", lambda: open(SECRET).read())
attempt("network", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2).close())
attempt("arena process", lambda: os.kill(ARENA_PID, 0))
attempt("memory", lambda: len(bytearray(1536 * 2**20)))
found["secret variable"] = os.environ.get("SANDBOX_TEST_SECRET", "")
found["address space"] = resource.getrlimit(resource.RLIMIT_AS)[0]
found["cpus"] = len(os.sched_getaffinity(0))
found["token"] = bool(os.environ.get("CALLBREAK_TOKEN"))
print("SPY " + json.dumps(found), file=sys.stderr, flush=True)
run(RandomBot)
'''


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port on loopback that accepts connections: a spy outside the sandbox reaches it."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def spy_run(tmp_path: Path, port: int, mode: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """Plays one deal set with the spy launched and three in-process random bots; what the spy found."""
    results = tmp_path / "results"
    other = tmp_path / "bots" / "other"
    other.mkdir(parents=True)
    (other / "secret.txt").write_text("the other bot's strategy")
    spy_folder = tmp_path / "bots" / "spy"
    spy_folder.mkdir()
    (spy_folder / "spy.py").write_text(
        f"RESULTS = {str(results)!r}\nSECRET = {str(other / 'secret.txt')!r}\nPORT = {port}\n"
        f"ARENA_PID = {os.getpid()}\nFILL = {FILL}\n" + SPY)
    monkeypatch.setenv("SANDBOX_TEST_SECRET", "hunter2")
    config = tournament_text(
        ("spy", "r2", "r3", "r4"), deal_sets=1,
        extra=f'\n[sandbox]\nmode = "{mode}"\ncpus = 1\nmemory_mb = 1024\nprocesses = {PROCESSES}\ntmp_mb = 4\n',
    ).replace('name = "spy"\npython = "sample_bots.random_bot:RandomBot"',
              f'name = "spy"\ncommand = "{{python}} {spy_folder / "spy.py"} --arena {{address}} --seed {{seed}}"')
    summary = run(write(tmp_path / "t.toml", config), results, fresh=True)
    assert summary.played == 4 and summary.outstanding == 0 and summary.faults == 0
    log = (results / "logs" / "spy.log").read_text()
    line = next(line for line in log.splitlines() if line.startswith("SPY "))
    return json.loads(line[4:])  # type: ignore[no-any-return]


@needs_bwrap
def test_a_sandboxed_bot_cannot_read_records_reach_the_network_or_read_another_bot(
    tmp_path: Path, listener: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = spy_run(tmp_path, listener, "bwrap", monkeypatch)
    assert found["results"] == "refused: FileNotFoundError"
    assert found["manifest"] == "refused: FileNotFoundError"
    assert found["other bot"] == "refused: FileNotFoundError"
    assert found["network"].startswith("refused: ")  # type: ignore[union-attr]
    assert found["arena process"] == "refused: ProcessLookupError"
    assert found["memory"] == "refused: MemoryError"
    assert found["secret variable"] == ""
    assert found["address space"] == 1024 * 2**20
    assert found["cpus"] == 1 or len(os.sched_getaffinity(0)) == 1
    assert found["token"] is True
    assert oct((tmp_path / "results").stat().st_mode & 0o777) == oct(0o700)
    assert 16 <= found["processes"] < PROCESSES  # itself and the sandbox's first process are counted too
    assert found["tmp"] == found["shm"] == 4 << 20  # each full at tmp_mb, and not a byte past it
    assert found["root"] == "refused: OSError"  # read-only: nowhere else to write


def test_without_the_sandbox_the_same_spy_gets_everything(
    tmp_path: Path, listener: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control: what the sandbox takes away is there to take (and the limits still hold)."""
    found = spy_run(tmp_path, listener, "off", monkeypatch)
    assert "manifest.json" in str(found["results"])
    assert not str(found["manifest"]).startswith("refused")
    assert "strategy" in str(found["other bot"])
    assert found["network"] == "None"
    assert found["arena process"] == "None"
    assert found["secret variable"] == ""  # a launched bot's environment is made afresh, sandbox or not
    assert found["memory"] == "refused: MemoryError"
    assert found["address space"] == 1024 * 2**20
    assert found["tmp"] == found["shm"] == FILL  # the machine's own /tmp: the sandbox's size is not there
    # A cgroup of the bot's own caps its processes in every mode, where the machine gives the arena one.
    assert found["processes"] < PROCESSES if cgroups.delegated("pids") else found["processes"] == 200


def test_mode_bwrap_refuses_to_run_where_bwrap_is_missing(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(
        ("a", "b", "c", "d"), kind="command", spec="{python} -m sample_bots.random_bot --arena {address}",
        extra='\n[sandbox]\nmode = "bwrap"\n'))
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}  # a PATH without bwrap
    result = cli("run", config, "--results", tmp_path / "results", env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1:] == [
        'callbreak-arena: error: sandbox.mode is "bwrap" but bubblewrap (bwrap) is not installed (on Debian or '
        'Ubuntu: apt install bubblewrap); install it, or set sandbox.mode = "auto" to run the bots unsandboxed']
    assert not (tmp_path / "results" / "records.jsonl").exists()


def test_mode_auto_warns_and_plays_where_bwrap_is_missing(tmp_path: Path) -> None:
    config = write(tmp_path / "t.toml", tournament_text(
        ("a", "b", "c", "d"), deal_sets=1, kind="command",
        spec="{python} -m sample_bots.random_bot --arena {address} --seed {seed}"))
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}
    result = cli("run", config, "--results", tmp_path / "results", "--no-progress", env=env)
    assert result.returncode == 0, result.stderr
    assert ("warning: the 4 launched bots run unsandboxed:\ncallbreak-arena:   bubblewrap (bwrap) is not installed "
            "(on Debian or Ubuntu: apt install bubblewrap).") in result.stderr
    warning = result.stderr[result.stderr.index("warning: the 4 launched"):].splitlines()[:4]
    assert max(len(line) for line in warning) <= 120 and "install bubblewrap" in warning[3]  # no 330-column line


def test_a_bots_own_folder() -> None:
    python = sys.executable
    assert own_folder([python, "sample_bots/heuristic_bot.py"], None) == ROOT / "sample_bots"
    assert own_folder([python, "-m", "sample_bots.heuristic_bot", "--arena", "x"], None) == ROOT / "sample_bots"
    assert own_folder(["node", "tests/data"], None) == ROOT / "tests" / "data"
    assert own_folder([python, "-c", "print(1)"], None) is None
    assert own_folder([python, "-c", "print(1)"], Path("tests")) == ROOT / "tests"


def test_sandbox_settings_are_checked(tmp_path: Path) -> None:
    base = tournament_text(kind="command", spec="{python} -m sample_bots.random_bot --arena {address}")
    for table, words in [
        ('mode = "docker"', "sandbox.mode must be one of: auto, bwrap, off; not 'docker'"),
        ("cpus = -1", "sandbox.cpus must be a whole number from 0 to 4096, not -1"),
        ("memory = 5", "unknown key sandbox.'memory'"),
        ("read_only = [1]", "sandbox.read_only must list folders as strings"),
    ]:
        with pytest.raises(ConfigError, match=words.replace(".", r"\.").replace("(", r"\(").replace("[", r"\[")):
            parse_config(base + f"\n[sandbox]\n{table}\n")
    loaded = load_config(write(tmp_path / "t.toml", base.replace("[time]", '[sandbox]\nread_only = ["opt"]\n\n[time]')))
    assert loaded.sandbox.read_only == (tmp_path / "opt",)
    assert loaded.sandbox.cpus == 1 and loaded.sandbox.memory_mb == 2048 and loaded.sandbox.mode == "auto"


def sandbox_start(bot: Path, folder: Path) -> tuple[list[str], dict[str, str], dict[int, int], int]:
    """How the launcher starts ``bot`` in a sandbox: the command line, its environment, the descriptors it is handed
    (by the number they take in it: the sandbox's files, and the life line's read end at ``LIFELINE_FD``), and the
    life line's write end, which the test holds as the arena does. Every descriptor is the caller's to close."""
    confinement = sandboxed([sys.executable, str(bot)], folder=folder, socket=None, settings=SandboxSettings(),
                            hidden=[], env=bot_environment({}, confined=True))
    reading, writing = os.pipe()
    plan = {**{target: memory_file(data) for target, data in confinement.files.items()}, LIFELINE_FD: reading}
    return limited(confinement.program, confinement.argv, plan, 0, []), confinement.env, plan, writing


@needs_bwrap
@pytest.mark.parametrize("arena_alive", [True, False])
def test_a_sandbox_whose_arena_died_as_it_was_made_starts_no_bot(tmp_path: Path, arena_alive: bool) -> None:
    # bubblewrap binds the sandbox's first process to the arena's life only after the arena's side of it runs:
    # an arena killed in between leaves it running. The bot's start reads the life line the arena alone holds
    # open; here the test is the arena, and lets go of its end before the sandbox starts, or keeps it.
    bot = write(tmp_path / "bot.py", 'import sys\nprint("the bot started", file=sys.stderr, flush=True)\n')
    command, env, plan, writing = sandbox_start(bot, tmp_path)
    if not arena_alive:
        os.close(writing)
    try:
        done = subprocess.run(command, env=env, pass_fds=list(plan.values()), capture_output=True, text=True,
                              timeout=60)
    finally:
        for fd in (*plan.values(), *([writing] if arena_alive else [])):
            os.close(fd)
    assert done.returncode == 0, done.stderr
    assert ("the bot started" in done.stderr) is arena_alive


ATTACKS = {
    "none": "",
    "stops the step": "for pid in {1, os.getppid()} - {os.getpid()}:\n"
                      "    try:\n        os.kill(pid, signal.SIGSTOP)\n    except OSError:\n        pass\n",
    "holds the life line open": "kept = []\nfor pid in {1, os.getppid()} - {os.getpid()}:\n"
                                "    try:\n        kept.append(os.open(f'/proc/{pid}/fd/7', os.O_WRONLY))\n"
                                "    except OSError:\n        pass\n",
    "kills the step": "for pid in {1, os.getppid()} - {os.getpid()}:\n"
                      "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n",
    "traces the step": "libc = ctypes.CDLL(None, use_errno=True)\nfor pid in {1, os.getppid()} - {os.getpid()}:\n"
                       "    libc.ptrace(0x4206, pid, 0, 0)  # PTRACE_SEIZE\n"
                       "    libc.ptrace(0x4207, pid, 0, 0)  # PTRACE_INTERRUPT\n",
}
"""What a bot does to the step that watches it before it settles down: each must leave the step's watch as it was."""


@needs_bwrap
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_sandbox_whose_life_line_ends_dies_whole_while_the_arenas_side_lives(tmp_path: Path, attack: str) -> None:
    # bubblewrap binds the sandbox's first process to its parent only after the arena's side of it runs, so an
    # arena killed in between left the bot running for good (seen once in about a hundred kills under load). The
    # sandbox's first process is the arena's step: it holds the life line and ends when it ends. Here the test is
    # the arena, keeps every process of its side alive, and lets go of the line; the bot, and a child of the bot's
    # in a session of its own, must die with it, whatever the bot did to the step first.
    bot = write(tmp_path / "bot.py", "import ctypes, os, signal, subprocess, sys, time\n"
                "if sys.argv[1:] != ['child']:\n"
                "    subprocess.Popen([sys.executable, __file__, 'child'], start_new_session=True)\n"
                + "".join(f"    {line}\n" for line in ATTACKS[attack].splitlines()) +
                "    print('the bot runs', file=sys.stderr, flush=True)\n"
                "time.sleep(120)\n")
    command, env, plan, writing = sandbox_start(bot, tmp_path)
    step = subprocess.Popen(command, env=env, pass_fds=list(plan.values()), stderr=subprocess.PIPE, text=True)
    for fd in plan.values():
        os.close(fd)
    try:
        assert step.stderr is not None
        assert step.stderr.readline() == "the bot runs\n"
        deadline = time.monotonic() + 10
        while not any(argv[2:3] == ["child"] for argv in running(bot).values()):
            assert time.monotonic() < deadline, "the bot's child never ran"
            time.sleep(0.02)
        assert step.poll() is None
        os.close(writing)
        writing = -1
        assert step.wait(timeout=10) == 137  # the step's own status, as bubblewrap hands it on
        deadline = time.monotonic() + 10
        while running(bot) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(bot), "a process of the sandbox outlived its life line"
    finally:
        if writing >= 0:
            os.close(writing)
        if step.poll() is None:
            step.kill()
            step.wait()
        for pid in running(bot):
            os.kill(pid, signal.SIGKILL)
        if step.stderr is not None:
            step.stderr.close()


@needs_bwrap
def test_a_sandboxed_bot_ends_its_sandbox_when_it_ends(tmp_path: Path) -> None:
    # The step that is the sandbox's first process ends with the bot, with the bot's status, and a process the bot
    # left behind ends with them rather than keep the sandbox.
    bot = write(tmp_path / "bot.py", "import subprocess, sys, time\n"
                "if sys.argv[1:] == ['child']:\n    time.sleep(120)\n"
                "subprocess.Popen([sys.executable, __file__, 'child'], start_new_session=True)\n"
                "time.sleep(0.5)\nsys.exit(3)\n")
    command, env, plan, writing = sandbox_start(bot, tmp_path)
    try:
        done = subprocess.run(command, env=env, pass_fds=list(plan.values()), capture_output=True, text=True,
                              timeout=60)
    finally:
        for fd in (*plan.values(), writing):
            os.close(fd)
    assert done.returncode == 3, done.stderr
    deadline = time.monotonic() + 10
    while running(bot) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(bot), "the bot's child outlived the bot's sandbox"
