"""Callbreak as an OpenSpiel game: importing this module registers ``python_callbreak`` with pyspiel.

    import pyspiel
    import arena.envs.openspiel  # registers the game

    game = pyspiel.load_game("python_callbreak", {"profile": "pagat", "switches": "rounds:1"})
    state = game.new_initial_state()

Parameters (every one optional):

- ``profile``, a rules profile of ``docs/rules.md`` (``nepali`` by default), and ``switches``, rules
  switches as ``key:value`` separated by spaces or semicolons (none by default; so the game's name,
  ``python_callbreak(profile=pagat,switches=rounds:1 must_beat:off)``, holds no ``=`` or ``,`` in a value);
- ``rewards``: ``round`` (the default: each round's scores as it ends) or ``terminal`` (the returns at
  the end only, and 0 before; the game's type then says ``RewardModel.TERMINAL``, which OpenSpiel's
  ``MCTSBot`` and the AlphaZero-style evaluators ask for);
- ``start_round``, ``start_dealer``, ``start_totals``: a game that begins at the deal of round
  ``start_round`` (1 by default) with ``start_dealer`` dealing it (-1, the default: the dealer a
  tournament gives that round) and the game totals ``start_totals`` before it, four whole numbers in the
  rules' score units (tenths, or DY points) separated by spaces (none: 0 each). What an arena seat is
  shown mid-game is such a game's state (:mod:`arena.envs.spiel_bot`);
- ``end_round``: the last round played (0, the default: the rules' last), so a search can stop at the
  end of the round in play.

A game is the rules core's :class:`~arena.core.game.Game` under those rules; players 0-3 are the seats
0-3 (seat s+1 plays after seat s), and the first dealer is the one a tournament gives: seat 3, or under
``draw_seating`` seat 0 (the seat that drew highest).

Chance deals every deal card by card: 52 chance nodes, the outcome at deal position k a card index
(uniform over the cards not dealt yet) that goes to hand ``k % 4``, hand 0 being the seat after the
dealer, as in :mod:`arena.core.dealing`. So the chance actions ``seeded_deal(seed, game, round,
attempt).deck`` are the arena's deal; :meth:`CallbreakState.deal_wanted` says which (round, attempt)
a chance node is dealing. A deal the rules throw in (``redeal_below``, ``redeal_no_trump``) is followed
by the 52 chance nodes of the next attempt.

Player actions are those of :mod:`arena.envs.layout` (0-51 a card, ``52 + v`` a call of v). Returns
are points, as the standings count them (tenths ÷ 10; DY points under DY scoring), scored in the rounds
the game plays (``start_totals`` are not counted). With ``rewards=round``, :meth:`rewards` gives each
round's scores from the action that ends the round until the next player action, so that they add up
to the returns at every decision node, where OpenSpiel counts them.

A state holds the rules core's game by value (its play is a :class:`~arena.envs.spiel_table.Table`): a clone
copies the hands, calls, cards and totals, and an action is applied to the game as it stands, so neither replays
the history (``benchmarks/env_speed.py --clones`` prints clones and actions per second by round).

Observations (:meth:`CallbreakGame.make_py_observer`, for every ``pyspiel.IIGObservationType``):

- the observation tensor is the vector of :mod:`arena.envs.layout`, value for value what
  :mod:`arena.envs.callbreak_v0` gives that seat; while a deal is dealt, its hand block holds the cards
  dealt to the seat so far (and the trump block is empty until the last card under ``trump_mode =
  last_card``);
- the information-state tensor is that vector, then for each card (52, card order) the trick of this
  round it was played in, one-hot over 13: with the vector's cards by seat, that gives the order of
  every trick. Earlier rounds enter by the totals only, as each round is a fresh deal, so their
  cards say nothing about the cards in play;
- the information-state string is perfect recall: the seat's cards of every deal, and every call and
  card of the game in order; the observation string is the table now, as the seat sees it;
- the public observation (``private_info=PrivateInfoType.NONE``) is what every seat sees, the same
  for every player: its tensor is the vector less its hand block, with the seats counted from seat 0
  (the calls, the cards played and by whom, the trick, tricks won, totals, round, phase, trump and
  dealer), and its string the table without a hand (with ``perfect_recall``, every deal's dealer and
  trump and every call and card in order);
- the private observation (``public_info=False``) is the seat's own cards: its hand (52), or with
  ``ALL_PLAYERS`` the four hands from the observing seat on (4×52);
- with ``ALL_PLAYERS`` and the public information, the tensor is the observation vector followed by the
  other three hands (from the seat after the observing one), and the strings show every hand.

:meth:`CallbreakState.resample_from_infostate`, which OpenSpiel's ISMCTS asks for, deals the cards
the seat has not seen afresh among the other seats, under what the play shows
(:func:`arena.envs.unseen.deal_unseen`). The ISMCTS that plays it is the Python one,
``open_spiel.python.algorithms.ismcts.ISMCTSBot``; ``pyspiel.ISMCTSBot``, in C++, crashes on Python
games (OpenSpiel's own ``python_kuhn_poker`` too, with open_spiel 2.0.2).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyspiel

from arena.core.cards import Hand, card_text
from arena.core.game import MAX_REDEALS, Game
from arena.core.scoring import score_table
from arena.envs.layout import (
    ACTIONS,
    OBSERVATION_SIZE,
    action_text,
)
from arena.envs.spiel_table import DEFAULTS, Setup, Table

__all__ = ["GAME_NAME", "CallbreakGame", "CallbreakState"]

GAME_NAME = "python_callbreak"
"""The name the game is registered under."""
_PUBLIC = OBSERVATION_SIZE - 52
"""The size of the public observation: the vector less its hand block."""


def _game_type(reward_model: Any) -> Any:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Callbreak (callbreak-arena rules core)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=reward_model,
        max_num_players=4,
        min_num_players=4,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=DEFAULTS,
    )


_TYPE = _game_type(pyspiel.GameType.RewardModel.REWARDS)
_TERMINAL_TYPE = _game_type(pyspiel.GameType.RewardModel.TERMINAL)


class CallbreakGame(pyspiel.Game):
    """The game of one rules profile; see the module docstring."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**DEFAULTS, **(params or {})}
        setup = Setup.of(params)
        rules = setup.rules
        table = score_table(rules)
        scores = [table[call][tricks] for call in rules.call_range for tricks in range(14)]
        deals = setup.rounds * (MAX_REDEALS + 1)
        info = pyspiel.GameInfo(
            num_distinct_actions=ACTIONS,
            max_chance_outcomes=52,
            num_players=4,
            min_utility=setup.rounds * min(scores) / setup.points,
            max_utility=setup.rounds * max(scores) / setup.points,
            utility_sum=None,
            # Each deal asks four calls; the last deal of a round is played, 52 cards.
            max_game_length=deals * 4 + setup.rounds * 52,
        )
        super().__init__(_TERMINAL_TYPE if setup.terminal else _TYPE, info, params)
        self.setup = setup
        self.rules = rules
        self.first_dealer = setup.first_dealer

    def new_initial_state(self) -> CallbreakState:
        """A game about to be dealt."""
        return CallbreakState(self)

    def max_chance_nodes_in_history(self) -> int:
        return self.setup.rounds * (MAX_REDEALS + 1) * 52

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> _Observer:
        """The observer of ``iig_obs_type`` (the observation's by default; see the module docstring)."""
        if params:
            raise ValueError(f"python_callbreak's observations take no parameters, not {params}")
        return _Observer(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))
