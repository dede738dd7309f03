"""Making a run's plan: each round planned from the design, the previous plan and what was played, and
written down with only what departs from the design (:mod:`arena.event.plan.plan` says what a plan is)."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence

from arena.event.plan.plan import Entry, Plan, PlanBuilder, PlanRound
from arena.event.plan.schedule import Schedule

__all__ = ["Planner", "write_plan"]


class Planner:
    """Plans the rounds of a tournament in order, keeping what an earlier plan fixed.

    ``previous`` is the plan stored by an earlier run (or ``None``), ``played`` the ids of blocks
    with recorded games, ``excluded`` the bots that no longer play. Rounds are planned one at a
    time (:meth:`round`), in order, because partitions balance against the rounds before them and
    swiss rounds follow the standings; :func:`write_plan` plans a whole fixed plan, leaving the
    runs of rounds that can only be the design's to the design.
    """

    def __init__(
        self, schedule: Schedule, previous: Plan | None, played: Container[str], excluded: Iterable[str],
        field_changed: bool,
    ) -> None:
        self.schedule = schedule
        self.played = played
        self.excluded = set(excluded)
        self.field_changed = field_changed
        self.previous = previous
        self._walk = previous.walk() if previous is not None and not previous.steady else None
        self.dropped = 0
        """Blocks of the previous plan not in this one."""
        self.added = 0
        """Blocks of this plan not in the previous one."""

    def _previous(self, number: int) -> PlanRound:
        previous = self.previous
        if previous is None:
            return PlanRound(number, [])
        if self._walk is None:
            return previous.round_at(number)
        rnd = next(self._walk, None)
        if rnd is None:
            return PlanRound(number, [])
        assert rnd.number == number, f"round {number} planned after round {rnd.number - 1}"
        return rnd

    def round(self, number: int) -> tuple[list[Entry], list[Entry]]:
        """The blocks of round ``number`` and the blocks dropped from it (call for 1, 2, ... in order)."""
        previous = self._previous(number)
        schedule = self.schedule
        planned = sorted(previous.blocks, key=lambda b: b.group)
        if schedule.complete:
            blocks = self._complete(number, planned, previous.dropped)
        elif any(b.id in self.played for b in planned) or (planned and not self.field_changed):
            blocks = planned  # a round once played (or a plan nothing changed) keeps its tables
            schedule.meet([sorted(b.bots) for b in planned])
        else:
            blocks = list(schedule.round_lineups(number))
        excluded = self.excluded
        kept = [b for b in blocks if b.id in self.played or not b.bots & excluded] if excluded else blocks
        if not planned:
            self.added += len(kept)
            return kept, list(previous.dropped)
        kept_ids = {b.id for b in kept}
        planned_ids = {b.id for b in planned}
        gone = [b for b in planned if b.id not in kept_ids]
        self.dropped += len(gone)
        self.added += sum(b.id not in planned_ids for b in kept)
        return kept, [*previous.dropped, *gone]

    def _complete(self, number: int, planned: list[Entry], dropped: Sequence[Entry]) -> list[Entry]:
        fresh = self.schedule.round_lineups(number)
        if not planned and not dropped:
            return list(fresh)
        known = sorted([*planned, *dropped], key=lambda b: b.group)
        by_bots = {b.bots: b for b in known}
        next_group = max(b.group for b in known) + 1
        out: list[Entry] = []
        for block in fresh:
            kept = by_bots.get(block.bots)
            if kept is None:  # a group of a late entrant: numbered after the round's earlier groups
                kept = block._replace(group=next_group)
                next_group += 1
            out.append(kept)
        fresh_bots = {b.bots for b in fresh}
        out.extend(b for b in known if b.id in self.played and b.bots not in fresh_bots)  # played blocks stay
        out.sort(key=lambda b: b.group)
        return out


def write_plan(planner: Planner, builder: PlanBuilder) -> Plan:
    """Plans every round of a fixed plan and writes it down.

    With a steady design, a run of rounds can only be the design's (with the cuts) where nothing
    earlier departs from it: beyond the previous plan, or where the previous plan was the same design
    on the same field, its round not stored whole and its cuts the same; and from the last cut on (before
    it, a bot taken out may have blocks played and blocks dropped). Such runs are written down at once;
    every other round is planned on its own.
    """
    plan, previous = builder.draft, planner.previous
    rounds = plan.rounds
    if not (plan.steady and planner.schedule.complete):
        for number in range(1, rounds + 1):
            builder.add(number, *planner.round(number))
        return builder.plan()
    slow: list[tuple[int, int]] = [(1, max(plan.cuts.values(), default=1))]
    """Runs of rounds [first, end) planned one by one."""
    if previous is not None:
        if previous.design == plan.design and previous.field == plan.field and previous.rotation == plan.rotation:
            slow.extend((n, n + 1) for n in previous.listed)
            for bot in set(plan.cuts) | set(previous.cuts):
                a, b = plan.cuts.get(bot, rounds + 1), previous.cuts.get(bot, rounds + 1)
                slow.append((min(a, b), min(max(a, b), previous.rounds + 1)))
        else:
            slow.append((1, previous.rounds + 1))
    number = 1
    for first, end in sorted((max(1, a), min(b, rounds + 1)) for a, b in slow):
        if first > number:
            added = builder.add_steady(number, first - 1)
            if previous is not None:
                planner.added += added if number > previous.rounds else 0
            number = first
        while number < end:
            builder.add(number, *planner.round(number))
            number += 1
    if number <= rounds:
        added = builder.add_steady(number, rounds)
        if previous is not None and number > previous.rounds:
            planner.added += added
    return builder.plan()
