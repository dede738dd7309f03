"""Bots over stdin/stdout (``stdio = "..."``): real processes, one per seat per game, in real tournaments.

The sample bots of ``sample_bots/stdio`` (Python, and JavaScript for plain ``node``) play without a fault;
a spy bot shows that each request holds its seat's view and nothing more; misbehaving bots written here
(garbage, wrong types, late, crashing, silent, too long a line, a process that cannot start, one that
never reads) are faults of their own seat and the tournament goes on. Launched bots run in the sandbox
where bubblewrap runs, as in a real event.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import shutil
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.core.cards import Hand
from arena.core.dealing import seat_seed, seeded_deals
from arena.core.faults import FaultKind, PlayerFault
from arena.core.game import Game
from arena.core.rules import Rules
from arena.errors import ConfigError
from arena.event.audit import audit
from arena.event.launch.sandbox import bwrap_problem
from arena.event.setup.config import parse_config
from arena.players.base import Decision, DecisionKind
from arena.transports.languages import FLUSH_HINTS, NEUTRAL_HINT, Language, flush_hint, language_of
from arena.transports.stdio import StdioPlayer, request_message
from tests.conftest import ROOT
from tests.conftest import run as run_async
from tests.helpers.runs import RANDOM, faults_of, kinds_text, records, run, stripped, write

SAMPLES = ROOT / "sample_bots" / "stdio"
PYTHON_SAMPLE = SAMPLES / "lowest_bot.py"
NODE_SAMPLE = SAMPLES / "lowest_bot.js"

# A bot that plays as the Python sample and writes every line it reads to its log (stderr), for the test to read.
SPY = '''\
import json, os, socket, sys
RANKS = "23456789TJQKA"
try:  # a port of the machine, listening: reachable only without the sandbox
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    print("NETWORK reached", file=sys.stderr, flush=True)
except OSError as err:
    print("NETWORK refused: " + type(err).__name__, file=sys.stderr, flush=True)
for line in sys.stdin:
    print("SEEN " + line.strip(), file=sys.stderr, flush=True)
    request = json.loads(line)
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0], "id": request["id"]}), flush=True)
    elif request["type"] == "play":
        print(json.dumps({"card": min(request["legal_cards"], key=lambda c: RANKS.index(c[0]))}), flush=True)
'''

# Misbehaving bots: each plays as the sample does, except where its MODE says otherwise.
FAULTY = '''\
import json, os, sys, time
MODE = sys.argv[1]
RANKS = "23456789TJQKA"
plays = 0
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "game_over":
        continue
    if request["type"] == "call":
        answer = {"call": request["legal_calls"][0]}
        if MODE == "wrong-type" and request["round_number"] == 1:
            answer = {"call": "one"}
    else:
        plays += 1
        answer = {"card": min(request["legal_cards"], key=lambda c: RANKS.index(c[0]))}
        if MODE == "garbage" and plays == 1:
            print("I think I will play the ace", flush=True)
            continue
        if MODE == "wrong-kind" and plays == 2 and not request["retry_reason"]:
            answer = {"call": 3}
        if MODE == "late" and plays == 3:
            time.sleep(2.6)  # past the deadline: its answer comes during the next request, and is dropped
        if MODE == "crash" and plays == 5:
            print("crashing on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        if MODE == "huge" and plays == 1:
            print("x" * 100_000, flush=True)
            continue
        if MODE == "silent" and plays >= 2:
            continue
        if MODE == "wrong-id" and plays == 1:
            answer["id"] = request["id"] + 7
    print(json.dumps(answer), flush=True)
'''

REQUEST_KEYS = {
    "type", "id", "table_id", "game_id", "player_names", "game_number", "round_number", "rounds_in_game", "seat",
    "dealer", "trump", "hand", "calls", "current_trick", "finished_tricks", "tricks_won", "total_tenths",
    "past_rounds", "rules", "seat_seed", "deadline_ms", "time_bank_ms", "retry_reason",
}
"""Every key of a request (plus ``legal_calls`` or ``legal_cards``), as docs/bots.md lists them."""


def config_text(
    bots: Sequence[tuple[str, str, str]], *, deal_sets: int = 1, concurrency: int = 2, rules: str = "",
    time: str = "deadline_ms = 2000", extra: str = "", name: str = "stdio",
) -> str:
    """A configuration: ``bots`` as (name, key, value) triples, each a ``[[bots]]`` table."""
    return kinds_text(bots, name=name, seed=11, deal_sets=deal_sets, concurrency=concurrency, rules=rules,
                      time=time, extra=extra)


def test_the_python_and_javascript_samples_play_a_tournament_without_a_fault(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node (Node.js) is not installed: the JavaScript sample cannot run")
    text = config_text([("py", "stdio", f"{{python}} {PYTHON_SAMPLE}"), ("js", "stdio", f"{node} {NODE_SAMPLE}"),
                        ("r1", "python", RANDOM), ("r2", "python", RANDOM)])
    summary = run(write(tmp_path / "t.toml", text), tmp_path / "results")
    assert (summary.played, summary.faults, summary.outstanding) == (4, 0, 0)
    assert audit(tmp_path / "results") is None
    for record in records(tmp_path / "results"):
        for bot in ("py", "js"):  # both call the lowest call allowed
            assert record["calls"][record["seats"].index(bot)] == 1
    for bot in ("py", "js"):  # a process per seat per game: four games, four processes
        log = (tmp_path / "results" / "logs" / f"{bot}.log").read_text()
        assert len(re.findall(r"launched for seat \d of game ", log)) == 4
        assert log.count("ended with exit status 0") == 4  # each read the end of its input and stopped


def test_a_deterministic_stdio_bot_gives_the_same_records_whatever_the_concurrency(tmp_path: Path) -> None:
    folders = []
    for concurrency in (1, 2):
        text = config_text([("py", "stdio", f"{{python}} {PYTHON_SAMPLE}"), ("r1", "python", RANDOM),
                            ("r2", "python", RANDOM), ("r3", "python", RANDOM)],
                           concurrency=concurrency, rules="rounds = 2")
        folder = tmp_path / f"results-{concurrency}"
        summary = run(write(tmp_path / f"t{concurrency}.toml", text), folder)
        assert (summary.played, summary.faults) == (4, 0)
        folders.append(folder)
    assert stripped(folders[0]) == stripped(folders[1])


def test_a_request_holds_the_seats_view_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "spy").mkdir()
    spy = write(tmp_path / "spy" / "spy.py", SPY)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    text = config_text([("spy", "stdio", f"{{python}} {spy} {port}"), ("r1", "python", RANDOM),
                        ("r2", "python", RANDOM), ("r3", "python", RANDOM)], rules='profile = "bhoos"\nrounds = 2',
                       time="deadline_ms = 1500\ntime_bank_ms = 500")
    results = tmp_path / "results"
    with listener:
        summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.faults) == (4, 0)
    log = (results / "logs" / "spy.log").read_text()
    if bwrap_problem() is None:  # sandboxed: no network, not even the machine's own loopback
        assert log.count("NETWORK refused") == 4 and "NETWORK reached" not in log
    rounds = {(r["game"], r["round"]): r for r in records(results)}
    key = bytes.fromhex((results / "seat_key").read_text())
    seen = [json.loads(line[5:]) for line in (results / "logs" / "spy.log").read_text().splitlines()
            if line.startswith("SEEN ")]
    requests = [s for s in seen if s["type"] in ("call", "play")]
    assert len([s for s in seen if s["type"] == "game_over"]) == 4
    assert len(requests) == 4 * 2 * 14
    ids = [s["id"] for s in requests]
    assert ids.count(1) == 4  # a fresh process for each game: its ids start again
    for request in requests:
        record = rounds[(request["game_id"], request["round_number"])]
        seat = request["seat"]
        legal = request.pop("legal_calls" if request["type"] == "call" else "legal_cards")
        assert set(request) == REQUEST_KEYS
        assert request["player_names"] == record["seats"] and record["seats"][seat] == "spy"
        assert request["rules"] == record["rules"] and request["rounds_in_game"] == 2
        assert (request["deadline_ms"], request["time_bank_ms"], request["retry_reason"]) == (1500, 500, "")
        assert request["dealer"] == record["dealer"] and request["trump"] == "S"
        dealt_mask = Hand.parse(record["hands"][seat]).mask
        assert request["seat_seed"] == seat_seed(key, record["deal_set"], record["round"], seat, dealt_mask)
        dealt = set(record["hands"][seat].split())
        hand = set(request["hand"])
        # Its own cards, and only those it still holds: no card of another seat, played or not.
        played_by_it = {t["cards"][(seat - t["leader"]) % 4] for t in request["finished_tricks"]}
        assert hand == dealt - played_by_it
        if request["type"] == "call":
            assert legal == list(range(1, 9))  # the bhoos profile's calls
            assert [c["seat"] for c in request["calls"]] == [(record["dealer"] + 1 + k) % 4 for k in
                                                             range(len(request["calls"]))]
            assert request["current_trick"]["cards"] == [] and request["finished_tricks"] == []
        else:
            assert set(legal) <= hand and legal
            assert [c["value"] for c in sorted(request["calls"], key=lambda c: c["seat"])] == record["calls"]
            done = len(request["finished_tricks"])
            assert request["finished_tricks"] == record["tricks"][:done]
            trick = record["tricks"][done]
            assert request["current_trick"] == {"leader": trick["leader"],
                                                "cards": trick["cards"][: (seat - trick["leader"]) % 4]}
            assert sum(request["tricks_won"]) == done


def test_faults_of_stdio_bots_are_their_own_and_the_tournament_goes_on(tmp_path: Path) -> None:
    (tmp_path / "faulty").mkdir()
    bot = write(tmp_path / "faulty" / "faulty.py", FAULTY)
    modes = ("garbage", "wrong-type", "late", "crash")
    text = config_text([(m, "stdio", f"{{python}} {bot} {m}") for m in modes], time="deadline_ms = 2000")
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding) == (4, 0)
    assert audit(results) is None
    faults = faults_of(results)
    for mode in modes:  # one bad answer (or one crash) in each of its four games
        assert len(faults[mode]) == 4, (mode, faults[mode])
    assert {f["kind"] for f in faults["garbage"]} == {"malformed"}
    assert "is not JSON" in faults["garbage"][0]["detail"]
    assert faults["garbage"][0]["fallback"] is not None
    assert {f["kind"] for f in faults["wrong-type"]} == {"malformed"}
    assert "is not a whole number" in faults["wrong-type"][0]["detail"]
    # A late answer is dropped when it comes: the bot's later answers are not shifted by one.
    assert {f["kind"] for f in faults["late"]} == {"late"}
    assert faults["late"][0]["detail"] == "no answer within 2000 ms: the deadline passed"
    assert {f["kind"] for f in faults["crash"]} == {"crash"}
    assert "exit status 3" in faults["crash"][0]["detail"]
    fallbacks = 0
    for record in records(results):  # after its crash the fallback plays the seat to the end of the game
        fallbacks += sum(row[record["seats"].index("crash")] for row in [record["fallbacks"]])
    assert fallbacks > 4 * 50
    assert "crashing on purpose" in (results / "logs" / "crash.log").read_text()


def test_silent_long_winded_and_confused_stdio_bots(tmp_path: Path) -> None:
    (tmp_path / "faulty").mkdir()
    bot = write(tmp_path / "faulty" / "faulty.py", FAULTY)
    modes = ("silent", "huge", "wrong-id", "wrong-kind")
    bots = [(m, "stdio", f"{{python}} {bot} {m}") for m in modes]
    text = config_text(bots, time="deadline_ms = 1500", rules="rounds = 1",
                       extra="\n[faults]\nunresponsive_after = 2\n").replace(
        'seed = 1\n', 'seed = 1\nstart_timeout_s = 0.5\n', 1)
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding) == (4, 0)
    faults = faults_of(results)
    # Two requests in a row unanswered (unresponsive_after): stalled, and the fallback plays on, no more waits.
    assert [f["kind"] for f in faults["silent"]] == ["late", "stalled"] * 4
    # It answered its first requests: its silence may be an answer held in its output buffer.
    assert faults["silent"][1]["detail"] == (
        "the bot left 2 requests in a row unanswered without writing a line; the bot answered earlier requests, but "
        "has written nothing for the last 2: if it is not still thinking, did it flush its output? (Python: "
        "print(..., flush=True), or run python with -u)")
    assert {f["kind"] for f in faults["huge"]} == {"malformed"} and len(faults["huge"]) == 4
    assert "longer than 65536 bytes" in faults["huge"][0]["detail"]
    assert {f["kind"] for f in faults["wrong-id"]} == {"malformed"} and len(faults["wrong-id"]) == 4
    assert "echo the id of the request you answer" in faults["wrong-id"][0]["detail"]
    assert {f["kind"] for f in faults["wrong-kind"]} == {"malformed"} and len(faults["wrong-kind"]) == 4
    assert "this request is a play request" in faults["wrong-kind"][0]["detail"]


def test_a_stdio_command_that_cannot_start_breaks_the_bot_and_its_games_wait(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-program"
    text = config_text([("ghost", "stdio", str(missing)), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                        ("r3", "python", RANDOM)], deal_sets=2, concurrency=1, rules="rounds = 1",
                       extra="\n[faults]\nrestarts = 1\n")
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    # Two games were played with the fallback in its seat (a crash each), then it counts as broken.
    assert summary.played == 2 and summary.outstanding == 6
    assert "2 launches failed; the last: its process ended with exit status" in summary.awaited["ghost"]
    assert "before it answered a request" in summary.awaited["ghost"]
    kinds = [f["kind"] for f in faults_of(results)["ghost"]]
    assert kinds == ["crash", "crash"]
    assert "No such file or directory" in (results / "logs" / "ghost.log").read_text()


def test_a_bot_that_does_not_read_its_requests_never_blocks_the_arena() -> None:
    """The requests pile up in the pipe; once it is full, the next one cannot be written in time: a
    ``stalled`` fault at that request's deadline, never a wait without end."""

    async def scenario() -> list[PlayerFault]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import time; time.sleep(60)", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE)
        assert process.stdin is not None
        pipe = process.stdin.transport.get_extra_info("pipe")
        fcntl.fcntl(pipe.fileno(), 1031, 4096)  # F_SETPIPE_SZ: a small pipe fills after a few requests
        process.stdin.transport.set_write_buffer_limits(high=4096)
        player = StdioPlayer("deaf", process, unresponsive_after=0)
        game = Game(Rules.profile("nepali"), seeded_deals(1, 1))
        decision = Decision(DecisionKind.CALL, "t1", "g1", game.current_seat, game.view(game.current_seat),
                            ("deaf", "b", "c", "d"), 50, 0)
        seen = []
        try:
            for _ in range(20):
                try:
                    await player.decide(decision)
                except PlayerFault as fault:
                    seen.append(fault)
                    if fault.gone:
                        break
        finally:
            process.kill()
            await process.wait()
            await player.close()
        return seen

    faults = run_async(scenario(), timeout=20)
    assert faults[-1].kind is FaultKind.STALLED and faults[-1].gone
    assert "does not read its standard input" in faults[-1].detail
    assert {f.kind for f in faults[:-1]} == {FaultKind.LATE}


