"""What the live page costs the arena: requests per second of ``/board``, and the CPU of the serving process.

A results folder is made first (a round robin of in-process bots, played through the command line). Then
the page is served from it by a process of its own that does nothing else (the arena's process, less the
games), and 20 clients (threads of this process, each a new connection per request, as a browser's poll
is) ask for ``/board``:

- flat out: each client asks again as soon as it has its answer, for ``--seconds``; printed: requests per
  second, and the server's CPU (seconds of CPU per second, so 1.0 is one core) and per request;
- as a class watches: each client asks every ``POLL_S`` seconds (the page's own script), for
  ``--watch-seconds``; printed: the server's CPU in % of one core;
- no client, as long: the server's CPU while nobody looks.

With ``--baseline DIR`` (a checkout of the code to compare, e.g. a worktree of an earlier commit), the same
runs are made with its live page, in the same run on the same folder, and printed beside.

    python benchmarks/live_page.py
    python benchmarks/live_page.py --baseline /tmp/base --seconds 5 --watch-seconds 20
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLL_S = 2.0
"""The page's own refresh period (arena.rating.leaderboard.POLL_S)."""

# Run by the serving process, in the code folder being measured: the page (wherever that code keeps it) on a
# free port; each line on stdin is answered with the process's CPU seconds so far (all its threads).
SERVE = """
import sys, time
from pathlib import Path
try:
    from arena.web.live import LivePage
except ImportError:
    from arena.rating.leaderboard import LivePage
import arena
page = LivePage(Path(sys.argv[1]))
print(page.start(), arena.__file__, flush=True)
for line in sys.stdin:
    print(time.process_time(), flush=True)
page.close()
"""


def make_folder(base: Path, bots: int, deal_sets: int) -> Path:
    """A finished round robin of ``bots`` in-process random bots, its results folder."""
    tables = "".join(f'\n[[bots]]\nname = "bot-{n}"\npython = "sample_bots.random_bot:RandomBot"\nseed = {n}\n'
                     for n in range(1, bots + 1))
    config = base / "live.toml"
    config.write_text(f'[tournament]\nname = "live page"\nseed = 11\ndeal_sets = {deal_sets}\nconcurrency = 2\n\n'
                      f"[time]\ndeadline_ms = 10000\n{tables}", encoding="utf-8")
    results = base / "results"
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(config), "--results", str(results),
                           "--no-progress"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the tournament that makes the folder failed:\n{done.stderr}")
    return results


class Served:
    """The page of one code folder, served by a process of its own."""

    def __init__(self, code: Path, folder: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(code))
        self.process = subprocess.Popen([sys.executable, "-c", SERVE, str(folder)], cwd=code, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdout is not None
        url, self.module = self.process.stdout.readline().split()
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80

    def cpu(self) -> float:
        """The serving process's CPU seconds so far."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def get(self) -> int:
        """One request for /board on a connection of its own; its status."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request("GET", "/board")
            answer = connection.getresponse()
            answer.read()
            return answer.status
        finally:
            connection.close()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(30)


def load(served: Served, clients: int, seconds: float, every: float) -> tuple[int, int, float, float]:
    """``clients`` threads ask for /board, each every ``every`` seconds (0: at once again), for ``seconds``.
    Returns the answers 200, the others, the seconds taken and the server's CPU seconds meanwhile."""
    counts = [0, 0]
    lock = threading.Lock()
    start = time.monotonic()
    stop = start + seconds

    def client(index: int) -> None:
        due = start + every * index / clients  # pollers spread over the period, as browsers opened apart are
        while (now := time.monotonic()) < stop:
            if due > now:
                time.sleep(min(due, stop) - now)
                continue
            ok = served.get() == 200
            with lock:
                counts[0 if ok else 1] += 1
            due += every

    cpu = served.cpu()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(max(0.0, stop - time.monotonic()))  # with no client, the time still passes
    return counts[0], counts[1], time.monotonic() - start, served.cpu() - cpu


def measure(name: str, code: Path, folder: Path, args: argparse.Namespace) -> None:
    served = Served(code, folder)
    try:
        served.get()  # the first answer computes the standings: not what a poll costs
        ok, bad, took, cpu = load(served, args.clients, args.seconds, 0.0)
        print(f"{name:>9}  flat out: {ok / took:7.1f} requests/s ({bad} not 200), CPU {cpu / took:4.2f} core, "
              f"{1000 * cpu / max(ok, 1):5.2f} ms per request   [{served.module}]")
        ok, bad, took, cpu = load(served, args.clients, args.watch_seconds, POLL_S)
        print(f"{name:>9}  {args.clients} polling every {POLL_S:g} s: {ok / took:5.1f} requests/s ({bad} not 200), "
              f"CPU {100 * cpu / took:5.2f} % of a core")
        _, _, took, cpu = load(served, 0, args.watch_seconds, POLL_S)
        print(f"{name:>9}  no client: CPU {100 * cpu / took:5.2f} % of a core")
    finally:
        served.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout of the code to compare, measured in the same run")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=5.0, help="of asking flat out")
    parser.add_argument("--watch-seconds", type=float, default=20.0, help="of polling as browsers do")
    parser.add_argument("--bots", type=int, default=12)
    parser.add_argument("--deal-sets", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="measurements of each, alternated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        folder = make_folder(Path(base), args.bots, args.deal_sets)
        print(f"{args.bots} bots, {sum(1 for _ in (folder / 'records.jsonl').open())} records; "
              f"{args.clients} clients, {os.cpu_count()} cores")
        for _ in range(args.rounds):
            if args.baseline is not None:
                measure("baseline", args.baseline.resolve(), folder, args)
            measure("this", ROOT, folder, args)


if __name__ == "__main__":
    main()
