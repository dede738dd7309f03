"""A hostile entrant and hostile strangers against a real ladder: ``ladder serve`` run as a process with its
sandboxed checks and its blocks, attacked over real sockets from other loopback addresses (127.0.0.x), with
real archives (made by ``tar`` and ``cc`` where the test says so) and the submissions of a class beside them.

Each test is a finding of a hostile tester, held: what an upload may cost (a bomb is refused at its first byte
past the budget, and the site answers meanwhile), what one client address may hold (a share of the
connections, an anonymous form refused before its body), what a stranger sees of an entrant (which check failed
and where, never its detail, hand or stderr, and no path of the server anywhere), the quotas of tests and
scrimmages, the version test's first LLR, and a compiled bot in any language playing on the ladder as it does
in ``run``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from arena.ladder.control import Ladder
from arena.ladder.db import Block, BlockState, Check, Organiser, Refusal, Test, TestPoint, Version, VersionState
from arena.ladder.intake import VERSIONS, SubmissionError, TooOften
from arena.transports.grpc.tokens import new_token, token_sha256
from arena.web.ladder import SiteLimits
from tests.helpers.hostile_uploads import hostile_archives, tar_bomb, tar_of, zip_of
from tests.helpers.ladder import GOOD_BOT, SANDBOX, Served, make_ladder, serving
from tests.helpers.runs import ROOT

HOUSE = ("sample_bots.heuristic_bot:HeuristicBot", "sample_bots.random_bot:RandomBot",
         "sample_bots.random_bot:RandomBot")
NATIVE = ROOT / "benchmarks" / "native" / "trivial_stdio.c"
STDIO = b'{"kind": "stdio", "command": "./bot"}'
CRASHING_BOT = '''\
"""Raises on its first call: the check sees it crash, and its stderr holds a traceback with its own path."""
from arena.botkit import Bot, run


class Crashing(Bot):
    name = "crashing"

    def call(self, view):
        raise RuntimeError("my model file is missing")

    def play(self, view):
        return view.legal[0]


if __name__ == "__main__":
    raise SystemExit(run(Crashing))
'''


BOMB = '''\
"""A fork bomb and a /tmp filler: as many processes and as much of /tmp as it can get (bounded here at 400 and at
200 MiB, so that a machine without the limits survives the test); says what it got, and ends before it connects."""
import os, sys, time

PROCESSES, TMP_MIB = 400, 200
started = 0
for _ in range(PROCESSES):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:  # each child forks on too, until the machine (or the bot's cap) says no
        try:
            os.fork()
        except OSError:
            pass
        time.sleep(60)
        os._exit(0)
    started += 1
written = 0
try:
    with open("/tmp/filler", "wb") as out:
        while written < TMP_MIB << 20:
            out.write(bytes(1 << 20))
            out.flush()
            written += 1 << 20
except OSError:
    pass
print(f"BOMB started={started} tmp_mib={written >> 20}", file=sys.stderr, flush=True)
raise SystemExit(1)
'''


def _cc() -> str:
    found = shutil.which("cc")
    if found is None:
        pytest.skip("no C compiler (cc) to build the compiled bot with: apt-get install -y gcc")
    return found


def _compiled_bot(folder: Path) -> Path:
    """A folder with the C stdio bot of the benchmarks built in it (``bot``, executable) and its ``bot.json``."""
    folder.mkdir(parents=True)
    subprocess.run([_cc(), "-O2", "-o", str(folder / "bot"), str(NATIVE)], check=True, capture_output=True)
    (folder / "bot.json").write_bytes(STDIO)
    return folder


def _packed(folder: Path, archive: Path) -> bytes:
    """``folder`` packed as a student packs it: ``tar czf ARCHIVE -C FOLDER .`` (its names start ``./``)."""
    subprocess.run(["tar", "czf", str(archive), "-C", str(folder), "."], check=True, capture_output=True)
    return archive.read_bytes()


# -- uploads, unpacked by the ladder itself ------------------------------------------------------------


def test_every_hostile_archive_is_refused_in_words_counted_and_leaves_nothing(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", per_hour="100")
    ladder.add_entrant("mallory")
    archives = hostile_archives()
    for what, (filename, data) in archives.items():
        with pytest.raises(SubmissionError) as refused:
            ladder.submit("mallory", filename, data)
        assert str(refused.value).startswith(filename), (what, refused.value)
        versions = tmp_path / "ladder" / VERSIONS
        assert not versions.exists() or not list(versions.iterdir()), what
    with ladder.session() as session:
        assert session.scalar(select(func.count()).select_from(Version)) == 0
        assert session.scalar(select(func.count()).select_from(Refusal)) == len(archives)  # each kept, and counted
    ladder.close()


def test_an_archive_is_read_only_in_the_compression_its_name_says(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", per_hour="100")
    ladder.add_entrant("mallory")
    with pytest.raises(SubmissionError, match="it is bzip2-compressed, which its name does not say"):
        ladder.submit("mallory", "bot.tar", tar_bomb("bzip2", members=50))  # 50 GiB of zeros in 2 MB
    with pytest.raises(SubmissionError, match=r"it is gzip-compressed, which its name does not say: name it \.tar\.gz"):
        ladder.submit("mallory", "bot.tar", tar_of({"bot.py": GOOD_BOT.encode()}))
    with pytest.raises(SubmissionError, match="it is not gzip, as its name says"):
        ladder.submit("mallory", "bot.tgz", tar_of({"bot.py": GOOD_BOT.encode()}, compression="none"))
    with pytest.raises(SubmissionError, match="compressed in a way the ladder does not read"):
        ladder.submit("mallory", "bot.zip", zip_of({"bot.py": GOOD_BOT.encode()}, method=14))  # lzma
    # Each as it says: accepted.
    assert ladder.submit("mallory", "bot.tar", tar_of({"bot.py": GOOD_BOT.encode()}, compression="none")).number == 1
    ladder.close()


def test_an_entry_claiming_more_than_the_limit_is_refused_from_its_header(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", per_hour="100")
    ladder.add_entrant("mallory")
    with pytest.raises(SubmissionError, match=r"its f0\.bin says it is 1,073,741,824 bytes"):
        ladder.submit("mallory", "bot.tar.gz", tar_bomb("gzip", members=1))
    with pytest.raises(SubmissionError, match="its files say they are 20,000,000 bytes"):
        ladder.submit("mallory", "bot.zip", zip_of({"bot.py": b"#" * 10_000_000, "data.bin": b"0" * 10_000_000}))
    ladder.close()


def test_refused_uploads_count_toward_the_hour_as_versions_do(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", per_hour="3")
    ladder.add_entrant("mallory")
    for _ in range(3):
        with pytest.raises(SubmissionError):
            ladder.submit("mallory", "bot.tar.gz", tar_bomb("gzip", members=1))
    with pytest.raises(TooOften, match=r"submitted 3 versions in the last hour \(3 of them refused\)"):
        ladder.submit("mallory", "lowest.py", GOOD_BOT.encode())  # a good bot too, now: the hour is spent
    with ladder.session() as session:
        assert session.scalar(select(func.count()).select_from(Refusal)) == 3  # the 429 itself costs nothing
    ladder.close()


def test_one_upload_of_an_entrant_at_a_time(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", per_hour="100")
    ladder.add_entrant("mallory")
    bomb = tar_bomb("gzip", members=1, claimed=8 << 20)  # 8 MB of zeros to unpack: a while, on a slow machine
    started = threading.Barrier(8)

    def send(_: int) -> str:
        started.wait()
        try:
            ladder.submit("mallory", "bot.tar.gz", bomb)
        except TooOften:
            return "later"
        except SubmissionError:
            return "refused"
        return "made"

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        said = list(pool.map(send, range(8)))
    assert "made" not in said and said.count("refused") >= 1
    with ladder.session() as session:  # every unpacking counted; the ones turned away at once, not
        assert session.scalar(select(func.count()).select_from(Refusal)) == said.count("refused")
    ladder.close()


def test_a_compiled_bot_keeps_its_execute_bits_and_nothing_else_and_dot_names_are_its_folder(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder", per_hour="100")
    ladder.add_entrant("sita")
    source = _compiled_bot(tmp_path / "cbot")
    (source / "run.sh").write_text("#!/bin/sh\nexec ./bot\n", encoding="utf-8")
    (source / "run.sh").chmod(0o6755)  # setuid and setgid: never kept
    (source / "notes.txt").write_text("notes\n", encoding="utf-8")
    version = ladder.submit("sita", "bot.tar.gz", _packed(source, tmp_path / "bot.tar.gz"))
    assert version.kind == "stdio"
    stored = tmp_path / "ladder" / version.path
    modes = {p.name: p.stat().st_mode & 0o7777 for p in stored.iterdir()}
    assert modes == {"bot": 0o500, "run.sh": 0o500, "bot.json": 0o400, "notes.txt": 0o400}  # the ladder's user's alone
    assert stored.stat().st_mode & 0o7777 == 0o500
    assert stored.parent.stat().st_mode & 0o7777 == 0o700
    # The same bytes without their execute bits are another bot; a zip keeps the bits too.
    plain = tar_of({"bot": (source / "bot").read_bytes(), "bot.json": STDIO, "run.sh": b"#!/bin/sh\nexec ./bot\n",
                    "notes.txt": b"notes\n"})
    assert ladder.submit("sita", "bot.tar.gz", plain).content_sha256 != version.content_sha256
    zipped = ladder.submit("sita", "bot.zip", zip_of({"bot": (source / "bot").read_bytes(), "bot.json": STDIO},
                                                     modes={"bot": 0o4755}))
    zip_modes = {p.name: p.stat().st_mode & 0o7777 for p in (tmp_path / "ladder" / zipped.path).iterdir()}
    assert zip_modes == {"bot": 0o500, "bot.json": 0o400}
    ladder.close()


# -- the ladder served, and attacked ------------------------------------------------------------------


class Site:
    """A ladder served by ``ladder serve`` as a process: its folder, url, tokens, and a client per address."""

    def __init__(self, folder: Path, served: Served, tokens: dict[str, str], organiser: str) -> None:
        self.folder, self.served, self.tokens, self.organiser = folder, served, tokens, organiser
        self.url = served.url

    def client(self, source: str = "127.0.0.1", **options: object) -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=source)
        return httpx.Client(base_url=self.url, transport=transport, follow_redirects=False,
                            timeout=options.pop("timeout", 30), **options)  # type: ignore[arg-type]

    def login(self, name: str, source: str = "127.0.0.1") -> tuple[httpx.Client, str]:
        """A browser logged in as ``name`` (or the organiser), and its forms' CSRF token."""
        browser = self.client(source)
        token = self.organiser if name == "organiser" else self.tokens[name]
        assert browser.post("/login", data={"token": token}).status_code == 303
        found = re.search(r'name="csrf" value="([^"]+)"', browser.get("/tests").text)
        assert found is not None
        return browser, found.group(1)

    def upload(self, name: str, filename: str, data: bytes, source: str = "127.0.0.1") -> httpx.Response:
        with self.client(source, timeout=120) as cli:
            return cli.post("/api/submit", headers={"Authorization": f"Bearer {self.tokens[name]}"},
                            files={"file": (filename, data)})

    def ladder(self) -> Ladder:
        return Ladder.open(self.folder)

    def until(self, what: str, holds: Callable[[Ladder], bool], timeout: float = 180.0) -> None:
        ladder = self.ladder()
        try:
            began = time.monotonic()
            while not holds(ladder):
                if time.monotonic() - began > timeout:
                    raise AssertionError(f"{what}: not within {timeout} s; the ladder's log: "
                                         f"{(self.folder / 'serve.log').read_text(errors='replace')[-3000:]}")
                time.sleep(0.5)
        finally:
            ladder.close()

    def log(self) -> str:
        return (self.folder / "serve.log").read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("hostile") / "ladder"
    ladder = make_ladder(folder, placement_blocks="1", check_games="4")
    tokens = {f"house-{n}": ladder.add_entrant(f"house-{n}", python=house) for n, house in enumerate(HOUSE)}
    for name in ("sita", "tom", "mallory", "ivan", "eve"):
        tokens[name] = ladder.add_entrant(name)
    ladder.close()
    organiser = _organiser_token(folder)
    served = Served(folder)
    try:
        yield Site(folder, served, tokens, organiser)
    finally:
        served.kill()


