"""Hostile bytes from stdio and Bhoos bots: each is a fault of its own seat, and the tournament goes on.

A corpus of answers no bot should send (nesting 60,000 deep, numbers of 5,000 digits, ``1e999``, ``NaN``,
bytes that are not UTF-8, NUL bytes, lone surrogates, a key twice, bare values, 20 MB of blank lines, a
line or a body one byte over its limit, broken HTTP) is written by real bot processes: a stdio bot over
its pipes, a Bhoos bot over a real socket. Each entry says what the seat gets: a fault of a kind, in
words, or the value, when the answer is fine after all (brackets inside a string, a line exactly at the
limit). Then whole tournaments of such bots finish, the honest bot at their tables commits no fault, and
``callbreak-arena verify`` passes on their results.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.core.dealing import seeded_deals
from arena.core.faults import FaultKind, PlayerFault
from arena.core.game import Game
from arena.core.rules import Rules
from arena.event.audit import audit
from arena.event.launch.sandbox import bwrap_problem
from arena.players.base import Decision, DecisionKind
from arena.transports.answers import DEPTH_LIMIT
from arena.transports.bhoos.httpclient import BODY_LIMIT, Endpoint
from arena.transports.bhoos.player import BhoosPlayer
from arena.transports.stdio import BLANK_LIMIT, LINE_LIMIT, StdioPlayer
from tests.conftest import ROOT
from tests.conftest import run as run_async
from tests.helpers.runs import RANDOM, cli, faults_of, kinds_text, run, write

PROBLEM = bwrap_problem()

# A stdio bot: python bot.py NAME WHEN. It writes the bytes of NAME.bin (beside it) instead of its answer to
# each call request (WHEN "call") or to every request (WHEN "every"), and answers the others as the
# sample does.
STDIO_BOT = '''\
import json, os, sys
hostile = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), sys.argv[1] + ".bin"), "rb").read()
RANKS = "23456789TJQKA"
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "game_over":
        continue
    if sys.argv[2] == "every" or request["type"] == sys.argv[2]:
        sys.stdout.buffer.write(hostile)
        sys.stdout.flush()
        continue
    if request["type"] == "call":
        answer = {"call": request["legal_calls"][0]}
    else:
        answer = {"card": min(request["legal_cards"], key=lambda c: RANKS.index(c[0]))}
    print(json.dumps(answer), flush=True)
'''

# A Bhoos bot on a raw socket: python bot.py NAME [PORT]. GET /hi gets a greeting; every POST gets the
# bytes of NAME.bin, a whole HTTP response, as they are. With PORT 0 it prints the port it listens on.
BHOOS_BOT = '''\
import os, socket, sys
hostile = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), sys.argv[1] + ".bin"), "rb").read()
port = int(sys.argv[2]) if len(sys.argv) > 2 else 7000
server = socket.create_server(("127.0.0.1", port))
if port == 0:
    print(server.getsockname()[1], flush=True)
while True:
    connection, _ = server.accept()
    with connection:
        data = b""
        while b"\\r\\n\\r\\n" not in data:
            more = connection.recv(65536)
            if not more:
                break
            data += more
        head, _, body = data.partition(b"\\r\\n\\r\\n")
        length = 0
        for line in head.split(b"\\r\\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            more = connection.recv(65536)
            if not more:
                break
            body += more
        if head.startswith(b"GET"):
            connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nhi")
        else:
            try:
                connection.sendall(hostile)
            except OSError:
                pass
'''

Expected = tuple[FaultKind, str] | tuple[None, Any]
"""A fault of that kind with those words in its detail, or ``(None, value)``: the answer read is ``value``."""


def _nest(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


STDIO_CORPUS: dict[str, tuple[bytes, Expected]] = {
    "deep-arrays": (b"[" * 60_000 + b"\n", (FaultKind.MALFORMED, f"more than {DEPTH_LIMIT} levels deep")),
    "deep-objects": (b'{"a":' * 12_000 + b"\n", (FaultKind.MALFORMED, f"more than {DEPTH_LIMIT} levels deep")),
    "deep-closed": (b'{"call": 1, "x": ' + _nest(DEPTH_LIMIT) + b"}\n",
                    (FaultKind.MALFORMED, f"more than {DEPTH_LIMIT} levels deep")),
    "deep-enough": (b'{"call": 1, "x": ' + _nest(DEPTH_LIMIT - 1) + b"}\n", (None, 1)),
    "brackets-in-a-string": (b'{"call": 1, "x": "' + b'[{\\"' * 12_000 + b'"}\n', (None, 1)),
    "huge-integer": (b'{"call": ' + b"9" * 5000 + b"}\n", (FaultKind.MALFORMED, "a number of 5,000 characters")),
    "huge-exponent": (b'{"call": 1e999}\n', (FaultKind.MALFORMED, "the number 1e999, too large")),
    "nan": (b'{"call": NaN}\n', (FaultKind.MALFORMED, "holds NaN, which is not JSON")),
    "invalid-utf8": (b'{"call": "\xff\xfe"}\n', (FaultKind.MALFORMED, "is not UTF-8 text (byte 0xff at byte 10)")),
    "nul-byte": (b'{"call": 1}\x00\n', (FaultKind.MALFORMED, "holds a NUL byte")),
    "lone-surrogate": (b'{"call": 1, "x": "\\udc00"}\n', (FaultKind.MALFORMED, "lone surrogate")),
    "duplicate-keys": (b'{"call": 1, "call": 13}\n', (FaultKind.MALFORMED, "names the key 'call' twice")),
    "bare-string": (b'"3"\n', (FaultKind.MALFORMED, "is not a JSON object")),
    "bare-number": (b"3\n", (FaultKind.MALFORMED, "is not a JSON object")),
    "empty-object": (b"{}\n", (FaultKind.MALFORMED, "has no 'call'")),
    "cut-short": (b'{"call": \n', (FaultKind.MALFORMED, "is not JSON")),
    "two-values": (b'{"call": 1} {"call": 2}\n', (FaultKind.MALFORMED, "more follows the first value")),
    "control-character": (b'{"call": "1\x01"}\n', (FaultKind.MALFORMED, "is not JSON")),
    "huge-id": (b'{"call": 1, "id": ' + b"7" * 90 + b"}\n", (FaultKind.MALFORMED, "echo the id")),
    "blank-flood": (b"\n" * 20_000_000 + b'{"call": 1}\n', (FaultKind.MALFORMED, "blank lines in a row")),
    "whitespace-flood": (b" \t\r\n" * (BLANK_LIMIT + 1) + b'{"call": 1}\n', (FaultKind.MALFORMED,
                                                                            "the bot wrote 1,001 blank lines")),
    "some-blank-lines": (b"\n \n\t\r\n" * (BLANK_LIMIT // 3) + b'{"call": 1}\n', (None, 1)),
    "line-at-the-limit": (b'{"call": 1}'.ljust(LINE_LIMIT) + b"\n", (None, 1)),
    "line-over-the-limit": (b'{"call": 1}'.ljust(LINE_LIMIT + 1) + b"\n", (FaultKind.MALFORMED,
                                                                           f"longer than {LINE_LIMIT} bytes")),
    "byte-order-mark": (b'\xef\xbb\xbf{"call": 1}\n', (None, 1)),
}


def _ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body


BHOOS_CORPUS: dict[str, tuple[bytes, Expected]] = {
    "deep-arrays": (_ok(b"[" * 60_000), (FaultKind.MALFORMED, f"more than {DEPTH_LIMIT} levels deep")),
    "deep-objects": (_ok(b'{"value":' * 7000), (FaultKind.MALFORMED, f"more than {DEPTH_LIMIT} levels deep")),
    "huge-integer": (_ok(b"9" * 5000), (FaultKind.MALFORMED, "a number of 5,000 characters")),
    "huge-exponent": (_ok(b'{"value": -1e999}'), (FaultKind.MALFORMED, "the number -1e999, too large")),
    "huge-digit-string": (_ok(b'{"value": "' + b"9" * 5000 + b'"}'), (FaultKind.MALFORMED, "is not a whole number")),
    "superscript-digits": (_ok('{"value": "²"}'.encode()), (FaultKind.MALFORMED, "is not a whole number")),
    "infinity": (_ok(b"Infinity"), (FaultKind.MALFORMED, "holds Infinity, which is not JSON")),
    "invalid-utf8": (_ok(b'{"value": "\xc3\x28"}'), (FaultKind.MALFORMED, "is not UTF-8 text")),
    "nul-byte": (_ok(b'{"value": 1}\x00'), (FaultKind.MALFORMED, "holds a NUL byte")),
    "lone-surrogate": (_ok(b'"\\ud800"'), (FaultKind.MALFORMED, "lone surrogate")),
    "duplicate-keys": (_ok(b'{"value": 1, "value": 8}'), (FaultKind.MALFORMED, "names the key 'value' twice")),
    "bare-word": (_ok(b'"three"'), (FaultKind.MALFORMED, "is not a whole number")),
    "blank-body": (_ok(b" \r\n" * 1000), (FaultKind.MALFORMED, "is empty")),
    "body-at-the-limit": (_ok(b'{"value": 1}'.ljust(BODY_LIMIT)), (None, 1)),
    "body-over-the-limit": (_ok(b'{"value": 1}'.ljust(BODY_LIMIT + 1)), (FaultKind.MALFORMED,
                                                                       f"longer than {BODY_LIMIT} bytes")),
    "huge-length": (b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n{}", (FaultKind.MALFORMED,
                                                                                         "longer than")),
    "header-flood": (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: b\r\n" % i for i in range(300)) + b"\r\n",
                     (FaultKind.MALFORMED, "more than 100 headers")),
    "long-headers": (b"HTTP/1.1 200 OK\r\n" + b"X-A: " + b"b" * 20_000 + b"\r\n\r\n", (FaultKind.MALFORMED,
                                                                                   "headers are longer than")),
    "superscript-status": (b"HTTP/1.1 \xb200 OK\r\nContent-Length: 1\r\n\r\n1", (FaultKind.CRASH, "is not HTTP")),
    "not-http": (b"\x00\xff hello\r\n\r\n", (FaultKind.CRASH, "is not HTTP")),
    "bad-chunk-size": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\xb9\r\n1\r\n0\r\n\r\n",
                       (FaultKind.CRASH, "chunked body is broken")),
}


def _bot_folder(tmp_path: Path, script: str, corpus: dict[str, tuple[bytes, Expected]]) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir(exist_ok=True)
    for name, (data, _) in corpus.items():
        (folder / f"{name}.bin").write_bytes(data)
    return write(folder / "bot.py", script)


def _call_decision(deadline_ms: int) -> Decision:
    game = Game(Rules.profile("bhoos"), seeded_deals(1, 1))
    seat = game.current_seat
    return Decision(DecisionKind.CALL, "t1", "g1", seat, game.view(seat), ("a", "b", "c", "d"), deadline_ms, 0)


def _outcome(answer: object) -> tuple[None, object]:
    return None, answer


def _check(outcome: tuple[FaultKind | None, object], expected: Expected) -> None:
    kind, got = outcome
    assert kind is expected[0], (outcome, expected)
    if kind is None:
        assert got == expected[1]
    else:
        assert isinstance(got, str) and expected[1] in got, got
        assert len(got) < 400  # the detail quotes the bot, but only a few dozen of its characters


@pytest.mark.parametrize("name", sorted(STDIO_CORPUS))
def test_each_hostile_line_from_a_stdio_bot_is_a_fault_of_its_seat(tmp_path: Path, name: str) -> None:
    bot = _bot_folder(tmp_path, STDIO_BOT, {name: STDIO_CORPUS[name]})

    async def scenario() -> tuple[FaultKind | None, object]:
        process = await asyncio.create_subprocess_exec(sys.executable, str(bot), name, "call",
                                                        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        player = StdioPlayer(name, process)
        try:
            answer, _ = await player.decide(_call_decision(20_000))
        except PlayerFault as fault:
            return fault.kind, fault.detail
        finally:
            process.kill()
            assert process.stdout is not None
            await process.stdout.read()  # what it wrote and the arena left unread: the pipe must close
            await process.wait()
            await player.close()
        return _outcome(answer)

    _check(run_async(scenario(), timeout=60), STDIO_CORPUS[name][1])


@pytest.mark.parametrize("name", sorted(BHOOS_CORPUS))
def test_each_hostile_response_from_a_bhoos_bot_is_a_fault_of_its_seat(tmp_path: Path, name: str) -> None:
    bot = _bot_folder(tmp_path, BHOOS_BOT, {name: BHOOS_CORPUS[name]})

    async def scenario() -> tuple[FaultKind | None, object]:
        process = await asyncio.create_subprocess_exec(sys.executable, str(bot), name, "0",
                                                        stdout=asyncio.subprocess.PIPE)
        assert process.stdout is not None
        try:
            port = int(await process.stdout.readline())
            player = BhoosPlayer(name, Endpoint(port=port), process=process)
            try:
                answer, _ = await player.decide(_call_decision(20_000))
            except PlayerFault as fault:
                return fault.kind, fault.detail
            return _outcome(answer)
        finally:
            process.kill()
            await process.wait()

    _check(run_async(scenario(), timeout=60), BHOOS_CORPUS[name][1])


def _verified(results: Path) -> None:
    assert audit(results) is None
    done = cli("verify", results)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_a_tournament_of_hostile_stdio_bots_finishes_and_verifies(tmp_path: Path) -> None:
    hostile = ("deep-arrays", "huge-integer", "blank-flood")
    bot = _bot_folder(tmp_path, STDIO_BOT, {name: STDIO_CORPUS[name] for name in hostile})
    bots = [(name, "stdio", f"{{python}} {bot} {name} every") for name in hostile] + [("honest", "python", RANDOM)]
    text = kinds_text(bots, name="hostile-stdio", seed=3, rules="rounds = 1", time="deadline_ms = 3000")
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding) == (4, 0)
    faults = faults_of(results)
    assert "honest" not in faults
    for name in hostile:
        assert {f["kind"] for f in faults[name]} == {"malformed"}, faults[name]
    assert all("blank lines in a row" in f["detail"] for f in faults["blank-flood"])
    assert len(faults["blank-flood"]) == 4  # once a game: then the fallback plays the seat
    assert len(faults["deep-arrays"]) == 4 * 14  # every call and card of every game, each a fault
    _verified(results)


@pytest.mark.slow
@pytest.mark.skipif(PROBLEM is not None, reason=f"bhoos bots need the sandbox: {PROBLEM}")
def test_a_tournament_of_hostile_bhoos_bots_finishes_and_verifies(tmp_path: Path) -> None:
    hostile = ("deep-objects", "superscript-status", "body-over-the-limit")
    bot = _bot_folder(tmp_path, BHOOS_BOT, {name: BHOOS_CORPUS[name] for name in hostile})
    bots = [(name, "bhoos", f"{{python}} {bot} {name}") for name in hostile] + [("honest", "python", RANDOM)]
    text = kinds_text(bots, name="hostile-bhoos", seed=3, rules='profile = "bhoos"\nrounds = 1',
                      time="deadline_ms = 3000")
    results = tmp_path / "results"
    summary = run(write(tmp_path / "t.toml", text), results)
    assert (summary.played, summary.outstanding) == (4, 0)
    faults = faults_of(results)
    assert "honest" not in faults
    assert {f["kind"] for f in faults["deep-objects"]} == {"malformed"}
    assert {f["kind"] for f in faults["body-over-the-limit"]} == {"malformed"}
    assert {f["kind"] for f in faults["superscript-status"]} == {"crash"}
    for name in hostile:
        assert len(faults[name]) == 4 * 14, (name, len(faults[name]))
    _verified(results)


def test_a_short_run_of_the_answer_fuzzer_crashes_nothing_and_verifies() -> None:
    """``benchmarks/fuzz_bots.py`` in its short form: a few hundred hostile answers over both transports."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fuzz_bots.py"), "--answers", "300"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    printed = done.stdout
    assert re.search(r"answers sent: [\d,]+ \([\d,]+ hostile\)", printed), printed
    assert "arena crashes: 0 (exit status 0)" in printed
    assert "honest bots' faults: 0" in printed
    assert "verify: passed" in printed
    assert "sx malformed" in printed
