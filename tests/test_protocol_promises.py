"""What the .proto promises, held by tests over real gRPC: which ids name a game, the names and
versions recorded, card aliases, session limits, withdrawal, keepalive, deadlines and the stall rules."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc

from arena.core.dealing import seeded_deals
from arena.core.faults import PlayerFault
from arena.core.game import Game
from arena.core.rules import Rules
from arena.event.setup.config import parse_config
from arena.players.base import Decision, DecisionKind
from arena.players.local import LocalPlayer
from arena.players.table import TableSettings, play_game
from arena.transports.grpc.encoder import RequestEncoder
from arena.transports.grpc.server import ARENA_PING_S, HELLO_TIMEOUT_S, MIN_PING_S, PING_TIMEOUT_S, ServerSettings
from arena.transports.grpc.session import OUTBOX_LIMIT, WRITE_STALL_S, Session
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from sample_bots.random_bot import RandomBot
from tests.conftest import Bots, arena, free_port, handshake, hello, run, token
from tests.helpers.runs import ROOT, bot_tables, games, tournament_text, write
from tests.helpers.runs import run as run_tournament

PROTO = (ROOT / "protocol" / "callbreak.proto").read_text(encoding="utf-8")
FLAT = re.sub(r"\s*\n\s*//\s*", " ", PROTO)
"""The .proto's comments as running text (line breaks inside sentences removed)."""
FAKE_BOTS = ROOT / "tests" / "fake_bots.py"


FOUR = bot_tables(["a", "b", "c", "d"])


# --- which ids name a game ----------------------------------------------------------------------------


def test_game_id_and_table_seat_each_name_one_game_while_it_runs(tmp_path: Path) -> None:
    """All four rotations of a deal set run at once (concurrency 4): each request and event names its
    game by game_id, and a (table_id, seat) never carries two games at once. The names in the views
    are the configuration's, the versions recorded are the bots' own."""
    port = free_port()
    names = ("w", "x", "y", "z")
    text = tournament_text(names, deal_sets=1, concurrency=4, extra=f"[server]\nport = {port}\n")
    for name in names:
        text = text.replace(f'name = "{name}"\npython = "sample_bots.random_bot:RandomBot"',
                            f'name = "{name}"\nremote = true\ntoken = "t-{name}"')
    config = write(tmp_path / "t.toml", text)
    outs = []
    procs = []
    for name in names:
        out = (tmp_path / f"{name}.out").open("w", encoding="utf-8")
        outs.append(out)
        procs.append(subprocess.Popen(
            [sys.executable, str(FAKE_BOTS), "good", "--arena", f"127.0.0.1:{port}", "--token", f"t-{name}",
             "--events"], cwd=ROOT, stdout=out, stderr=subprocess.DEVNULL))
    try:
        summary = run_tournament(config, tmp_path / "out")
        for proc in procs:
            proc.wait(20)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        for out in outs:
            out.close()
    assert summary.played == 4 and summary.faults == 0
    for name in names:
        lines = [json.loads(line) for line in (tmp_path / f"{name}.out").read_text().splitlines()]
        running: dict[tuple[str, int], str] = {}
        seen_games = set()
        for line in lines:
            if "event" in line:
                key = (line["table"], line["seat"])
                if line["event"] == "game_start":
                    assert key not in running, f"{key} began a second game before {running.get(key)} ended"
                    running[key] = line["game"]
                    seen_games.add(line["game"])
                else:
                    assert running[key] == line["game"]
                    if line["event"] == "game_end":
                        del running[key]
            elif "request" in line:
                assert running[(line["table"], line["seat"])] == line["game"]
                assert set(line["names"]) == set(names)  # the organiser's names (the Hello names none)
        assert len(seen_games) == 4 and not running
    for rounds in games(tmp_path / "out").values():
        assert rounds[-1]["versions"] == ["fake"] * 4  # Hello.bot_version, recorded with every game


def test_the_proto_tells_bots_to_key_per_game_state_by_game_id() -> None:
    assert "keep your per-game state keyed by game_id" in FLAT


# --- cards, sessions, withdrawal ----------------------------------------------------------------------


