"""OpenSpiel's ISMCTS as a bot of its own process: ``arena.envs.ISMCTS`` with the bot kit.

    CALLBREAK_TOKEN=T python sample_bots/ismcts_bot.py --arena 127.0.0.1:50051 [--seed 7] [--option simulations=40]

Needs the ``openspiel`` extra (``pip install -e '.[openspiel]'``). At each decision it deals the cards its
seat has not seen at random under what the play shows, and runs OpenSpiel's Python ISMCTS for
``simulations`` worlds (20 by default) to the end of the round in play; its draws are keyed by its seed
and the view's seat seed, so the same position gets the same answer in-process and over the network
(``arena/envs/spiel_bot.py`` says how; any other OpenSpiel bot is seated the same way with
``arena.envs.openspiel_bot``).
"""

from __future__ import annotations

from arena.botkit import run
from arena.envs import ISMCTS

__all__ = ["ISMCTS"]

if __name__ == "__main__":
    raise SystemExit(run(ISMCTS))
