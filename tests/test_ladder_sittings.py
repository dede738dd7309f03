"""Playing against a version on the ladder's site: ``/play`` served over a real socket on port 0, on a real ladder
whose submitted version runs as a real process (in the sandbox where bubblewrap is installed).

An entrant logs in, chooses three opponents (a submitted version among them) and plays the whole deal set through
the seat's forms under ``/play/N/``; the records in ``sittings/NNNNNN`` pass the audit, the version made its own
decisions, its processes are gone afterwards and the ladder's ratings are untouched. A browser not logged in, a
second sitting of one entrant, a sitting past the ladder's limit, a form of another site and a bot named by its
class are refused in a sentence; another entrant cannot open the seat; an idle sitting and a site that stops end
their sittings and the processes they launched.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from arena.core.faults import FaultKind
from arena.event.audit import audit
from arena.ladder.control import Ladder
from arena.ladder.db import Block, Rating, Version, VersionState, utc_now
from arena.ladder.founding import found_ladder
from arena.records.store import ResultsStore
from arena.web.ladder import LadderSite, SiteLimits
from arena.web.sitting import PERSON
from tests.helpers.ladder import GOOD_BOT, SANDBOX
from tests.helpers.pages import asked, version
from tests.helpers.runs import RANDOM

CHROMIUM = Path("/usr/bin/chromium")
TOKEN = re.compile(r'name="csrf" value="([^"]+)"')
SCRIPT = {"X-Seat-Script": "1"}


@dataclasses.dataclass
class Field:
    ladder: Ladder
    tokens: dict[str, str]
    """Each entrant's token, and the organiser's."""
    bot_folder: Path
    """The submitted version's folder: every process of it names it."""


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    """A ladder of one-round games: a submitted kit bot (bob#1), an in-process one (carol#1), a remote one
    (dave#1), all active, and entrants who play (alice, erin, bob)."""
    folder = tmp_path_factory.mktemp("sittings") / "ladder"
    organiser = found_ladder(folder).token
    settings = folder / "ladder.toml"
    text = settings.read_text(encoding="utf-8").replace('mode = "bwrap"', f'mode = "{SANDBOX}"')
    settings.write_text(text.replace('profile = "nepali"', 'profile = "nepali"\nrounds = 1'), encoding="utf-8")
    ladder = Ladder.open(folder)
    assert ladder.settings.rules.rounds == 1
    tokens = {name: ladder.add_entrant(name) for name in ("alice", "bob", "erin")}
    tokens["carol"] = ladder.add_entrant("carol", python=RANDOM)
    tokens["dave"] = ladder.add_entrant("dave", remote=True)
    submitted = ladder.submit("bob", "lowest.py", GOOD_BOT.encode())
    with ladder.session() as session:
        for row in session.scalars(select(Version)):
            row.state, row.activated = VersionState.ACTIVE, utc_now()
    tokens["organiser"] = organiser
    yield Field(ladder, tokens, folder / submitted.path)
    ladder.close()


@contextlib.contextmanager
def serving(ladder: Ladder, limits: SiteLimits) -> Iterator[tuple[str, Callable[[], None]]]:
    """The site on port 0, on an event loop of a thread of the test's (as ``ladder serve`` runs it): its address,
    and what stops it as ``ladder serve`` does when it stops (the loop runs on until the block ends)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    site = LadderSite(ladder, limits)

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(site.stop(), loop).result(30)

    try:
        address = asyncio.run_coroutine_threadsafe(site.start("127.0.0.1", 0), loop).result(10)
        yield f"http://{address}", stop
    finally:
        stop()
        asyncio.run_coroutine_threadsafe(_cancel_the_rest(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


async def _cancel_the_rest() -> None:
    """Cancels the tasks still pending on the loop and waits for them, as ``asyncio.run`` does at its end."""
    rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in rest:
        task.cancel()
    await asyncio.gather(*rest, return_exceptions=True)


def logged_in(url: str, token: str) -> tuple[httpx.Client, str]:
    """A browser logged in with ``token``, and the CSRF token of the site's forms."""
    browser = httpx.Client(base_url=url, timeout=30, follow_redirects=False)
    assert browser.post("/login", data={"token": token}).status_code == 303
    found = TOKEN.search(browser.get("/play").text)
    assert found is not None
    return browser, found.group(1)