class Aliases(RandomBot):
    """Answers with the card in lower case, with 10 for T, or with a suit symbol, by turns."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.turn = 0

    def play(self, view: Any) -> Any:
        card = str(super().play(view))
        self.turn += 1
        rank, suit = card[0], card[1]
        symbol = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[suit]
        return [card.lower(), f" {'10' if rank == 'T' else rank}{suit} ", f"{rank}{symbol}"][self.turn % 3]


def test_card_aliases_are_accepted_and_recorded_in_the_two_character_form() -> None:
    rules = Rules.profile("nepali", rounds=1)
    plain = asyncio.run(play_game(rules, [LocalPlayer(RandomBot(s), f"p{s}") for s in range(4)], seeded_deals(4, 1),
                                  settings=TableSettings(deadline_ms=0)))
    aliased = asyncio.run(play_game(rules, [LocalPlayer(Aliases(0), "p0"), *(LocalPlayer(RandomBot(s), f"p{s}")
                                                                               for s in (1, 2, 3))],
                                    seeded_deals(4, 1), settings=TableSettings(deadline_ms=0)))
    assert aliased.faults == []
    assert aliased.rounds == plain.rounds
    assert 'The arena also reads lower case ("th"), "10" for T ("10H") and the suit symbols' in FLAT


async def welcomed(channel: grpc.aio.Channel, name: str) -> Any:
    """A stream of bot ``name`` on ``channel``, once the arena has welcomed it."""
    stream = pb_grpc.ArenaStub(channel).Connect()
    await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token(name), protocol_version=1)))
    assert (await stream.read()).WhichOneof("kind") == "welcome"
    return stream


def test_an_arena_that_serves_its_most_sessions_refuses_with_arena_full() -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
        async with arena(["ana", "bo"], max_sessions_total=1) as (_, port), grpc.aio.insecure_channel(
            f"127.0.0.1:{port}"
        ) as channel:
            await welcomed(channel, "ana")
            return await handshake(port, hello(token("bo")))

    received, code, detail = run(scenario())
    assert [pb.RefusalReason.Name(m.refusal.reason) for m in received] == ["REFUSAL_REASON_ARENA_FULL"]
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and "try again later" in detail


def test_a_session_that_ends_frees_its_place_in_a_full_arena() -> None:
    async def scenario() -> int:
        async with arena(["ana", "bo"], max_sessions_total=1) as (server, port), grpc.aio.insecure_channel(
            f"127.0.0.1:{port}"
        ) as channel:
            (await welcomed(channel, "ana")).cancel()  # ana leaves
            for _ in range(200):
                if server.lobby.count == 0:
                    break
                await asyncio.sleep(0.01)
            second = await welcomed(channel, "bo")  # its place is free again
            count = server.lobby.count
            second.cancel()
            return count

    assert run(scenario()) == 1


def test_the_proto_states_the_session_limit_and_the_name_rule_the_arena_keeps() -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(ServerSettings)}
    assert defaults["max_sessions"] == 1 and parse_config(FOUR).sessions_per_bot == 1
    assert "A bot holds ONE live session (stream) at a time, unless the organiser allows more" in FLAT
    assert f"(at most {ARENA_PING_S + PING_TIMEOUT_S} s, see 8)" in FLAT
    assert "a non-empty bot_name must be the name of the bot the token belongs to" in FLAT
    assert "An empty bot_name is always accepted." in FLAT
    assert "compared character for character: case and spaces count" in FLAT  # tests/test_tokens.py holds it


def test_a_withdrawn_bot_is_ended_with_ok_and_refused_later(bots: Bots) -> None:
    async def scenario() -> tuple[int, tuple[list[pb.ConnectResponse], grpc.StatusCode, str]]:
        async with arena(["ana"]) as (server, port):
            proc = bots.fake("good", port, "ana")
            await server.lobby.release(await server.lobby.claim("ana", 10))
            server.withdraw("ana", "absent: never came back")
            status = await proc.wait_async(10)
            return status, await handshake(port, hello(token("ana")))

    status, (received, code, detail) = run(scenario())
    assert status == 0  # its stream ended with OK: the tournament is over for it
    assert bots.processes[0].lines()[-1]["end"] == "OK"
    assert [pb.RefusalReason.Name(m.refusal.reason) for m in received] == ["REFUSAL_REASON_WITHDRAWN"]
    assert code is grpc.StatusCode.PERMISSION_DENIED and "withdrawn from the tournament" in detail


# --- keepalive ------------------------------------------------------------------------------------------


def test_the_keepalive_numbers_of_the_proto_are_the_arenas() -> None:
    assert f"at most one every {MIN_PING_S} seconds" in FLAT
    assert f"The arena pings every connection every {ARENA_PING_S} s and closes one that does not answer within " \
           f"{PING_TIMEOUT_S} s" in FLAT


def test_the_hello_deadline_of_the_proto_is_the_arenas() -> None:
    assert f"within {HELLO_TIMEOUT_S:g} s of opening the stream" in FLAT
    assert f"no Hello within {HELLO_TIMEOUT_S:g} s of opening the stream -> DEADLINE_EXCEEDED" in re.sub(
        r"\s+", " ", FLAT)
    assert ServerSettings(rules=Rules.profile(), tokens={}).hello_timeout_s == HELLO_TIMEOUT_S


def test_a_bot_that_pings_too_often_is_cut_off_with_too_many_pings() -> None:
    async def scenario() -> tuple[grpc.StatusCode, str]:
        async with arena(["ana"]) as (_, port):
            options = [("grpc.keepalive_time_ms", 500), ("grpc.keepalive_permit_without_calls", 1),
                       ("grpc.http2.max_pings_without_data", 0)]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
                stream = pb_grpc.ArenaStub(channel).Connect()
                await stream.write(pb.ConnectRequest(hello=pb.Hello(token=token("ana"), protocol_version=1)))
                assert (await stream.read()).WhichOneof("kind") == "welcome"
                try:
                    await asyncio.wait_for(stream.read(), 20)
                except grpc.aio.AioRpcError as err:
                    return err.code(), err.details() or ""
                return grpc.StatusCode.OK, "not cut off"

    code, detail = run(scenario())
    assert code is grpc.StatusCode.UNAVAILABLE and "too many pings" in detail.lower()


# --- sessions that stop reading ---------------------------------------------------------------------


def test_a_session_whose_outbox_overflows_is_stalled_and_dropped() -> None:
    async def scenario() -> Session:
        never = asyncio.Event()

        async def blocked_write(msg: pb.ConnectResponse) -> None:
            await never.wait()  # the bot never reads: the write never completes

        closed: list[Session] = []
        session = Session("s-1", "ana", blocked_write, pb.Rules(), on_close=closed.append)
        session.start()
        for _ in range(OUTBOX_LIMIT + 2):
            session.send(pb.ConnectResponse(notice=pb.Notice(detail="x")))
        await asyncio.sleep(0)
        assert closed == [session]
        return session

    session = run(scenario())
    assert session.stalled and session.closed.is_set()
    assert session.kicked is not None and session.kicked[0] is grpc.StatusCode.UNAVAILABLE
    [(kind, detail)] = session.drain_faults()
    assert kind.value == "stalled" and "stopped reading its stream" in detail


def test_a_request_is_late_at_its_own_deadline_whatever_came_before() -> None:
    """A session watches its deadlines with one alarm: set for the first request, it still makes a
    request sent later late at that request's own deadline, not at the first one's, nor never."""

    async def scenario() -> tuple[object, float, str]:
        sent: list[bytes] = []

        async def write(msg: pb.ConnectResponse | bytes) -> None:
            sent.append(msg if isinstance(msg, bytes) else msg.SerializeToString())

        session = Session("s-1", "ana", write, pb.Rules())
        session.start()
        game = Game(Rules.profile(), seeded_deals(3, 1))
        encoder = RequestEncoder(pb.Rules())
        decision = Decision(DecisionKind.CALL, "t1", "g1", 0, game.view(0, 200), ("a", "b", "c", "d"), 200, 0)
        first = asyncio.create_task(session.request(decision, 200, encoder))
        await asyncio.sleep(0.01)
        session.receive(pb.ConnectRequest(call=pb.CallAnswer(request_id=1, call=2)))
        answer, _ = await first  # answered in time; the alarm set for it stays
        await asyncio.sleep(0.1)
        asked = time.monotonic()
        try:
            await session.request(decision, 200, encoder)
        except PlayerFault as late:
            waited, detail = time.monotonic() - asked, late.detail
        session.close("test over")
        return answer, waited, detail

    answer, waited, detail = run(scenario())
    assert answer == 2
    assert waited >= 0.2 - 0.005  # at its own deadline, not the first request's (0.1 s after it was sent)
    assert detail.startswith("no answer to request 2 within")


def test_a_write_that_waits_too_long_stalls_the_session() -> None:
    async def scenario() -> Session:
        never = asyncio.Event()

        async def blocked_write(msg: pb.ConnectResponse) -> None:
            await never.wait()

        session = Session("s-1", "ana", blocked_write, pb.Rules())
        session.start()
        session.send(pb.ConnectResponse(notice=pb.Notice(detail="x")))
        await asyncio.sleep(0.05)
        session.check_stall(time.monotonic() + WRITE_STALL_S - 1)
        assert not session.closed.is_set()  # a write may wait a while
        session.check_stall(time.monotonic() + WRITE_STALL_S + 1)
        return session

    session = run(scenario())
    assert session.stalled and "waited" in session.close_reason


def test_the_stall_rules_in_the_proto_match_the_arena() -> None:
    assert "leaves 3 requests in a row unanswered while sending nothing at all for 3 deadlines" in FLAT
    assert "the arena ends the stream with status UNAVAILABLE" in FLAT
    defaults = {f.name: f.default for f in dataclasses.fields(ServerSettings)}
    assert defaults["unresponsive_after"] == 3
    assert parse_config(FOUR).unresponsive_after == 3  # and a tournament's default is the same
