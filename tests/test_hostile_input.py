"""Hostile input over real gRPC on port 0: text a bot writes is cut before it reaches a detail, a
record, a log line or a notice; stray messages are counted, logged at most once a second, and a
flood ends the stream and is charged to the bot; bytes that are not a ConnectRequest end the stream
with INVALID_ARGUMENT; a disqualified stream always ends PERMISSION_DENIED; and a short protocol
fuzzing run against a whole tournament (the same code as ``benchmarks/fuzz.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.cli.results import render_status
from arena.core.dealing import seeded_deals
from arena.core.faults import ANSWER_TEXT_LIMIT, FREE_TEXT_LIMIT, FaultKind, bounded, shown
from arena.event.plan.status import SessionState, Status
from arena.event.run.policy import FaultPolicy
from arena.players.table import TableSettings
from arena.records.format import GameRecord
from arena.transports.grpc.server import MAX_MESSAGE_BYTES, ArenaServer
from arena.transports.grpc.session import END_QUIET_S, END_WAIT_S
from arena.transports.grpc.strays import HELD_FAULTS, STRAY_LIMIT, STRAY_WINDOW_S, HeldFaults
from benchmarks.fuzz import fuzz
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from tests.conftest import ROOT, arena, handshake, hello, run, token
from tests.helpers.seating import seat_and_play

FOUR = ["ana", "bo", "cy", "di"]
NOT_PYTHON = ("Traceback", "Unexpected <class", "Exception", "DecodeError")
Answerer = Callable[[pb.ConnectResponse], list[pb.ConnectRequest]]


def legal(msg: pb.ConnectResponse) -> list[pb.ConnectRequest]:
    """The first legal call or card; nothing for anything else."""
    if msg.HasField("call_request"):
        r = msg.call_request
        return [pb.ConnectRequest(call=pb.CallAnswer(request_id=r.request_id, call=r.legal_calls[0]))]
    if msg.HasField("play_request"):
        p = msg.play_request
        return [pb.ConnectRequest(play=pb.PlayAnswer(request_id=p.request_id, card=p.legal_cards[0]))]
    return []


class RawBot:
    """A bot written straight against the protocol, in the test's event loop; ``answer`` says what it
    sends for each message (the first legal call or card by default)."""

    def __init__(self, port: int, name: str, answer: Answerer = legal, version: str = "raw") -> None:
        self.port = port
        self.name = name
        self.answer = answer
        self.version = version
        self.notices: list[pb.Notice] = []
        self.code: grpc.StatusCode | None = None
        self.details = ""

    async def play(self) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            stream = pb_grpc.ArenaStub(channel).Connect()
            await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token(self.name), bot_version=self.version,
                                                                protocol_version=1)))
            try:
                while (msg := await stream.read()) is not grpc.aio.EOF:
                    if msg.HasField("notice"):
                        self.notices.append(msg.notice)
                    for out in self.answer(msg):
                        await stream.write(out)
            except grpc.aio.AioRpcError:
                pass
            self.code = await stream.code()
            self.details = await stream.details() or ""

    def kinds(self) -> list[str]:
        return [pb.NoticeKind.Name(n.kind) for n in self.notices]


async def game(server: ArenaServer, port: int, players: list[RawBot], seed: int = 1) -> GameRecord:
    """One game of four raw bots (seated in the order given)."""
    tasks = [asyncio.get_running_loop().create_task(p.play()) for p in players]
    try:
        return await seat_and_play(server, [p.name for p in players], seeded_deals(seed, 1), timeout=10)
    finally:
        for task in tasks:
            task.cancel()


async def welcomed(port: int, name: str) -> tuple[grpc.aio.Channel, Any]:
    """A stream of ``name`` past its Welcome."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stream = pb_grpc.ArenaStub(channel).Connect()
    await stream.write(hello(token(name)))
    first = await stream.read()
    assert first.HasField("welcome")
    return channel, stream


async def read_to_end(stream: Any) -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
    received = []
    try:
        while (msg := await stream.read()) is not grpc.aio.EOF:
            received.append(msg)
    except grpc.aio.AioRpcError:
        pass
    return received, await stream.code(), await stream.details() or ""


def notices(received: list[pb.ConnectResponse]) -> list[str]:
    return [pb.NoticeKind.Name(m.notice.kind) for m in received if m.HasField("notice")]


