"""Who a request of the ladder's site is: logging in and out (``/login``, ``/logout``), the tokens a request gives
(counted by client address, :class:`Attempts`), and a browser's form, refused without a login, from another site's
page or without the login's CSRF token."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import math
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from sqlalchemy.orm import Session
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from arena.ladder.accounts import LOGIN_HOURS, Login, log_in, log_out
from arena.ladder.db import Entrant, Organiser
from arena.web.guard import client_key
from arena.web.ladder.site import COOKIE, Refusal, Site, href
from arena.web.security import csrf_ok, csrf_token, read_form, same_origin

__all__ = ["Attempts", "Auth", "Holder", "anonymous", "holder"]

_T = TypeVar("_T")


class Attempts:
    """Failed login attempts by client address over the last minute (the threads that answer share it).

    Only a token that admits nobody counts: a class behind one address that logs in and submits with good
    tokens is never turned away, and guessing stops after exactly :attr:`per_minute` wrong tokens, however many
    are sent at once: each address's attempts take their :meth:`turn` one after the other, so that the check,
    the token's lookup and the count are one step."""

    def __init__(self, per_minute: int, addresses: int) -> None:
        self.per_minute = per_minute
        self.addresses = addresses
        self._seen: collections.OrderedDict[str, collections.deque[float]] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._turns: dict[str, asyncio.Lock] = {}
        self._waiting: collections.Counter[str] = collections.Counter()

    @contextlib.asynccontextmanager
    async def turn(self, address: str) -> AsyncIterator[None]:
        """The attempt of ``address`` whose turn it is, alone (on the serving loop: a waiting attempt holds no
        thread); an address's lock is forgotten once nobody waits for it."""
        lock = self._turns.setdefault(address, asyncio.Lock())
        self._waiting[address] += 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[address] -= 1
            if self._waiting[address] <= 0:
                del self._waiting[address]
                self._turns.pop(address, None)

    def _recent(self, address: str, now: float) -> collections.deque[float]:
        times = self._seen.pop(address, None) or collections.deque()
        while times and times[0] <= now - 60:
            times.popleft()
        self._seen[address] = times
        while len(self._seen) > self.addresses:
            self._seen.popitem(last=False)
        return times

    def blocked(self, address: str, now: float | None = None) -> bool:
        """Whether ``address`` has given :attr:`per_minute` wrong tokens in the last minute."""
        with self._lock:
            return len(self._recent(address, time.monotonic() if now is None else now)) >= self.per_minute

    def failed(self, address: str, now: float | None = None) -> None:
        """Counts a wrong token given from ``address``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._recent(address, now).append(now)

    def wait_s(self, address: str, now: float | None = None) -> int:
        """Seconds before ``address`` may try again."""
        now = time.monotonic() if now is None else now
        times = self._seen.get(address)
        return max(1, math.ceil(times[0] + 60 - now)) if times else 1


@dataclasses.dataclass(frozen=True)
class Holder:
    """Whom a token admits: an entrant (by name) or the organiser."""

    entrant: str | None
    organiser: bool


def holder(who: Entrant | Organiser | None) -> Holder | None:
    """:func:`~arena.ladder.accounts.who_has`'s answer as plain data (``None``: the token admits nobody)."""
    if who is None:
        return None
    return Holder(who.name, False) if isinstance(who, Entrant) else Holder(None, True)


def anonymous(request: Request, login: Login | None) -> Refusal | None:
    """Refuses, from its head alone, a form without a login or sent by another site's page."""
    if login is None:
        return Refusal(403, "log in first: this form is for logged-in entrants (log in at /login)")
    if not same_origin(request):
        return Refusal(403, "this form did not come from a page of this site")
    return None


def _over_https(request: Request) -> bool:
    return request.url.scheme == "https"


class Auth:
    """Logins, the tokens requests give, and the checks of a browser's form."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.attempts = Attempts(site.limits.logins_per_minute, site.limits.addresses)

    def address(self, request: Request) -> str:
        """The client address a request's attempts are counted by."""
        return client_key(request.client.host) if request.client is not None else ""

    def too_many(self, request: Request) -> Refusal | None:
        """429 once the request's address has given too many wrong tokens."""
        address = self.address(request)
        if not self.attempts.blocked(address):
            return None
        return Refusal(429, f"too many login attempts from your address in the last minute (at most "
                            f"{self.site.limits.logins_per_minute}): try again in {self.attempts.wait_s(address)} "
                            "seconds")

    async def by_token(self, request: Request, find: Callable[[Session], _T | None]) -> _T | Refusal | None:
        """What ``find`` makes of the token a request gives (``None``: it admits nobody, and counts against the
        client's address), or 429 once the address has given too many wrong tokens: the check, the lookup and
        the count are one step (:meth:`Attempts.turn`), so that tokens sent at once cannot pass the limit."""
        address = self.address(request)
        async with self.attempts.turn(address):
            too_many = self.too_many(request)
            if too_many is not None:
                return too_many

            def work() -> _T | None:
                with self.site.session() as session:
                    found = find(session)
                if found is None:
                    self.attempts.failed(address)
                return found

            return await self.site.off_loop(work)

    async def posted(self, request: Request) -> tuple[Login | None, FormData, Refusal | None]:
        """A browser's POST: its login and form, refused (403) without a login or from another site's page before
        its body is read (an anonymous client is answered at once), then without the login's CSRF token."""
        login = await self.site.login(request)
        early = anonymous(request, login)
        if early is not None:
            return login, FormData(), early
        form = await read_form(request)
        return login, form, self.csrf(request, login, form)

    @staticmethod
    def csrf(request: Request, login: Login | None, form: FormData) -> Refusal | None:
        """Refuses a form without a login, sent by another site's page, or without the login's CSRF token."""
        early = anonymous(request, login)
        if early is not None:
            return early
        assert login is not None
        if not csrf_ok(login.csrf, form.get("csrf")):
            return Refusal(403, "this form is out of date or did not come from this site (its CSRF token does "
                                "not match your login): open the page again and send it from there")
        return None

    async def login(self, request: Request) -> Response:
        too_many = self.too_many(request)  # at once, before the body: the step that counts is below
        if too_many is not None:
            return await self.site.say(request, too_many)
        if not same_origin(request):
            return await self.site.say(request, Refusal(403, "this login form did not come from this site"))
        form = await read_form(request)
        token = str(form.get("token", ""))
        done = await self.by_token(request, lambda session: log_in(session, token, csrf_token()))
        if isinstance(done, Refusal):
            return await self.site.say(request, done)
        if done is None:
            def refused() -> Response:
                with self.site.session() as session:
                    return self.site.page(session, None, "ladder_login.html", "Log in", 401,
                                          problem="that token admits nobody on this ladder: check it, or ask the "
                                                  "organiser for a new one")

            return await self.site.off_loop(refused)
        cookie, login = done
        target = "/organiser" if login.organiser else href("entrants", login.entrant or "")
        answer = RedirectResponse(target, 303)
        answer.set_cookie(COOKIE, cookie, max_age=LOGIN_HOURS * 3600, path="/", secure=_over_https(request),
                          httponly=True, samesite="strict")
        return answer

    async def logout(self, request: Request) -> Response:
        _, _, refusal = await self.posted(request)
        if refusal is not None:
            return await self.site.say(request, refusal)
        cookie = request.cookies.get(COOKIE, "")

        def work() -> Response:
            with self.site.session() as session:
                log_out(session, cookie)
            answer = RedirectResponse("/", 303)
            answer.delete_cookie(COOKIE, path="/", secure=_over_https(request), httponly=True, samesite="strict")
            return answer

        return await self.site.off_loop(work)
