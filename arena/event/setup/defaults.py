"""The defaults and file names the command line shows in its help: the live page's port and spectators' delay,
the roster's file, and what ``check-bot`` pits a bot against and under. A module of its own, light to import,
so that ``callbreak-arena --help`` names them without importing the modules that use them (the configuration,
the roster, the checks), each of which still offers them under its own name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from arena.event.setup.bots import HOUSE_BOT, registered_bot

__all__ = ["CHECK_DEADLINE_MS", "LATE_IN_A_ROW", "LOGS", "OPPONENTS", "PAGE_PORT", "ROSTER_FILE", "WATCH_DELAY_S"]

PAGE_PORT = 8080
"""``[page] port``'s default: where the live page is served when the configuration has a ``[page]`` table."""
WATCH_DELAY_S = 2.0
"""The live page's spectators (``/watch``) see a card every this many seconds unless told otherwise
(``--watch-delay``; :class:`arena.web.watch.WatchOptions`)."""
ROSTER_FILE = "roster.toml"
"""The roster's default file name."""


class _Opponents(Mapping[str, str]):
    """Opponent -> ``module:Class``, each found when asked for: the random one is the house bot, the others
    the sample bots registered under their names (:func:`~arena.event.setup.bots.registered_bot`)."""

    _NAMES = ("random", "heuristic", "montecarlo")

    def __getitem__(self, name: str) -> str:
        if name not in self._NAMES:
            raise KeyError(name)
        return HOUSE_BOT if name == "random" else registered_bot(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._NAMES)

    def __len__(self) -> int:
        return len(self._NAMES)


OPPONENTS: Mapping[str, str] = _Opponents()
"""The sample bots a bot under test plays against (``check-bot``, ``game --bot``), by strength: name ->
``module:Class``."""
CHECK_DEADLINE_MS = 2000
"""The deadline of the checks: the default of a tournament."""
LATE_IN_A_ROW = 5
"""Decisions in a row past the deadline after which a check stops early, with a FAIL: a bot that is always late
would otherwise keep its student waiting for the whole battery, a deadline per decision."""
LOGS = Path("callbreak-check-logs")
"""Where a check that did not pass keeps its records and the bot's log (``--logs``), relative to the
current folder: ``LOGS/PROFILE/logs/yours.log``."""
