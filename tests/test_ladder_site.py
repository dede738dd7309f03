"""The ladder's site and its JSON API, served over a real socket on port 0, on a real ladder: founded in a
temporary folder, its entrants and versions made by the ladder itself, its done blocks real tournaments of four
bots whose rows (results, ratings, rating history, a test's points) are written as the service writes them.

What a page shows is read back from the HTML (escaped, security headers, no card of a block in play) and the
JSON twin is held to the same data; forms are sent as a browser sends them (cookie, CSRF field, multipart), and
``/api/submit`` as the command line sends it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import io
import json
import math
import re
import socket
import ssl
import tarfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from arena.errors import ConfigError
from arena.event.run.tournament import Tournament
from arena.event.setup.config import parse_config
from arena.ladder.blocks import outcome
from arena.ladder.control import Ladder
from arena.ladder.db import (
    Block,
    BlockKind,
    BlockResult,
    BlockState,
    Check,
    Decision,
    LadderState,
    Rating,
    RatingPoint,
    Test,
    TestKind,
    TestPoint,
    TestState,
    Version,
    VersionState,
    utc_now,
)
from arena.ladder.founding import found_ladder
from arena.ladder.queries import base, entrants, testing
from arena.ladder.queries.leaderboard import score_interval
from arena.ladder.settings import parse_settings
from arena.rating.html import write_html_report
from arena.rating.pages import style
from arena.rating.stats import mean_ci
from arena.web.ladder import COOKIE, SiteLimits, ladder_app
from tests.helpers.docs import fences_by_heading
from tests.helpers.hostile_bots import SCRIPT_DETAIL
from tests.helpers.ladder import make_ladder, serving
from tests.helpers.pages import body_rows, cells, parse
from tests.helpers.runs import RANDOM, ROOT, cli

SCRIPTED = f"{ROOT / 'tests' / 'helpers' / 'hostile_bots.py'}:Scripted"
DISPLAY = '<script>alert("name")</script>'
MAX_BYTES = 30_000
"""The ladder's submission limit in these tests (its ``[submissions] max_bytes``)."""
PER_HOUR = 5
CARD = re.compile(r'class="card|[♠♥♦♣]')
"""A card drawn on a page, or a suit symbol anywhere."""
CHROMIUM = Path("/usr/bin/chromium")

BOT = '''from arena.botkit import Bot, run


class LowestBot(Bot):
    """Calls the lowest call allowed and plays its lowest legal card."""

    name = "lowest"

    def call(self, view):
        return view.legal_calls[0]

    def play(self, view):
        return min(view.legal, key=lambda card: card.rank)


if __name__ == "__main__":
    raise SystemExit(run(LowestBot))
'''


# -- the ladder ------------------------------------------------------------------------------------


@dataclasses.dataclass
class Built:
    ladder: Ladder
    organiser: str
    tokens: dict[str, str]
    ids: dict[str, int]
    """Version label -> id."""


def _play_block(folder: Path, seats: list[str], specs: dict[str, str], seed: int) -> None:
    """A real block: a duplicate round robin of the four versions (by label) on one deal set, in ``folder``."""
    bots = "".join(f'\n[[bots]]\nname = "{label}"\npython = "{specs.get(label, RANDOM)}"\nseed = {n}\n'
                   for n, label in enumerate(seats, start=1))
    config = parse_config(f'[tournament]\nname = "block"\nseed = {seed}\ndeal_sets = 1\nformat = "round-robin"\n'
                          f'concurrency = 1\n\n[time]\ndeadline_ms = 10000\n{bots}')
    asyncio.run(asyncio.wait_for(Tournament(config, folder, fresh=True, log=lambda text: None).run(), 60))


def _build(folder: Path) -> Built:
    founded = found_ladder(folder)
    settings = folder / "ladder.toml"
    text = settings.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^max_bytes = \d+", f"max_bytes = {MAX_BYTES}", text)
    text = re.sub(r"(?m)^per_hour = \d+", f"per_hour = {PER_HOUR}", text)
    text = re.sub(r"(?m)^placement_blocks = \d+", "placement_blocks = 1", text)
    text = re.sub(r"(?m)^per_entrant = \d+", "per_entrant = 3", text)  # carol asks for two besides her own
    settings.write_text(text, encoding="utf-8")
    ladder = Ladder.open(folder)
    tokens = {}
    for name, display in (("alice", "Alice A"), ("bob", ""), ("carol", "Carol C"), ("dave", DISPLAY),
                          ("erin", "Erin E")):
        tokens[name] = ladder.add_entrant(name, display, python=RANDOM)
    tokens["gina"] = ladder.add_entrant("gina", "Gina G")  # submits through the site
    tokens["hal"] = ladder.add_entrant("hal", "Hal H")
    now = utc_now()
    with ladder.session() as session:
        versions = {v.label: v for v in session.scalars(select(Version))}
        for version in versions.values():
            version.state, version.activated = VersionState.ACTIVE, now
        ids = {label: v.id for label, v in versions.items()}
        seats = ["alice#1", "bob#1", "carol#1", "dave#1"]
        done = Block(deal_set=1, seat0=ids[seats[0]], seat1=ids[seats[1]], seat2=ids[seats[2]],
                     seat3=ids[seats[3]], state=BlockState.DONE, rated=True, kind=BlockKind.RATED, seed=11,
                     created=now - timedelta(minutes=5), started=now - timedelta(minutes=5), finished=now)
        playing = Block(deal_set=1, seat0=ids[seats[3]], seat1=ids[seats[2]], seat2=ids[seats[1]],
                        seat3=ids[seats[0]], state=BlockState.PLAYING, kind=BlockKind.TEST, seed=12,
                        created=now, started=now)
        queued = Block(deal_set=1, seat0=ids[seats[0]], seat1=ids[seats[1]], seat2=ids[seats[2]],
                       seat3=ids["erin#1"], state=BlockState.QUEUED, kind=BlockKind.PLACEMENT, seed=13)
        session.add_all([done, playing, queued])
        session.flush()
        done_id, playing_id = done.id, playing.id
    _play_block(folder / f"blocks/{done_id:06d}", seats, {"alice#1": SCRIPTED}, 11)
    # The block in play has recorded games already: the site must show none of their cards.
    _play_block(folder / f"blocks/{playing_id:06d}", seats[::-1], {}, 12)
    result = outcome(folder / f"blocks/{done_id:06d}")
    # mu, sigma: alice and bob cannot be told apart (0.5 apart, under 2.13 * sqrt(2): four versions, so each
    # comparison is judged one-sided at 1 - 0.05/3); carol is clear below; dave far below.
    ratings = {"alice#1": (30.0, 1.0, [0.0, 10.0, 20.0]), "bob#1": (29.5, 1.0, [5.0]),
               "carol#1": (20.0, 1.0, [-5.0, 5.0]), "dave#1": (10.0, 2.0, [-30.0, -20.0])}
    with ladder.session() as session:
        for label in seats:
            session.add(BlockResult(block_id=done_id, version_id=ids[label], games=len(result.games),
                                    points=result.points[label], score=result.score[label],
                                    faults=result.faults[label]))
            mu, sigma, scores = ratings[label]
            session.add(Rating(version_id=ids[label], mu=mu, sigma=sigma, games=4 * len(scores), blocks=len(scores),
                               score_sum=sum(scores), score_squares=sum(s * s for s in scores)))
            for step in range(3):
                session.add(RatingPoint(version_id=ids[label], block_id=done_id, mu=mu - 2 + step,
                                        sigma=sigma + 2 - step, at=now))
        test = Test(a=ids["bob#1"], b=ids["alice#1"], kind=TestKind.SPRT, state=TestState.DECIDED, llr=3.1,
                    decision=Decision.H1, asked_by="alice", blocks_done=2, created=now, finished=now)
        scrimmage = Test(a=ids["carol#1"], b=ids["carol#1"], kind=TestKind.SCRIMMAGE, state=TestState.RUNNING,
                         asked_by="carol", cap=5, opponents=f"{ids['alice#1']},{ids['bob#1']},{ids['dave#1']}",
                         created=now)
        session.add_all([test, scrimmage])
        session.flush()
        for n, llr, value in ((1, 1.2, 12.5), (2, 3.1, 20.0)):
            session.add(TestPoint(test_id=test.id, block_id=done_id, n=n, value=value, llr=llr, at=now))
        session.add(Check(version_id=ids["carol#1"], passed=False, check_name="plays legal cards",
                          profile="nepali", game="r1-g1-d1-p2", round=2, trick=5, hand="AS KS 2H",
                          detail="played 2H where a spade was led & it held AS <b>", stderr_tail="Traceback: <oops>"))
    return Built(ladder, founded.token, tokens, ids)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    built = _build(tmp_path_factory.mktemp("ladder") / "spring")
    yield built
    built.ladder.close()