@pytest.mark.parametrize(("table", "words"), [
    ('stdio = "{python} bot.py --arena {address}"', ["a stdio bot has no {address}", "remove {address}"]),
    ('stdio = "{python} bot.py"\ncommand = "x"', ["exactly one of", "stdio = ", "found command, stdio"]),
    ('stdio = "{python} bot.py"\nport = 7000', ["port is for bhoos bots"]),
    ('python = "m:C"\nstart_timeout_s = 3', ["start_timeout_s is for stdio, bhoos and bhoos_url bots"]),
    ('stdio = ["{python}", 3]', ["bots[1].stdio must list strings only"]),
])
def test_stdio_configuration_errors_name_the_key(table: str, words: list[str]) -> None:
    text = config_text([("r1", "python", RANDOM), ("r2", "python", RANDOM), ("r3", "python", RANDOM)])
    text = text.replace("[[bots]]", f'[[bots]]\nname = "x"\n{table}\n\n[[bots]]', 1)
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


def test_the_bots_in_the_documentation_are_the_sample_files() -> None:
    """docs/bots.md shows the two sample bots whole: the text there is the text of the files played above."""
    docs = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    section = docs[docs.index("## Any language over stdin/stdout"):]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.DOTALL)
    shown = {lang: body for lang, body in blocks if lang in ("python", "javascript")}
    assert shown["python"] == PYTHON_SAMPLE.read_text(encoding="utf-8")
    assert shown["javascript"] == NODE_SAMPLE.read_text(encoding="utf-8")
    assert len([line for line in shown["python"].splitlines() if line.strip()]) <= 14


