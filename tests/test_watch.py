"""Spectating a tournament (``/watch`` on the live page): a deal set is shown only once every game of it is over,
then replayed a card per delay; checked against the records, as the records grow line by line and in a real
tournament followed by Chromium.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.core.cards import Card
from arena.event.plan.manifest import Manifest
from arena.records.format import TornLine, group_games, iter_records
from arena.records.store import ResultsStore
from arena.web.watch import Watch, WatchOptions, render_watch
from tests.helpers.runs import ROOT, SLOW, finished_tournament

CHROMIUM = Path("/usr/bin/chromium")
WORDS = re.compile(r'title="(10|[2-9JQKA]) of (spades|hearts|diamonds|clubs)"')
SUITS = {"spades": "S", "hearts": "H", "diamonds": "D", "clubs": "C"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _cards(html: str) -> list[str]:
    return [str(Card.parse(rank + SUITS[suit])) for rank, suit in WORDS.findall(html)]


def _planned(folder: Path) -> dict[int, set[str]]:
    raw = ResultsStore(folder).manifest()
    assert raw is not None
    planned: dict[int, set[str]] = {}
    for game in Manifest.from_dict(raw).plan.games():
        planned.setdefault(game.deal_set, set()).add(game.id)
    return planned


def leaks(html: str, folder: Path, planned: dict[int, set[str]]) -> list[str]:
    """What a spectator's page shows of a deal set not yet over in the records as they are now (read after the page
    was made: the records only grow, so a deal set not over now was not over then), or of another game's cards."""
    complete = {g.game: g for g in group_games(list(iter_records(ResultsStore(folder).records_path, TornLine.SKIP)))}
    over = {d for d, games in planned.items() if games <= complete.keys()}
    found = [f"a link to game {game} of deal set {d}, not over" for game in re.findall(r'href="/watch/([^"]+)"', html)
             for d, games in planned.items() if game in games and d not in over]
    shown = re.search(r'<main id="game" data-game="([^"]+)" data-deal-set="(\d+)"', html)
    cards = _cards(html)
    if shown is None:
        return found + ([f"cards {cards} outside a game's page"] if cards else [])
    game, deal_set = shown.group(1), int(shown.group(2))
    if deal_set not in over:
        return [*found, f"game {game}: deal set {deal_set} is not over, and its page is shown"]
    dealt = {str(c) for r in complete[game].rounds for hand in r.hands for c in hand}
    return found + [f"{card} is not a card of game {game}" for card in cards if card not in dealt]


def test_a_deal_set_is_shown_only_once_all_its_games_are_over_then_replayed_card_by_card(tmp_path: Path) -> None:
    (tmp_path / "finished").mkdir()
    finished = finished_tournament(tmp_path / "finished", seed=3) / "results"
    folder = tmp_path / "growing"
    folder.mkdir()
    (folder / "manifest.json").write_bytes((finished / "manifest.json").read_bytes())
    lines = (finished / "records.jsonl").read_bytes().splitlines(keepends=True)
    planned = _planned(folder)
    assert len(planned) >= 2 and all(len(games) >= 4 for games in planned.values())
    clock = Clock()
    watch = Watch(folder, WatchOptions(delay_s=1.0, hands=True), clock)
    shown_games = 0
    with (folder / "records.jsonl").open("ab") as records:
        for line in lines:
            records.write(line)
            records.flush()
            clock.now += 7.0
            code, listing = render_watch(watch, None)
            assert code == 200 and not leaks(listing, folder, planned)
            for game in re.findall(r'href="/watch/([^"]+)"', listing):
                code, html = render_watch(watch, game)
                assert code == 200 and not leaks(html, folder, planned), leaks(html, folder, planned)
                shown_games += 1
            for games in planned.values():
                for game in games:
                    code, html = render_watch(watch, game)
                    if code == 404:
                        assert "is not shown: its deal set is still being played" in html and not _cards(html)
    assert shown_games > 0
    # The replay goes a card a step: the calls, then one card more each second, from when the deal set was seen over.
    game = sorted(planned[1])[0]
    since = watch.read().shown[1]
    steps = []
    for step in range(1, 8):
        clock.now = since + step - 0.5
        html = render_watch(watch, game)[1]
        assert len(_cards(html)) == 52  # the cards still held, and the cards played
        steps.append(len(_cards(html.partition('<ol class="tricks">')[2])))
    assert steps == [0, 1, 2, 3, 4, 5, 6]
    clock.now = since + 10_000
    assert 'id="over"' in render_watch(watch, game)[1]
    # A check that could not fail is no check: a page of a deal set not over is caught.
    public = Watch(folder, WatchOptions(delay_s=1.0), clock)
    html = render_watch(public, game)[1]
    assert not _cards(html)  # the calls alone so far, and no hand in the public view
    (folder / "records.jsonl").write_bytes(b"".join(line for line in lines if f'"game":"{game}"'.encode() not in line))
    assert leaks(html, folder, planned) == [f"game {game}: deal set 1 is not over, and its page is shown"]


