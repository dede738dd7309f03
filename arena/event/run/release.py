"""The plan walked as the run goes: its rounds released to the dispatcher a window at a time.

A fixed plan is released far enough ahead to keep the tables busy (a plan of a million deal sets
costs no more memory than a few rounds); a plan whose later rounds depend on earlier results
(swiss) or that may stop early (sprt) is released one round at a time, each once the one before
is over.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Set
from pathlib import Path
from typing import Generic, TypeVar

from arena.event.plan.manifest import Manifest
from arena.event.plan.plan import PlanRound
from arena.event.plan.planner import Planner
from arena.event.plan.schedule import Block, Schedule
from arena.event.play.dispatcher import Dispatcher
from arena.event.run.preparation import Recorded

__all__ = ["Filled", "Release"]

SeatT = TypeVar("SeatT")


@dataclasses.dataclass(frozen=True, slots=True)
class Filled:
    """What a release of rounds (:meth:`Release.fill`) asks of the runner."""

    decided: bool = False
    """A sequential test has decided: no new round begins."""
    house: tuple[str, ...] = ()
    """House bots the swiss rounds released seat, to join the run."""


class Release(Generic[SeatT]):
    """The rounds of a plan released so far, and the next ones.

    A swiss round paired now is put into the manifest, which ``save()`` writes, with the house bots it seats.
    """

    def __init__(
        self, schedule: Schedule, planner: Planner, manifest: Manifest, rounds: Iterator[PlanRound] | None,
        dispatcher: Dispatcher[SeatT], recorded: Recorded, folder: Path, manifest_name: str, *,
        save: Callable[[], None],
    ) -> None:
        self.schedule = schedule
        self.planner = planner
        self.manifest = manifest
        self._rounds = rounds
        self._dispatcher = dispatcher
        self._recorded = recorded
        self._folder = folder
        self._manifest_name = manifest_name
        self._save = save
        self.number = 0
        """The last schedule round released (the swiss standings count the rounds before it only)."""

    @property
    def stepwise(self) -> bool:
        """True when rounds are released one at a time (swiss, sprt)."""
        return self.schedule.adaptive or self.schedule.sequential

    def wanted(self, lookahead: int, more: bool) -> bool:
        """True when another round is due: for fixed plans, while fewer than ``lookahead`` games wait (``more``:
        one round beyond, however many wait); stepwise, once every released game is played."""
        if self.number >= self.schedule.rounds:
            return False
        if self.stepwise:
            return self._dispatcher.idle
        return more or self._dispatcher.waiting < lookahead

    def fill(self, lookahead: int, more: bool, decided: Callable[[], bool], excluded: Callable[[], Set[str]]) -> Filled:
        """Releases the rounds due (:meth:`wanted`) to the dispatcher; in blocks already begun, the bots
        ``excluded()`` names are played by the fallback player. Returns whether ``decided()`` (a sequential
        test has decided) stopped it, and the house bots the rounds released seat."""
        house: dict[str, None] = {}
        while self.wanted(lookahead, more):
            more = False
            if self.schedule.sequential and decided():
                return Filled(True, tuple(house))
            blocks = self.next()
            if self.schedule.adaptive:
                house.update(dict.fromkeys(self.schedule.house))
                self.manifest.house = sorted(set(self.manifest.house) | set(self.schedule.house))
                self._save()
            self.add(blocks, excluded())
        return Filled(False, tuple(house))

    def next(self) -> list[Block]:
        """The blocks of the next round, seated (a swiss round is paired now and put into the plan)."""
        self.number += 1
        schedule, plan = self.schedule, self.manifest.plan
        if schedule.adaptive:
            lineups, gone = self.planner.round(self.number)
            blocks = [schedule.seat(b) for b in lineups]
            plan.put_round(self.number, blocks, [schedule.seat(b) for b in gone])
            return blocks
        assert self._rounds is not None
        return [plan.seat(b) for b in next(self._rounds).blocks]

    def add(self, blocks: list[Block], excluded: Set[str]) -> None:
        """Hands a round's blocks to the dispatcher, checked against the games recorded in them; in blocks
        already begun, the bots in ``excluded`` are played by the fallback player (the plan dropped the rest)."""
        for block in blocks:
            self._recorded.check(block, self._dispatcher.rotation, self._folder, self._manifest_name)
            state = self._dispatcher.add(block, self._recorded.seats)
            state.fallback |= block.bots & excluded

    def planned(self, released: int) -> int:
        """The games of the whole plan, given the games of the rounds ``released`` so far (swiss plans its
        rounds as it goes, and may play more than its first estimate)."""
        if not self.schedule.adaptive:
            return self.manifest.plan.game_count
        return max(released, self.schedule.total())
