"""Protocol fuzzing: hostile streams against a real tournament, over real gRPC, and what they got back.

An arena runs a tournament in a process of its own (``callbreak-arena run``): in-process random bots,
remote random bots in processes of their own (the honest remote bots), and one remote bot, ``h``,
whose every stream is this fuzzer's. While it runs, worker threads open hostile streams, each one
episode: random bytes before or after the Hello, answers before the Hello, a second Hello, empty
messages, every field out of range, unknown and duplicate request ids, answers of the wrong kind,
strings and unknown fields up to the size limit and past it, floods, bad tokens. A stream of ``h``
may be seated at a table: it then plays its requests (the first legal call or card), mixing in
wrong kinds, duplicates, huge or absurd answers. Once the message budget is spent, one calm stream
plays ``h``'s seats to the end of the tournament.

Checked: the arena never crashes; each hostile stream ends with a clear status (never UNKNOWN or
INTERNAL, a one-line detail without Python's exception text), or gets a notice for what it sent;
no notice or status repeats a bot's text at length; the faults land in the records and the live
status; every planned game is played, and the honest bots commit no fault; ``callbreak-arena
verify`` passes on the results.

    python benchmarks/fuzz.py [--messages 100000] [--workers 4] [--seed 1] [--results DIR]

Printed: messages sent, by kind; statuses received; arena crashes; honest games finished; the
verify result; seconds; the arena's peak RSS. The gRPC client here is the synchronous one: its
status is the one the arena sent (``grpc.aio`` reports a write in flight as the stream ends as
its own INTERNAL error instead).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import json
import os
import queue
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from protocol import callbreak_pb2 as pb  # noqa: E402

METHOD = "/callbreak.v1.Arena/Connect"
HOSTILE = "h"
HOSTILE_TOKEN = "hostile-token-h"
HONEST_REMOTE = ("e", "f", "g")
IN_PROCESS = ("a", "b", "c", "d", "i")
SIZE_LIMIT = 64 * 1024
"""The arena's largest message (``arena.transports.grpc.server.MAX_MESSAGE_BYTES``)."""
CLEAR = {"OK", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "UNAUTHENTICATED", "FAILED_PRECONDITION",
         "ALREADY_EXISTS", "PERMISSION_DENIED", "UNAVAILABLE"}
"""The statuses a hostile stream may end with; anything else (UNKNOWN, INTERNAL, ...) is a problem."""
LONGEST_TEXT = 400
"""The longest detail the arena should ever send back: a bot's text is cut to a few dozen characters."""
PYTHON_TEXT = ("Traceback", "Unexpected <class", "Exception", 'File "')
MOST_FAULTS_AT_ONE_DECISION = 2 * (10 + 6) + 4 + 1
"""Strays are collected twice at most at one decision (before it, and after the player failed it),
each time ten in detail and a count for each kind past them (``arena.transports.grpc.strays.HELD_FAULTS``); then
four illegal answers (``max_retries`` 3, and the last) and a late or disconnect fault."""
U32 = 2**32 - 1
U64 = 2**64 - 1


