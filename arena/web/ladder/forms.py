"""The ladder site's forms, each a POST of a logged-in browser (its login, origin and CSRF token checked by
:class:`~arena.web.ladder.auth.Auth`): a bot token, a test or a scrimmage, a submission, the organiser's switches,
and a sitting dealt (``/play``) and played at ``/play/N/``."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from arena.errors import ArenaError, ConfigError
from arena.event.check import OPPONENTS
from arena.ladder.accounts import Login
from arena.ladder.blocks import bot_table
from arena.ladder.control import REMOTE, version_labelled
from arena.ladder.db import VersionState
from arena.web.ladder.auth import Auth, anonymous
from arena.web.ladder.pages import Pages
from arena.web.ladder.site import ID_DIGITS, SEEDS, Refusal, Site, href
from arena.web.seat import seat_app
from arena.web.security import read_form, whole_number
from arena.web.sitting import Held, Sitting

__all__ = ["Forms", "whole"]


def whole(value: object, what: str) -> int:
    """A whole number a form gives, of at most :data:`ID_DIGITS` digits; a :class:`ConfigError` for anything
    else."""
    text = str(value or "").strip()
    if not (text.isascii() and text.isdigit()):
        raise ConfigError(f"{what} must be a whole number, not {text!r}")
    number = whole_number(text, ID_DIGITS)
    if number is None:
        raise ConfigError(f"{what} must be a whole number of at most {ID_DIGITS} digits")
    return number


def _owns(login: Login, label: str) -> bool:
    """The logged-in entrant's version is ``label`` (``entrant#number``), or the login is the organiser's."""
    return login.organiser or (login.entrant is not None and
                               label.rpartition("#")[0].casefold() == login.entrant.casefold())


class Forms:
    """The answers to the site's forms."""

    def __init__(self, site: Site, auth: Auth, pages: Pages) -> None:
        self.site = site
        self.auth = auth
        self.pages = pages

    async def bot_token(self, request: Request) -> Response:
        """A new bot token for the logged-in entrant (their bot's old one stops working), shown on their page once."""
        login, _, refusal = await self.auth.posted(request)
        if refusal is None and (login is None or login.entrant is None):
            refusal = Refusal(403, "only an entrant has a bot token: log in with your own token")
        if refusal is not None:
            return await self.site.say(request, refusal)
        assert login is not None and login.entrant is not None
        name = login.entrant

        def work() -> Response:
            token = self.site.ladder.bot_token(name)
            with self.site.session() as session:
                return self.pages.entrant_page(session, login, name, token)

        return await self.site.off_loop(work)

    # -- tests and scrimmages ----------------------------------------------------------------------

    async def ask_test(self, request: Request) -> Response:
        login, form, refusal = await self.auth.posted(request)
        if refusal is not None:
            return await self.site.say(request, refusal)
        assert login is not None
        a, b = str(form.get("a", "")).strip(), str(form.get("b", "")).strip()

        def work() -> Response:
            problem = ""
            if not (_owns(login, a) or _owns(login, b)):
                problem = "a test you ask for compares one of your own versions with another version"
            else:
                try:
                    test = self.site.ladder.ask_test(login.entrant or "organiser", a, b, organiser=login.organiser)
                except ArenaError as err:
                    problem = str(err)
                else:
                    return RedirectResponse(href("tests", test.id), 303)
            with self.site.session() as session:
                return self.pages.tests_page(session, login, 400, problem, {"a": a, "b": b})

        return await self.site.off_loop(work)

    async def ask_scrimmage(self, request: Request) -> Response:
        login, form, refusal = await self.auth.posted(request)
        if refusal is not None:
            return await self.site.say(request, refusal)
        assert login is not None
        version = str(form.get("version", "")).strip()
        opponents = [str(form.get(f"opponent{i}", "")).strip() for i in (1, 2, 3)]
        blocks_text = str(form.get("blocks", "")).strip()
        sent = {"version": version, "blocks": blocks_text, **{f"opponent{i}": o for i, o in enumerate(opponents, 1)}}

        def work() -> Response:
            problem = ""
            if not _owns(login, version):
                problem = f"{version or 'the version'} is not yours: a scrimmage plays one of your own versions"
            else:
                try:
                    test = self.site.ladder.ask_scrimmage(login.entrant or "organiser", version, opponents,
                                                          whole(blocks_text, "the number of blocks"),
                                                          organiser=login.organiser)
                except ArenaError as err:
                    problem = str(err)
                else:
                    return RedirectResponse(href("tests", test.id), 303)
            with self.site.session() as session:
                return self.pages.tests_page(session, login, 400, problem, sent)

        return await self.site.off_loop(work)

    # -- submissions -------------------------------------------------------------------------------

    async def submit(self, request: Request) -> Response:
        login = await self.site.login(request)
        if login is None or login.entrant is None:
            return await self.site.say(request, Refusal(403, "log in with your entrant's token to submit a version"))
        early = anonymous(request, login)
        if early is not None:
            return await self.site.say(request, early)
        entrant = login.entrant
        async with read_form(request, files=1, fields=4) as form:
            refusal = self.auth.csrf(request, login, form)
            if refusal is not None:
                return await self.site.say(request, refusal)
            upload = form.get("file")
            if not isinstance(upload, UploadFile) or not upload.filename:
                problem, status = "choose your bot's file (a .py file, or an archive of its folder) first", 400
            else:
                filename, data = upload.filename, await upload.read()
                done = await self.site.unpacked(entrant, filename, data)
                if not done.problem:
                    return RedirectResponse(href("entrants", entrant), 303)
                problem, status = done.problem, done.status

        def work() -> Response:
            with self.site.session() as session:
                return self.pages.submit_page(session, login, status, problem)

        return await self.site.off_loop(work)

    # -- the organiser -----------------------------------------------------------------------------

    async def organiser_act(self, request: Request) -> Response:
        action = request.path_params["action"]
        login, form, refusal = await self.auth.posted(request)
        if refusal is None and (login is None or not login.organiser):
            refusal = Refusal(403, "only the organiser may do this")
        if refusal is not None:
            return await self.site.say(request, refusal)
        assert login is not None
        ladder = self.site.ladder
        acts: dict[str, Callable[[], None]] = {
            "pause": lambda: ladder.pause(True), "resume": lambda: ladder.pause(False),
            "freeze": lambda: ladder.freeze(True), "unfreeze": lambda: ladder.freeze(False),
            "revoke": lambda: ladder.revoke(str(form.get("name", "")).strip()),
            "final": lambda: ladder.start_final(whole(form.get("deal_sets"), "the number of deal sets")),
            "stop-test": lambda: ladder.stop_test(whole(form.get("test"), "the test's number")),
        }
        act = acts.get(action)
        if act is None:
            return await self.site.say(request, Refusal(404, f"the organiser has no action {action!r}"))

        def work() -> Response:
            try:
                act()
            except ArenaError as err:
                with self.site.session() as session:
                    return self.pages.organiser_page(session, login, 400, str(err))
            return RedirectResponse("/organiser", 303)

        return await self.site.off_loop(work)

    # -- sittings ----------------------------------------------------------------------------------

    def _opponents(self, chosen: list[str]) -> list[str | dict[str, Any]]:
        """The three opponents chosen: a sample bot by its name, a version as its ``[[bots]]`` table; a
        :class:`ConfigError` for anything else."""
        tables: list[str | dict[str, Any]] = []
        with self.site.session() as session:
            for label in chosen:
                if label in OPPONENTS:
                    tables.append(label)
                    continue
                if not label:
                    raise ConfigError("choose an opponent for each of the three seats")
                version = version_labelled(session, label)
                if version.state != VersionState.ACTIVE or version.kind == REMOTE:
                    raise ConfigError(f"{label} cannot be played against: only active versions that the ladder "
                                      "starts itself can")
                tables.append(bot_table(version, self.site.ladder.folder))
        return tables

    async def start_sitting(self, request: Request) -> Response:
        login, form, refusal = await self.auth.posted(request)
        if refusal is None and login is not None and login.entrant is None:
            refusal = Refusal(403, "the organiser plays no sitting: log in with an entrant's token to play")
        if refusal is not None:
            return await self.site.say(request, refusal)
        assert login is not None and login.entrant is not None
        chosen = [str(form.get(f"opponent{n}", "")).strip() for n in (1, 2, 3)]
        seed_text = str(form.get("seed", "")).strip()
        sent = {"seed": seed_text, **{f"opponent{n}": name for n, name in enumerate(chosen, start=1)}}
        try:
            seed = whole(seed_text, "the seed") if seed_text else secrets.randbelow(SEEDS)
            dealt = self._deal(login.entrant, seed, await self.site.off_loop(self._opponents, chosen))
        except ArenaError as err:
            dealt = Refusal(400, str(err))
        if isinstance(dealt, Held):
            return RedirectResponse(f"/play/{dealt.number}/", 303)
        mine = self.site.mine(login)

        def work() -> Response:
            with self.site.session() as session:
                return self.pages.play_page(session, login, dealt.status, dealt.why, sent, mine)

        return await self.site.off_loop(work)

    def _deal(self, entrant: str, seed: int, opponents: list[str | dict[str, Any]]) -> Held | Refusal:
        """Starts a sitting of ``entrant``'s, or says why not. It runs on the loop and awaits nothing, so that no
        other request starts one in between."""
        sittings = self.site.sittings
        busy = sittings.refusal(entrant)
        if busy is not None:
            return Refusal(409, busy)
        number, folder = sittings.next_folder()
        settings = self.site.ladder.settings
        sitting = Sitting(settings.rules, seed, opponents, folder, deadline_ms=settings.deadline_ms,
                          sandbox=settings.sandbox, records=f"kept by the ladder, in its folder sittings/{folder.name}")
        return sittings.hold(number, entrant, sitting, seat_app(sitting))

    async def seat(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A sitting's seat, for its entrant alone: the requests of its page, handed to its own application."""
        request = Request(scope, receive)
        number = scope["path_params"]["number"]
        held = self.site.sittings.get(number)
        login = await self.site.login(request)
        if held is None:
            answer = await self.site.say(request, Refusal(404, f"there is no sitting {number} now: it is over, or "
                                                               "was never started (start one at /play)"))
        elif login is None or login.entrant != held.owner:
            answer = await self.site.say(request, Refusal(403, "this sitting is another entrant's, or you are not "
                                                               "logged in: log in, and start your own at /play"))
        else:
            if not (request.url.path.endswith("/table") and "since" in request.query_params):
                held.touch()  # the page's own wait for a change is not its entrant asking
            await held.page(scope, receive, send)
            return
        await answer(scope, receive, send)
