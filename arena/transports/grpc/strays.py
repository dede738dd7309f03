"""What a session does with the messages it cannot use: the faults held until a table records them, and
the organiser's log of stray messages, one line a second at most for the whole arena."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import ClassVar, Protocol

from arena.core.faults import FaultKind

__all__ = ["HELD_FAULTS", "LOG_EVERY_S", "STRAY_LIMIT", "STRAY_WINDOW_S", "Faults", "HeldFaults", "StrayLog"]

STRAY_LIMIT = 100
"""Stray messages a session may send within :data:`STRAY_WINDOW_S` seconds; one more is a flood."""
STRAY_WINDOW_S = 10.0
"""The window, in seconds, in which :data:`STRAY_LIMIT` strays are counted."""
HELD_FAULTS = 10
"""Stream-level faults kept in detail until a table records them; past this they are only counted."""
LOG_EVERY_S = 1.0
"""The shortest time between two lines about stray messages in the organiser's log."""

_LOG = logging.getLogger("arena.transports.grpc")
Faults = list[tuple[FaultKind, str]]


class Sender(Protocol):
    """Whose stray messages are told: a session, named by its id and its bot."""

    @property
    def session_id(self) -> str: ...
    @property
    def bot(self) -> str: ...


class HeldFaults:
    """Stream-level faults waiting for a table to record them: the first :data:`HELD_FAULTS` in detail,
    the rest only counted by kind, so a bot that floods fills neither the arena's memory nor the records."""

    __slots__ = ("_items", "_more")

    added: ClassVar[int] = 0
    """Faults held so far by all of them: a seat that saw no change since it last looked has none waiting."""

    def __init__(self) -> None:
        self._items: Faults = []
        self._more: dict[FaultKind, int] = {}

    def __bool__(self) -> bool:
        return bool(self._items or self._more)

    def add(self, kind: FaultKind, detail: str) -> None:
        HeldFaults.added += 1
        if len(self._items) < HELD_FAULTS:
            self._items.append((kind, detail))
        else:
            self._more[kind] = self._more.get(kind, 0) + 1

    def merge(self, other: HeldFaults) -> None:
        """Takes every fault of ``other``."""
        for kind, detail in other._items:
            self.add(kind, detail)
        for kind, count in other._more.items():
            HeldFaults.added += 1
            self._more[kind] = self._more.get(kind, 0) + count
        other._items, other._more = [], {}

    def take(self) -> Faults:
        """The faults held, and one line for each kind of those only counted; then none are held."""
        if not self._items and not self._more:
            return []
        faults = self._items + [(kind, f"{count:,} more {kind.value} faults on this bot's streams, not recorded "
                                       "one by one") for kind, count in self._more.items()]
        self._items, self._more = [], {}
        return faults


class StrayLog:
    """Stray messages in the organiser's log: at most one line every :data:`LOG_EVERY_S` seconds for the
    whole arena, each line summing up the sessions heard from since the line before."""

    def __init__(self, logger: logging.Logger = _LOG, every_s: float = LOG_EVERY_S) -> None:
        self.logger = logger
        self.every_s = every_s
        self._last = -math.inf
        self._flush: asyncio.TimerHandle | None = None
        self._strays: dict[str, int] = {}
        """``session (bot ...)`` -> its strays since the last line."""
        self._floods: list[str] = []
        """The sessions whose streams ended for flooding since the last line."""
        self._last_detail = ""

    def note(self, session: Sender, detail: str, *, flood: bool = False) -> None:
        """One stray message of ``session`` (or, with ``flood``, its stream ended for flooding)."""
        who = f"{session.session_id} (bot {session.bot})"
        if flood:
            self._floods.append(who)
        else:
            self._strays[who] = self._strays.get(who, 0) + 1
            self._last_detail = detail
        wait = self._last + self.every_s - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self._flush is None:  # what comes in the meantime is told in one line when the second is up
            self._flush = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        """Writes the line of what is untold, if anything."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if not self._strays and not self._floods:
            return
        self._last = time.monotonic()
        parts = []
        if self._strays:
            told = [f"{count} from {who}" for who, count in list(self._strays.items())[:5]]
            if len(self._strays) > 5:
                told.append(f"some from {len(self._strays) - 5} more sessions")
            parts.append(f"stray messages: {', '.join(told)}; the last: {self._last_detail}")
        if self._floods:
            more = f" and {len(self._floods) - 5} more" if len(self._floods) > 5 else ""
            floods = ", ".join(self._floods[:5]) + more
            parts.append(f"streams ended for flooding (more than {STRAY_LIMIT} stray messages in "
                         f"{STRAY_WINDOW_S:g} s): {floods}")
        self._strays, self._floods = {}, []
        self.logger.warning("arena: %s", "; ".join(parts))