def _organiser_token(folder: Path) -> str:
    """A fresh organiser token for the ladder (``ladder init`` printed the first one to nobody here)."""
    token = new_token()
    ladder = Ladder.open(folder)
    with ladder.session() as session:
        organiser = session.scalars(select(Organiser)).one()
        organiser.token_sha256 = token_sha256(token)
    ladder.close()
    return token


def _active(label: str) -> Callable[[Ladder], bool]:
    def holds(ladder: Ladder) -> bool:
        with ladder.session() as session:
            version = session.scalars(select(Version).where(Version.label == label)).first()
            return version is not None and version.state == VersionState.ACTIVE
    return holds


@pytest.fixture(scope="module")
def field(site: Site) -> Site:
    """The served ladder with four active versions of four entrants: the house's and ivan's kit bot."""
    ladder = site.ladder()
    with ladder.session() as session:
        submitted = session.scalars(select(Version.id).where(Version.label == "ivan#1")).first() is not None
    ladder.close()
    if not submitted:
        assert site.upload("ivan", "lowest.py", GOOD_BOT.encode()).status_code == 200
    site.until("ivan's version and the house's play", lambda ladder: all(
        _active(label)(ladder) for label in ("ivan#1", "house-0#1", "house-1#1", "house-2#1")), timeout=300)
    return site


