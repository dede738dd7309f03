"""The judge of a running tournament: live standings files, ``report.html`` at the end of a run, and
the sequential test that may end an ``sprt`` run early (the :class:`~arena.event.run.summary.Judge`
the tournament calls)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from arena.core.scoring import tenths_per_point
from arena.errors import ConfigError
from arena.event.plan.manifest import Manifest
from arena.event.plan.schedule import Assignment
from arena.event.setup.config import TournamentConfig, read_deal_file
from arena.event.setup.formats import SprtOptions
from arena.event.setup.kinds import Rotation
from arena.rating.html import write_report_files
from arena.rating.report import write_standings
from arena.rating.sequential import SequentialTest, SprtResult, fishtest_line
from arena.rating.standing import BlockDifferences
from arena.records.format import GameRecord, GameRecords
from arena.records.store import ResultsStore

__all__ = ["LiveJudge"]

REFRESH_EVERY_S = 5.0
"""Shortest time between two refreshes of the standings files (unless forced)."""


class LiveJudge:
    """Keeps a results folder's standings files fresh while a tournament runs, and under the ``sprt``
    format decides when no new block needs to begin."""

    def __init__(self, folder: Path, config: TournamentConfig) -> None:
        """Refuses (:class:`~arena.errors.ConfigError`) an ``sprt`` run on a deal file of fewer games than
        the burn-in: the configuration alone cannot know how many a deal file holds."""
        self.folder = folder
        self.config = config
        options = config.format_options
        self._differences = BlockDifferences(options.a, options.b, config.rotation == Rotation.ONCE) if isinstance(
            options, SprtOptions) else None
        if isinstance(options, SprtOptions) and config.deal_file is not None:
            games = len(read_deal_file(config.deal_file).games)
            burn_in = options.burn_in
            if games < burn_in:
                fix = (f", or set sprt.burn_in to {games} or less" if games >= 10
                       else " (sprt.burn_in cannot go below 10)")
                raise ConfigError(
                    f"sprt.burn_in is {burn_in} but the deal file tournament.deal_file ({config.deal_file.name}) "
                    f"holds {games} games: the test reads one block per game of the file and gives no verdict "
                    f"before the burn-in, so it could never decide; use a deal file of {burn_in} games or more{fix}"
                )
        self._order: list[str] | None = None
        """The plan's block ids in plan order, read from the manifest (again whenever it changes)."""
        self._stamp: int | None = None
        self._rotations = 4
        self._state: SprtResult | None = None
        self._test: SequentialTest | None = None
        """The test fed the complete prefix so far, block by block (rebuilt if the prefix or the cap changes)."""
        self._refreshed = -math.inf
        self._refresh_cost = 0.0
        self._refreshing = threading.Lock()

    # -- the Judge protocol ------------------------------------------------------------------------

    def start(self, games: Sequence[GameRecords]) -> None:
        """The games recorded before this run began (the manifest of the run is written by now)."""
        self._order = None
        self._state = None
        if self._differences is not None:
            for game in games:
                self._differences.add_game(game)

    def game_done(self, game: Assignment, record: GameRecord) -> None:
        """One more game is recorded."""
        if self._differences is not None:
            self._differences.add(game.block, game.id, game.seats, record.totals)
            self._state = None

    def decided(self) -> bool:
        """True when the sequential test has a verdict (always false for other formats)."""
        state = self.sprt_state()
        return state is not None and state.verdict != "continue"

    def refresh(self, force: bool = False) -> None:
        """Rewrites the standings files: at most every 5 s and never more than a tenth of the time
        (each refresh reads every record), always when ``force``, which the end of a run asks for:
        then ``report.html`` too, from the same pass."""
        with self._refreshing:  # the tournament may refresh from a worker thread; one at a time
            now = time.monotonic()
            if not force and now - self._refreshed < max(REFRESH_EVERY_S, 10 * self._refresh_cost):
                return
            if force:
                write_report_files(self.folder, self.config.roster)
            else:
                write_standings(self.folder)
            self._refreshed = time.monotonic()
            self._refresh_cost = self._refreshed - now

    # -- the sequential test -----------------------------------------------------------------------

    def sprt_state(self) -> SprtResult | None:
        """The sequential test on the complete blocks in plan order, up to the first block not yet
        complete; ``None`` unless the format is ``sprt``."""
        if self._differences is None:
            return None
        order = self._plan_order()  # first: a changed plan clears the verdict
        if self._state is None:
            prefix = self._differences.complete_prefix(order, self._rotations)
            cap = len(order) or None
            test = self._test
            if test is None or test.cap != cap or test.values != prefix[: len(test.values)]:
                test = self._test = self._new_test(cap)
                test.extend(prefix)
            else:  # the usual case: more blocks complete after the ones already read
                test.extend(prefix[len(test.values):])
            self._state = test.result()
        return self._state

    def progress_line(self) -> str | None:
        """The test as fishtest shows it, for a progress bar or log (``None`` unless the format is ``sprt``):
        ``LLR -0.66 (-2.94, 2.94) [0.00, 1.00] 116 blocks, A - B +0.42 points per game (95% CI ...)``."""
        state = self.sprt_state()
        return None if state is None else fishtest_line(state)

    def _new_test(self, cap: int | None) -> SequentialTest:
        options = self.config.format_options
        assert isinstance(options, SprtOptions)  # the test is made under sprt only
        scale = tenths_per_point(self.config.rules)  # deltas are given in points per game
        return SequentialTest(
            options.delta0 * scale, options.delta1 * scale, alpha=options.alpha, beta=options.beta,
            burn_in=options.burn_in, cap=cap, method=options.method, per_point=scale, a=options.a, b=options.b,
        )

    def _plan_order(self) -> list[str]:
        store = ResultsStore(self.folder)
        try:
            stamp = store.manifest_path.stat().st_mtime_ns
        except OSError:
            stamp = None
        if stamp != self._stamp:  # the plan changed (a block dropped): read the order again
            self._stamp, self._order, self._state = stamp, None, None
        if self._order is None:
            raw = store.manifest()
            if raw is None:  # nothing planned yet: nothing to decide on
                return []
            plan = Manifest.from_dict(raw, str(store.manifest_path)).plan
            assert self._differences is not None  # asked only under sprt
            self._order = self._differences.units([block.id for rnd in plan.walk() for block in rnd.blocks])
            self._rotations = plan.rotations
        return self._order
