"""End to end over real gRPC: the arena on port 0, sample bots as subprocesses, whole games."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.core.dealing import seeded_deals
from arena.core.faults import FaultKind
from arena.core.rules import PROFILES, Rules
from arena.players.local import LocalPlayer
from arena.players.table import TableSettings, play_game
from arena.records.format import GameRecord
from arena.transports.grpc.server import ArenaServer
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc
from sample_bots.random_bot import RandomBot
from tests.conftest import Bots, arena, check_record, handshake, hello, run, token, wait_connected, without_timings
from tests.helpers.seating import seat_and_play

FOUR = ["ana", "bo", "cy", "di"]


def test_a_full_game_of_four_random_bots(bots: Bots) -> None:
    async def scenario() -> GameRecord:
        async with arena(FOUR) as (server, port):
            for seed, name in enumerate(FOUR):
                bots.random(port, name, seed=seed)
            return await seat_and_play(server, FOUR, seeded_deals(7, 1), game_id="g7", timeout=20)

    record = run(scenario())
    assert record.faults == []
    assert record.seats == tuple(FOUR)
    assert record.game == "g7"
    check_record(record, Rules.profile())
    assert len(record.rounds) == 5
    assert [sum(r.scores[seat] for r in record.rounds) for seat in range(4)] == list(record.totals)
    assert record.decisions == [5 * 14] * 4
    # Stopping the arena ends the tournament: the streams close with OK and every bot exits 0.
    for proc in bots.processes:
        assert proc.wait(10) == 0, proc.stderr()


def test_heuristic_and_random_bots_share_a_table(bots: Bots) -> None:
    names = ["heur1", "rand1", "heur2", "rand2"]

    async def scenario() -> GameRecord:
        async with arena(names) as (server, port):
            bots.heuristic(port, "heur1", seed=1)
            bots.random(port, "rand1", seed=1)
            bots.heuristic(port, "heur2", seed=2)
            bots.random(port, "rand2", seed=2)
            return await seat_and_play(server, names, seeded_deals(3, 1), timeout=20)

    record = run(scenario())
    assert record.faults == []
    check_record(record, Rules.profile())


@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_profile_plays_a_game(bots: Bots, profile: str) -> None:
    rules = Rules.profile(profile)

    async def scenario() -> tuple[GameRecord, list[str]]:
        async with arena(FOUR, rules) as (server, port):
            procs = [bots.fake("good", port, name) for name in FOUR[:1]]
            for seed, name in enumerate(FOUR[1:], 1):
                bots.random(port, name, seed=seed)
            record = await seat_and_play(server, FOUR, seeded_deals(11, 1), timeout=20)
        return record, [line["profile"] for line in procs[0].lines() if "welcome" in line]

    record, welcomed = run(scenario())
    for proc in bots.processes:
        assert proc.wait(10) == 0, proc.stderr()
    assert welcomed == [profile]  # the Welcome carries the rules in force
    assert record.faults == []
    assert record.rules == rules
    check_record(record, rules)
    assert all(min(r.calls) >= rules.min_call and max(r.calls) <= rules.max_call for r in record.rounds)


def test_the_same_seed_gives_the_same_record_in_process_and_over_grpc(bots: Bots) -> None:
    async def scenario() -> list[GameRecord]:
        async with arena(FOUR) as (server, port):
            for seed, name in enumerate(FOUR):
                bots.random(port, name, seed=seed)
            return [await seat_and_play(server, FOUR, seeded_deals(5, 2), game_id="g2", game_number=2, timeout=20)
                    for _ in range(2)]

    first, second = run(scenario())
    local = asyncio.run(play_game(
        Rules.profile(), [LocalPlayer(RandomBot(seed), name) for seed, name in enumerate(FOUR)],
        seeded_deals(5, 2), game_id="g2", game_number=2,
    ))
    assert first.faults == []
    assert without_timings(first) == without_timings(second) == without_timings(local)
    assert first.to_dict()["timings"] != {}  # the timings exist; they are only left out of the comparison


def test_one_session_serves_two_tables_at_once(bots: Bots) -> None:
    """Each bot holds one stream and sits at two tables at the same time (max_tables=2)."""

    async def scenario() -> tuple[list[GameRecord], int]:
        async with arena(FOUR, max_tables=2) as (server, port):
            for seed, name in enumerate(FOUR):
                bots.random(port, name, seed=seed)
            await wait_connected(server, FOUR)
            most = 0

            async def watch() -> None:
                nonlocal most
                while True:
                    most = max([most] + [s.tables for name in FOUR for s in server.lobby.live(name)])
                    await asyncio.sleep(0.005)

            watcher = asyncio.create_task(watch())
            records = await asyncio.gather(*(
                seat_and_play(server, FOUR, seeded_deals(9, 1), table_id=table, game_id="g1", timeout=20)
                for table in ("t1", "t2")
            ))
            watcher.cancel()
            assert all(len(server.lobby.live(name)) == 1 for name in FOUR)
            return list(records), most

    (one, two), most = run(scenario())
    assert most == 2, "the two games did not overlap"
    assert one.faults == two.faults == []
    check_record(one, Rules.profile())
    # The same deals and the same seeded bots give the same game at both tables, whatever the interleaving.
    a, b = without_timings(one), without_timings(two)
    assert (a.pop("table"), b.pop("table")) == ("t1", "t2")
    assert a == b


def test_two_tables_of_four_processes_play_concurrently(bots: Bots) -> None:
    names = [f"p{i}" for i in range(8)]

    async def scenario() -> list[GameRecord]:
        async with arena(names, max_tables=1) as (server, port):
            for seed, name in enumerate(names):
                bots.random(port, name, seed=seed)
            return list(await asyncio.gather(
                seat_and_play(server, names[:4], seeded_deals(1, 1), table_id="t1", timeout=20),
                seat_and_play(server, names[4:], seeded_deals(1, 2), table_id="t2", game_number=2, timeout=20),
            ))

    one, two = run(scenario())
    assert one.seats == tuple(names[:4]) and two.seats == tuple(names[4:])
    assert one.faults == two.faults == []
    check_record(one, Rules.profile())
    check_record(two, Rules.profile())


def test_health_and_reflection() -> None:
    async def scenario() -> tuple[list[int], list[str]]:
        async with arena(FOUR) as (_, port), grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            statuses = [
                (await health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)).status
                for service in ("", "callbreak.v1.Arena")
            ]
            call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                [reflection_pb2.ServerReflectionRequest(list_services="")], timeout=5
            )
            services = [s.name async for answer in call for s in answer.list_services_response.service]
            return statuses, services

    statuses, services = run(scenario())
    assert statuses == [health_pb2.HealthCheckResponse.SERVING] * 2
    assert "callbreak.v1.Arena" in services
    assert "grpc.health.v1.Health" in services


# --- the handshake ------------------------------------------------------------------------------


@pytest.mark.parametrize(("first", "reason", "code"), [
    pytest.param(hello("not-a-token"), "REFUSAL_REASON_BAD_TOKEN", grpc.StatusCode.UNAUTHENTICATED, id="bad-token"),
    pytest.param(hello(""), "REFUSAL_REASON_MISSING_TOKEN", grpc.StatusCode.UNAUTHENTICATED, id="missing-token"),
    pytest.param(hello(token("ana"), version=2), "REFUSAL_REASON_UNSUPPORTED_PROTOCOL",
                 grpc.StatusCode.FAILED_PRECONDITION, id="protocol-2"),
    pytest.param(hello(token("ana"), version=0), "REFUSAL_REASON_UNSUPPORTED_PROTOCOL",
                 grpc.StatusCode.FAILED_PRECONDITION, id="protocol-0"),
    pytest.param(pb.ConnectRequest(call=pb.CallAnswer(request_id=1, call=3)), None,
                 grpc.StatusCode.INVALID_ARGUMENT, id="first-not-hello"),
    pytest.param(pb.ConnectRequest(), None, grpc.StatusCode.INVALID_ARGUMENT, id="first-empty"),
])
def test_a_bad_handshake_is_refused(first: pb.ConnectRequest, reason: str | None, code: grpc.StatusCode) -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
        async with arena(FOUR) as (_, port):
            return await handshake(port, first)

    received, status, details = run(scenario())
    assert status == code
    if reason is None:
        assert received == []
        assert "Hello" in details
    else:
        assert [m.WhichOneof("kind") for m in received] == ["refusal"]
        assert pb.RefusalReason.Name(received[0].refusal.reason) == reason
        assert details == received[0].refusal.detail  # the status repeats the refusal's detail


def test_a_good_hello_is_welcomed() -> None:
    async def scenario() -> pb.ConnectResponse:
        async with arena(FOUR, max_tables=3) as (_, port), grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stream = pb_grpc.ArenaStub(channel).Connect(timeout=5)
            await stream.write(hello(token("ana")))
            welcome = await stream.read()
            await stream.done_writing()
            return welcome

    welcome = run(scenario()).welcome
    assert welcome.protocol_version == 1
    assert welcome.max_tables == 3
    assert welcome.max_retries == 3
    assert welcome.rules.profile == "nepali"
    assert welcome.session_id
    assert welcome.takes_bot_errors  # a bot may say its code failed instead of letting the deadline pass


def test_a_session_too_many_is_refused() -> None:
    async def scenario() -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
        async with arena(FOUR, max_sessions=1) as (_, port), grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            first = pb_grpc.ArenaStub(channel).Connect(timeout=5)
            await first.write(hello(token("ana")))
            assert (await first.read()).WhichOneof("kind") == "welcome"
            second = await handshake(port, hello(token("ana")))
            await first.done_writing()
            return second

    received, code, _ = run(scenario())
    assert code == grpc.StatusCode.ALREADY_EXISTS
    assert [pb.RefusalReason.Name(m.refusal.reason) for m in received] == ["REFUSAL_REASON_DUPLICATE_SESSION"]


def test_a_bot_with_a_wrong_token_exits_with_status_1(bots: Bots) -> None:
    async def scenario() -> list[int]:
        async with arena(FOUR) as (_, port):
            kit = bots.random(port, "intruder")  # its token is not one the arena knows
            raw = bots.fake("good", port, "intruder")
            return [await kit.wait_async(15), await raw.wait_async(15)]

    assert run(scenario()) == [1, 1]
    kit, raw = bots.processes
    assert "refused by the arena: REFUSAL_REASON_BAD_TOKEN" in kit.stderr()
    lines = raw.lines()
    assert [line.get("refusal") for line in lines if "refusal" in line] == ["REFUSAL_REASON_BAD_TOKEN"]
    assert lines[-1]["end"] == "UNAUTHENTICATED"


# --- sessions come and go -----------------------------------------------------------------------


def test_a_bot_restarted_between_games_is_seated_again(bots: Bots) -> None:
    async def scenario() -> list[GameRecord]:
        async with arena(FOUR) as (server, port):
            for seed, name in enumerate(FOUR):
                bots.random(port, name, seed=seed)
            first = await seat_and_play(server, FOUR, seeded_deals(2, 1), timeout=20)
            bots.processes[3].kill()
            while server.lobby.live("di"):  # the arena notices the broken stream
                await asyncio.sleep(0.01)
            bots.random(port, "di", seed=3)
            second = await seat_and_play(server, FOUR, seeded_deals(2, 2), game_number=2, timeout=20)
            return [first, second]

    first, second = run(scenario())
    assert first.faults == second.faults == []
    assert second.seats == tuple(FOUR)
    assert bots.processes[-1].wait(10) == 0  # the new process played game 2 and saw the tournament end


def test_a_failed_claim_gives_the_seats_back(bots: Bots) -> None:
    """A game that cannot start (a bot never came) must not keep the others' tables."""

    async def scenario() -> GameRecord:
        async with arena(FOUR, max_tables=1) as (server, port):
            for seed, name in enumerate(FOUR[:3]):
                bots.random(port, name, seed=seed)
            await wait_connected(server, FOUR[:3])
            with pytest.raises(TimeoutError):
                await seat_and_play(server, FOUR, seeded_deals(1, 1), timeout=0.3)
            bots.random(port, "di", seed=3)
            return await seat_and_play(server, FOUR, seeded_deals(1, 1), timeout=10)

    assert run(scenario()).faults == []


