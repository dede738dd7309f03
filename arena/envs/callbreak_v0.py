"""Callbreak as a PettingZoo AEC environment, on the arena's rules core: ``env()`` and ``raw_env``.

    from arena.envs import callbreak_v0

    env = callbreak_v0.env(profile="pagat", rounds=1, seed=7)
    env.reset()
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else policy(observation)
        env.step(action)

Agents ``player_0`` to ``player_3`` are the seats 0-3 (seat s+1 plays after seat s). Any profile and
switch of ``docs/rules.md`` is an argument (``env("nepali", must_beat=False)``). The observation is
:data:`~arena.envs.layout.Observation` and the actions are those of :mod:`arena.envs.layout`; an
action outside the mask raises :class:`~arena.errors.IllegalPlay` or :class:`~arena.errors.IllegalCall`
with the rule it breaks, and changes nothing.

Rewards are points, as the standings count them (tenths ÷ 10; DY points under DY scoring). With
``reward="round"`` (the default) every agent is rewarded its round score at the step that ends each
round; with ``reward="game"`` each gets its game total at the step that ends the game, and 0
before. Either way an agent's rewards over a game add up to its game total.

Seeding: ``reset(seed=S)`` plays deal set 1 of seed S, and each ``reset()`` after it the next deal
set of the same seed, with the first dealer a tournament gives it: so the games are those of
``callbreak-arena run`` with ``seed = S`` (game k is deal set k, seat for seat; under ``draw_seating``
the drawn first dealer, which is seat 0). ``reset(options={"deal_set": k})`` plays deal set k. The
``seed`` argument of :func:`env` is the seed of a first ``reset()`` that gives none; without either,
a random seed is drawn.
"""

from __future__ import annotations

import secrets
from typing import Any, ClassVar

import gymnasium
import numpy as np
import numpy.typing as npt
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from arena.core.dealing import draw_seating, seeded_deals
from arena.core.game import Game, Round
from arena.core.rules import Rules
from arena.core.scoring import tenths_per_point
from arena.core.views import Phase
from arena.envs.layout import (
    ACTIONS,
    CALL_BASE,
    CARD_ACTIONS,
    OBSERVATION_SIZE,
    Observation,
    Tracker,
    action_text,
    no_mask,
    observation_bounds,
)
from arena.errors import ArenaError, IllegalCall, IllegalPlay

__all__ = ["AGENTS", "REWARDS", "env", "raw_env"]

AGENTS = ("player_0", "player_1", "player_2", "player_3")
"""The agents, by seat."""
REWARDS = ("round", "game")
"""When rewards are given: each round's score at the end of the round, or the game total at the end."""
_SEAT = {agent: seat for seat, agent in enumerate(AGENTS)}
_PLAYING, _OVER = Phase.PLAYING, Phase.OVER


def env(profile: str = "nepali", *, reward: str = "round", seed: int | None = None,
        render_mode: str | None = None, **switches: object) -> AECEnv:
    """The environment, wrapped as PettingZoo's own are: functions called out of order raise."""
    return _Ordered(raw_env(profile, reward=reward, seed=seed, render_mode=render_mode, **switches))


class _Ordered(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper, with ``last`` and ``step`` passed straight on once reset.

    Its own reach the environment's attributes one lookup at a time, and any lookup on a wrapper costs
    several times one on the environment (the wrapper passes unknown names on through ``__getattr__``),
    which adds up to a good part of a step. So :meth:`reset` sets ``last`` to the environment's own (once
    reset, there is nothing left to enforce) and ``step`` to a :class:`_Steps`, which keeps what it reads
    in slots; both are bound methods, so a copy or a pickle of the wrapper holds its own environment.
    """

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        inner: raw_env = self.env
        self.last = inner.last  # type: ignore[method-assign]
        self.step = _Steps(self, inner).step

    def last(self, observe: bool = True) -> tuple[Observation | None, float, bool, bool, dict[str, Any]]:
        raise AttributeError("last() cannot be called before reset()")  # reset() sets the environment's own


class _Steps:
    """The order-enforcing wrapper's ``step`` once reset: steps the environment while it has agents."""

    __slots__ = ("inner", "wrapper")

    def __init__(self, wrapper: _Ordered, inner: raw_env) -> None:
        self.wrapper = wrapper
        self.inner = inner

    def step(self, action: int | None) -> None:
        inner = self.inner
        if inner.agents:
            self.wrapper._has_updated = True
            inner.step(action)
        else:  # PettingZoo's wrapper warns of a step after the game
            wrappers.OrderEnforcingWrapper.step(self.wrapper, action)


