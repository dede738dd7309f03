"""A person plays a whole deal set in a real browser: headless Chromium (Playwright) against ``callbreak-arena play
--web`` run as a process, its bots and its records real.

The person calls, clicks only the cards the page offers as playable (found by ``data-card``), types one card at the
keyboard, plays one with the keyboard alone, tries a greyed card and a call out of range once each and reads the
rules' reason, plays the four games of the deal set (one round each), and the records the process wrote pass
``callbreak-arena verify``; the refused answers are in them as the person's faults. Screenshots at a phone's size
and a projector's are kept in the test's folder, and their path printed.

A trick a bot finished stays on the table, its cards by seat and its winner, while that bot leads the next, and
the log lists it; the hand lines up in a grid, a refusal keeps the hand and the trick above a projector's fold, and
on a phone the scores scroll in their own box, with a hint that says so.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.core.cards import Card, Suit
from arena.core.rules import trick_winner
from arena.records.store import ResultsStore
from tests.helpers.runs import ROOT

CHROMIUM = Path("/usr/bin/chromium")
PHONE = {"width": 390, "height": 844}
PROJECTOR = {"width": 1024, "height": 768}
WIDE_PROJECTOR = {"width": 1280, "height": 720}
ASKED = "button.card.legal, button[data-call], #next, #done"
ON_TABLE = "section[aria-label='the trick on the table'] .played li"


class Served:
    """``callbreak-arena play --web`` as a process, on a free port."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "arena", "play", "--web", "--port", "0", *args],
                                        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert "Your table is at http://" in line, line + self.process.stdout.read()
        self.url = line.split("Your table is at ")[1].split()[0]

    def close(self) -> str:
        self.process.terminate()
        out, _ = self.process.communicate(timeout=20)
        return out


def _version(page: object) -> str:
    return str(page.get_attribute("#table", "data-version"))  # type: ignore[attr-defined]


def _after(page: object, version: str) -> None:
    """Waits for the table to show a later version than ``version``."""
    page.wait_for_function(  # type: ignore[attr-defined]
        "v => +document.getElementById('table').getAttribute('data-version') > +v", arg=version)


def _sync_api() -> Any:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    return sync_api


@contextlib.contextmanager
def _opened(served: Served, viewport: dict[str, int]) -> Iterator[Any]:
    """A Chromium page at ``viewport`` that has opened the address ``served`` printed."""
    with _sync_api().sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = chromium.new_page(viewport=viewport)
            page.goto(served.url)
            yield page
        finally:
            chromium.close()


def _call(page: Any, call: str) -> None:
    page.wait_for_selector("button[data-call]")
    version = _version(page)
    page.click(f"button[data-call='{call}']")
    _after(page, version)


@contextlib.contextmanager
def _called(tmp_path: Path) -> Iterator[Any]:
    """A page at a projector's size, seed 4, one round a game, once the person has called 1."""
    served = Served("--opponents", "random,heuristic,random", "--seed", "4", "--set", "rounds=1",
                    "--results", str(tmp_path / "results"))
    try:
        with _opened(served, WIDE_PROJECTOR) as page:
            _call(page, "1")
            yield page
    finally:
        served.close()


def _cards(page: Any, where: str) -> list[tuple[str, str]]:
    """The cards of a trick drawn at ``where`` (a selector of its ``li``), as (who played it, the card's text)."""
    drawn = page.eval_on_selector_all(
        where, "els => els.map(e => [e.querySelector('.who').innerText, e.querySelector('.card').title])")
    return [(str(who).strip(), str(Card.parse(rank + suit[0]))) for who, words in drawn
            for rank, _, suit in [str(words).partition(" of ")]]


def _face(card: str) -> str:
    """A card as the page writes it in a line: ``10♥``, ``Q♠``."""
    return Card.parse(card).symbol().replace("T", "10")