def test_a_disqualified_bot_gets_a_notice_its_stream_ends_and_it_is_refused(bots: Bots) -> None:
    async def scenario(server: ArenaServer, port: int) -> dict[str, Any]:
        cheat = bots.fake("illegal", port, "ana")
        for seed, name in enumerate(FOUR[1:], 1):
            bots.random(port, name, seed=seed)
        record = await seat_and_play(server, FOUR, seeded_deals(4, 1), timeout=20)
        server.disqualify("ana", "too many faulty decisions")
        status = await cheat.wait_async(10)
        refused = await handshake(port, hello(token("ana")))
        late = bots.fake("good", port, "ana")
        late_status = await late.wait_async(10)
        return {"record": record, "status": status, "refused": refused, "late": late, "late_status": late_status,
                "cheat": cheat}

    async def main() -> dict[str, Any]:
        async with arena(FOUR, table=TableSettings(deadline_ms=5000, max_retries=3)) as (server, port):
            result = await scenario(server, port)
            result["disqualified"] = dict(server.lobby.barred)
            return result

    result = run(main())
    record: GameRecord = result["record"]
    assert record.faults and {f.seat for f in record.faults} == {0}
    assert {f.kind for f in record.faults} <= {FaultKind.ILLEGAL_CALL, FaultKind.ILLEGAL_CARD}
    assert result["disqualified"]["ana"][1] == "ana is disqualified: too many faulty decisions"
    cheat_lines = result["cheat"].lines()
    assert [line["notice"] for line in cheat_lines if line.get("notice") == "NOTICE_KIND_DISQUALIFIED"]
    assert cheat_lines[-1]["end"] == "PERMISSION_DENIED"
    assert result["status"] == 1
    received, code, _ = result["refused"]
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert [pb.RefusalReason.Name(m.refusal.reason) for m in received] == ["REFUSAL_REASON_DISQUALIFIED"]
    late_lines = result["late"].lines()
    assert [line.get("refusal") for line in late_lines if "refusal" in line] == ["REFUSAL_REASON_DISQUALIFIED"]
    assert late_lines[-1]["end"] == "PERMISSION_DENIED"
    assert result["late_status"] == 1