def test_the_proto_states_the_limits_the_arena_applies() -> None:
    text = (ROOT / "protocol" / "callbreak.proto").read_text(encoding="utf-8")
    flat = re.sub(r"\s*\n\s*//\s*", " ", text)
    assert f"more than {STRAY_LIMIT} stray messages within {STRAY_WINDOW_S:g} seconds FLOODS" in flat
    assert f"at most {MAX_MESSAGE_BYTES} bytes (64 KiB) serialized" in flat
    assert f"at most {ANSWER_TEXT_LIMIT} characters of an answer" in flat
    assert f"at most {FREE_TEXT_LIMIT} of bot_name or bot_version" in flat
    assert f"sent nothing for {END_QUIET_S:g} s (at most {END_WAIT_S:g} s more if it keeps writing)" in flat
    assert f"'{'A' * ANSWER_TEXT_LIMIT}…' (3,900,000 characters)" in flat
    assert pb.NOTICE_KIND_FLOOD == 8


# --- bounded text ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "limit", "expected"), [
    ("QS", 40, "'QS'"),
    ("A" * 40, 40, repr("A" * 40)),
    ("A" * 3_900_000, 4, "'AAAA…' (3,900,000 characters)"),
    ("it's" * 3, 4, "\"it's…\" (12 characters)"),
    (14, 40, "14"),
    (10**5000, 40, "an integer of 16,610 bits"),
    (list(range(10**6)), 40, "[0, 1, 2, 3, ...]"),
], ids=["card", "at the limit", "megabytes", "quotes", "call", "huge int", "huge list"])
def test_shown_repeats_a_bots_text_cut_to_its_limit(value: object, limit: int, expected: str) -> None:
    assert shown(value, limit) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("0.3.1", "0.3.1"),
    ("V" * 200, "'" + "V" * 100 + "…' (200 characters)"),
    ("1.0\n\x1b[31mred", repr("1.0\n\x1b[31mred")),  # never a line break or an escape into a log or a table
], ids=["short", "long", "unprintable"])
def test_bounded_keeps_a_bots_free_text_short_and_printable(text: str, expected: str) -> None:
    assert bounded(text) == expected


def test_a_megabyte_card_is_refused_with_a_short_notice_and_a_short_fault() -> None:
    huge = "A" * (MAX_MESSAGE_BYTES - 100)
    sent = []

    def cheat(msg: pb.ConnectResponse) -> list[pb.ConnectRequest]:
        if msg.HasField("play_request") and not sent:
            sent.append(msg.play_request.request_id)
            return [pb.ConnectRequest(play=pb.PlayAnswer(request_id=msg.play_request.request_id, card=huge))]
        return legal(msg)

    async def scenario() -> tuple[GameRecord, RawBot]:
        async with arena(FOUR) as (server, port):
            ana = RawBot(port, "ana", cheat)
            record = await game(server, port, [ana, *(RawBot(port, n) for n in FOUR[1:])])
            return record, ana

    record, ana = run(scenario())
    cut = f"'{'A' * ANSWER_TEXT_LIMIT}…' ({len(huge):,} characters)"
    [fault] = record.faults
    assert fault.kind is FaultKind.ILLEGAL_CARD
    assert fault.detail.startswith(f"{cut} is not a card") and len(fault.detail) < 200
    [illegal] = [n for n in ana.notices if n.kind == pb.NOTICE_KIND_ILLEGAL_ANSWER]
    assert illegal.detail == fault.detail
    assert max(len(str(f.to_dict())) for f in record.faults) < 400


def test_a_huge_version_is_kept_cut_in_the_session_and_the_record() -> None:
    async def scenario() -> tuple[GameRecord, list[str]]:
        async with arena(FOUR) as (server, port):
            ana = RawBot(port, "ana", version="V" * 50_000)
            players = [ana, *(RawBot(port, n) for n in FOUR[1:])]
            tasks = [asyncio.get_running_loop().create_task(p.play()) for p in players]
            try:
                while len(server.lobby.all_live()) < 4:
                    await asyncio.sleep(0.01)
                versions = [s.version for s in server.lobby.all_live()]
                return await seat_and_play(server, FOUR, seeded_deals(2, 1), timeout=10), versions
            finally:
                for task in tasks:
                    task.cancel()

    record, versions = run(scenario())
    cut = "'" + "V" * 100 + "…' (50,000 characters)"
    assert cut in versions
    assert record.versions == (cut, "raw", "raw", "raw")


