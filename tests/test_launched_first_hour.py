"""A launched bot's first hour, tried from the organiser's side: real ``callbreak-arena`` processes and
real bot processes (stdio, Bhoos contest, gRPC command), sandboxed where bubblewrap runs.

The classic mistakes of a first stdio bot (debug prints on standard output, output never flushed) are
named in the fault details; a program the sandbox hides is named with the ``[sandbox]`` line that shows
it; a bot's own environment (``env``) reaches it and never a log; the arena's temporary folders do not
outlive it.
"""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pytest

from arena.event.launch.sandbox import bwrap_problem
from arena.event.launch.scratch import OWNER, owner, remove_leftovers, scratch_folder, started
from tests.conftest import ROOT
from tests.helpers.bhoos import BHOOS_BOT
from tests.helpers.runs import RANDOM, cli, faults_of, kinds_text, run, write


def _bot(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write(folder / name, text)


def _run(config: Path, results: Path, *more: str, timeout: float = 240) -> str:
    """``callbreak-arena run`` as the organiser types it; its standard error."""
    done = cli("run", config, "--results", results, "--no-progress", *more, timeout=timeout)
    assert done.returncode in (0, 3), done.stdout + done.stderr
    return done.stderr


# A stdio bot as a student first writes it, with a debug print on standard output before each answer (not
# flushed: it leaves with the answer, in one write).
CHATTY = '''\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "game_over":
        break
    print("debug: got a " + request["type"] + " request")
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}), flush=True)
    else:
        print(json.dumps({"card": request["legal_cards"][0]}), flush=True)
'''

# One greeting on standard output as it starts, then one correct answer per request: every answer after the
# greeting comes one line later than the arena reads it, unless the arena notices the line nobody asked for.
GREETER = '''\
import json, sys
print("my bot is starting")
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "game_over":
        break
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}), flush=True)
    else:
        print(json.dumps({"card": request["legal_cards"][-1]}), flush=True)
'''

# Correct answers that never leave Python's buffer while the game lasts: standard output is a pipe, so
# without flush=True (or python -u) they wait there until the bot ends.
UNFLUSHED = '''\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "game_over":
        break
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}))
    else:
        print(json.dumps({"card": request["legal_cards"][0]}))
'''


def test_a_debug_print_on_standard_output_is_named_in_the_fault(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    chatty, greeter = _bot(bots / "chatty", "bot.py", CHATTY), _bot(bots / "greeter", "bot.py", GREETER)
    text = kinds_text([("chatty", "stdio", f"{{python}} {chatty}"), ("greeter", "stdio", f"{{python}} {greeter}"),
                       ("r1", "python", RANDOM), ("r2", "python", RANDOM)],
                      name="chatty", seed=4, rules="rounds = 2", time="deadline_ms = 2000")
    results = tmp_path / "results"
    _run(write(tmp_path / "t.toml", text), results)
    faults = faults_of(results)
    for bot in ("chatty", "greeter"):
        assert faults[bot], bot
        for fault in faults[bot]:
            assert fault["kind"] == "malformed", fault
            assert "standard output is for its answers only" in fault["detail"], fault
            assert "print(..., file=sys.stderr)" in fault["detail"], fault
    assert any("debug: got a call request" in f["detail"] for f in faults["chatty"])
    # The greeting is one line too many, once a game (a process per game): read as the answer to the first
    # request, then the true answer, waiting before the next request is sent, is dropped too, and from there
    # on the greeter's answers are its own again. They were taken for the next request's, which showed as
    # illegal cards it never meant to play.
    assert len([f for f in faults["greeter"] if "my bot is starting" in f["detail"]]) == 4
    assert len(faults["greeter"]) <= 8
    assert all("before it was sent request 2" in f["detail"] for f in faults["greeter"]
               if "my bot is starting" not in f["detail"])


def test_a_bot_that_does_not_flush_is_asked_whether_it_flushed(tmp_path: Path) -> None:
    bot = _bot(tmp_path / "bots" / "unflushed", "bot.py", UNFLUSHED)
    text = kinds_text([("unflushed", "stdio", f"{{python}} {bot}"), ("r1", "python", RANDOM),
                       ("r2", "python", RANDOM), ("r3", "python", RANDOM)],
                      name="unflushed", seed=4, rules="rounds = 1", time="deadline_ms = 500",
                      extra="\n[faults]\nunresponsive_after = 2\n").replace(
        '"unflushed"\nstdio', '"unflushed"\nstart_timeout_s = 0.5\nstdio', 1)
    results = tmp_path / "results"
    _run(write(tmp_path / "t.toml", text), results)
    faults = faults_of(results)["unflushed"]
    assert [f["kind"] for f in faults] == ["late", "stalled"] * 4
    for fault in faults:
        assert "the bot has written nothing at all yet: did it flush its output? (Python: print(..., "\
               "flush=True), or run python with -u)" in fault["detail"], fault
    assert faults[0]["detail"].startswith("no answer within 500 ms")


# Blank lines without end: the arena stops reading after BLANK_LIMIT of them, and the bot blocks on a full pipe.
FLOOD = '''\
import sys
sys.stdin.readline()
while True:
    sys.stdout.write("\\n" * 65536)
'''


@pytest.mark.slow
def test_the_pipe_of_a_bot_that_flooded_its_output_is_closed_when_it_is_stopped(tmp_path: Path) -> None:
    bot = _bot(tmp_path / "bots" / "flood", "bot.py", FLOOD)
    text = kinds_text([("flood", "stdio", f"{{python}} {bot}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="flood", seed=4, rules="rounds = 1", concurrency=1)
    results = tmp_path / "results"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        summary = run(write(tmp_path / "t.toml", text), results)
        gc.collect()
    assert (summary.played, summary.outstanding) == (4, 0)
    assert {f["kind"] for f in faults_of(results)["flood"]} == {"malformed"}
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == []


# A stdio bot that plays the lowest legal move and says in its log what its environment holds: the names, the
# value of LEVEL, and only a digest of the secret.
ENVIRONMENT = '''\
import hashlib, json, os, sys
names = sorted(os.environ)
print("NAMES " + " ".join(names), file=sys.stderr)
print("LEVEL " + os.environ.get("LEVEL", "-"), file=sys.stderr)
print("KEY " + hashlib.sha256(os.environ.get("API_KEY", "").encode()).hexdigest(), file=sys.stderr, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "game_over":
        break
    answer = {"call": request["legal_calls"][0]} if request["type"] == "call" else {"card": request["legal_cards"][0]}
    print(json.dumps(answer), flush=True)
'''
SECRET = "s3cret-value-9f2c"


def _env_config(tmp_path: Path, secret: str) -> Path:
    bot = _bot(tmp_path / "bots" / "envbot", "bot.py", ENVIRONMENT)
    text = kinds_text([("envbot", "stdio", f"{{python}} {bot}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="env", seed=4, rules="rounds = 1", concurrency=1)
    text = text.replace('"envbot"\nstdio', f'"envbot"\nenv = {{ LEVEL = "3", API_KEY = "{secret}" }}\nstdio', 1)
    return write(tmp_path / "t.toml", text)


def test_a_launched_bot_gets_its_env_and_no_value_is_shown_anywhere(tmp_path: Path) -> None:
    results = tmp_path / "results"
    stderr = _run(_env_config(tmp_path, SECRET), results)
    log = (results / "logs" / "envbot.log").read_text()
    assert log.count("LEVEL 3") == 4  # a process per game, each with the variable
    assert log.count("KEY " + hashlib.sha256(SECRET.encode()).hexdigest()) == 4
    names = set(next(line for line in log.splitlines() if line.startswith("NAMES ")).split()[1:])
    assert {"LEVEL", "API_KEY", "PATH", "HOME"} <= names
    assert not any(name.startswith("CALLBREAK_") for name in names)  # a stdio bot has no token
    assert "--- with env API_KEY, LEVEL set (values not shown)" in log
    # The value is in no file of the results folder (the manifest holds its digest) and not on the terminal.
    for path in results.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in stderr
    # A new value is a new bot: its recorded games were played by the old one.
    changed = cli("run", _env_config(tmp_path, "another-value"), "--results", results, "--no-progress")
    assert changed.returncode == 1, changed.stderr
    assert "bot 'envbot' is not the bot its recorded games were played by: env.API_KEY was" in changed.stderr
    assert SECRET not in changed.stderr and "another-value" not in changed.stderr


@pytest.mark.parametrize(("table", "words"), [
    ('env = { CALLBREAK_TOKEN = "x" }', ["env.CALLBREAK_TOKEN", "the arena sets the CALLBREAK_ variables itself"]),
    ('env = { "1ABC" = "x" }', ["'1ABC' cannot name an environment variable"]),
    ('env = { "A-B" = "x" }', ["'A-B' cannot name an environment variable"]),
    ('env = { LEVEL = 3 }', ["env.LEVEL must be a string (in quotes), not a int"]),
    ('env = { LEVEL = "a\\u0000b" }', ["env.LEVEL holds a NUL character"]),
    ('env = "LEVEL=3"', ["env must be a table of environment variables"]),
])
def test_a_wrong_env_is_refused_naming_the_key_and_never_its_value(tmp_path: Path, table: str,
                                                                   words: list[str]) -> None:
    text = kinds_text([("bot", "stdio", "{python} bot.py"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="env", seed=4)
    text = text.replace('"bot"\nstdio', f'"bot"\n{table}\nstdio', 1)
    done = cli("run", write(tmp_path / "t.toml", text), "--results", tmp_path / "results")
    assert done.returncode == 2
    for word in words:
        assert word in done.stderr, done.stderr


def test_env_is_for_launched_bots_only(tmp_path: Path) -> None:
    text = kinds_text([("r0", "python", RANDOM), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="env", seed=4)
    text = text.replace('"r0"\npython', '"r0"\nenv = { LEVEL = "3" }\npython', 1)
    done = cli("run", write(tmp_path / "t.toml", text), "--results", tmp_path / "results")
    assert done.returncode == 2 and "env is for bots the arena launches" in done.stderr, done.stderr


needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"needs the sandbox: {bwrap_problem()}")


@needs_bwrap
def test_a_contest_bot_whose_interpreter_the_sandbox_hides_is_told_how_to_show_it(tmp_path: Path) -> None:
    # The bot's own Python (a virtualenv's, say) lives outside the bot's folder and outside everything the
    # sandbox shows: inside, it does not exist, and the bot's process ends with exit status 127.
    runtime = tmp_path / "runtime"
    (runtime / "bin").mkdir(parents=True)
    (runtime / "bin" / "python3").symlink_to(sys.executable)
    bot = _bot(tmp_path / "bots" / "contest", "bot.py", BHOOS_BOT)
    bots = [("contest", "bhoos", f"{runtime}/bin/python3 {bot} modern"), ("r1", "python", RANDOM),
            ("r2", "python", RANDOM), ("r3", "python", RANDOM)]
    text = kinds_text(bots, name="hidden", seed=4, rules="rounds = 1", concurrency=1,
                      extra="\n[faults]\nrestarts = 0\n")
    results = tmp_path / "results"
    done = cli("run", write(tmp_path / "t.toml", text), "--results", results, "--no-progress")
    assert done.returncode == 3, done.stderr
    said = " ".join(done.stderr.split())
    assert "exit status 127 before it answered GET /hi" in said, said
    assert (f"its program, {runtime}/bin/python3, exists on this machine but is outside every folder the sandbox "
            "shows") in said, said
    assert f'add read_only = ["{runtime}"] to the [sandbox] table of the configuration' in said, said
    # And that line is the fix.
    fixed = text.replace("\n[faults]", f'\n[sandbox]\nread_only = ["{runtime}"]\n\n[faults]', 1)
    _run(write(tmp_path / "fixed.toml", fixed), tmp_path / "fixed")
    assert "contest" not in faults_of(tmp_path / "fixed")


def test_a_stdio_bot_whose_script_names_a_missing_interpreter_is_told_so(tmp_path: Path) -> None:
    script = _bot(tmp_path / "bots" / "shebang", "bot", "#!/opt/no-such-runtime/bin/python3\nprint('never')\n")
    script.chmod(0o755)
    text = kinds_text([("shebang", "stdio", str(script)), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="shebang", seed=4, rules="rounds = 1", concurrency=1,
                      extra="\n[faults]\nrestarts = 0\n")
    done = cli("run", write(tmp_path / "t.toml", text), "--results", tmp_path / "results", "--no-progress")
    assert done.returncode == 3, done.stderr
    said = " ".join(done.stderr.split())
    assert (f"the interpreter that the first line of its program {script} names, /opt/no-such-runtime/bin/python3, "
            "does not exist") in said, said


def _instance_folders(pid: int) -> list[Path]:
    return [folder for folder in Path(tempfile.gettempdir()).glob("callbreak-http-*")
            if (made_by := owner(folder)) is not None and made_by[0] == pid]


def _arena_with_a_contest_bot(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A real arena playing a long event with a Bhoos contest bot, once that bot's first instance runs."""
    bot = _bot(tmp_path / "bots" / "contest", "bot.py", BHOOS_BOT)
    text = kinds_text([("contest", "bhoos", f"{{python}} {bot} modern"), ("r1", "python", RANDOM),
                       ("r2", "python", RANDOM), ("r3", "python", RANDOM)], name="long", seed=4, deal_sets=200,
                      concurrency=1)
    results = tmp_path / "results"
    arena = subprocess.Popen([sys.executable, "-m", "arena", "run", write(tmp_path / "t.toml", text), "--results",
                              results, "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (results / "logs" / "contest.log").exists() or not _instance_folders(arena.pid):
        if arena.poll() is not None or time.monotonic() > deadline:
            arena.kill()
            arena.wait()
            pytest.fail("the contest bot never started, or its folder is not named after the arena's process")
        time.sleep(0.1)
    return arena, results


@needs_bwrap
def test_a_terminated_arena_removes_its_temporary_folders(tmp_path: Path) -> None:
    arena, _ = _arena_with_a_contest_bot(tmp_path)
    try:
        arena.send_signal(signal.SIGTERM)
        _, stderr = arena.communicate(timeout=60)
    finally:
        arena.kill()
    assert _instance_folders(arena.pid) == [], stderr
    assert "stopped by SIGTERM" in stderr.decode() and arena.returncode == 143


@needs_bwrap
def test_the_folders_of_a_killed_arena_are_removed_by_the_next(tmp_path: Path) -> None:
    arena, _ = _arena_with_a_contest_bot(tmp_path)
    arena.kill()
    arena.wait(timeout=60)
    assert arena.stderr is not None
    arena.stderr.close()
    left = _instance_folders(arena.pid)
    assert left  # nothing of the arena ran after SIGKILL
    bot = _bot(tmp_path / "bots" / "stdio", "bot.py", UNFLUSHED.replace("))\n", "), flush=True)\n"))
    text = kinds_text([("next", "stdio", f"{{python}} {bot}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                       ("r3", "python", RANDOM)], name="next", seed=4, rules="rounds = 1", concurrency=1)
    _run(write(tmp_path / "next.toml", text), tmp_path / "next")
    assert [path for path in left if path.exists()] == []


def test_only_the_folders_of_arenas_that_no_longer_run_are_removed(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead = int(gone.stdout)
    me = os.getpid()
    folders = {  # what each folder's owner file says
        "dead": f"{dead} 123",
        "live": f"{me} {started(me)}",
        "reused": f"{os.getppid()} 1",  # a live pid, but a process started at another time
        "no owner": None,
        "garbage": "x y z",
    }
    for key, said in folders.items():
        folder = tmp_path / f"callbreak-sock-{key.replace(' ', '')}"
        folder.mkdir()
        if said is not None:
            (folder / OWNER).write_text(said, encoding="ascii")
    other = tmp_path / "callbreak-http-dead"
    other.mkdir()
    (other / OWNER).write_text(f"{dead} 123", encoding="ascii")
    target = tmp_path / "target"
    target.mkdir()
    (target / OWNER).write_text(f"{dead} 123", encoding="ascii")
    (tmp_path / "callbreak-sock-link").symlink_to(target)
    remove_leftovers("sock", tmp_path)
    left = {key for key in folders if (tmp_path / f"callbreak-sock-{key.replace(' ', '')}").exists()}
    assert left == {"live", "no owner", "garbage"}
    assert other.exists()  # another kind
    assert (tmp_path / "callbreak-sock-link").is_symlink() and target.exists()  # never followed
    made = scratch_folder("sock")
    try:
        assert owner(made) == (me, started(me)) and made.name.startswith("callbreak-sock-")
        assert made.stat().st_mode & 0o777 == 0o700
    finally:
        shutil.rmtree(made)


def test_a_deep_temporary_folder_still_leaves_room_for_a_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    deep = tmp_path / ("d" * max(1, 78 - len(str(tmp_path)) - 1))  # room for a folder, not for a socket in it
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    roomy = scratch_folder("sock")  # nothing long goes in it: the temporary folder will do
    made = scratch_folder("sock", socket_path=len("/arena.sock"))
    try:
        assert roomy.parent == deep
        assert len(str(made / "arena.sock")) <= 107 and made.parent == Path("/tmp")
        assert owner(made) is not None
    finally:
        shutil.rmtree(roomy)
        shutil.rmtree(made)
