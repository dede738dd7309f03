"""The live leaderboard (``arena.rating.leaderboard``, served by ``arena.web.live``): the board read from a
results folder, every text escaped, its small HTTP server, the command line's ``--page``, and the page in
headless Chromium following a real tournament as it plays."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from arena.cli import main
from arena.event.setup.roster import ROSTER_FILE, Roster
from arena.rating.leaderboard import Board, render_page
from arena.rating.standing import NOT_RANKED_TITLE
from arena.web.live import SECURITY, LivePage, PageLimits
from tests.helpers.classroom import ARENA, class_event, podium_names, shown_as
from tests.helpers.hostile_bots import SCRIPT_DETAIL
from tests.helpers.pages import Node, body_rows, cells, parse
from tests.helpers.runs import ROOT, SLOW, run, tournament_text, write

CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = ROOT / "tests" / "helpers" / "hostile_bots.py"
HOSTILE_DISPLAY = "<img src=x onerror=alert(1)> Eve \"the\" <script>alert('x')</script>"
POLICY = dict(SECURITY)["Content-Security-Policy"]


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished round robin in a class folder: ``alice`` and ``eve`` are on its roster with display
    names (eve's is markup), ``hack`` crashes with markup in its error once a round."""
    base = tmp_path_factory.mktemp("live")
    roster = Roster(base / ROSTER_FILE)
    roster.add("alice", "Alice Liddell")
    roster.add("eve", HOSTILE_DISPLAY)
    roster.save()
    run(write(base / "t.toml", tournament_text(("alice", "eve", "hack", "rand"), name="class", deal_sets=2,
                                               hack=f"{HOSTILE}:Scripted")), base / "results")
    return base


def board(event: Path) -> Board:
    return Board(event / "results", event / ROSTER_FILE)


def test_the_board_holds_the_standings_with_display_names_and_the_latest_faults(event: Path) -> None:
    snapshot = board(event).snapshot()
    assert snapshot.title == "class" and snapshot.status is not None and snapshot.status.state == "finished"
    assert not snapshot.live and snapshot.unit == "points"
    rows = {row.bot: row for row in snapshot.standings}
    assert set(rows) == {"alice", "eve", "hack", "rand"}
    assert rows["alice"].display == "Alice Liddell" and rows["eve"].display == HOSTILE_DISPLAY
    assert rows["rand"].display == "" and all(row.games == 8 for row in rows.values())
    assert rows["hack"].faults == 40 and rows["alice"].faults == 0  # a crash in each of its 40 rounds
    assert sorted(row.rank for row in rows.values() if row.rank is not None) == [1, 2, 3, 4]
    assert len(snapshot.faults) == 8 and all(f.bot == "hack" and f.kind == "crash" for f in snapshot.faults)
    # The newest first: the faults of the last rounds recorded, each at the first card the bot played in a round.
    lines = (event / "results" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    newest = [(r["game"], r["round"]) for r in map(json.loads, reversed(lines)) if r["faults"]][:8]
    assert [(f.game, f.round) for f in snapshot.faults] == newest
    assert all(f.trick == 1 and 1 <= f.round <= 5 for f in snapshot.faults)
    data = json.loads(json.dumps(snapshot.to_dict()))
    assert data["displays"] == {"alice": "Alice Liddell", "eve": HOSTILE_DISPLAY}
    assert {row["bot"]: row["display"] for row in data["standings"]}["eve"] == HOSTILE_DISPLAY


def test_every_text_a_bot_or_a_student_chose_is_escaped(event: Path) -> None:
    text = render_page(board(event).snapshot())
    assert text.count("<script") == 1 and "<img" not in text  # the page's own script only
    assert "&lt;img src=x onerror=alert(1)&gt; Eve &quot;the&quot; &lt;script&gt;" in text
    script = re.search(r"<script>(.*)</script>", text, re.S)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in POLICY  # the policy lets exactly that script run


def test_faults_are_shown_without_their_details(event: Path) -> None:
    """A detail may name cards of a deal still being played at other tables: the board shows where each
    fault happened and what its kind means, never what the bot said (report.html has it afterwards)."""
    snapshot = board(event).snapshot()
    text = render_page(snapshot) + json.dumps(snapshot.to_dict())
    for form in (SCRIPT_DETAIL, html.escape(SCRIPT_DETAIL), json.dumps(SCRIPT_DETAIL)[1:-1]):
        assert form not in text
    assert "the bot raised an error or its process died" in text  # what a crash is


def get(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_the_server_gives_the_page_the_board_and_the_data(event: Path) -> None:
    page = LivePage(event / "results", roster=event / ROSTER_FILE, port=0)
    url = page.start()
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url) and not page.everywhere
        code, headers, body = get(url)
        assert code == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Content-Security-Policy"] == POLICY and headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY" and headers["Referrer-Policy"] == "no-referrer"
        assert headers["Cache-Control"] == "no-store"
        assert body.decode().startswith("<!DOCTYPE html>") and "Alice Liddell" in body.decode()
        code, _, fragment = get(url + "board")
        assert code == 200 and fragment.decode().startswith("<header>") and b"<script" not in fragment
        code, headers, data = get(url + "live.json")
        assert code == 200 and headers["Content-Type"] == "application/json"
        assert len(json.loads(data)["standings"]) == 4
        code, _, body = get(url + "board", method="HEAD")
        assert code == 200 and body == b""
        assert get(url + "records.jsonl")[0] == 404
        assert get(url + "../manifest.json")[0] == 404
    finally:
        page.close()
    with pytest.raises(OSError):
        get(url)


def test_a_page_port_in_use_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "t.toml", tournament_text())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["run", str(config), "--results", str(tmp_path / "results"), "--page", str(port)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"callbreak-arena: error: the live page: cannot listen on 127.0.0.1:{port}: port {port} is in "
                       "use by another program (choose another port, or 0 for any free one)")
    assert not (tmp_path / "results" / "records.jsonl").exists()


