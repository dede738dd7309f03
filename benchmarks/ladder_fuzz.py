"""Fuzzing of the ladder's site: malformed, slow and oversized requests, hostile archives and forms, from many
connections at once, while an entrant browses and submits; prints the worst latency the entrant saw and that
nothing was lost.

A real ladder is made (``ladder init``, three house versions, the entrant ``sita`` and four attacking entrants)
and served by ``ladder serve`` as a process on loopback, playing its blocks meanwhile. The attackers connect
from loopback addresses of their own (127.0.0.2, 127.0.0.3, ...: one client address each, as the site counts
them), each with ``--connections`` connections at once that send, in turn, seeded from ``--seed``: heads that
trickle a byte a second and never end, anonymous forms whose bodies trickle, a logged-in form whose body
trickles, bytes that are not HTTP, heads past 32 KiB or past 100 lines, bodies declared a gigabyte, bad
Content-Lengths, broken multipart, wrong tokens at the login, ids past 64 bits, odd paths, and every hostile
archive of ``tests/helpers/hostile_uploads.py`` (bombs, mislabelled compression, links, names outside) to
``/api/submit``. Meanwhile the entrant, from 127.0.0.1, reads the leaderboard, their page, the tests and the
blocks in play in a loop, and submits a version at the start and another halfway.

    python benchmarks/ladder_fuzz.py [--seconds 60] [--attackers 3] [--connections 40] [--seed 1]

Printed: the requests sent by kind and the site's answers by status; the entrant's requests, how many were
answered 200, and their latency (median, 95th percentile, worst); and whether anything was lost: the entrant's
versions stored with the files they sent, the database's integrity, ``ladder check``, the site answering at the
end, and no traceback in the ladder's log. Exit status 1 when anything was lost or the entrant was refused.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import platform
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from arena.ladder.consistency import check_ladder  # noqa: E402
from arena.ladder.control import Ladder  # noqa: E402
from arena.ladder.intake import content_digest  # noqa: E402
from tests.helpers.hostile_uploads import hostile_archives  # noqa: E402
from tests.helpers.ladder import GOOD_BOT, Served, make_ladder  # noqa: E402

HOUSE = ("sample_bots.heuristic_bot:HeuristicBot", "sample_bots.random_bot:RandomBot",
         "sample_bots.random_bot:RandomBot")
ENTRANT_PAGES = ("/", "/entrants/sita", "/api/entrants/sita", "/tests", "/playing", "/api/leaderboard")
KINDS = ("slow head", "slow anonymous form", "slow logged-in form", "not HTTP", "long head", "many header lines",
         "huge body declared", "bad length", "broken multipart", "wrong token", "huge id", "odd path",
         "hostile archive")


def _request(method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: ladder"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body and "Content-Length" not in (headers or {}):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _multipart(filename: str, data: bytes, boundary: str = "fuzzboundary") -> tuple[str, bytes]:
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return f"multipart/form-data; boundary={boundary}", body


class Attack:
    """One attacker address's connections, each sending a kind of request after another until the end."""

    def __init__(self, host: str, port: int, source: str, token: str, cookie: str, csrf: str, rng: random.Random,
                 counts: collections.Counter[str], statuses: collections.Counter[str]) -> None:
        self.host, self.port, self.source = host, port, source
        self.token, self.cookie, self.csrf = token, cookie, csrf
        self.rng, self.counts, self.statuses = rng, counts, statuses
        self.archives = list(hostile_archives().values())

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(self.host, self.port, local_addr=(self.source, 0))

    async def _answer(self, reader: asyncio.StreamReader, within: float) -> None:
        try:
            head = await asyncio.wait_for(reader.read(64), within)
        except (TimeoutError, ConnectionError):
            self.statuses["no answer"] += 1
            return
        found = re.match(rb"HTTP/1\.1 (\d{3})", head)
        self.statuses[found.group(1).decode() if found else ("closed" if not head else "not HTTP")] += 1

    async def _trickle(self, writer: asyncio.StreamWriter, reader: asyncio.StreamReader, start: bytes,
                       until: float) -> None:
        """Sends ``start``, then a byte a second until the site answers or closes, or ``until``."""
        writer.write(start)
        await writer.drain()
        answered = asyncio.ensure_future(self._answer(reader, until - time.monotonic()))
        while not answered.done() and time.monotonic() < until:
            await asyncio.sleep(1.0)
            if answered.done():
                break
            try:
                writer.write(b"x")
                await writer.drain()
            except ConnectionError:
                break
        await answered

    async def one(self, until: float) -> None:
        kind = self.rng.choice(KINDS)
        self.counts[kind] += 1
        try:
            reader, writer = await self._open()
        except OSError:
            self.statuses["not connected"] += 1
            return
        try:
            await self._send(kind, reader, writer, until)
        except (ConnectionError, TimeoutError):
            self.statuses["reset"] += 1
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, TimeoutError):
                await asyncio.wait_for(writer.wait_closed(), 2)

    async def _send(self, kind: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    until: float) -> None:
        rng = self.rng
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        if kind == "slow head":
            await self._trickle(writer, reader, b"GET / HTTP/1.1\r\nHost: ladder\r\n", until)
            return
        if kind == "slow anonymous form":
            path = rng.choice(["/logout", "/tests", "/scrimmages", "/play", "/organiser/pause", "/login"])
            await self._trickle(writer, reader, _request("POST", path, {**form, "Content-Length": "60000"}), until)
            return
        if kind == "slow logged-in form":
            headers = {**form, "Content-Length": "60000", "Cookie": f"ladder_login={self.cookie}"}
            await self._trickle(writer, reader, _request("POST", "/tests", headers, f"csrf={self.csrf}&".encode()),
                                until)
            return
        data = {
            "not HTTP": lambda: bytes(rng.randrange(256) for _ in range(rng.randint(1, 3000))),
            "long head": lambda: _request("GET", "/", {"X-Pad": "a" * (33 << 10)}),
            "many header lines": lambda: _request("GET", "/", {f"X-{n}": "1" for n in range(150)}),
            "huge body declared": lambda: _request("POST", "/api/submit", {
                "Authorization": f"Bearer {self.token}", "Content-Type": "multipart/form-data; boundary=b",
                "Content-Length": str(10 ** 9)}),
            "bad length": lambda: _request("POST", rng.choice(["/login", "/api/submit", "/tests"]), {
                **form, "Content-Length": rng.choice(["-1", "abc", "1e9", "99999999999999999999", " 5"])}, b"token=x"),
            "broken multipart": lambda: _request("POST", "/api/submit", {
                "Authorization": f"Bearer {self.token}", "Content-Type": "multipart/form-data; boundary=zz"},
                b"--zz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.py\"\r\n\r\n" + b"x" * 500),
            "wrong token": lambda: _request("POST", "/login", form, f"token=guess-{rng.randrange(10 ** 9)}".encode()),
            "huge id": lambda: _request("GET", rng.choice(["/blocks/", "/api/tests/", "/api/games/", "/play/"])
                                        + "9" * rng.randint(19, 60) + rng.choice(["", "/x", "/"])),
            "odd path": lambda: _request("GET", rng.choice(["/%00", "/entrants/%ff%fe", "/..%2f..%2fetc/passwd",
                                                            "/api/entrants/" + "a" * 5000, "/games/1/%2e%2e",
                                                            "/final?x=" + "%" * 100])),
            "hostile archive": lambda: self._archive(),
        }[kind]()
        writer.write(data)
        await writer.drain()
        await self._answer(reader, max(0.5, until - time.monotonic() + 1))  # past the end: a second more

    def _archive(self) -> bytes:
        filename, data = self.rng.choice(self.archives)
        kind, body = _multipart(filename, data)
        return _request("POST", "/api/submit", {"Authorization": f"Bearer {self.token}", "Content-Type": kind},
                        body)

    async def run(self, connections: int, until: float) -> None:
        async def loop() -> None:
            while time.monotonic() < until:
                await self.one(until)

        await asyncio.gather(*(loop() for _ in range(connections)))