def test_bombs_at_once_leave_the_site_answering_and_spend_the_hour(site: Site) -> None:
    bomb = tar_bomb("bzip2", members=50)  # 50 GiB of bzip2 in 2 MB, named .tar
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        sent = [pool.submit(site.upload, "mallory", "bot.tar", bomb) for _ in range(4)]
        with site.client(timeout=30) as browser:
            board = browser.get("/")  # answered while the bombs are in: they hold no thread that answers pages
        answers = [future.result() for future in sent]
    assert board.status_code == 200
    assert sorted(a.status_code for a in answers)[0] in (400, 429) and {a.status_code for a in answers} <= {400, 429}
    refused = [a.json()["error"] for a in answers if a.status_code == 400]
    assert refused and all("bzip2-compressed, which its name does not say" in r for r in refused)
    for _ in range(4 - len(refused)):  # the hour: four refused uploads spend it as four versions would
        assert site.upload("mallory", "bot.tar", bomb).status_code == 400
    late = site.upload("mallory", "lowest.py", GOOD_BOT.encode())
    assert late.status_code == 429 and "(4 of them refused)" in late.json()["error"]


def _slow_head(url: str, source: str) -> socket.socket:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    conn = socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))
    conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the rest
    return conn


def _answer(conn: socket.socket, within: float) -> bytes:
    """What the site says on ``conn`` until it closes it, or nothing more comes within ``within`` seconds."""
    conn.settimeout(within)
    said = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := conn.recv(65536):
            said += chunk
    return said


