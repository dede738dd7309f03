"""Remote seats: a bot connected over gRPC, seen by the table as a :class:`~arena.players.Player`.

A :class:`Session` is one ``Connect`` stream after a welcomed ``Hello``. It numbers the requests
it sends, matches answers to them by ``request_id`` (so a bot can act only for the seats its
session holds), enforces each request's deadline, and turns whatever goes wrong into faults:
late answers, answers to unknown requests, answers of the wrong kind, malformed messages, and
the stream ending mid-game. A :class:`RemotePlayer` is one seat at one table, served by a session.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable

import grpc

from arena.core.faults import FaultKind, PlayerFault
from arena.net.wire import RequestEncoder, event_message
from arena.players.base import Decision, DecisionKind, TableEvent
from protocol import callbreak_pb2 as pb

__all__ = ["RemotePlayer", "Session"]

Writer = Callable[[pb.ConnectResponse], Awaitable[None]]


class _Pending:
    __slots__ = ("future", "kind", "sent", "table_id", "timer")

    def __init__(self, future: asyncio.Future[object], kind: DecisionKind, table_id: str) -> None:
        self.future = future
        self.kind = kind
        self.table_id = table_id
        self.sent = time.perf_counter()
        self.timer: asyncio.TimerHandle | None = None


class Session:
    """One connected, welcomed bot stream."""

    def __init__(
        self, session_id: str, bot: str, writer: Writer, rules_msg: pb.Rules, *, max_tables: int = 1,
        wants_events: bool = False,
    ) -> None:
        self.session_id = session_id
        self.bot = bot
        """The bot entry this session's token belongs to."""
        self.max_tables = max_tables
        self.wants_events = wants_events
        self.tables = 0
        """Seats currently held at tables."""
        self.rules_msg = rules_msg
        self._write = writer
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._expired: dict[int, None] = {}
        self._faults: list[tuple[FaultKind, str]] = []
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.handler: asyncio.Task[object] | None = None
        """The task serving this stream, cancelled to end it early."""
        self.kicked: tuple[grpc.StatusCode, str] | None = None
        """The status the stream ends with when the arena ends it (disqualification)."""

    async def send(self, msg: pb.ConnectResponse) -> None:
        """Writes one message; a closed stream is not an error here (the next request reports it)."""
        if self.closed.is_set():
            return
        try:
            async with self._lock:
                await self._write(msg)
        except Exception as err:  # the stream broke under us
            self.close(f"the connection broke while sending: {err}")

    async def request(self, decision: Decision, timeout_ms: int, encoder: RequestEncoder) -> tuple[object, float]:
        """Sends a request and waits for its answer; raises :class:`PlayerFault` if none comes in time."""
        if self.closed.is_set():
            raise PlayerFault(FaultKind.DISCONNECT, f"the bot is disconnected: {self.close_reason}")
        request_id = next(self._ids)
        loop = asyncio.get_running_loop()
        pending = _Pending(loop.create_future(), decision.kind, decision.table_id)
        self._pending[request_id] = pending
        if timeout_ms:
            pending.timer = loop.call_later(timeout_ms / 1000.0, self._expire, request_id)
        # The bot is told the deadline and the bank apart; the timer allows for both (``timeout_ms``).
        await self.send(encoder.request(decision, request_id, decision.deadline_ms))
        try:
            answer = await pending.future
        finally:
            if pending.timer is not None:
                pending.timer.cancel()
            self._pending.pop(request_id, None)
        return answer, (time.perf_counter() - pending.sent) * 1000.0

    def _expire(self, request_id: int) -> None:
        pending = self._pending.pop(request_id, None)
        self._expired[request_id] = None
        if len(self._expired) > 1024:  # remember only recent expiries
            del self._expired[next(iter(self._expired))]
        if pending is not None and not pending.future.done():
            waited = (time.perf_counter() - pending.sent) * 1000.0
            pending.future.set_exception(PlayerFault(
                FaultKind.LATE, f"no answer to request {request_id} within {waited:.0f} ms: the deadline passed"
            ))

    async def receive(self, msg: pb.ConnectRequest) -> None:
        """Handles one message from the bot after the handshake."""
        kind = msg.WhichOneof("kind")
        if kind in ("call", "play"):
            answer = msg.call if kind == "call" else msg.play
            pending = self._pending.get(answer.request_id)
            if pending is None and answer.request_id in self._expired:
                # Already recorded as late when the deadline passed; just tell the bot.
                await self.notice(pb.NOTICE_KIND_LATE_ANSWER, answer.request_id, "",
                                  f"request {answer.request_id} had already timed out: the fallback was played")
                return
            if pending is None or pending.future.done():
                detail = (
                    f"request {answer.request_id} is not open: it was never sent to this session, or it was "
                    "already answered or timed out"
                )
                self._faults.append((FaultKind.UNKNOWN_REQUEST, detail))
                await self.notice(pb.NOTICE_KIND_UNKNOWN_REQUEST_ID, answer.request_id, "", detail)
                return
            expected = "call" if pending.kind is DecisionKind.CALL else "play"
            if kind != expected:
                detail = f"request {answer.request_id} asks for a {expected}, but the answer is a {kind}"
                self._faults.append((FaultKind.OUT_OF_TURN, detail))
                await self.notice(pb.NOTICE_KIND_OUT_OF_TURN, answer.request_id, pending.table_id, detail)
                return
            pending.future.set_result(answer.call if kind == "call" else answer.card)
            return
        detail = "a second Hello" if kind == "hello" else "an empty message (no hello, call or play set)"
        self._faults.append((FaultKind.MALFORMED, f"the bot sent {detail}"))
        await self.notice(pb.NOTICE_KIND_MALFORMED_MESSAGE, 0, "", f"ignored {detail}")

    async def notice(self, kind: int, request_id: int, table_id: str, detail: str) -> None:
        """Sends a Notice to the bot."""
        await self.send(pb.ConnectResponse(
            notice=pb.Notice(kind=kind, request_id=request_id, table_id=table_id, detail=detail)
        ))

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        """The stream-level faults seen since the last call."""
        faults, self._faults = self._faults, []
        return faults

    def kick(self, code: grpc.StatusCode, detail: str) -> None:
        """Ends the stream from the arena's side with ``code``; open requests fail as disconnects."""
        self.kicked = (code, detail)
        self.close(detail)
        if self.handler is not None:
            self.handler.cancel()

    def close(self, reason: str) -> None:
        """Marks the stream ended: every open request fails as a disconnect."""
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(PlayerFault(FaultKind.DISCONNECT, f"the bot disconnected: {reason}"))
        self._pending.clear()


class RemotePlayer:
    """One seat at one table, played by a remote bot's session."""

    def __init__(self, session: Session, name: str | None = None) -> None:
        self.session = session
        self.name = name or session.bot
        self.wants_events = session.wants_events
        self.encoder = RequestEncoder(session.rules_msg)

    async def decide(self, decision: Decision) -> tuple[object, float]:
        timeout = decision.deadline_ms + decision.time_bank_ms if decision.deadline_ms else 0
        return await self.session.request(decision, timeout, self.encoder)

    async def notify(self, event: TableEvent) -> None:
        await self.session.send(event_message(event))

    async def refused(self, decision: Decision, reason: str) -> None:
        await self.session.notice(
            pb.NOTICE_KIND_ILLEGAL_ANSWER, self.encoder.last_request_id, decision.table_id, reason
        )

    async def fallback(self, decision: Decision, detail: str) -> None:
        await self.session.notice(
            pb.NOTICE_KIND_FALLBACK_PLAYED, self.encoder.last_request_id, decision.table_id, detail
        )

    def drain_faults(self) -> list[tuple[FaultKind, str]]:
        return self.session.drain_faults()