@pytest.fixture(scope="module")
def url(built: Built) -> Iterator[str]:
    # Every test logs in from the same address: the limit on attempts has a test and a site of its own.
    with serving(built.ladder, SiteLimits(logins_per_minute=1000)) as address:
        yield address


def client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=20, follow_redirects=False)


def logged_in(url: str, token: str) -> tuple[httpx.Client, str]:
    """A browser logged in with ``token``, and the CSRF token of its forms."""
    browser = client(url)
    answer = browser.post("/login", data={"token": token})
    assert answer.status_code == 303, answer.text
    page = browser.get("/tests").text
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return browser, found.group(1)


def assert_secure(answer: httpx.Response) -> None:
    headers = answer.headers
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["x-frame-options"] == "DENY"


# -- the leaderboard -------------------------------------------------------------------------------


def test_the_leaderboard_ranks_by_ordinal_with_rank_ranges_intervals_and_placement_apart(url: str) -> None:
    with client(url) as browser:
        answer = browser.get("/api/leaderboard")
        assert answer.status_code == 200
        assert_secure(answer)
        board = answer.json()
    ranked = [entry for entry in board if entry["rank"] is not None]
    assert [e["version"] for e in ranked] == ["alice#1", "bob#1", "carol#1", "dave#1"]
    for entry in board:
        assert {"entrant", "version", "games", "ordinal", "mu", "sigma", "duplicate_score", "interval", "rank",
                "rank_range", "tie"} <= set(entry)
    alice, bob, carol, dave = ranked
    # rank: the place by ordinal; rank_range: the ranks it could hold at 95 %; tie: its order with the one above
    # may be luck.
    assert (alice["rank"], alice["rank_range"], alice["tie"]) == (1, [1, 2], False)
    assert (bob["rank"], bob["rank_range"], bob["tie"]) == (2, [1, 2], True)  # 0.5 < 2.13 * sqrt(1 + 1)
    assert (carol["rank"], carol["rank_range"], carol["tie"]) == (3, [3, 3], False)
    assert (dave["rank"], dave["rank_range"], dave["tie"]) == (4, [4, 4], False)
    assert alice["ordinal"] == pytest.approx(27.0) and alice["mu"] == 30.0 and alice["sigma"] == 1.0
    assert alice["games"] == 12 and alice["entrant"] == "alice" and alice["display"] == "Alice A"
    # Points per game: the mean block score / 10, its interval the t interval of the block scores.
    assert alice["duplicate_score"] == pytest.approx(1.0)
    expected = mean_ci([0.0, 10.0, 20.0])
    assert alice["interval"] == pytest.approx([expected.low / 10, expected.high / 10])
    assert bob["interval"] is None  # one block: no interval
    assert dave["duplicate_score"] == pytest.approx(-2.5)
    # The active versions without a rated block are listed apart, unranked; a revoked entrant's not at all.
    apart = {e["version"]: e for e in board if e["rank"] is None}
    assert set(apart) == {"erin#1"} and apart["erin#1"]["placement"] and apart["erin#1"]["ordinal"] is None
    assert apart["erin#1"]["rank_range"] is None


def test_the_score_interval_from_sums_is_mean_ci_of_the_scores() -> None:
    for scores in ([1.0, 2.0, 4.0, 8.0], [-3.0, 3.0], [5.0, 5.0, 5.0]):
        ours = score_interval(len(scores), sum(scores), sum(s * s for s in scores))
        theirs = mean_ci(scores)
        assert (ours.mean, ours.low, ours.high) == pytest.approx((theirs.mean, theirs.low, theirs.high))
    assert math.isinf(score_interval(1, 4.0, 16.0).high)


def test_the_leaderboard_page_shows_the_same_ranks_and_escapes_names(url: str) -> None:
    with client(url) as browser:
        answer = browser.get("/")
    assert answer.status_code == 200
    assert_secure(answer)
    assert "<script>alert" not in answer.text and "&lt;script&gt;alert(&quot;name&quot;)" in answer.text
    root = parse(answer.text)
    tables = root.all("table", "board")
    assert len(tables) == 1
    rows = [cells(row) for row in body_rows(tables[0])]
    assert [row[0] for row in rows] == ["1-2", "1-2", "3", "4"]
    assert rows[0][1].startswith("Alice A") and "alice#1" in rows[0][1]
    assert rows[0][2] == "27.00"
    placement = root.by_id("placement")
    assert "Erin E" in placement.text() and "0 of 1" in placement.text()
    # The page's one script is the one its policy allows; it reloads the board for a projector.
    scripts = root.all("script")
    assert len(scripts) == 1 and "location.reload" in scripts[0].text()
    assert root.all("body")[0].attrs.get("data-refresh") == "30"


