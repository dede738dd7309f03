"""One bot's stream to the arena: a :class:`Session` numbers requests, times them, and turns trouble into faults.

A :class:`Session` is one ``Connect`` stream after a welcomed ``Hello``. It numbers the requests
it sends, matches answers to them by ``request_id`` (so a bot can act only for the seats its
session holds), enforces each request's deadline, and turns whatever goes wrong into faults:
late answers, answers to unknown requests, answers of the wrong kind, malformed messages. A
``BotError`` in place of an answer (the bot's code raised: the arena says it reads them in its
Welcome) settles the open request at once as a ``crash`` fault, whose detail names the exception,
its message and the file and line the bot gave (:func:`~arena.players.local.crash_detail`); the
table plays the fallback for that decision only.

A message the arena cannot use (an answer to a request that is not open, a duplicate answer, an answer of the
wrong kind, an empty message, a second Hello) is a *stray*. Each one is a fault of the session (counted in
:attr:`Session.fault_counts`, shown in the live status), gets a notice, and is told to the organiser's log by
a :class:`~arena.transports.grpc.strays.StrayLog`, at most one line a second for the whole arena. More than
:data:`~arena.transports.grpc.strays.STRAY_LIMIT` strays within
:data:`~arena.transports.grpc.strays.STRAY_WINDOW_S` seconds is a *flood*: a ``flood`` fault, a notice, and
the stream ends with ``RESOURCE_EXHAUSTED``. A session keeps at most
:data:`~arena.transports.grpc.strays.HELD_FAULTS` faults in detail until a table records them at the bot's
next decision (the rest only counted, :class:`~arena.transports.grpc.strays.HeldFaults`); those of a session
without a seat, or that ended, wait in the lobby for the bot's next decision at any table, so they count
toward its disqualification like any other fault. Text the bot wrote reaches a detail only through
:func:`~arena.core.faults.shown`, cut to a few dozen characters.

Sending never blocks a table. Messages go to a bounded outbox that one writer task drains into the
stream; the deadline of a request runs from the moment it is queued, whatever the transport does,
except while the arena's own process stands still (:mod:`arena.players.pauses`).
One alarm per session watches the deadlines of its open requests (rather than a timer per request).
A session is judged *stalled* and dropped when its outbox overflows (:data:`OUTBOX_LIMIT`), when
one write has waited :data:`WRITE_STALL_S` seconds for the bot to read, or when it has left
``unresponsive_after`` requests in a row unanswered and sent nothing for as many deadlines.

When the arena ends a stream (:meth:`Session.kick`), it first writes what is queued, then waits up
to :data:`END_WAIT_S` for the bot to stop writing (:data:`END_QUIET_S` without a message) before
the status goes out: a gRPC library whose write is in flight as the stream ends may report its own
write's failure instead of the status (Python's ``grpc.aio`` reports ``INTERNAL``).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import math
import time
from collections.abc import Awaitable, Callable
from typing import TypeAlias

import grpc

from arena.core.faults import FaultKind, PlayerFault
from arena.errors import ArenaError
from arena.players.base import Decision, DecisionKind
from arena.players.local import crash_detail
from arena.players.pauses import paused_s
from arena.transports.grpc.encoder import RequestEncoder
from arena.transports.grpc.strays import STRAY_LIMIT, STRAY_WINDOW_S, Faults, HeldFaults, StrayLog
from protocol import callbreak_pb2 as pb

__all__ = [
    "END_QUIET_S", "END_WAIT_S", "OUTBOX_LIMIT", "WRITE_STALL_S", "Outgoing", "Session", "SessionClosed", "Writer",
]

Outgoing: TypeAlias = "pb.ConnectResponse | bytes"
"""A message to a bot: a message object, or one already serialized (requests and events)."""
Writer = Callable[[Outgoing], Awaitable[None]]

OUTBOX_LIMIT = 10_000
"""Messages waiting to be written to one bot; past this the bot is not reading: it is stalled."""
WRITE_STALL_S = 10.0
"""Seconds one write may wait for the bot to read before the session is judged stalled."""
END_QUIET_S = 0.2
"""A stream the arena ends gets its status once the bot has sent nothing for this long since the last
message queued for it was written..."""
END_WAIT_S = 1.0
"""... or, from a bot that keeps writing, after this long anyway."""

_ANSWERS = {"call": DecisionKind.CALL, "play": DecisionKind.PLAY}
"""The decision each kind of answer is for."""


class SessionClosed(ArenaError):
    """The session ended while a request was open (the seat may wait for the bot to come back)."""


class _Pending:
    __slots__ = ("deadline", "future", "kind", "paused", "sent", "table_id", "timeout")

    def __init__(
        self, future: asyncio.Future[object], kind: DecisionKind, table_id: str, timeout: float, deadline: float,
    ) -> None:
        self.future = future
        self.kind = kind
        self.table_id = table_id
        self.timeout = timeout
        self.deadline = deadline
        """``loop.time()`` when it is late (infinity: never), the arena's pauses since it was sent aside."""
        self.sent = time.perf_counter()
        self.paused = paused_s()
        """The arena's pauses so far when it was sent: those that follow extend its deadline."""


