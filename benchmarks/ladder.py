"""What a ladder delivers on this machine: blocks per hour with light bots, and how fast its site answers.

1. Blocks per hour. A ladder with ``--versions`` light versions plays for ``--play-seconds`` after its checks
   are done, at ``[capacity] tables`` tables, twice: versions that play in the ladder's own process (the
   random and heuristic sample bots), and the same bots submitted as kit files, each block launching them
   as processes over gRPC in the sandbox (where bubblewrap is installed), as a student's submission plays.
   Printed: blocks and games per hour.
2. The site. A ladder of ``--entrants`` entrants (one active version each) and ``--blocks`` recorded blocks
   is made: the blocks' rows written straight into the database (their seats, results, ratings and rating
   history as the service writes them), the newest ``--played`` of them also played for real, so each
   entrant's page has games whose records are read. The site is served by a process of its own and asked,
   one request at a time, for the leaderboard (page and ``/api/leaderboard``) and entrant pages (page and
   ``/api/entrants/NAME``). Printed: the median and 95th percentile of the response time of each.

    python benchmarks/ladder.py
    python benchmarks/ladder.py --play-seconds 60 --entrants 100 --blocks 20000 --requests 200
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert, select, update

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.event.run.tournament import Tournament  # noqa: E402
from arena.ladder.blocks import RatingModel, block_config, block_seed, bot_table, outcome  # noqa: E402
from arena.ladder.control import Ladder  # noqa: E402
from arena.ladder.db import (  # noqa: E402
    Block,
    BlockKind,
    BlockResult,
    BlockState,
    Rating,
    RatingPoint,
    Version,
    VersionState,
    utc_now,
)
from arena.ladder.founding import found_ladder  # noqa: E402
from arena.ladder.service import LadderService, record_block  # noqa: E402

LIGHT = ("sample_bots.random_bot:RandomBot", "sample_bots.heuristic_bot:HeuristicBot")
KIT_FILE = '''\
from arena.botkit import run
from {module} import {name}

if __name__ == "__main__":
    raise SystemExit(run({name}))
'''
SANDBOX = "bwrap" if shutil.which("bwrap") else "off"

SERVE = """
import asyncio, sys
from pathlib import Path
from arena.ladder.control import Ladder
from arena.web.ladder import LadderSite

