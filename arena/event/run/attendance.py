"""Who plays on: bots withdrawn or disqualified, absent bots the fallback player sits for, and bots back.

A bot taken out (withdrawn, disqualified) has its blocks not begun dropped whole, its seats in blocks
under way played by the fallback player to their end, and its connections ended; the blocks it played
stay. The absence policy (:func:`arena.event.run.policy.absence`) is asked here, and what it says applied; the
bots games wait for are kept here, for the status and the progress bar. Every change
is written to the manifest at once, so a run stopped now resumes with it. What a change asks of the rest
of the run (the server to turn the bot away, house bots for a smaller swiss field) is returned
(:class:`TakenOut`), for the runner to apply.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from arena.event.plan.manifest import BotStatus, Manifest
from arena.event.plan.status import TAKEN_OUT, BotCondition
from arena.event.play.dispatcher import Dispatcher
from arena.event.play.seats import Seat, Seating
from arena.event.run.policy import Absence, absence
from arena.event.run.release import Release
from arena.event.run.summary import RunSummary
from arena.records.store import ResultsStore

__all__ = ["Attendance", "TakenOut"]


@dataclasses.dataclass(frozen=True, slots=True)
class TakenOut:
    """A bot withdrawn or disqualified, for the runner: the server is to turn it away (:attr:`status`,
    :attr:`reason`), and :attr:`house` bots to join the run (the swiss field made smaller may need one)."""

    bot: str
    status: BotCondition
    reason: str
    house: tuple[str, ...] = ()


class Attendance:
    """The bots' statuses during a run, and what follows from each change.

    ``log`` takes a line for the organiser. ``bots`` (the run's, as it adds house bots), ``patience``,
    ``forfeit`` and ``serve`` are what the absence policy asks.
    """

    def __init__(
        self, statuses: dict[str, BotStatus], seating: Seating, dispatcher: Dispatcher[Seat], summary: RunSummary,
        store: ResultsStore, *, log: Callable[[str], None], bots: Iterable[str], patience: float, forfeit: str,
        serve: bool,
    ) -> None:
        self.statuses = statuses
        self.seating = seating
        self._dispatcher = dispatcher
        self._summary = summary
        self._store = store
        self._log = log
        self.manifest: Manifest | None = None
        self._release: Release[Seat] | None = None
        self._played: frozenset[str] = frozenset()
        self._bots, self._patience, self._forfeit, self._serve = bots, patience, forfeit, serve
        self.awaited: frozenset[str] = frozenset()
        """The absent bots that games left wait for, as the absence policy last said."""

    def attach(self, manifest: Manifest, release: Release[Seat], played: frozenset[str]) -> None:
        """The run is planned: its manifest, its release of rounds, and the blocks played before it."""
        self.manifest, self._release, self._played = manifest, release, played
        manifest.statuses = self.statuses

    def excluded(self) -> set[str]:
        """The bots taken out of the tournament (withdrawn or disqualified)."""
        return {bot for bot, s in self.statuses.items() if s.status in TAKEN_OUT}

    def save(self) -> None:
        """Writes the manifest with the statuses as they are now."""
        if self.manifest is not None:
            self.manifest.statuses = dict(self.statuses)
            self._store.write_manifest(self.manifest.to_dict())

    def take_out(self, bot: str, status: BotCondition, reason: str) -> TakenOut | None:
        """Withdraws or disqualifies a bot: a status, its blocks not begun dropped, its seats in blocks
        under way played by the fallback player; returns what the runner is to do of it (``None``: the bot was
        out already)."""
        if bot in self.excluded():
            return None
        self.statuses[bot] = BotStatus(status, reason)
        (self._summary.disqualified if status == BotCondition.DISQUALIFIED else self._summary.withdrawn)[bot] = reason
        self.seating.forfeiting.discard(bot)
        dropped = self._dispatcher.drop(bot)
        release, manifest = self._release, self.manifest
        assert release is not None and manifest is not None
        schedule = release.schedule
        if schedule.adaptive:  # swiss: the rounds to come are paired without it
            schedule.set_field([b for b in schedule.bots if b != bot and b not in schedule.house])
        # The rounds released keep the blocks under way or played; in the rounds to come, the walk
        # under way (and any later one) leaves out the blocks of the bot not played before this run.
        manifest.plan.take_out(bot, release.number, dropped, self._played)
        if schedule.adaptive:
            manifest.plan.field = list(schedule.bots)
            manifest.house = sorted(set(manifest.house) | set(schedule.house))
        self.save()
        self._log(f"{bot} is {status}: {reason}")
        return TakenOut(bot, status, reason, tuple(schedule.house) if schedule.adaptive else ())

    def back(self) -> list[str]:
        """The absent bots whose seats the fallback player took that are connected again."""
        server, forfeiting = self.seating.server, self.seating.forfeiting
        if server is None or not forfeiting:
            return []
        return [bot for bot in self._bots if bot in forfeiting and server.lobby.present(bot)]

    def returned(self, bot: str) -> None:
        """An absent bot whose seats the fallback player took is back: its blocks not begun are its own again."""
        self.seating.forfeiting.discard(bot)
        if bot in self.statuses and self.statuses[bot].status == BotCondition.ABSENT:
            del self.statuses[bot]
            self.save()
        self._log(f"{bot} is back")

    def look(self, room: bool) -> Absence:
        """Asks the absence policy what to do now (``room``: a table is free to play a game) and notes the bots
        awaited; returns what it said, for :meth:`apply`."""
        told = absence(self._dispatcher, self.seating, self._bots, patience=self._patience, forfeit=self._forfeit,
                       room=room, serve=self._serve)
        self.awaited = told.awaited
        return told

    def awaited_words(self) -> dict[str, str]:
        """The bots that games left wait for, and why each is absent, for the progress bar."""
        return {bot: self.seating.why_absent(bot) for bot in sorted(self.awaited)}

    def apply(self, told: Absence) -> list[TakenOut]:
        """Does what the absence policy said: the fallback player sits for the bots now forfeiting, the bots
        to withdraw are withdrawn (returned, for the runner), and a run that stops records what it leaves
        outstanding and for whom."""
        seating, summary = self.seating, self._summary
        taken: list[TakenOut] = []
        for bot in told.forfeit:
            why = seating.why_absent(bot)
            self._log(f"{bot} is absent ({why}): the fallback player takes its seats")
            self.statuses[bot] = BotStatus(BotCondition.ABSENT, f"{why}; the fallback player took its seats")
            seating.forfeiting.add(bot)
        for bot in told.withdraw:
            out = self.take_out(bot, BotCondition.WITHDRAWN, f"absent: {seating.why_absent(bot)}")
            if out is not None:
                taken.append(out)
        if told.stop:
            assert self._release is not None
            done, total = self._dispatcher.counts()
            summary.outstanding = self._release.planned(total) - done
            summary.awaited = {bot: seating.why_absent(bot) for bot in sorted(told.awaited)}
            for bot in told.stop:
                self.statuses[bot] = BotStatus(BotCondition.ABSENT, seating.why_absent(bot))
        if told.forfeit or told.stop:
            self.save()
        return taken