def deal(browser: httpx.Client, csrf: str, *opponents: str, seed: str = "") -> httpx.Response:
    return browser.post("/play", data={"csrf": csrf, "seed": seed,
                                       **{f"opponent{n}": name for n, name in enumerate(opponents, start=1)}})


def processes_of(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` (a launched bot, or its sandbox)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if str(folder).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


def within(seconds: float, condition: Callable[[], bool]) -> bool:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def play_through(browser: httpx.Client, base: str, token: str, during: Callable[[], None]) -> str:
    """Plays the sitting at ``base`` to its end through the seat's forms (``during`` is called at the first
    card asked of each game); returns the last table."""
    html = browser.get(f"{base}table").text
    asked_in = set()
    while True:
        while not asked(html) and 'id="next"' not in html and 'id="done"' not in html:
            html = browser.get(f"{base}table", params={"since": version(html)}).text
        if 'id="done"' in html:
            return html
        if 'id="next"' in html:
            html = browser.post(f"{base}next", data={"csrf": token}, headers=SCRIPT).text
        elif asked(html) == "call":
            html = browser.post(f"{base}call", data={"csrf": token, "call": "1"}, headers=SCRIPT).text
        else:
            game = re.search(r"Game (\d) of 4", html)
            assert game is not None
            if game.group(1) not in asked_in:
                asked_in.add(game.group(1))
                during()
            legal = re.findall(r'data-card="(\w+)" class="card [^"]*legal', html)
            assert legal
            html = browser.post(f"{base}play", data={"csrf": token, "card": legal[0]}, headers=SCRIPT).text


def test_an_entrant_plays_a_deal_set_against_a_submitted_version_and_its_records_verify(field: Field) -> None:
    ladder = field.ladder
    with serving(ladder, SiteLimits(logins_per_minute=1000)) as (url, _):
        with httpx.Client(base_url=url, timeout=30) as stranger:
            page = stranger.get("/play")
            assert page.status_code == 200 and 'href="/play"' in stranger.get("/").text
            listed = re.findall(r"<li>([^<]+)</li>", page.text)
            assert listed == ["bob#1", "carol#1"]  # the remote version plays only where it connects
            assert "random, heuristic, montecarlo" in page.text and 'action="/play"' not in page.text
            assert stranger.get("/api/play").json() == {"samples": ["random", "heuristic", "montecarlo"],
                                                        "versions": ["bob#1", "carol#1"]}
        browser, csrf = logged_in(url, field.tokens["alice"])
        with contextlib.closing(browser):
            answer = deal(browser, csrf, "bob#1", "carol#1", "heuristic", seed="7")
            assert answer.status_code == 303
            seat = answer.headers["location"]
            number = int(seat.split("/")[2])
            assert seat == f"/play/{number}/" and f'href="{seat}"' in browser.get("/play").text
            assert browser.get(seat.rstrip("/")).headers["location"].endswith(seat)
            page = browser.get(seat)
            assert page.status_code == 200 and "connect-src 'self'" in page.headers["content-security-policy"]
            found = TOKEN.search(page.text)
            assert found is not None
            html = page.text
            while asked(html) != "call":
                html = browser.get(f"{seat}table", params={"since": version(html)}).text
            plain = browser.post(f"{seat}call", data={"csrf": found.group(1), "call": "lots"})
            assert plain.status_code == 303 and plain.headers["location"] == seat  # a form without the script
            seen: list[set[int]] = []
            last = play_through(browser, seat, found.group(1),
                                lambda: seen.append(set(processes_of(field.bot_folder))))
            assert f"Their records are kept by the ladder, in its folder sittings/{number:06d}." in last
            assert len(seen) == 4 and all(seen), "a process of the submitted version plays each game"
            assert len(set().union(*seen)) == sum(len(pids) for pids in seen)  # each game its own processes
            assert within(10, lambda: not processes_of(field.bot_folder))
            assert "Your sitting in play" not in browser.get("/play").text
    folder = ladder.folder / "sittings" / f"{number:06d}"
    assert audit(folder) is None
    games = sorted(ResultsStore(folder).games(), key=lambda g: g.first.rotation)
    assert len(games) == 4 and all(set(g.seats) == {PERSON, "bob#1-1", "carol#1-2", "heuristic-3"} for g in games)
    config = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["config"]
    settings = ladder.settings
    assert (config["seed"], config["time"]["deadline_ms"], config["operations"]["sandbox"]["mode"]) == (
        7, settings.deadline_ms, settings.sandbox.mode)  # the seed given, the ladder's deadline and sandbox
    assert config["rules"] == settings.rules.to_dict()
    faults = [(g.seats[f.seat], f.kind) for g in games for f in g.rounds[0].faults]
    assert faults == [(PERSON, FaultKind.ILLEGAL_CALL)]  # the call refused above; each bot made every decision itself
    assert all(len(g.rounds) == 1 for g in games)
    with ladder.session() as session:
        assert session.scalar(select(func.count()).select_from(Rating)) == 0
        assert session.scalar(select(func.count()).select_from(Block)) == 0


def test_refusals_come_in_one_sentence_and_a_seat_is_its_entrants_alone(field: Field) -> None:
    assert (SiteLimits().sittings, SiteLimits().sitting_idle_s) == (4, 1800.0)  # as docs/ladder.md says
    with serving(field.ladder, SiteLimits(logins_per_minute=1000, sittings=2)) as (url, _):
        with httpx.Client(base_url=url, timeout=30) as stranger:
            refused = stranger.post("/play", data={"opponent1": "random", "opponent2": "random",
                                                   "opponent3": "random"})
            assert refused.status_code == 403 and "log in first" in refused.text
        alice, csrf = logged_in(url, field.tokens["alice"])
        erin, erin_csrf = logged_in(url, field.tokens["erin"])
        bob, bob_csrf = logged_in(url, field.tokens["bob"])
        with contextlib.closing(alice), contextlib.closing(erin), contextlib.closing(bob):
            refused = alice.post("/play", data={"csrf": csrf, "opponent1": "random", "opponent2": "random",
                                                "opponent3": "random"}, headers={"Origin": "http://elsewhere.example"})
            assert refused.status_code == 403 and "did not come from a page of this site" in refused.text
            refused = deal(alice, csrf, "random", "sample_bots.random_bot:RandomBot", "random")
            assert refused.status_code == 400
            assert "there is no version called &#x27;sample_bots.random_bot:RandomBot&#x27;" in refused.text
            refused = deal(alice, csrf, "random", "dave#1", "random")
            assert refused.status_code == 400 and "dave#1 cannot be played against" in refused.text
            assert deal(alice, csrf, "random", "random", "random", seed="3").status_code == 303
            refused = deal(alice, csrf, "random", "random", "random")
            assert refused.status_code == 409
            assert ("you have a sitting in play already: finish it at /play/" in refused.text
                    and "before you start another" in refused.text)
            assert 'href="/play/' in refused.text
            number = re.search(r'href="/play/(\d+)/"', refused.text)
            assert number is not None
            seat = f"/play/{number.group(1)}/"
            assert erin.get(seat).status_code == 403 and "another entrant" in erin.get(seat).text
            with httpx.Client(base_url=url, timeout=30) as stranger:
                assert stranger.get(seat).status_code == 403
            assert erin.get("/play/999/").status_code == 404
            assert deal(erin, erin_csrf, "heuristic", "random", "random").status_code == 303
            refused = deal(bob, bob_csrf, "random", "random", "random")
            assert refused.status_code == 409
            assert "as many sittings are in play as the ladder holds at once (2): try again when one of them ends" \
                in refused.text
            token = TOKEN.search(alice.get(seat).text)
            assert token is not None
            plain = alice.post(f"{seat}next", data={"csrf": token.group(1)})
            assert plain.status_code == 409 and "not over yet" in plain.text
        organiser, organiser_csrf = logged_in(url, field.tokens["organiser"])
        with contextlib.closing(organiser):
            refused = deal(organiser, organiser_csrf, "random", "random", "random")
            assert refused.status_code == 403 and "the organiser plays no sitting" in refused.text


def started(browser: httpx.Client, csrf: str, *opponents: str) -> str:
    """Deals a sitting and waits until its first game is dealt (its bots launched); returns its seat's path."""
    answer = deal(browser, csrf, *opponents)
    assert answer.status_code == 303
    seat = answer.headers["location"]
    html = browser.get(f"{seat}table").text
    while "Round 1:" not in html:
        html = browser.get(f"{seat}table", params={"since": version(html)}).text
    return seat


def test_an_idle_sitting_and_a_stopped_site_stop_their_launched_bots(field: Field) -> None:
    with serving(field.ladder, SiteLimits(logins_per_minute=1000, sitting_idle_s=4.0)) as (url, _):
        browser, csrf = logged_in(url, field.tokens["erin"])
        with contextlib.closing(browser):
            seat = started(browser, csrf, "bob#1", "bob#1", "random")
            assert len(processes_of(field.bot_folder)) >= 2
            assert within(15, lambda: not processes_of(field.bot_folder))  # idle: stopped
            assert browser.get(seat).status_code == 404
    with serving(field.ladder, SiteLimits(logins_per_minute=1000)) as (url, stop):
        browser, csrf = logged_in(url, field.tokens["erin"])
        with contextlib.closing(browser):
            second = started(browser, csrf, "bob#1", "random", "random")
            assert processes_of(field.bot_folder)
            stop()
            assert within(5, lambda: not processes_of(field.bot_folder))  # the site stopped: so did its sitting
    seeds = {json.loads((field.ladder.folder / "sittings" / f"{int(path.split('/')[2]):06d}" / "manifest.json")
                        .read_text(encoding="utf-8"))["config"]["seed"] for path in (seat, second)}
    assert len(seeds) == 2  # no seed given: each drew its own


@pytest.mark.slow
def test_in_chromium_the_play_page_deals_a_sitting_whose_seat_plays_under_its_prefix(field: Field) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    errors: list[str] = []
    requests: list[str] = []
    shots = field.ladder.folder.parent / "screenshots"  # kept beside the test's ladder, their folder printed
    shots.mkdir()
    print(f"screenshots in {shots}")
    with serving(field.ladder, SiteLimits(logins_per_minute=1000)) as (url, _), \
            sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = chromium.new_page(viewport={"width": 390, "height": 844})
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("request", lambda request: requests.append(request.url))
            page.goto(f"{url}/login")
            page.fill("#token", field.tokens["bob"])
            page.click("button[type=submit]")
            page.goto(f"{url}/play")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            page.screenshot(path=str(shots / "play-phone.png"), full_page=True)
            page.set_viewport_size({"width": 1024, "height": 768})
            assert page.evaluate("document.documentElement.scrollWidth") <= 1024
            page.screenshot(path=str(shots / "play-projector.png"), full_page=True)
            page.select_option("#opponent1", "bob#1")
            page.fill("#seed", "11")
            page.click("form.ask button[type=submit]")
            page.wait_for_url(re.compile(r".*/play/\d+/$"))
            games = 0
            while True:
                page.wait_for_selector("button.card.legal, button[data-call], #next, #done")
                shown = page.get_attribute("#table", "data-version")
                if page.query_selector("#done"):
                    break
                if page.query_selector("#next"):
                    page.click("#next")
                elif page.query_selector("button[data-call]"):
                    games += 1
                    page.click("button[data-call='1']")
                else:
                    page.click("button.card.legal")
                page.wait_for_function(
                    "v => +document.getElementById('table').getAttribute('data-version') > +v", arg=shown)
            assert "kept by the ladder, in its folder sittings/" in page.inner_text("#done")
            assert games == 4
        finally:
            chromium.close()
    assert errors == []  # among them any script the policy refused
    assert requests and all(request.startswith(url) for request in requests)