@dataclasses.dataclass
class FuzzResult:
    """What a fuzzing run sent, got back and left behind."""

    sent: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """Messages written on hostile streams, by kind."""
    statuses: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """How the hostile streams ended, by status code."""
    notices: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """Notices received on hostile streams, by kind."""
    episodes: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    samples: dict[str, str] = dataclasses.field(default_factory=dict)
    """One status detail for each status code."""
    problems: list[str] = dataclasses.field(default_factory=list)
    """Each stream that ended unclearly, each text too long or with Python's exception text."""
    arena_exit: int | None = None
    crashes: int = 0
    """The arena process failing, and every traceback in its stderr."""
    games_planned: int = 0
    games_recorded: int = 0
    honest_games: int = 0
    """Recorded games without the hostile bot."""
    honest_faults: list[str] = dataclasses.field(default_factory=list)
    hostile_faults: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """The hostile bot's faults in the records, by kind."""
    session_faults: dict[str, int] = dataclasses.field(default_factory=dict)
    """The most of each kind the live status showed for one session of the hostile bot."""
    log_lines: int = 0
    """Lines about stray messages in the arena's log."""
    longest_record: int = 0
    """Characters in the longest line of the records."""
    longest_detail: int = 0
    """Characters in the longest fault detail of the records."""
    most_at_one_decision: int = 0
    """The most faults a seat has at one decision (a round and trick) in the records."""
    verify: tuple[int, str] = (-1, "")
    seconds: float = 0.0
    peak_rss_kb: int = 0

    @property
    def total(self) -> int:
        return sum(self.sent.values())

    def report(self) -> str:
        legal = self.sent["answer (legal)"]
        lines = [f"messages sent: {self.total:,} ({self.total - legal:,} hostile, and {legal:,} legal answers "
                 "at the hostile bot's seats)"]
        lines += [f"  {kind:<24} {n:>8,}" for kind, n in self.sent.most_common()]
        lines.append(f"hostile streams: {sum(self.episodes.values()):,}")
        lines += [f"  {kind:<24} {n:>8,}" for kind, n in self.episodes.most_common()]
        lines.append("statuses received:")
        lines += [f"  {code:<24} {n:>8,}   e.g. {self.samples.get(code, '')[:90]}"
                  for code, n in self.statuses.most_common()]
        lines.append("notices received:")
        lines += [f"  {kind:<24} {n:>8,}" for kind, n in self.notices.most_common()]
        lines.append(f"problems: {len(self.problems)}")
        lines += [f"  {p}" for p in self.problems[:20]]
        lines.append(f"arena crashes: {self.crashes} (exit status {self.arena_exit})")
        lines.append(f"games recorded: {self.games_recorded} of {self.games_planned} planned; honest games finished: "
                     f"{self.honest_games}; honest bots' faults: {len(self.honest_faults)}")
        faults = ", ".join(f"{k} {n}" for k, n in self.hostile_faults.most_common())
        lines.append(f"hostile bot's faults in the records: {sum(self.hostile_faults.values())} ({faults})")
        seen = ", ".join(f"{k} {n}" for k, n in sorted(self.session_faults.items()))
        lines.append(f"most faults of one hostile session in the live status: {seen or '-'}")
        lines.append(f"stray-message lines in the arena's log: {self.log_lines}")
        lines.append(f"records: longest line {self.longest_record:,} characters, longest fault detail "
                     f"{self.longest_detail} characters, most faults at one decision {self.most_at_one_decision}")
        lines.append(f"verify: {'passed' if self.verify[0] == 0 else 'FAILED'} ({self.verify[1]})")
        lines.append(f"seconds: {self.seconds:.1f}")
        lines.append(f"arena peak RSS: {self.peak_rss_kb / 1024:.1f} MB")
        return "\n".join(lines)


# -- the tournament ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def configuration(port: int, deal_sets: int) -> str:
    """Nine bots (padded to twelve with house bots): three tables a round, a deal set a round."""
    bots = "".join(f'\n[[bots]]\nname = "{n}"\npython = "sample_bots.random_bot:RandomBot"\nseed = {s}\n'
                   for s, n in enumerate(IN_PROCESS, 1))
    bots += "".join(f'\n[[bots]]\nname = "{n}"\nremote = true\ntoken = "token-{n}"\n' for n in HONEST_REMOTE)
    bots += f'\n[[bots]]\nname = "{HOSTILE}"\nremote = true\ntoken = "{HOSTILE_TOKEN}"\n'
    return (f'[tournament]\nname = "fuzz"\nseed = 11\ndeal_sets = {deal_sets}\nconcurrency = 4\n'
            'forfeit = "fallback"\n\n'
            "[time]\ndeadline_ms = 5000\nabsent_after_s = 5\nreconnect_grace_s = 1\n\n"
            "[faults]\ndisqualify_after = 0\n\n"
            f'[server]\nhost = "127.0.0.1"\nport = {port}\nsessions_per_bot = 16\n' + bots)