class raw_env(AECEnv):
    """The unwrapped environment (PettingZoo's name for it); see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"name": "callbreak_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": False}

    def __init__(self, profile: str = "nepali", *, reward: str = "round", seed: int | None = None,
                 render_mode: str | None = None, **switches: object) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ArenaError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ArenaError(f"render_mode must be None, 'ansi' or 'human', not {render_mode!r}")
        self.rules = Rules.profile(profile, **switches)
        self.reward = reward
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        low, high = observation_bounds(self.rules)
        space = gymnasium.spaces.Dict({
            "observation": gymnasium.spaces.Box(low, high, (OBSERVATION_SIZE,), np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (ACTIONS,), np.int8),
        })
        self.observation_spaces = {agent: space for agent in AGENTS}
        self.action_spaces = {agent: gymnasium.spaces.Discrete(ACTIONS) for agent in AGENTS}
        self.seed = seed
        """The seed of the games being played (drawn at the first reset when none was given)."""
        self.deal_set = 0
        """The deal set of the game being played (from 1)."""
        self._points = tenths_per_point(self.rules)
        self._tracker = Tracker(self.rules)
        self._rewarded = False
        self._over = False
        if render_mode == "human":  # the table after every step too, as Gymnasium's human mode does
            self.step = self._step_and_render  # type: ignore[method-assign]
        self.game = Game(self.rules, seeded_deals(0, 1))
        """The game being played, on the rules core (hidden cards and all: for tools, never for an agent)."""

    # -- the AEC interface -----------------------------------------------------------------------

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game: deal set 1 of ``seed``, or the next deal set of the seed in use (see the module
        docstring); ``options={"deal_set": k}`` chooses the deal set (other options are ignored)."""
        if seed is not None:
            self.seed, self.deal_set = int(seed), 0
        elif self.seed is None:
            self.seed, self.deal_set = secrets.randbelow(2**32), 0
        wanted = (options or {}).get("deal_set")
        self.deal_set = int(wanted) if wanted is not None else self.deal_set + 1
        if self.deal_set < 1:
            raise ArenaError(f"deal sets are numbered from 1, not {self.deal_set}")
        first_dealer = draw_seating(self.seed, self.deal_set)[1] if self.rules.draw_seating else 3
        self.game = Game(self.rules, seeded_deals(self.seed, self.deal_set), game_number=self.deal_set,
                         first_dealer=first_dealer)
        self._tracker.dealt(self.game)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self._rewarded = False
        self._over = False
        """True once the game is over (every agent terminated)."""
        self.agent_selection = AGENTS[self.game.current_seat]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> Observation:
        """What ``agent``'s seat may know now: its vector and action mask (new arrays)."""
        seat = _SEAT[agent]
        game = self.game
        rnd = game.round
        if seat != rnd.current_seat or game.over:
            return {"observation": self._tracker.observation(seat), "action_mask": no_mask()}
        if rnd.phase is _PLAYING:
            return self._tracker.to_play(seat, rnd.legal_mask())
        return self._tracker.to_call(seat)

    def last(self, observe: bool = True) -> tuple[Observation | None, float, bool, bool, dict[str, Any]]:
        agent = self.agent_selection
        if self._over or not observe:
            return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                    self.terminations[agent], self.truncations[agent], self.infos[agent])
        # The selected agent is the seat to act (observe()'s work, without its questions): the hot path.
        rnd = self.game.round
        observation = (self._tracker.to_play(rnd.current_seat, rnd.legal_mask()) if rnd.phase is _PLAYING
                       else self._tracker.to_call(rnd.current_seat))
        return observation, self._cumulative_rewards[agent], False, False, self.infos[agent]

    def step(self, action: int | None) -> None:
        """The selected agent acts: a card (0-51) or a call (52 + v); ``None`` once it is terminated."""
        agent = self.agent_selection
        if self._over:  # every agent is terminated at once, at the end of the game
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalPlay(f"{agent} is to act: None is the action of a terminated agent only")
        action = int(action)
        game = self.game
        rnd = game.round
        if rnd.phase is _PLAYING:
            seat = rnd.current_seat
            try:  # the round refuses what is not a legal card, and changes nothing
                game.play_index(action)
            except IllegalPlay:
                if 0 <= action < CARD_ACTIONS:
                    raise
                raise IllegalPlay(f"{action_text(action)} is not a card: it is time to play one") from None
            self._tracker.played(seat, action, rnd)
        else:
            self._call(action, rnd)
            rnd = game.round  # the calls may have thrown the deal in
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            rewards = self.rewards
            for each in AGENTS:
                rewards[each] = 0.0
            self._rewarded = False
        if rnd.phase is _OVER:
            self._round_over(rnd.scores or (0, 0, 0, 0))
            rnd = game.round
        self.agent_selection = AGENTS[rnd.current_seat]

    def _call(self, action: int, rnd: Round) -> None:
        """The selected agent calls ``action - 52`` in ``rnd``."""
        if action < CALL_BASE:
            raise IllegalCall(f"{action_text(action)} is a card: it is time to call, with action 52 + the call")
        game = self.game
        seat = rnd.current_seat
        game.call(action - CALL_BASE)
        if game.round is rnd:
            self._tracker.called(seat, action - CALL_BASE, rnd)
        else:  # the calls threw the deal in: the same round is dealt again
            self._tracker.dealt(game)

    def _step_and_render(self, action: int | None) -> None:
        raw_env.step(self, action)
        self.render()

    def _round_over(self, scores: tuple[int, int, int, int]) -> None:
        """Rewards, the end of the game, or the next round's deal."""
        game = self.game
        points = self._points
        given: tuple[int, ...] | None = scores if self.reward == "round" else None
        if game.over:
            if given is None:
                given = tuple(game.totals)
            for agent in AGENTS:
                self.terminations[agent] = True
            self._over = True
            self._tracker.finished(game)
        else:
            self._tracker.dealt(game)
        if given is not None:
            rewards, cumulative = self.rewards, self._cumulative_rewards
            for agent, score in zip(AGENTS, given, strict=True):
                rewards[agent] = score / points
                cumulative[agent] += score / points
            self._rewarded = True

    def state(self) -> npt.NDArray[np.float32]:
        """The whole table for centralised training: the four hands (52 values each, by seat), then
        the observation blocks with absolute seats (seat 0's part first)."""
        return self._tracker.table

    def render(self) -> str | None:
        """The table as text: every hand, the calls, the trick and the totals; returned under
        ``render_mode="ansi"``, printed under ``"human"`` (which also prints it after every reset and step)."""
        if self.render_mode == "human":
            print(self.table_text(), flush=True)
            return None
        return self.table_text() if self.render_mode == "ansi" else None

    def table_text(self) -> str:
        """The table as text, whatever the render mode."""
        game = self.game
        rnd = game.round
        lines = [f"deal set {self.deal_set}, round {rnd.round_number}, dealer {rnd.dealer}, "
                 f"trump {'SHDC'[rnd.trump]}{', game over' if game.over else ''}"]
        for seat in range(4):
            view = game.view(seat)
            call = rnd.calls[seat]
            lines.append(f"  {AGENTS[seat]}: {view.hand}  call {call if call is not None else '-'}, "
                         f"won {rnd.tricks_won[seat]}, total {game.totals[seat] / self._points:g}")
        lines.append("  trick: " + " ".join(map(str, game.view(0).trick)))
        return "\n".join(lines)

    def close(self) -> None:
        """Nothing to release."""