def test_a_request_lists_cards_as_the_protocol_does() -> None:
    """The hand in the order of the protocol's ``hand`` (the card encoding's: spades, hearts, diamonds,
    clubs, each from the 2 up), and the request's fields from the decision."""
    game = Game(Rules.profile("nepali"), seeded_deals(3, 1))
    seat = game.current_seat
    decision = Decision(DecisionKind.CALL, "t1", "g1", seat, game.view(seat), ("a", "b", "c", "d"), 1000, 0)
    message = request_message(decision, 1)
    assert message["hand"] == [str(c) for c in sorted(game.view(seat).hand.cards(), key=lambda c: c.index)]
    assert (message["type"], message["id"], message["table_id"], message["game_id"]) == ("call", 1, "t1", "g1")
    assert message["legal_calls"] == list(range(1, 14)) and message["calls"] == []


def test_a_bot_that_writes_only_blank_lines_is_not_said_to_write_nothing() -> None:
    """Blank lines are no answer, but a bot that wrote some is told so, not that it wrote no line."""

    async def scenario() -> list[PlayerFault]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import sys\nfor line in sys.stdin:\n    print('\\n\\n', flush=True)\n",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        player = StdioPlayer("blank", process, unresponsive_after=2)
        game = Game(Rules.profile("nepali"), seeded_deals(1, 1))
        decision = Decision(DecisionKind.CALL, "t1", "g1", game.current_seat, game.view(game.current_seat),
                            ("blank", "b", "c", "d"), 300, 0)
        seen = []
        try:
            for _ in range(2):
                try:
                    await player.decide(decision)
                except PlayerFault as fault:
                    seen.append(fault)
        finally:
            process.kill()
            await process.wait()
            await player.close()
        return seen

    faults = run_async(scenario(), timeout=20)
    assert [f.kind for f in faults] == [FaultKind.LATE, FaultKind.STALLED]
    assert faults[1].detail == "the bot left 2 requests in a row unanswered writing only 6 blank lines"