class Arena:
    """The arena process and the honest remote bots, with the arena's peak RSS watched."""

    def __init__(self, folder: Path, deal_sets: int) -> None:
        self.folder = folder
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "fuzz.toml"
        config.write_text(configuration(self.port, deal_sets), encoding="utf-8")
        self.results = folder / "results"
        self.env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
        self.err_path = folder / "arena.err"
        with self.err_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "arena", "run", str(config), "--results", str(self.results), "--no-progress"],
                cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=err,
            )
        self.bots: list[subprocess.Popen[bytes]] = []
        self.gone = threading.Event()
        """Set when a stream could not connect: the arena has stopped serving."""
        self.peak_rss_kb = 0
        self.session_faults: dict[str, int] = {}
        self.longest_version = 0
        """The longest bot version the live status showed."""
        self._watching = threading.Thread(target=self._watch, daemon=True)
        self._watching.start()

    def wait_listening(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while "arena listening on" not in self.stderr():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the arena ended before it listened:\n{self.stderr()}")
            if time.monotonic() > end:
                raise RuntimeError("the arena did not listen in time")
            time.sleep(0.05)

    def start_honest_bots(self) -> None:
        for seed, name in enumerate(HONEST_REMOTE, 1):
            self.bots.append(subprocess.Popen(
                [sys.executable, "-m", "sample_bots.random_bot", "--arena", self.address, "--token", f"token-{name}",
                 "--name", name, "--seed", str(seed)],
                cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def _watch(self) -> None:
        status_path = self.results / "status.json"
        while self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        self.peak_rss_kb = max(self.peak_rss_kb, int(line.split()[1]))
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                for session in json.loads(status_path.read_text(encoding="utf-8"))["sessions"]:
                    self.longest_version = max(self.longest_version, len(session["version"]))
                    if session["bot"] == HOSTILE:
                        for kind, n in session.get("faults", {}).items():
                            self.session_faults[kind] = max(self.session_faults.get(kind, 0), n)
            time.sleep(0.2)

    def finish(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for bot in self.bots:
            try:
                bot.wait(10)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait()
        self._watching.join(2)
        return code

    def kill(self) -> None:
        for proc in [self.proc, *self.bots]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# -- hostile streams -----------------------------------------------------------------------------

_END = object()


def _raw(message: Any) -> bytes:
    return message if isinstance(message, bytes) else bytes(message.SerializeToString())


class Budget:
    """Messages left to send, shared by the workers."""

    def __init__(self, total: int) -> None:
        self.left = total
        self._lock = threading.Lock()

    def take(self, n: int) -> int:
        with self._lock:
            n = max(0, min(n, self.left))
            self.left -= n
            return n


class Stream:
    """One hostile stream through the synchronous client: messages go out through a queue that gRPC's
    own thread drains; what comes back is read by the worker."""

    def __init__(self, channel: grpc.Channel, result: FuzzResult, lock: threading.Lock) -> None:
        self.result = result
        self.lock = lock
        self.out: queue.Queue[object] = queue.Queue()
        self.stop = threading.Event()
        """Set when the stream should send nothing more (the arena is ending it)."""
        self.call = channel.stream_stream(METHOD, request_serializer=_raw,
                                          response_deserializer=pb.ConnectResponse.FromString)(self._messages())
        self.notices: collections.Counter[str] = collections.Counter()
        self.sent = 0

    def _messages(self) -> Iterator[object]:
        while not self.stop.is_set():
            try:
                item = self.out.get(timeout=0.05)
            except queue.Empty:
                continue
            if item is _END:
                return
            yield item

    def send(self, kind: str, message: object) -> None:
        self.sent += 1
        with self.lock:
            self.result.sent[kind] += 1
        self.out.put(message)

    def close_sending(self) -> None:
        self.out.put(_END)

    def note(self, notice: pb.Notice) -> None:
        kind = pb.NoticeKind.Name(notice.kind)
        self.notices[kind] += 1
        if kind == "NOTICE_KIND_FLOOD":
            self.stop.set()
        with self.lock:
            self.result.notices[kind] += 1
            if len(notice.detail) > LONGEST_TEXT or any(t in notice.detail for t in PYTHON_TEXT):
                self.result.problems.append(f"notice {kind} with a detail of {len(notice.detail)} characters: "
                                            f"{notice.detail[:120]!r}")


Answer = Callable[[Stream, pb.ConnectResponse], None]


def honest(stream: Stream, msg: pb.ConnectResponse) -> None:
    """The first legal call or card."""
    kind = msg.WhichOneof("kind")
    if kind == "call_request":
        r = msg.call_request
        stream.send("answer (legal)", pb.ConnectRequest(call=pb.CallAnswer(request_id=r.request_id,
                                                                          call=r.legal_calls[0])))
    elif kind == "play_request":
        p = msg.play_request
        stream.send("answer (legal)", pb.ConnectRequest(play=pb.PlayAnswer(request_id=p.request_id,
                                                                          card=p.legal_cards[0])))


def crooked(rng: random.Random) -> Answer:
    """Answers every request, but first does one of: a wrong kind, a duplicate, an absurd answer."""

    def answer(stream: Stream, msg: pb.ConnectResponse) -> None:
        kind = msg.WhichOneof("kind")
        if kind not in ("call_request", "play_request"):
            return
        request = msg.call_request if kind == "call_request" else msg.play_request
        rid = request.request_id
        trick = rng.randrange(5)
        if trick == 0:  # the wrong kind first
            wrong = (pb.ConnectRequest(play=pb.PlayAnswer(request_id=rid, card="AS")) if kind == "call_request"
                     else pb.ConnectRequest(call=pb.CallAnswer(request_id=rid, call=3)))
            stream.send("wrong kind", wrong)
        elif trick == 1 and kind == "play_request":  # a card the size of the limit: refused, asked again
            stream.send("huge card answer", pb.ConnectRequest(play=pb.PlayAnswer(
                request_id=rid, card="A" * rng.randrange(1000, SIZE_LIMIT - 100))))
            return
        elif trick == 1:  # a call out of range: refused, asked again
            stream.send("out-of-range call", pb.ConnectRequest(call=pb.CallAnswer(request_id=rid, call=U32)))
            return
        honest(stream, msg)
        if trick == 2:  # the same answer again
            honest(stream, msg)
            with stream.lock:
                stream.result.sent["duplicate answer"] += 1
                stream.result.sent["answer (legal)"] -= 1

    return answer


def stray(rng: random.Random) -> tuple[str, pb.ConnectRequest]:
    """One message the arena cannot use, after the Hello."""
    pick = rng.randrange(8)
    if pick == 0:
        return "unknown request id", pb.ConnectRequest(play=pb.PlayAnswer(request_id=rng.randrange(1, U64), card="AS"))
    if pick == 1:
        return "out-of-range fields", pb.ConnectRequest(call=pb.CallAnswer(request_id=U64, call=U32))
    if pick == 2:
        return "empty message", pb.ConnectRequest()
    if pick == 3:
        return "second hello", pb.ConnectRequest(hello=pb.Hello(token=HOSTILE_TOKEN, protocol_version=U32,
                                                                bot_name="\x00" * 50, events=True))
    if pick == 4:
        return "unknown request id", pb.ConnectRequest(call=pb.CallAnswer(request_id=0, call=0))
    if pick == 5:
        return "huge string", pb.ConnectRequest(play=pb.PlayAnswer(
            request_id=rng.randrange(1, 10**6), card=rng.choice("♠X\u202e\n") * rng.randrange(100, 15_000)))
    if pick == 6:  # unknown fields, up to the limit: protobuf keeps them, the message sets no kind
        filler = pb.ConnectRequest()
        blob = bytes(rng.randrange(256) for _ in range(64)) * rng.randrange(1, (SIZE_LIMIT - 200) // 64)
        raw = b"\xfa\x3e" + _varint(len(blob)) + blob  # field 999, length-delimited
        filler.MergeFromString(raw)
        return "unknown fields", filler
    return "unknown request id", pb.ConnectRequest(call=pb.CallAnswer(request_id=rng.randrange(10**6, 10**7),
                                                                      call=rng.randrange(U32)))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def hello(version: str = "fuzz", name: str = "") -> pb.ConnectRequest:
    return pb.ConnectRequest(hello=pb.Hello(bot_name=name, bot_version=version, token=HOSTILE_TOKEN,
                                            protocol_version=1))


@dataclasses.dataclass
class Episode:
    """One hostile stream: what it sends first, how it answers requests, what its end must be."""

    name: str
    opening: list[tuple[str, object]]
    """Messages sent at once (before any Hello is answered)."""
    after_welcome: list[tuple[str, object]]
    answer: Answer
    expect: set[str]
    """The statuses this stream may end with."""
    linger_s: float = 0.2
    """Time to keep playing after what it had to send, before it half-closes."""
    wants_notices: int = 0
    """Notices it must get when it ends with OK."""


def episode(rng: random.Random, calm: bool = False) -> Episode:
    """A random hostile stream (or, ``calm``, a stream that plays the hostile bot's seats well)."""
    if calm:
        return Episode("calm", [("hello", hello())], [], honest, {"OK"}, linger_s=3600.0)
    pick = rng.choices(
        ["flood", "trickle", "garbage before hello", "garbage after hello", "answer before hello", "bad token",
         "bad protocol", "over the limit", "huge hello", "huge name", "seated crook"],
        weights=[40, 18, 4, 4, 4, 3, 3, 3, 3, 2, 16],
    )[0]
    wrong = {"OK", "ALREADY_EXISTS"}
    """What may also end a stream of the hostile bot: the tournament over, or its sessions all taken."""
    if pick == "flood":
        strays = [stray(rng) for _ in range(rng.randrange(101, 160))]
        return Episode(pick, [("hello", hello())], strays, crooked(rng), {"RESOURCE_EXHAUSTED", "ALREADY_EXISTS"},
                       linger_s=1.5)
    if pick == "trickle":
        # Fewer strays than the limit, then honest play: a crooked player's wrong kinds and duplicates are strays
        # too, and at several tables they can pass the limit by themselves, which is the flood's episode.
        strays = [stray(rng) for _ in range(rng.randrange(1, 30))]
        return Episode(pick, [("hello", hello())], strays, honest, wrong, wants_notices=1)
    if pick == "garbage before hello":
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000)))
        return Episode(pick, [("random bytes", data)], [], honest,
                       {"INVALID_ARGUMENT", "UNAUTHENTICATED", "FAILED_PRECONDITION"})
    if pick == "garbage after hello":
        data = b"\xff" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000)))
        return Episode(pick, [("hello", hello())], [("random bytes", data)], honest, {"INVALID_ARGUMENT"} | wrong)
    if pick == "answer before hello":
        early = pb.ConnectRequest(play=pb.PlayAnswer(request_id=rng.randrange(U64), card="AS"))
        return Episode(pick, [("answer before hello", early)], [], honest, {"INVALID_ARGUMENT"})
    if pick == "bad token":
        bad = pb.ConnectRequest(hello=pb.Hello(token="x" * rng.randrange(0, 40_000), protocol_version=1))
        return Episode(pick, [("bad token", bad)], [], honest, {"UNAUTHENTICATED"})
    if pick == "bad protocol":
        bad = pb.ConnectRequest(hello=pb.Hello(token=HOSTILE_TOKEN, protocol_version=rng.choice([0, 2, U32])))
        return Episode(pick, [("bad protocol version", bad)], [], honest, {"FAILED_PRECONDITION"})
    if pick == "over the limit":
        big = ("over the size limit",
               pb.ConnectRequest(play=pb.PlayAnswer(request_id=1, card="B" * (SIZE_LIMIT + rng.randrange(1, 10**5)))))
        if rng.random() < 0.5:
            return Episode(pick, [big], [], honest, {"RESOURCE_EXHAUSTED"})
        return Episode(pick, [("hello", hello())], [big], honest, {"RESOURCE_EXHAUSTED"} | wrong, linger_s=0.5)
    if pick == "huge hello":
        version = "V" * rng.randrange(1000, SIZE_LIMIT - 1000)
        # Then honest play: a crook's strays at several tables may pass the stray limit by themselves, which is
        # the flood's and the seated crook's episode, not this one's.
        return Episode(pick, [("huge hello", hello(version=version))], [stray(rng)], honest, wrong,
                       wants_notices=1)
    if pick == "huge name":  # the token of h, the name of another bot: refused, the name not echoed at length
        name = rng.choice("N\n\u202e") * rng.randrange(200, 20_000)
        return Episode(pick, [("huge name", hello(name=name))], [], honest, {"UNAUTHENTICATED"})
    # Seated at up to four tables, a crook's strays may come faster than the arena takes.
    return Episode(pick, [("hello", hello())], [], crooked(rng), {"RESOURCE_EXHAUSTED"} | wrong,
                   linger_s=rng.uniform(0.5, 2.0))