@pytest.mark.slow
def test_a_trick_a_bot_finished_stays_on_the_table_until_you_play_again(tmp_path: Path) -> None:
    with _called(tmp_path) as page:
        mine: list[str] = []
        while True:  # play until a bot won the last trick and has led the next
            page.wait_for_selector("button.card.legal")
            won = sum(int(n) for n in re.findall(r"won (\d+) of", page.inner_text(".seats")))
            on_table = _cards(page, ON_TABLE)
            if won and on_table and on_table[0][0] != "you":
                break
            assert len(mine) < 13, "no trick of the round was won by a bot that then led"
            version = _version(page)
            mine.append(str(page.get_attribute("button.card.legal", "data-card")))
            page.click(f"button[data-card='{mine[-1]}']")
            _after(page, version)
        # The trick the bot finished is still on the table: four cards by seat, yours among them, its winner
        # named, and that winner the bot that leads now.
        last = _cards(page, "#last-trick .played li")
        assert len(last) == 4 and len({who for who, _ in last}) == 4, last
        assert ("you", mine[-1]) in last
        winner = last[trick_winner([Card.parse(card).index for _, card in last], Suit.SPADES)][0]
        assert winner == on_table[0][0]
        heading = page.inner_text("#last-trick h2")
        assert heading == f"Trick {won}: {winner} won it", heading
        assert page.get_attribute("#last-trick .card.win", "title") == \
            page.get_attribute(f"#last-trick li:nth-child({[w for w, _ in last].index(winner) + 1}) .card",
                               "title")
        # The log lists every trick so far, the latest first, each with its four cards by seat and its winner.
        logged = page.eval_on_selector_all("#log li[data-trick]", "els => els.map(e => e.innerText)")
        assert len(logged) == won, logged
        assert logged[0] == f"Trick {won}: " + ", ".join(f"{who} {_face(card)}" for who, card in last) + \
            f"; {winner} won it", logged[0]
        play = r"[^,;]+ (10|[2-9JQKA])[♠♥♦♣]"
        assert all(re.fullmatch(rf"Trick {won - n}: ({play}, ){{3}}{play}; [^,;]+ won it", line)
                   for n, line in enumerate(logged)), logged
        # Played again, the next trick won takes its place.
        version = _version(page)
        page.click("button.card.legal")
        _after(page, version)
        page.wait_for_selector("button.card.legal")
        assert page.inner_text("#last-trick h2").startswith(f"Trick {won + 1}: ")


_GEOMETRY = """() => {
  const box = e => { const r = e.getBoundingClientRect();
    return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left + scrollX, right: r.right + scrollX,
            width: r.width, height: r.height}; };
  return {
    rows: [...document.querySelectorAll('.hand .suit')].map(row => [...row.querySelectorAll('.card')].map(box)),
    controls: [...document.querySelectorAll('.hand button.card, #typed-card, #refusal, #on-table .card')].map(box),
    trick: box(document.getElementById('on-table')), hand: box(document.querySelector('.hand')),
    noun: box(document.querySelector('.suit-name .noun')),
    height: innerHeight, width: innerWidth, page: document.documentElement.scrollWidth,
  };
}"""
SMALL_PHONE = {"width": 320, "height": 640}


@pytest.mark.slow
def test_the_hand_lines_up_and_a_refusal_keeps_it_above_a_projectors_fold(tmp_path: Path) -> None:
    with _called(tmp_path) as page:
        page.wait_for_selector("button.card.greyed")  # seed 4: the first trick is led in a suit held
        version = _version(page)
        page.click("button.card.greyed")
        _after(page, version)
        assert page.inner_text("#refusal").endswith("play any of your hearts")
        for viewport in (WIDE_PROJECTOR, PROJECTOR, PHONE, SMALL_PHONE):
            page.set_viewport_size(viewport)
            shown = page.evaluate(_GEOMETRY)
            rows = [row for row in shown["rows"] if row]
            assert len(rows) >= 3, shown
            sizes = {(round(c["width"]), round(c["height"])) for row in rows for c in row}
            assert len(sizes) == 1, (viewport, sizes)  # every card box the same size
            # One grid: the k-th card of every suit at the same left, the cards of a suit on one line sharing a
            # top (on a narrow screen a long suit goes on in the grid's next line, from its first column).
            lefts: list[float] = []
            for left in sorted(c["left"] for row in rows for c in row):
                if not lefts or left - lefts[-1] > 1:
                    lefts.append(left)
            step = lefts[1] - lefts[0] if len(lefts) > 1 else 0
            assert all(abs(b - a - step) <= 1 for a, b in itertools.pairwise(lefts)), (viewport, lefts)
            for row in rows:
                for k, c in enumerate(row):
                    line, column = divmod(k, len(lefts))
                    assert abs(c["left"] - (lefts[0] + column * step)) <= 1, (viewport, k, row)
                    assert abs(c["top"] - row[line * len(lefts)]["top"]) <= 1, (viewport, k, row)
            wrapped = any(len(row) > len(lefts) for row in rows)
            assert wrapped == (viewport is SMALL_PHONE), (viewport, lefts)  # seed 4: six diamonds, five columns
            assert shown["page"] <= shown["width"], (viewport, shown["page"])  # nothing wider than the screen
            if viewport in (WIDE_PROJECTOR, PROJECTOR):
                # The trick beside the hand; the hand, the typed card, the refusal and the trick above the fold.
                assert shown["trick"]["right"] <= shown["hand"]["left"], (viewport, shown["trick"], shown["hand"])
                assert all(c["top"] >= 0 and c["bottom"] <= shown["height"] for c in shown["controls"]), \
                    (viewport, shown["controls"], shown["height"])
            else:  # on a phone each suit is named by its symbol; its name is there for the screen reader
                assert shown["noun"]["width"] <= 1, (viewport, shown["noun"])