@pytest.mark.parametrize(("command", "files", "language"), [
    ("{python} bot.py", {}, "Python"),
    ("python3 -u bot.py", {}, "Python"),
    ("./bot.py", {}, "Python"),
    ("./bot", {"bot": "#!/usr/bin/env python3\n"}, "Python"),
    ("node bot.js", {}, "Node.js"),
    ("./bot", {"bot": "#!/usr/bin/env -S node --no-warnings\n"}, "Node.js"),
    ("java -cp . Main", {}, "Java"),
    ("java -jar bot.jar", {}, "Java"),
    ("./bot", {"bot": "", "bot.c": ""}, "C"),
    ("./bot", {"bot": "#!/bin/sh\n", "bot.c": ""}, "C"),
    ("./bot", {"bot": "", "main.cpp": "", "util.c": ""}, "C++"),
    ("./bot", {"bot": "", "main.go": ""}, "Go"),
    ("go run .", {}, "Go"),
    ("./target/release/bot", {"target/release/bot": "", "Cargo.toml": "", "src/main.rs": ""}, "Rust"),
    ("cargo run --release", {}, "Rust"),
    ("./bot", {"bot": "", "Main.java": ""}, "Java"),
    ("./bot", {"bot": ""}, None),
    ("./bot", {"bot": "", "bot.c": "", "main.go": ""}, None),
    ("mybot", {}, None),
])
def test_the_language_of_a_stdio_bot_is_told_by_its_command_and_the_sources_beside_it(
    command: str, files: dict[str, str], language: str | None, tmp_path: Path,
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        write(tmp_path / name, text)
    found = language_of(command.split(), tmp_path)
    assert (found.value if found else None) == language
    hint = flush_hint(tuple(command.split()), tmp_path)
    assert hint == (FLUSH_HINTS[Language(language)] if language else NEUTRAL_HINT)
    if language not in (None, "Node.js"):
        assert hint.startswith(f"did it flush its output? ({language}: ")


def test_a_named_pipe_where_the_program_should_be_gives_the_neutral_hint_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "bot")  # opening it to read its #! line would wait for a writer forever
    hints: list[str] = []
    looking = threading.Thread(target=lambda: hints.append(flush_hint(("sh", "./bot"), tmp_path)), daemon=True)
    looking.start()
    looking.join(10)
    assert hints == [NEUTRAL_HINT]