def play_episode(address: str, ep: Episode, result: FuzzResult, lock: threading.Lock, gone: threading.Event) -> str:
    """Runs one hostile stream to its end and judges how it ended; returns the status. A stream that
    could not connect finds the arena gone (``gone`` is set): the tournament is over."""
    with grpc.insecure_channel(address) as channel:
        stream = Stream(channel, result, lock)
        for kind, message in ep.opening:
            stream.send(kind, message)
        welcomed = False
        code, details = "OK", ""
        timer: threading.Timer | None = None
        if not any(kind in ("hello", "huge hello") for kind, _ in ep.opening):  # no welcome to wait for
            timer = threading.Timer(ep.linger_s, stream.close_sending)
            timer.daemon = True
            timer.start()
        try:
            for msg in stream.call:
                kind = msg.WhichOneof("kind")
                if kind == "welcome" and not welcomed:
                    welcomed = True
                    for k, m in ep.after_welcome:
                        stream.send(k, m)
                    timer = threading.Timer(ep.linger_s, stream.close_sending)
                    timer.daemon = True
                    timer.start()
                elif kind == "notice":
                    stream.note(msg.notice)
                elif not stream.stop.is_set():
                    ep.answer(stream, msg)
            code = stream.call.code().name
            details = stream.call.details() or ""
        except grpc.RpcError as err:
            code = err.code().name  # type: ignore[attr-defined]
            details = err.details() or ""  # type: ignore[attr-defined]
        finally:
            stream.stop.set()
            if timer is not None:
                timer.cancel()
    if code == "UNAVAILABLE" and "failed to connect" in details:
        gone.set()
        return code
    with lock:
        result.episodes[ep.name] += 1
        result.statuses[code] += 1
        result.samples.setdefault(code, details)
        problem = ""
        if code not in CLEAR:
            problem = f"{ep.name}: status {code}"
        elif code not in ep.expect:
            problem = f"{ep.name}: status {code}, expected one of {sorted(ep.expect)}"
        elif code != "OK" and (not details or "\n" in details or len(details) > LONGEST_TEXT
                               or any(t in details for t in PYTHON_TEXT)):
            problem = f"{ep.name}: status {code} with an unclear detail {details[:120]!r}"
        elif code == "OK" and ep.wants_notices and sum(stream.notices.values()) < ep.wants_notices:
            problem = f"{ep.name}: ended OK without the notices its strays should get"
        if problem:
            result.problems.append(f"{problem} ({details[:100]!r})")
    return code


