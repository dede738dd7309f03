"""A student on the ladder's site in a real browser: headless Chromium (Playwright) against ``ladder serve`` run as
a process, with its database, its sandboxed checks and its blocks all real.

The student logs in with their token, uploads a bot, sees its check pass, finds it on the leaderboard once its
placement block is played, and opens the replay of one of its games; then uploads a broken bot and sees which
check failed, with the hand and the trick where it happened and the end of what the bot wrote to stderr. The
screenshots are kept beside the test's folder, and their paths printed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.ladder import BROKEN_BOT, GOOD_BOT, Served, make_ladder

CHROMIUM = Path("/usr/bin/chromium")
HOUSE = ("sample_bots.heuristic_bot:HeuristicBot", "sample_bots.random_bot:RandomBot",
         "sample_bots.heuristic_bot:HeuristicBot")


def _until(page: object, path: str, found: Callable[[], bool], timeout: float, what: str) -> None:
    """Loads ``path`` again every second until ``found()`` holds of the page, as a student pressing reload."""
    began = time.monotonic()
    while True:
        page.goto(path)  # type: ignore[attr-defined]
        if found():
            return
        if time.monotonic() - began > timeout:
            raise AssertionError(f"{what}: not on {path} within {timeout} s; the page said "
                                 f"{page.inner_text('main')[:2000]!r}")  # type: ignore[attr-defined]
        time.sleep(1.0)


@pytest.mark.slow
def test_a_student_submits_sees_the_check_the_leaderboard_and_a_replay_then_a_failing_check(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    folder = tmp_path / "ladder"
    ladder = make_ladder(folder, placement_blocks="1", check_games="4")
    for number, house in enumerate(HOUSE):
        ladder.add_entrant(f"house-{number}", python=house)
    token = ladder.add_entrant("sita", "Sita <b>K.</b>")
    ladder.close()
    good, broken = tmp_path / "lowest.py", tmp_path / "first.py"
    good.write_text(GOOD_BOT, encoding="utf-8")
    broken.write_text(BROKEN_BOT, encoding="utf-8")
    shots = tmp_path / "screenshots"
    shots.mkdir()
    served = Served(folder)
    try:
        with sync_api.sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
            try:
                page = chromium.new_page(base_url=served.url, viewport={"width": 1024, "height": 768})
                page.goto("/login")
                page.fill("#token", token)
                page.click("form.ask button[type=submit]")
                assert "Sita <b>K.</b>" in page.inner_text("body")  # the display name as text, never as markup
                page.screenshot(path=str(shots / "1-logged-in.png"), full_page=True)

                page.goto("/submit")
                page.set_input_files("#file", str(good))
                page.click("form.ask button[type=submit]")
                passed = page.locator("#version-1 .check.passed")
                _until(page, "/entrants/sita", lambda: passed.count() > 0, 180, "the first version's check")
                page.screenshot(path=str(shots / "2-check-passed.png"), full_page=True)

                row = page.locator('#ranked table.board a[href="/entrants/sita"]')
                _until(page, "/", lambda: row.count() > 0, 240, "sita on the leaderboard")
                page.screenshot(path=str(shots / "3-leaderboard.png"), full_page=True)

                page.goto("/entrants/sita")
                page.locator("#games table a").first.click()
                assert page.url.startswith(served.url + "/games/")
                assert page.locator(".card").count() >= 52, "the replay draws every card of the game as a card"
                assert "trick" in page.inner_text("main").lower()
                page.screenshot(path=str(shots / "4-replay.png"), full_page=True)

                page.goto("/submit")
                page.set_input_files("#file", str(broken))
                page.click("form.ask button[type=submit]")
                failed = page.locator("#version-2 .check.failed")
                _until(page, "/entrants/sita", lambda: failed.count() > 0, 180, "the broken version's check")
                said = failed.first.inner_text()
                assert "only legal cards" in said, f"the failure with its place in a game comes first: {said}"
                assert "hand" in said and ("trick" in said or "the calls" in said), said
                assert "playing my first card, whatever the suit" in said, "the end of the bot's stderr is shown"
                assert page.locator("#version-1 .state").inner_text() == "active", "the good version plays on"
                page.screenshot(path=str(shots / "5-check-failed.png"), full_page=True)
            finally:
                chromium.close()
    finally:
        served.kill()
    print(f"screenshots in {shots}")
