"""A bot's error reaches its author at once, with the file and line: an exception in a kit bot over gRPC
or in an in-process bot is a ``crash`` fault naming it, answered without waiting for the deadline; and a
token copied with a newline still connects, or is refused with a hint that says so.

Everything runs from the user's side: ``callbreak-arena run`` as a process of its own, the bot as a
process of its own built on the kit (or a bot file named in the configuration), real gRPC.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from arena.core.rules import Rules
from arena.transports.grpc.server import ArenaServer, ServerSettings
from arena.transports.grpc.tokens import new_token, token_sha256
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from tests.conftest import ROOT, handshake, hello
from tests.helpers.runs import NO_FAST, RANDOM, cli, faults_of, kinds_text, records, write

DEADLINE_MS = 5000

DIVIDER = '''\
"""Calls the lowest call and plays the first legal card, but divides by zero at its third card of a game."""

import sys
import time

from arena.botkit import Bot, run


class Divider(Bot):
    name = "divider"

    def __init__(self, seed=0):
        self.cards = 0

    def call(self, view):
        return view.legal_calls[0]

    def play(self, view):
        self.cards += 1
        print(f"card {self.cards} asked at {time.monotonic():.3f}", file=sys.stderr, flush=True)
        if self.cards == 3:
            return self.cards // 0
        return view.legal.cards()[0]


if __name__ == "__main__":
    raise SystemExit(run(Divider))
'''
RAISING_LINE = DIVIDER.splitlines().index("            return self.cards // 0") + 1


def divider_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write(folder / "divider_bot.py", DIVIDER)


def asked_times(log: str) -> dict[int, list[float]]:
    """Card number -> the times (monotonic) the bot was asked for it, one per game."""
    out: dict[int, list[float]] = {}
    for number, when in re.findall(r"card (\d+) asked at ([0-9.]+)", log):
        out.setdefault(int(number), []).append(float(when))
    return out


def test_an_exception_in_a_kit_bots_play_is_a_crash_with_file_and_line_answered_at_once(tmp_path: Path) -> None:
    bot = divider_file(tmp_path / "divider")
    config = write(tmp_path / "t.toml", kinds_text(
        [("divider", "command", f"{{python}} {bot} --arena {{address}}"), ("r2", "python", NO_FAST),
         ("r3", "python", NO_FAST), ("r4", "python", NO_FAST)],
        name="crash", seed=3, deal_sets=1, concurrency=1, time=f"deadline_ms = {DEADLINE_MS}",
    ))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress", timeout=180)
    assert result.returncode == 0, result.stderr
    faults = faults_of(tmp_path / "out")
    assert set(faults) == {"divider"}
    assert [f["kind"] for f in faults["divider"]] == ["crash"] * 4  # one in each of its four games
    for fault in faults["divider"]:
        assert fault["detail"] == (f"the bot raised ZeroDivisionError: integer division or modulo by zero, "
                                   f"at divider_bot.py:{RAISING_LINE}"), fault
        assert fault["fallback"]  # the fallback played that one decision ...
    # ... and the bot was asked again at its next decision: a bug in one position does not end the game.
    log = (tmp_path / "out" / "logs" / "divider.log").read_text(encoding="utf-8")
    asked = asked_times(log)
    assert len(asked[3]) == len(asked[4]) == len(asked[65]) == 4 and 66 not in asked, log  # 65 cards a game
    # The next card was asked for well within the deadline of the one that failed: the arena did not
    # wait for that deadline to pass (it would have, had the error been left unanswered).
    for failed, next_one in zip(asked[3], asked[4], strict=True):
        assert next_one - failed < DEADLINE_MS / 1000 / 2, log
    # The author reads it in the bot's own log at once: the traceback, and the arena's notice.
    assert "ZeroDivisionError" in log and "Traceback" in log
    assert "the bot raised ZeroDivisionError" in log and "NOTICE_KIND_FALLBACK_PLAYED" in log


def test_an_exception_in_an_in_process_bot_names_its_file_and_line(tmp_path: Path) -> None:
    bot = divider_file(tmp_path / "divider")
    config = write(tmp_path / "t.toml", kinds_text(
        [("divider", "python", f"{bot}:Divider"), ("r2", "python", NO_FAST), ("r3", "python", NO_FAST),
         ("r4", "python", NO_FAST)],
        name="local", seed=3, deal_sets=1, concurrency=1, time=f"deadline_ms = {DEADLINE_MS}",
    ))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    faults = faults_of(tmp_path / "out")
    assert [f["kind"] for f in faults["divider"]] == ["crash"] * 4
    assert {f["detail"] for f in faults["divider"]} == {
        f"the bot raised ZeroDivisionError: integer division or modulo by zero, at divider_bot.py:{RAISING_LINE}"}


def test_an_error_raised_inside_the_arenas_code_names_the_bots_line_that_called_it(tmp_path: Path) -> None:
    """The last place in the bot's own code, not the library it called: here, a card that is not a card."""
    text = DIVIDER.replace("return self.cards // 0", "return view.legal.cards()[0].parse('XX')")
    (tmp_path / "divider").mkdir()
    write(tmp_path / "divider" / "divider_bot.py", text)
    config = write(tmp_path / "t.toml", kinds_text(
        [("divider", "python", f"{tmp_path / 'divider' / 'divider_bot.py'}:Divider"), ("r2", "python", NO_FAST),
         ("r3", "python", NO_FAST), ("r4", "python", NO_FAST)],
        name="local", seed=3, deal_sets=1, concurrency=1,
    ))
    result = cli("run", config, "--results", tmp_path / "out", "--no-progress")
    assert result.returncode == 0, result.stderr
    details = {f["detail"] for f in faults_of(tmp_path / "out")["divider"]}
    assert len(details) == 1
    detail = details.pop()
    assert detail.startswith("the bot raised CardError: ") and detail.endswith(f", at divider_bot.py:{RAISING_LINE}")


