"""The lobby of the arena server: the connected sessions, by bot, the seats they hold, and who is barred."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from arena.transports.grpc.session import Session
from arena.transports.grpc.strays import HeldFaults

__all__ = ["Lobby"]


class Lobby:
    """The connected sessions, by bot, the seats they hold, and who is barred.

    Everything here is synchronous and runs on the event loop; watchers (:meth:`watch`) are
    called after every change, so a dispatcher can start games as soon as a bot comes back.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, list[Session]] = {}
        self.count = 0
        """Sessions in the lobby: those whose streams are open (a session leaves as its stream ends)."""
        self.barred: dict[str, tuple[int, str]] = {}
        """Bot -> (refusal reason, detail): disqualified or withdrawn bots, refused at Hello."""
        self.last_seen: dict[str, float] = {}
        """Bot -> ``time.monotonic()`` when its last session ended."""
        self.unclaimed: dict[str, HeldFaults] = {}
        """Session key -> stream-level faults of its ended sessions that no table has recorded yet."""
        self._changed = asyncio.Event()
        self._watchers: list[Callable[[], None]] = []

    def watch(self, callback: Callable[[], None]) -> None:
        """Calls ``callback`` after every change of sessions or free seats."""
        self._watchers.append(callback)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
        for callback in self._watchers:
            callback()

    def add(self, session: Session) -> None:
        self.sessions.setdefault(session.bot, []).append(session)
        self.count += 1
        self._notify()

    def remove(self, session: Session) -> None:
        """Forgets a session at once (its stream ended, in whatever state)."""
        live = self.sessions.get(session.bot, [])
        if session in live:
            live.remove(session)
            self.count -= 1
            self.last_seen[session.bot] = time.monotonic()
            if session.faults:
                self.unclaimed.setdefault(session.bot, HeldFaults()).merge(session.faults)
            self._notify()

    def take_faults(self, key: str, into: HeldFaults) -> None:
        """Moves into ``into`` the stream-level faults of the sessions of ``key`` that hold no seat or have
        ended, for a table to record at the bot's decision: they count toward its disqualification."""
        held = self.unclaimed.pop(key, None)
        if held:
            into.merge(held)
        for session in self.sessions.get(key, ()):
            if session.tables == 0 and session.faults:
                into.merge(session.faults)

    def is_barred(self, key: str) -> bool:
        """True when the bot of a session key (``bot``, or ``bot@game`` for a process launched for one
        game) is disqualified or withdrawn."""
        return key in self.barred or key.split("@", 1)[0] in self.barred

    def barred_detail(self, key: str) -> str:
        """Why the bot of ``key`` is barred."""
        return self.barred.get(key, self.barred.get(key.split("@", 1)[0], (0, "")))[1]

    def live(self, bot: str) -> list[Session]:
        """The open sessions of a bot."""
        return [s for s in self.sessions.get(bot, []) if not s.closed.is_set()]

    def all_live(self) -> list[Session]:
        """Every open session."""
        return [s for sessions in self.sessions.values() for s in sessions if not s.closed.is_set()]

    def present(self, bot: str) -> bool:
        """True when the bot has an open session."""
        return any(not s.closed.is_set() for s in self.sessions.get(bot, ()))

    def free_tables(self, bot: str) -> int:
        """Seats the bot's open sessions can still take."""
        return sum(max(0, s.max_tables - s.tables) for s in self.live(bot))

    def try_claim(self, bot: str) -> Session | None:
        """Takes one table of an open session of ``bot`` with room, or ``None``."""
        for session in self.live(bot):
            if session.tables < session.max_tables:
                session.tables += 1
                return session
        return None

    async def claim(self, bot: str, timeout: float | None = None) -> Session:
        """Waits up to ``timeout`` s for an open session of ``bot`` with a free table and takes one table."""
        loop = asyncio.get_running_loop()
        end = None if timeout is None else loop.time() + timeout
        while True:
            session = self.try_claim(bot)
            if session is not None:
                return session
            left = None if end is None else end - loop.time()
            if left is not None and left <= 0:
                raise TimeoutError(f"{bot} has no free seat")
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                continue

    def give_back(self, session: Session) -> None:
        """Returns one table of ``session``."""
        session.tables = max(0, session.tables - 1)
        self._notify()

    async def release(self, session: Session) -> None:
        """:meth:`give_back`, for callers that await."""
        self.give_back(session)