# -- logging in ------------------------------------------------------------------------------------


def test_a_good_token_logs_in_with_a_strict_http_only_cookie_and_a_bad_one_does_not(url: str, built: Built) -> None:
    with client(url) as browser:
        answer = browser.post("/login", data={"token": built.tokens["alice"]})
        assert answer.status_code == 303 and answer.headers["location"] == "/entrants/alice"
        assert_secure(answer)
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=")
        flags = {part.strip().lower() for part in cookie.split(";")[1:]}
        assert {"httponly", "samesite=strict", "path=/"} <= flags
        assert "secure" not in flags  # plain http; over https it is Secure (below)
        assert "Log out" in browser.get("/").text
        assert browser.get("/submit").status_code == 200
    with client(url) as browser:
        answer = browser.post("/login", data={"token": "not-a-token"})
        assert answer.status_code == 401 and "set-cookie" not in answer.headers
        assert "admits nobody" in answer.text
        assert browser.get("/submit").headers.get("location") == "/login"


def test_over_https_the_cookie_is_secure(built: Built) -> None:
    async def go() -> str:
        transport = httpx.ASGITransport(app=ladder_app(built.ladder))
        async with httpx.AsyncClient(transport=transport, base_url="https://ladder.example") as browser:
            answer = await browser.post("/login", data={"token": built.tokens["bob"]})
            assert answer.status_code == 303
            return answer.headers["set-cookie"]

    flags = {part.strip().lower() for part in asyncio.run(go()).split(";")[1:]}
    assert {"secure", "httponly", "samesite=strict", "path=/"} <= flags


def test_with_its_tls_files_the_site_speaks_https_only_and_its_cookie_is_secure(tmp_path: Path, built: Built) -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    cert, key, trusted = tmp_path / "site.pem", tmp_path / "site.key", tmp_path / "ca.pem"
    cert.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
    issued.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(trusted))
    with serving(built.ladder, tls=(cert, key)) as address:
        assert address.startswith("https://")
        trusting = ssl.create_default_context(cafile=str(trusted))
        with httpx.Client(base_url=address, verify=trusting, timeout=20) as browser:
            answer = browser.post("/login", data={"token": built.tokens["bob"]})
            assert answer.status_code == 303
            assert "secure" in answer.headers["set-cookie"].lower()
            assert browser.get("/api/leaderboard").status_code == 200
        with pytest.raises(httpx.HTTPError):  # plain HTTP to the TLS port gets no page
            httpx.get(address.replace("https://", "http://") + "/healthz", timeout=5)
    with pytest.raises(ConfigError, match="TLS"), serving(built.ladder, tls=(cert, tmp_path / "missing.key")):
        pass


def test_behind_its_proxy_the_site_limits_each_forwarded_client_and_believes_no_one_else(built: Built) -> None:
    def attempts(address: str, client_address: str) -> list[int]:
        with client(address) as browser:
            headers = {"X-Forwarded-For": client_address, "X-Forwarded-Proto": "https"}
            return [browser.post("/login", data={"token": f"wrong-{n}"}, headers=headers).status_code
                    for n in range(3)]

    limits = SiteLimits(logins_per_minute=2)
    with serving(built.ladder, limits, proxy="127.0.0.1") as address:
        assert attempts(address, "203.0.113.7") == [401, 401, 429]
        # another student behind the same proxy is not turned away for it, and gets a Secure cookie
        with client(address) as browser:
            answer = browser.post("/login", data={"token": built.tokens["bob"]},
                                  headers={"X-Forwarded-For": "203.0.113.8", "X-Forwarded-Proto": "https"})
            assert answer.status_code == 303 and "secure" in answer.headers["set-cookie"].lower()
        # Its forms come from the site's https pages: their Origin is the site's own only as the proxy forwards it.
        cookie = {"Cookie": answer.headers["set-cookie"].split(";")[0]}
        forwarded = {"X-Forwarded-For": "203.0.113.8", "X-Forwarded-Proto": "https", **cookie}
        with client(address) as browser:
            found = re.search(r'name="csrf" value="([^"]+)"', browser.get("/tests", headers=forwarded).text)
            assert found is not None
            form = {"csrf": found.group(1), "a": "bob#1", "b": "nobody#1"}
            origin = {"Origin": address.replace("http:", "https:")}
            answer = browser.post("/tests", data=form, headers={**forwarded, **origin})
            assert answer.status_code == 400 and "nobody#1" in answer.text  # taken, and answered in words
            answer = browser.post("/tests", data=form, headers={**forwarded, **origin, "X-Forwarded-Proto": "http"})
            assert answer.status_code == 403 and "did not come from a page of this site" in answer.text
    with serving(built.ladder, limits, proxy="192.0.2.1") as address:
        # the header comes from an address that is not the proxy: every attempt counts against 127.0.0.1
        assert attempts(address, "203.0.113.9") == [401, 401, 429]
        assert attempts(address, "203.0.113.10") == [429, 429, 429]


def test_login_attempts_are_limited_per_address(built: Built) -> None:
    with serving(built.ladder, SiteLimits(logins_per_minute=3)) as address, client(address) as browser:
        # a class behind one address: good tokens, however many, are never turned away
        good = [browser.post("/login", data={"token": built.tokens[name]}).status_code
                for name in ("alice", "bob", "alice", "bob", "alice")]
        assert good == [303] * 5
        codes = [browser.post("/login", data={"token": f"wrong-{n}"}).status_code for n in range(3)]
        assert codes == [401, 401, 401]
        refused = browser.post("/login", data={"token": built.tokens["alice"]})  # even a good one, now
        assert refused.status_code == 429 and "too many login attempts" in refused.text
        assert "set-cookie" not in refused.headers
        assert_secure(refused)
        api = browser.post("/api/submit", headers={"Authorization": f"Bearer {built.tokens['gina']}"},
                           files={"file": ("bot.py", BOT.encode())})
        assert api.status_code == 429 and "too many" in api.json()["error"]