def test_a_huge_name_is_refused_with_a_short_detail() -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
        async with arena(FOUR) as (_, port):
            return await handshake(port, hello(token("ana"), name="N" * 20_000))

    received, code, details = run(scenario())
    assert code is grpc.StatusCode.UNAUTHENTICATED
    assert [m.refusal.reason for m in received] == [pb.REFUSAL_REASON_BAD_TOKEN]
    assert "(20,000 characters)" in details and len(details) < 400 and received[0].refusal.detail == details


# --- stray messages and floods -----------------------------------------------------------------------


def test_strays_from_a_session_without_a_seat_are_counted_noticed_and_logged_once_a_second(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, dict[str, int], int, float]:
        async with arena(FOUR) as (server, port):
            channel, stream = await welcomed(port, "ana")
            began = time.monotonic()
            for n in range(60):  # under the flood limit, over more than a second
                await stream.write(pb.ConnectRequest(play=pb.PlayAnswer(request_id=1000 + n, card="AS")))
                await asyncio.sleep(0.025)
            [session] = server.lobby.all_live()
            counts = dict(session.fault_counts)
            held = len(session.drain_faults())
            took = time.monotonic() - began
            await stream.done_writing()
            received, code, _ = await read_to_end(stream)
            await channel.close()
            return received, code, counts, held, took

    with caplog.at_level(logging.WARNING, logger="arena.transports.grpc"):
        received, code, counts, held, took = run(scenario())
    assert code is grpc.StatusCode.OK  # no flood: the stream ended when the bot closed it
    assert notices(received) == ["NOTICE_KIND_UNKNOWN_REQUEST_ID"] * 60
    assert all("this session holds no seat" in m.notice.detail for m in received if m.HasField("notice"))
    assert counts == {"unknown_request": 60}
    assert held <= HELD_FAULTS + 1  # the first ones in detail, the rest counted in one line
    lines = [r.getMessage() for r in caplog.records if "stray messages" in r.getMessage()]
    assert 1 <= len(lines) <= took + 2
    assert "from s-1 (bot ana)" in lines[0] and "request 10" in lines[0]


def test_a_flood_ends_the_stream_and_is_charged_to_the_bot_at_its_next_decision() -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str, GameRecord]:
        async with arena(FOUR) as (server, port):
            channel, stream = await welcomed(port, "ana")
            for n in range(STRAY_LIMIT + 50):
                kind = n % 3
                await stream.write(pb.ConnectRequest(play=pb.PlayAnswer(request_id=n, card="AS")) if kind == 0
                                   else pb.ConnectRequest() if kind == 1
                                   else pb.ConnectRequest(call=pb.CallAnswer(request_id=2**64 - 1, call=2**32 - 1)))
                if n % 50 == 49:
                    await asyncio.sleep(0)
            received, code, details = await read_to_end(stream)
            await channel.close()
            record = await game(server, port, [RawBot(port, n) for n in FOUR])
            return received, code, details, record

    received, code, details, record = run(scenario())
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"{STRAY_LIMIT + 1} stray messages" in details and f"the {STRAY_LIMIT} in 10 s it takes" in details
    kinds = notices(received)
    assert kinds[-1] == "NOTICE_KIND_FLOOD" and len(kinds) == STRAY_LIMIT + 1
    # The flood and its strays wait for ana's next decision: its first call of the next game.
    ana = [f for f in record.faults if f.seat == 0]
    assert FaultKind.FLOOD in {f.kind for f in ana}
    assert {f.kind for f in ana} <= {FaultKind.FLOOD, FaultKind.UNKNOWN_REQUEST, FaultKind.MALFORMED}
    assert {(f.round_number, f.trick) for f in ana} == {(1, None)}
    assert len(ana) <= HELD_FAULTS + 3
    assert [f for f in record.faults if f.seat != 0] == []
    assert FaultPolicy(disqualify_after=1).add_game(FOUR, record.faults) == ["ana"]


def test_the_status_shows_each_sessions_own_faults_and_reads_a_status_written_before_them() -> None:
    session = SessionState("s-3", "ana", "raw", 0, 4, False, 12.0, {"unknown_request": 57, "flood": 1})
    status = Status(tournament="t", state="running", message="", pid=os.getpid(), updated=time.time(),
                    address="127.0.0.1:1", tls=False, games_done=0, games_planned=4, awaited=[], bots=[],
                    sessions=[session], tables=[])
    assert "flood 1, unknown_request 57" in render_status(status)
    older = status.to_dict()
    del older["sessions"][0]["faults"]
    assert Status.from_dict(older).sessions[0].faults == {}


