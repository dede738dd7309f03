"""``report.html``: the results folder as one self-contained page (``arena.rating.html``), read back with
the standard library's HTML parser, and once rendered in headless Chromium when Playwright is there."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.event.plan.manifest import Manifest
from arena.event.plan.plan import Plan
from arena.rating import html as page_module
from arena.rating.html import REPORT_FILE, html_report
from arena.rating.report import read_folder
from arena.rating.tables import matrix_cell, standings_cells
from arena.records.store import ResultsStore
from tests.helpers.classroom import class_event, podium_names, shown_as
from tests.helpers.hostile_bots import SCRIPT_DETAIL, SCRIPT_VERSION
from tests.helpers.pages import Node, body_rows, cells, parse
from tests.helpers.runs import ROOT, run, tournament_text, write

HOSTILE = ROOT / "tests" / "helpers" / "hostile_bots.py"
HEURISTIC = "sample_bots.heuristic_bot:HeuristicBot"
BOTS = ("heur", "rand", "hack", "stub")
SECTIONS = ("standings", "scores", "course", "head-to-head", "calling", "bots", "replays")
CHROMIUM = Path("/usr/bin/chromium")
HOSTILE_NAME = "<script>alert('name')</script>\"><img src=x onerror=alert(2)>"


# -- reading the page back (the parser is tests/helpers/pages.py) --------------------------------


def records(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()]


# -- the event -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished round robin of a heuristic bot, a random bot, a bot that crashes with markup in its
    error and its version, and a bot that tries illegal cards, run with the command line's live judge."""
    base = tmp_path_factory.mktemp("html")
    config = write(base / "t.toml", tournament_text(
        BOTS, name="class", seed=11, deal_sets=3, heur=HEURISTIC, hack=f"{HOSTILE}:Scripted",
        stub=f"{HOSTILE}:Obstinate"))
    run(config, base / "results")
    return base / "results"


@pytest.fixture(scope="module")
def text(event: Path) -> str:
    return (event / REPORT_FILE).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def doc(text: str) -> Node:
    return parse(text)


def test_a_run_leaves_the_page_in_its_results_folder(event: Path, text: str) -> None:
    assert text.startswith("<!DOCTYPE html>")
    assert text == html_report(event)  # the same records give the same page


def test_every_section_is_there(doc: Node) -> None:
    for ident in SECTIONS:
        section = doc.by_id(ident)
        assert section.tag == "section" and section.all("h2"), ident
    nav = doc.all("nav")[0]
    assert [a.attrs["href"] for a in nav.all("a")] == [f"#{ident}" for ident in SECTIONS]


def test_the_standings_have_a_row_per_bot_with_every_column_and_its_interval(event: Path, doc: Node) -> None:
    report = read_folder(event)
    tables = doc.by_id("standings").all("table", "standings")
    rows = [row for table in tables for row in body_rows(table)]
    assert len(rows) == len(report.standings) == len(BOTS)
    assert [row.attrs["data-bot"] for row in rows] == report.bots
    header = cells(tables[0].all("thead")[0].all("tr")[0])
    assert header[:4] == ["rank", "bot", "points per game", "95% interval"] and "matchpoints %" in header
    assert "skill ordinal" in header
    for row, standing in zip(rows, report.standings, strict=True):
        shown = cells(row)
        assert shown == [str(cell) for cell in standings_cells(standing, report.rules)]
        assert re.fullmatch(r"\[[+-]\d+\.\d\d, [+-]\d+\.\d\d\]", shown[3]), shown[3]
    assert "3 deal sets, 2 df" in doc.by_id("standings").text()


def test_the_plots_are_inline_svg(doc: Node) -> None:
    scores = doc.by_id("scores").all("svg")
    assert len(scores) == 1
    assert len(scores[0].all("circle", "dot")) == len(BOTS) and len(scores[0].all("line", "bar")) == len(BOTS)
    assert len(scores[0].all("line", "cap")) == 2 * len(BOTS)  # three deal sets: every interval is finite
    course = doc.by_id("course").all("svg")
    assert len(course) == 2
    for svg in course:
        paths = svg.all("path", "line")
        assert len(paths) == len(BOTS)
        assert all(p.attrs["d"].count("L") == 2 for p in paths)  # a point per schedule round, three rounds
    for svg in doc.all("svg"):
        assert svg.attrs["viewbox"].startswith("0 0 ") and int(svg.attrs["width"] or 0) > 0
        assert int(svg.attrs["height"] or 0) > 0 and svg.all("title")