def test_one_address_cannot_take_every_connection(site: Site) -> None:
    held: list[socket.socket] = []
    try:
        for _ in range(256):
            held.append(_slow_head(site.url, "127.0.0.5"))
        time.sleep(0.5)
        with site.client("127.0.0.9") as browser:
            answer = browser.get("/")
        assert answer.status_code == 200, answer.text
        refused = 0
        for conn in held:
            said = _answer(conn, 0.05)  # the refused are answered at once; the admitted wait for their heads
            refused += said.startswith(b"HTTP/1.1 503") and b"too many connections from your address" in said
        assert refused == 256 - 32  # a share of the whole: 32 of 256
    finally:
        for conn in held:
            conn.close()


def test_an_anonymous_form_is_refused_before_its_body(site: Site) -> None:
    host, port = site.url.removeprefix("http://").rsplit(":", 1)
    for path in ("/logout", "/tests", "/scrimmages", "/organiser/pause", "/play", "/submit"):
        with socket.create_connection((host, int(port)), timeout=5, source_address=("127.0.0.6", 0)) as conn:
            conn.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                         "Content-Length: 1000\r\n\r\nc".encode())  # 999 bytes still to come, a byte every 5 s
            said = _answer(conn, 5)  # at once: the body is never waited for
        assert said.startswith(b"HTTP/1.1 403"), (path, said[:200])
        assert b"log in first" in said or b"log in with your entrant" in said


def test_an_id_past_64_bits_is_not_found_and_logs_nothing(site: Site) -> None:
    huge = "9" * 25
    with site.client() as browser:
        for path in (f"/blocks/{huge}", f"/api/blocks/{huge}", f"/tests/{huge}", f"/api/tests/{huge}",
                     f"/games/{huge}/x", f"/api/games/{huge}/x", f"/play/{huge}/"):
            answer = browser.get(path)
            assert answer.status_code == 404, (path, answer.status_code)
        assert browser.get("/blocks/999999999999999999").status_code == 404  # 18 digits: looked up, not there
    assert "Traceback" not in site.log() and "failed on" not in site.log()


