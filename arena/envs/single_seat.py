"""One seat against three arena bots, as a Gymnasium environment: :class:`SingleSeat`.

    from arena.envs import SingleSeat

    env = SingleSeat(seat=0, opponents=["heuristic", "house", "heuristic"], profile="nepali")
    observation, info = env.reset(seed=7)
    observation, reward, terminated, truncated, info = env.step(action)

An episode is one game. The agent's observations, actions and rewards are those of
:mod:`arena.envs.callbreak_v0` for its seat; the other seats are played by the opponents, which see
their seat's view as in a tournament and answer as a bot does. Seeding is the PettingZoo
environment's: ``reset(seed=S)`` plays deal set 1 of seed S and each ``reset()`` after it the next.

The agent should act within its mask. An action outside it ends the episode at once (``terminated``,
``info["illegal"]`` says which rule it broke) with ``illegal_reward``, by default the lowest total a
game can give, so that breaking a rule is never better than any legal play. An opponent that answers
illegally raises :class:`~arena.errors.IllegalAction`: it is a broken bot, not part of the game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from arena.core.cards import Card
from arena.core.game import Phase
from arena.core.scoring import score_table, tenths_per_point
from arena.envs.callbreak_v0 import AGENTS, raw_env
from arena.envs.layout import ACTIONS, CALL_BASE, Observation
from arena.errors import ArenaError, IllegalAction
from arena.event.setup.bots import HOUSE_BOT, load_bot_class, make_bot, registered_bot
from arena.players.local import InProcessBot

__all__ = ["ENV_ID", "ActionMasks", "SingleSeat", "register"]

ENV_ID = "callbreak/SingleSeat-v0"
"""The Gymnasium id of :class:`SingleSeat` (``gymnasium.make(ENV_ID, seat=..., opponents=[...])``)."""
DEFAULT_OPPONENTS = ("heuristic", "house", "house")
"""The opponents of ``gymnasium.make(ENV_ID)`` when none are given."""


class SingleSeat(gymnasium.Env[Observation, int]):
    """Seat ``seat`` of a Callbreak game, the three others played by ``opponents`` (in seat order after it).

    An opponent is a bot instance (anything with ``call(view)`` and ``play(view)``, such as a
    :class:`~arena.botkit.Bot`), or a string: ``"house"`` (the arena's house bot), the name of a bot the
    arena offers by name (``"heuristic"``, ``"montecarlo"``: the sample bots' entry points), or
    ``"module:Class"`` / ``"path/to/bot.py:Class"``. A bot named by a string gets a fresh instance every
    game, made as a tournament makes one, with seed 1, 2 or 3 by its place in the list.
    ``profile``, ``reward``, ``seed`` and the rules switches are those of
    :func:`arena.envs.callbreak_v0.env`.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 2}  # noqa: RUF012 (gymnasium declares it so)

    def __init__(self, seat: int = 0, opponents: Sequence[InProcessBot | str] = (), profile: str = "nepali", *,
                 reward: str = "round", seed: int | None = None, illegal_reward: float | None = None,
                 render_mode: str | None = None, **switches: object) -> None:
        if not 0 <= seat <= 3:
            raise ArenaError(f"seats are numbered 0 to 3, not {seat}")
        if len(opponents) != 3:
            raise ArenaError(f"a table needs three opponents for the seat, not {len(opponents)}")
        self.seat = seat
        self.agent = AGENTS[seat]
        self.table = raw_env(profile, reward=reward, seed=seed, render_mode=render_mode, **switches)
        """The PettingZoo environment the game is played in."""
        self.render_mode = render_mode
        rules = self.table.rules
        self.illegal_reward = illegal_reward if illegal_reward is not None else (
            rules.rounds * min(score_table(rules)[call][tricks] for call in rules.call_range for tricks in range(14))
            / tenths_per_point(rules))
        self._specs = [(spec, load_bot_class(_spec(spec))) if isinstance(spec, str) else (spec, None)
                       for spec in opponents]
        self._bots: dict[int, InProcessBot] = {}
        self.observation_space = self.table.observation_space(self.agent)
        self.action_space = self.table.action_space(self.agent)
        self._done = True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[
            Observation, dict[str, Any]]:
        """A new game (see the module docstring for its deals); the opponents play until the seat is to act."""
        super().reset(seed=seed)
        self.table.reset(seed=seed, options=options)
        self._bots = {}
        for place, (given, factory) in enumerate(self._specs):
            seat = (self.seat + 1 + place) & 3
            self._bots[seat] = make_bot(factory, place + 1, {}) if factory is not None else given  # type: ignore[assignment]
        self._done = False
        self._opponents_play()
        return self.table.observe(self.agent), {}

    def step(self, action: int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """The seat acts; the opponents play until it is to act again or the game is over."""
        if self._done:
            raise ArenaError("the game is over: call reset() for a new one")
        table = self.table
        try:
            table.step(int(action))
        except IllegalAction as err:  # refused by the rules core, which left the game as it was
            self._done = True
            return table.observe(self.agent), float(self.illegal_reward), True, False, {"illegal": str(err)}
        reward = table.rewards[self.agent]
        reward += self._opponents_play()
        return table.observe(self.agent), float(reward), self._done, False, {}

    def render(self) -> str | None:
        """The table as text, with every hand: returned under ``render_mode="ansi"``, printed under ``"human"``
        (which also prints it after every step of the game)."""
        return self.table.render()

    def _opponents_play(self) -> float:
        """Plays the other seats until this one is to act or the game ends; the seat's rewards meanwhile."""
        table = self.table
        game = table.game
        reward = 0.0
        while not game.over and game.current_seat != self.seat:
            seat = game.current_seat
            bot = self._bots[seat]
            view = game.view(seat)
            if game.phase is Phase.CALLING:
                action = CALL_BASE + int(bot.call(view))
            else:
                card = bot.play(view)
                action = (card if isinstance(card, Card) else Card.parse(card)).index
            table.step(action)
            game = table.game
            reward += table.rewards[self.agent]
        self._done = game.over
        return reward


def _spec(name: str) -> str:
    """The ``module:Class`` of an opponent given as a string (see :class:`SingleSeat`)."""
    if ":" in name:
        return name
    return HOUSE_BOT if name == "house" else registered_bot(name)


class ActionMasks(gymnasium.ObservationWrapper[npt.NDArray[np.float32], int, Observation]):
    """A :class:`SingleSeat` (or ``gymnasium.make(ENV_ID)``) whose observation is the vector alone, a ``Box``,
    with the mask of the legal actions from :meth:`action_masks`: what sb3-contrib's ``MaskablePPO`` takes as it
    is (``MaskablePPO("MlpPolicy", ActionMasks(env))``)."""

    def __init__(self, env: gymnasium.Env[Observation, int]) -> None:
        super().__init__(env)
        space = env.observation_space
        assert isinstance(space, gymnasium.spaces.Dict), "ActionMasks wraps an environment of SingleSeat's observations"
        self.observation_space = space["observation"]
        self._mask: npt.NDArray[np.bool_] = np.zeros(ACTIONS, bool)

    def observation(self, observation: Observation) -> npt.NDArray[np.float32]:
        self._mask = observation["action_mask"].astype(bool)
        return observation["observation"]

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal actions of the seat now (all False once the game is over)."""
        return self._mask


def register() -> None:
    """Registers :data:`ENV_ID` with Gymnasium (done when :mod:`arena.envs` is imported, Gymnasium installed)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="arena.envs.single_seat:SingleSeat",
                           kwargs={"opponents": DEFAULT_OPPONENTS})
