"""What one request to a Bhoos bot costs the arena: its own HTTP client against httpx, in the same run.

A Bhoos seat makes one small JSON request per decision, over TCP or over the unix socket of the sandbox's
bridge. The bot's side is a minimal HTTP server in a process of its own (so only the client's work is in
the arena's CPU time); each client sends the same 1.5 kB body and reads the same small answer. Printed:
wall time and the arena process's CPU per request, the best of three repetitions, for

- the arena's client (``arena.transports.bhoos.httpclient``: a connection per request, ``Connection: close``),
- httpx with a connection per request (``Connection: close``, as the arena's client sends; one client),
- httpx with one kept-alive connection (the cheapest httpx can be).

httpx is a development dependency, used here only. The figures are why the arena keeps its own client
(the module's docstring says so).

    python benchmarks/http_client.py [--requests 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.transports.bhoos.httpclient import Endpoint, request  # noqa: E402

SERVER = r"""
import asyncio, sys
BODY = b'{"value": 3}'
async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length, close = 0, False
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                close = close or line.lower() == b"connection: close"
            await reader.readexactly(length)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n"
                         % (len(BODY), b"Connection: close\r\n" if close else b"") + BODY)
            await writer.drain()
            if close:
                break
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    writer.close()
async def main():
    tcp = await asyncio.start_server(handle, "127.0.0.1", 0)
    await asyncio.start_unix_server(handle, sys.argv[1])
    print(tcp.sockets[0].getsockname()[1], flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""
PAYLOAD = b'{"x":' + b"1" * 1500 + b"}"
ANSWER = b'{"value": 3}'

Send = Callable[[], Awaitable[bytes]]


async def measure(send: Send, requests: int) -> tuple[float, float]:
    """(wall µs, CPU µs) per request, the best of three repetitions after a warm-up."""
    for _ in range(50):
        await send()
    best: list[tuple[float, float]] = []
    for _ in range(3):
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(requests):
            assert await send() == ANSWER
        best.append(((time.perf_counter() - wall) / requests * 1e6, (time.process_time() - cpu) / requests * 1e6))
    return min(best, key=lambda pair: pair[1])


async def run(port: int, unix: str, requests: int) -> None:
    headers = {"Connection": "close", "Content-Type": "application/json"}
    for where, endpoint, base, transport in (
        ("tcp", Endpoint(port=port), f"http://127.0.0.1:{port}", {}),
        ("unix", Endpoint(unix=unix, port=7000), "http://bot:7000", {"uds": unix}),
    ):
        async def ours(endpoint: Endpoint = endpoint) -> bytes:
            return (await request(endpoint, "POST", "/bid", PAYLOAD)).body

        async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(**transport)) as kept:
            async def fresh(kept: httpx.AsyncClient = kept, base: str = base) -> bytes:
                return (await kept.post(f"{base}/bid", content=PAYLOAD, headers=headers)).content

            async def pooled(kept: httpx.AsyncClient = kept, base: str = base) -> bytes:
                return (await kept.post(f"{base}/bid", content=PAYLOAD)).content

            for name, send in (("arena's client", ours), ("httpx, a connection per request", fresh),
                               ("httpx, one kept-alive connection", pooled)):
                wall, cpu = await measure(send, requests)
                print(f"{where:4}  {name:34}  {wall:7.0f} µs wall  {cpu:7.0f} µs arena CPU per request")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per repetition (default 2000)")
    args = parser.parse_args()
    unix = str(Path(tempfile.mkdtemp()) / "bot.sock")
    server = subprocess.Popen([sys.executable, "-c", SERVER, unix], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(f"httpx {httpx.__version__}, Python {sys.version.split()[0]}; the bot's server in another process")
        asyncio.run(run(port, unix, args.requests))
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