def test_a_form_without_its_csrf_token_is_refused(url: str, built: Built) -> None:
    browser, csrf = logged_in(url, built.tokens["alice"])
    with contextlib.closing(browser):
        for data in ({}, {"csrf": "forged"}):
            answer = browser.post("/logout", data=data)
            assert answer.status_code == 403 and "CSRF" in answer.text
            answer = browser.post("/tests", data={**data, "a": "bob#1", "b": "alice#1"})
            assert answer.status_code == 403
            answer = browser.post("/submit", data=data, files={"file": ("bot.py", BOT.encode())})
            assert answer.status_code == 403
        other, others_csrf = logged_in(url, built.tokens["bob"])
        other.close()
        assert browser.post("/logout", data={"csrf": others_csrf}).status_code == 403  # another login's token
        answer = browser.post("/logout", data={"csrf": csrf}, headers={"Origin": "https://elsewhere.example"})
        assert answer.status_code == 403  # the right token, sent by a page of another site
        answer = browser.post("/logout", data={"csrf": csrf}, headers={"Origin": url.replace("http:", "https:")})
        assert answer.status_code == 403  # this site's host and port under another scheme: another origin
        assert browser.get("/submit").status_code == 200  # still logged in
        answer = browser.post("/logout", data={"csrf": csrf}, headers={"Origin": url})
        assert answer.status_code == 303
        assert browser.get("/submit").headers.get("location") == "/login"
    with client(url) as stranger:  # no login at all
        assert stranger.post("/tests", data={"a": "bob#1", "b": "alice#1"}).status_code == 403


def test_the_finals_report_is_served_with_the_security_of_a_page_without_forms(built: Built, tmp_path: Path) -> None:
    """The final's report.html runs its own script, which its answer's policy names by its hash; it has no form and
    sends no referrer, and no page may frame it, as every page of the arena."""
    ladder = make_ladder(tmp_path / "ladder")
    try:
        report = base.final_report(ladder.folder)
        report.parent.mkdir(parents=True, exist_ok=True)
        write_html_report(built.ladder.folder / "blocks" / "000001", out=report)
        with ladder.session() as session:
            state = session.get(LadderState, 1)
            assert state is not None
            state.final_state = "done"

        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=ladder_app(ladder))
            async with httpx.AsyncClient(transport=transport, base_url="http://ladder.example") as browser:
                return await browser.get("/final")

        answer = asyncio.run(go())
    finally:
        ladder.close()
    script = re.search(r"<script>(.*)</script>", answer.text, re.S)
    assert answer.status_code == 200 and script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    policy = answer.headers["content-security-policy"]
    assert f"script-src 'sha256-{digest}'" in policy and "default-src 'none'" in policy
    assert "form-action 'none'" in policy and "frame-ancestors 'none'" in policy and "base-uri 'none'" in policy
    assert answer.headers["referrer-policy"] == "no-referrer" and answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["x-content-type-options"] == "nosniff" and answer.headers["cache-control"] == "no-store"


# -- submissions -----------------------------------------------------------------------------------


def test_the_submit_page_names_the_rules_profile_a_check_plays(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", profile='"master"')
    try:
        token = ladder.add_entrant("ada", "Ada A")

        async def go() -> str:
            transport = httpx.ASGITransport(app=ladder_app(ladder))
            async with httpx.AsyncClient(transport=transport, base_url="http://ladder.example") as browser:
                assert (await browser.post("/login", data={"token": token})).status_code == 303
                return (await browser.get("/submit")).text

        note = " ".join(parse(asyncio.run(go())).all("p", "note")[0].text().split())
    finally:
        ladder.close()
    assert ladder.settings.rules.profile_name == "master"  # what checking.check_version plays
    assert "under the ladder's rules, the master profile" in note and "every rule" not in note


def _version_count(built: Built, label_start: str) -> int:
    with built.ladder.session() as session:
        return sum(1 for label in session.scalars(select(Version.label)) if label.startswith(label_start))


def test_uploads_through_the_form_and_the_api_refusals_in_words_and_the_hourly_limit(url: str, built: Built) -> None:
    browser, csrf = logged_in(url, built.tokens["gina"])
    with contextlib.closing(browser):
        page = browser.get("/submit")
        assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.text
        answer = browser.post("/submit", data={"csrf": csrf}, files={"file": ("lowest.py", BOT.encode())})
        assert answer.status_code == 303 and answer.headers["location"] == "/entrants/gina"
        mine = browser.get("/entrants/gina").text
        assert "gina#1" in mine and "submitted" in mine
        # A refused archive: the form again, with why, in words.
        packed = io.BytesIO()
        with tarfile.open(fileobj=packed, mode="w:gz") as archive:
            data = BOT.encode()
            info = tarfile.TarInfo("bot.py")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
            link = tarfile.TarInfo("elsewhere")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
            archive.addfile(link)
        answer = browser.post("/submit", data={"csrf": csrf}, files={"file": ("mybot.tar.gz", packed.getvalue())})
        assert answer.status_code == 400
        assert "which is a link" in answer.text and 'name="file"' in answer.text
        assert _version_count(built, "gina#") == 1
    # The command line's way: a bearer token, the file in the field "file", JSON back.
    with client(url) as cli:
        headers = {"Authorization": f"Bearer {built.tokens['gina']}"}
        answer = cli.post("/api/submit", headers=headers, files={"file": ("lowest.py", (BOT + "# 2\n").encode())})
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"version": "gina#2", "state": "submitted", "page": "/entrants/gina"}
        assert_secure(answer)
        same = cli.post("/api/submit", headers=headers, files={"file": ("lowest.py", (BOT + "# 2\n").encode())})
        assert same.status_code == 400 and "same bot" in same.json()["error"]
        wrong = cli.post("/api/submit", headers={"Authorization": "Bearer nobody"},
                         files={"file": ("lowest.py", BOT.encode())})
        assert wrong.status_code == 401 and "error" in wrong.json()
        bare = cli.post("/api/submit", files={"file": ("lowest.py", BOT.encode())})
        assert bare.status_code == 401
        organiser = cli.post("/api/submit", headers={"Authorization": f"Bearer {built.organiser}"},
                             files={"file": ("lowest.py", BOT.encode())})
        assert organiser.status_code == 401
        answer = cli.post("/api/submit", headers=headers, files={"file": ("lowest.py", (BOT + "# 3\n").encode())})
        assert answer.status_code == 200 and answer.json()["version"] == "gina#3"
        # PER_HOUR uploads in the last hour, the two refused ones among them: the next is refused with 429 and
        # when it may come.
        answer = cli.post("/api/submit", headers=headers, files={"file": ("lowest.py", (BOT + "# 4\n").encode())})
        assert answer.status_code == 429 and "(2 of them refused)" in answer.json()["error"]
        assert "minute" in answer.json()["error"]
    assert _version_count(built, "gina#") == PER_HOUR - 2


