"""A minimal HTTP/1.1 client on asyncio streams: what a Bhoos seat needs to talk to its bot.

Why not an HTTP library: a seat sends one small JSON request at a time, to one bot, over a Unix socket
(the bridge into the bot's sandbox) or a TCP address, and must be cancellable at any moment by the
decision's deadline. That is a request line, a few headers, and a response read with ``Content-Length``,
chunked transfer coding or up to the end of the connection (``Connection: close`` on every request, so
no pooling to get wrong), about a hundred lines on :mod:`asyncio` streams, which already time out,
cancel and speak TLS. httpx over ``AsyncHTTPTransport(uds=...)`` does the same and keeps every bound
below, but its layers (httpcore, h11, anyio) cost the arena four to seven times the CPU of this client
for each request, over TCP and over the sandbox's socket alike, with a kept-alive connection too
(``benchmarks/http_client.py`` prints both, in one run); the request is made at every decision of a
Bhoos seat, so the arena keeps this one.

Everything read is bounded: a status line and headers of at most :data:`HEAD_LIMIT` bytes, a body of at
most :data:`BODY_LIMIT` (past them, :class:`TooLong`). Numbers in a response (the status, a length, a
chunk's size) are read as ASCII digits only and their length is checked before :func:`int` sees them.
A request that gets no complete HTTP response raises :class:`HttpError`, and nothing else, whatever the
server sends; the caller applies its own deadline (``asyncio.timeout``) around :func:`request`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import ssl
import urllib.parse

from arena.errors import ArenaError

__all__ = ["BODY_LIMIT", "HEAD_LIMIT", "Endpoint", "HttpError", "Response", "TooLong", "request"]

HEAD_LIMIT = 16 * 1024
"""The longest status line plus headers the client reads."""
BODY_LIMIT = 64 * 1024
"""The longest response body the client reads."""
_MAX_HEADERS = 100
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(r"[0-9a-fA-F]+")


class HttpError(ArenaError):
    """A request that got no complete HTTP response: the connection was refused, reset or cut short, or
    what came back is not HTTP or is too long. The message says which, in words."""


class TooLong(HttpError):
    """A response whose headers or body are longer than the client reads: the server answered, too much."""


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where an HTTP bot answers: a Unix socket (``unix``), or a host and port."""

    unix: str = ""
    """A Unix socket's path; when set, ``host`` and ``port`` only name the bot in the ``Host`` header."""
    host: str = "127.0.0.1"
    port: int = 80
    tls: bool = False
    prefix: str = ""
    """A path the request paths are appended to (a base URL's path), without its last ``/``."""

    @classmethod
    def from_url(cls, url: str) -> Endpoint:
        """The endpoint of a base URL such as ``http://10.0.0.5:7000``."""
        parts = urllib.parse.urlsplit(url)
        tls = parts.scheme == "https"
        host = parts.hostname or "127.0.0.1"
        return cls(host=host, port=parts.port or (443 if tls else 80), tls=tls, prefix=parts.path.rstrip("/"))

    @property
    def label(self) -> str:
        """How messages name the endpoint."""
        if self.unix:
            return f"port {self.port} in its sandbox"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}{self.prefix}"


@dataclasses.dataclass(frozen=True)
class Response:
    """A complete HTTP response."""

    status: int
    reason: str
    headers: dict[str, str]
    """Header names in lower case; a repeated header keeps its last value."""
    body: bytes


async def _connect(endpoint: Endpoint) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        if endpoint.unix:
            return await asyncio.open_unix_connection(endpoint.unix, limit=HEAD_LIMIT)
        context = ssl.create_default_context() if endpoint.tls else None
        return await asyncio.open_connection(endpoint.host, endpoint.port, ssl=context, limit=HEAD_LIMIT)
    except FileNotFoundError:
        raise HttpError("cannot connect: its socket is not there") from None
    except ssl.SSLError as err:
        raise HttpError(f"the TLS handshake failed ({err.reason or err})") from None
    except OSError as err:  # asyncio's own strerror names the address; the system's words are clearer
        raise HttpError(f"cannot connect: {os.strerror(err.errno) if err.errno else err}") from None


