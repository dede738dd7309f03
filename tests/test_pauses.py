"""The arena's own pauses are not a bot's lateness: while its garbage collector stands the process
still, no deadline runs out (remote, in-process, stdio and Bhoos HTTP bots alike); any other stall of the arena still
counts, so the forgiveness is exactly the collector's time. And the collector is tuned for a long
event once per process.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from arena.core.cards import Card
from arena.core.dealing import seeded_deals
from arena.core.faults import PlayerFault
from arena.core.game import Game
from arena.core.rules import Rules
from arena.core.views import View
from arena.players.base import Decision, DecisionKind
from arena.players.local import LocalPlayer
from arena.players.pauses import THRESHOLDS, paused_s, settle, wait_for
from arena.transports.bhoos.httpclient import Endpoint
from arena.transports.bhoos.player import BhoosPlayer
from arena.transports.grpc.encoder import RequestEncoder
from arena.transports.grpc.session import Session
from arena.transports.stdio import StdioPlayer
from protocol import callbreak_pb2 as pb
from sample_bots.random_bot import RandomBot
from tests.conftest import ROOT, run

DEADLINE_MS = 200


def collector_pause(seconds: float) -> None:
    """A garbage collection that stands the process still for ``seconds``."""

    def slow(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            time.sleep(seconds)

    settle()  # the arena's clock of pauses comes first among the callbacks
    gc.callbacks.append(slow)
    try:
        gc.collect(0)
    finally:
        gc.callbacks.remove(slow)


def other_stall(seconds: float) -> None:
    """The arena busy with something else than its collector for ``seconds``."""
    time.sleep(seconds)


def a_call(deadline_ms: int = DEADLINE_MS) -> Decision:
    game = Game(Rules.profile(), seeded_deals(3, 1))
    return Decision(DecisionKind.CALL, "t1", "g1", 0, game.view(0, deadline_ms), ("a", "b", "c", "d"),
                    deadline_ms, 0)


def remote_answer(stall: Callable[[float], None]) -> object:
    """A remote bot's answer arrives during a 0.3 s stall of the arena that begins 50 ms after its
    request (deadline 200 ms), and is read once the deadline's alarm has had its turn."""

    async def scenario() -> object:
        async def write(msg: pb.ConnectResponse | bytes) -> None:
            pass

        session = Session("s-1", "ana", write, pb.Rules())
        session.start()
        asked = asyncio.create_task(session.request(a_call(), DEADLINE_MS, RequestEncoder(pb.Rules())))
        await asyncio.sleep(0.05)
        stall(0.3)
        for _ in range(3):  # the alarm, due 150 ms ago, runs before the answer is read
            await asyncio.sleep(0)
        session.receive(pb.ConnectRequest(call=pb.CallAnswer(request_id=1, call=2)))
        try:
            answer, _ = await asked
        finally:
            session.close("test over")
        return answer

    return run(scenario())


def test_a_collector_pause_does_not_make_a_remote_bot_late() -> None:
    before = paused_s()
    assert remote_answer(collector_pause) == 2
    assert paused_s() - before >= 0.3


def test_any_other_stall_of_the_arena_still_counts_for_a_remote_bot() -> None:
    with pytest.raises(PlayerFault, match="the deadline passed"):
        remote_answer(other_stall)


class Slow(RandomBot):
    """Answers its first call after 0.525 s."""

    def call(self, view: View) -> int:
        time.sleep(0.525)
        return super().call(view)

    def play(self, view: View) -> Card:
        return super().play(view)


def local_answer(stall: Callable[[float], None]) -> object:
    """An in-process bot answers after 0.525 s (deadline 400 ms) while the arena stood still from 50 ms
    to 350 ms: after the deadline, before the deadline and the pause."""

    async def scenario() -> object:
        player = LocalPlayer(Slow(0), "slow")
        try:
            asked = asyncio.create_task(player.decide(a_call(400)))
            await asyncio.sleep(0.05)
            stall(0.3)
            answer, _ = await asked
        finally:
            await player.close()
        return answer

    return run(scenario())


