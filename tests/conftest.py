"""Shared fixtures of the gRPC tests: arenas on port 0 and bot subprocesses that are always killed.

Async code runs under ``asyncio.run`` inside plain tests (see :func:`run`), with a timeout, so a
bug can fail a test but never hang the suite; every test also has pytest-timeout's limit (pyproject.toml),
for a hang outside the timed coroutine. Every bot process writes its stdout and stderr to files in the
test's ``tmp_path``; the ``bots`` fixture kills whatever is still running at teardown.

gRPC's asyncio layer is started here once, from the main thread, and kept for the whole session. Otherwise
it is stopped and started again at the end of every ``asyncio.run`` that used it, and that stop joins its
polling thread, which waits forever while an operation is left on its queue (a hang seen once, after a
server left running by a cancelled start: tests/test_services.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from grpc.experimental.aio import init_grpc_aio

from arena.core.rules import Rules
from arena.players.table import TableSettings
from arena.records.format import GameRecord
from arena.transports.grpc.server import ArenaServer, ServerSettings
from arena.transports.grpc.tokens import token_sha256
from protocol import callbreak_pb2 as pb
from protocol import callbreak_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent

# A suite started in the background (`make test &`) inherits Ctrl-C ignored, and so would every process it starts,
# where the tests of Ctrl-C send one: the processes it starts get Ctrl-C's default back (a handler is reset at exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
HEURISTIC_BOT = ROOT / "sample_bots" / "heuristic_bot.py"
FAKE_BOTS = ROOT / "tests" / "fake_bots.py"

_T = TypeVar("_T")

init_grpc_aio()


def run(coro: Coroutine[Any, Any, _T], timeout: float = 60.0) -> _T:
    """Runs a coroutine on a fresh event loop, failing (not hanging) after ``timeout`` seconds."""

    async def bounded() -> _T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def token(name: str) -> str:
    """The token the tests give the bot ``name``."""
    return f"token-{name}"


def tokens(*names: str) -> dict[str, str]:
    """The SHA-256 digest of each token -> bot name, for ``names`` (what :class:`ServerSettings` holds)."""
    return {token_sha256(token(name)): name for name in names}


class BotProcess:
    """A bot subprocess with its output in files."""

    def __init__(
        self, name: str, args: Sequence[str], out: Path, err: Path, env: dict[str, str] | None, cwd: Path = ROOT,
    ) -> None:
        self.name = name
        self.args = list(args)
        self.out_path = out
        self.err_path = err
        with out.open("wb") as stdout, err.open("wb") as stderr:
            self.popen = subprocess.Popen(self.args, cwd=cwd, stdout=stdout, stderr=stderr, env=env)

    def wait(self, timeout: float = 10.0) -> int:
        """The exit status, waiting up to ``timeout`` seconds for the process to end."""
        return self.popen.wait(timeout)

    async def wait_async(self, timeout: float = 10.0) -> int:
        """:meth:`wait` without blocking the event loop."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.popen.poll() is None:
            if loop.time() > deadline:
                raise TimeoutError(f"{self.name} still running after {timeout} s")
            await asyncio.sleep(0.02)
        return self.popen.returncode

    async def wait_for_line(self, key: str, value: object, timeout: float = 10.0) -> None:
        """Waits until the bot has printed a JSON line whose ``key`` is ``value``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not any(line.get(key) == value for line in self.lines()):
            if loop.time() > deadline:
                raise TimeoutError(f"{self.name} printed no line with {key}={value!r} in {timeout} s")
            await asyncio.sleep(0.02)

    def kill(self) -> None:
        """Kills the process (if it still runs) and reaps it."""
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(10)

    def stdout(self) -> str:
        return self.out_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def lines(self) -> list[dict[str, Any]]:
        """The JSON lines the bot printed (fake bots print one per message)."""
        return [json.loads(line) for line in self.stdout().splitlines() if line.startswith("{")]

    def notices(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if "notice" in line]

    def requests(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if "request" in line]


class Bots:
    """Starts bot subprocesses for one test and kills them all at the end."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.processes: list[BotProcess] = []
        self.env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")

    def start(
        self, name: str, args: Sequence[str], env: dict[str, str] | None = None, cwd: Path = ROOT,
    ) -> BotProcess:
        """Starts ``python args...`` (from the repository root unless ``cwd`` says otherwise)."""
        n = len(self.processes)
        proc = BotProcess(
            name, [sys.executable, *args], self.directory / f"bot{n}-{name}.out",
            self.directory / f"bot{n}-{name}.err", self.env if env is None else env, cwd,
        )
        self.processes.append(proc)
        return proc

    def random(self, port: int, name: str, *extra: str, seed: int = 0) -> BotProcess:
        """``sample_bots/random_bot.py`` for the bot ``name``."""
        return self.start(name, [str(RANDOM_BOT), "--arena", f"127.0.0.1:{port}", "--token", token(name),
                                 "--seed", str(seed), *extra])

    def heuristic(self, port: int, name: str, *extra: str, seed: int = 0) -> BotProcess:
        """``sample_bots/heuristic_bot.py`` for the bot ``name``."""
        return self.start(name, [str(HEURISTIC_BOT), "--arena", f"127.0.0.1:{port}", "--token", token(name),
                                 "--seed", str(seed), *extra])

    def fake(self, mode: str, port: int, name: str, *extra: str) -> BotProcess:
        """A bot of ``tests/fake_bots.py`` in ``mode``."""
        return self.start(name, [str(FAKE_BOTS), mode, "--arena", f"127.0.0.1:{port}", "--token", token(name),
                                 "--name", name, *extra])

    def close(self) -> None:
        for proc in self.processes:
            proc.kill()


