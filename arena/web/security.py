"""What every page of the web layer does to keep a hostile page or client out, written once: the security header
fields of a page's answers (:func:`page_headers`, added by :class:`Secured`), the one rule a form's ``Origin``
must keep (:func:`same_origin`), CSRF tokens (:func:`csrf_token`, :func:`csrf_ok`), the bound on a request's
body (:class:`Bodies`) and the one reader of a form (:func:`read_form`).

The header fields of every page (the live page, the spectators', the seat's, the ladder's site, and the final's
report.html it serves) differ only by what the page does:

- ``Content-Security-Policy``: nothing fetched (``default-src 'none'``), inline style, and no script but the
  page's own by its SHA-256 hash (:func:`arena.rating.pages.policy`); then ``connect-src 'self'`` for a page
  whose script asks its server for more, ``form-action 'self'`` for a page with forms (else ``'none'``),
  ``frame-ancestors 'none'`` (no other page frames it) and ``base-uri 'none'`` (no ``<base>`` moves its links);
- ``X-Content-Type-Options: nosniff``;
- ``Referrer-Policy: same-origin`` for a page with forms, else ``no-referrer`` (a browser that may send no
  referrer names its form's ``Origin`` ``null``, which :func:`same_origin` refuses);
- ``X-Frame-Options: DENY``, for the browsers that do not read ``frame-ancestors``;

and, on every answer, ``Cache-Control: no-store`` and ``Connection: close`` (one request per connection: the
guard's deadlines, :mod:`arena.web.guard`, are per connection).
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Collection
from typing import Protocol

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.rating.pages import policy
from arena.web.guard import Fields

__all__ = [
    "FORM_BYTES", "FORM_FIELDS", "Bodies", "FormRead", "Secured", "csrf_ok", "csrf_token", "page_headers", "read_form",
    "same_origin", "secure",
]  # fmt: skip

FORM_BYTES = 64 << 10
"""The largest field of a form, and the largest body of a request to a site that takes forms (an upload aside)."""
FORM_FIELDS = 20
"""The most fields a form may have."""


def page_headers(script: str, *, fetches: bool = False, forms: bool = False) -> Fields:
    """The security header fields of a page whose one script is ``script`` (see the module docstring): ``fetches``,
    its script asks its own server for more; ``forms``, it has forms, sent to its own server."""
    fetched = ("connect-src 'self'",) if fetches else ()
    csp = policy(script, *fetched, "form-action 'self'" if forms else "form-action 'none'", "frame-ancestors 'none'",
                 "base-uri 'none'")
    return (("Content-Security-Policy", csp), ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "same-origin" if forms else "no-referrer"), ("X-Frame-Options", "DENY"))


def _every_answer(fields: Fields) -> Fields:
    return (*fields, ("Cache-Control", "no-store"), ("Connection", "close"))


class Secured:
    """Gives every answer of ``app`` the header fields ``fields`` (a page's :func:`page_headers`), ``no-store`` and
    ``Connection: close``, each unless the answer has it already (an application mounted inside another answers
    with its own)."""

    def __init__(self, app: ASGIApp, fields: Fields) -> None:
        self.app = app
        self.fields = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                       for name, value in _every_answer(fields)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sent(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers.extend((name, value) for name, value in self.fields if name not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sent)


def secure(response: Response, fields: Fields) -> Response:
    """``response`` with the header fields :class:`Secured` adds, for an answer made where no middleware sees it
    (Starlette's answer to an exception)."""
    for name, value in _every_answer(fields):
        response.headers[name] = value
    return response


class _TooLarge(Exception):
    """A request's body grew past its limit as it streamed."""


class Bodies:
    """Refuses a request whose body is larger than ``limit(path)`` bytes (413, ``refuse``'s answer saying
    ``too_large(path, limit)``): by its Content-Length before any of it is read, else by counting as it streams.
    A body a little too large is read to its end first (at most its limit again), so that a client that sends it
    all before reading sees the answer."""

    def __init__(self, app: ASGIApp, limit: Callable[[str], int], too_large: Callable[[str, int], str],
                 refuse: Callable[[Scope, int, str], Response]) -> None:
        self.app = app
        self.limit = limit
        self.too_large = too_large
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        limit = self.limit(path)
        length = _length(scope)
        if length is not None and length > limit:
            if length <= 2 * limit:
                await _drain(receive, length)
            await self.refuse(scope, 413, self.too_large(path, limit))(scope, receive, send)
            return
        seen = 0
        started = whole = False

        async def counted() -> Message:
            nonlocal seen, whole
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                whole = not message.get("more_body", False)
                if seen > limit:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if started:
                raise
            if not whole:  # once the body has ended, receive() would wait for the client to go
                await _drain(receive, limit)
            await self.refuse(scope, 413, self.too_large(path, limit))(scope, receive, send)


def _length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _drain(receive: Receive, budget: int) -> None:
    """Reads and drops what is left of a request's body, at most ``budget`` bytes."""
    while budget > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def same_origin(request: Request, origins: Collection[str] | None = None) -> bool:
    """A form sent from a page of this server, as far as the browser says: its ``Origin``, when it names one, is
    one of ``origins`` (``scheme://host:port``), or, without them, the scheme and host the request was sent to.
    ``null`` (a page that will not say where it is) never is; no ``Origin`` at all (a client that is no browser)
    is let through, and its CSRF token still guards the form."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    allowed = origins if origins is not None else (f"{request.url.scheme}://{request.url.netloc}",)
    return origin in allowed


def csrf_token() -> str:
    """A new CSRF token: what every form of one login, or of one page, carries."""
    return secrets.token_urlsafe(32)


def csrf_ok(expected: str, sent: object) -> bool:
    """The token a form ``sent`` (its ``csrf`` field) is ``expected``, compared in constant time."""
    return isinstance(sent, str) and hmac.compare_digest(expected.encode(), sent.encode())


class FormRead(Awaitable[FormData], contextlib.AbstractAsyncContextManager[FormData], Protocol):
    """A form being read: awaited, or entered (``async with``) to have its files closed after."""


def read_form(request: Request, *, files: int = 0, fields: int = FORM_FIELDS) -> FormRead:
    """The form a request sends, read as it streams (Starlette's parser): at most ``files`` files, ``fields``
    fields, none of them past :data:`FORM_BYTES` (a file aside). Await it, or enter it (``async with``) to have
    its files closed after. One it cannot read, or past these, raises Starlette's ``HTTPException`` (400), which
    each application answers as it answers its other refusals."""
    return request.form(max_files=files, max_fields=fields, max_part_size=FORM_BYTES)



def whole_number(text: str, digits: int, *, signed: bool = False) -> int | None:
    """``text`` as a whole number of at most ``digits`` digits in ASCII (a minus sign first if ``signed``), or
    ``None``: ``str.isdigit`` also takes ``²`` and as many digits as a client sends, which ``int`` refuses."""
    body = text[1:] if signed and text.startswith("-") else text
    if not (body.isascii() and body.isdigit()) or len(body.lstrip("0")) > digits:
        return None
    return int(text)
