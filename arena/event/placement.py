"""Where the tables of a run are played: in the arena's process, or by its workers.

With ``workers = N`` (more than 1) or ``backend = "ray"``, the games of in-process bots are played by the
workers (:mod:`arena.event.backends`). In a tournament without a ``remote`` or ``bhoos_url`` bot, the
launched bots (``command``, ``stdio``, ``bhoos``) go with them: every table is a worker's, and each worker
launches the bots of its own tables (:mod:`arena.event.branch`). A tournament with a remote or
``bhoos_url`` bot keeps its launched bots in the arena's process, where the remote bots' connections are.
"""

from __future__ import annotations

from arena.event.botconfig import BhoosUrlBot, LaunchedBot, RemoteBot
from arena.event.config import TournamentConfig
from arena.event.kinds import Backend

__all__ = ["has_pool", "launched_on_workers"]


def has_pool(config: TournamentConfig) -> bool:
    """True when the configuration asks for workers (``workers`` above 1, or the Ray backend)."""
    return config.backend == Backend.RAY or config.workers > 1


def launched_on_workers(config: TournamentConfig) -> bool:
    """True when the workers launch the launched bots of the tournament and play their tables."""
    if not has_pool(config):
        return False
    setups = [bot.setup for bot in config.bots]
    return (any(isinstance(setup, LaunchedBot) for setup in setups)
            and not any(isinstance(setup, (RemoteBot, BhoosUrlBot)) for setup in setups))