class Entrant(threading.Thread):
    """The entrant who browses and submits while the site is attacked; every latency kept."""

    def __init__(self, url: str, token: str, until: float) -> None:
        super().__init__(daemon=True)
        self.url, self.token, self.until = url, token, until
        self.latencies: list[float] = []
        self.answered = 0
        """Requests answered as asked: a page with 200, a submission with its version."""
        self.refused: list[str] = []
        self.versions: dict[str, bytes] = {}

    def _timed(self, send: object) -> httpx.Response | None:
        began = time.monotonic()
        try:
            answer = send()  # type: ignore[operator]
        except httpx.HTTPError as err:
            self.refused.append(f"{type(err).__name__}: {err}")
            return None
        self.latencies.append(time.monotonic() - began)
        return answer  # type: ignore[no-any-return]

    def _submit(self, browser: httpx.Client, number: int) -> None:
        data = (GOOD_BOT + f"# version {number}\n").encode()
        answer = self._timed(lambda: browser.post("/api/submit", headers={"Authorization": f"Bearer {self.token}"},
                                                  files={"file": ("lowest.py", data)}))
        if answer is None or answer.status_code != 200:
            self.refused.append(f"submit {number}: {answer.status_code if answer else '-'} "
                                f"{answer.text[:200] if answer else ''}")
            return
        self.versions[answer.json()["version"]] = data
        self.answered += 1

    def run(self) -> None:
        halfway = time.monotonic() + (self.until - time.monotonic()) / 2
        with httpx.Client(base_url=self.url, timeout=60) as browser:
            self._submit(browser, 1)
            second = False
            while time.monotonic() < self.until:
                if not second and time.monotonic() > halfway:
                    self._submit(browser, 2)
                    second = True
                for path in ENTRANT_PAGES:
                    answer = self._timed(lambda path=path: browser.get(path))
                    if answer is not None and answer.status_code != 200:
                        self.refused.append(f"GET {path}: {answer.status_code} {answer.text[:200]}")
                    elif answer is not None:
                        self.answered += 1
            if not second:
                self._submit(browser, 2)


