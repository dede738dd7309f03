"""Research environments on the rules core: PettingZoo (:mod:`arena.envs.callbreak_v0`), Gymnasium
(:class:`SingleSeat`), OpenSpiel (:mod:`arena.envs.openspiel`), and :func:`policy_bot`, which enters a
trained policy in a tournament.

The observation and action layout is :mod:`arena.envs.layout`. Everything here needs the ``rl`` extra
(numpy, and PettingZoo or Gymnasium where named; OpenSpiel is the ``openspiel`` extra), but this package
imports without them: the names below are loaded from their modules when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.envs.policy import PolicyBot, policy_bot
    from arena.envs.single_seat import SingleSeat

__all__ = ["PolicyBot", "SingleSeat", "policy_bot"]

_HOMES = {"PolicyBot": "arena.envs.policy", "SingleSeat": "arena.envs.single_seat", "policy_bot": "arena.envs.policy"}
"""Where each public name lives (its module needs an optional extra)."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'arena.envs' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