def test_a_configuration_with_a_page_table_serves_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path / "t.toml", tournament_text(extra="[page]\nport = 0\n"))
    assert main(["run", str(config), "--results", str(tmp_path / "results"), "--no-progress"]) == 0
    [line] = [line for line in capsys.readouterr().err.splitlines() if "live page" in line]
    url = line.rpartition(" ")[2]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url)
    with pytest.raises(OSError):  # closed with the run
        get(url)
    plain = write(tmp_path / "plain.toml", tournament_text(name="plain"))
    assert main(["run", str(plain), "--results", str(tmp_path / "plain"), "--no-progress"]) == 0
    assert "live page" not in capsys.readouterr().err


# -- in a browser --------------------------------------------------------------------------------------


def _slow_field() -> str:
    """Four slowed in-process random bots: a game takes about a second, 16 games on two tables."""
    return "".join(f'\n[[bots]]\nname = "slow-{n}"\npython = "{SLOW}"\nseed = {n}\noptions = {{ delay = 0.004 }}\n'
                   for n in range(1, 5))


def _wait_for_line(path: Path, marker: str, process: subprocess.Popen[bytes], timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if marker in line:
                return line
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"no line with {marker!r}: {path.read_text(encoding='utf-8', errors='replace')}")


GAMES = "() => Math.max(0, ...Array.from(document.querySelectorAll('table.standings td.games'), e => +e.textContent))"
"""The most games any bot of the standings shown has played (a function: the page's policy forbids eval)."""
MORE = f"least => ({GAMES})() > least"


@pytest.mark.slow
def test_the_page_follows_a_running_tournament_in_chromium(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    config = tmp_path / "live.toml"
    config.write_text('[tournament]\nname = "projector"\nseed = 5\ndeal_sets = 4\nconcurrency = 2\n\n'
                      "[time]\ndeadline_ms = 10000\n" + _slow_field(), encoding="utf-8")
    out, err = tmp_path / "run.out", tmp_path / "run.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results",
                                  str(tmp_path / "results"), "--page", "0", "--no-progress"],
                                 cwd=ROOT, stdout=stdout, stderr=stderr)
    requests: list[str] = []
    errors: list[str] = []
    try:
        url = _wait_for_line(err, "live page at", arena).rpartition(" ")[2]
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
            try:
                page = browser.new_page(viewport={"width": 1600, "height": 900})
                page.on("request", lambda request: requests.append(request.url))
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.goto(url)
                assert page.title() == "projector: live"
                # The standings appear, and then change while the tournament plays, without a reload.
                page.wait_for_function(MORE, arg=0, timeout=30_000)
                first = page.evaluate(GAMES)
                done = int(page.inner_text("#games-done"))
                page.wait_for_function(MORE, arg=first, timeout=30_000)
                assert int(page.inner_text("#games-done")) > done
                assert page.locator("table.standings tbody tr").count() == 4
                assert page.locator("ul.bots li.playing").count() == 4
                assert "running" in page.inner_text("span.state")
                page.screenshot(path=str(tmp_path / "live-page.png"), full_page=True)
                assert (tmp_path / "live-page.png").stat().st_size > 20_000
                assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded
            finally:
                browser.close()
        assert arena.wait(90) == 0, err.read_text(encoding="utf-8")
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait(10)
    assert errors == []
    assert requests and all(request in (url, url + "board") for request in requests), set(requests)