def _lost(folder: Path, entrant: Entrant, site: str) -> list[str]:
    """What the attack cost the ladder: each a line, none when nothing was lost."""
    problems = []
    db = sqlite3.connect(folder / "ladder.db")
    try:
        if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            problems.append("the database fails its integrity check")
        stored = dict(db.execute("SELECT label, path FROM versions WHERE label LIKE 'sita#%'").fetchall())
    finally:
        db.close()
    for label, data in entrant.versions.items():
        if label not in stored:
            problems.append(f"{label} is not in the database")
            continue
        files = folder / stored[label]
        if (files / "bot.py").read_bytes() != data or content_digest(files) != files.name:
            problems.append(f"{label}'s files are not what was sent")
    if len(entrant.versions) != 2:
        problems.append(f"the entrant's submissions: {len(entrant.versions)} of 2 made")
    ladder = Ladder.open(folder)
    try:
        agreement = check_ladder(ladder)  # what `ladder check` runs
    finally:
        ladder.close()
    if not agreement.ok:
        problems.append(f"ladder check: {'; '.join(agreement.problems)[:1000]}")
    try:
        if httpx.get(site + "/healthz", timeout=10).text != "ok":
            problems.append("the site does not answer its health check at the end")
    except httpx.HTTPError as err:
        problems.append(f"the site does not answer at the end: {err}")
    log = (folder / "serve.log").read_text(encoding="utf-8", errors="replace")
    if "Traceback" in log:
        problems.append(f"the ladder's log holds a traceback: {log[log.index('Traceback'):][:800]}")
    return problems


def _attacker_login(url: str, token: str, source: str) -> tuple[str, str]:
    """The cookie and CSRF token of an attacking entrant's login (for the logged-in slow form)."""
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(base_url=url, transport=transport, timeout=30) as browser:
        browser.post("/login", data={"token": token})
        found = re.search(r'name="csrf" value="([^"]+)"', browser.get("/tests").text)
        return browser.cookies.get("ladder_login") or "", found.group(1) if found else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the attack lasts (default 60)")
    parser.add_argument("--attackers", type=int, default=3, help="attacking client addresses (default 3)")
    parser.add_argument("--connections", type=int, default=40, help="connections at once per attacker (default 40)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ladder-fuzz-") as scratch:
        folder = Path(scratch) / "ladder"
        # Uploads an hour without a limit that matters: every hostile archive is unpacked, the worst for the site.
        ladder = make_ladder(folder, placement_blocks="1", check_games="4", per_hour="10000")
        for number, house in enumerate(HOUSE):
            ladder.add_entrant(f"house-{number}", python=house)
        sita = ladder.add_entrant("sita")
        attackers = [ladder.add_entrant(f"mallory-{n}") for n in range(args.attackers)]
        ladder.close()
        served = Served(folder)
        try:
            host, port = served.url.removeprefix("http://").rsplit(":", 1)
            sources = [f"127.0.0.{n + 2}" for n in range(args.attackers)]
            logins = [_attacker_login(served.url, token, source)
                      for token, source in zip(attackers, sources, strict=True)]
            counts: collections.Counter[str] = collections.Counter()
            statuses: collections.Counter[str] = collections.Counter()
            attacks = [Attack(host, int(port), source, token, cookie, csrf, random.Random(args.seed * 1000 + n),
                              counts, statuses)
                       for n, (source, token, (cookie, csrf))
                       in enumerate(zip(sources, attackers, logins, strict=True))]
            began = time.monotonic()
            until = began + args.seconds
            entrant = Entrant(served.url, sita, until)
            entrant.start()

            async def attack() -> None:
                await asyncio.gather(*(a.run(args.connections, until) for a in attacks))

            asyncio.run(attack())
            entrant.join(120)
            spent = time.monotonic() - began
            lost = _lost(folder, entrant, served.url)
        finally:
            served.kill()
    waits = sorted(entrant.latencies)
    print(f"ladder fuzz: {spent:.0f} s, {args.attackers} attacking addresses x {args.connections} connections, "
          f"seed {args.seed}")
    print(f"sent: {sum(counts.values())} requests; " + ", ".join(f"{k} {counts[k]}" for k in KINDS if counts[k]))
    print("the site answered them: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    if waits:
        p95 = waits[min(len(waits) - 1, int(0.95 * len(waits)))]
        print(f"the entrant: {len(waits)} requests, {entrant.answered} answered as asked; latency "
              f"median {statistics.median(waits) * 1000:.0f} ms, 95th percentile {p95 * 1000:.0f} ms, worst "
              f"{waits[-1] * 1000:.0f} ms")
    for line in entrant.refused[:10]:
        print(f"  refused: {line}")
    print("nothing lost: the entrant's 2 versions stored as sent, the database intact, ladder check ok, the site "
          "answering, no traceback" if not lost else "LOST: " + "; ".join(lost))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    return 0 if not lost and not entrant.refused else 1


if __name__ == "__main__":
    raise SystemExit(main())
