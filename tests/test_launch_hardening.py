"""Launched bots against the machine they run on: tokens, environment, sockets, logs and ends, with real
processes and real bubblewrap.

Each test plays a short real tournament with bots that try what a hostile student would (read another
process's command line or environment, swap the arena's socket for one of their own, flood their log,
close their output and linger) and checks what the arena, or the machine, shows for it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.event.audit import audit
from arena.event.launch.botlog import BOT_LOG_LIMIT
from arena.event.launch.sandbox import bwrap_problem
from tests.helpers.bhoos import BHOOS_BOT
from tests.helpers.runs import RANDOM, ROOT, faults_of, kinds_text, records, run, write

PROBLEM = bwrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"no sandbox on this machine: {PROBLEM}")
MODES = [pytest.param("bwrap", marks=needs_bwrap), "off"]
STDIO_SAMPLE = ROOT / "sample_bots" / "stdio" / "lowest_bot.py"
ORGANISER_TOKEN = "organisers-own-token-0123456789"
"""What an organiser who followed the bot docs has exported in the arena's environment."""
ALLOWED_ENV = {"PATH", "LANG", "LC_ALL", "TZ", "HOME", "CALLBREAK_LAUNCHED", "CALLBREAK_TOKEN"}
"""The variables a launched bot may find (the arena's own ``CALLBREAK_*`` never among them)."""

TELLER = '''\
"""A command bot that writes its token, environment and the sandbox's first process to its log, then plays."""
import json, os, sys
from arena.botkit import run
from sample_bots.random_bot import RandomBot

try:
    first = open("/proc/1/cmdline", "rb").read().decode(errors="replace").split("\\0")
except OSError as err:
    first = [repr(err)]
print("TELL " + json.dumps({"token": os.environ.get("CALLBREAK_TOKEN", ""), "env": dict(os.environ),
                            "pid1": first}), file=sys.stderr, flush=True)
run(RandomBot)
'''

STDIO_TELLER = '''\
"""A stdio bot that writes its environment to its log, then plays its lowest legal card."""
import json, os, sys
print("TELL " + json.dumps({"env": dict(os.environ)}), file=sys.stderr, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}), flush=True)
    elif request["type"] == "play":
        print(json.dumps({"card": request["legal_cards"][0]}), flush=True)
'''

FLOODER = '''\
"""A stdio bot that writes far more than any log should hold to its stderr, then plays."""
import json, os, sys
chunk = b"x" * 1023 + b"\\n"
for _ in range(int(sys.argv[1]) // len(chunk)):
    os.write(2, chunk)
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}), flush=True)
    elif request["type"] == "play":
        print(json.dumps({"card": request["legal_cards"][0]}), flush=True)
'''

CLOSER = '''\
"""A stdio bot that answers the calls, closes its standard output at its first card, and lingers."""
import json, os, sys, time
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}), flush=True)
    elif request["type"] == "play":
        sys.stdout.flush()
        os.close(1)
        print("closed my output", file=sys.stderr, flush=True)
        time.sleep(30)
'''

SWAPPER = '''\
"""Before it serves as a contest bot: swap the bridge's socket for a link to the test's socket, and fill
the folder it is in."""
import os, sys, threading, time
TARGET = sys.argv[3]

def swap():
    folder = "/run/callbreak"
    for _ in range(100):
        try:
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if name != "start":
                    try:
                        os.remove(path)
                    except OSError as err:
                        print("SWAP remove %s: %s" % (name, err), file=sys.stderr, flush=True)
                    try:
                        os.symlink(TARGET, path)
                        print("SWAP linked " + path, file=sys.stderr, flush=True)
                    except OSError as err:
                        print("SWAP link %s: %s" % (name, err), file=sys.stderr, flush=True)
            with open(os.path.join(folder, "filler"), "wb") as out:
                out.write(b"x" * 20 * 2**20)
            print("SWAP filled", file=sys.stderr, flush=True)
        except OSError as err:
            print("SWAP %s" % err, file=sys.stderr, flush=True)
        time.sleep(0.05)

threading.Thread(target=swap, daemon=True).start()
sys.argv[1:] = sys.argv[1:3]
'''


def tellings(log: Path) -> list[dict[str, object]]:
    """What a telling bot wrote to its log, one entry per launch."""
    return [json.loads(line[5:]) for line in log.read_text().splitlines() if line.startswith("TELL ")]


