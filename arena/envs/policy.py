"""A policy as an arena bot: :func:`policy_bot` turns a function of an observation into a bot class.

    from arena.envs import policy_bot

    def first_legal(observation):
        return int(observation["action_mask"].nonzero()[0][0])

    FirstLegal = policy_bot(first_legal, name="first-legal")

``FirstLegal`` is a :class:`~arena.botkit.Bot`: a tournament seats it with ``python =
"mymodule:FirstLegal"``, and ``arena.botkit.run(FirstLegal)`` connects it to an arena over gRPC. At
every decision the function is handed what the environments hand an agent (the vector and the mask
of :mod:`arena.envs.layout`, made from the bot's view by
:func:`~arena.envs.layout.observation_of`) and returns an action index. The bot answers with that
action as it is: a card it may not play, or a call out of range, is refused by the arena as any
illegal answer is, with the rule it breaks.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.core.cards import CARDS, Card
from arena.core.views import View
from arena.envs.layout import CALL_BASE, CARD_ACTIONS, Observation, action_text, observation_of
from arena.kit.bot import Bot

__all__ = ["Policy", "PolicyBot", "policy_bot"]

Policy = Callable[[Observation], int]
"""A policy: an observation (vector and mask) to an action index."""


class PolicyBot(Bot):
    """The base of the classes :func:`policy_bot` makes: made with a seed, as a tournament makes a bot."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        """Unused: the policy draws whatever randomness it needs itself."""


def policy_bot(policy: Policy, name: str = "policy", version: str = "0") -> type[PolicyBot]:
    """A bot class that asks ``policy`` at every decision; ``name`` and ``version`` are the bot's own
    (an arena records the version with every game it plays)."""

    class Made(PolicyBot):
        __doc__ = f"The policy {getattr(policy, '__qualname__', repr(policy))} as a bot."

        def call(self, view: View) -> int:
            return int(policy(observation_of(view))) - CALL_BASE

        def play(self, view: View) -> Card | str:
            action = int(policy(observation_of(view)))
            return CARDS[action] if 0 <= action < CARD_ACTIONS else action_text(action)

    Made.name = name
    Made.version = version
    Made.__qualname__ = Made.__name__ = f"PolicyBot[{name}]"
    return Made
