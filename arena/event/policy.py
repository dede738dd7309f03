"""The policies of a tournament: when a bot is disqualified, and what is done about absent bots.

The fault policy (:class:`FaultPolicy`) is one, used by every path (games played now, games read
back on resume).

Faults count per *decision*, not per message: the illegal answers of one call or card and its
retries, the late answer that follows them, and any stray message charged at that decision are
one faulty decision. ``absent`` faults (the fallback player sat in for a bot that was not there)
never count: absence has its own policy (``forfeit``, :func:`absence`), which says what to do as
data (:class:`Absence`) for the runner to apply.

A bot absent for ``absent_after_s`` has its games postponed; when only postponed games are left,
the ``forfeit`` policy decides:

- ``wait``: ``serve`` waits as long as it takes (the status says for whom); ``run`` stops with the
  games outstanding, to be resumed by running it again;
- ``fallback``: the fallback player takes the absent bot's seats, marked as ``absent`` faults;
- ``withdraw``: the bot is withdrawn; its blocks not yet begun are dropped whole, the ones under
  way are finished by the fallback player, and the ones played stay.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TypeVar

from arena.core.faults import Fault, FaultKind
from arena.event.dispatcher import Dispatcher
from arena.event.seats import Seating

__all__ = ["Absence", "FaultPolicy", "absence", "faulty_decisions"]

SeatT = TypeVar("SeatT")


def faulty_decisions(faults: Iterable[Fault]) -> dict[int, int]:
    """Seat -> the decisions of a game at which the seat committed at least one fault."""
    seen: set[tuple[int, int, int | None]] = set()
    for fault in faults:
        if fault.kind is not FaultKind.ABSENT:
            seen.add((fault.seat, fault.round_number, fault.trick))
    counts: dict[int, int] = {}
    for seat, _, _ in seen:
        counts[seat] = counts.get(seat, 0) + 1
    return counts


@dataclasses.dataclass
class FaultPolicy:
    """Counts each bot's faulty decisions over the tournament and says who is disqualified."""

    disqualify_after: int
    """Faulty decisions after which a bot is disqualified (0: never)."""
    counts: dict[str, int] = dataclasses.field(default_factory=dict)

    def add_game(self, seats: Sequence[str], faults: Iterable[Fault]) -> list[str]:
        """Counts one game's faults; returns the bots this game takes to the limit."""
        reached = []
        for seat, n in faulty_decisions(faults).items():
            bot = seats[seat]
            before = self.counts.get(bot, 0)
            self.counts[bot] = before + n
            limit = self.disqualify_after
            if limit and before < limit <= before + n:
                reached.append(bot)
        return reached

    def reason(self, bot: str) -> str:
        """Why ``bot`` is disqualified, in words."""
        return f"{self.counts.get(bot, 0)} faulty decisions (the limit is {self.disqualify_after})"


@dataclasses.dataclass(frozen=True)
class Absence:
    """What the absence policy says to do now, for the runner to apply."""

    awaited: frozenset[str] = frozenset()
    """The absent bots that games left wait for."""
    next_look: float | None = None
    """How long to wait before looking again: ``None``, until something happens; 0, at once."""
    forfeit: tuple[str, ...] = ()
    """Bots whose seats the fallback player takes from now on (``forfeit = "fallback"``)."""
    withdraw: tuple[str, ...] = ()
    """Bots to withdraw (``forfeit = "withdraw"``)."""
    waiting: bool = False
    """Only games of absent bots are left, and the run waits for them (``forfeit = "wait"``)."""
    stop: tuple[str, ...] = ()
    """Nothing is running and ``run`` does not wait: it stops with the games outstanding, these bots absent."""


def absence(
    dispatcher: Dispatcher[SeatT], seating: Seating, bots: Iterable[str], *, patience: float, forfeit: str,
    room: bool, serve: bool,
) -> Absence:
    """What the ``forfeit`` policy does when only games of absent bots are left (``room``: a table is free to
    play one); ``patience`` is ``absent_after_s``, ``serve`` a long-running arena that waits as long as it takes."""
    if all(seating.present(bot) for bot in bots):  # no one is absent: nothing to apply (and no game scan)
        return Absence()
    blockers = dispatcher.waiting_on(seating.can_sit)
    absent = frozenset(bot for bot in blockers if not seating.present(bot))
    if not absent or not room:
        return Absence(absent)
    overdue = {bot for bot in absent if seating.absent_for(bot) >= patience}
    waits = [patience - seating.absent_for(bot) for bot in absent - overdue]
    next_look = max(0.05, min(waits)) if waits else None
    if not overdue or not dispatcher.only_blocked_by(overdue):
        return Absence(absent, next_look)
    if forfeit == "fallback":
        new = tuple(sorted(overdue - seating.forfeiting))
        return Absence(absent, 0.0 if new else next_look, forfeit=new)
    if forfeit == "withdraw":
        return Absence(absent, 0.0, withdraw=tuple(sorted(overdue)))
    stop = tuple(sorted(overdue)) if not serve and dispatcher.running == 0 else ()
    return Absence(absent, next_look, waiting=True, stop=stop)