def snapshot() -> list[tuple[int, str, bytes, bytes]]:
    """Every process of the machine: (pid, name, command line, environment); what cannot be read is empty."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        parts = []
        for what in ("comm", "cmdline", "environ"):
            try:
                parts.append((entry / what).read_bytes())
            except OSError:
                parts.append(b"")
        out.append((int(entry.name), parts[0].decode(errors="replace").strip(), parts[1], parts[2]))
    return out


def arena_env(**more: str) -> dict[str, str]:
    """The environment of an arena run from the command line by an organiser who exported a token."""
    return dict(os.environ, PYTHONPATH=str(ROOT), CALLBREAK_TOKEN=ORGANISER_TOKEN, CALLBREAK_OTHER="organiser",
                LANG="C.UTF-8", **more)


@pytest.mark.parametrize("mode", MODES)
def test_a_token_is_nowhere_on_the_machine_but_in_its_own_bots_environment(tmp_path: Path, mode: str) -> None:
    """Every process's command line and environment, read again and again while a real run goes on: a
    launched bot's token appears only in the environment of a process of that bot's own command (its
    name on its command line), never on any command line, never in the environment of the arena or of
    bubblewrap; and the sandbox's first process, the arena's step, names on its command line only the bot's
    own command."""
    folder = tmp_path / "bots" / "teller"
    folder.mkdir(parents=True)
    teller = write(folder / "teller.py", TELLER)
    command = f"{{python}} {teller} --arena {{address}} --seed {{seed}} --name {{name}}"
    bots = [("c1", "command", command), ("c2", "command", command), ("c3", "command", command),
            ("r1", "python", RANDOM)]
    text = kinds_text(bots, name="tokens", seed=3, deal_sets=1, concurrency=2, time="deadline_ms = 5000",
                      extra=f'\n[sandbox]\nmode = "{mode}"\n').replace(
        "concurrency = 2\n", "concurrency = 2\nfresh_process = true\n")
    results = tmp_path / "results"
    seen: dict[tuple[int, str, bytes, bytes], None] = {}
    with (tmp_path / "arena.err").open("wb") as err:
        arena = subprocess.Popen(
            [sys.executable, "-m", "arena", "run", str(write(tmp_path / "t.toml", text)), "--results", str(results),
             "--no-progress"], cwd=ROOT, env=arena_env(), stdout=subprocess.DEVNULL, stderr=err)
        while arena.poll() is None:
            seen.update(dict.fromkeys(snapshot()))
    assert arena.returncode == 0, (tmp_path / "arena.err").read_text()
    assert audit(results) is None
    by_bot = {name: tellings(results / "logs" / f"{name}.log") for name in ("c1", "c2", "c3")}
    assert [len(told) for told in by_bot.values()] == [4, 4, 4]  # a process and a token for each game
    owners: dict[str, str] = {}
    for name, told in by_bot.items():
        for entry in told:
            assert isinstance(entry["token"], str) and len(entry["token"]) >= 20
            owners[entry["token"]] = name
            if mode == "bwrap":  # the sandbox's first process is the arena's step: the bot's command, and no more
                first = entry["pid1"]
                assert isinstance(first, list) and first[1:4] == ["-I", "-S", "-c"], first
                assert first[first.index(str(teller)) - 1:-1] == [sys.executable, str(teller), "--arena",
                                                                  "unix:/run/callbreak/arena.sock", "--seed",
                                                                  first[-4], "--name", name], first
    bots_pids = {owner: {pid for pid, _, cmdline, _ in seen if f"--name\0{owner}\0".encode() in cmdline}
                 for owner in by_bot}
    found_own = 0
    for pid, name, cmdline, environ in seen:
        for token, owner in owners.items():
            assert token.encode() not in cmdline, (pid, name, cmdline)
            if token.encode() in environ:  # a process that runs (or, by exec, becomes) the bot's own command
                assert pid in bots_pids[owner] and name != "bwrap", (pid, name, cmdline)
                found_own += 1
    assert found_own > 0  # the scan saw the bots' own environments: it could have seen more
    for _pid, name, cmdline, _environ in seen:
        if name == "bwrap":  # no folder of this run (the bots', the results) on bubblewrap's command line
            assert str(tmp_path).encode() not in cmdline, cmdline


@pytest.mark.parametrize("mode", MODES)
def test_launched_bots_get_a_clean_environment_without_the_arenas_own_variables(tmp_path: Path, mode: str) -> None:
    """The organiser's ``CALLBREAK_TOKEN`` and other variables of the arena reach no bot of any kind; a
    command bot gets its own token."""
    folder = tmp_path / "bots"
    folder.mkdir()
    teller = write(folder / "teller.py", TELLER)
    stdio = write(folder / "stdio_teller.py", STDIO_TELLER)
    bots = [("cmd", "command", f"{{python}} {teller} --arena {{address}} --seed {{seed}} --name {{name}}"),
            ("io", "stdio", f"{{python}} {stdio}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM)]
    text = kinds_text(bots, name="env", seed=5, deal_sets=1, rules="rounds = 1",
                      extra=f'\n[sandbox]\nmode = "{mode}"\n')
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(write(tmp_path / "t.toml", text)), "--results", str(results),
         "--no-progress"], cwd=ROOT, env=arena_env(CALLBREAK_SECRET="s3cret", ORGANISER_SECRET="hunter2"),
        capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    for name in ("cmd", "io"):
        told = tellings(results / "logs" / f"{name}.log")
        assert told, name
        for entry in told:
            env = entry["env"]
            assert isinstance(env, dict)
            # LC_CTYPE is Python's own doing (PEP 538), in the bot's process, not the arena's.
            assert set(env) - {"LC_CTYPE"} <= ALLOWED_ENV, (name, env)
            assert ORGANISER_TOKEN not in json.dumps(env) and "s3cret" not in json.dumps(env)
            assert env.get("LANG") == "C.UTF-8"
            if name == "cmd":
                assert env["CALLBREAK_LAUNCHED"] == "1" and len(env["CALLBREAK_TOKEN"]) >= 20
            else:
                assert "CALLBREAK_TOKEN" not in env and "CALLBREAK_LAUNCHED" not in env


@pytest.fixture
def decoy(tmp_path: Path) -> Iterator[tuple[Path, socket.socket]]:
    """A Unix socket of the test's, listening: nothing should ever connect to it."""
    path = tmp_path / "decoy.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(64)
    server.setblocking(False)
    yield path, server
    server.close()


