"""Where the tables of a run are played: in the arena's process, or by its workers.

With ``workers = N`` (more than 1) or ``backend = "ray"``, the games of in-process bots are played by the
workers (:mod:`arena.event.play.backends`), and so are the launched bots' (``command``, ``stdio``, ``bhoos``): a
table whose four bots are all in-process or launched is a worker's, and each worker launches the bots of its
own tables (:mod:`arena.event.play.branch`). A table with a ``remote`` or ``bhoos_url`` bot is played in the
arena's process, where the remote bots' connections are, and the launched bots at it are the arena's own: in
a tournament with both kinds the arena launches its long-lived bots too, as in a run without workers
(:func:`shares_launched`).
"""

from __future__ import annotations

from arena.event.play.kinds import kind_of
from arena.event.setup.config import TournamentConfig
from arena.event.setup.kinds import Backend

__all__ = ["has_pool", "launched_on_workers", "shares_launched"]


def has_pool(config: TournamentConfig) -> bool:
    """True when the configuration asks for workers (``workers`` above 1, or the Ray backend)."""
    return config.backend == Backend.RAY or config.workers > 1


def launched_on_workers(config: TournamentConfig) -> bool:
    """True when the workers launch the launched bots of the tournament and play their tables."""
    return has_pool(config) and any(kind_of(bot).launched for bot in config.bots)


def shares_launched(config: TournamentConfig) -> bool:
    """True when the launched bots play both on the workers and in the arena's process: the workers launch
    them, and the tournament also has bots only the arena can seat (``remote``, ``bhoos_url``: no worker plays them)."""
    return launched_on_workers(config) and any(not kind_of(bot).on_workers(launches=True) for bot in config.bots)