def test_wrong_tokens_sent_at_once_are_counted_exactly(site: Site) -> None:
    def attempt(n: int) -> int:
        with site.client("127.0.0.7") as browser:
            return browser.post("/login", data={"token": f"wrong-{n}"}).status_code

    with concurrent.futures.ThreadPoolExecutor(30) as pool:
        codes = list(pool.map(attempt, range(30)))
    assert codes.count(401) == 10 and codes.count(429) == 20, codes


def test_a_compiled_c_bot_passes_its_check_and_plays_a_block(site: Site, tmp_path: Path) -> None:
    if SANDBOX != "bwrap":
        pytest.skip("bubblewrap is not installed: the ladder would check the bot unsandboxed")
    source = _compiled_bot(tmp_path / "cbot")
    answer = site.upload("sita", "bot.tar.gz", _packed(source, tmp_path / "bot.tar.gz"))
    assert answer.status_code == 200, answer.text
    assert answer.json()["version"] == "sita#1"
    site.until("sita's compiled bot passes its check", _active("sita#1"))

    def played(ladder: Ladder) -> bool:
        with ladder.session() as session:
            sita = session.scalars(select(Version.id).where(Version.label == "sita#1")).one()
            return any(sita in block.seats for block in session.scalars(
                select(Block).where(Block.state == BlockState.DONE)))

    site.until("sita's compiled bot plays a block", played)
    with site.client() as browser:
        page = browser.get("/api/entrants/sita").json()
    assert page["versions"][0]["state"] == "active" and page["versions"][0]["kind"] == "stdio"
    assert page["games"] and all(game["version"] == "sita#1" for game in page["games"])


def test_a_failed_check_is_its_entrants_and_no_page_names_a_path_of_the_server(site: Site, tmp_path: Path) -> None:
    assert site.upload("tom", "crashing.py", CRASHING_BOT.encode()).status_code == 200
    source = _compiled_bot(tmp_path / "noexec")
    packed = tar_of({"bot": (source / "bot").read_bytes(), "bot.json": STDIO})  # without its execute bit
    assert site.upload("tom", "bot.tar.gz", packed).status_code == 200

    site.until("tom's two versions fail their checks", lambda ladder: _states(ladder, "tom#") == ["failed"] * 2)
    ladder = site.ladder()
    with ladder.session() as session:
        details = " ".join(c.detail + c.stderr_tail for c in session.scalars(select(Check).where(~Check.passed)))
    ladder.close()
    assert str(site.folder) in details or "/tmp/" in details, "the checks name server paths: the test scans for them"
    assert "Traceback" in details and "Permission denied" in details

    pages = _every_page(site)
    server = {str(site.folder), str(site.folder.resolve()), sys.prefix, str(ROOT), "/tmp/"}
    for (who, path), text in pages.items():
        for needle in server:
            assert needle not in text, f"{path} (seen by {who}) names {needle!r}"
    tom_public = json.loads(pages["stranger", "/api/entrants/tom"])
    tom_own = json.loads(pages["tom", "/api/entrants/tom"])
    tom_to_sita = json.loads(pages["sita", "/api/entrants/tom"])
    failures = [c for v in tom_own["versions"] for c in v["checks"] if not c["passed"]]
    assert failures and any("Traceback" in (c["stderr_tail"] or "") for c in failures)
    assert any("Permission denied" in (c["stderr_tail"] or "") for c in failures)
    assert any("checks/" in (c["detail"] or "") for c in failures)  # the log's place, in the ladder's folder
    for seen in (tom_public, tom_to_sita):
        hidden = [c for v in seen["versions"] for c in v["checks"] if not c["passed"]]
        assert [c["check_name"] for c in hidden] == [c["check_name"] for c in failures]
        assert all((c["detail"], c["hand"], c["stderr_tail"]) == (None, None, None) for c in hidden)
    assert "Traceback" not in pages["stranger", "/entrants/tom"]
    assert "my model file" not in pages["sita", "/entrants/tom"]
    assert "my model file is missing" in pages["tom", "/entrants/tom"]
    assert "my model file is missing" in pages["organiser", "/entrants/tom"]