def _scrolls(page: Any) -> bool:
    """Whether the scores by round are wider than their box (which then scrolls), as its hint says or not."""
    box = page.query_selector(".scores .wide")
    wider = bool(box.evaluate("e => e.scrollWidth > e.clientWidth"))
    assert wider == page.is_visible(".scores .scroll-hint"), wider
    return wider


@pytest.mark.slow
def test_a_person_plays_a_deal_set_in_the_browser_and_its_records_verify(tmp_path: Path) -> None:
    sync_api = _sync_api()
    results = tmp_path / "results"
    shots = tmp_path / "screenshots"
    shots.mkdir()
    served = Served("--opponents", "random,heuristic,random", "--seed", "4", "--set", "rounds=1",
                    "--results", str(results))
    refusals: list[str] = []
    cards = calls = typed = keyed = 0
    try:
        with sync_api.sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
            try:
                page = chromium.new_page(viewport=PROJECTOR)
                page.goto(served.url)
                while True:
                    page.wait_for_selector(ASKED)
                    if page.query_selector("#done"):
                        break
                    version = _version(page)
                    if page.query_selector("#next"):
                        page.click("#next")
                        _after(page, version)
                        continue
                    if page.query_selector("button[data-call]"):
                        if calls == 0:
                            page.screenshot(path=str(shots / "projector-call.png"), full_page=True)
                            page.fill("#typed-call", "99")
                            page.press("#typed-call", "Enter")
                            _after(page, version)
                            refusal = page.inner_text("#refusal")
                            assert refusal.startswith("Not allowed: 99 is not a legal call: call a whole number "
                                                      "from 1 to 13"), refusal
                            refusals.append(refusal)
                            version = _version(page)
                        page.click("button[data-call='1']")
                        calls += 1
                        _after(page, version)
                        continue
                    hand = {e.get_attribute("data-card") for e in page.query_selector_all("button.card")}
                    legal = [e.get_attribute("data-card") for e in page.query_selector_all("button.card.legal")]
                    greyed = [e.get_attribute("data-card") for e in page.query_selector_all("button.card.greyed")]
                    assert legal and set(legal) <= hand and not set(legal) & set(greyed)
                    if greyed and len(refusals) < 2:
                        page.set_viewport_size(PHONE)
                        page.screenshot(path=str(shots / "phone-play.png"), full_page=True)
                        page.set_viewport_size(PROJECTOR)
                        page.screenshot(path=str(shots / "projector-play.png"), full_page=True)
                        page.click(f"button[data-card='{greyed[0]}']")
                        _after(page, version)
                        refusal = page.inner_text("#refusal")
                        assert refusal.startswith(f"{greyed[0]} is not allowed: "), refusal
                        refusals.append(refusal)
                        page.screenshot(path=str(shots / "projector-refused.png"), full_page=True)
                        version = _version(page)
                        assert {e.get_attribute("data-card") for e in page.query_selector_all("button.card")} == hand
                    if typed == 0:
                        page.fill("#typed-card", str(legal[-1]).lower())  # typed, as at a keyboard
                        page.press("#typed-card", "Enter")
                        typed += 1
                    elif keyed == 0 and page.evaluate("document.activeElement.matches('button.card.legal')"):
                        page.keyboard.press("Enter")  # the page put the focus on a card it may play
                        keyed += 1
                    else:
                        page.click(f"button.card.legal[data-card='{legal[0]}']")
                    cards += 1
                    _after(page, version)
                page.screenshot(path=str(shots / "projector-done.png"), full_page=True)
                assert not _scrolls(page)  # the scores fit a projector: no hint
                page.set_viewport_size(PHONE)
                page.screenshot(path=str(shots / "phone-done.png"), full_page=True)
                # On a phone the scores are wider than the screen: they scroll in their own box, and say so.
                assert _scrolls(page) and page.is_visible(".scores .scroll-hint")
                assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            finally:
                chromium.close()
    finally:
        out = served.close()
    print(f"screenshots in {shots}")
    assert calls == 4 and cards == 4 * 13 and keyed == 1, (calls, cards, keyed, out)
    assert len(refusals) == 2
    verified = subprocess.run([sys.executable, "-m", "arena", "verify", str(results)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "ok: 4 games" in verified.stdout
    games = ResultsStore(results).games()
    assert len(games) == 4 and all("you" in g.seats for g in games)
    faults = [f for g in games for r in g.rounds for f in r.faults]
    assert [f.seat for f in faults] == [g.seats.index("you") for g in games for r in g.rounds for f in r.faults]
    assert sorted(f.kind.value for f in faults) == ["illegal_call", "illegal_card"]
