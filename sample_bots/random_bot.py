"""The random bot: a uniformly random legal call and card, the same as the arena's house bot.

Its choices are a pure function of its seed and the position (the deal set, the round, the seat and
the hand it was dealt), read from a digest rather than a random generator, so it plays the same way
on the same hand, in-process or over the network. The house bot (``arena/players/house.py``) holds the
logic and says how it draws; this class adds the bot kit, so the same bot connects to an arena:

    CALLBREAK_TOKEN=T python sample_bots/random_bot.py --arena 127.0.0.1:50051 [--seed 7]

(the token comes from the environment variable ``CALLBREAK_TOKEN``; ``--token T`` also works, but a
command line is visible to every user of the machine).
"""

from __future__ import annotations

from arena.botkit import Bot, run
from arena.players.house import HouseBot

__all__ = ["RandomBot"]


class RandomBot(HouseBot, Bot):
    """Calls and plays uniformly at random among the legal choices: the house bot, with the bot kit."""


if __name__ == "__main__":
    raise SystemExit(run(RandomBot))