def test_a_bot_error_for_a_request_that_is_not_open_is_a_stray_like_any_answer() -> None:
    token = new_token()

    async def scenario() -> tuple[pb.ConnectResponse, pb.ConnectResponse]:
        server = ArenaServer(ServerSettings(rules=Rules(), tokens={token_sha256(token): "student"}))
        port = await server.start("127.0.0.1:0")
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stream = pb_grpc.ArenaStub(channel).Connect(timeout=5)
                await stream.write(hello(token))
                welcome = await stream.read()
                await stream.write(pb.ConnectRequest(error=pb.BotError(
                    request_id=99, error_type="TypeError", message="x is undefined", file="bot.js", line=7)))
                notice = await stream.read()
                await stream.done_writing()
                return welcome, notice
        finally:
            await server.stop(0.5)

    welcome, notice = asyncio.run(scenario())
    assert welcome.welcome.takes_bot_errors
    assert (notice.notice.kind, notice.notice.request_id) == (pb.NOTICE_KIND_UNKNOWN_REQUEST_ID, 99)
    assert notice.notice.detail == "request 99 is not open: this session holds no seat"


# --- tokens copied with a newline ----------------------------------------------------------------------


def test_a_kit_bot_whose_token_came_with_a_carriage_return_and_newline_connects_and_plays(tmp_path: Path) -> None:
    token = new_token()
    text = kinds_text([("r2", "python", RANDOM), ("r3", "python", RANDOM), ("r4", "python", RANDOM)],
                      name="tok", seed=5, deal_sets=1, concurrency=2, extra="[server]\nport = 0\n")
    text += f'\n[[bots]]\nname = "student"\nremote = true\ntoken_sha256 = "{token_sha256(token)}"\n'
    config = write(tmp_path / "t.toml", text)
    env = {k: v for k, v in os.environ.items() if k != "CALLBREAK_LAUNCHED"}
    arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results", str(tmp_path / "out"),
                              "--no-progress"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    bot = None
    try:
        assert arena.stderr is not None
        port = None
        seen = []
        while port is None:
            line = arena.stderr.readline()
            assert line, f"the arena ended before it listened: {''.join(seen)}"
            seen.append(line)
            match = re.search(r"arena listening on 127\.0\.0\.1:(\d+)", line)
            port = int(match.group(1)) if match else None
        bot = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--arena", f"127.0.0.1:{port}",
                                "--once"], cwd=ROOT, env={**env, "CALLBREAK_TOKEN": token + "\r\n"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, bot_err = bot.communicate(timeout=90)
        _, err = arena.communicate(timeout=60)
    finally:
        for process in (arena, bot):
            if process is not None and process.poll() is None:
                process.kill()
    assert bot.returncode == 0, bot_err
    assert arena.returncode == 0, "".join(seen) + err
    played = [r for r in records(tmp_path / "out") if "student" in r["seats"]]
    assert played and not any(r["faults"] for r in played)


@pytest.mark.parametrize(("sent", "hint"), [
    ("{token}\n", "this one ends with a newline: it was copied with the token; send the token alone"),
    (" {token}", "this one begins with a space: it was copied with the token; send the token alone"),
    ("{token}\r\n", "this one ends with a carriage return and a newline: it was copied with the token; send the "
                    "token alone"),
    ("{token}x", "a token made by callbreak-arena is 32 characters; this one has 33: is it the whole token, and "
                 "only the token?"),
])
def test_a_token_refused_for_what_was_copied_with_it_says_so(sent: str, hint: str) -> None:
    token = new_token()

    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
        server = ArenaServer(ServerSettings(rules=Rules(), tokens={token_sha256(token): "student"}))
        port = await server.start("127.0.0.1:0")
        try:
            return await handshake(port, hello(sent.format(token=token)))
        finally:
            await server.stop(0.5)

    received, code, detail = asyncio.run(scenario())
    assert code is grpc.StatusCode.UNAUTHENTICATED
    assert [m.refusal.reason for m in received] == [pb.REFUSAL_REASON_BAD_TOKEN]
    assert received[0].refusal.detail == detail
    assert detail == f"this token is not known to the arena: check the token the organiser gave your bot ({hint})"


def test_a_wrong_token_of_the_usual_form_gets_no_hint() -> None:
    async def scenario() -> str:
        server = ArenaServer(ServerSettings(rules=Rules(), tokens={token_sha256(new_token()): "student"}))
        port = await server.start("127.0.0.1:0")
        try:
            return (await handshake(port, hello(new_token())))[2]
        finally:
            await server.stop(0.5)

    assert asyncio.run(scenario()) == ("this token is not known to the arena: check the token the organiser gave "
                                       "your bot")

