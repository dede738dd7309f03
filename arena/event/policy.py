"""The fault policy of a tournament: when a bot is disqualified. One policy, used by every path
(games played now, games read back on resume).

Faults count per *decision*, not per message: the illegal answers of one call or card and its
retries, the late answer that follows them, and any stray message charged at that decision are
one faulty decision. ``absent`` faults (the fallback player sat in for a bot that was not there)
never count: absence has its own policy (``forfeit``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from arena.core.faults import Fault, FaultKind

__all__ = ["FaultPolicy", "faulty_decisions"]


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