def test_an_answer_after_its_deadline_is_told_once_and_the_second_is_a_stray() -> None:
    late: list[int] = []

    def slow(msg: pb.ConnectResponse) -> list[pb.ConnectRequest]:
        if msg.HasField("call_request") and not late:
            late.append(msg.call_request.request_id)
            return []
        if msg.HasField("event") or msg.HasField("notice"):
            if late and len(late) == 1 and msg.HasField("notice"):  # the fallback was played: answer now, twice
                late.append(0)
                answer = pb.ConnectRequest(call=pb.CallAnswer(request_id=late[0], call=1))
                return [answer, answer]
            return []
        return legal(msg)

    async def scenario() -> tuple[GameRecord, RawBot]:
        async with arena(FOUR, table=TableSettings(deadline_ms=300)) as (server, port):
            ana = RawBot(port, "ana", slow)
            record = await game(server, port, [ana, *(RawBot(port, n) for n in FOUR[1:])])
            return record, ana

    record, ana = run(scenario())
    kinds = ana.kinds()
    assert kinds[:3] == ["NOTICE_KIND_FALLBACK_PLAYED", "NOTICE_KIND_LATE_ANSWER", "NOTICE_KIND_UNKNOWN_REQUEST_ID"]
    assert [f.kind for f in record.faults if f.seat == 0][:2] == [FaultKind.LATE, FaultKind.UNKNOWN_REQUEST]


# --- bytes that are not a ConnectRequest, and messages past the size limit ---------------------------


def _raw_call(channel: grpc.aio.Channel) -> Any:
    return channel.stream_stream("/callbreak.v1.Arena/Connect", request_serializer=lambda b: b,
                                 response_deserializer=pb.ConnectResponse.FromString)()


@pytest.mark.parametrize("after_hello", [False, True])
def test_bytes_that_are_not_a_connect_request_end_the_stream_with_invalid_argument(after_hello: bool) -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str, list[tuple[FaultKind, str]]]:
        async with arena(FOUR) as (server, port):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = _raw_call(channel)
                if after_hello:
                    await call.write(hello(token("ana")).SerializeToString())
                await call.write(b"\xff\xff\xff\xff not protobuf")
                received, code, details = await read_to_end(call)
            await asyncio.sleep(0.1)
            held = HeldFaults()
            server.lobby.take_faults("ana", held)
            return received, code, details, held.take()

    received, code, details, faults = run(scenario())
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("the stream carried bytes that are not a ConnectRequest of callbreak.v1")
    assert "\n" not in details and not any(word in details for word in NOT_PYTHON)
    if after_hello:  # a fault of the bot, for its next decision
        assert [m.WhichOneof("kind") for m in received] == ["welcome"]
        assert faults == [(FaultKind.MALFORMED, details)]


def test_a_message_past_the_size_limit_ends_the_stream_with_resource_exhausted() -> None:
    def send(port: int) -> tuple[grpc.StatusCode, str]:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:  # the synchronous client shows the status
            big = pb.ConnectRequest(play=pb.PlayAnswer(request_id=1, card="B" * (MAX_MESSAGE_BYTES + 10)))
            call = pb_grpc.ArenaStub(channel).Connect(iter([hello(token("ana")), big]))
            with pytest.raises(grpc.RpcError):
                for _ in call:
                    pass
            return call.code(), call.details()

    async def scenario() -> tuple[grpc.StatusCode, str]:
        async with arena(FOUR) as (_, port):
            return await asyncio.to_thread(send, port)

    code, details = run(scenario())
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details


# --- a disqualified stream ends PERMISSION_DENIED, always --------------------------------------------


