"""The seat in the browser without a browser: ``play --web``'s page served by uvicorn on port 0, driven over HTTP.

A whole deal set is played through the page's forms and its records pass the audit; the log of each game's last
page lists its tricks as the records hold them; a round's last trick stays through the next round's calls, and the
log keeps two rounds; what the page shows never holds a card another seat still hides; bad input (a stale token, a
form of another site, a missing field, a body too large, a call out of range, an answer out of turn) is answered in
a sentence and loses nothing; the command line refuses an unknown bot and a folder that holds something, and its
help documents --web and --port.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.cli import main
from arena.core.cards import Card
from arena.core.dealing import seat_seed
from arena.core.rules import Rules
from arena.event.audit import audit
from arena.records.format import GameRecords
from arena.records.store import ResultsStore
from arena.web.seat import BODY_BYTES, NOT_YOURS, SeatSite, card_text
from arena.web.sitting import PERSON, Sitting
from tests.helpers.pages import asked, version
from tests.helpers.runs import ROOT

RULES = Rules.profile("nepali").with_text_switches(["rounds=1"])
TOKEN = re.compile(r'name="csrf" value="([^"]+)"')
WORDS = re.compile(r'(?:title|aria-label)="(10|[2-9JQKA]) of (spades|hearts|diamonds|clubs)')


def _shown(html: str) -> set[str]:
    """Every card the page draws, as its text."""
    return {str(Card.parse(rank + suit[0])) for rank, suit in WORDS.findall(html)}


Driver = Callable[[httpx.AsyncClient, str], Awaitable[None]]

SPY = '''
import json


class Spy:
    """Calls the least and plays the first legal card; writes what each call's view said."""

    def __init__(self, seed=0, log=""):
        self.log = log

    def call(self, view):
        with open(self.log, "a") as out:
            out.write(json.dumps({"seat": view.seat, "seat_seed": view.seat_seed, "hand": view.hand_mask}) + "\\n")
        return min(view.legal_calls)

    def play(self, view):
        return min(view.legal.cards(), key=lambda card: card.index)
