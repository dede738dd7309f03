"""Seats survive their bot's connection: the reconnect grace, stalls and hung bots, over real gRPC (and
what a seat sends to the bot's new stream, checked on sessions without a network)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from arena.core.dealing import seeded_deals
from arena.core.faults import FaultKind
from arena.core.game import Game
from arena.core.rules import Rules
from arena.players.base import CallMade, Decision, DecisionKind, GameStart, TableEvent
from arena.players.table import TableSettings
from arena.records.format import GameRecord
from arena.transports.grpc.lobby import Lobby
from arena.transports.grpc.remote import RemotePlayer
from arena.transports.grpc.session import Session
from arena.transports.grpc.wire import rules_to_proto
from protocol import callbreak_pb2 as pb
from tests.conftest import Bots, arena, check_record, run
from tests.helpers.seating import seat_and_play

NAMES = ["s0", "s1", "s2", "s3"]
ONE_ROUND = Rules.profile("nepali", rounds=1)


def play_one(bots: Bots, seat_args: list[str], *, grace: float, events: bool = False,
             deadline_ms: int = 3000) -> GameRecord:
    async def scenario() -> GameRecord:
        async with arena(NAMES, ONE_ROUND, table=TableSettings(deadline_ms=deadline_ms),
                         reconnect_grace_s=grace) as (server, port):
            for seat, name in enumerate(NAMES):
                mode, *extra = seat_args if seat == 2 else ["good"]
                bots.fake(mode, port, name, *extra, *(["--events"] if events and seat == 2 else []))
            return await seat_and_play(server, NAMES, seeded_deals(3, 1), timeout=20)

    record = run(scenario())
    check_record(record, ONE_ROUND)
    return record


def test_a_bot_that_drops_mid_game_and_returns_within_the_grace_loses_nothing(bots: Bots) -> None:
    record = play_one(bots, ["drop", "--at", "5", "--sleep", "0.5"], grace=5.0)
    assert record.faults == []
    assert sum(f[2] for f in record.fallbacks) == 0  # no decision of seat 2 was made by the fallback
    dropper = bots.processes[2]
    lines = dropper.lines()
    assert [line for line in lines if "dropped" in line] == [{"dropped": True}]
    assert sum(1 for line in lines if "welcome" in line) == 2  # a new session after the drop
    requests = dropper.requests()
    fifth, sixth = requests[4], requests[5]
    # The open request came again on the new stream: the same decision, a new id, the full view.
    assert sixth["hand"] == fifth["hand"] and sixth["legal"] == fifth["legal"]
    assert (fifth["id"], sixth["id"]) == (5, 1)  # request ids count per session
    # What is left of the deadline: the request was open a moment on the old stream.
    assert fifth["deadline_ms"] - 1000 < sixth["deadline_ms"] <= fifth["deadline_ms"]


def test_a_bot_that_returns_after_the_grace_is_played_by_fallback_to_the_end_of_the_game(bots: Bots) -> None:
    record = play_one(bots, ["drop", "--at", "5", "--sleep", "3"], grace=0.5)
    [fault] = record.faults
    assert fault.seat == 2 and fault.kind is FaultKind.DISCONNECT
    assert "did not come back within 0.5 s" in fault.detail
    assert record.fallbacks[0][2] == 14 - 4  # its call and first three cards were its own


def test_a_bot_that_follows_events_gets_the_game_so_far_after_a_reconnect(bots: Bots) -> None:
    record = play_one(bots, ["drop", "--at", "5", "--sleep", "0.3"], grace=5.0, events=True)
    assert record.faults == []
    lines = bots.processes[2].lines()
    again = next(i for i, line in enumerate(lines) if "dropped" in line)
    events_before = [line["event"] for line in lines[:again] if "event" in line]
    after = [line["event"] for line in lines[again:] if "event" in line]
    # The new stream replays what the old one had seen, from the GameStart on, then goes on.
    assert after[: len(events_before)] == events_before
    assert after[0] == "game_start" and after[-1] == "game_end"
    assert after.count("game_start") == 1


def test_the_welcome_states_the_reconnect_grace(bots: Bots, tmp_path: Path) -> None:
    play_one(bots, ["good"], grace=2.5)
    [welcome] = [line for line in bots.processes[2].lines() if "welcome" in line]
    assert welcome["grace_ms"] == 2500


def test_a_bot_that_drops_at_every_request_cannot_hold_its_table(bots: Bots) -> None:
    """It comes back at once each time, but the grace runs from its first drop: the seat is given up."""
    began = time.monotonic()
    record = play_one(bots, ["flap", "--sleep", "0.05"], grace=2.0, deadline_ms=1000)
    assert time.monotonic() - began < 15
    [fault] = record.faults
    assert fault.seat == 2 and fault.kind in (FaultKind.DISCONNECT, FaultKind.LATE)
    assert record.fallbacks[0][2] == 14  # its very first decision was never answered


def test_a_bot_that_comes_back_without_asking_for_events_is_sent_none() -> None:
    """Events go to the sessions that asked for them: the seat's events stop when its bot comes back
    on a stream whose Hello asked for none (and the open request follows it there)."""

    async def scenario() -> tuple[list[str], list[str]]:
        lobby = Lobby()
        sent: dict[str, list[str]] = {"s-1": [], "s-2": []}

        def session(session_id: str, events: bool) -> Session:
            async def write(msg: pb.ConnectResponse | bytes) -> None:
                parsed = pb.ConnectResponse.FromString(msg) if isinstance(msg, bytes) else msg
                sent[session_id].append(parsed.WhichOneof("kind"))

            made = Session(session_id, "s2", write, rules_msg, wants_events=events, on_close=lobby.remove)
            made.start()
            lobby.add(made)
            return made

        rules_msg = rules_to_proto(ONE_ROUND)
        first = session("s-1", events=True)
        assert lobby.try_claim("s2") is first
        player = RemotePlayer(first, "s2", lobby=lobby, grace_s=5.0)
        game = Game(ONE_ROUND, seeded_deals(3, 1))
        await player.notify(TableEvent("t1", "g1", 2, GameStart(tuple(NAMES), ONE_ROUND, 1)))
        await asyncio.sleep(0.01)  # written
        first.close("the bot dropped its stream")
        again = session("s-2", events=False)
        decision = Decision(DecisionKind.CALL, "t1", "g1", 2, game.view(2, 3000), tuple(NAMES), 3000, 0)
        asking = asyncio.create_task(player.decide(decision))
        while "call_request" not in sent["s-2"]:
            await asyncio.sleep(0.01)
        again.receive(pb.ConnectRequest(call=pb.CallAnswer(request_id=1, call=3)))
        assert (await asking)[0] == 3
        await player.notify(TableEvent("t1", "g1", 2, CallMade(2, 3)))
        await asyncio.sleep(0.01)
        again.close("test over")
        return sent["s-1"], sent["s-2"]

    first, again = run(scenario())
    assert first == ["event"]
    assert again == ["call_request"]  # neither the game so far nor the new call: it asked for no events
