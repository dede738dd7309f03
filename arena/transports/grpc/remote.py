"""Remote seats: a bot connected over gRPC, seen by the table as a :class:`~arena.players.base.Player`.

A :class:`RemotePlayer` is one seat of one bot at one table. When the session under it ends, the
seat waits up to the reconnect grace for the same bot to come back on a new stream; the open
request is then sent again there, with a new request id, the full view and a fresh deadline, so a
stateless bot loses nothing (a bot that follows events first gets the events of the game so far).
Only when the grace runs out does the seat fall back for the rest of the game.

The seat's bot talks to the arena through a :class:`~arena.transports.grpc.session.Session`; what the seat asks of
the lobby that holds the sessions is the :class:`Lobby` protocol.
"""

from __future__ import annotations

import contextlib
import time
from typing import Protocol

from arena.core.faults import FaultKind, PlayerFault
from arena.players.base import Decision, GameStart, TableEvent
from arena.transports.grpc.encoder import RequestEncoder
from arena.transports.grpc.session import Session, SessionClosed
from arena.transports.grpc.strays import Faults, HeldFaults
from protocol import callbreak_pb2 as pb

__all__ = ["Lobby", "RemotePlayer"]


class Lobby(Protocol):
    """What a remote seat asks of the arena's lobby (:class:`arena.transports.grpc.lobby.Lobby` is the
    one): whether its bot is barred, a session of its bot to come back to, where to give its table back,
    and the faults of the bot's other streams. A protocol, so this module need not import the server that imports it."""

    def is_barred(self, key: str) -> bool: ...
    def barred_detail(self, key: str) -> str: ...
    async def claim(self, bot: str, timeout: float | None = None) -> Session: ...
    async def release(self, session: Session) -> None: ...
    def take_faults(self, key: str, into: HeldFaults) -> None: ...


class RemotePlayer:
    """One seat at one table, played by a remote bot; it survives the bot reconnecting within the grace."""

    def __init__(self, session: Session, name: str | None = None, *, lobby: Lobby | None = None,
                 grace_s: float = 0.0) -> None:
        self.session = session
        self.bot = session.bot
        self.name = name or session.bot
        self.version = session.version
        self.wants_events = session.wants_events
        self.encoder = RequestEncoder(session.rules_msg)
        self.lobby = lobby
        self.grace_s = grace_s
        self._history: list[TableEvent] = []
        """The events of the game so far, sent again to a new stream after a reconnect."""
        self._faults: Faults = []
        self._faults_seen = -1
        """:attr:`HeldFaults.added` when this seat last took its faults."""
        self._released = False
        self._away_since: float | None = None
        """``time.monotonic()`` of the first drop since the bot's last answer here: the grace runs from it."""

    async def decide(self, decision: Decision) -> tuple[object, float]:
        timeout = decision.deadline_ms + decision.time_bank_ms if decision.deadline_ms else 0
        spent = 0.0
        """Milliseconds this decision's requests were open on the bot's streams: the time away does not count."""
        while True:
            session = self.session
            if session.closed.is_set():
                session = await self._come_back(session)
            left = max(1, round(timeout - spent)) if timeout else 0
            opened = time.perf_counter()
            try:
                answer, elapsed = await session.request(decision, left, self.encoder, spent)
            except SessionClosed:
                # Ask again on the bot's new stream, with what is left of the deadline: a bot that
                # drops and comes back at every request cannot hold its table for ever.
                spent += (time.perf_counter() - opened) * 1000.0
                if timeout and spent >= timeout:
                    raise PlayerFault(FaultKind.LATE, f"no answer within {spent:.0f} ms over its connections: "
                                                      "the deadline passed") from None
                continue
            self._away_since = None
            return answer, spent + elapsed

    async def _come_back(self, old: Session) -> Session:
        """The bot's new session, if it comes back within the grace (counted from the first drop since
        its last answer); else the seat is gone."""
        faults = old.drain_faults()
        lobby = self.lobby
        if lobby is not None and lobby.is_barred(self.bot):  # disqualified or withdrawn: no coming back
            self._faults.extend(faults)
            raise PlayerFault(FaultKind.ABSENT, lobby.barred_detail(self.bot))
        if self._away_since is None:
            self._away_since = old.closed_at
        self._faults.extend(faults)  # a stall, if that is why the stream ended, is among them
        left = self.grace_s - (time.monotonic() - self._away_since)
        session = None
        if lobby is not None and self.grace_s > 0:
            await self._release(old)
            with contextlib.suppress(TimeoutError):
                session = await lobby.claim(self.bot, max(0.0, left))
        if session is None:
            why = old.close_reason
            raise PlayerFault(FaultKind.DISCONNECT, f"{why}; the bot did not come back within {self.grace_s:g} s"
                              if self.grace_s > 0 else f"the bot is gone: {why}")
        self.session = session
        self._released = False
        self.version = session.version or self.version
        self.encoder = RequestEncoder(session.rules_msg)
        if self.wants_events and session.wants_events:
            for event in self._history:
                session.send(self.encoder.event(event))
        return session

    async def notify(self, event: TableEvent) -> None:
        if isinstance(event.body, GameStart):
            self._history.clear()
        self._history.append(event)
        session = self.session
        if session.wants_events:  # a bot that came back without asking for events is sent none
            session.send(self.encoder.event(event))

    async def refused(self, decision: Decision, reason: str) -> None:
        self.session.notice(pb.NOTICE_KIND_ILLEGAL_ANSWER, self.encoder.last_request_id, decision.table_id, reason)

    async def fallback(self, decision: Decision, detail: str) -> None:
        self.session.notice(pb.NOTICE_KIND_FALLBACK_PLAYED, self.encoder.last_request_id, decision.table_id, detail)

    def drain_faults(self) -> Faults:
        if not self._faults and HeldFaults.added == self._faults_seen:
            return []  # the usual case, asked at every decision: no fault held anywhere since the last look
        faults, self._faults = self._faults, []
        held = self.session.faults
        if self.lobby is not None:  # with the strays of the bot's streams that hold no seat, or have ended
            held = HeldFaults()
            held.merge(self.session.faults)
            self.lobby.take_faults(self.bot, held)
        self._faults_seen = HeldFaults.added  # (moving faults into ``held`` counted too)
        return faults + held.take()  # at most HELD_FAULTS in detail at one decision, whatever the sources

    async def close(self) -> None:
        """Gives the table slot back to the session (once)."""
        await self._release(self.session)

    async def _release(self, session: Session) -> None:
        if not self._released and self.lobby is not None:
            self._released = True
            await self.lobby.release(session)
