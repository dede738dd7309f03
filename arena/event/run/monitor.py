"""What the organiser sees of a run as it goes: the log, the progress bar, ``status.json`` and the live standings.

The log's lines are written around the progress bar (the two would overwrite each other); the bar
shows the games done, the faults, the bots awaited and the sequential test's line, which goes to the
log instead when there is no bar. About once a second the status is written and the standings are
refreshed on a worker thread, so the event loop keeps serving the bots.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from arena.event.plan.status import Progress, Status, write_status

__all__ = ["STATUS_EVERY_S", "TEST_LOG_EVERY_S", "Monitor", "Watcher"]

STATUS_EVERY_S = 1.0
TEST_LOG_EVERY_S = 10.0


class Watcher(Protocol):
    """What the monitor asks of the run's judge: the standings to refresh, the sequential test's line."""

    def refresh(self, force: bool = False) -> None: ...

    def progress_line(self) -> str | None: ...


class Monitor:
    """The log, the progress bar and the status of one run.

    ``status()`` makes the status to write; ``faults()`` and ``awaited()`` give the faults so far and the bots
    awaited, and why, for the bar.
    """

    def __init__(
        self, folder: Path, log: Callable[[str], None], watcher: Watcher | None, *, status: Callable[[], Status],
        faults: Callable[[], int], awaited: Callable[[], Mapping[str, str]],
    ) -> None:
        self.folder = folder
        self._log, self._watcher = log, watcher
        self._status, self._faults, self._awaited = status, faults, awaited
        self.bar: Progress | None = None
        """The progress bar, once the run knows how many games it plays."""
        self._status_written = 0.0
        self._test_logged = ("", -math.inf)
        """The sequential test's line last logged, and when."""
        self._refreshing: asyncio.Task[None] | None = None

    def log(self, text: str) -> None:
        """A line for the organiser; a progress bar on the same terminal is cleared first and drawn again after
        (the two overwrote each other)."""
        if self.bar is None:
            self._log(text)
            return
        with self.bar.writing():
            self._log(text)

    def test_line(self) -> str:
        """The sequential test in one line, or nothing."""
        return (self._watcher.progress_line() or "") if self._watcher is not None else ""

    def game_done(self) -> None:
        """One more game is recorded: the bar moves on, and the status is written if it is due."""
        if self.bar is not None and self.bar.shown:
            self.bar.update(self._faults(), self._awaited(), note=self.test_line())
        self.write_status()

    def write_status(self, force: bool = False) -> None:
        """Writes ``status.json``, at most every :data:`STATUS_EVERY_S` unless ``force``."""
        now = time.monotonic()
        if not force and now - self._status_written < STATUS_EVERY_S:
            return
        self._status_written = now
        write_status(self.folder, self._status())

    async def tick(self) -> None:
        """Every :data:`STATUS_EVERY_S`, until cancelled: the status, the bar's postfix (or the test's line in the
        log) and the standings."""
        while True:
            await asyncio.sleep(STATUS_EVERY_S)
            self.write_status(force=True)
            line = self.test_line()
            if self.bar is not None:
                self.bar.update(self._faults(), self._awaited(), step=0, note=line)
            if self.bar is None or not self.bar.shown:
                self._log_test(line)
            if self._watcher is not None and (self._refreshing is None or self._refreshing.done()):
                # The standings read every record: on a worker thread, and never in the way of the
                # status, so the loop keeps serving the bots and the status stays fresh.
                self._refreshing = asyncio.get_running_loop().create_task(asyncio.to_thread(self._watcher.refresh))

    def _log_test(self, line: str) -> None:
        """The sequential test's line in the log when there is no bar to show it: when it has moved,
        at most every :data:`TEST_LOG_EVERY_S`."""
        now = time.monotonic()
        if line and line != self._test_logged[0] and now - self._test_logged[1] >= TEST_LOG_EVERY_S:
            self._test_logged = (line, now)
            self.log(line)

    def stop(self) -> None:
        """Cancels a refresh of the standings under way (the run is ending)."""
        if self._refreshing is not None:
            self._refreshing.cancel()
