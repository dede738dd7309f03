"""The ladder site's pages: each reads the database in one transaction (:mod:`arena.ladder.queries`) and renders
its template in the site's frame; the pages a form answers with when it is refused are made here too."""

from __future__ import annotations

import math
from collections.abc import Mapping

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from arena.event.check import OPPONENTS
from arena.ladder.accounts import Login
from arena.ladder.intake import ARCHIVES
from arena.ladder.queries import base, blocks, entrants, leaderboard, organiser, testing
from arena.rating.pages import Markup
from arena.rating.plots import Series, color, dash, line_chart
from arena.web.ladder.site import REFRESH_S, REPORT_SECURITY, Site, sees_all
from arena.web.security import secure

__all__ = ["Pages"]


class Pages:
    """The HTML pages of the site, and the pages its forms answer with."""

    def __init__(self, site: Site) -> None:
        self.site = site

    # -- the leaderboard ---------------------------------------------------------------------------

    def board(self, session: Session) -> leaderboard.Leaderboard:
        return leaderboard.leaderboard(session, self.site.ladder.settings.matchmaking.placement_blocks)

    async def leaderboard(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            return self.site.page(session, login, "ladder_board.html", "Leaderboard", refresh=REFRESH_S["board"],
                                  board=self.board(session))

        return await self.site.read(request, make)

    # -- an entrant --------------------------------------------------------------------------------

    def _entrant_chart(self, view: entrants.EntrantView) -> Markup | None:
        series = [s for s in view.ratings if s.marks]
        if not series:
            return None
        longest = max(len(s.marks) for s in series)
        lines = [Series(s.version, [m.ordinal for m in s.marks] + [math.nan] * (longest - len(s.marks)),
                        color(index), dash(index)) for index, s in enumerate(series)]
        # The chart escapes every label it draws (a version's label); the rest is its own numbers and colours.
        return Markup(line_chart(lines, list(range(1, longest + 1)), "rated blocks played",
                                 "ordinal (mu − 3 sigma)", f"The rating of {view.name}'s versions after each block"))

    def entrant_page(self, session: Session, login: Login | None, name: str, bot_token: str = "") -> Response:
        """An entrant's page; ``bot_token``: the bot token just made, shown to its entrant this once."""
        site = self.site
        view = entrants.entrant(session, site.ladder.folder, name, private=sees_all(login, name),
                               placement_blocks=site.ladder.settings.matchmaking.placement_blocks)
        if isinstance(view, base.Missing):
            return site.message(session, login, 404, view.why)
        legend = [(s.version, color(i)) for i, s in enumerate(r for r in view.ratings if r.marks)]
        own = login is not None and login.entrant is not None and login.entrant.casefold() == view.name.casefold()
        return site.page(session, login, "ladder_entrant.html", view.display, entrant=view,
                         chart=self._entrant_chart(view), legend=legend, own=own, bot_token=bot_token)

    async def entrant(self, request: Request) -> Response:
        name = request.path_params["name"]
        return await self.site.read(request, lambda session, login: self.entrant_page(session, login, name))

    # -- blocks and games --------------------------------------------------------------------------

    async def block(self, request: Request) -> Response:
        block_id = request.path_params["block_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = blocks.block(session, self.site.ladder.folder, block_id)
            if isinstance(view, base.Missing):
                return self.site.message(session, login, 404, view.why)
            return self.site.page(session, login, "ladder_block.html", f"Block {block_id}", block=view)

        return await self.site.read(request, make)

    async def game(self, request: Request) -> Response:
        block_id, game_id = request.path_params["block_id"], request.path_params["game_id"]

        def make(session: Session, login: Login | None) -> Response:
            view = blocks.game(session, self.site.ladder.folder, block_id, game_id)
            if isinstance(view, base.Missing):
                return self.site.message(session, login, 404, view.why)
            return self.site.page(session, login, "ladder_game.html", f"Game {game_id} of block {block_id}",
                                  game=view)

        return await self.site.read(request, make)

    async def playing(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            return self.site.page(session, login, "ladder_playing.html", "Playing now",
                                  refresh=REFRESH_S["playing"], playing=blocks.playing(session))

        return await self.site.read(request, make)

    # -- tests -------------------------------------------------------------------------------------

    def tests_page(self, session: Session, login: Login | None, status: int = 200, problem: str = "",
                   sent: Mapping[str, str] | None = None) -> HTMLResponse:
        """The tests and scrimmages, and the forms that ask for them (``sent``: what was sent, shown again)."""
        offered = testing.choices(session, None if login is None or login.organiser else login.entrant)
        return self.site.page(session, login, "ladder_tests.html", "Tests and scrimmages", status,
                              tests=testing.tests(session), choices=offered, problem=problem, sent=sent or {},
                              settings=self.site.ladder.settings.tests)

    async def tests(self, request: Request) -> Response:
        return await self.site.read(request, self.tests_page)

    def _test_chart(self, detail: testing.TestDetail) -> Markup | None:
        test = detail.test
        if not detail.marks or test.lower is None or test.upper is None:
            return None
        marks = [mark for mark in detail.marks if mark.llr is not None]  # none before the blocks have a spread
        if not marks:
            return None
        xs = [mark.n for mark in marks]
        lines = [Series("LLR", [mark.llr for mark in marks if mark.llr is not None], color(0)),
                 Series("accept H1", [test.upper] * len(xs), color(2), "7 4"),
                 Series("accept H0", [test.lower] * len(xs), color(1), "7 4")]
        return Markup(line_chart(lines, xs, "blocks", "log-likelihood ratio",
                                 f"The LLR of test {test.id} after each block, between its two bounds"))

    async def test(self, request: Request) -> Response:
        test_id = request.path_params["test_id"]

        def make(session: Session, login: Login | None) -> Response:
            detail = testing.test(session, test_id)
            if isinstance(detail, base.Missing):
                return self.site.message(session, login, 404, detail.why)
            return self.site.page(session, login, "ladder_test.html", f"Test {test_id}", detail=detail,
                                  chart=self._test_chart(detail))

        return await self.site.read(request, make)

    # -- logging in, submitting --------------------------------------------------------------------

    async def login_form(self, request: Request) -> Response:
        return await self.site.read(request, lambda session, login: self.site.page(
            session, login, "ladder_login.html", "Log in", problem=""))

    def submit_page(self, session: Session, login: Login, status: int = 200, problem: str = "") -> HTMLResponse:
        """The form that submits a version, and the entrant's latest versions."""
        settings = self.site.ladder.settings
        view = entrants.entrant(session, self.site.ladder.folder, login.entrant or "", recent_blocks=0)
        versions = view.versions[:10] if isinstance(view, entrants.EntrantView) else ()
        return self.site.page(session, login, "ladder_submit.html", "Submit a version", status, problem=problem,
                              versions=versions, limits=settings.submissions, archives=ARCHIVES,
                              profile=settings.rules.profile_name)  # the profile its check plays

    async def submit_form(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            if login is None:
                return RedirectResponse("/login", 303)
            if login.entrant is None:
                return self.site.message(session, login, 403, "the organiser submits no bot: log in with an "
                                                              "entrant's token to submit one")
            return self.submit_page(session, login)

        return await self.site.read(request, make)

    # -- the organiser -----------------------------------------------------------------------------

    def organiser_page(self, session: Session, login: Login, status: int = 200, problem: str = "") -> HTMLResponse:
        """The organiser's switches."""
        return self.site.page(session, login, "ladder_organiser.html", "Organiser", status, problem=problem,
                              view=organiser.organiser(session))

    async def organiser(self, request: Request) -> Response:
        def make(session: Session, login: Login | None) -> Response:
            if login is None or not login.organiser:
                return self.site.message(session, login, 403, "this page is the organiser's: log in with the "
                                                              "organiser's token")
            return self.organiser_page(session, login)

        return await self.site.read(request, make)

    async def final(self, request: Request) -> Response:
        folder = self.site.ladder.folder

        def make(session: Session, login: Login | None) -> Response:
            state = base.ladder_view(session, folder)
            if not state.final_report:
                return self.site.message(session, login, 404, "the final has not been played yet: its report is "
                                                              "here once it is over")
            text = base.public_text(base.final_report(folder).read_text(encoding="utf-8"), folder)
            return secure(HTMLResponse(text), REPORT_SECURITY)

        return await self.site.read(request, make)

    # -- sittings ----------------------------------------------------------------------------------

    def play_page(self, session: Session, login: Login | None, status: int = 200, problem: str = "",
                  sent: Mapping[str, str] | None = None, mine: int | None = None) -> HTMLResponse:
        """What one may play against, the form that deals a sitting, and the login's sitting in play."""
        return self.site.page(session, login, "ladder_play.html", "Play against a version", status,
                              samples=tuple(OPPONENTS), versions=testing.opponents(session), problem=problem,
                              sent=sent or {}, mine=mine, idle_minutes=f"{self.site.limits.sitting_idle_s / 60:g}")

    async def play_form(self, request: Request) -> Response:
        login = await self.site.login(request)
        mine = self.site.mine(login)

        def work() -> Response:
            with self.site.session() as session:
                return self.play_page(session, login, mine=mine)

        return await self.site.off_loop(work)

    async def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok")
