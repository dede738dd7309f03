"""The Bhoos Callbreak contest as the tests meet it: a contest-style bot's script and a real game log of
the contest's engine.

The bot is a small HTTP server written with the standard library, as contest bots are: hard-wired to port
7000 on 127.0.0.1 unless given a port, stateful, and told by its mode how to misbehave. The log is
``tests/data/bhoos-sample-game.json`` (its origin and format: ``tests/data/README.md``).
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.helpers.runs import ROOT

ENGINE_LOG = ROOT / "tests" / "data" / "bhoos-sample-game.json"
"""One five-round game of the contest, logged by its engine (the ace is written ``1`` there)."""


def engine_log() -> dict[str, Any]:
    """The engine's log, read afresh."""
    data: dict[str, Any] = json.loads(ENGINE_LOG.read_text(encoding="utf-8"))
    return data


BHOOS_BOT = '''\
"""A contest-style bot: python bot.py MODE [PORT]; every body it gets goes to stderr (its log)."""
import json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 7000
RANKS = "23456789TJQK1"
state = {"hand": None, "round": 0, "plays": 0}


def die(why):
    print("DYING: " + why, file=sys.stderr, flush=True)
    os._exit(3)


def legal(cards, played):
    """The bhoos profile's legal cards: follow and beat; void, trump (and overtrump); else anything."""
    if not played:
        return cards
    def value(c): return RANKS.index(c[0])
    win = played[0]
    for c in played[1:]:
        if (c[1] == win[1] and value(c) > value(win)) or (c[1] == "S" and win[1] != "S"):
            win = c
    same = [c for c in cards if c[1] == played[0][1]]
    if same:
        higher = [c for c in same if win[1] == same[0][1] and value(c) > value(win)]
        return higher or same
    spades = [c for c in cards if c[1] == "S"]
    if spades and win[1] == "S":
        return [c for c in spades if value(c) > value(win)] or cards
    return spades or cards


class Bot(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, value, status=200):
        data = json.dumps(value if MODE == "old" else {"value": value}).encode()
        if status != 200:
            data = b"boom"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply("hello")

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        print("BODY " + self.path + " " + json.dumps(body), file=sys.stderr, flush=True)
        if MODE == "old":  # the older sandbox shape: "id", "matchId", "players" listing the ids on /play
            me = body.get("id") or body["playerId"]
            assert body["matchId"]
            ids = body["players"] if self.path == "/play" else list(body["context"]["players"])
            assert me in ids
            body["played"] = [c.split("/")[0] for c in body.get("played", [])]
        if self.path == "/bid":
            if MODE == "bid500":
                return self.reply(None, 500)
            if MODE == "stateful":
                if state["hand"]:
                    die("a bid in the middle of a round")
                round_number = body["context"]["round"]
                if round_number != 1 and round_number != state["round"] + 1:
                    die("round %s after round %s" % (round_number, state["round"]))
                state.update(hand=list(body["cards"]), round=round_number)
            count = sum(1 for c in body["cards"] if c[0] in "1K")
            return self.reply(str(min(max(count, 1), 8)) if MODE == "old" else min(max(count, 1), 8))
        if self.path == "/play":
            state["plays"] += 1
            cards = body["cards"]
            if MODE == "stateful":
                if state["hand"] is None:
                    die("/play before /bid")
                if sorted(cards) != sorted(state["hand"]):
                    die("a /play for a hand that is not mine")
            choice = min(legal(cards, body["played"]), key=lambda c: RANKS.index(c[0]))
            if MODE == "stateful":
                state["hand"].remove(choice)
            if MODE == "late" and state["plays"] == 3:
                time.sleep(3.5)
            if MODE == "crash" and state["plays"] == 5:
                die("crashing on purpose")
            return self.reply(choice + "/1" if MODE == "old" else choice)
        self.reply(None, 404)


if MODE == "reloader":  # as a debug server's reloader: the real server is its child, and it waits on it
    import subprocess
    sys.exit(subprocess.call([sys.executable, __file__, "modern", str(PORT)]))
ThreadingHTTPServer(("127.0.0.1", PORT), Bot).serve_forever()
'''
"""A contest-style bot: ``python bot.py MODE [PORT]``; every body it gets goes to its stderr (its log)."""


@contextlib.contextmanager
def serving(bot: Path, mode: str, log: Path) -> Iterator[str]:
    """The bot's script ``bot`` started by the test in ``mode`` on a free port, its stderr to ``log``: its URL,
    once it listens; the process is killed at the end."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    with log.open("wb") as err:
        process = subprocess.Popen([sys.executable, str(bot), mode, str(port)], stderr=err)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait()