def test_a_disqualified_stream_ends_permission_denied_even_when_the_bot_is_still_writing() -> None:
    """A bot answers what it had in hand just as the disqualification notice comes: its library must see
    the arena's status, not its own write failing (grpc.aio reports that as INTERNAL)."""
    names = [f"bot{n}" for n in range(12)]

    async def one(server: ArenaServer, port: int, name: str) -> tuple[list[str], grpc.StatusCode, str]:
        channel, stream = await welcomed(port, name)
        server.disqualify(name, "too many faulty decisions")
        received: list[pb.ConnectResponse] = []
        try:
            while (msg := await stream.read()) is not grpc.aio.EOF:
                received.append(msg)
                if msg.HasField("notice"):
                    for n in range(30):  # answers the bot had ready, written as the stream ends
                        await stream.write(pb.ConnectRequest(play=pb.PlayAnswer(request_id=n + 1, card="AS")))
        except grpc.aio.AioRpcError:
            pass
        except asyncio.InvalidStateError:  # the status came first: the library refuses a write after it
            pass
        code, details = await stream.code(), await stream.details() or ""
        await channel.close()
        return notices(received), code, details

    async def scenario() -> list[tuple[list[str], grpc.StatusCode, str]]:
        async with arena(names) as (server, port):
            return [await one(server, port, name) for name in names]

    for kinds, code, details in run(scenario(), timeout=120):
        assert kinds == ["NOTICE_KIND_DISQUALIFIED"]
        assert code is grpc.StatusCode.PERMISSION_DENIED, details
        assert details.endswith("is disqualified: too many faulty decisions")


def test_a_stopping_arena_lets_the_streams_it_is_ending_finish_with_their_own_status() -> None:
    """A flood being ended as the tournament ends still gets RESOURCE_EXHAUSTED, and a bot welcomed while
    the arena stops gets OK at once: none is cut off with CANCELLED."""
    flooding = threading.Event()

    def flood(port: int) -> tuple[grpc.StatusCode, str]:
        def messages() -> Any:
            yield hello(token("ana"))
            for n in range(100_000):  # never quiet: its stream ends only END_WAIT_S after the flood
                if n == STRAY_LIMIT + 5:
                    flooding.set()
                yield pb.ConnectRequest(play=pb.PlayAnswer(request_id=n + 1, card="AS"))
                time.sleep(0.002)

        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:  # the synchronous client shows the status
            call = pb_grpc.ArenaStub(channel).Connect(messages())
            with contextlib.suppress(grpc.RpcError):
                for _ in call:
                    pass
            return call.code(), call.details()

    async def scenario() -> tuple[tuple[grpc.StatusCode, str], list[pb.ConnectResponse], grpc.StatusCode]:
        async with arena(FOUR) as (server, port):
            flooder = asyncio.get_running_loop().create_task(asyncio.to_thread(flood, port))
            while not flooding.is_set():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            stopping = asyncio.get_running_loop().create_task(server.stop(0.2))
            await asyncio.sleep(0.1)
            channel, stream = await welcomed(port, "bo")  # welcomed as the arena stops
            received, late_code, _ = await read_to_end(stream)
            await channel.close()
            await stopping
            return await flooder, received, late_code

    (code, details), received, late_code = run(scenario())
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED, details
    assert late_code is grpc.StatusCode.OK and received == []


# --- protocol fuzzing --------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_short_fuzzing_run_against_a_whole_tournament(tmp_path: Path) -> None:
    # Deal sets enough that the tournament outlasts the hostile budget (the games go as fast as the hostile seats
    # are answered, which varies with the machine).
    result = fuzz(tmp_path, 2500, workers=3, seed=5, deal_sets=15)
    assert result.problems == [], result.report()
    assert result.crashes == 0 and result.arena_exit == 0, result.report()
    assert result.total >= 2500
    assert result.games_planned > 0 and result.games_recorded == result.games_planned
    assert result.honest_games > 0 and result.honest_faults == []
    assert result.hostile_faults["flood"] > 0 and result.hostile_faults["unknown_request"] > 0
    assert result.session_faults  # the live status showed the hostile sessions' faults
    assert result.statuses["RESOURCE_EXHAUSTED"] > 0
    assert not set(result.statuses) & {"UNKNOWN", "INTERNAL"}
    assert 1 <= result.log_lines <= result.seconds + 2
    assert result.verify[0] == 0, result.verify


def test_a_stream_that_never_says_hello_is_ended_with_deadline_exceeded() -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str, int]:
        async with arena(FOUR, hello_timeout_s=0.5) as (server, port), \
                grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stream = pb_grpc.ArenaStub(channel).Connect(timeout=10)
            received, code, detail = await read_to_end(stream)  # opened, and never written to
            return received, code, detail, len(server.lobby.all_live())

    received, code, detail, live = run(scenario())
    assert received == [] and live == 0
    assert code is grpc.StatusCode.DEADLINE_EXCEEDED
    assert detail == "no Hello within 0.5 s of opening the stream: send Hello first"
