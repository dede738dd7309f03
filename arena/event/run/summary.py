"""What a run reports when it ends (:class:`RunSummary`), and what judges its results as they come (:class:`Judge`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from arena.event.plan.schedule import Assignment
from arena.event.plan.status import Told
from arena.records.format import GameRecord, GameRecords

__all__ = ["Judge", "RunSummary"]


class Judge(Protocol):
    """What watches the results as they come: live standings, and the sequential test that may
    end a run early. Supplied by the rating layer; a tournament without one just plays its plan."""

    def start(self, games: Sequence[GameRecords]) -> None:
        """The games recorded before this run began."""

    def game_done(self, game: Assignment, record: GameRecord) -> None:
        """One more game is recorded."""

    def decided(self) -> bool:
        """True when no new block needs to begin (a sequential test has decided)."""

    def refresh(self, force: bool = False) -> None:
        """Rewrites the live standings (at most every few seconds unless ``force``); may be called
        from a worker thread."""

    def progress_line(self) -> str | None:
        """The sequential test in one line (``LLR -0.66 (-2.94, 2.94) [0.00, 1.00] 116 blocks, ...``),
        for the progress bar, the log and the status; ``None`` when there is no test."""


@dataclasses.dataclass
class RunSummary:
    """What a run did."""

    folder: Path
    played: int = 0
    skipped: int = 0
    faults: int = 0
    disqualified: dict[str, str] = dataclasses.field(default_factory=dict)
    withdrawn: dict[str, str] = dataclasses.field(default_factory=dict)
    changes: list[str] = dataclasses.field(default_factory=list)
    """What changed in the plan since the folder's last run, one sentence each."""
    stopped_early: bool = False
    """A sequential test decided before the last planned block."""
    outstanding: int = 0
    """Games left unplayed because the bots they need were absent (``forfeit = "wait"`` under ``run``)."""
    awaited: dict[str, str] = dataclasses.field(default_factory=dict)
    """The absent bots those games wait for, and why, in words."""

    def begin(self, games: Sequence[GameRecords], statuses: Mapping[str, Told]) -> None:
        """Counts what the run found recorded: its games and their faults, and the bots taken out before."""
        self.skipped = len(games)
        self.faults = sum(len(r.faults) for game in games for r in game.rounds)
        self.disqualified = {b: s.reason for b, s in statuses.items() if s.status == "disqualified"}
        self.withdrawn = {b: s.reason for b, s in statuses.items() if s.status == "withdrawn"}