def test_the_head_to_head_matrix_is_a_heat_map(event: Path, doc: Node) -> None:
    report = read_folder(event)
    table = doc.by_id("head-to-head").all("table", "heat")[0]
    rows = body_rows(table)
    assert [cells(row)[0] for row in rows] == report.bots
    for row, a in zip(rows, report.bots, strict=True):
        tds = [cell for cell in row.all("td") if cell.parent is row]
        for cell, b in zip(tds, report.bots, strict=True):
            if a == b:
                assert "self" in cell.classes
                continue
            assert cell.text() == matrix_cell(report.matrix[(a, b)], report.rules)
            assert (cell.attrs.get("style") or "").startswith("background:rgba(")


def test_calling_and_faults_by_bot(event: Path, doc: Node) -> None:
    report = read_folder(event)
    rows = body_rows(doc.by_id("calling").all("table")[0])
    assert [cells(row)[0] for row in rows] == report.bots
    for row, standing in zip(rows, report.standings, strict=True):
        shown = cells(row)
        assert shown[2] == f"{standing.made_pct - standing.too_low_pct:.0f}"  # exact: made, not over the call
        assert shown[3] == f"{standing.made_pct:.0f}" and shown[4] == f"{standing.too_high_pct:.0f}"
        assert shown[7] == f"{standing.overtricks:.2f}" and shown[9] == str(standing.faults)


def test_each_bot_section_lists_its_faults_with_game_round_trick_and_detail(event: Path, doc: Node) -> None:
    seen: dict[str, list[tuple[str, str, str, str, str]]] = {}
    for record in records(event):
        for fault in record["faults"]:
            trick = "calls" if fault["trick"] is None else str(fault["trick"] + 1)
            seen.setdefault(record["seats"][fault["seat"]], []).append(
                (record["game"], str(fault["round"]), trick, fault["kind"], fault["detail"]))
    assert set(seen) == {"hack", "stub"}
    sections = {s.all("h3")[0].text(): s for s in doc.by_id("bots").all("section", "bot")}
    assert set(sections) == set(BOTS)
    for bot in BOTS:
        tables = sections[bot].all("table", "faults")
        if bot not in seen:
            assert not tables and "No faults." in sections[bot].text()
            continue
        rows = [cells(row) for row in body_rows(tables[0])]
        listed = {(r[0], r[1], r[2], r[4], r[6]) for r in rows}
        assert listed == set(seen[bot])
        assert {r[0] for r in rows} == {game for game, *_ in seen[bot]}  # every game id of its faults
        assert sum(int(r[5]) for r in rows) == len(seen[bot])  # retries refused alike are one row
        assert f"{len(seen[bot])} faults." in sections[bot].text()
        assert "callbreak-arena replay" in sections[bot].text()
        links = [a.attrs["href"] for a in tables[0].all("a")]
        assert links and all(doc.by_id(href[1:]).tag == "details" for href in links)  # replayed below


def test_the_replays_show_every_card_of_every_round(event: Path, doc: Node) -> None:
    by_game: dict[str, list[dict[str, Any]]] = {}
    for record in records(event):
        by_game.setdefault(record["game"], []).append(record)
    replays = doc.by_id("replays").all("details", "replay")
    shown = [r.attrs["id"] for r in replays]
    assert all(ident is not None and ident.startswith("game-") for ident in shown)
    games = [str(ident)[5:] for ident in shown]
    blocks = {rounds[0]["block"] for rounds in by_game.values()}
    assert {f"{block}-p0" for block in blocks} <= set(games)  # the first game of every block (three blocks)
    for bot in ("hack", "stub"):
        assert any(any(f["seat"] == r["seats"].index(bot) for r in by_game[g] for f in r["faults"]) for g in games)
    for replay, game in zip(replays, games, strict=True):
        rounds = replay.all("div", "round")
        assert len(rounds) == len(by_game[game]) == 5
        for shown_round, record in zip(rounds, by_game[game], strict=True):
            hands = shown_round.all("div", "hands")[0].all("span", "card")
            assert len(hands) == 52 and len({c.text() for c in hands}) == 52
            tricks = body_rows(shown_round.all("table", "tricks")[0])
            assert len(tricks) == 13
            for row, trick in zip(tricks, record["tricks"], strict=True):
                assert len(row.all("span", "card")) == 4 and len(row.all("span", "win")) == 1
                assert cells(row)[-1].startswith(f"seat {trick['winner']} ")
            calls = ", ".join(f"seat {(record['dealer'] + 1 + k) % 4} {record['calls'][(record['dealer'] + 1 + k) % 4]}"
                              for k in range(4))
            assert calls in shown_round.text()
    red = [c for c in doc.all("span", "card") if c.text()[-1] in "♥♦"]
    assert red and all("red" in c.classes for c in red)
    assert all("red" not in c.classes for c in doc.all("span", "card") if c.text()[-1] in "♠♣")
    assert "callbreak-arena replay" in doc.by_id("replays").text()


