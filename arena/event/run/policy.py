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
from arena.event.play.dispatcher import Dispatcher
from arena.event.play.seats import Seating

__all__ = ["Absence", "FaultPolicy", "absence", "decision_kinds", "faulty_decisions"]

SeatT = TypeVar("SeatT")


KIND_WORDS = {
    FaultKind.ILLEGAL_CALL: "illegal calls", FaultKind.ILLEGAL_CARD: "illegal cards", FaultKind.LATE: "late answers",
    FaultKind.MALFORMED: "unusable messages", FaultKind.OUT_OF_TURN: "answers of the wrong kind",
    FaultKind.UNKNOWN_REQUEST: "answers to requests never sent", FaultKind.DISCONNECT: "lost connections",
    FaultKind.CRASH: "crashes", FaultKind.STALLED: "stalled connections", FaultKind.FLOOD: "floods of stray messages",
}
"""A faulty decision's kind, in the plural words of the disqualification's reason."""


def decision_kinds(faults: Iterable[Fault]) -> dict[int, dict[FaultKind, int]]:
    """Seat -> its faulty decisions of a game by kind: a decision is the kind of its first fault (the retries and
    a late answer after an illegal one make no second decision)."""
    first: dict[tuple[int, int, int | None], FaultKind] = {}
    for fault in faults:
        if fault.kind is not FaultKind.ABSENT:
            first.setdefault((fault.seat, fault.round_number, fault.trick), fault.kind)
    kinds: dict[int, dict[FaultKind, int]] = {}
    for (seat, _, _), kind in first.items():
        by_kind = kinds.setdefault(seat, {})
        by_kind[kind] = by_kind.get(kind, 0) + 1
    return kinds


def faulty_decisions(faults: Iterable[Fault]) -> dict[int, int]:
    """Seat -> the decisions of a game at which the seat committed at least one fault."""
    return {seat: sum(by_kind.values()) for seat, by_kind in decision_kinds(faults).items()}


@dataclasses.dataclass
class FaultPolicy:
    """Counts each bot's faulty decisions over the tournament and says who is disqualified."""

    disqualify_after: int
    """Faulty decisions after which a bot is disqualified (0: never)."""
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    kinds: dict[str, dict[FaultKind, int]] = dataclasses.field(default_factory=dict)
    """Each bot's faulty decisions by kind (the kind of a decision's first fault)."""

    def add_game(self, seats: Sequence[str], faults: Iterable[Fault]) -> list[str]:
        """Counts one game's faults; returns the bots this game takes to the limit."""
        reached = []
        for seat, by_kind in decision_kinds(faults).items():
            bot, n = seats[seat], sum(by_kind.values())
            before = self.counts.get(bot, 0)
            self.counts[bot] = before + n
            mine = self.kinds.setdefault(bot, {})
            for kind, k in by_kind.items():
                mine[kind] = mine.get(kind, 0) + k
            limit = self.disqualify_after
            if limit and before < limit <= before + n:
                reached.append(bot)
        return reached

    def reason(self, bot: str) -> str:
        """Why ``bot`` is disqualified, in words: its faulty decisions and what they were, ``260 faulty decisions,
        all illegal cards (the limit is 200)`` or ``..., mostly late answers (150), illegal cards (50) (...)``."""
        count, limit = self.counts.get(bot, 0), self.disqualify_after
        kinds = sorted(self.kinds.get(bot, {}).items(), key=lambda item: (-item[1], item[0].value))
        if len(kinds) == 1:
            what = f", all {KIND_WORDS.get(kinds[0][0], kinds[0][0].value)}"
        elif kinds:
            most = "mostly " if kinds[0][1] * 2 > count else ""
            what = f", {most}" + ", ".join(f"{KIND_WORDS.get(kind, kind.value)} ({n})" for kind, n in kinds)
        else:
            what = ""
        return f"{count} faulty decisions{what} (the limit is {limit})"


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