def test_a_collector_pause_does_not_make_an_in_process_bot_late() -> None:
    assert isinstance(local_answer(collector_pause), int)


def test_any_other_stall_still_counts_for_an_in_process_bot() -> None:
    with pytest.raises(PlayerFault, match="the deadline passed"):
        local_answer(other_stall)


SLOW_STDIO = (
    "import json, sys, time\n"
    "for line in sys.stdin:\n"
    "    request = json.loads(line)\n"
    "    time.sleep(0.525)\n"
    "    print(json.dumps({'call': request['legal_calls'][0]}), flush=True)\n"
)


def stdio_answer(stall: Callable[[float], None]) -> object:
    """A stdio bot answers after 0.525 s (deadline 400 ms) while the arena stood still from 50 ms to
    350 ms (its process started and warmed up first, so start-up is not part of it)."""

    async def scenario() -> object:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", SLOW_STDIO, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        player = StdioPlayer("slow", process, start_allowance_s=5.0)
        try:
            await player.decide(a_call(400))  # the first request allows for start-up
            asked = asyncio.create_task(player.decide(a_call(400)))
            await asyncio.sleep(0.05)
            stall(0.3)
            answer, _ = await asked
        finally:
            process.kill()
            await process.wait()
            await player.close()
        return answer

    return run(scenario())


def test_a_collector_pause_does_not_make_a_stdio_bot_late() -> None:
    assert stdio_answer(collector_pause) == 1


def test_any_other_stall_still_counts_for_a_stdio_bot() -> None:
    with pytest.raises(PlayerFault, match="the deadline passed"):
        stdio_answer(other_stall)


class SlowBid(BaseHTTPRequestHandler):
    """A Bhoos HTTP bot that bids 1 after 0.525 s."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(0.525)
        body = b'{"value": 1}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def bhoos_answer(stall: Callable[[float], None]) -> object:
    """A Bhoos HTTP bot answers after 0.525 s (deadline 400 ms) while the arena stood still from 50 ms
    to 350 ms."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowBid)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    async def scenario() -> object:
        player = BhoosPlayer("slow", Endpoint(host="127.0.0.1", port=server.server_address[1]))
        asked = asyncio.create_task(player.decide(a_call(400)))
        await asyncio.sleep(0.05)
        stall(0.3)
        answer, _ = await asked
        return answer

    try:
        return run(scenario())
    finally:
        server.shutdown()
        server.server_close()


def test_a_collector_pause_does_not_make_a_bhoos_bot_late() -> None:
    assert bhoos_answer(collector_pause) == 1


def test_any_other_stall_still_counts_for_a_bhoos_bot() -> None:
    with pytest.raises(PlayerFault, match="the deadline passed"):
        bhoos_answer(other_stall)


def test_the_collector_is_tuned_once_per_process() -> None:
    settle()
    settle()
    assert gc.get_threshold() == THRESHOLDS
    assert sum(1 for callback in gc.callbacks if getattr(callback, "__module__", "") == "arena.players.pauses") == 1
    assert gc.get_freeze_count() > 0


def test_the_proto_says_so() -> None:
    proto = " ".join(line.strip(" /") for line in (ROOT / "protocol" / "callbreak.proto").read_text().splitlines())
    assert "Time the arena's own process stands still for its garbage collector does not count against you" in proto


def test_wait_for_gives_the_result_or_times_out_and_stops_what_it_waited_for() -> None:
    async def scenario() -> tuple[object, bool, bool]:
        quick = await wait_for(asyncio.sleep(0.01, "done"), 1.0)
        slow = asyncio.ensure_future(asyncio.sleep(10))
        with pytest.raises(TimeoutError):
            await wait_for(slow, 0.05)
        inner = asyncio.ensure_future(asyncio.sleep(10))
        outer = asyncio.ensure_future(wait_for(inner, 5.0))
        await asyncio.sleep(0.01)
        outer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await outer
        return quick, slow.cancelled(), inner.cancelled()

    assert run(scenario()) == ("done", True, True)
