"""A person plays a whole deal set in a real browser: headless Chromium (Playwright) against ``callbreak-arena play
--web`` run as a process, its bots and its records real.

The person calls, clicks only the cards the page offers as playable (found by ``data-card``), types one card at the
keyboard, plays one with the keyboard alone, tries a greyed card and a call out of range once each and reads the
rules' reason, plays the four games of the deal set (one round each), and the records the process wrote pass
``callbreak-arena verify``; the refused answers are in them as the person's faults. Screenshots at a phone's size
and a projector's are kept in the test's folder, and their path printed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.records.store import ResultsStore
from tests.helpers.runs import ROOT

CHROMIUM = Path("/usr/bin/chromium")
PHONE = {"width": 390, "height": 844}
PROJECTOR = {"width": 1024, "height": 768}
ASKED = "button.card.legal, button[data-call], #next, #done"


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


@pytest.mark.slow
def test_a_person_plays_a_deal_set_in_the_browser_and_its_records_verify(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
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
                page.set_viewport_size(PHONE)
                page.screenshot(path=str(shots / "phone-done.png"), full_page=True)
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