'''


async def _sitting(folder: Path, drive: Driver,
                   opponents: Sequence[str | Mapping[str, Any]] = ("random", "heuristic", "random"),
                   rules: Rules = RULES) -> None:
    sitting = Sitting(rules, 4, list(opponents), folder)
    site = SeatSite(sitting)
    url = await site.start("127.0.0.1", 0)
    playing = asyncio.ensure_future(sitting.play())
    try:
        async with httpx.AsyncClient(base_url=url.split("/?")[0], timeout=30) as client:
            page = await client.get(url, follow_redirects=True)  # the address printed: its secret becomes a cookie
            found = TOKEN.search(page.text)
            assert found is not None
            await drive(client, found.group(1))
    finally:
        playing.cancel()
        await asyncio.gather(playing, return_exceptions=True)
        await site.stop()


async def _next_asked(client: httpx.AsyncClient, html: str) -> str:
    """The table, once the page asks for something (or the deal set is over)."""
    while not asked(html) and "id=\"next\"" not in html and "id=\"done\"" not in html:
        html = (await client.get("/table", params={"since": version(html)})).text
    return html


def test_a_whole_deal_set_played_through_the_page_verifies_and_shows_no_hidden_card(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    pages: list[str] = []

    async def drive(client: httpx.AsyncClient, token: str) -> None:
        html = (await client.get("/table")).text
        script = {"X-Seat-Script": "1"}
        while True:
            html = await _next_asked(client, html)
            pages.append(html)
            if 'id="done"' in html:
                return
            if 'id="next"' in html:
                html = (await client.post("/next", data={"csrf": token}, headers=script)).text
            elif asked(html) == "call":
                html = (await client.post("/call", data={"csrf": token, "call": "2"}, headers=script)).text
            else:
                legal = re.findall(r'data-card="(\w+)" class="card [^"]*legal', html)
                assert legal
                html = (await client.post("/play", data={"csrf": token, "card": legal[-1]}, headers=script)).text

    spy = tmp_path / "spy.py"
    spy.write_text(SPY, encoding="utf-8")
    seer = {"name": "spy", "python": f"{spy}:Spy", "options": {"log": str(tmp_path / "spy.jsonl")}}
    asyncio.run(_sitting(folder, drive, ("random", seer, "random")))
    assert audit(folder) is None
    games = sorted(ResultsStore(folder).games(), key=lambda g: g.first.rotation)
    # The bots' seat seeds are keyed by a random key of the sitting's own, kept as a tournament keeps it.
    key = bytes.fromhex((folder / "seat_key").read_text())
    assert len(key) == 32 and stat.S_IMODE((folder / "seat_key").stat().st_mode) == 0o600
    views = [json.loads(line) for line in (tmp_path / "spy.jsonl").read_text().splitlines()]
    assert len(views) == 4  # a call in each game
    for view in views:
        hand = games[0].first.hands[view["seat"]].mask
        assert view["hand"] == hand and view["seat_seed"] == seat_seed(key, 1, 1, view["seat"], hand)
    assert len(games) == 4 and all(PERSON in game.seats for game in games)
    assert all(not r.faults for g in games for r in g.rounds) and all(len(g.rounds) == 1 for g in games)
    played = [html for html in pages if 'data-asked="play"' in html]
    assert len(played) == 4 * 13
    # Each game's last page lists its thirteen tricks, the latest first, each with its cards by seat and its winner.
    ends = [html for html in pages if 'id="next"' in html or 'id="done"' in html]
    assert len(ends) == 4
    for game, html in zip(games, ends, strict=True):
        names = ["you" if name == PERSON else name for name in game.seats]
        assert _logged(html) == [
            (k + 1, [(names[(t.leader + j) % 4], str(card)) for j, card in enumerate(t.cards)], names[t.winner])
            for k, t in enumerate(game.first.tricks)][::-1]
    assert all(not _hidden(html, games) for html in played)
    # ... and a card of another seat drawn before it is played is caught.
    first = games[0].first
    later = first.tricks[-1].cards[0] if first.tricks[-1].leader != games[0].seats.index(PERSON) else \
        first.tricks[-1].cards[1]
    words = f"{'10' if later.rank.letter == 'T' else later.rank.letter} of {later.suit.noun.lower()}"
    assert _hidden(played[0].replace("</ul>", f'<span title="{words}"></span></ul>', 1), games) == {str(later)}


def test_a_rounds_last_trick_stays_through_the_next_calls_and_the_log_keeps_two_rounds(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    calls: dict[int, str] = {}

    async def drive(client: httpx.AsyncClient, token: str) -> None:
        html = (await client.get("/table")).text
        script = {"X-Seat-Script": "1"}
        while 'id="next"' not in html:
            html = await _next_asked(client, html)
            if asked(html) == "call":
                found = re.search(r"round (\d) of 3", html)
                assert found is not None
                calls[int(found.group(1))] = html
                html = (await client.post("/call", data={"csrf": token, "call": "1"}, headers=script)).text
            elif asked(html) == "play":
                legal = re.findall(r'data-card="(\w+)" class="card [^"]*legal', html)
                html = (await client.post("/play", data={"csrf": token, "card": legal[0]}, headers=script)).text

    asyncio.run(_sitting(folder, drive, ("random",) * 3, Rules.profile("nepali").with_text_switches(["rounds=3"])))
    game = next(g for g in ResultsStore(folder).games() if g.first.rotation == 0)
    names = ["you" if name == PERSON else name for name in game.seats]
    assert sorted(calls) == [1, 2, 3]
    assert 'id="last-trick"' not in calls[1] and not _logged(calls[1])
    for number in (2, 3):  # the round before's thirteenth trick, named with its round; its tricks in the log
        before = game.rounds[number - 2].tricks
        winner = names[before[-1].winner]
        assert f"<h2>Trick 13 of round {number - 1}: {winner} won it</h2>" in calls[number]
        assert _logged(calls[number]) == [
            (k + 1, [(names[(t.leader + j) % 4], str(card)) for j, card in enumerate(t.cards)], names[t.winner])
            for k, t in enumerate(before)][::-1]
        assert f"<li>Round {number}: " in calls[number] and (number == 2) == ("<li>Round 1: " in calls[number])


def _logged(html: str) -> list[tuple[int, list[tuple[str, str]], str]]:
    """The tricks a page's log lists, as it lists them: the number, the cards by seat (who, card), the winner."""
    lines = re.findall(r'<li data-trick="(\d+)">Trick \1: (.*?); ([^;<]+) won it</li>', html)
    return [(int(number), [(who, str(Card.parse(rank + suit[0]))) for who, rank, suit in
                           re.findall(r' ?([^,>]+?) <span class="suit-\w+" title="(\w+) of (\w+)">', cards)], winner)
            for number, cards, winner in lines]


def _hidden(html: str, games: list[GameRecords]) -> set[str]:
    """The cards a page draws that its seat could not know then: neither its own nor played yet (the tricks
    begun are the tricks won, counted from the page, and the one on the table)."""
    number = re.search(r"Game (\d) of 4", html)
    assert number is not None
    record = games[int(number.group(1)) - 1].first
    begun = sum(int(n) for n in re.findall(r"won (\d+) of", html)) + 1
    known = {str(c) for c in record.hands[games[int(number.group(1)) - 1].seats.index(PERSON)]}
    known |= {str(c) for trick in record.tricks[:begun] for c in trick.cards}
    return _shown(html) - known


def test_bad_input_is_answered_in_words_and_loses_nothing(tmp_path: Path) -> None:
    async def drive(client: httpx.AsyncClient, token: str) -> None:
        html = await _next_asked(client, (await client.get("/table")).text)
        assert asked(html) == "call"
        refused = await client.post("/call", data={"csrf": "stale", "call": "2"})
        assert refused.status_code == 403 and "out of date" in refused.text
        refused = await client.post("/call", data={"csrf": token, "call": "2"},
                                    headers={"Origin": "http://elsewhere.example"})
        assert refused.status_code == 403 and "another site" in refused.text
        refused = await client.post("/call", data={"csrf": token})
        assert refused.status_code == 400 and refused.text == "The form has no call: give a whole number\n"
        refused = await client.post("/call", content=b"csrf=" + b"x" * BODY_BYTES,
                                    headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert refused.status_code == 413 and "larger than" in refused.text
        refused = await client.get("/table", headers={"X-Padding": "x" * (40 << 10)})  # a head past 32 KiB
        assert refused.status_code == 431 and refused.text == "The request is too long\n"
        # Every form of the arena is read by the same reader: a multipart one too, and within the same limits.
        parts = "".join(f'--b0\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
                        for name, value in (("csrf", token), ("call", ""))) + "--b0--\r\n"
        refused = await client.post("/call", content=parts.encode(),
                                    headers={"Content-Type": "multipart/form-data; boundary=b0"})
        assert refused.status_code == 400 and refused.text == "The form has no call: give a whole number\n"
        refused = await client.post("/call", data={"csrf": token, **{f"field{n}": "" for n in range(20)}})
        assert refused.status_code == 400 and refused.text == "Too many fields. Maximum number of fields is 20.\n"
        refused = await client.post("/play", data={"csrf": token, "card": "AS"})
        assert refused.status_code == 409 and "not your turn" in refused.text
        refused = await client.post("/next", data={"csrf": token})
        assert refused.status_code == 409 and "not over yet" in refused.text
        # A call out of range: the rules' words, and the call asked again.
        answered = await client.post("/call", data={"csrf": token, "call": "14"}, headers={"X-Seat-Script": "1"})
        assert answered.status_code == 200
        assert ("Not allowed: 14 is not a legal call: call a whole number from 1 to 13 under the nepali rules"
                in answered.text)
        assert asked(answered.text) == "call"
        answered = await client.post("/call", data={"csrf": token, "call": "lots"}, headers={"X-Seat-Script": "1"})
        assert "Not allowed: &#39;lots&#39; is not a legal call" in answered.text
        # What str.isdigit takes and int refuses is a call refused in words, never an error of the server.
        for odd in ("--5", "\u00b2", "9" * 100):
            answered = await client.post("/call", data={"csrf": token, "call": odd}, headers={"X-Seat-Script": "1"})
            assert answered.status_code == 200 and "is not a legal call" in answered.text, odd
        for odd in ("\u00b2", "9" * 5000):
            refused = await client.get("/table", params={"since": odd})
            assert refused.status_code == 400 and "whole number" in refused.text, odd
        # A plain form (no script) is sent back to the page, which shows the same.
        plain = await client.post("/call", data={"csrf": token, "call": "3"})
        assert plain.status_code == 303 and plain.headers["location"] == "/"
        html = await _next_asked(client, (await client.get("/table")).text)
        assert asked(html) == "play" and "Not allowed" not in html
        hand = set(re.findall(r'data-card="(\w+)"', html))
        greyed = re.findall(r'data-card="(\w+)" class="card [^"]*greyed', html)
        held_not = next(str(c) for c in (Card.parse(f"{r}{s}") for r in "23456789TJQKA" for s in "SHDC")
                        if str(c) not in hand)
        answered = await client.post("/play", data={"csrf": token, "card": held_not}, headers={"X-Seat-Script": "1"})
        assert f"Not allowed: you do not hold {held_not}: your hand is" in answered.text
        answered = await client.post("/play", data={"csrf": token, "card": "ZZ"}, headers={"X-Seat-Script": "1"})
        assert "Not allowed: &#39;ZZ&#39; is not a card" in answered.text
        if greyed:
            answered = await client.post("/play", data={"csrf": token, "card": greyed[0]},
                                         headers={"X-Seat-Script": "1"})
            assert f"{greyed[0]} is not allowed: " in answered.text
        assert set(re.findall(r'data-card="(\w+)"', answered.text)) == hand  # nothing lost
        for header in ("content-security-policy", "x-content-type-options", "x-frame-options"):
            assert header in answered.headers
        assert "connect-src 'self'" in answered.headers["content-security-policy"]
        # One request per connection, as every page of the arena: the guard's deadlines are per connection.
        assert answered.headers["connection"] == "close" and refused.headers["connection"] == "close"

    asyncio.run(_sitting(tmp_path / "results", drive))


def test_the_table_is_the_persons_alone_who_holds_the_address_printed(tmp_path: Path) -> None:
    async def scenario() -> None:
        sitting = Sitting(RULES, 4, ["random"] * 3, tmp_path / "results")
        site = SeatSite(sitting)
        url = await site.start("127.0.0.1", 0)
        playing = asyncio.ensure_future(sitting.play())
        base, _, secret = url.partition("/?token=")
        try:
            assert secret and len(secret) >= 32
            async with httpx.AsyncClient(base_url=base, timeout=30) as stranger:  # another user of the machine
                wrong = secret[:-1] + ("y" if secret.endswith("x") else "x")  # one character off, never the same
                for path in ("/", "/table", "/table?since=0", f"/?token={wrong}"):
                    refused = await stranger.get(path)
                    assert (refused.status_code, refused.text) == (403, NOT_YOURS), path
                refused = await stranger.post("/call", data={"csrf": "x", "call": "2"})
                assert (refused.status_code, refused.text) == (403, NOT_YOURS)
                assert (await stranger.get("/healthz")).status_code == 200
            async with httpx.AsyncClient(base_url=base, timeout=30) as person:
                opened = await person.get(url)  # the address printed: a cookie, and the page without the secret
                assert opened.status_code == 303 and opened.headers["location"] == "/"
                cookie = opened.headers["set-cookie"]
                assert secret in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
                page = await person.get("/")
                assert page.status_code == 200
                found = TOKEN.search(page.text)
                assert found is not None and secret not in page.text
                html = await _next_asked(person, (await person.get("/table")).text)
                assert asked(html) == "call"
                # DNS rebinding: a page of another site, its name pointed at this machine, sends the person's cookie
                # (the browser thinks it its own) with its own name as Host and Origin. Refused all the same.
                rebound = {"Host": f"rebound.example:{base.rsplit(':', 1)[1]}",
                           "Origin": f"http://rebound.example:{base.rsplit(':', 1)[1]}"}
                refused = await person.post("/call", data={"csrf": found.group(1), "call": "2"}, headers=rebound)
                assert refused.status_code == 403 and "another site" in refused.text
                assert asked((await person.get("/table")).text) == "call"  # nothing was played
                answered = await person.post("/call", data={"csrf": found.group(1), "call": "2"},
                                             headers={"Origin": base, "X-Seat-Script": "1"})  # from the page itself
                assert answered.status_code == 200 and asked(answered.text) != "call", answered.text
        finally:
            playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)
            await site.stop()

    asyncio.run(scenario())


def test_off_loopback_the_page_prints_its_secret_and_refuses_a_request_without_it(tmp_path: Path) -> None:
    served = subprocess.Popen([sys.executable, "-m", "arena", "play", "--web", "--host", "0.0.0.0", "--port", "0",
                               "--opponents", "random", "--results", str(tmp_path / "results")], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert served.stdout is not None
        line = served.stdout.readline()
        found = re.search(r"Your table is at (http://127\.0\.0\.1:(\d+)/\?token=(\S+)) : open it", line)
        assert found, line
        assert "from another machine" in line and "whoever has it can see your hand" in line
        url, port, secret = found.groups()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as stranger:
            refused = stranger.get("/")
            assert (refused.status_code, refused.text) == (403, NOT_YOURS)
        with httpx.Client(timeout=30, follow_redirects=True) as person:
            page = person.get(url)
            assert page.status_code == 200 and TOKEN.search(page.text)
            assert person.get(f"http://127.0.0.1:{port}/table").status_code == 200
        assert secret not in Path(f"/proc/{served.pid}/cmdline").read_text()
    finally:
        served.terminate()
        served.communicate(timeout=20)


def test_the_command_line_refuses_an_unknown_bot_and_a_used_folder_and_documents_web(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["play", "--web", "--port", "0", "--opponents", "random,clever,random"]) == 2
    assert "'clever' is not a sample bot; the sample bots are random, heuristic, montecarlo" in capsys.readouterr().err
    assert main(["play", "--web", "--opponents", "random,heuristic"]) == 2
    assert "one bot or three" in capsys.readouterr().err
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["play", "--web", "--port", "0", "--results", str(used)]) == 2
    assert "is not an empty folder" in capsys.readouterr().err
    assert (used / "notes.txt").read_text(encoding="utf-8") == "mine"
    with pytest.raises(SystemExit) as caught:
        main(["play", "--help"])
    assert caught.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--web" in text and "--port P" in text and "play in the browser" in text


@pytest.mark.parametrize("given, text", [("QS", "QS"), ("qs", "QS"), ("10h", "TH"), ("Q♠", "QS"), ("ZZ", "ZZ")])
def test_a_typed_card_is_read_as_the_rules_read_it(given: str, text: str) -> None:
    assert card_text(given) == text


@pytest.mark.parametrize(("signal_number", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stopping_the_page_exits_as_the_readme_says_and_tells_what_was_recorded(
        tmp_path: Path, signal_number: int, status: int) -> None:
    # Ctrl-C (SIGINT) ends with 130 and SIGTERM with 143, as the README's exit statuses say; stopped before a
    # game was over, the command does not claim that games were played.
    served = subprocess.Popen([sys.executable, "-m", "arena", "play", "--web", "--port", "0", "--opponents", "random",
                               "--results", str(tmp_path / "results")], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert served.stdout is not None
        line = served.stdout.readline()
        assert "Your table is at" in line, line
        served.send_signal(signal_number)
        rest, _ = served.communicate(timeout=30)
    finally:
        if served.poll() is None:
            served.kill()
    assert served.returncode == status, rest
    assert "No game was played to its end" in rest and "The games played are recorded" not in rest, rest


def test_the_page_keeps_names_whole_lists_what_happened_unnumbered_and_focuses_without_scrolling() -> None:
    # A trick's names are cut with an ellipsis (the whole name in a title), never broken mid-word; the log's
    # entries carry no number that reads as a trick's; a focus after an update does not scroll the title away;
    # the seats say in which order they are shown and what a bot's number is.
    templates = ROOT / "arena" / "web" / "templates"
    table = (templates / "seat_table.html").read_text(encoding="utf-8")
    css = (templates / "seat.css").read_text(encoding="utf-8")
    script = (templates / "seat.js").read_text(encoding="utf-8")
    assert '<ul id="log">' in table and '<ol id="log"' not in table
    assert '<span class="who" title="{{ c.who }}">' in table and "The seats in the order of play" in table
    who = re.search(r"\.played \.who\{([^}]*)\}", css)
    assert who and "anywhere" not in who.group(1) and "text-overflow:ellipsis" in who.group(1)
    assert ".focus()" not in script and script.count(".focus({preventScroll:true})") == 2