async def request(endpoint: Endpoint, method: str, path: str, body: bytes | None = None) -> Response:
    """Sends one request (a JSON ``body`` if given) and reads the whole response."""
    reader, writer = await _connect(endpoint)
    try:
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
        head = [f"{method} {endpoint.prefix}{path} HTTP/1.1", f"Host: {host}:{endpoint.port}",
                "User-Agent: callbreak-arena", "Accept: application/json", "Connection: close"]
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b""))
        await writer.drain()
        while True:
            response = await _read_response(reader, method)
            if not 100 <= response.status < 200:  # an interim response (100 Continue) comes before the real one
                return response
    except (OSError, asyncio.IncompleteReadError):  # reset, or cut short
        raise HttpError("the connection closed before a whole HTTP response came") from None
    finally:
        writer.close()  # not waited for: a deadline that cancels the request must not wait on the bot


async def _line(reader: asyncio.StreamReader) -> str:
    try:
        raw = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise TooLong(f"the response's headers are longer than {HEAD_LIMIT} bytes") from None
    except asyncio.IncompleteReadError as err:
        if not err.partial:
            raise HttpError("the connection closed without an HTTP response") from None
        raise
    return raw.decode("latin-1").rstrip("\r\n")


async def _read_response(reader: asyncio.StreamReader, method: str) -> Response:
    status_line = await _line(reader)
    parts = status_line.split(" ", 2)
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not _DIGITS.fullmatch(parts[1]) or len(parts[1]) != 3:
        raise HttpError(f"the answer is not HTTP (it begins {status_line[:40]!r})")
    status, reason = int(parts[1]), parts[2] if len(parts) > 2 else ""
    headers: dict[str, str] = {}
    size = len(status_line)
    while True:
        line = await _line(reader)
        size += len(line)
        if not line:
            break
        if size > HEAD_LIMIT:
            raise TooLong(f"the response's headers are longer than {HEAD_LIMIT} bytes")
        if len(headers) >= _MAX_HEADERS:
            raise TooLong(f"the response has more than {_MAX_HEADERS} headers")
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return Response(status, reason, headers, b"")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _chunked(reader)
    elif "content-length" in headers:
        text = headers["content-length"]
        if not _DIGITS.fullmatch(text):  # int() would take "+5", "1_0" and " 5", and refuse 4,301 digits
            raise HttpError(f"the response's Content-Length is not a number: {text[:40]!r}")
        length = int(text) if len(text.lstrip("0")) <= 20 else BODY_LIMIT + 1
        if length > BODY_LIMIT:
            raise TooLong(f"the response's body is longer than {BODY_LIMIT} bytes")
        body = await reader.readexactly(length)
    else:  # the body ends with the connection
        body = await reader.read(BODY_LIMIT + 1)
        while len(body) <= BODY_LIMIT:
            more = await reader.read(BODY_LIMIT + 1 - len(body))
            if not more:
                break
            body += more
        if len(body) > BODY_LIMIT:
            raise TooLong(f"the response's body is longer than {BODY_LIMIT} bytes")
    return Response(status, reason, headers, body)


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = (await _line(reader)).split(";", 1)[0].strip()
        if not _HEX.fullmatch(size_line):
            raise HttpError(f"the response's chunked body is broken (chunk size {size_line[:20]!r})")
        size = int(size_line, 16) if len(size_line.lstrip("0")) <= 16 else BODY_LIMIT + 1
        if size == 0:
            while await _line(reader):  # trailers, up to the blank line
                pass
            return bytes(body)
        if len(body) + size > BODY_LIMIT:
            raise TooLong(f"the response's body is longer than {BODY_LIMIT} bytes")
        body += await reader.readexactly(size)
        await _line(reader)  # the CRLF after the chunk
