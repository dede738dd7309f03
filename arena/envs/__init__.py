"""Research environments on the rules core: PettingZoo (:mod:`arena.envs.callbreak_v0`), Gymnasium
(:class:`SingleSeat`, registered as ``callbreak/SingleSeat-v0``, and :class:`ActionMasks` for masking
libraries), OpenSpiel (:mod:`arena.envs.openspiel`), and the ways back into a tournament: :func:`policy_bot`
for a trained policy, :func:`openspiel_bot` for any OpenSpiel bot (:data:`ISMCTS` is OpenSpiel's ISMCTS so
seated).

The observation and action layout is :mod:`arena.envs.layout`; its sizes (:data:`ACTIONS`,
:data:`OBSERVATION_SIZE`) and the type of an observation (:data:`Observation`) are named here. This package,
:mod:`arena.envs.callbreak_v0` and :mod:`arena.envs.openspiel` are the public faces of the environments
(docs/architecture.md, "What is public"); their other modules are internal. Everything here needs the ``rl`` extra
(numpy, and PettingZoo or Gymnasium where named; OpenSpiel is the ``openspiel`` extra), but this package
imports without them: the names below are loaded from their modules when first used. Where Gymnasium is
installed, importing this package registers ``callbreak/SingleSeat-v0``, so ``gymnasium.make`` finds it
(also as ``gymnasium.make("arena.envs:callbreak/SingleSeat-v0")``, which imports the package first).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.envs.layout import ACTIONS, OBSERVATION_SIZE, Observation
    from arena.envs.policy import PolicyBot, policy_bot
    from arena.envs.single_seat import ActionMasks, SingleSeat
    from arena.envs.spiel_bot import ISMCTS, openspiel_bot

__all__ = ["ACTIONS", "ISMCTS", "OBSERVATION_SIZE", "ActionMasks", "Observation", "PolicyBot", "SingleSeat",
           "openspiel_bot", "policy_bot"]

_HOMES = {"ACTIONS": "arena.envs.layout", "ISMCTS": "arena.envs.spiel_bot", "OBSERVATION_SIZE": "arena.envs.layout",
          "ActionMasks": "arena.envs.single_seat", "Observation": "arena.envs.layout",
          "PolicyBot": "arena.envs.policy", "SingleSeat": "arena.envs.single_seat",
          "openspiel_bot": "arena.envs.spiel_bot", "policy_bot": "arena.envs.policy"}
"""Where each public name lives (its module needs an optional extra)."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'arena.envs' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


if importlib.util.find_spec("gymnasium") is not None:
    importlib.import_module("arena.envs.single_seat").register()
