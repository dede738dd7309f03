"""The ladder's web site and its JSON API: a Starlette application (:func:`ladder_app`) that :class:`LadderSite`
serves with uvicorn on the event loop of the program that runs the ladder.

Every page has a JSON twin under ``/api/`` with the same data, both made from :mod:`arena.ladder.queries`:

=====================================  ==========================================================================
``/``, ``/api/leaderboard``            the ranked versions (rank, ``=`` for a statistical tie) and those in placement
``/entrants/NAME``, ``/api/...``       an entrant: versions, checks and where they failed, rating over time, recent
                                       games, faults
``/blocks/ID``, ``/api/blocks/ID``     a block: seats, state, results, its four games once it is done or void
``/games/BLOCK/GAME``, ``/api/...``    a game's replay, cards as cards; 404 for a block queued or in play
``/playing``, ``/api/playing``         the blocks in play: seats, kind, since when; never a card
``/tests``, ``/tests/ID``, ``/api/..`` sequential tests (LLR, bounds, decision, LLR over time) and scrimmages
``/organiser``, ``/api/organiser``     the organiser's switches (organiser only: 403 for others)
``/play``, ``/api/play``               what one may play against at a table of one's own: the sample bots and
                                       the active versions the ladder starts itself
``/play/N/``                           sitting ``N``'s seat (:func:`~arena.web.seat.seat_app`, its forms carrying
                                       the seat's own token), for the entrant who dealt it alone
``/final``                             the final's report.html, once the final is done
``/healthz``                           ``ok``
=====================================  ==========================================================================

Forms (each POST of a logged-in browser carries the login's CSRF token in its ``csrf`` field, and an ``Origin``
of this site when the browser names one, else 403):
``/login`` (a token; sets an HttpOnly, SameSite=Strict cookie, Secure over https) and ``/logout``; ``/submit``
(a .py file or an archive: :meth:`~arena.ladder.control.Ladder.submit`); ``/tests`` and ``/scrimmages`` (ask
for a test of two versions, a scrimmage of a version against three); ``/organiser/ACTION`` (pause, resume,
freeze, unfreeze, revoke, final, stop-test); ``/play`` (an entrant's sitting: three opponents and a seed, or a
fresh one). ``POST /api/submit`` is the command line's: the token in ``Authorization: Bearer``, the file in the
multipart field ``file``, a JSON answer, no cookie and no CSRF.

A sitting (:class:`~arena.web.sitting.Sitting`) is one deal set of an entrant against three bots, played in their
browser, unrated: it seats its bots as a block does (the ladder's rules, deadline and sandbox; a launched version
a process of its own for each game), and records its games in ``sittings/NNNNNN`` of the ladder's folder, a
results folder ``verify`` reads. Each entrant has at most one in play, and the ladder at most
:attr:`SiteLimits.sittings`; one whose entrant asks nothing of it for :attr:`SiteLimits.sitting_idle_s` is
stopped and forgotten, and :meth:`LadderSite.stop` stops them all, with every bot they launched.

What a client may cost the ladder is bounded (:class:`SiteLimits`), and an anonymous one gives up its place
fast: the connections, all and of one client address (behind ``--proxy``, the address it forwards; the guard
of :mod:`arena.web.guard`, and the site's door in :mod:`~arena.web.ladder.app` for the requests a proxy
brings), the time a request and its body take to arrive (an upload's body :attr:`SiteLimits.body_s`, any other
:attr:`SiteLimits.form_s`), a body's size before it is parsed (its Content-Length, then a count as it streams,
:class:`~arena.web.security.Bodies`: a submission's limit and 64 KiB of form around it, 64 KiB for any other
form), a form's login and origin checked before its body is read (an anonymous
POST is refused at once), the login attempts of one address (:attr:`SiteLimits.logins_per_minute`, counted
and checked as one step, then 429), ids that do not fit the database (404). The database is read at every
request, in threads of the site's own (:attr:`~arena.web.guard.PageLimits.threads`), never on the loop that
plays the blocks; an upload is unpacked in threads of its own (:attr:`SiteLimits.uploads`), within the time
and bytes of :mod:`arena.ladder.intake`, so that uploads never hold the threads that answer pages.

What one entrant sees of another is public only: a failed check says which check failed and where (the game,
the round, the trick) to everyone, and its detail, the bot's hand and the end of its stderr to that entrant and
the organiser alone; no page or answer names a path of the server (:func:`~arena.ladder.queries.base.public_text`).
Every text an entrant chose is escaped (the templates autoescape), and every answer carries the security header
fields of :mod:`arena.web.security` (no script but the site's own, by its hash; nothing fetched; forms to this site
alone), ``Referrer-Policy: same-origin`` and ``X-Frame-Options: DENY`` among them.

The package's modules, one job each: :mod:`~arena.web.ladder.site` what every answer shares (the limits, the
templates, the login of a request, a page in the site's frame, refusals), :mod:`~arena.web.ladder.auth` logins,
tokens and the checks of a form, :mod:`~arena.web.ladder.pages` the HTML pages, :mod:`~arena.web.ladder.api` the
JSON API, :mod:`~arena.web.ladder.forms` the forms and the sittings, :mod:`~arena.web.ladder.app` the application
assembled (:func:`ladder_app`) and served (:class:`LadderSite`). Their templates are ``ladder_*.html``,
``ladder.css`` and ``ladder.js`` in ``arena/web/templates``.
"""

from __future__ import annotations

from arena.web.ladder.app import LadderSite, ladder_app, sittings_of
from arena.web.ladder.site import COOKIE, SEEDS, SUBMISSION_SLACK, SiteLimits
from arena.web.security import FORM_BYTES

__all__ = ["COOKIE", "FORM_BYTES", "SEEDS", "SUBMISSION_SLACK", "LadderSite", "SiteLimits", "ladder_app",
           "sittings_of"]