class Session:
    """One connected, welcomed bot stream."""

    def __init__(
        self, session_id: str, bot: str, writer: Writer, rules_msg: pb.Rules, *, max_tables: int = 1,
        wants_events: bool = False, version: str = "", unresponsive_after: int = 3,
        on_close: Callable[[Session], None] | None = None, stray_log: StrayLog | None = None,
    ) -> None:
        self.session_id = session_id
        self.bot = bot
        """The bot entry this session's token belongs to."""
        self.version = version
        """The bot's own version, from its Hello."""
        self.max_tables = max_tables
        self.wants_events = wants_events
        self.tables = 0
        """Seats currently held at tables."""
        self.rules_msg = rules_msg
        self.unresponsive_after = unresponsive_after
        self.connected_at = time.time()
        self.closed_at = 0.0
        """``time.monotonic()`` when the stream ended."""
        self._write = writer
        self._outbox: collections.deque[Outgoing] = collections.deque()
        self._idle: asyncio.Future[None] | None = None
        """What the writer waits on while the outbox is empty."""
        self._writing_since: float | None = None
        self._writer: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._expired: dict[int, None] = {}
        self._alarm: asyncio.TimerHandle | None = None
        self._alarm_at = math.inf
        """When the alarm rings (``loop.time()``): never later than the earliest open deadline."""
        self.faults = HeldFaults()
        """The stream-level faults not yet recorded by a table."""
        self.fault_counts: dict[str, int] = {}
        """Every stream-level fault of the session, by kind (``unknown_request``, ``flood``, ...)."""
        self._strays: collections.deque[float] = collections.deque(maxlen=STRAY_LIMIT + 1)
        """When the last strays came (``time.monotonic()``)."""
        self._stray_log = stray_log
        self._heard = time.perf_counter()
        self._silent_lates = 0
        self._on_close = on_close
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.stalled = False
        """True when the arena dropped the session because the bot stopped reading or answering."""
        self.handler: asyncio.Task[object] | None = None
        """The task serving this stream."""
        self.kicked: tuple[grpc.StatusCode, str] | None = None
        """The status the stream ends with when the arena ends it."""
        self.ended = asyncio.Event()
        """Set when the stream the arena ends may be given its status: what was queued is written, and
        the bot has gone quiet (or would not)."""

    # -- sending -------------------------------------------------------------------------------

    def start(self) -> None:
        """Starts the writer task (on the running loop)."""
        self._writer = asyncio.get_running_loop().create_task(self._drain())

    def send(self, msg: Outgoing) -> None:
        """Queues one message; never blocks. A closed session drops it; a full outbox stalls the session."""
        if self.closed.is_set():
            return
        if len(self._outbox) >= OUTBOX_LIMIT:
            self.stall(f"{OUTBOX_LIMIT} messages were waiting for it: it stopped reading its stream")
            return
        self._outbox.append(msg)
        self._wake_writer()

    def _wake_writer(self) -> None:
        idle = self._idle
        if idle is not None:
            self._idle = None
            if not idle.done():
                idle.set_result(None)

    async def _drain(self) -> None:
        outbox = self._outbox
        loop = asyncio.get_running_loop()
        while True:
            if not outbox:
                if self.closed.is_set():
                    return
                idle = self._idle = loop.create_future()
                await idle
                continue
            msg = outbox.popleft()
            self._writing_since = time.monotonic()
            try:
                await self._write(msg)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # the stream broke under us
                self.close(f"the connection broke while sending: {err}")
                return
            self._writing_since = None

    def check_stall(self, now: float) -> None:
        """Called about once a second: a write waiting too long means the bot stopped reading."""
        since = self._writing_since
        if since is not None and now - since > WRITE_STALL_S and not self.closed.is_set():
            self.stall(f"a message waited {now - since:.0f} s for it to read: it stopped reading its stream")

    def stall(self, why: str) -> None:
        """Drops a session that stopped reading or answering, recording a ``stalled`` fault."""
        if self.closed.is_set():
            return
        detail = f"the arena dropped the connection: {why}"
        self.fault(FaultKind.STALLED, detail)
        self.stalled = True
        self.kick(grpc.StatusCode.UNAVAILABLE, detail)

    # -- requests ------------------------------------------------------------------------------

    async def request(
        self, decision: Decision, timeout_ms: int, encoder: RequestEncoder, spent_ms: float = 0.0,
    ) -> tuple[object, float]:
        """Sends a request and waits for its answer; ``spent_ms`` of its deadline went by on an
        earlier stream (the request tells the bot what is left).

        Raises :class:`PlayerFault` (late) when none comes in time, and :class:`SessionClosed` when
        the session ends first.
        """
        if self.closed.is_set():
            raise SessionClosed(self.close_reason)
        request_id = next(self._ids)
        loop = asyncio.get_running_loop()
        timeout = timeout_ms / 1000.0
        late = loop.time() + timeout if timeout_ms else math.inf
        pending = _Pending(loop.create_future(), decision.kind, decision.table_id, timeout, late)
        self._pending[request_id] = pending
        if late < self._alarm_at:
            self._set_alarm(loop, late)
        # The bot is told the deadline and the bank apart; the alarm allows for both (``timeout_ms``).
        deadline = max(1, round(decision.deadline_ms - spent_ms)) if decision.deadline_ms else 0
        self.send(encoder.request(decision, request_id, deadline))
        try:
            answer = await pending.future
        finally:
            self._pending.pop(request_id, None)
        return answer, (time.perf_counter() - pending.sent) * 1000.0

    # One alarm per session, not one timer per request: a request answered in time leaves the alarm
    # as it is, and the alarm, when it rings, expires what is late and sets itself for the next
    # deadline still open. With the usual fixed deadline it rings about once a deadline, whatever
    # the number of requests.

    def _set_alarm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._alarm is not None:
            self._alarm.cancel()
        self._alarm_at = when
        self._alarm = loop.call_at(when, self._ring)

    def _ring(self) -> None:
        self._alarm, self._alarm_at = None, math.inf
        loop = asyncio.get_running_loop()
        now = loop.time() + 1e-6  # the loop runs a timer up to its clock's resolution early
        paused = paused_s()
        nearest = math.inf
        for request_id, pending in list(self._pending.items()):
            due = pending.deadline + (paused - pending.paused)
            if due <= now:
                self._expire(request_id)
            elif due < nearest:
                nearest = due
        if nearest < math.inf and not self.closed.is_set():
            self._set_alarm(loop, nearest)

    def _expire(self, request_id: int) -> None:
        pending = self._pending.pop(request_id, None)
        self._expired[request_id] = None  # its first late answer is told so, not counted as a stray
        if len(self._expired) > 1024:  # remember only recent expiries
            del self._expired[next(iter(self._expired))]
        if pending is None or pending.future.done():
            return
        now = time.perf_counter()
        waited = (now - pending.sent) * 1000.0
        pending.future.set_exception(PlayerFault(
            FaultKind.LATE, f"no answer to request {request_id} within {waited:.0f} ms: the deadline passed"
        ))
        if self._heard < pending.sent:  # nothing at all from the bot since the request went out
            self._silent_lates += 1
            limit = self.unresponsive_after
            if limit and self._silent_lates >= limit and now - self._heard >= limit * pending.timeout:
                self.stall(f"it left {self._silent_lates} requests in a row unanswered and sent nothing "
                           f"for {now - self._heard:.0f} s")

    def receive(self, msg: pb.ConnectRequest) -> None:
        """Handles one message from the bot after the handshake."""
        self._heard = time.perf_counter()
        if self.closed.is_set():  # the stream is ending: what the bot still sends is not looked at
            return
        self._silent_lates = 0
        kind = msg.WhichOneof("kind")
        if kind == "play" or kind == "call" or kind == "error":
            answer = msg.play if kind == "play" else msg.call if kind == "call" else msg.error
            request_id = answer.request_id
            pending = self._pending.get(request_id)
            if pending is not None and pending.kind is _ANSWERS.get(kind) and not pending.future.done():  # the usual
                pending.future.set_result(answer.card if kind == "play" else answer.call)
                return
            if kind == "error" and pending is not None and not pending.future.done():  # for a call or a play
                error = msg.error
                pending.future.set_exception(PlayerFault(FaultKind.CRASH, crash_detail(
                    error.error_type, error.message, error.file, error.line)))
                return
            if pending is None and request_id in self._expired:
                # Already recorded as late when the deadline passed; just tell the bot (once: a second
                # answer to it is a duplicate).
                del self._expired[request_id]
                self.notice(pb.NOTICE_KIND_LATE_ANSWER, request_id, "",
                            f"request {request_id} had already timed out: the fallback was played")
                return
            if pending is None or pending.future.done():
                why = ("this session holds no seat" if self.tables == 0 and not self._pending else
                       "it was never sent to this session, or it was already answered or timed out")
                self.stray(FaultKind.UNKNOWN_REQUEST, pb.NOTICE_KIND_UNKNOWN_REQUEST_ID, request_id, "",
                           f"request {request_id} is not open: {why}")
                return
            expected = "call" if pending.kind is DecisionKind.CALL else "play"
            if kind != expected:
                self.stray(FaultKind.OUT_OF_TURN, pb.NOTICE_KIND_OUT_OF_TURN, request_id, pending.table_id,
                           f"request {request_id} asks for a {expected}, but the answer is a {kind}")
                return
            pending.future.set_result(answer.call if kind == "call" else answer.card)
            return
        what = "a second Hello" if kind == "hello" else "an empty message (no hello, call, play or error set)"
        self.stray(FaultKind.MALFORMED, pb.NOTICE_KIND_MALFORMED_MESSAGE, 0, "", f"the bot sent {what}",
                   f"ignored {what}")

    def fault(self, kind: FaultKind, detail: str) -> None:
        """Records a stream-level fault of this session."""
        self.fault_counts[kind.value] = self.fault_counts.get(kind.value, 0) + 1
        self.faults.add(kind, detail)

    def stray(self, kind: FaultKind, notice: int, request_id: int, table_id: str, detail: str,
              told: str | None = None) -> None:
        """A message the arena cannot use: a fault, a notice (``told``, or the detail), a line in the
        log; past :data:`STRAY_LIMIT` in :data:`STRAY_WINDOW_S` seconds, the end of the stream."""
        self.fault(kind, detail)
        now = time.monotonic()
        strays = self._strays
        strays.append(now)
        if len(strays) == strays.maxlen and now - strays[0] <= STRAY_WINDOW_S:
            self.flood(now - strays[0])
            return
        self.notice(notice, request_id, table_id, told or detail)
        if self._stray_log is not None:
            self._stray_log.note(self, detail)

    def flood(self, seconds: float) -> None:
        """Ends the stream of a bot that sent too many strays: a ``flood`` fault, a notice, RESOURCE_EXHAUSTED."""
        detail = (f"the arena closed the stream: {STRAY_LIMIT + 1} stray messages in {seconds:.1f} s, more than the "
                  f"{STRAY_LIMIT} in {STRAY_WINDOW_S:g} s it takes (answers to requests that are not open, duplicate "
                  "answers, answers of the wrong kind, malformed messages)")
        self.fault(FaultKind.FLOOD, detail)
        self.notice(pb.NOTICE_KIND_FLOOD, 0, "", detail)
        if self._stray_log is not None:
            self._stray_log.note(self, detail, flood=True)
        self.kick(grpc.StatusCode.RESOURCE_EXHAUSTED, detail)

    def notice(self, kind: int, request_id: int, table_id: str, detail: str) -> None:
        """Queues a Notice to the bot."""
        self.send(pb.ConnectResponse(
            notice=pb.Notice(kind=kind, request_id=request_id, table_id=table_id, detail=detail)
        ))

    def drain_faults(self) -> Faults:
        """The stream-level faults seen since the last call."""
        return self.faults.take()

    # -- ending --------------------------------------------------------------------------------

    def kick(self, code: grpc.StatusCode, detail: str) -> None:
        """Ends the stream from the arena's side with ``code``, once what is queued (a last notice, the
        last events) has been written, or as soon as a second goes by with the bot reading nothing."""
        if self.kicked is not None:
            return
        self.kicked = (code, detail)
        self.close(detail, drain=True)
        asyncio.get_running_loop().create_task(self._end_after_drain())

    async def _end_after_drain(self) -> None:
        writer = self._writer
        if writer is not None:
            left = len(self._outbox) + 1
            # Wait while the bot keeps reading what is queued; give up on one that stopped.
            while not writer.done() and len(self._outbox) < left:
                left = len(self._outbox)
                await asyncio.wait({writer}, timeout=1.0)
            writer.cancel()
        # The status goes out while the bot is not writing (see the module docstring): the bot may write
        # what it had ready when it reads the last notice, so the quiet counts from then at the earliest.
        # One that keeps writing gets the status after END_WAIT_S anyway.
        written = time.perf_counter()
        give_up = written + END_WAIT_S
        while (quiet := time.perf_counter() - max(self._heard, written)) < END_QUIET_S and (
                time.perf_counter() < give_up):
            await asyncio.sleep(END_QUIET_S - quiet)
        self.ended.set()

    def close(self, reason: str, *, drain: bool = False) -> None:
        """Marks the stream ended, at once: open requests fail, and the lobby forgets the session.
        With ``drain``, what is already queued is still written (see :meth:`kick`)."""
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed_at = time.monotonic()
        self.closed.set()
        self._wake_writer()
        if self._alarm is not None:
            self._alarm.cancel()
            self._alarm, self._alarm_at = None, math.inf
        if not drain:
            self._outbox.clear()
            if self._writer is not None and self._writer is not asyncio.current_task():
                self._writer.cancel()
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(SessionClosed(reason))
        self._pending.clear()
        if self._on_close is not None:
            self._on_close(self)