def worker(address: str, rng: random.Random, budget: Budget, arena: Arena, result: FuzzResult,
           lock: threading.Lock) -> None:
    while arena.running and not arena.gone.is_set():
        ep = episode(rng)
        wanted = len(ep.opening) + len(ep.after_welcome)
        if budget.take(wanted) < wanted:
            return
        play_episode(address, ep, result, lock, arena.gone)


def keeper(address: str, budget: Budget, arena: Arena, result: FuzzResult, lock: threading.Lock) -> None:
    """Once the budget is spent, plays the hostile bot's seats calmly until the tournament ends."""
    while budget.left > 0 and arena.running and not arena.gone.is_set():
        time.sleep(0.1)
    rng = random.Random(0)
    while arena.running and not arena.gone.is_set():
        if play_episode(address, episode(rng, calm=True), result, lock, arena.gone) == "OK":
            return  # its stream ended with OK: the tournament is over


# -- the run -------------------------------------------------------------------------------------


def read_results(folder: Path, result: FuzzResult) -> None:
    lines = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()
    result.longest_record = max((len(line) for line in lines), default=0)
    games: dict[str, list[str]] = {}
    at: collections.Counter[tuple[str, int, int, object]] = collections.Counter()
    for record in (json.loads(line) for line in lines if line.strip()):
        seats = record["seats"]
        games[record["game"]] = seats
        for fault in record.get("faults", []):
            at[(record["game"], fault["seat"], fault["round"], fault["trick"])] += 1
            result.longest_detail = max(result.longest_detail, len(fault["detail"]))
            bot = seats[fault["seat"]]
            if bot == HOSTILE:
                result.hostile_faults[fault["kind"]] += 1
            elif fault["kind"] != "absent":
                result.honest_faults.append(f"{record['game']}: {bot} {fault['kind']}: {fault['detail'][:80]}")
    result.games_recorded = len(games)
    result.most_at_one_decision = max(at.values(), default=0)
    result.honest_games = sum(1 for players in games.values() if HOSTILE not in players)
    with contextlib.suppress(OSError, ValueError, KeyError):
        status = json.loads((folder / "status.json").read_text(encoding="utf-8"))
        result.games_planned = int(status["games_planned"])