def test_text_from_bots_is_escaped(text: str, doc: Node) -> None:
    assert SCRIPT_VERSION not in text and SCRIPT_DETAIL not in text
    assert SCRIPT_VERSION in doc.by_id("bots").text() and SCRIPT_DETAIL in doc.by_id("bots").text()
    only_own_markup(doc)


def only_own_markup(doc: Node) -> None:
    """The page's one script is its own, and no element or attribute came from a bot."""
    scripts = doc.all("script")
    assert len(scripts) == 1 and scripts[0].text() == page_module._SCRIPT
    assert not doc.all("img")
    assert not [(n.tag, a) for n in doc.walk() for a in n.attrs if a.startswith("on")]


def test_hostile_bot_names_are_escaped(event: Path, tmp_path: Path) -> None:
    folder = tmp_path / "renamed"
    shutil.copytree(event, folder)
    (folder / "report.html").unlink()
    lines = (folder / "records.jsonl").read_text(encoding="utf-8")
    (folder / "records.jsonl").write_text(lines.replace('"rand"', json.dumps(HOSTILE_NAME)), encoding="utf-8")
    text = html_report(folder)
    assert HOSTILE_NAME not in text
    doc = parse(text)
    only_own_markup(doc)
    assert HOSTILE_NAME in [row.attrs["data-bot"] for row in body_rows(doc.all("table", "standings")[0])]
    assert HOSTILE_NAME in doc.by_id("head-to-head").text() and HOSTILE_NAME in doc.by_id("course").text()
    assert HOSTILE_NAME in doc.by_id("replays").text()


