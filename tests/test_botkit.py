"""The Python bot kit against a scripted arena: threads and instances per game, reconnection, exit
statuses, the launching arena's stdin pipe, and the one-line errors (TLS mismatches among them).

The scripted arena is a plain ``grpc.aio`` servicer on port 0 that sends a Welcome and whatever the
test says, and records the bot's answers with the time they arrived. Bots run as real processes
(``tests/helpers/kit_bots.py``), except where a test needs the kit inside the test process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
import trustme

from arena.core.views import View
from arena.kit import session as kit_session
from arena.kit.bot import Bot, Refused
from arena.kit.runner import run as run_bot
from arena.kit.session import play_session
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from tests.conftest import ROOT, free_port, run
from tests.helpers.kit_bots import Recorder, Sleepy

KIT_BOTS = ROOT / "tests" / "helpers" / "kit_bots.py"
HAND = ["AS", "KS", "QH", "JD", "TC"]


# --- the scripted arena ------------------------------------------------------------------------


class Conn:
    """One stream at the scripted arena: what the bot said first, and its answers as they come."""

    def __init__(self, context: grpc.aio.ServicerContext, hello: pb.ConnectRequest) -> None:
        self.context = context
        self.hello = hello.hello
        self.answers: asyncio.Queue[tuple[float, pb.ConnectRequest]] = asyncio.Queue()
        self.ended: asyncio.Future[tuple[grpc.StatusCode, str]] = asyncio.get_running_loop().create_future()
        self.closed = asyncio.Event()

    async def send(self, msg: pb.ConnectResponse) -> float:
        """Sends one message; returns the time it was handed to grpc."""
        await self.context.write(msg)
        return time.monotonic()

    async def answer(self, timeout: float = 10.0) -> tuple[float, pb.ConnectRequest]:
        """The next answer and the time it arrived."""
        return await asyncio.wait_for(self.answers.get(), timeout)

    def end(self, code: grpc.StatusCode = grpc.StatusCode.OK, details: str = "") -> None:
        """Ends the stream with ``code``."""
        if not self.ended.done():
            self.ended.set_result((code, details))

    async def pump(self) -> None:
        while True:
            msg = await self.context.read()
            if msg is grpc.aio.EOF:
                break
            self.answers.put_nowait((time.monotonic(), msg))
        self.closed.set()


class ScriptedArena(pb_grpc.ArenaServicer):  # type: ignore[misc]
    """Accepts every stream and hands it to the test."""

    def __init__(self) -> None:
        self.conns: asyncio.Queue[Conn] = asyncio.Queue()

    async def Connect(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        conn = Conn(context, await context.read())
        pump = asyncio.create_task(conn.pump())
        self.conns.put_nowait(conn)
        try:
            code, details = await conn.ended
        finally:
            pump.cancel()
        if code is not grpc.StatusCode.OK:
            await context.abort(code, details)

    async def accept(self, timeout: float = 10.0) -> Conn:
        """The next stream a bot opens."""
        return await asyncio.wait_for(self.conns.get(), timeout)

    async def welcome(self, timeout: float = 10.0, max_tables: int = 4) -> Conn:
        """The next stream, welcomed."""
        conn = await self.accept(timeout)
        await conn.send(welcome(max_tables))
        return conn


@contextlib.asynccontextmanager
async def scripted_arena(
    port: int = 0, *, tls: tuple[bytes, bytes] | None = None, options: Sequence[tuple[str, Any]] = (),
) -> AsyncIterator[tuple[ScriptedArena, int]]:
    """A scripted arena on ``127.0.0.1:port`` (0: a free port), TLS with ``(key, chain)``."""
    server = grpc.aio.server(options=list(options))
    servicer = ScriptedArena()
    pb_grpc.add_ArenaServicer_to_server(servicer, server)
    if tls is None:
        port = server.add_insecure_port(f"127.0.0.1:{port}")
    else:
        port = server.add_secure_port(f"127.0.0.1:{port}", grpc.ssl_server_credentials([tls]))
    await server.start()
    try:
        yield servicer, port
    finally:
        await server.stop(0)


def welcome(max_tables: int = 4) -> pb.ConnectResponse:
    return pb.ConnectResponse(welcome=pb.Welcome(session_id="s-1", protocol_version=1, max_tables=max_tables,
                                                 deadline_ms=5000))


def seat_view(game: str, seat: int) -> pb.SeatView:
    return pb.SeatView(game_id=game, game_number=1, round_number=1, rounds_in_game=5, seat=seat,
                       trump=pb.SUIT_SPADES, hand=HAND, tricks_won=[0] * 4, total_tenths=[0] * 4,
                       player_names=["a", "b", "c", "d"])


def call_request(request_id: int, table: str, game: str, seat: int = 0) -> pb.ConnectResponse:
    return pb.ConnectResponse(call_request=pb.CallRequest(
        request_id=request_id, table_id=table, seat=seat, deadline_ms=5000, legal_calls=list(range(1, 14)),
        view=seat_view(game, seat),
    ))


def play_request(request_id: int, table: str, game: str, seat: int = 0) -> pb.ConnectResponse:
    return pb.ConnectResponse(play_request=pb.PlayRequest(
        request_id=request_id, table_id=table, seat=seat, deadline_ms=5000, legal_cards=["KS", "AS"],
        view=seat_view(game, seat),
    ))


def event(table: str, game: str, kind: str, seat: int = 0) -> pb.ConnectResponse:
    msg = pb.Event(table_id=table, seat=seat, game_id=game)
    getattr(msg, kind).SetInParent()
    return pb.ConnectResponse(event=msg)


def refusal(reason: int, detail: str) -> pb.ConnectResponse:
    return pb.ConnectResponse(refusal=pb.Refusal(reason=reason, detail=detail))


# --- bot processes -----------------------------------------------------------------------------


class KitBot:
    """A bot of ``tests/helpers/kit_bots.py`` in its own process, output in files."""

    def __init__(self, directory: Path, n: int, args: Sequence[str], env: dict[str, str], stdin: Any) -> None:
        self.address = args[args.index("--arena") + 1]
        self.out = directory / f"kit{n}.out"
        self.err = directory / f"kit{n}.err"
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.popen = subprocess.Popen([sys.executable, str(KIT_BOTS), *args], cwd=ROOT, env=env,
                                          stdin=stdin, stdout=out, stderr=err)

    async def wait(self, timeout: float = 10.0) -> int:
        """The exit status, without blocking the event loop."""
        deadline = time.monotonic() + timeout
        while self.popen.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the bot still runs after {timeout} s; stderr: {self.stderr()}")
            await asyncio.sleep(0.02)
        return self.popen.returncode

    async def wait_stderr(self, text: str, timeout: float = 10.0) -> None:
        """Waits until ``text`` appears on the bot's stderr."""
        deadline = time.monotonic() + timeout
        while text not in self.stderr():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {text!r} on stderr in {timeout} s; stderr: {self.stderr()}")
            await asyncio.sleep(0.02)

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8", errors="replace")

    def kit_lines(self) -> list[str]:
        """The kit's own lines on stderr (grpc's log lines left out)."""
        return [line for line in self.stderr().splitlines() if line.startswith("[")]

    def lines(self) -> list[dict[str, Any]]:
        """The JSON lines the bot has printed so far (a line still being written left out)."""
        text = self.out.read_text(encoding="utf-8", errors="replace")
        return [json.loads(line) for line in text.split("\n")[:-1] if line.startswith("{")]


