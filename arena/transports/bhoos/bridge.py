"""The bridge into a Bhoos bot's sandbox: it starts the bot, and carries the arena's HTTP connections to it.

A bot of the Bhoos contest listens on a fixed TCP port (7000), often on 127.0.0.1 only, so the arena
runs each instance in a network namespace of its own, where nothing outside can reach that port. This
bridge runs inside the same sandbox, as the instance's first process:

    python -I bridge.py FD PORT -- COMMAND [ARGUMENT ...]

It starts ``COMMAND`` (its standard output goes to the bridge's standard error, the bot's log), accepts
connections on the listening Unix socket it inherits as descriptor ``FD`` (the arena made it, in a
folder of its own that the sandbox does not show, and connects to it from outside; the bot's process
does not inherit it), and for each connection it accepts opens one to ``127.0.0.1:PORT`` (or ``[::1]:PORT``
for a bot that listens on IPv6 only) and copies bytes both ways until either side closes. When nothing
listens on the port (the bot is still starting, or has died) it answers ``502`` with the header
:data:`BRIDGE_HEADER`, so the arena can tell the bridge's answer from the bot's. When the bot's process
ends, the bridge ends with the same exit status, and with it the sandbox and every process the bot
started.

Only the standard library: the file runs by its path, with ``-I``, whatever is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["BRIDGE_HEADER", "SOCKET_NAME", "main"]

SOCKET_NAME = "http.sock"
"""The name of the bridge's socket in the arena's own folder for the instance."""
BRIDGE_HEADER = "X-Callbreak-Bridge"
"""The header of the bridge's own answers (nothing listens on the bot's port)."""
_CHUNK = 64 * 1024
_LOOPBACK = ("127.0.0.1", "::1")


def _not_listening(port: int) -> bytes:
    text = f"nothing listens on port {port} in the sandbox (the bot has not started yet, or has ended)".encode()
    return (f"HTTP/1.1 502 Bad Gateway\r\n{BRIDGE_HEADER}: not-listening\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(text)}\r\nConnection: close\r\n\r\n").encode() + text


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()


async def _carry(port: int, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
    """One connection from the arena, carried to the bot's port and back."""
    bot: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    for host in _LOOPBACK:
        try:
            bot = await asyncio.open_connection(host, port)
            break
        except OSError:
            continue
    if bot is None:
        with contextlib.suppress(OSError):
            client_writer.write(_not_listening(port))
            await client_writer.drain()
        client_writer.close()
        return
    bot_reader, bot_writer = bot
    # The arena closes its side only once it has the whole response, or has stopped waiting for it;
    # the bot closes its side after its response (the arena asks for Connection: close). Either way the
    # exchange is over: both connections are closed (what was written is sent first).
    pumps = {asyncio.ensure_future(_pump(client_reader, bot_writer)),
             asyncio.ensure_future(_pump(bot_reader, client_writer))}
    _, pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for writer in (bot_writer, client_writer):
        writer.close()


async def _run(fd: int, port: int, command: Sequence[str]) -> int:
    listener = socket.socket(fileno=fd)
    listener.set_inheritable(False)  # the arena's to connect to, not the bot's to accept on
    try:
        bot = await asyncio.create_subprocess_exec(
            *command, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno(), stderr=sys.stderr.fileno())
    except OSError as err:
        print(f"bridge: cannot start {command[0]}: {err.strerror or err}", file=sys.stderr, flush=True)
        listener.close()
        return 127
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, bot.terminate)
    server = await asyncio.start_unix_server(lambda r, w: _carry(port, r, w), sock=listener)
    status = await bot.wait()
    server.close()
    print(f"bridge: the bot's process ended with exit status {status}", file=sys.stderr, flush=True)
    return status if status >= 0 else 128 - status


def main(argv: Sequence[str]) -> int:
    """``FD PORT -- COMMAND...``: runs the bot and the bridge until the bot ends; its exit status."""
    if len(argv) < 4 or argv[2] != "--" or not argv[0].isdigit() or not argv[1].isdigit():
        print("usage: bridge.py FD PORT -- COMMAND [ARGUMENT ...]", file=sys.stderr)
        return 2
    return asyncio.run(_run(int(argv[0]), int(argv[1]), argv[3:]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
