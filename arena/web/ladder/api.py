"""The ladder site's JSON API: every page's twin under ``/api/``, made from the same queries, and the command line's
``POST /api/submit`` (the token in ``Authorization: Bearer``, no cookie, no CSRF)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy.orm import Session
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from arena.event.check import OPPONENTS
from arena.ladder.accounts import Login, login_of, who_has
from arena.ladder.queries import base, blocks, entrants, organiser, testing
from arena.web.ladder.auth import Auth, holder
from arena.web.ladder.pages import Pages
from arena.web.ladder.site import COOKIE, Refusal, Site, href, sees_all
from arena.web.security import read_form

__all__ = ["Api", "plain"]


def plain(value: object) -> object:
    """A query's answer as JSON takes it: dataclasses as objects, times in ISO 8601, no infinite numbers."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _json(data: object, status: int = 200) -> JSONResponse:
    return JSONResponse(plain(data), status)


def _error(why: str, status: int) -> JSONResponse:
    return JSONResponse({"error": why}, status)


class Api:
    """The JSON answers of the site."""

    def __init__(self, site: Site, auth: Auth, pages: Pages) -> None:
        self.site = site
        self.auth = auth
        self.pages = pages

    async def leaderboard(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            board = self.pages.board(session)
            return _json([*board.ranked, *board.placement])

        return await self.site.read(request, make)

    async def entrant(self, request: Request) -> Response:
        name = request.path_params["name"]

        def make(session: Session, login: Login | None) -> Response:
            view = entrants.entrant(session, self.site.ladder.folder, name, private=sees_all(login, name),
                                   placement_blocks=self.site.ladder.settings.matchmaking.placement_blocks)
            return _error(view.why, 404) if isinstance(view, base.Missing) else _json(view)

        return await self.site.read(request, make)

    async def block(self, request: Request) -> Response:
        block_id = request.path_params["block_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = blocks.block(session, self.site.ladder.folder, block_id)
            return _error(view.why, 404) if isinstance(view, base.Missing) else _json(view)

        return await self.site.read(request, make)

    async def game(self, request: Request) -> Response:
        block_id, game_id = request.path_params["block_id"], request.path_params["game_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = blocks.game(session, self.site.ladder.folder, block_id, game_id)
            return _error(view.why, 404) if isinstance(view, base.Missing) else _json(view)

        return await self.site.read(request, make)

    async def playing(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            now = blocks.playing(session)
            return _json({"blocks": now.blocks, "queued": now.queued,
                          "state": base.ladder_view(session, self.site.ladder.folder)})

        return await self.site.read(request, make)

    async def tests(self, request: Request) -> Response:
        return await self.site.read(request, lambda session, login: _json(testing.tests(session)))

    async def test(self, request: Request) -> Response:
        test_id = request.path_params["test_id"]

        def make(session: Session, login: Login | None) -> Response:
            detail = testing.test(session, test_id)
            return _error(detail.why, 404) if isinstance(detail, base.Missing) else _json(detail)

        return await self.site.read(request, make)

    async def play(self, request: Request) -> Response:
        return await self.site.read(request, lambda session, login: _json(
            {"samples": list(OPPONENTS), "versions": testing.opponents(session)}))

    async def organiser(self, request: Request) -> Response:
        too_many = self.auth.too_many(request)
        if too_many is not None:
            return _error(too_many.why, too_many.status)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        cookie = request.cookies.get(COOKIE, "")
        bearer = scheme.lower() == "bearer" and bool(token.strip())
        who = await self.auth.by_token(request, lambda session: holder(who_has(session, token))) if bearer else None
        if isinstance(who, Refusal):
            return _error(who.why, who.status)

        def make() -> Response:
            with self.site.session() as session:
                if bearer:
                    allowed = who is not None and who.organiser
                else:
                    login = login_of(session, cookie) if cookie else None
                    allowed = login is not None and login.organiser
                if not allowed:
                    return _error("this is the organiser's: give the organiser's token", 403)
                view = organiser.organiser(session)
                return _json({"state": base.ladder_view(session, self.site.ladder.folder),
                              "entrants": view.entrants, "running": view.running, "blocks": view.blocks,
                              "active_versions": view.active_versions, "pairs": view.pairs,
                              "pair_lines": view.pair_lines})

        return await self.site.off_loop(make)

    async def submit(self, request: Request) -> Response:
        too_many = self.auth.too_many(request)
        if too_many is not None:
            return _error(too_many.why, too_many.status)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return _error("give your token: Authorization: Bearer TOKEN", 401)
        who = await self.auth.by_token(request, lambda session: holder(who_has(session, token)))
        if isinstance(who, Refusal):
            return _error(who.why, who.status)
        if who is None or who.entrant is None:
            return _error("that token admits no entrant of this ladder", 401)
        entrant = who.entrant
        async with read_form(request, files=1, fields=2) as form:
            upload = form.get("file")
            if not isinstance(upload, UploadFile) or not upload.filename:
                return _error("send the bot as the multipart field 'file', with its file name", 400)
            filename, data = upload.filename, await upload.read()
        done = await self.site.unpacked(entrant, filename, data)
        if done.problem:
            return _error(done.problem, done.status)
        return JSONResponse({"version": done.version, "state": done.state, "page": href("entrants", entrant)})