def tell_progress(arena: Arena, budget: Budget, messages: int, result: FuzzResult) -> None:
    """A line on stderr every ten seconds: what is sent, and how far the tournament is."""
    while arena.running:
        time.sleep(10)
        with contextlib.suppress(OSError, ValueError, KeyError):
            status = json.loads((arena.results / "status.json").read_text(encoding="utf-8"))
            print(f"fuzz: {messages - budget.left:,} of {messages:,} hostile messages sent, "
                  f"{status['games_done']} of {status['games_planned']} games played", file=sys.stderr, flush=True)


def fuzz(folder: Path, messages: int, *, workers: int = 4, seed: int = 1, deal_sets: int | None = None,
         timeout: float = 3600.0, progress: bool = False) -> FuzzResult:
    """Sends ``messages`` hostile messages while a tournament runs; the whole run's account."""
    began = time.monotonic()
    result = FuzzResult()
    lock = threading.Lock()
    arena = Arena(folder, deal_sets or 1 + messages // 1000)
    try:
        arena.wait_listening()
        arena.start_honest_bots()
        budget = Budget(messages)
        threads = [threading.Thread(target=worker, args=(arena.address, random.Random(seed * 1000 + n), budget, arena,
                                                         result, lock), daemon=True) for n in range(workers)]
        threads.append(threading.Thread(target=keeper, args=(arena.address, budget, arena, result, lock), daemon=True))
        for thread in threads:
            thread.start()
        if progress:
            threading.Thread(target=tell_progress, args=(arena, budget, messages, result), daemon=True).start()
        result.arena_exit = arena.finish(max(1.0, timeout - (time.monotonic() - began)))
        for thread in threads:
            thread.join(30)
    finally:
        arena.kill()
    result.seconds = time.monotonic() - began
    err = arena.stderr()
    result.crashes = int(result.arena_exit != 0) + err.count("Traceback")
    result.log_lines = sum(1 for line in err.splitlines() if line.startswith("arena: "))
    result.peak_rss_kb = arena.peak_rss_kb
    result.session_faults = arena.session_faults
    if arena.longest_version > LONGEST_TEXT:
        result.problems.append(f"the live status showed a version of {arena.longest_version:,} characters")
    if budget.left > 0:
        result.problems.append(f"the tournament ended before the budget was spent: {budget.left:,} messages unsent")
    with contextlib.suppress(OSError):
        read_results(arena.results, result)
    if result.longest_detail > LONGEST_TEXT:
        result.problems.append(f"a fault detail of {result.longest_detail:,} characters in the records")
    if result.most_at_one_decision > MOST_FAULTS_AT_ONE_DECISION:
        result.problems.append(f"{result.most_at_one_decision} faults at one decision in the records")
    verify = subprocess.run([sys.executable, "-m", "arena", "verify", str(arena.results)], cwd=ROOT, env=arena.env,
                            capture_output=True, text=True, timeout=600, check=False)
    result.verify = (verify.returncode, (verify.stdout.strip().splitlines() or [verify.stderr.strip()])[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000, help="hostile messages to send (default 100000)")
    parser.add_argument("--workers", type=int, default=4, help="hostile streams at once (default 4)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--deal-sets", type=int, default=None,
                        help="the tournament's length (default: 1 + messages/1000)")
    parser.add_argument("--results", type=Path, default=None, help="keep the run here (default: a temporary folder)")
    args = parser.parse_args()
    if args.results is None:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
            result = fuzz(Path(tmp), args.messages, workers=args.workers, seed=args.seed, deal_sets=args.deal_sets,
                          progress=True)
            print(result.report())
    else:
        result = fuzz(args.results, args.messages, workers=args.workers, seed=args.seed, deal_sets=args.deal_sets,
                      progress=True)
        print(result.report())
    return 0 if not result.problems and not result.crashes and result.verify[0] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