# -- what a client may cost the page -------------------------------------------------------------------


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _half_requests(url: str, count: int) -> list[socket.socket]:
    """``count`` connections to the page, each having sent half a request line and then nothing."""
    host, port = urllib.parse.urlsplit(url).hostname, urllib.parse.urlsplit(url).port
    held = []
    for _ in range(count):
        client = socket.create_connection((host, port), timeout=10)
        client.sendall(b"GET / HT")
        held.append(client)
    return held


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts the arena's threads in /proc (Linux)")
def test_idle_connections_cost_the_arena_no_thread_and_the_page_answers_through_them(tmp_path: Path) -> None:
    config = tmp_path / "live.toml"
    config.write_text('[tournament]\nname = "idle"\nseed = 5\ndeal_sets = 40\nconcurrency = 2\n\n'
                      "[time]\ndeadline_ms = 10000\n" + _slow_field(), encoding="utf-8")
    err = tmp_path / "run.err"
    with err.open("wb") as stderr:
        arena = subprocess.Popen([sys.executable, "-m", "arena", "run", str(config), "--results",
                                  str(tmp_path / "results"), "--page", "0", "--no-progress"],
                                 cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr)
    held: list[socket.socket] = []
    try:
        url = _wait_for_line(err, "live page at", arena).rpartition(" ")[2]
        assert get(url)[0] == 200  # the page's own threads exist (a first answer made)
        before = _threads(arena.pid)
        held = _half_requests(url, 200)
        most = before
        for _ in range(20):  # the arena accepts them as they come: watch for a while
            most = max(most, _threads(arena.pid))
            time.sleep(0.05)
        code, _, body = get(url)
        most = max(most, _threads(arena.pid))
        assert code == 200 and body.startswith(b"<!DOCTYPE html>")
        # The arena's own threads (the in-process bots' among them) may come and go: 200 connections
        # held open would have been 200 threads.
        assert most <= before + 16, (before, most)
        assert arena.poll() is None
    finally:
        for client in held:
            client.close()
        arena.kill()
        arena.wait(10)


def _until_closed(client: socket.socket) -> bytes:
    """Everything the page sends on a connection, up to its end."""
    client.settimeout(30)
    out = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := client.recv(4096):
            out += chunk
    return out


