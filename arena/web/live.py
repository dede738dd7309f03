"""The live page's server: the board of a results folder, on a thread of its own, within :class:`PageLimits`.

The server is a small HTTP/1.0 one (one request per connection) on an event loop of its own thread,
loopback only unless asked otherwise. What clients may cost the arena is bounded (:class:`PageLimits`):
a connection is a socket and a coroutine, never a thread, so connections that send nothing hold no
thread; at most 256 are open at once, and one more is refused at once; a request must arrive whole within
seconds, however slowly it trickles, and its answer be taken within seconds; two threads make the
answers. Paths: ``/`` the page, ``/board`` the board alone (what the script fetches),
``/live.json`` the same as data; every answer carries the page's Content-Security-Policy.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import email.utils
import json
import socket
import threading
import time
import urllib.parse
from pathlib import Path

from arena.errors import ConfigError
from arena.event.tournament import check_address
from arena.rating.leaderboard import POLICY, Board, render_board, render_page

__all__ = ["LivePage", "PageLimits"]


@dataclasses.dataclass(frozen=True)
class PageLimits:
    """What clients may cost the arena's process: the page may be open to a whole class network."""

    connections: int = 256
    """Connections open at once; one more is answered 503 and closed at once."""
    head_s: float = 10.0
    """Seconds a client has to send its whole request (line and headers), however slowly it trickles."""
    answer_s: float = 10.0
    """Seconds a client has to take the whole answer."""
    head_bytes: int = 32 << 10
    """The longest request (line and headers) read; the page reads no body."""
    threads: int = 2
    """Threads that make answers (each reads the results folder); the only threads requests cost."""


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 408: "Request Timeout",
            431: "Request Header Fields Too Large", 500: "Internal Server Error", 501: "Not Implemented",
            503: "Service Unavailable"}
_HEADERS = 100
"""The most header lines a request may have (as the standard library's server)."""


def _answer(board: Board, method: str, target: str) -> tuple[int, str, bytes]:
    """The status, type and body of the answer to a request of the page (a HEAD's body is dropped later)."""
    try:
        path = urllib.parse.urlsplit(target).path
    except ValueError:
        return 400, "text/plain; charset=utf-8", b"not a path: the live page is at /\n"
    if path not in ("/", "/board", "/live.json"):
        return 404, "text/plain; charset=utf-8", b"not found: the live page is at /\n"
    try:
        snapshot = board.snapshot()
        if path == "/live.json":
            kind, text = "application/json", json.dumps(snapshot.to_dict())
        else:
            kind = "text/html; charset=utf-8"
            text = render_page(snapshot) if path == "/" else render_board(snapshot)
    except Exception as err:  # the page says it failed; the arena plays on
        return 500, "text/plain; charset=utf-8", f"the board cannot be made: {err}\n".encode()
    return 200, kind, text.encode("utf-8")


def _response(code: int, kind: str, data: bytes, body: bool = True) -> bytes:
    head = [f"HTTP/1.0 {code} {_REASONS[code]}", "Server: callbreak-arena",
            f"Date: {email.utils.formatdate(usegmt=True)}", f"Content-Type: {kind}", f"Content-Length: {len(data)}",
            "Cache-Control: no-store", f"Content-Security-Policy: {POLICY}", "X-Content-Type-Options: nosniff",
            "Referrer-Policy: no-referrer", "Connection: close"]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (data if body else b"")


def _plain(code: int, text: str) -> bytes:
    return _response(code, "text/plain; charset=utf-8", text.encode())