async def main():
    ladder = Ladder.open(Path(sys.argv[1]))
    site = LadderSite(ladder)
    print(await site.start("127.0.0.1", 0), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await site.stop()

asyncio.run(main())
"""


def make_ladder(folder: Path, tables: int) -> Ladder:
    found_ladder(folder)
    path = folder / "ladder.toml"
    text = path.read_text(encoding="utf-8").replace('mode = "bwrap"', f'mode = "{SANDBOX}"')
    text = text.replace("tables = 2", f"tables = {tables}").replace("check_games = 8", "check_games = 4")
    path.write_text(text, encoding="utf-8")
    return Ladder.open(folder)


def blocks_per_hour(base: Path, versions: int, tables: int, seconds: float, launched: bool) -> tuple[int, float]:
    """Done blocks in ``seconds`` of play once every version is active, and the time measured."""
    ladder = make_ladder(base / ("launched" if launched else "inprocess"), tables)
    for n in range(versions):
        spec = LIGHT[n % len(LIGHT)]
        if launched:
            ladder.add_entrant(f"kit-{n}")
            module, name = spec.split(":")
            ladder.submit(f"kit-{n}", "bot.py", KIT_FILE.format(module=module, name=name).encode())
        else:
            ladder.add_entrant(f"inproc-{n}", python=spec)
    service = LadderService(ladder)

    async def play() -> tuple[int, float]:
        stop = asyncio.Event()
        task = asyncio.ensure_future(service.run(stop))
        while True:  # the checks first
            await asyncio.sleep(0.2)
            with ladder.session() as session:
                states = set(session.scalars(select(Version.state)))
            if states == {VersionState.ACTIVE}:
                break
            if VersionState.FAILED in states:
                raise SystemExit("a light version failed its check: see the ladder's checks")
        with ladder.session() as session:
            before = len(session.scalars(select(Block.id).where(Block.state == BlockState.DONE)).all())
        began = time.perf_counter()
        await asyncio.sleep(seconds)
        with ladder.session() as session:
            after = len(session.scalars(select(Block.id).where(Block.state == BlockState.DONE)).all())
        took = time.perf_counter() - began
        stop.set()
        await task
        return after - before, took

    try:
        return asyncio.run(play())
    finally:
        ladder.close()


def recorded_ladder(folder: Path, entrants: int, blocks: int, played: int, seed: int = 1) -> Ladder:
    """A ladder of ``entrants`` active in-process versions and ``blocks`` done blocks, the newest ``played`` of
    them played for real; the rest are rows only, as the service would have written them."""
    ladder = make_ladder(folder, 2)
    for n in range(entrants):
        ladder.add_entrant(f"entrant-{n:03d}", display=f"Entrant {n}", python=LIGHT[n % len(LIGHT)])
    rng = random.Random(seed)
    model = RatingModel(ladder.settings.rating.beta, ladder.settings.rating.tau)
    now = utc_now()
    with ladder.session() as session:
        session.execute(update(Version).values(state=VersionState.ACTIVE, activated=now))
        versions = {v.id: v for v in session.scalars(select(Version))}
    ids = sorted(versions)
    skill = {v: rng.gauss(0, 1) for v in ids}
    ratings = {v: list(model.initial()) for v in ids}
    stats = {v: [0, 0.0, 0.0] for v in ids}
    rows_blocks, rows_results, rows_points = [], [], []
    for number in range(1, blocks + 1):
        seats = rng.sample(ids, 4)
        rows_blocks.append({"id": number, "deal_set": 1, "seat0": seats[0], "seat1": seats[1], "seat2": seats[2],
                            "seat3": seats[3], "state": BlockState.DONE, "rated": True, "kind": BlockKind.RATED,
                            "seed": block_seed(ladder.settings.seed, number), "created": now, "started": now,
                            "finished": now, "note": ""})
        if number > blocks - played:
            continue  # played for real below
        scores = [skill[v] * 100 + rng.gauss(0, 150) for v in seats]
        mean = sum(scores) / 4
        places = [sorted(scores, reverse=True).index(s) + 1 for s in scores]
        after = model.rate([tuple(ratings[v]) for v in seats], places)
        for v, score, (mu, sigma) in zip(seats, scores, after, strict=True):
            ratings[v] = [mu, sigma]
            stats[v][0] += 1
            stats[v][1] += score - mean
            stats[v][2] += (score - mean) ** 2
            rows_results.append({"block_id": number, "version_id": v, "games": 4, "points": round(score * 4),
                                 "score": score - mean, "faults": 0})
            rows_points.append({"version_id": v, "block_id": number, "mu": mu, "sigma": sigma, "at": now})
    with ladder.session() as session:
        for start in range(0, len(rows_blocks), 5000):
            session.execute(insert(Block), rows_blocks[start:start + 5000])
        for start in range(0, len(rows_results), 5000):
            session.execute(insert(BlockResult), rows_results[start:start + 5000])
            session.execute(insert(RatingPoint), rows_points[start:start + 5000])
        session.add_all(Rating(version_id=v, mu=ratings[v][0], sigma=ratings[v][1], games=4 * stats[v][0],
                               blocks=stats[v][0], score_sum=stats[v][1], score_squares=stats[v][2], updated=now)
                        for v in ids)
    for number in range(blocks - played + 1, blocks + 1):  # the newest blocks, with their records
        block = rows_blocks[number - 1]
        seats = [block[f"seat{s}"] for s in range(4)]
        config = block_config(number, block["seed"], [bot_table(versions[v], folder) for v in seats],
                              ladder.settings)
        asyncio.run(Tournament(config, folder / f"blocks/{number:06d}").run())
        with ladder.session() as session:
            stored = session.get(Block, number)
            assert stored is not None
            stored.state = BlockState.PLAYING
            record_block(session, stored, outcome(folder / stored.folder), model, 10)
    return ladder


def timed(address: str, path: str, requests: int) -> tuple[float, float]:
    """The median and 95th percentile, in ms, of ``requests`` GETs of ``path``, one at a time."""
    host, port = address.rsplit(":", 1)
    times = []
    for _ in range(requests):
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        began = time.perf_counter()
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        times.append((time.perf_counter() - began) * 1000)
        connection.close()
        if answer.status != 200:
            raise SystemExit(f"GET {path} answered {answer.status}")
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=8, help="light versions in the play runs (default 8)")
    parser.add_argument("--tables", type=int, default=2, help="[capacity] tables of the play runs (default 2)")
    parser.add_argument("--play-seconds", type=float, default=30.0, help="seconds each play run is timed")
    parser.add_argument("--entrants", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=20_000)
    parser.add_argument("--played", type=int, default=200, help="the newest blocks played for real (default 200)")
    parser.add_argument("--requests", type=int, default=100, help="requests per page timed (default 100)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="ladder-bench-"))
    try:
        print(f"# blocks per hour: {args.versions} light versions, {args.tables} tables, {args.play_seconds:g} s "
              f"each, sandbox {SANDBOX}")
        for launched in (False, True):
            done, took = blocks_per_hour(base, args.versions, args.tables, args.play_seconds, launched)
            what = "kit bots launched over gRPC" if launched else "in-process versions"
            print(f"{what:30} {done:5} blocks in {took:5.1f} s: {done / took * 3600:9,.0f} blocks/hour, "
                  f"{4 * done / took * 3600:9,.0f} games/hour")
        made = time.perf_counter()
        ladder = recorded_ladder(base / "site", args.entrants, args.blocks, args.played)
        ladder.close()
        print(f"\n# the site: {args.entrants} entrants, {args.blocks:,} recorded blocks ({args.played} with their "
              f"records), made in {time.perf_counter() - made:.0f} s; {args.requests} requests each, one at a time")
        server = subprocess.Popen([sys.executable, "-c", SERVE, str(base / "site")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            assert server.stdout is not None
            address = server.stdout.readline().strip()
            for path in ("/", "/api/leaderboard", "/entrants/entrant-007", "/api/entrants/entrant-007"):
                timed(address, path, 3)  # warm
                median, p95 = timed(address, path, args.requests)
                print(f"GET {path:28} median {median:7.1f} ms   95th percentile {p95:7.1f} ms")
        finally:
            if server.stdin is not None:
                server.stdin.close()
            server.wait(30)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
