"""Bots for the live-event tests: ``python tests/helpers/event_bots.py CLASS --arena ADDRESS --token T``.

- ``PidRandom``: the sample random bot that writes its process id to the file given as
  ``--option pidfile=PATH`` (so a test can stop or kill that very process).
- ``BadModel``: the random bot (fast path included) whose third instance in a process cannot be
  made: its constructor raises ``RuntimeError``; ``ExitingModel``: the same, with ``SystemExit(4)``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sample_bots.random_bot import RandomBot


class PidRandom(RandomBot):
    """The random bot, writing its pid to ``pidfile``."""

    def __init__(self, seed: int = 0, pidfile: str = "") -> None:
        super().__init__(seed)
        if pidfile:
            Path(pidfile).write_text(str(os.getpid()), encoding="utf-8")


class BadModel(RandomBot):
    """The random bot whose third instance fails to load its "model"."""

    made = 0
    failure: BaseException = RuntimeError("cannot load my model file")

    def __init__(self, seed: int = 0) -> None:
        type(self).made += 1
        if type(self).made == 3:
            raise self.failure
        super().__init__(seed)


class ExitingModel(BadModel):
    """:class:`BadModel` whose third instance calls ``sys.exit(4)`` instead."""

    made = 0
    failure = SystemExit(4)


if __name__ == "__main__":
    from arena.botkit import run

    raise SystemExit(run(globals()[sys.argv.pop(1)]))
