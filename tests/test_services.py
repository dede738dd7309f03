"""A run cancelled while its gRPC server starts or stops leaves nothing listening (as when a ladder is stopped
just as a block with a remote entrant begins or ends). Real servers, probed over a real socket."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path
from typing import Any

import pytest
from grpc_health.v1 import health

from arena.core.rules import Rules
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.transports.grpc.server import ArenaServer, ServerSettings
from arena.transports.grpc.tokens import new_token
from tests.conftest import free_port
from tests.helpers.runs import tournament_text


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def test_a_run_cancelled_while_its_server_starts_leaves_no_server_listening(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    text = tournament_text(("r1", "r2", "r3", "away"), extra=f"\n[server]\nport = {port}\n").replace(
        'name = "away"\npython = "sample_bots.random_bot:RandomBot"',
        f'name = "away"\nremote = true\ntoken = "{new_token()}"')
    assert "remote = true" in text  # a bot that never connects: the server is what the run starts
    serving = asyncio.Event()
    original = health.aio.HealthServicer.set

    async def slow_set(self: Any, *args: Any) -> None:  # the server listens, and its start is not over yet
        serving.set()
        await asyncio.sleep(30)
        await original(self, *args)

    monkeypatch.setattr(health.aio.HealthServicer, "set", slow_set)

    async def cancelled() -> tuple[bool, bool]:
        running = asyncio.ensure_future(Tournament(parse_config(text), tmp_path / "results").run())
        await serving.wait()
        before = _listening(port)
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        return before, _listening(port)  # while the loop still runs: nothing but a stop closes the port

    assert asyncio.run(asyncio.wait_for(cancelled(), 20)) == (True, False)


def test_a_stop_cancelled_on_its_way_still_stops_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    ending = asyncio.Event()

    async def slow_shutdown(self: Any) -> None:  # the stop has begun, the server still listens
        ending.set()
        await asyncio.sleep(30)

    monkeypatch.setattr(health.aio.HealthServicer, "enter_graceful_shutdown", slow_shutdown)

    async def cancelled() -> tuple[bool, bool]:
        server = ArenaServer(ServerSettings(rules=Rules.profile(), tokens={}))
        port = await server.start("127.0.0.1:0")
        stopping = asyncio.ensure_future(server.stop(0.5))
        await ending.wait()
        before = _listening(port)
        stopping.cancel()  # as a second cancellation of a run already ending does
        with contextlib.suppress(asyncio.CancelledError):
            await stopping
        return before, _listening(port)

    assert asyncio.run(asyncio.wait_for(cancelled(), 20)) == (True, False)
