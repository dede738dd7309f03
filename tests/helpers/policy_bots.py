"""Policies entered as bots through :func:`arena.envs.policy_bot`, for tests/test_envs.py: ``Lowest``
in-process, and over gRPC with the bot kit when this file is run (``python policy_bots.py --arena ADDR``);
``Careless``, which ignores the mask."""

from __future__ import annotations

from arena.botkit import run
from arena.envs import policy_bot
from arena.envs.layout import Observation


def lowest(observation: Observation) -> int:
    """The legal action of lowest index: the lowest call allowed, or the legal card of lowest index."""
    return int(observation["action_mask"].nonzero()[0][0])


def careless(observation: Observation) -> int:
    """Action 0 (the two of spades), whatever the mask allows: at calling time a call of -52."""
    return 0


Lowest = policy_bot(lowest, name="lowest", version="1")
Careless = policy_bot(careless, name="careless")

if __name__ == "__main__":
    raise SystemExit(run(Lowest))