def _raw(url: str, head: bytes, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """A request sent over a socket as it is, and the answer read until the site closes the connection."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=20) as conn:
        conn.sendall(head + body)
        received = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := conn.recv(65536):
                received += chunk
    top, _, rest = received.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, rest


def test_bodies_past_the_limit_are_refused_before_they_are_parsed(url: str, built: Built) -> None:
    token = built.tokens["hal"]
    # Declared too large: refused from its Content-Length, none of it read.
    code, headers, body = _raw(url, (f"POST /api/submit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                                     "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000000\r\n"
                                     "\r\n").encode())
    assert code == 413 and "at most 30,000 bytes" in json.loads(body)["error"]
    assert headers["x-frame-options"] == "DENY" and "default-src 'none'" in headers["content-security-policy"]
    with client(url) as cli:
        # A little too large: read to its end (so that a client sending it all sees the answer), then refused.
        big = b"#" * (MAX_BYTES * 4)
        answer = cli.post("/api/submit", headers={"Authorization": f"Bearer {token}"},
                          files={"file": ("big.py", big)})
        assert answer.status_code == 413 and "at most 30,000 bytes" in answer.json()["error"]

        # With no length given (chunked), it is counted as it streams and cut off at the limit.
        def chunks() -> Iterator[bytes]:
            yield b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.py\"\r\n\r\n"
            for _ in range(12):
                yield b"#" * 10_000

        answer = cli.post("/api/submit", headers={"Authorization": f"Bearer {token}",
                                                  "Content-Type": "multipart/form-data; boundary=b"},
                          content=chunks())
        assert answer.status_code == 413
        # Beyond the file limit but within the form's slack: the ladder's own refusal, in words.
        answer = cli.post("/api/submit", headers={"Authorization": f"Bearer {token}"},
                          files={"file": ("big.py", b"#" * (MAX_BYTES + 1))})
        assert answer.status_code == 400 and "30,001 bytes" in answer.json()["error"]
        # Any other form is small.
        answer = cli.post("/login", content=b"token=" + b"x" * (70 << 10),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert answer.status_code == 413 and "Too large" in answer.text
    assert _version_count(built, "hal#") == 0


def test_a_body_that_never_arrives_whole_is_ended(built: Built) -> None:
    limits = SiteLimits(head_s=0.3, form_s=1.0)
    with serving(built.ladder, limits) as address:
        host, port = address.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                         b"Content-Length: 100\r\n\r\ntoken=abc")
            started = time.monotonic()
            received = b""
            with contextlib.suppress(ConnectionResetError):
                while chunk := conn.recv(4096):
                    received += chunk
            assert time.monotonic() - started < 5
        assert received.startswith(b"HTTP/1.1 408") and b"did not arrive whole within 1 seconds" in received


# -- games and blocks ------------------------------------------------------------------------------


def _block_ids(built: Built) -> dict[BlockState, int]:
    with built.ladder.session() as session:
        return {block.state: block.id for block in session.scalars(select(Block))}


def test_a_game_of_a_done_block_is_replayed_card_by_card(url: str, built: Built) -> None:
    done = _block_ids(built)[BlockState.DONE]
    with client(url) as browser:
        listing = browser.get(f"/blocks/{done}")
        assert listing.status_code == 200
        games = re.findall(rf'href="/games/{done}/([^"]+)"', listing.text)
        assert len(set(games)) == 4
        data = browser.get(f"/api/blocks/{done}").json()
        assert [g["game"] for g in data["games"]] == sorted(set(games), key=games.index)
        assert {r["version"]["version"] for r in data["results"]} == {"alice#1", "bob#1", "carol#1", "dave#1"}
        page = browser.get(f"/games/{done}/{games[0]}")
        assert page.status_code == 200
        assert_secure(page)
        replay = browser.get(f"/api/games/{done}/{games[0]}").json()
    root = parse(page.text)
    first = replay["rounds"][0]
    assert len(first["hands"]) == 4 and all(len(hand["cards"]) == 13 for hand in first["hands"])
    assert len(first["tricks"]) == 13
    tricks = root.all("table", "tricks")
    assert len(tricks) == len(replay["rounds"])
    assert len(root.all("span", "card")) == sum(52 + 52 for _ in replay["rounds"])  # the hands and the tricks
    assert len(root.all("span", "win")) == 13 * len(replay["rounds"])
    # The fault of the bot whose error is markup: shown where it happened, escaped.
    assert SCRIPT_DETAIL not in page.text and "&lt;script&gt;alert(&quot;detail&quot;)" in page.text
    assert any(f["kind"] == "crash" and f["trick"] == 1 for f in first["faults"])


def test_a_block_in_play_shows_no_card_anywhere(url: str, built: Built) -> None:
    playing = _block_ids(built)[BlockState.PLAYING]
    queued = _block_ids(built)[BlockState.QUEUED]
    recorded = [line["game"] for line in map(json.loads, (built.ladder.folder / f"blocks/{playing:06d}" /
                                                          "records.jsonl").read_text().splitlines())]
    assert recorded  # its folder holds games already
    with client(url) as browser:
        for block in (playing, queued):
            for path in (f"/games/{block}/{recorded[0]}", f"/api/games/{block}/{recorded[0]}"):
                answer = browser.get(path)
                assert answer.status_code == 404
                assert "shown once it is done" in answer.text and not CARD.search(answer.text)
            answer = browser.get(f"/blocks/{block}")
            assert answer.status_code == 200 and not CARD.search(answer.text) and "/games/" not in answer.text
            assert browser.get(f"/api/blocks/{block}").json()["games"] == []
        now = browser.get("/playing")
        assert now.status_code == 200 and not CARD.search(now.text)
        assert "dave#1" in now.text and "test" in now.text
        data = browser.get("/api/playing")
        assert not CARD.search(data.text)
        blocks = data.json()["blocks"]
        assert [b["id"] for b in blocks] == [playing]
        assert [s["version"] for s in blocks[0]["seats"]] == ["dave#1", "carol#1", "bob#1", "alice#1"]
        assert data.json()["queued"] == 1
        # Nor does the entrants' list of games name it.
        assert f"/games/{playing}/" not in browser.get("/entrants/alice").text


# -- entrants --------------------------------------------------------------------------------------


def test_the_entrant_page_escapes_the_display_name_and_shows_checks_games_and_faults(url: str, built: Built) -> None:
    done = _block_ids(built)[BlockState.DONE]
    with client(url) as browser:
        dave = browser.get("/entrants/dave")
        assert dave.status_code == 200
        assert "<script>alert" not in dave.text and "&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;" in dave.text
        public = browser.get("/entrants/carol").text
        public_data = browser.get("/api/entrants/carol").json()
        alice = browser.get("/entrants/alice")
        data = browser.get("/api/entrants/alice").json()
        missing = browser.get("/entrants/nobody")
        assert missing.status_code == 404 and "no entrant called &#x27;nobody&#x27;" in missing.text
        assert browser.get("/api/entrants/nobody").status_code == 404
    own, _ = logged_in(url, built.tokens["carol"])
    with contextlib.closing(own):
        carol = own.get("/entrants/carol").text
        carol_data = own.get("/api/entrants/carol").json()
    # Where the failed check happened, for everyone; its detail, the hand and the stderr tail in a <pre>, escaped,
    # for carol alone.
    for seen in (carol_data, public_data):
        check = seen["versions"][0]["checks"][0]
        assert (check["check_name"], check["game"], check["round"], check["trick"]) == ("plays legal cards",
                                                                                       "r1-g1-d1-p2", 2, 5)
    for page in (carol, public):
        assert "failed</b>: plays legal cards" in page and "round 2" in page and "trick 5" in page
    assert '<pre class="stderr">Traceback: &lt;oops&gt;</pre>' in carol and "&amp; it held AS &lt;b&gt;" in carol
    assert "AS KS 2H" in carol and carol_data["versions"][0]["checks"][0]["stderr_tail"] == "Traceback: <oops>"
    assert "oops" not in public and "it held" not in public and "AS KS 2H" not in public
    hidden = public_data["versions"][0]["checks"][0]
    assert (hidden["detail"], hidden["hand"], hidden["stderr_tail"]) == (None, None, None)
    assert "shown to carol and the organiser" in public
    # Its version's memory test over its done block (one deal set: its first game and three later ones, no test yet).
    memory = data["versions"][0]["memory_test"]
    assert set(memory) == {"first", "later", "difference", "interval", "p", "flagged"}
    assert memory["first"] is not None and memory["later"] is not None and memory["p"] is None
    assert memory["flagged"] is False and "one deal set: no test yet" in data["versions"][0]["memory"]
    assert "Memory test: first games" in alice.text
    # Its version's rank range on the leaderboard, as the leaderboard gives it.
    assert data["versions"][0]["rank_range"] == [1, 2] and data["versions"][0]["ranked"] == 4
    assert "Rank <b>1-2</b> of 4 on the leaderboard" in alice.text
    # The rating over time, the recent games (each a link to its page), the faults where they happened.
    root = parse(alice.text)
    assert root.by_id("rating").all("svg")
    assert len(data["ratings"][0]["marks"]) == 3
    assert len(data["games"]) == 4 and all(g["block_id"] == done for g in data["games"])
    links = {node.attrs.get("href") for node in root.by_id("games").all("a")}
    assert {f"/games/{done}/{g['game']}" for g in data["games"]} <= links
    faults = data["faults"]
    assert faults and all(f["kind"] == "crash" and f["version"] == "alice#1" for f in faults)
    assert {f["trick"] for f in faults} == {1} and {f["round"] for f in faults} >= {1}
    shown = root.by_id("faults").text()
    assert "round 1, trick 1" in shown and SCRIPT_DETAIL not in alice.text


# -- tests -----------------------------------------------------------------------------------------


def test_tests_show_their_llr_bounds_and_decision_and_an_entrant_asks_for_one(url: str, built: Built) -> None:
    with client(url) as browser:
        tests = browser.get("/api/tests").json()
        sprt = next(t for t in tests if t["kind"] == "sprt")
        scrimmage = next(t for t in tests if t["kind"] == "scrimmage")
        assert sprt["lower"] == pytest.approx(math.log(0.05 / 0.95))
        assert sprt["upper"] == pytest.approx(math.log(0.95 / 0.05))
        assert (sprt["llr"], sprt["decision"], sprt["state"]) == (3.1, "H1", "decided")
        assert [o["version"] for o in scrimmage["opponents"]] == ["alice#1", "bob#1", "dave#1"]
        assert scrimmage["llr"] is None
        page = browser.get(f"/tests/{sprt['id']}")
        assert page.status_code == 200 and "H1" in page.text and "−2.94" not in page.text
        assert parse(page.text).all("svg")
        detail = browser.get(f"/api/tests/{sprt['id']}").json()
        # One block has no spread, so no LLR: it starts at the second block.
        assert [m["llr"] for m in detail["marks"]] == [None, 3.1] and detail["marks"][0]["value"] == 1.25
    browser, csrf = logged_in(url, built.tokens["carol"])
    with contextlib.closing(browser):
        refused = browser.post("/tests", data={"csrf": csrf, "a": "alice#1", "b": "bob#1"})
        assert refused.status_code == 400 and "one of your own versions" in refused.text
        asked = browser.post("/tests", data={"csrf": csrf, "a": "alice#1", "b": "carol#1"})
        assert asked.status_code == 303
        test_id = int(asked.headers["location"].rsplit("/", 1)[1])
        scrim = browser.post("/scrimmages", data={"csrf": csrf, "version": "carol#1", "opponent1": "alice#1",
                                                  "opponent2": "bob#1", "opponent3": "dave#1", "blocks": "2"})
        assert scrim.status_code == 303
    with built.ladder.session() as session:
        test = session.get(Test, test_id)
        assert test is not None and (test.a, test.b, test.asked_by) == (built.ids["alice#1"], built.ids["carol#1"],
                                                                        "carol")


# -- the organiser ---------------------------------------------------------------------------------


def test_the_organiser_page_is_the_organisers_alone(url: str, built: Built) -> None:
    with client(url) as stranger:
        assert stranger.get("/organiser").status_code == 403
        assert stranger.get("/api/organiser").status_code == 403
    entrant, csrf = logged_in(url, built.tokens["bob"])
    with contextlib.closing(entrant):
        assert entrant.get("/organiser").status_code == 403
        assert entrant.post("/organiser/pause", data={"csrf": csrf}).status_code == 403
    with built.ladder.session() as session:
        state = session.get(LadderState, 1)
        assert state is not None and not state.paused
    organiser, csrf = logged_in(url, built.organiser)
    with contextlib.closing(organiser):
        page = organiser.get("/organiser")
        assert page.status_code == 200 and "Pause" in page.text and 'href="/final"' not in page.text
        assert organiser.post("/organiser/pause", data={"csrf": "forged"}).status_code == 403
        answer = organiser.post("/organiser/pause", data={"csrf": csrf})
        assert answer.status_code == 303 and answer.headers["location"] == "/organiser"
        with built.ladder.session() as session:
            state = session.get(LadderState, 1)
            assert state is not None and state.paused
        assert "The ladder is paused" in organiser.get("/").text
        data = organiser.get("/api/organiser").json()
        assert data["state"]["paused"] is True and {e["name"] for e in data["entrants"]} >= {"alice", "dave"}
        # The pair report of the done blocks: one block, where every pair sat together, so nothing to compare.
        assert "Pair report" in page.text and data["pair_lines"][0].startswith("Over the newest 1 done")
        bad = organiser.post("/organiser/final", data={"csrf": csrf, "deal_sets": "many"})
        assert bad.status_code == 400 and "whole number" in bad.text
        assert organiser.post("/organiser/resume", data={"csrf": csrf}).status_code == 303
        assert organiser.get("/final").status_code == 404
    with built.ladder.session() as session:
        state = session.get(LadderState, 1)
        assert state is not None and not state.paused
    with client(url) as cli:
        assert cli.get("/api/organiser", headers={"Authorization": f"Bearer {built.organiser}"}).status_code == 200
        assert cli.get("/api/organiser",
                       headers={"Authorization": f"Bearer {built.tokens['bob']}"}).status_code == 403


def test_every_answer_carries_the_security_headers_and_health_is_ok(url: str) -> None:
    with client(url) as browser:
        health = browser.get("/healthz")
        assert (health.status_code, health.text) == (200, "ok")
        for answer in (health, browser.get("/nowhere"), browser.get("/api/nowhere"), browser.delete("/"),
                       browser.get("/blocks/999"), browser.get("/api/tests/999")):
            assert_secure(answer)
        assert browser.get("/api/nowhere").json() == {"error": "there is no page at /api/nowhere"}
        assert browser.get("/blocks/999").status_code == 404


# -- the docs --------------------------------------------------------------------------------------


LADDER_DOC = ROOT / "docs" / "ladder.md"


def _example(heading: str) -> Any:
    """The JSON example under ``heading`` in docs/ladder.md (a ``, ...`` after a list's element left out)."""
    [fence] = [f for f in fences_by_heading(LADDER_DOC)[heading] if f.language == "json"]
    return json.loads(re.sub(r",\s*\.\.\.", "", fence.text))


def _unlike(answer: Any, example: Any, where: str = "") -> list[str]:
    """Where ``answer`` and ``example`` differ in their keys: every key of an answer is in the example, and every
    key of the example is in the answer, at each level (each element of a list against the example's first)."""
    if isinstance(answer, dict) and isinstance(example, dict):
        found = [f"{where}.{key}: not in docs/ladder.md" for key in answer.keys() - example.keys()]
        found += [f"{where}.{key}: not in the answer" for key in example.keys() - answer.keys()]
        return found + [line for key in answer.keys() & example.keys()
                        for line in _unlike(answer[key], example[key], f"{where}.{key}")]
    if isinstance(answer, list) and isinstance(example, list) and example:
        return [line for element in answer for line in _unlike(element, example[0], f"{where}[]")]
    return []


def test_docs_ladder_md_shows_every_field_of_every_json_answer(url: str, built: Built) -> None:
    ids = _block_ids(built)
    done = ids[BlockState.DONE]
    organiser, _ = logged_in(url, built.organiser)  # the entrants' checks in full, as their own pages show them
    with contextlib.closing(organiser):
        game = organiser.get(f"/api/blocks/{done}").json()["games"][0]["game"]
        tests = organiser.get("/api/tests").json()
        answers = {
            "`GET /api/leaderboard`": ["/api/leaderboard"],
            "`GET /api/entrants/NAME`": ["/api/entrants/alice", "/api/entrants/carol", "/api/entrants/gina"],
            "`GET /api/blocks/ID`": [f"/api/blocks/{done}", f"/api/blocks/{ids[BlockState.PLAYING]}",
                                     f"/api/blocks/{ids[BlockState.QUEUED]}"],
            "`GET /api/games/BLOCK/GAME`": [f"/api/games/{done}/{game}"],
            "`GET /api/playing`": ["/api/playing"],
            "`GET /api/tests`": ["/api/tests"],
            "`GET /api/tests/ID`": [f"/api/tests/{t['id']}" for t in tests],
            "`GET /api/organiser`": ["/api/organiser"],
            "`GET /api/play`": ["/api/play"],
        }
        unlike = []
        for heading, paths in answers.items():
            for path in paths:
                answer = organiser.get(path)
                assert answer.status_code == 200, path
                unlike += [f"{path}{line}" for line in _unlike(answer.json(), _example(heading))]
        assert unlike == []
        assert set(organiser.get("/api/blocks/999").json()) == {"error"}
    # What the fixture has none of, held by the types the answers are made from.
    entrant, detail = _example("`GET /api/entrants/NAME`"), _example("`GET /api/tests/ID`")
    assert set(entrant["notes"][0]) == {f.name for f in dataclasses.fields(entrants.BlockNote)}
    assert set(detail["blocks"][0]) == {f.name for f in dataclasses.fields(testing.BlockLine)}
    assert all(isinstance(n, int) for n in entrant["unreadable"])


FORM_TEMPLATES = [*sorted((ROOT / "arena" / "web" / "templates").glob("ladder_*.html")),
                  ROOT / "arena" / "web" / "templates" / "seat_table.html"]
"""The templates of the site's pages that hold forms: the ladder's, and a sitting's table."""


def _forms_table() -> dict[str, str]:
    """docs/ladder.md's table of the site's forms: each ``POST /path`` of a row -> the row."""
    rows = [line for line in LADDER_DOC.read_text(encoding="utf-8").splitlines()
            if line.startswith("| ") and "`POST /" in line]
    return {action: row for row in rows for action in re.findall(r"`POST (/[^`]+)`", row)}


def test_docs_ladder_md_names_every_field_of_every_form(url: str, built: Built) -> None:
    table = _forms_table()
    seen: dict[str, set[str]] = {}
    pages = {built.organiser: ["/", "/organiser", "/tests", "/play"],
             built.tokens["gina"]: ["/submit", "/entrants/gina", "/tests", "/play"]}
    with client(url) as anonymous:
        forms = parse(anonymous.get("/login").text).all("form")
    for token, paths in pages.items():
        browser, _ = logged_in(url, token)
        with contextlib.closing(browser):
            forms += [form for path in paths for form in parse(browser.get(path).text).all("form")]
    for form in forms:
        names = {n.attrs["name"] or "" for n in form.walk() if n.attrs.get("name")}
        seen.setdefault(str(form.attrs["action"]), set()).update(names)
    assert {"/login", "/logout", "/submit", "/bot-token", "/tests", "/scrimmages", "/play", "/organiser/pause",
            "/organiser/freeze", "/organiser/final", "/organiser/revoke", "/organiser/stop-test"} <= set(seen)
    missing = [f"{action}: the row of docs/ladder.md's forms" for action in seen if action not in table]
    missing += [f"{action}: {name}" for action, names in seen.items() if action in table
                for name in sorted(names) if f"`{name}`" not in table[action]]
    # A field of a form the pages above do not show (a sitting's), named in some row.
    assert {"ladder_login.html", "ladder_play.html", "seat_table.html"} <= {t.name for t in FORM_TEMPLATES}
    literal = {name for template in FORM_TEMPLATES
               for name in re.findall(r'<(?:input|select|button|textarea)[^>]*\bname="([^"{]+)"',
                                      template.read_text(encoding="utf-8"))}
    missing += [f"a field {name}" for name in sorted(literal) if not any(f"`{name}`" in r for r in table.values())]
    assert missing == []


def test_docs_ladder_md_gives_the_range_a_key_of_ladder_toml_is_held_to(tmp_path: Path) -> None:
    """Each ``(at least N)`` or ``(N to M)`` of the ladder.toml table: N is taken and what is past it refused."""
    rows = re.findall(r"^\| `\[(\w+)\] (\w+)` \| [^|]* \| (.*) \|$", LADDER_DOC.read_text(encoding="utf-8"), re.M)
    claims = [(table, key, int(least or low), int(high) if high else None) for table, key, meaning in rows
              for least, low, high in re.findall(r"\((?:at least (\d+)|(\d+) to (\d+))[;)]", meaning)]
    assert ("tests", "burn_in", 2, None) in claims
    for table, key, low, high in claims:
        for value, taken in ((low, True), (low - 1, False), *(((high, True), (high + 1, False)) if high else ())):
            text = f"[{table}]\n{key} = {value}\n"
            if taken:
                parse_settings(text, tmp_path)
            else:
                with pytest.raises(ConfigError, match=key):
                    parse_settings(text, tmp_path)


# -- phones and projectors -------------------------------------------------------------------------


def test_the_pages_name_a_devanagari_font_and_the_docs_the_package_that_has_it(url: str) -> None:
    """A display name in Devanagari shows as boxes where the projector has no font for it: the pages ask for Noto
    Sans Devanagari, and the docs say which package brings it (Debian's fonts-noto-core ships
    NotoSansDevanagari-Regular.ttf)."""
    with client(url) as browser:
        served = browser.get("/").text
    seat = (ROOT / "arena" / "web" / "templates" / "seat.css").read_text(encoding="utf-8")
    for css in (served, str(style("live.css")), seat):  # the ladder's pages, the live page, a sitting's table
        body = re.search(r"body\{font-family:([^;}]+)", css)
        assert body is not None and '"Noto Sans Devanagari"' in body.group(1).split(",")[:-1]
    for doc in ("ladder.md", "classroom.md"):
        assert "sudo apt install fonts-noto-core" in " ".join((ROOT / "docs" / doc).read_text(encoding="utf-8").split())


@pytest.mark.slow
def test_the_pages_fit_a_phone_and_a_projector_in_chromium(url: str, built: Built) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    done = _block_ids(built)[BlockState.DONE]
    with client(url) as browser:
        game = browser.get(f"/api/blocks/{done}").json()["games"][0]["game"]
    paths = ["/", "/entrants/alice", "/entrants/carol", f"/blocks/{done}", f"/games/{done}/{game}", "/playing",
             "/tests", "/login", "/organiser"]
    errors: list[str] = []
    hinted: dict[int, set[str]] = {}
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            for width, height in ((390, 844), (1024, 768)):
                page = chromium.new_page(viewport={"width": width, "height": height})
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                requests: list[str] = []
                page.on("request", lambda request, seen=requests: seen.append(request.url))
                page.goto(url + "/login")
                page.fill("#token", built.organiser)  # the organiser sees every page, their own too
                page.click("button[type=submit]")
                for path in paths:
                    page.goto(url + path)
                    wide = page.evaluate("document.documentElement.scrollWidth")
                    assert wide <= width, f"{path} is {wide} px wide on a {width} px screen"
                    # A table wider than the screen scrolls in its own box, which says so above it, in words.
                    boxes = page.evaluate("""Array.from(document.querySelectorAll('table')).map(t => {
                        const box = t.closest('.wide');
                        if (!box) return null;
                        return [box.scrollWidth > box.clientWidth + 1, getComputedStyle(box).overflowX,
                                getComputedStyle(box, '::before').content];})""")
                    assert None not in boxes, f"{path}: a table outside a box that scrolls"
                    for cut, overflow, hint in boxes:
                        assert overflow == "auto", path
                        if cut:
                            assert "Scroll the table sideways" in hint, path
                            hinted.setdefault(width, set()).add(path)
                        else:
                            assert hint == "none", path
                assert all(request.startswith(url) for request in requests)
                page.close()
        finally:
            chromium.close()
    assert errors == []  # among them any script the policy refused
    assert {f"/blocks/{done}", "/organiser"} <= hinted.get(390, set()) and 1024 not in hinted


def test_serve_refuses_half_of_its_tls_pair_and_a_missing_file_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    assert cli("ladder", "init", folder).returncode == 0
    (tmp_path / "site.pem").write_text("not a certificate", encoding="utf-8")
    half = cli("ladder", "serve", folder, "--port", "0", "--tls-cert", tmp_path / "site.pem")
    assert half.returncode == 2 and "--tls-cert and --tls-key go together" in half.stderr
    missing = cli("ladder", "serve", folder, "--port", "0", "--tls-cert", tmp_path / "site.pem",
                  "--tls-key", tmp_path / "site.key")
    assert missing.returncode == 2 and f"there is no TLS file {tmp_path / 'site.key'}" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1, missing.stderr


def test_a_number_of_a_form_that_str_isdigit_takes_and_int_refuses_is_refused_in_words() -> None:
    from arena.errors import ConfigError
    from arena.web.ladder.forms import whole
    assert whole(" 0042 ", "the number of blocks") == 42
    for odd in ("\u00b2", "\u0663", "9" * 5000, "-3", ""):
        with pytest.raises(ConfigError, match=r"^the number of blocks must be a whole number"):
            whole(odd, "the number of blocks")