def test_a_game_stopped_as_it_closes_a_bots_input_leaves_no_error_behind() -> None:
    """Ctrl-C cancels the games in play, some as they close their bots' input: the wait for the pipe to close is
    cancelled, and the pipe's closing, which comes after, must find nothing cancelled under it."""

    async def main() -> list[dict[str, object]]:
        errors: list[dict[str, object]] = []
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
        process = await asyncio.create_subprocess_exec(sys.executable, "-c", "import sys; sys.stdin.read()",
                                                       stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        player = StdioPlayer("bot", process)
        closing = asyncio.ensure_future(player.close())
        await asyncio.sleep(0)  # it has closed the bot's input and waits for the pipe to close
        closing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await closing
        await process.wait()
        await asyncio.sleep(0.1)
        return errors

    assert run_async(main()) == []


SLOW_CARDS = """\
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "call":
        print(json.dumps({"call": request["legal_calls"][0]}), flush=True)
    elif request["type"] == "play":
        if request["id"] <= 7:  # flushed, but each answer past the deadline, and the next behind it
            time.sleep(0.2)
        print(json.dumps({"card": request["legal_cards"][0]}), flush=True)
"""


def test_a_bot_whose_answers_come_late_is_told_it_is_slow_not_asked_whether_it_flushed(tmp_path: Path) -> None:
    (tmp_path / "slow").mkdir()
    bot = write(tmp_path / "slow" / "slow.py", SLOW_CARDS)
    text = config_text([("slow", "stdio", f"{{python}} {bot}"), ("r1", "python", RANDOM), ("r2", "python", RANDOM),
                        ("r3", "python", RANDOM)], concurrency=4, time="deadline_ms = 80", rules="rounds = 1",
                       extra="\n[faults]\nunresponsive_after = 0\n")
    summary = run(write(tmp_path / "t.toml", text), tmp_path / "results")
    assert summary.played == 4
    late = [f for f in faults_of(tmp_path / "results")["slow"] if f["kind"] == "late"]
    # Until its first late answer comes, its cards may sit in its output buffer; once they come, it is slow.
    assert not [f["detail"] for f in late if f["trick"] >= 3 and "flush" in f["detail"]]
    assert any(f["detail"].endswith("; the bot is slow, not silent: its answers to earlier requests came, but after "
                                    "their deadline, and it answers each request only after those, so each late "
                                    "answer makes the next one later: answer each request within the deadline")
               for f in late)