def test_a_fork_bomb_and_a_tmp_filler_fail_their_check_within_the_limits_and_the_ladder_serves_on(
        site: Site) -> None:
    if SANDBOX != "bwrap":
        pytest.skip("bubblewrap is not installed: the ladder would refuse to check the bot")
    assert site.upload("eve", "bomb.py", BOMB.encode()).status_code == 200
    site.until("eve's bomb fails its check", lambda ladder: _states(ladder, "eve#") == ["failed"])
    ladder = site.ladder()
    with ladder.session() as session:
        tail = " ".join(c.stderr_tail for c in session.scalars(select(Check).join(Version).where(
            Version.label == "eve#1")))
    ladder.close()
    found = re.search(r"BOMB started=(\d+) tmp_mib=(\d+)", tail)
    assert found, tail
    # The ladder's defaults: 64 processes and threads a bot (itself and its sandbox's first process among them), and
    # 64 MiB of /tmp. Without them it got all 400 processes (and their children) and all 200 MiB.
    assert int(found.group(1)) < 64 and int(found.group(2)) <= 64, found.group(0)
    with site.client() as browser:
        assert browser.get("/").status_code == 200
    assert site.upload("eve", "lowest.py", GOOD_BOT.encode()).status_code == 200  # the next upload is checked
    site.until("eve's next version passes its check", _active("eve#2"))
    assert "launched bots run without a limit on the number of processes" not in site.log()


def _states(ladder: Ladder, prefix: str) -> list[str]:
    with ladder.session() as session:
        return sorted(str(s) for s in session.scalars(select(Version.state).where(Version.label.like(f"{prefix}%"))))


def _every_page(site: Site) -> dict[tuple[str, str], str]:
    """Every page and API answer of the ladder, as a stranger, two entrants and the organiser see them."""
    ladder = site.ladder()
    with ladder.session() as session:
        blocks = list(session.scalars(select(Block.id)))
        done = [b.id for b in session.scalars(select(Block).where(Block.state == BlockState.DONE))]
        tests = list(session.scalars(select(Test.id)))
        names = ["house-0", "house-1", "house-2", "sita", "tom", "mallory", "ivan"]
    ladder.close()
    paths = ["/", "/api/leaderboard", "/playing", "/api/playing", "/tests", "/api/tests", "/play", "/api/play",
             "/login", "/submit", "/organiser", "/api/organiser", "/final", "/healthz", "/nowhere", "/api/nowhere"]
    for name in names:
        paths += [f"/entrants/{name}", f"/api/entrants/{name}"]
    for block in blocks:
        paths += [f"/blocks/{block}", f"/api/blocks/{block}"]
    for test in tests:
        paths += [f"/tests/{test}", f"/api/tests/{test}"]
    with site.client() as browser:
        for block in done[:3]:
            for game in browser.get(f"/api/blocks/{block}").json()["games"]:
                paths += [f"/games/{block}/{game['game']}", f"/api/games/{block}/{game['game']}"]
    pages: dict[tuple[str, str], str] = {}
    viewers: list[tuple[str, httpx.Client]] = [("stranger", site.client())]
    for name in ("tom", "sita", "organiser"):
        viewers.append((name, site.login(name)[0]))
    for who, browser in viewers:
        with contextlib.closing(browser):
            for path in paths:
                pages[who, path] = browser.get(path).text
    return pages


def test_an_entrant_may_have_so_many_tests_and_scrimmages_running(field: Site) -> None:
    site = field
    browser, csrf = site.login("ivan")

    def ask(n: int) -> int:
        return browser.post("/scrimmages", data={"csrf": csrf, "version": "ivan#1", "opponent1": "house-0#1",
                                                 "opponent2": "house-1#1", "opponent3": "house-2#1",
                                                 "blocks": "2"}).status_code

    with contextlib.closing(browser), concurrent.futures.ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(ask, range(6)))
        assert codes.count(303) == 2 and codes.count(400) == 4, codes
        refused = browser.post("/tests", data={"csrf": csrf, "a": "house-0#1", "b": "ivan#1"})
        assert refused.status_code == 400 and "the most one entrant may have at once" in refused.text
        many = browser.post("/scrimmages", data={"csrf": csrf, "version": "ivan#1", "opponent1": "house-0#1",
                                                 "opponent2": "house-1#1", "opponent3": "house-2#1",
                                                 "blocks": "21"})
        assert many.status_code == 400 and "1 to 20 blocks" in many.text
    ladder = site.ladder()
    with ladder.session() as session:
        mine = session.scalars(select(Test).where(Test.asked_by == "ivan")).all()
    assert len(mine) == 2
    for test in mine:  # the organiser stops them: the machine has other work
        ladder.stop_test(test.id)
    ladder.close()