def test_the_page_refuses_connections_beyond_its_limit_and_ends_requests_that_never_arrive(event: Path) -> None:
    limits = PageLimits(connections=20, head_s=1.0)
    page = LivePage(event / "results", limits=limits)
    before = threading.active_count()
    url = page.start()
    held: list[socket.socket] = []
    try:
        threads = threading.active_count()
        held = _half_requests(url, 20)
        # Accepted in the order they came: the 20 held fill the page, those after them are refused at once.
        for client in _half_requests(url, 5):
            with client:
                answer = _until_closed(client)
            assert answer.startswith(b"HTTP/1.1 503 ") and b"too many connections" in answer
        assert threading.active_count() <= threads + limits.threads
        # A request that never arrives whole is answered 408 and closed after head_s.
        for client in held:
            answer = _until_closed(client)
            assert answer.startswith(b"HTTP/1.1 408 ") and b"within 1 seconds" in answer
        assert get(url)[0] == 200
        # So is one that trickles in a byte at a time, each byte well within the time allowed.
        with socket.create_connection(("127.0.0.1", page.port), timeout=10) as slow:
            slow.setblocking(False)
            answer = b""
            for byte in b"GET / HTTP/1.0\r\n" + b"X-Slow: " + b"a" * 400:
                with contextlib.suppress(BlockingIOError):
                    answer = slow.recv(4096)
                if answer:
                    break
                with contextlib.suppress(OSError):
                    slow.send(bytes([byte]))
                time.sleep(0.02)
            assert answer.startswith(b"HTTP/1.1 408 ")
        # Not HTTP, too long (whole, in pieces, or in too many lines), or another method: a clear answer each.
        too_long = b"GET / HTTP/1.0\r\n" + (b"X-Long: " + b"a" * 1000 + b"\r\n") * 40
        too_many = b"GET / HTTP/1.0\r\n" + b"X-Many: a\r\n" * 100 + b"\r\n"
        for pieces, status in (([b"hello\r\n\r\n"], b"400"), ([too_long + b"\r\n"], b"431"),
                               ([too_long[:20000], too_long[20000:]], b"431"), ([too_many], b"431"),
                               ([b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello"], b"501")):
            with socket.create_connection(("127.0.0.1", page.port), timeout=10) as client:
                for piece in pieces:
                    client.sendall(piece)
                    time.sleep(0.05)
                assert _until_closed(client).startswith(b"HTTP/1.1 " + status + b" ")
        assert get(url)[0] == 200
    finally:
        for client in held:
            client.close()
        page.close()
    assert threading.active_count() <= before  # the page's threads end with it


# -- a class event as the class and the audience read it -------------------------------------------------

@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A class's event played through the command line (about 20 s): the tests that read it are marked slow."""
    return class_event(tmp_path_factory.mktemp("class"))


def class_board(week: Path) -> tuple[str, Node]:
    text = render_page(Board(week, week.parents[1] / ROSTER_FILE).snapshot())
    return text, parse(text)


def words(node: Node) -> str:
    return " ".join(node.text().split())


@pytest.mark.slow
def test_only_bots_that_played_are_ranked_on_the_live_page(week: Path) -> None:
    """A student who never connected is not ranked on the fallback player's results, and the house bots that
    fill tables are not ranked at all: both are listed apart, each with why."""
    _, doc = class_board(week)
    section = doc.by_id("standings")
    [ranked] = [t for t in section.all("table", "standings") if "apart" not in t.classes]
    [apart] = section.all("table", "apart")
    standings = json.loads((week / "standings.json").read_text(encoding="utf-8"))["standings"]
    assert [row.attrs["data-bot"] for row in body_rows(ranked)] == [r["bot"] for r in standings if r["rank"]]
    assert {"teacher", "teacher-2", "dave"} <= {row.attrs["data-bot"] for row in body_rows(ranked)}
    rows = {row.attrs["data-bot"]: words(row) for row in body_rows(apart)}
    assert set(rows) == {r["bot"] for r in standings if not r["rank"]}
    assert {"house-1", "house-2", "house-3", "erin", "frank", "gita"} <= set(rows)
    assert all("house bot (fills tables)" in rows[f"house-{n}"] for n in (1, 2, 3))
    assert all("the fallback played 100% for it" in rows[bot] for bot in ("erin", "frank", "gita"))
    assert NOT_RANKED_TITLE in words(section)


@pytest.mark.slow
def test_names_read_apart_and_a_submission_is_not_said_to_connect(week: Path) -> None:
    _, doc = class_board(week)
    text = words(doc.by_id("board"))
    assert "Alice Adhikari (alice)" in text and "Adhikarialice" not in text
    items = {words(li).split(" · ")[0]: words(li) for li in doc.all("ul", "bots")[0].all("li")}
    alice = items["Alice Adhikari (alice)"]
    assert "launched by the arena" in alice and "network" not in alice
    assert "not connected" in items["Erin Eklund (erin)"]
    assert "in the arena" in items["teacher"]
    assert "●" not in text


@pytest.mark.slow
def test_absence_is_one_line_per_bot_not_a_fault_per_game(week: Path) -> None:
    _, doc = class_board(week)
    faults = doc.by_id("faults")
    assert all("absent" not in cells(row)[1] for table in faults.all("table") for row in body_rows(table))
    lines = [words(li) for li in faults.all("ul", "absent")[0].all("li")]
    absent: dict[str, set[str]] = {}
    for line in (week / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for fault in record["faults"]:
            if fault["kind"] == "absent":
                absent.setdefault(record["seats"][fault["seat"]], set()).add(record["game"])
    assert {"erin", "frank", "gita"} <= set(absent) and all(len(absent[bot]) == 8 for bot in ("erin", "frank", "gita"))
    assert lines == [f"{shown_as(bot)}: not there for {len(games)} games; the fallback player took its seats"
                     for bot, games in sorted(absent.items())]


@pytest.mark.slow
def test_after_the_end_the_page_says_so_and_names_the_winner(week: Path) -> None:
    _, doc = class_board(week)
    winner, runner_up = podium_names(week)
    header = words(doc.all("header")[0])
    assert "The event has ended" in header
    assert f"Winner: {shown_as(winner)}" in header and f"runner-up: {shown_as(runner_up)}" in header
    assert "present" not in words(doc.by_id("board")) and "connected," not in words(doc.by_id("board"))


def test_at_zero_games_the_page_says_whom_it_waits_for(tmp_path: Path) -> None:
    roster = Roster(tmp_path / ROSTER_FILE)
    roster.add("zoe", "Zoë Ortiz")
    roster.save()
    (tmp_path / "w.toml").write_text(
        '[tournament]\nname = "wait"\nseed = 3\ndeal_sets = 1\nroster = "roster.toml"\n\n'
        "[time]\ndeadline_ms = 5000\nabsent_after_s = 1\n"
        + "".join(f'\n[[bots]]\nname = "r{n}"\npython = "sample_bots.random_bot:RandomBot"\n' for n in (1, 2, 3)),
        encoding="utf-8")
    err = tmp_path / "serve.err"
    with err.open("wb") as stderr:
        arena = subprocess.Popen([str(ARENA), "serve", "w.toml", "--results", "res", "--page", "0", "--no-progress"],
                                 cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        url = _wait_for_line(err, "live page at", arena).rpartition(" ")[2]
        deadline = time.monotonic() + 30
        text = ""
        while time.monotonic() < deadline and "never connected" not in text:
            text = words(parse(get(url + "board")[2].decode()).by_id("standings"))
            time.sleep(0.2)
        assert "No complete game yet" in text
        assert "Waiting for Zoë Ortiz (zoe): never connected in" in text, text
    finally:
        arena.kill()
        arena.wait(10)


@pytest.mark.slow
def test_the_winner_is_on_screen_at_the_end_in_chromium(week: Path, tmp_path: Path) -> None:
    """The live page and report.html of the finished event at 1024x768, as a projector shows them: the winner's
    name is in the first screen of each. The screenshots are kept, and their paths printed."""
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright is not installed (pip install playwright; the dev extra has it)")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    winner, _ = podium_names(week)
    page = LivePage(week, roster=week.parents[1] / ROSTER_FILE, port=0)
    url = page.start()
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
            try:
                for name, address in (("live-page", url), ("report", (week / "report.html").as_uri())):
                    tab = browser.new_page(viewport={"width": 1024, "height": 768})
                    tab.goto(address)
                    shot = tmp_path / f"{name}-1024x768.png"
                    tab.screenshot(path=str(shot))
                    tab.screenshot(path=str(tmp_path / f"{name}-whole.png"), full_page=True)
                    print(f"screenshot of the {name}: {shot}")
                    found = tab.get_by_text(f"Winner: {shown_as(winner)}").first
                    box = found.bounding_box()
                    assert found.is_visible() and box is not None and box["y"] + box["height"] <= 768, (name, box)
                    width = tab.evaluate("document.documentElement.scrollWidth")
                    assert width <= 1024, (name, width)  # nothing runs off the side of the screen
                    tab.close()
                    phone = browser.new_page(viewport={"width": 390, "height": 844})  # a student's phone
                    phone.goto(address)
                    phone.screenshot(path=str(tmp_path / f"{name}-390x844.png"))
                    width = phone.evaluate("document.documentElement.scrollWidth")
                    assert width <= 390, (name, width)  # wide tables scroll in their own box, not the page
                    phone.close()
            finally:
                browser.close()
    finally:
        page.close()