def test_the_page_needs_no_network(text: str, doc: Node) -> None:
    assert "http://" not in text.lower() and "https://" not in text.lower() and "file:" not in text.lower()
    assert not [n.tag for n in doc.walk() if n.tag in ("link", "img", "iframe", "object", "embed", "base")]
    assert not [(n.tag, a) for n in doc.walk() for a in n.attrs if a in ("src", "srcset", "action", "data")]
    assert all((a.attrs["href"] or "").startswith("#") for a in doc.all("a"))
    style = doc.all("style")[0].text()
    assert "url(" not in style and "@import" not in style
    policy = [m.attrs["content"] for m in doc.all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert policy and (policy[0] or "").startswith("default-src 'none'")


def test_what_the_page_holds_is_bounded(event: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_module, "FAULTS_LISTED", 2)
    monkeypatch.setattr(page_module, "FAULT_REPLAYS_PER_BOT", 1)
    monkeypatch.setattr(page_module, "SAMPLE_BLOCKS", 1)
    monkeypatch.setattr(page_module, "CHART_POINTS", 2)
    doc = parse(html_report(event))
    for path in doc.by_id("course").all("path", "line"):
        assert path.attrs["d"].count("L") == 1  # rounds 1 and 3 of 3: evenly spaced, and the last
    assert "3 rounds were scored; the lines show 2 of them" in doc.by_id("course").text()
    assert 1 <= len(doc.by_id("replays").all("details", "replay")) <= 3  # a game of each faulty bot, one sample
    for table in doc.by_id("bots").all("table", "faults"):
        assert len(body_rows(table)) == 2
    assert "more faults, not listed here" in doc.by_id("bots").text()


def test_the_command_writes_the_page(event: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "page.html"
    assert main(["report", str(event), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == html_report(event)
    assert str(out) in capsys.readouterr().out
    assert main(["report", str(tmp_path)]) == 2  # not a results folder
    assert "no manifest.json" in capsys.readouterr().err


def test_a_folder_without_games(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "empty")
    store.write_manifest(Manifest(tournament="empty", config={}, identity="0",
                                  plan=Plan("cyclic", 0, False, False, [], []), house=[]).to_dict())
    store.open()
    store.close()
    store.records_path.touch()  # an event begun, no game complete yet
    doc = parse(html_report(tmp_path / "empty"))
    for ident in SECTIONS:
        assert doc.by_id(ident).all("h2")
    assert not doc.all("svg") and "No complete game yet." in doc.by_id("replays").text()
    header = doc.all("header")[0].text()
    assert "as of " in header and "Winner" not in header  # not over: the day of its records, and no winner


@pytest.mark.slow
def test_the_page_renders_in_chromium(event: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    address = (event / REPORT_FILE).as_uri()
    requests: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            context = browser.new_context(offline=True, viewport={"width": 1366, "height": 900})
            page = context.new_page()
            page.on("request", lambda request: requests.append(request.url))
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(address)
            sizes = page.eval_on_selector_all(
                "svg.chart", "all => all.map(e => [e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
            assert len(sizes) == 3 and all(width > 300 and height > 100 for width, height in sizes), sizes
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 50_000
            # The page's own script (allowed by its policy) opens the replay a fault links to.
            link = page.locator("table.faults a").first
            target = (link.get_attribute("href") or "#")[1:]
            assert target and not page.evaluate(f"document.getElementById({json.dumps(target)}).open")
            link.click()
            page.wait_for_function(f"() => document.getElementById({json.dumps(target)}).open")  # a function: no eval
            # On a phone the page itself never scrolls sideways: wide tables scroll inside their own box.
            phone = context.new_page()
            phone.set_viewport_size({"width": 390, "height": 844})
            phone.goto(address)
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390
            phone.screenshot(path=str(tmp_path / "report-phone.png"))
        finally:
            browser.close()
    assert set(requests) == {address} and errors == []


# -- report.html as the audience reads it --------------------------------------------------------------


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A class's event played through the command line (about 20 s): the tests that read it are marked slow."""
    return class_event(tmp_path_factory.mktemp("class"))


@pytest.fixture(scope="module")
def week_doc(week: Path) -> Node:
    return parse((week / REPORT_FILE).read_text(encoding="utf-8"))


def words(node: Node) -> str:
    return " ".join(node.text().split())


@pytest.mark.slow
def test_the_report_names_the_winner_the_runner_up_and_the_day(week: Path, week_doc: Node) -> None:
    winner, runner_up = podium_names(week)
    header = words(week_doc.all("header")[0])
    assert f"Winner: {shown_as(winner)}" in header and f"runner-up: {shown_as(runner_up)}" in header
    status = json.loads((week / "status.json").read_text(encoding="utf-8"))
    day = __import__("time").strftime("%Y-%m-%d", __import__("time").localtime(status["updated"]))
    assert f"ended {day}" in header, header


@pytest.mark.slow
def test_the_columns_are_explained_on_the_page(week_doc: Node) -> None:
    text = words(week_doc.by_id("standings"))
    assert "docs/standings.md" not in text and "docs/statistics.md" not in text
    glossary = week_doc.by_id("standings").all("dl", "glossary")[0]
    terms = [words(dt) for dt in glossary.all("dt")]
    headers = cells(week_doc.all("table", "standings")[0].all("thead")[0].all("tr")[0])
    assert terms == headers
    assert all(words(dd) for dd in glossary.all("dd"))


@pytest.mark.slow
def test_the_report_shows_the_display_names_of_the_roster(week_doc: Node) -> None:
    bots = {row.attrs["data-bot"]: cells(row)[1] for table in week_doc.all("table", "standings")
            for row in body_rows(table)}
    assert bots["alice"] == "Alice Adhikari (alice)" and bots["teacher"] == "teacher"
    assert bots["house-1"] == "house-1 (house)"
    sections = {words(s.all("h3")[0]): s for s in week_doc.by_id("bots").all("section", "bot")}
    assert "Dave Dahal (dave)" in sections


@pytest.mark.slow
def test_a_version_says_what_it_is(week_doc: Node) -> None:
    sections = {s.all("h3")[0].text(): words(s) for s in week_doc.by_id("bots").all("section", "bot")}
    # The sample random bot's class says version "3", the heuristic bot's "1": what the bot states, unchecked.
    assert 'version "3" (the version the bot states about itself' in sections["Alice Adhikari (alice)"]
    assert 'version "1" (the version the bot states about itself' in sections["Dave Dahal (dave)"]


@pytest.mark.slow
def test_each_replay_says_who_sat_who_won_and_its_faults(week: Path, week_doc: Node) -> None:
    games: dict[str, list[dict[str, Any]]] = {}
    for record in records(week):
        games.setdefault(record["game"], []).append(record)
    entries = week_doc.by_id("replays").all("ul")[0].all("li")
    texts = [words(li) for li in entries]
    assert len(texts) == len(set(texts)) > 1
    for text in texts:
        game = text.split(":")[0]
        last = games[game][-1]
        assert all(shown_as(bot) in text for bot in last["seats"]), text
        first = last["places"].index(1)
        assert f"won by {shown_as(last['seats'][first])}" in text, text
        faults = sum(len(r["faults"]) for r in games[game])
        assert (f"{faults} fault" in text) if faults else "no faults" in text, text


@pytest.mark.slow
def test_the_report_command_takes_the_roster_for_display_names(week: Path, tmp_path: Path) -> None:
    roster = week.parent.parent / "roster.toml"
    plain, named = tmp_path / "plain.html", tmp_path / "named.html"
    assert main(["report", str(week), "--out", str(plain)]) == 0
    assert main(["report", str(week), "--out", str(named), "--roster", str(roster)]) == 0
    assert "Alice Adhikari (alice)" in named.read_text(encoding="utf-8")
    assert "Alice Adhikari" not in plain.read_text(encoding="utf-8")
    assert main(["report", str(week), "--out", str(plain), "--roster", str(tmp_path / "none.toml")]) == 2