@pytest.fixture
def bots(tmp_path: Path) -> Iterator[Bots]:
    """Bot subprocesses, killed at teardown whatever happened."""
    pool = Bots(tmp_path)
    try:
        yield pool
    finally:
        pool.close()


@contextlib.asynccontextmanager
async def arena(
    names: Sequence[str], rules: Rules | None = None, *, deadline_ms: int = 5000, **settings: Any
) -> AsyncIterator[tuple[ArenaServer, int]]:
    """A running arena on a free port that knows the bots ``names``; stopped on exit.

    ``settings`` go to :class:`ServerSettings`; ``table`` may replace the default table settings
    (a generous deadline, so a loaded test machine never makes a good bot late). The reconnect
    grace is 1 s unless given, so a test of a bot that never comes back does not wait long.
    """
    table = settings.pop("table", TableSettings(deadline_ms=deadline_ms))
    settings.setdefault("reconnect_grace_s", 1.0)
    server = ArenaServer(ServerSettings(rules=rules or Rules.profile(), tokens=tokens(*names), table=table,
                                        **settings))
    port = await server.start("127.0.0.1:0")
    try:
        yield server, port
    finally:
        await server.stop(0.5)


async def wait_connected(server: ArenaServer, names: Sequence[str], timeout: float = 15.0) -> None:
    """Waits until each bot of ``names`` has a session with a free table."""
    for name in names:
        await server.lobby.release(await server.lobby.claim(name, timeout))


def free_port() -> int:
    """A port nothing listens on (it was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def handshake(port: int, first: pb.ConnectRequest) -> tuple[list[pb.ConnectResponse], grpc.StatusCode, str]:
    """Sends one message on a fresh stream; returns what came back and the final status."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stream = pb_grpc.ArenaStub(channel).Connect(timeout=5)
        await stream.write(first)
        received = []
        try:
            while (msg := await stream.read()) is not grpc.aio.EOF:
                received.append(msg)
            return received, await stream.code(), await stream.details()
        except grpc.aio.AioRpcError as err:
            return received, err.code(), err.details() or ""


def hello(token: str = "", version: int = 1, name: str = "") -> pb.ConnectRequest:
    """A Hello with ``token``, speaking protocol ``version``, naming the bot ``name`` (none by default)."""
    return pb.ConnectRequest(hello=pb.Hello(bot_name=name, token=token, protocol_version=version))


def check_record(record: GameRecord, rules: Rules) -> None:
    """The invariants of any finished game record."""
    assert len(record.rounds) == rules.rounds or (rules.exact8_wins and record.rounds)
    assert [r.round_number for r in record.rounds] == list(range(1, len(record.rounds) + 1))
    running = [0, 0, 0, 0]
    for result in record.rounds:
        assert len(result.tricks) == 13
        played = [card for trick in result.tricks for card in trick.cards]
        assert len(set(played)) == 52
        assert sum(result.tricks_won) == 13
        assert all(rules.min_call <= c <= rules.max_call for c in result.calls)
        running = [t + s for t, s in zip(running, result.scores, strict=True)]
        assert list(result.totals) == running
    assert list(record.totals) == running
    for seat in range(4):
        better = sum(1 for other in range(4) if record.totals[other] > record.totals[seat])
        if not rules.exact8_wins:
            assert record.places[seat] == better + 1
    assert sorted(record.places)[0] == 1


def without_timings(record: GameRecord) -> dict[str, object]:
    """The record as data, less what depends on the clock."""
    data = record.to_dict()
    data.pop("timings")
    return data


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    """A local Ray (2 CPUs) for a test module, started the way the arena starts one (tried again if a busy
    machine makes it miss its start-up time) and stopped after the module, so it does not idle beside the others."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'callbreak-arena[ray]')")
    from arena.event.play.backends import start_local_ray
    start_local_ray(2)
    try:
        yield
    finally:
        ray.shutdown()

