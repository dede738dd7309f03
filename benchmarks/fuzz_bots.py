"""Answer fuzzing for the stdio and Bhoos transports: hostile answers from real bot processes, in a real tournament.

The arena runs a tournament in a process of its own (``callbreak-arena run``) with four bots at every
table: ``sx``, a stdio bot, and ``bx``, a Bhoos HTTP bot (in the sandbox, as every ``bhoos`` bot), whose
every answer comes from a generator seeded from ``--seed``, and two honest bots, the stdio sample and an
in-process random bot. A hostile answer is one of the corpus classes of ``tests/test_bot_bytes.py`` (deep
nesting, long numbers, ``1e999``, ``NaN``, bytes that are not UTF-8, NUL, lone surrogates, duplicate
keys, bare values, blank lines, a line or body past its limit, broken HTTP) or a mutation of a valid
answer (bytes flipped, inserted, cut or repeated); one answer in ten is the seat's legal answer, so a
game goes on through every kind of decision. A fault makes the arena play the fallback (or, when the
answer is illegal, ask again), and the bot answers the next request with the next hostile answer.

    python benchmarks/fuzz_bots.py [--answers 100000] [--seed 1] [--results DIR]

Printed: hostile answers sent, by class; seconds; arena crashes (its exit status, and tracebacks in its
stderr: must be 0); the fuzzing bots' faults by kind; the honest bots' faults (must be 0); and whether
``callbreak-arena verify`` passed on the results. The arena must be able to run bubblewrap (the
Bhoos bot needs a network namespace of its own); without it, only the stdio bot fuzzes.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from arena.event.launch.sandbox import bwrap_problem  # noqa: E402

ANSWERS_PER_GAME = 5 * 14
"""Requests to one seat in a game of five rounds (13 cards and a call a round), retries not counted."""

# What both fuzzing bots share: the hostile answers, generated from a seed. ``hostile(rng, valid)`` gives
# (class, bytes): ``valid`` is a valid answer's bytes (a line for stdio without its newline, a body for
# Bhoos) and the bytes are the line's content or the body.
GENERATOR = r'''
import random
LIMIT = 64 * 1024
CLASSES = ["deep-arrays", "deep-objects", "long-integer", "huge-exponent", "nan", "invalid-utf8", "nul",
           "lone-surrogate", "duplicate-key", "bare-value", "over-the-limit", "empty", "control",
           "mutated", "mutated", "mutated", "mutated", "legal"]


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        what = rng.randrange(4)
        at = rng.randrange(len(data) + 1)
        if what == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif what == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif what == 2:
            del data[at:at + rng.randint(1, 6)]
        else:
            data[at:at] = data[:at][-rng.randint(1, 6):] * rng.randint(1, 50)
    return bytes(data)


def hostile(rng, valid, key):
    kind = rng.choice(CLASSES)
    depth = rng.choice([33, 100, 5000, 60000])
    body = {
        "deep-arrays": lambda: b"[" * depth + b"]" * rng.choice([0, depth]),
        "deep-objects": lambda: (b'{"' + key + b'":') * min(depth, 12000),
        "long-integer": lambda: b'{"' + key + b'": ' + b"9" * rng.choice([101, 4301, 5000, 30000]) + b"}",
        "huge-exponent": lambda: b'{"' + key + b'": ' + rng.choice([b"1e999", b"-1e400", b"1E309"]) + b"}",
        "nan": lambda: b'{"' + key + b'": ' + rng.choice([b"NaN", b"Infinity", b"-Infinity"]) + b"}",
        "invalid-utf8": lambda: b'{"' + key + b'": "' + bytes([rng.randrange(0x80, 0x100)]) + b'"}',
        "nul": lambda: valid[:1] + b"\0" + valid[1:],
        "lone-surrogate": lambda: b'{"' + key + b'": "\\ud' + rng.choice([b"800", b"c00", b"fff"]) + b'"}',
        "duplicate-key": lambda: b'{"' + key + b'": 1, "' + key + b'": 2}',
        "bare-value": lambda: rng.choice([b'"QS"', b"3", b"[]", b"null", b"true", b'"three"']),
        "over-the-limit": lambda: valid.ljust(LIMIT + rng.randint(1, 100)),
        "empty": lambda: b" " * rng.randint(0, 10),
        "control": lambda: b'{"' + key + b'": "A' + bytes([rng.randrange(32)]) + b'S"}',
        "mutated": lambda: mutate(rng, valid),
        "legal": lambda: valid,
    }[kind]()
    return kind, body
'''

STDIO_FUZZ = GENERATOR + r'''
import json, sys
rng = None
RANKS = "23456789TJQKA"
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "game_over":
        continue
    if rng is None:  # one sequence per seed, game and seat
        rng = random.Random(f"{sys.argv[1]} {request['game_id']} {request['seat']}")
    if request["type"] == "call":
        valid, key = json.dumps({"call": request["legal_calls"][0]}).encode(), b"call"
    else:
        card = min(request["legal_cards"], key=lambda c: RANKS.index(c[0]))
        valid, key = json.dumps({"card": card}).encode(), b"card"
    kind, data = hostile(rng, valid, key)
    if kind == "mutated":
        data = data.replace(b"\n", b" ")
    if kind == "empty":  # a blank line is no answer: some, then the answer
        kind, data = "blank-lines", b"\n" * rng.randint(1, 1000) + valid
        if rng.random() < 0.02:
            kind, data = "blank-flood", b"\n" * rng.choice([1001, 100000])
    sys.stderr.write("FUZZ " + kind + "\n")
    sys.stderr.flush()
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.flush()
'''

BHOOS_FUZZ = GENERATOR + r'''
import json, socket, sys
rng = None
RANKS = "23456789TJQK1"
server = socket.create_server(("127.0.0.1", 7000))


def ok(body):
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body


HTTP = {
    "header-flood": lambda: b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(200)) + b"\r\n",
    "long-length": lambda: b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n",
    "odd-status": lambda: b"HTTP/1.1 \xb200 OK\r\nContent-Length: 0\r\n\r\n",
    "not-http": lambda: bytes(rng.randrange(256) for _ in range(20)) + b"\r\n\r\n",
    "bad-chunk": lambda: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\xb9\r\nx\r\n0\r\n\r\n",
}
while True:
    connection, _ = server.accept()
    with connection:
        data = b""
        while b"\r\n\r\n" not in data:
            more = connection.recv(65536)
            if not more:
                break
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            more = connection.recv(65536)
            if not more:
                break
            body += more
        if head.startswith(b"GET"):
            connection.sendall(ok(b"hi"))
            continue
        request = json.loads(body)
        if rng is None:  # one sequence per seed, game and seat
            rng = random.Random(f"{sys.argv[1]} {request['matchId']} {request['playerId']}")
        valid = b'{"value": 1}' if head.startswith(b"POST /bid") else json.dumps(
            {"value": min(request["cards"], key=lambda c: RANKS.index(c[0]))}).encode()
        if rng.random() < 0.1:
            kind = rng.choice(sorted(HTTP))
            response = HTTP[kind]()
        else:
            kind, answer = hostile(rng, valid, b"value")
            response = ok(answer)
        sys.stderr.write("FUZZ " + kind + "\n")
        sys.stderr.flush()
        try:
            connection.sendall(response)
        except OSError:
            pass
'''

SAMPLE = ROOT / "sample_bots" / "stdio" / "lowest_bot.py"
HONEST = ("honest-stdio", "honest-random")


def config(folder: Path, answers: int, seed: int, bhoos: bool) -> Path:
    """The tournament: enough deal sets for ``answers`` hostile answers, four games a deal set."""
    (folder / "bots").mkdir(parents=True)
    (folder / "bots" / "stdio_fuzz.py").write_text(STDIO_FUZZ, encoding="utf-8")
    (folder / "bots" / "bhoos_fuzz.py").write_text(BHOOS_FUZZ, encoding="utf-8")
    fuzzers = 2 if bhoos else 1
    deal_sets = max(1, math.ceil(answers / (4 * fuzzers * ANSWERS_PER_GAME)))
    bots = [("sx", "stdio", f"{{python}} {folder / 'bots' / 'stdio_fuzz.py'} {seed}"),
            ("honest-stdio", "stdio", f"{{python}} {SAMPLE}"),
            ("honest-random", "python", "sample_bots.random_bot:RandomBot")]
    if bhoos:
        bots.append(("bx", "bhoos", f"{{python}} {folder / 'bots' / 'bhoos_fuzz.py'} {seed}"))
    else:
        bots.append(("honest-random-2", "python", "sample_bots.random_bot:RandomBot"))
    tables = "".join(f'\n[[bots]]\nname = "{n}"\n{k} = {json.dumps(v)}\nseed = {i}\n'
                     for i, (n, k, v) in enumerate(bots, start=1))
    text = (f'[tournament]\nname = "fuzz-bots"\nseed = {seed}\ndeal_sets = {deal_sets}\nconcurrency = 2\n\n'
            '[rules]\nprofile = "bhoos"\nrounds = 5\n\n[time]\ndeadline_ms = 3000\n' + tables)
    path = folder / "fuzz.toml"
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--answers", type=int, default=100_000, help="hostile answers to aim for (about)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--results", type=Path, help="where the results go (default: a temporary folder)")
    args = parser.parse_args(argv)
    problem = bwrap_problem()
    with tempfile.TemporaryDirectory(prefix="fuzz-bots-") as scratch:
        folder = args.results or Path(scratch)
        path = config(folder, args.answers, args.seed, problem is None)
        results = folder / "results"
        started = time.perf_counter()
        arena = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--results", str(results),
                                "--no-progress"], cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        verify = subprocess.run([sys.executable, "-m", "arena", "verify", str(results)], cwd=ROOT,
                                capture_output=True, text=True, check=False)
        sent: collections.Counter[str] = collections.Counter()
        for name in ("sx", "bx"):
            log = results / "logs" / f"{name}.log"
            if log.is_file():
                for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
                    if line.startswith("FUZZ "):
                        sent[f"{name} {line[5:]}"] += 1
        faults: collections.Counter[str] = collections.Counter()
        honest = 0
        games = 0
        records = results / "records.jsonl"
        for line in records.read_text(encoding="utf-8").splitlines() if records.is_file() else []:
            record = json.loads(line)
            games += record["round"] == 1
            for fault in record["faults"]:
                seat = record["seats"][fault["seat"]]
                if seat in ("sx", "bx"):
                    faults[f"{seat} {fault['kind']}"] += 1
                else:
                    honest += 1
        crashes = (arena.returncode != 0) + arena.stderr.count("Traceback")
        hostile = sum(n for k, n in sent.items() if not k.endswith(" legal"))
        print(f"answers sent: {sum(sent.values()):,} ({hostile:,} hostile) in {seconds:.1f} s, {games} games"
              + ("" if problem is None else f" (stdio only: {problem})"))
        for kind, n in sorted(sent.items()):
            print(f"  {kind:<28} {n:>8,}")
        print(f"arena crashes: {crashes} (exit status {arena.returncode})")
        print("fuzzing bots' faults by kind: " + ", ".join(f"{k} {n:,}" for k, n in sorted(faults.items())))
        print(f"honest bots' faults: {honest}")
        print(f"verify: {'passed' if verify.returncode == 0 else 'FAILED: ' + verify.stdout + verify.stderr}")
        if crashes:
            print(arena.stderr[-2000:])
    return 0 if crashes == 0 and honest == 0 and verify.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
