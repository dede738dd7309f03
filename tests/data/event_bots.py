"""Bots for the live-event tests: ``python tests/data/event_bots.py CLASS --arena ADDRESS --token T``.

- ``PidRandom``: the sample random bot that writes its process id to the file given as
  ``--option pidfile=PATH`` (so a test can stop or kill that very process).
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


if __name__ == "__main__":
    from arena.botkit import run

    raise SystemExit(run(globals()[sys.argv.pop(1)]))