def test_a_version_test_has_no_llr_before_its_blocks_spread(field: Site) -> None:
    site = field
    organiser, csrf = site.login("organiser")
    with contextlib.closing(organiser):
        asked = organiser.post("/tests", data={"csrf": csrf, "a": "house-1#1", "b": "house-0#1"})
        assert asked.status_code == 303, asked.text
        test_id = int(asked.headers["location"].rsplit("/", 1)[1])

    def first_block(ladder: Ladder) -> bool:
        with ladder.session() as session:
            return bool(session.scalar(select(func.count()).select_from(TestPoint).where(TestPoint.test_id == test_id)))

    site.until("the test's first block", first_block, timeout=240)
    with site.client() as browser:
        detail = browser.get(f"/api/tests/{test_id}").json()
        page = browser.get(f"/tests/{test_id}").text
    ladder = site.ladder()
    ladder.stop_test(test_id)
    ladder.close()
    marks = detail["marks"]
    assert marks[0]["llr"] is None  # one block has no spread: no LLR
    values = [m["value"] for m in marks]
    assert (detail["test"]["llr"] is None) == (len(set(values)) == 1)
    if detail["test"]["llr"] is None:
        assert "not enough blocks yet" in page
    assert all(m["llr"] is None or abs(m["llr"]) < 1000 for m in marks)


def test_behind_its_proxy_requests_at_once_are_counted_per_forwarded_client(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder")
    token = ladder.add_entrant("mallory")
    limits = SiteLimits(per_address=4)
    with serving(ladder, limits, proxy="127.0.0.1") as url:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        held = []
        try:
            for _ in range(6):  # each from the proxy's address, for one forwarded client, its upload trickling
                conn = socket.create_connection((host, int(port)), timeout=10)
                conn.sendall((f"POST /api/submit HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.7\r\n"
                              f"Authorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                              "Content-Length: 100000\r\n\r\n--b\r\n").encode())
                held.append(conn)
                time.sleep(0.2)
            answers = [_answer(conn, 5) for conn in held[4:]]
            assert all(a.startswith(b"HTTP/1.1 503") and b"too many requests from your address" in a
                       for a in answers), answers
            with httpx.Client(base_url=url, timeout=10) as other:
                answer = other.get("/", headers={"X-Forwarded-For": "203.0.113.8"})
                assert answer.status_code == 200  # another client behind the same proxy
        finally:
            for conn in held:
                conn.close()
    ladder.close()


def test_the_fuzz_of_the_site_in_its_short_form_loses_nothing() -> None:
    """``benchmarks/ladder_fuzz.py`` for a few seconds: the entrant browsing and submitting is never refused, and
    their versions, the database and the records come out whole."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "ladder_fuzz.py"), "--seconds", "2",
                           "--attackers", "2", "--connections", "20"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing lost" in done.stdout and "the entrant:" in done.stdout


def test_only_an_upload_may_take_long_to_arrive(tmp_path: Path) -> None:
    ladder = make_ladder(tmp_path / "ladder")
    token = ladder.add_entrant("sita")
    limits = SiteLimits(head_s=0.3, form_s=0.6, body_s=1.8)
    with serving(ladder, limits) as url:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        for path, head, allowed in (
                ("/login", "Content-Type: application/x-www-form-urlencoded\r\n", b"0.6"),
                ("/api/submit", f"Authorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary=b\r\n",
                 b"1.8")):
            with socket.create_connection((host, int(port)), timeout=10) as conn:
                conn.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\n{head}Content-Length: 5000\r\n\r\n--b".encode())
                said = _answer(conn, 10)
            assert said.startswith(b"HTTP/1.1 408"), said[:300]
            assert b"body did not arrive whole within " + allowed + b" seconds" in said, (path, said[-200:])
    ladder.close()