@pytest.mark.slow
def test_a_spectator_follows_a_live_tournament_and_sees_no_deal_set_still_in_play(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    config = tmp_path / "live.toml"
    bots = "".join(f'\n[[bots]]\nname = "slow-{n}"\npython = "{SLOW}"\nseed = {n}\noptions = {{ delay = 0.003 }}\n'
                   for n in range(1, 5))
    config.write_text('[tournament]\nname = "projector"\nseed = 5\ndeal_sets = 5\nconcurrency = 2\n\n'
                      "[time]\ndeadline_ms = 10000\n" + bots, encoding="utf-8")
    results = tmp_path / "results"
    shots = tmp_path / "screenshots"
    shots.mkdir()
    err = tmp_path / "run.err"
    with err.open("wb") as stderr:
        arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results", str(results),
                                  "--page", "0", "--no-progress", "--watch-delay", "0.2", "--watch-hands"],
                                 cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr)
    pages = 0
    seen_playing = seen_shown = linked = False
    try:
        deadline = time.monotonic() + 30
        while "live page at" not in err.read_text(encoding="utf-8", errors="replace"):
            assert time.monotonic() < deadline and arena.poll() is None, err.read_text(encoding="utf-8")
            time.sleep(0.05)
        url = err.read_text(encoding="utf-8").split("live page at ")[1].split()[0]
        planned: dict[int, set[str]] = {}
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
            try:
                page = browser.new_page(viewport={"width": 1024, "height": 768})
                while arena.poll() is None:
                    try:
                        if not planned and (results / "manifest.json").exists():
                            planned = _planned(results)
                        if not linked:
                            page.goto(url)
                            linked = bool(page.query_selector_all("a[href^='/watch/']"))
                        page.goto(url + "watch")
                        listing = page.content()
                        assert not leaks(listing, results, planned), leaks(listing, results, planned)
                        seen_playing = seen_playing or 'id="playing"' in listing
                        for href in page.eval_on_selector_all("#shown a", "es => es.map(e => e.href)")[:2]:
                            page.goto(href)
                            if not seen_shown:
                                page.wait_for_timeout(1500)  # a few cards on: the replay as a projector shows it
                                page.screenshot(path=str(shots / "watch-game.png"), full_page=True)
                                page.goto(url + "watch")
                                page.screenshot(path=str(shots / "watch-list.png"), full_page=True)
                                page.goto(href)
                            html = page.content()
                            assert not leaks(html, results, planned), leaks(html, results, planned)
                            seen_shown = True
                            pages += 1
                    except sync_api.Error as error:
                        if "ERR_CONNECTION_REFUSED" in str(error):
                            break  # the live page ends with the run: so does the watch
                        if "ERR_EMPTY_RESPONSE" not in str(error):
                            raise
                        arena.wait(timeout=15)  # a page closing mid-request: only as the run ends
                        break
            finally:
                browser.close()
    finally:
        if arena.poll() is None:
            arena.terminate()
        arena.wait(30)
    print(f"screenshots in {shots}")
    assert seen_playing and seen_shown and pages > 0
    assert linked, "the live page links to no table's game"