class _Server:
    """The page's HTTP/1.0 server: one request per connection, on an event loop of its own thread.

    A connection costs a socket and a coroutine, never a thread: one that sends nothing, or half a
    request, holds no thread while the arena waits for it, and is closed when :attr:`PageLimits.head_s`
    has passed. Answers are made by at most :attr:`PageLimits.threads` threads.
    """

    def __init__(self, board: Board, listener: socket.socket, limits: PageLimits) -> None:
        self.board = board
        self.limits = limits
        self._listener = listener
        self._loop = asyncio.new_event_loop()
        self._makers = concurrent.futures.ThreadPoolExecutor(limits.threads, thread_name_prefix="live-page-answer")
        self._open = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-page", daemon=True)

    def start(self) -> None:
        """Serves from now on, until :meth:`close`."""
        self._thread.start()
        self._ready.wait()

    def close(self) -> None:
        """Stops listening, ends the connections still open, and the threads."""
        if self._thread.is_alive() and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(5)
        self._makers.shutdown(wait=True, cancel_futures=True)
        self._listener.close()

    def _run(self) -> None:
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._ready.set()
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=self._listener, limit=self.limits.head_bytes)
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if self._open >= self.limits.connections:
            # Refused at once, in a line a browser shows; the answer fits the socket's buffer.
            writer.write(_plain(503, "the live page has too many connections open: it answers again in a few "
                                     "seconds\n"))
            writer.close()
            return
        assert task is not None
        self._open += 1
        self._tasks.add(task)
        # The answer counts as taken only once the kernel holds all of it: else a client that reads
        # nothing would keep its socket open after its coroutine ended, outside every limit.
        writer.transport.set_write_buffer_limits(high=0)
        try:
            try:
                request = await asyncio.wait_for(self._head(reader), self.limits.head_s)
            except TimeoutError:
                request = _plain(408, f"the request did not arrive whole within {self.limits.head_s:g} seconds\n")
            except ValueError:  # a line beyond the limit
                request = _plain(431, "the request is too long\n")
            if isinstance(request, tuple):
                method, target = request
                code, kind, data = await asyncio.get_running_loop().run_in_executor(
                    self._makers, _answer, self.board, method, target)
                writer.write(_response(code, kind, data, body=method == "GET"))
            else:
                writer.write(request)
            await asyncio.wait_for(writer.drain(), self.limits.answer_s)
            writer.close()
        except (OSError, EOFError, RuntimeError):  # RuntimeError: the page closing (no thread takes answers)
            pass  # a client that went away, or takes nothing, or a page closing: closed below
        except asyncio.CancelledError:  # the page closing: ended here, as asyncio's streams expect of a handler
            pass
        finally:
            if not writer.is_closing():  # whatever happened, the connection ends with its coroutine
                writer.transport.abort()
            self._open -= 1
            self._tasks.discard(task)

    async def _head(self, reader: asyncio.StreamReader) -> tuple[str, str] | bytes:
        """The method and target of the request, or the answer to a request that is not one the page serves."""
        line = await reader.readline()
        size = len(line)
        for count in range(_HEADERS + 1):  # the headers: read, and not needed
            header = await reader.readline()
            if not header:
                raise EOFError
            size += len(header)
            if size > self.limits.head_bytes or count == _HEADERS:
                raise ValueError("too long")
            if header in (b"\r\n", b"\n"):
                break
        words = line.decode("latin-1").split()
        if len(words) != 3 or not words[2].startswith("HTTP/"):
            return _plain(400, "not an HTTP request\n")
        if words[0] not in ("GET", "HEAD"):
            return _plain(501, "the live page answers GET and HEAD only\n")
        return words[0], words[1]


class LivePage:
    """The live page of a results folder, served on a thread of its own within :class:`PageLimits`."""

    def __init__(self, folder: Path, *, roster: Path | None = None, title: str = "", host: str = "127.0.0.1",
                 port: int = 0, limits: PageLimits = PageLimits()) -> None:
        self.board = Board(folder, roster, title)
        self.host = host
        self.port = port
        self.limits = limits
        self._server: _Server | None = None

    def start(self) -> str:
        """Starts serving and returns the page's address; a :class:`ConfigError` when the address cannot be
        listened on."""
        try:
            check_address(self.host, self.port)
        except ConfigError as err:
            raise ConfigError(f"the live page: {err}") from None
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            listener = socket.create_server((self.host.strip("[]"), self.port), family=family, backlog=128)
        except OSError as err:
            raise ConfigError(f"the live page: cannot listen on {self.host}:{self.port}: {err.strerror}") from None
        self.port = int(listener.getsockname()[1])
        self._server = _Server(self.board, listener, self.limits)
        self._server.start()
        return self.url

    @property
    def url(self) -> str:
        """Where the page is, as this machine reaches it."""
        host = self.host.strip("[]")
        if host in ("", "0.0.0.0"):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        return f"http://[{host}]:{self.port}/" if ":" in host else f"http://{host}:{self.port}/"

    @property
    def everywhere(self) -> bool:
        """True when the page is open to other machines (not loopback only)."""
        return self.host.strip("[]") not in ("127.0.0.1", "::1", "localhost")

    def close(self, linger: float = 0.0) -> None:
        """Stops serving, after ``linger`` seconds (so that browsers fetch the final board)."""
        if self._server is None:
            return
        if linger > 0:
            time.sleep(linger)
        self._server.close()
        self._server = None