class CallbreakState(pyspiel.State):
    """A state of :class:`CallbreakGame`: a deal being made, a seat to act, or the game's end."""

    _script: list[tuple[int, int]] | None = None
    """While :meth:`_load` records a history: the players and actions it records (see there)."""
    _cursor = 0

    def __init__(self, game: CallbreakGame) -> None:
        super().__init__(game)
        self._table = Table(game.setup)

    @property
    def table(self) -> Game:
        """The rules core's game being played (hidden cards and all: for tools, never for an agent). While a
        deal is being made it holds a stand-in deal for the round to come."""
        return self._table.game

    def deal_wanted(self) -> tuple[int, int] | None:
        """The (round, attempt) a chance node is dealing, as :func:`~arena.core.dealing.seeded_deal` numbers
        them; None at a player's turn and at the end."""
        return self._table.wanted

    def current_player(self) -> int:
        if self._script is not None:
            return self._script[self._cursor][0]
        table = self._table
        if table.game.over:
            return int(pyspiel.PlayerId.TERMINAL)
        if table.deals.missing is not None:
            return int(pyspiel.PlayerId.CHANCE)
        return table.game.round.current_seat

    def _legal_actions(self, player: int) -> list[int]:
        return self._table.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        dealt = set(self._table.dealing)
        left = [card for card in range(52) if card not in dealt]
        return [(card, 1.0 / len(left)) for card in left]

    def _apply_action(self, action: int) -> None:
        if self._script is not None:
            return  # the table is already what the recorded history makes it
        if self._table.wanted is not None:
            self._table.deal(int(action))
        else:
            self._table.act(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {card_text(action)}"
        return action_text(action) if 0 <= action < ACTIONS else f"action {action}"

    def is_terminal(self) -> bool:
        return self._table.game.over

    def rewards(self) -> list[float]:
        """With ``rewards=round``, each seat's score, in points, of the round the last player action ended, until
        the next one (through the chance nodes of the next deal: OpenSpiel counts rewards at decision nodes),
        else 0; with ``rewards=terminal``, the returns at the end and 0 before."""
        return list(self._table.rewards)

    def returns(self) -> list[float]:
        """Each seat's points scored in this game so far (its total less ``start_totals``); with
        ``rewards=terminal``, 0 until the end."""
        return self._table.returns()

    def resample_from_infostate(self, player: int, sampler: Any) -> CallbreakState:
        """A state ``player`` cannot tell from this one: the cards it has not seen in the deal in play dealt
        afresh (``sampler`` is called once, for the generator's seed). Its history is this one's with the deal
        in play's chance actions replaced; the game is copied by value, not replayed."""
        rng = random.Random(int(sampler() * 2**53))
        table = self._table
        made = table.resampled(player, rng)
        state: CallbreakState = self.get_game().new_initial_state()
        history = self.full_history()
        if made is None:
            state._table = table.__deepcopy__({})
            new_cards: list[int] = []
            first = len(history)
        else:
            state._table, new_cards = made
            # The deal in play's chance actions are the last ones: the cards dealt so far, or its 52.
            first = 52 * (len(table.dealt_after) - (0 if table.wanted is not None else 1))
        script: list[tuple[int, int]] = []
        chance = 0
        for item in history:
            action = item.action
            if item.player == pyspiel.PlayerId.CHANCE:
                if chance >= first:
                    action = new_cards[chance - first]
                chance += 1
            script.append((item.player, action))
        state._load(script)
        return state

    def _load(self, script: list[tuple[int, int]]) -> None:
        """Records ``script``'s (player, action) pairs as this state's history, its table already in place."""
        self._script = script
        try:
            for position, (_player, action) in enumerate(script):
                self._cursor = position
                self.apply_action(action)
        finally:
            self._script = None

    def __str__(self) -> str:
        table = self._table
        game = table.game
        rnd = game.round
        moment = "dealing" if table.wanted is not None else "game over" if game.over else rnd.phase.name.lower()
        lines = [f"round {rnd.round_number}, dealer {rnd.dealer}, {moment}"]
        if table.wanted is None:
            lines += [f"seat {seat}: {Hand.of_mask(rnd.hands[seat])}" for seat in range(4)]
        lines.append(f"actions {' '.join(action_text(action) for action in table.moves)}")
        return "\n".join(lines)


class _Observer:
    """OpenSpiel's observer of one observation type (its ``tensor``, ``dict``, ``set_from`` and ``string_from``)."""

    def __init__(self, obs_type: Any) -> None:
        self.public = bool(obs_type.public_info)
        self.recall = bool(obs_type.perfect_recall)
        private = obs_type.private_info
        self.single = private == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.every = private == pyspiel.PrivateInfoType.ALL_PLAYERS
        shapes: list[tuple[str, tuple[int, ...]]] = []
        if self.public and not self.every and not self.single:
            shapes.append(("public", (_PUBLIC,)))
        elif self.public:
            shapes.append(("observation", (OBSERVATION_SIZE,)))
            if self.every:
                shapes.append(("other_hands", (3, 52)))
        elif self.single:
            shapes.append(("hand", (52,)))
        elif self.every:
            shapes.append(("hands", (4, 52)))
        if self.public and self.recall:
            shapes.append(("trick_of_card", (52, 13)))
        self.tensor = np.zeros(sum(int(np.prod(shape)) for _name, shape in shapes), np.float32)
        self.dict: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        offset = 0
        for name, shape in shapes:
            size = int(np.prod(shape))
            self.dict[name] = self.tensor[offset:offset + size].reshape(shape)
            offset += size

    def _seats(self, player: int) -> list[int]:
        """The seats whose cards the observation shows, the observing one first."""
        if self.every:
            return [(player + k) & 3 for k in range(4)]
        return [player] if self.single else []

    def set_from(self, state: CallbreakState, player: int) -> None:
        table = state._table
        seat = player if self.single or self.every else 0  # the public observation: seats from seat 0
        out = self.dict
        if "public" in out:
            out["public"][:] = table.vector(0)[52:]
        if "observation" in out:
            out["observation"][:] = table.vector(seat)
        if "other_hands" in out:
            for k in range(3):
                out["other_hands"][k] = table.hand_vector((seat + 1 + k) & 3)
        if "hand" in out:
            out["hand"][:] = table.hand_vector(seat)
        if "hands" in out:
            for k in range(4):
                out["hands"][k] = table.hand_vector((seat + k) & 3)
        if "trick_of_card" in out:
            out["trick_of_card"][:] = table.trick_of_card()

    def string_from(self, state: CallbreakState, player: int) -> str:
        table = state._table
        seats = self._seats(player)
        if not seats and not self.public:
            return ""
        viewer = player if seats else None
        if self.recall:
            return table.information(seats, self.public, viewer)
        return table.picture(seats, self.public, viewer)


pyspiel.register_game(_TYPE, CallbreakGame)