@needs_bwrap
def test_a_bhoos_bot_cannot_point_the_arena_at_another_socket(
    tmp_path: Path, decoy: tuple[Path, socket.socket],
) -> None:
    path, server = decoy
    folder = tmp_path / "bots" / "swapper"
    folder.mkdir(parents=True)
    bot = write(folder / "bot.py", SWAPPER + BHOOS_BOT)
    bots = [("swapper", "bhoos", f"{{python}} {bot} modern 7000 {path}"), ("r1", "python", RANDOM),
            ("r2", "python", RANDOM), ("r3", "python", RANDOM)]
    text = kinds_text(bots, name="swap", seed=9, deal_sets=1, rules="rounds = 2")
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding) == (4, 0)
    assert audit(results) is None
    with pytest.raises(BlockingIOError):
        server.accept()  # the arena never connected to the test's socket
    assert faults_of(results).get("swapper", []) == []
    assert "SWAP" in (results / "logs" / "swapper.log").read_text()  # it did try


@pytest.mark.parametrize("mode", MODES)
def test_a_bot_that_floods_its_log_is_cut_at_the_limit_and_the_records_are_whole(tmp_path: Path, mode: str) -> None:
    folder = tmp_path / "bots"
    folder.mkdir()
    flooder = write(folder / "flooder.py", FLOODER)
    bots = [("flood", "stdio", f"{{python}} {flooder} {3 * BOT_LOG_LIMIT}"), ("r1", "python", RANDOM),
            ("r2", "python", RANDOM), ("r3", "python", RANDOM)]
    text = kinds_text(bots, name="flood", seed=4, deal_sets=1, concurrency=1, rules="rounds = 1",
                      time="deadline_ms = 20000", extra=f'\n[sandbox]\nmode = "{mode}"\n')
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding, summary.faults) == (4, 0, 0)
    assert audit(results) is None and len(records(results)) == 4
    log = results / "logs" / "flood.log"
    assert BOT_LOG_LIMIT <= log.stat().st_size <= BOT_LOG_LIMIT + 8192
    text = log.read_text()
    assert "reached its limit" in text
    assert "of its output dropped" in text
    assert text.count("launched for") == 4 and text.count("stopped by the arena") + text.count("ended with") >= 4


@pytest.mark.parametrize("mode", MODES)
def test_a_stdio_bot_that_closes_its_output_is_a_crash_at_once(tmp_path: Path, mode: str) -> None:
    folder = tmp_path / "bots"
    folder.mkdir()
    closer = write(folder / "closer.py", CLOSER)
    bots = [("closer", "stdio", f"{{python}} {closer}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
            ("r3", "python", RANDOM)]
    text = kinds_text(bots, name="close", seed=6, deal_sets=1, rules="rounds = 1", time="deadline_ms = 3000",
                      extra=f'\n[sandbox]\nmode = "{mode}"\n')
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding) == (4, 0)
    kinds = [f["kind"] for f in faults_of(results)["closer"]]
    assert kinds == ["crash"] * 4, kinds  # never judged late, nor stalled
    assert "closed my output" in (results / "logs" / "closer.log").read_text()


@needs_bwrap
def test_a_run_with_every_kind_of_launched_bot_ends_without_noise(tmp_path: Path) -> None:
    folder = tmp_path / "bots"
    folder.mkdir()
    bhoos = write(folder / "bhoos_bot.py", BHOOS_BOT)
    bots = [("cmd", "command", "{python} -m sample_bots.random_bot --arena {address} --seed {seed}"),
            ("io", "stdio", f"{{python}} {STDIO_SAMPLE}"), ("web", "bhoos", f"{{python}} {bhoos} modern"),
            ("r1", "python", RANDOM)]
    text = kinds_text(bots, name="noise", seed=8, deal_sets=1, rules="rounds = 1")
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-m", "arena", "run", str(write(tmp_path / "t.toml", text)), "--results",
         str(tmp_path / "results"), "--no-progress"], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert "unclosed" not in done.stderr, done.stderr
    for name in ("cmd", "io", "web"):
        log = (tmp_path / "results" / "logs" / f"{name}.log").read_text()
        assert "exit status -15" not in log, log