class KitBots:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.procs: list[KitBot] = []

    def start(
        self, cls: str, port: int, *extra: str, launched: bool = False, stdin: Any = subprocess.DEVNULL,
        env: dict[str, str] | None = None,
    ) -> KitBot:
        """``python tests/helpers/kit_bots.py cls --arena 127.0.0.1:port ...``, retrying every 0.5 s at most."""
        base = {k: v for k, v in os.environ.items() if k not in ("CALLBREAK_LAUNCHED", "CALLBREAK_TOKEN")}
        base.update(PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", **(env or {}))
        if launched:
            base["CALLBREAK_LAUNCHED"] = "1"
        args = [cls, "--arena", f"127.0.0.1:{port}", "--max-backoff", "0.5", *extra]
        proc = KitBot(self.directory, len(self.procs), args, base, stdin)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            if proc.popen.poll() is None:
                proc.popen.kill()
            proc.popen.wait(10)
            if proc.popen.stdin is not None:
                proc.popen.stdin.close()


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[KitBots]:
    pool = KitBots(tmp_path)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A test CA, a server certificate for 127.0.0.1, and the CA as a PEM file."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    path = tmp_path_factory.mktemp("pki") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    key_chain = (cert.private_key_pem.bytes(), b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    return {"ca": path, "tls": key_chain}


# --- decisions off the event loop --------------------------------------------------------------


def test_a_slow_decision_at_one_table_does_not_delay_another_table(kit: KitBots) -> None:
    async def scenario() -> tuple[float, list[int]]:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.welcome()
            await conn.send(call_request(1, "slow", "g1"))
            sent = await conn.send(call_request(2, "fast", "g2"))
            first_at, first = await conn.answer()
            _, second = await conn.answer()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return first_at - sent, [first.call.request_id, second.call.request_id]

    delay, order = run(scenario(), timeout=30)
    assert order == [2, 1]  # the fast table's answer overtook the sleeping one
    assert delay < 0.5  # the slow decision sleeps 1.5 s; the fast one never waited for it


def test_each_game_gets_a_fresh_instance_in_its_own_thread(kit: KitBots) -> None:
    async def scenario() -> tuple[list[int], KitBot]:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Recorder", port, "--seed", "5")
            conn = await arena.welcome()
            assert conn.hello.events  # Recorder overrides on_event
            calls = []
            for n, (table, game) in enumerate([("t1", "g1"), ("t2", "g2"), ("t1", "g1"), ("t2", "g2"),
                                               ("t1", "g3"), ("t1", "g3")], 1):
                await conn.send(call_request(n, table, game))
                calls.append((await conn.answer())[1].call.call)
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return calls, bot

    calls, bot = run(scenario(), timeout=30)
    assert calls == [1, 1, 2, 2, 1, 2]  # each instance counts only its own game's decisions
    lines = bot.lines()
    instances = {game: {line["instance"] for line in lines if line.get("game") == game} for game in ("g1", "g2", "g3")}
    assert all(len(serials) == 1 for serials in instances.values())
    assert len(set.union(*instances.values())) == 3
    assert 1 not in set.union(*instances.values())  # instance 1 is the start-up one, which plays no game
    assert all(line["seed"] == 5 for line in lines)
    assert all(line["thread"] != "MainThread" for line in lines)
    assert len({line["thread"] for line in lines}) == 3


def test_events_reach_the_game_instance_in_order_and_game_end_drops_it(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Recorder", port)
            conn = await arena.welcome()
            await conn.send(event("t1", "g1", "game_start"))
            await conn.send(event("t1", "g1", "round_start"))
            await conn.send(call_request(1, "t1", "g1"))
            assert (await conn.answer())[1].call.call == 3  # two events, then this decision
            await conn.send(event("t1", "g1", "game_end"))
            await conn.send(call_request(2, "t1", "g1"))  # a new instance: the old one ended with its game
            assert (await conn.answer())[1].call.call == 1
            while len(bot.lines()) < 5:  # the old instance's thread may print its last line after
                await asyncio.sleep(0.02)
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    lines = run(scenario(), timeout=30).lines()
    first = lines[0]["instance"]
    assert [line.get("event", "call") for line in lines if line["instance"] == first] == [
        "game_start", "round_start", "call", "game_end"]
    assert [line.get("event", "call") for line in lines if line["instance"] != first] == ["call"]


def test_a_later_game_at_the_same_table_and_seat_drops_the_earlier_instance(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Recorder", port)
            conn = await arena.welcome()
            for n, game in enumerate(["g1", "g2", "g1"], 1):  # g1 at t1 seat 0 is over once g2 began there
                await conn.send(call_request(n, "t1", game))
                await conn.answer()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    lines = run(scenario(), timeout=30).lines()
    assert [line["count"] for line in lines] == [1, 1, 1]
    assert len({line["instance"] for line in lines}) == 3


def test_instances_beyond_the_bound_are_dropped_least_recently_used_first(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Recorder", port)
            conn = await arena.welcome(max_tables=1)  # the bound is then max(8, 4 * 1) = 8 live games
            tables = [f"t{n}" for n in range(9)] + ["t1", "t0"]  # t0's game is the least recently used
            for n, table in enumerate(tables, 1):
                await conn.send(call_request(n, table, "g-" + table))
                await conn.answer()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    lines = run(scenario(), timeout=30).lines()
    assert [line["count"] for line in lines[-2:]] == [2, 1]  # t1's instance lived on; t0's was dropped


def test_notices_go_to_the_instance_of_the_table_or_the_start_up_one(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Recorder", port)
            conn = await arena.welcome()
            await conn.send(call_request(1, "t1", "g1"))
            await conn.answer()
            await conn.send(pb.ConnectResponse(notice=pb.Notice(kind=pb.NOTICE_KIND_LATE_ANSWER, table_id="t1",
                                                                detail="about t1")))
            await conn.send(pb.ConnectResponse(notice=pb.Notice(kind=pb.NOTICE_KIND_MALFORMED_MESSAGE,
                                                                detail="about no table")))
            await conn.send(call_request(2, "t1", "g1"))
            await conn.answer()
            deadline = time.monotonic() + 5
            while len(bot.lines()) < 4 and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    lines = run(scenario(), timeout=30).lines()
    game = lines[0]["instance"]
    by_detail = {line["notice"]: line for line in lines if "notice" in line}
    assert by_detail["about t1"]["instance"] == game
    assert by_detail["about no table"]["instance"] == 1
    assert by_detail["about no table"]["thread"] != "MainThread"


def test_by_default_a_notice_is_printed(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.welcome()
            await conn.send(pb.ConnectResponse(notice=pb.Notice(kind=pb.NOTICE_KIND_LATE_ANSWER, detail="too late")))
            await bot.wait_stderr("too late")
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    assert "[sleepy] arena notice NOTICE_KIND_LATE_ANSWER: too late" in run(scenario(), timeout=30).kit_lines()


def test_a_decision_that_raises_is_told_to_the_arena_at_once_with_its_file_and_line(kit: KitBots) -> None:
    async def scenario() -> tuple[list[pb.ConnectRequest], KitBot]:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Crashy", port)
            conn = await arena.accept()
            hello = welcome()
            hello.welcome.takes_bot_errors = True
            await conn.send(hello)
            await conn.send(call_request(1, "bad", "g1"))
            await conn.send(call_request(2, "good", "g2"))
            answered = [(await conn.answer())[1], (await conn.answer())[1]]
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return answered, bot

    answered, bot = run(scenario(), timeout=30)
    errors = [a.error for a in answered if a.WhichOneof("kind") == "error"]
    line = 1 + KIT_BOTS.read_text(encoding="utf-8").splitlines().index(
        '            raise RuntimeError("crashy crashes at table bad")')
    assert [(e.request_id, e.error_type, e.message, e.file, e.line) for e in errors] == [
        (1, "RuntimeError", "crashy crashes at table bad", "tests/helpers/kit_bots.py", line)]
    assert [a.call.request_id for a in answered if a.WhichOneof("kind") == "call"] == [2]  # it plays on
    assert "Traceback" in bot.stderr()  # its author still has the whole traceback


def test_a_decision_that_raises_is_left_unanswered_at_an_arena_that_takes_no_bot_errors(kit: KitBots) -> None:
    """An older arena (Welcome.takes_bot_errors unset) would take a BotError for a malformed message."""

    async def scenario() -> tuple[list[int], KitBot]:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Crashy", port)
            conn = await arena.welcome()
            await conn.send(call_request(1, "bad", "g1"))
            await conn.send(call_request(2, "good", "g2"))
            await conn.send(play_request(3, "good", "g2"))
            answered = [(await conn.answer())[1], (await conn.answer())[1]]
            with pytest.raises(TimeoutError):
                await conn.answer(timeout=0.5)
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return [a.call.request_id or a.play.request_id for a in answered], bot

    answered, bot = run(scenario(), timeout=30)
    assert answered == [2, 3]
    assert "Traceback" in bot.stderr()
    assert "RuntimeError: crashy crashes at table bad" in bot.stderr()


def test_the_hello_names_the_bot_and_takes_the_token_from_the_environment(kit: KitBots) -> None:
    async def scenario() -> pb.Hello:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port, "--name", "zed", env={"CALLBREAK_TOKEN": "secret-7"})
            conn = await arena.welcome()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return conn.hello

    hello = run(scenario(), timeout=30)
    assert (hello.bot_name, hello.bot_version, hello.token, hello.protocol_version) == ("zed", "7", "secret-7", 1)
    assert not hello.events


def test_without_name_the_hello_names_no_bot_and_a_given_token_wins_over_the_environment(kit: KitBots) -> None:
    async def scenario() -> pb.Hello:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port, "--token", "typed", env={"CALLBREAK_TOKEN": "secret-7"})
            conn = await arena.welcome()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return conn.hello

    hello = run(scenario(), timeout=30)
    assert (hello.bot_name, hello.token) == ("", "typed")  # the class's own name ("sleepy") is not sent


# --- play_session, in-process ------------------------------------------------------------------


def test_play_session_takes_a_single_instance_or_a_factory() -> None:
    async def session(bot: Bot | type[Bot]) -> list[int]:
        async with scripted_arena() as (arena, port):
            task = asyncio.create_task(play_session(bot, f"127.0.0.1:{port}", "t"))
            conn = await arena.welcome()
            calls = []
            for n, table in enumerate(["t1", "t2", "t1"], 1):
                await conn.send(call_request(n, table, "g-" + table))
                calls.append((await conn.answer())[1].call.call)
            conn.end()
            await task
            return calls

    shared = Recorder()
    assert run(session(shared)) == [1, 2, 3]  # one instance sees every decision, one at a time
    assert shared.count == 3
    assert run(session(Recorder)) == [1, 1, 2]


class DeadlineReader(Bot):
    """Keeps the deadline each view tells it."""

    def __init__(self) -> None:
        self.deadlines: list[int] = []

    def call(self, view: View) -> int:
        self.deadlines.append(view.deadline_ms)
        return view.legal_calls[0]

    def play(self, view: View) -> str:
        self.deadlines.append(view.deadline_ms)
        return str(view.legal.cards()[0])


def test_the_view_tells_the_bot_the_deadline_of_its_request() -> None:
    bot = DeadlineReader()

    async def scenario() -> None:
        async with scripted_arena() as (arena, port):
            task = asyncio.create_task(play_session(bot, f"127.0.0.1:{port}", "t"))
            conn = await arena.welcome()
            await conn.send(call_request(1, "t1", "g1"))
            await conn.answer()
            late_in_the_game = play_request(2, "t1", "g1")
            late_in_the_game.play_request.deadline_ms = 750
            await conn.send(late_in_the_game)
            await conn.answer()
            conn.end()
            await task

    run(scenario())
    assert bot.deadlines == [5000, 750]


def test_play_session_raises_refused_on_a_refusal() -> None:
    async def scenario() -> Refused:
        async with scripted_arena() as (arena, port):
            task = asyncio.create_task(play_session(Sleepy(), f"127.0.0.1:{port}", "t"))
            conn = await arena.accept()
            await conn.send(refusal(pb.REFUSAL_REASON_BAD_TOKEN, "no such token"))
            conn.end(grpc.StatusCode.UNAUTHENTICATED, "no such token")
            with pytest.raises(Refused) as caught:
                await task
            return caught.value

    refused = run(scenario())
    assert refused.reason == pb.REFUSAL_REASON_BAD_TOKEN
    assert str(refused) == "REFUSAL_REASON_BAD_TOKEN: no such token"


# --- stopping and reconnecting -----------------------------------------------------------------


def test_the_stream_ending_with_ok_stops_the_bot_with_status_0(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.welcome()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    assert bot.kit_lines() == [f"[sleepy] connected to the arena at {bot.address} (session s-1, up to 4 "
                               "tables at once)",
                               "[sleepy] the arena ended the stream: the tournament is over; stopping"]


@pytest.mark.parametrize(("reason", "code"), [
    (pb.REFUSAL_REASON_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED),
    (pb.REFUSAL_REASON_DISQUALIFIED, grpc.StatusCode.PERMISSION_DENIED),
    (pb.REFUSAL_REASON_UNSUPPORTED_PROTOCOL, grpc.StatusCode.FAILED_PRECONDITION),
])
def test_a_refusal_stops_the_bot_with_status_1(kit: KitBots, reason: int, code: grpc.StatusCode) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.accept()
            await conn.send(refusal(reason, "go away"))
            conn.end(code, "go away")
            assert await bot.wait() == 1, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    assert bot.kit_lines() == [f"[sleepy] refused by the arena: {pb.RefusalReason.Name(reason)}: go away; stopping"]


def test_a_refusal_for_a_reason_this_kit_does_not_know_stops_the_bot(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.accept()
            await conn.send(refusal(99, "a new reason"))
            conn.end(grpc.StatusCode.UNAUTHENTICATED, "a new reason")
            assert await bot.wait() == 1, bot.stderr()
            return bot

    assert run(scenario(), timeout=30).kit_lines() == ["[sleepy] refused by the arena: 99: a new reason; stopping"]


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED,
                                  grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT])
def test_a_final_status_stops_the_bot_with_status_1(kit: KitBots, code: grpc.StatusCode) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.welcome()
            conn.end(code, "that is all")
            assert await bot.wait() == 1, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    assert bot.kit_lines()[-1] == f"[sleepy] the arena ended the session with {code.name}: that is all; stopping"


@pytest.mark.parametrize(("reason", "code"), [
    (pb.REFUSAL_REASON_ARENA_FULL, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (pb.REFUSAL_REASON_DUPLICATE_SESSION, grpc.StatusCode.ALREADY_EXISTS),
])
def test_a_refusal_for_now_is_retried(kit: KitBots, reason: int, code: grpc.StatusCode) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.accept()
            await conn.send(refusal(reason, "later"))
            conn.end(code, "later")
            conn = await arena.welcome()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    name = pb.RefusalReason.Name(reason)
    assert bot.kit_lines()[0] == f"[sleepy] refused by the arena for now: {name}: later; retrying in 0.5 s"


def test_another_status_is_retried(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.welcome()
            conn.end(grpc.StatusCode.INTERNAL, "oops")
            conn = await arena.welcome()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    assert "[sleepy] connection to the arena lost (INTERNAL: oops); reconnecting in 0.5 s" in bot.kit_lines()


def test_the_bot_reconnects_when_the_arena_comes_back_on_the_same_port(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port)
            conn = await arena.welcome()
            await conn.send(call_request(1, "t1", "g1"))
            await conn.answer()
        await bot.wait_stderr("connection to the arena lost")  # the arena is down
        await bot.wait_stderr("cannot reach the arena")  # and the bot keeps trying
        async with scripted_arena(port) as (arena, _):
            conn = await arena.welcome()
            await conn.send(call_request(1, "t1", "g2"))
            assert (await conn.answer())[1].call.call == 1
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
        return bot

    bot = run(scenario(), timeout=30)
    lines = bot.kit_lines()
    assert lines[1] == "[sleepy] connection to the arena lost (the arena shut down); reconnecting in 0.5 s"
    assert lines[2] == f"[sleepy] cannot reach the arena at {bot.address}: connection refused; retrying in 0.5 s"
    assert lines[-1] == "[sleepy] the arena ended the stream: the tournament is over; stopping"


def test_a_bot_that_never_connected_says_it_cannot_reach_the_arena(kit: KitBots) -> None:
    port = free_port()

    async def scenario() -> tuple[KitBot, KitBot]:
        retrying = kit.start("Sleepy", port)
        once = kit.start("Sleepy", port, "--once")
        assert await once.wait() == 1, once.stderr()
        await retrying.wait_stderr("retrying in 0.5 s\n[sleepy] cannot reach")  # a second attempt
        return retrying, once

    retrying, once = run(scenario(), timeout=30)
    assert once.kit_lines() == [
        f"[sleepy] cannot reach the arena at 127.0.0.1:{port}: connection refused; not retrying (--once)"]
    assert retrying.kit_lines()[0] == (f"[sleepy] cannot reach the arena at 127.0.0.1:{port}: connection refused; "
                                       "retrying in 0.5 s")
    assert "connection lost" not in retrying.stderr()


def test_backoff_doubles_up_to_the_cap(kit: KitBots) -> None:
    port = free_port()

    async def scenario() -> KitBot:
        bot = kit.start("Sleepy", port, "--max-backoff", "1.2")
        await bot.wait_stderr("retrying in 1.2 s")
        return bot

    bot = run(scenario(), timeout=30)
    waits = [line.rpartition("retrying in ")[2] for line in bot.kit_lines()]
    assert waits[:3] == ["0.5 s", "1.0 s", "1.2 s"]


def test_the_wait_starts_again_after_a_welcomed_session(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port, "--max-backoff", "5")
            for welcomed in (False, False, True, False):
                conn = await (arena.welcome() if welcomed else arena.accept())
                conn.end(grpc.StatusCode.INTERNAL, "oops")
            conn = await arena.welcome()
            conn.end()
            assert await bot.wait() == 0, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    waits = [line.rpartition(" in ")[2] for line in bot.kit_lines() if "oops" in line]
    assert waits == ["0.5 s", "1.0 s", "0.5 s", "1.0 s"]


def test_once_stops_with_status_1_when_the_connection_is_lost(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port, "--once")
            conn = await arena.welcome()
            conn.end(grpc.StatusCode.UNAVAILABLE, "going down")
            assert await bot.wait() == 1, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    assert bot.kit_lines()[-1] == "[sleepy] connection to the arena lost (going down); not reconnecting (--once)"


# --- launched by an arena: the stdin pipe ------------------------------------------------------


def test_a_launched_bot_stops_when_its_stdin_pipe_closes_while_retrying(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        bot = kit.start("Sleepy", free_port(), launched=True, stdin=subprocess.PIPE)
        await bot.wait_stderr("cannot reach the arena")
        assert bot.popen.stdin is not None
        bot.popen.stdin.close()
        assert await bot.wait(timeout=3) == 0, bot.stderr()
        return bot

    bot = run(scenario(), timeout=30)
    assert bot.kit_lines()[-1] == "[sleepy] the arena that launched this bot has ended; stopping"


def test_a_launched_bot_stops_when_its_stdin_pipe_closes_mid_decision(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        async with scripted_arena() as (arena, port):
            bot = kit.start("Sleepy", port, "--option", "delay=30", launched=True, stdin=subprocess.PIPE)
            conn = await arena.welcome()
            await conn.send(call_request(1, "slow", "g1"))
            while not bot.lines():  # the decision has begun: it would take 30 s
                await asyncio.sleep(0.02)
            assert bot.popen.stdin is not None
            bot.popen.stdin.write(b"anything the arena writes is ignored\n")
            bot.popen.stdin.close()
            assert await bot.wait(timeout=3) == 0, bot.stderr()
            return bot

    bot = run(scenario(), timeout=30)
    assert bot.kit_lines()[-1] == "[sleepy] the arena that launched this bot has ended; stopping"


def test_a_launched_bot_stops_when_the_arena_that_launched_it_is_killed(kit: KitBots, tmp_path: Path) -> None:
    """A stand-in arena process launches the bot as an arena does, then dies by SIGKILL."""
    err = tmp_path / "launched.err"
    launcher = (
        "import os, subprocess, sys, time\n"
        f"bot = subprocess.Popen([sys.executable, {str(KIT_BOTS)!r}, 'Sleepy', '--arena', "
        f"'127.0.0.1:{free_port()}', '--max-backoff', '0.5'], stdin=subprocess.PIPE, "
        f"stderr=open({str(err)!r}, 'wb'), env=dict(os.environ, CALLBREAK_LAUNCHED='1'))\n"
        "print(bot.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    arena_proc = subprocess.Popen([sys.executable, "-c", launcher], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL)
    assert arena_proc.stdout is not None
    bot_pid = int(arena_proc.stdout.readline())
    try:
        deadline = time.monotonic() + 10
        while "cannot reach the arena" not in err.read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        arena_proc.kill()
        arena_proc.wait(10)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and "has ended; stopping" not in err.read_text():
            time.sleep(0.02)
        assert err.read_text().splitlines()[-1] == "[sleepy] the arena that launched this bot has ended; stopping"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(bot_pid, signal.SIGKILL)
        arena_proc.stdout.close()


def test_a_bot_run_by_hand_plays_on_when_the_shell_that_started_it_ends(tmp_path: Path) -> None:
    err = tmp_path / "orphan.err"
    shell = (
        "import os, subprocess, sys\n"
        f"bot = subprocess.Popen([sys.executable, {str(KIT_BOTS)!r}, 'Sleepy', '--arena', "
        f"'127.0.0.1:{free_port()}', '--max-backoff', '0.5'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, "
        f"stderr=open({str(err)!r}, 'wb'), start_new_session=True)\n"
        "print(bot.pid, flush=True)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CALLBREAK_LAUNCHED"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", shell], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=30)
    bot_pid = int(done.stdout)
    try:
        deadline = time.monotonic() + 15  # its first attempt, however slowly the machine starts it
        while "cannot reach" not in err.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        attempts = err.read_text().count("cannot reach")
        deadline = time.monotonic() + 10  # then another, its backoff being at most 0.5 s
        while err.read_text().count("cannot reach") <= attempts and time.monotonic() < deadline:
            time.sleep(0.05)
        assert err.read_text().count("cannot reach") > attempts > 0  # still trying, with its parent gone
        os.kill(bot_pid, 0)  # and alive
        assert "stopping" not in err.read_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(bot_pid, signal.SIGKILL)


def test_a_bot_run_by_hand_ignores_its_stdin(kit: KitBots) -> None:
    async def scenario() -> KitBot:
        bot = kit.start("Sleepy", free_port(), stdin=subprocess.DEVNULL)  # at end of file from the start
        await bot.wait_stderr("retrying in 0.5 s\n[sleepy] cannot reach")
        await asyncio.sleep(0.5)
        assert bot.popen.poll() is None, bot.stderr()
        return bot

    bot = run(scenario(), timeout=30)
    assert "launched" not in bot.stderr()


def test_ctrl_c_stops_the_bot_with_status_1(kit: KitBots) -> None:
    async def scenario() -> int:
        bot = kit.start("Sleepy", free_port())
        await bot.wait_stderr("cannot reach the arena")
        bot.popen.send_signal(signal.SIGINT)
        return await bot.wait()

    assert run(scenario(), timeout=30) == 1


# --- configuration errors: status 2, one line ---------------------------------------------------


def test_a_plaintext_bot_against_a_tls_arena_is_told_to_use_tls_ca(kit: KitBots, pki: dict[str, Any]) -> None:
    async def scenario() -> tuple[KitBot, int]:
        async with scripted_arena(tls=pki["tls"]) as (_, port):
            bot = kit.start("Sleepy", port)
            return bot, await bot.wait()

    bot, status = run(scenario(), timeout=30)
    assert status == 2, bot.stderr()
    assert bot.kit_lines() == [f"[sleepy] the arena at {bot.address} speaks TLS: run the bot with --tls-ca "
                               "FILE (the organiser's CA certificate)"]


def test_a_tls_bot_against_a_plaintext_arena_is_told_to_drop_tls_ca(kit: KitBots, pki: dict[str, Any]) -> None:
    async def scenario() -> tuple[KitBot, int]:
        async with scripted_arena() as (_, port):
            bot = kit.start("Sleepy", port, "--tls-ca", str(pki["ca"]))
            return bot, await bot.wait()

    bot, status = run(scenario(), timeout=30)
    assert status == 2, bot.stderr()
    address = bot.address
    assert bot.kit_lines() == [f"[sleepy] the TLS handshake failed: the arena at {address} does not speak TLS: "
                               "run the bot without --tls-ca"]


def test_a_tls_bot_with_the_wrong_ca_is_told_so(kit: KitBots, pki: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))

    async def scenario() -> tuple[KitBot, int]:
        async with scripted_arena(tls=pki["tls"]) as (_, port):
            bot = kit.start("Sleepy", port, "--tls-ca", str(other))
            return bot, await bot.wait()

    bot, status = run(scenario(), timeout=30)
    assert status == 2, bot.stderr()
    assert bot.kit_lines() == [f"[sleepy] the TLS handshake failed: {other} is not the CA that signed the "
                               f"certificate of the arena at {bot.address}: ask the organiser for the right "
                               "CA certificate"]


def test_a_tls_bot_whose_arena_certificate_names_another_host_is_told_so(
    kit: KitBots, pki: dict[str, Any], tmp_path: Path,
) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("arena.example.org")
    ca_path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_path))
    tls = (cert.private_key_pem.bytes(), b"".join(blob.bytes() for blob in cert.cert_chain_pems))

    async def scenario() -> tuple[KitBot, int]:
        async with scripted_arena(tls=tls) as (_, port):
            bot = kit.start("Sleepy", port, "--tls-ca", str(ca_path))
            return bot, await bot.wait()

    bot, status = run(scenario(), timeout=30)
    assert status == 2, bot.stderr()
    assert bot.kit_lines() == [f"[sleepy] the TLS handshake failed: the certificate of the arena at "
                               f"{bot.address} does not name 127.0.0.1: use the host name the organiser gave"]


def test_a_tls_bot_that_trusts_the_ca_plays(kit: KitBots, pki: dict[str, Any]) -> None:
    async def scenario() -> int:
        async with scripted_arena(tls=pki["tls"]) as (arena, port):
            bot = kit.start("Sleepy", port, "--tls-ca", str(pki["ca"]))
            conn = await arena.welcome()
            await conn.send(call_request(1, "t1", "g1"))
            assert (await conn.answer())[1].call.call == 1
            conn.end()
            return await bot.wait()

    assert run(scenario(), timeout=30) == 0


@pytest.mark.parametrize("content", [None, b"not a certificate\n"])
def test_an_unusable_tls_ca_file_is_one_line_and_status_2(kit: KitBots, tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "ca.pem"
    if content is not None:
        path.write_bytes(content)

    async def scenario() -> tuple[KitBot, int]:
        bot = kit.start("Sleepy", free_port(), "--tls-ca", str(path))
        return bot, await bot.wait()

    bot, status = run(scenario(), timeout=30)
    assert status == 2
    assert "Traceback" not in bot.stderr()
    expected = (f"[sleepy] cannot read --tls-ca {path}: No such file or directory" if content is None else
                f"[sleepy] --tls-ca {path} holds no PEM certificate (a file starting with "
                "-----BEGIN CERTIFICATE-----)")
    assert bot.stderr().splitlines() == [expected]


def test_unusable_client_certificate_options_are_one_line_and_status_2(kit: KitBots, tmp_path: Path) -> None:
    ca, cert, key, junk = (tmp_path / name for name in ("ca.pem", "bot.pem", "bot.key", "junk.pem"))
    authority = trustme.CA()
    authority.cert_pem.write_to_path(str(ca))
    issued = authority.issue_cert("bot")
    cert.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
    issued.private_key_pem.write_to_path(str(key))
    junk.write_bytes(b"not a certificate\n")
    cases = [
        (["--tls-ca", str(ca), "--tls-cert", str(cert)],
         "[sleepy] --tls-cert and --tls-key go together: the client certificate and its private key"),
        (["--tls-cert", str(cert), "--tls-key", str(key)],
         "[sleepy] --tls-cert needs --tls-ca too: the organiser's CA certificate, to check the arena's"),
        (["--tls-ca", str(ca), "--tls-cert", str(tmp_path / "none.pem"), "--tls-key", str(key)],
         f"[sleepy] cannot read --tls-cert {tmp_path / 'none.pem'}: No such file or directory"),
        (["--tls-ca", str(ca), "--tls-cert", str(junk), "--tls-key", str(key)],
         f"[sleepy] --tls-cert {junk} and --tls-key {key} are not a PEM certificate and its private key"),
        (["--tls-ca", str(ca), "--tls-cert", str(cert), "--tls-key", str(ca)],
         f"[sleepy] --tls-cert {cert} and --tls-key {ca} are not a PEM certificate and its private key"),
    ]

    async def scenario() -> list[tuple[int, list[str]]]:
        started = [kit.start("Sleepy", free_port(), *args) for args, _ in cases]
        return [(await bot.wait(), bot.stderr().splitlines()) for bot in started]

    assert run(scenario(), timeout=60) == [(2, [line]) for _, line in cases]


@pytest.mark.parametrize(("cls", "option", "expected"), [
    ("Sleepy", "novalue", "[sleepy] --option 'novalue': write KEY=VALUE, like aggression=0.5"),
    ("Picky", "x=1", "[picky] cannot make the bot: TypeError: Picky.__init__() got an unexpected keyword "
                     "argument 'x'"),
])
def test_bad_options_are_one_line_and_status_2(kit: KitBots, cls: str, option: str, expected: str) -> None:
    async def scenario() -> tuple[KitBot, int]:
        bot = kit.start(cls, free_port(), "--option", option)
        return bot, await bot.wait()

    bot, status = run(scenario(), timeout=30)
    assert status == 2
    assert bot.stderr().splitlines() == [expected]


def test_help_lists_every_option(kit: KitBots) -> None:
    proc = subprocess.run([sys.executable, str(KIT_BOTS), "Sleepy", "--help"], cwd=ROOT, capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=30)
    assert proc.returncode == 0
    for option in ("--arena", "--token", "--name", "--seed", "--tls-ca", "--tls-cert", "--tls-key", "--option",
                   "--once", "--max-backoff", "CALLBREAK_TOKEN", "Exit status"):
        assert option in proc.stdout


# --- keepalive ---------------------------------------------------------------------------------


def test_keepalive_pings_every_30_s() -> None:
    assert kit_session.KEEPALIVE_MS == 30_000


def test_an_arena_that_closes_for_too_many_pings_is_explained(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """An arena that allows a ping every 10 s, and a kit made to ping every 0.1 s."""
    monkeypatch.setattr(kit_session, "KEEPALIVE_MS", 100)
    options = [("grpc.keepalive_permit_without_calls", 1), ("grpc.http2.min_ping_interval_without_data_ms", 10_000)]

    async def scenario() -> int:
        async with scripted_arena(options=options) as (arena, port):
            status: list[int] = []
            thread = threading.Thread(target=lambda: status.append(run_bot(
                Sleepy, ["--arena", f"127.0.0.1:{port}", "--max-backoff", "0.5"])))
            thread.start()
            await arena.welcome()  # and then silence, while the kit pings
            conn = await arena.welcome(timeout=20)  # the kit came back
            conn.end()
            while thread.is_alive():
                await asyncio.sleep(0.02)
            return status[0]

    assert run(scenario(), timeout=40) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    assert ("[sleepy] the arena closed the connection because this bot sent keepalive pings too often: ping at most "
            "every 10 s; reconnecting in 0.5 s") in lines
