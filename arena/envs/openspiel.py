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

A state holds the rules core's game by value: a clone copies the hands, calls, cards and totals, and
an action is applied to the game as it stands, so neither replays the history (``benchmarks/env_speed.py
--clones`` prints clones and actions per second by round).

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

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyspiel

from arena.core.cards import SUIT_OF, Hand, card_text
from arena.core.dealing import Deal
from arena.core.game import MAX_REDEALS, Game, Round
from arena.core.rules import Rules, TrumpMode
from arena.core.scoring import score_table, tenths_per_point
from arena.core.turns import call_order, dealer_of
from arena.core.views import Phase
from arena.envs.layout import (
    ACTIONS,
    CALL_BASE,
    HAND,
    OBSERVATION_SIZE,
    TRUMP,
    action_text,
    observation_of,
)
from arena.envs.unseen import deal_unseen
from arena.errors import RulesError

__all__ = ["GAME_NAME", "REWARDS", "CallbreakGame", "CallbreakState", "rules_of"]

GAME_NAME = "python_callbreak"
"""The name the game is registered under."""
REWARDS = ("round", "terminal")
"""The values of the ``rewards`` parameter."""
_TRICKS = 52 * 13
"""The size of the information state's block of the trick each card was played in."""
_PUBLIC = OBSERVATION_SIZE - 52
"""The size of the public observation: the vector less its hand block."""
_PLACEHOLDER = Deal(tuple(range(52)))
"""The deal a game is given for a deal chance has not made yet; every hand of it holds every suit, so it
is never thrown in for want of a trump (the real deal replaces it once chance has made it)."""
_NONE = (0.0, 0.0, 0.0, 0.0)

_DEFAULTS: dict[str, Any] = {"profile": "nepali", "switches": "", "rewards": "round", "start_round": 1,
                             "start_dealer": -1, "start_totals": "", "end_round": 0}


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
        parameter_specification=_DEFAULTS,
    )


_TYPE = _game_type(pyspiel.GameType.RewardModel.REWARDS)
_TERMINAL_TYPE = _game_type(pyspiel.GameType.RewardModel.TERMINAL)


def rules_of(params: dict[str, Any]) -> Rules:
    """The rules of a game's parameters: the profile, with its switches (``"rounds:1 must_beat:off"``)."""
    switches: dict[str, str] = {}
    for item in str(params.get("switches", "")).replace(";", " ").split():
        key, colon, value = item.partition(":")
        if not colon or not key:
            raise RulesError(f"{item!r} is not a switch setting: write key:value, like rounds:1 (a game's name "
                             "cannot hold '=' in a parameter's value)")
        switches[key] = value
    return Rules.profile(str(params.get("profile", "nepali")), **switches)


@dataclasses.dataclass(frozen=True)
class _Setup:
    """A game's parameters, read and checked once: the rules, the rewards, where the game starts and ends."""

    rules: Rules
    terminal: bool
    """True when the returns come at the end only (``rewards=terminal``)."""
    first_dealer: int
    start_round: int
    start_totals: tuple[int, int, int, int]
    end_round: int
    points: int
    """Score units per point."""

    @classmethod
    def of(cls, params: dict[str, Any]) -> _Setup:
        rules = rules_of(params)
        rewards = str(params.get("rewards", "round"))
        if rewards not in REWARDS:
            raise ValueError(f"python_callbreak's rewards are 'round' or 'terminal', not {rewards!r}")
        start = int(params.get("start_round", 1))
        end = int(params.get("end_round", 0)) or rules.rounds
        if not 1 <= start <= end <= rules.rounds:
            raise ValueError(f"python_callbreak plays rounds 1 to {rules.rounds} under these rules: start_round "
                             f"{start} and end_round {end} must satisfy 1 <= start_round <= end_round <= "
                             f"{rules.rounds}")
        dealer = int(params.get("start_dealer", -1))
        if not -1 <= dealer <= 3:
            raise ValueError(f"start_dealer is a seat 0-3, or -1 for the tournament's dealer, not {dealer}")
        first = 0 if rules.draw_seating else 3
        if dealer >= 0:
            first = (dealer - (start - 1)) & 3
        words = str(params.get("start_totals", "")).split()
        try:
            totals = [int(word) for word in words] or [0, 0, 0, 0]
        except ValueError:
            totals = []
        if len(totals) != 4:
            raise ValueError(f"start_totals is four whole numbers in score units separated by spaces, "
                             f"like '120 -40 0 31', not {params.get('start_totals')!r}")
        return cls(rules, rewards == "terminal", first, start, (totals[0], totals[1], totals[2], totals[3]), end,
                   tenths_per_point(rules))

    @property
    def rounds(self) -> int:
        """The rounds the game plays."""
        return self.end_round - self.start_round + 1


class CallbreakGame(pyspiel.Game):
    """The game of one rules profile; see the module docstring."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_DEFAULTS, **(params or {})}
        setup = _Setup.of(params)
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


class _Deals:
    """A game's deal source: the deals chance has made, and the first one the game asked for that it has not."""

    __slots__ = ("decks", "missing")

    def __init__(self, decks: dict[tuple[int, int], Deal]) -> None:
        self.decks = decks
        self.missing: tuple[int, int] | None = None

    def __call__(self, round_number: int, attempt: int) -> Deal:
        deal = self.decks.get((round_number, attempt))
        if deal is not None:
            return deal
        if self.missing is None:
            self.missing = (round_number, attempt)
        return _PLACEHOLDER


_ROUND_LISTS = ("calls", "hands", "leaders", "played", "tricks_won", "winners")
"""The attributes of a :class:`Round` that change in place: a copy takes its own."""
_ROUND_VALUES = tuple(name for name in Round.__slots__ if name not in _ROUND_LISTS)
"""The others, numbers and immutable values that a copy shares."""


def _copied_round(rnd: Round) -> Round:
    copy = Round.__new__(Round)
    for name in _ROUND_VALUES:
        setattr(copy, name, getattr(rnd, name))
    copy.calls, copy.hands, copy.leaders = rnd.calls[:], rnd.hands[:], rnd.leaders[:]
    copy.played, copy.tricks_won, copy.winners = rnd.played[:], rnd.tricks_won[:], rnd.winners[:]
    return copy


def _copied_game(game: Game, deals: _Deals) -> Game:
    """A copy of ``game`` that draws its deals from ``deals``: its lists copied, its immutable values shared."""
    copy = Game.__new__(Game)
    copy.__dict__.update(game.__dict__)
    copy.deals = deals
    copy.totals, copy.results, copy.redeals = game.totals[:], game.results[:], game.redeals[:]
    copy.round = _copied_round(game.round)
    return copy


class _Table:
    """The play of one state: the deals made, the deal being made, the players' actions, and the game they give.

    One object (OpenSpiel clones a state by deep-copying each of its attributes apart). The rules core deals a
    round as the game reaches it, from a stand-in deal while chance has not made it; once chance has, the
    round is dealt again from the real deal (no player has acted in it yet). A copy copies the game by value.
    """

    __slots__ = ("actors", "dealing", "deals", "dealt_after", "game", "moves", "rewards", "setup")

    def __init__(self, setup: _Setup) -> None:
        self.setup = setup
        self.deals = _Deals({})
        self.dealing: list[int] = []
        """The cards of the deal being made, in dealing order."""
        self.moves: list[int] = []
        """Every player action so far."""
        self.actors: list[int] = []
        """The seat that made each of them."""
        self.dealt_after: list[tuple[int, tuple[int, int]]] = []
        """Each deal made, with how many player actions came before it (for the information state)."""
        self.rewards = _NONE
        game = Game(setup.rules, self.deals, first_dealer=setup.first_dealer)
        if setup.start_round > 1:
            self.deals.missing = None
            game.round = game._deal(setup.start_round, 0)
        game.totals = list(setup.start_totals)
        self.game = game

    def __deepcopy__(self, memo: dict[int, Any]) -> _Table:
        """A copy by value: the lists of the play copied, the game copied by :func:`_copied_game`."""
        copy = _Table.__new__(_Table)
        copy.setup = self.setup
        deals = copy.deals = _Deals(self.deals.decks.copy())
        deals.missing = self.deals.missing
        copy.dealing, copy.moves, copy.actors = self.dealing[:], self.moves[:], self.actors[:]
        copy.dealt_after = self.dealt_after[:]
        copy.rewards = self.rewards
        copy.game = _copied_game(self.game, deals)
        return copy

    @property
    def points(self) -> int:
        return self.setup.points

    @property
    def wanted(self) -> tuple[int, int] | None:
        """The (round, attempt) chance is dealing, or None when a player is to act or the game is over."""
        return None if self.game.over else self.deals.missing

    def deal(self, card: int) -> None:
        """Chance deals ``card`` at the next position of the deal being made."""
        self.dealing.append(card)
        if len(self.dealing) < 52:
            return
        deals = self.deals
        key = deals.missing
        assert key is not None
        deals.decks[key] = Deal(tuple(self.dealing))
        self.dealing = []
        self.dealt_after.append((len(self.moves), key))
        deals.missing = None
        # The round was dealt from the stand-in: deal it again from the real cards (the rules core's own
        # dealing, which throws the deal in where the rules say and then asks for the next attempt).
        self.game.round = self.game._deal(*key)

    def act(self, action: int) -> None:
        """The seat to act makes ``action`` (its legality checked by the rules core)."""
        game = self.game
        rnd = game.round
        seat = rnd.current_seat
        done = len(game.results)
        if action >= CALL_BASE:
            game.call(action - CALL_BASE)
        else:
            game.play_index(action)
        self.moves.append(action)
        self.actors.append(seat)
        if len(game.results) == done:
            self.rewards = _NONE
            return
        if not game.over and rnd.round_number >= self.setup.end_round:
            game.over = True  # the last round this game plays: the table stays as the round ended
            game.round = rnd
            self.deals.missing = None
        if self.setup.terminal:
            self.rewards = tuple(self.returns()) if game.over else _NONE  # type: ignore[assignment]
        else:
            self.rewards = tuple(score / self.points for score in game.results[-1].scores)  # type: ignore[assignment]

    def returns(self) -> list[float]:
        if self.setup.terminal and not self.game.over:
            return list(_NONE)
        points, start = self.setup.points, self.setup.start_totals
        return [(total - first) / points for total, first in zip(self.game.totals, start, strict=True)]

    def legal_actions(self) -> list[int]:
        """The legal actions of the seat to act, in increasing order."""
        rnd = self.game.round
        if rnd.phase is Phase.PLAYING:
            legal = rnd.legal_mask()
            return [card for card in range(52) if legal >> card & 1]
        return [CALL_BASE + value for value in self.setup.rules.call_range]

    @staticmethod
    def dealt_to(seat: int, cards: Sequence[int], dealer: int) -> list[int]:
        """The cards of a deal (or of its first positions) that went to ``seat``."""
        hand = call_order(dealer).index(seat)
        return list(cards[hand::4])

    def _held(self, seat: int) -> str:
        """The cards ``seat`` holds now, or while a deal is made the cards dealt to it so far."""
        if self.wanted is not None:
            cards = self.dealt_to(seat, self.dealing, self.game.round.dealer)
            return f"being dealt {' '.join(card_text(card) for card in cards) or '-'}"
        return f"hand {Hand.of_mask(self.game.round.hands[seat])}"

    def vector(self, seat: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        """``seat``'s observation vector (:mod:`arena.envs.layout`)."""
        game = self.game
        vector = observation_of(game.view(seat))["observation"]
        if self.wanted is not None:  # the game holds a stand-in deal: show the cards dealt so far
            vector[HAND:HAND + 52] = 0.0
            for card in self.dealt_to(seat, self.dealing, game.round.dealer):
                vector[HAND + card] = 1.0
            if self.setup.rules.trump_mode is TrumpMode.LAST_CARD:
                vector[TRUMP:TRUMP + 4] = 0.0
        return vector

    def hand_vector(self, seat: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        """``seat``'s cards as 52 values (the cards dealt to it so far while a deal is made)."""
        block = np.zeros(52, np.float32)
        if self.wanted is not None:
            block[self.dealt_to(seat, self.dealing, self.game.round.dealer)] = 1.0
        else:
            hand = self.game.round.hands[seat]
            block[[card for card in range(52) if hand >> card & 1]] = 1.0
        return block

    def trick_of_card(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """For each card, the trick of this round it was played in, one-hot (all 0: not played)."""
        block = np.zeros((52, 13), np.float32)
        if self.wanted is None:
            for position, card in enumerate(self.game.round.played):
                block[card, position >> 2] = 1.0
        return block

    def information(self, seats: Sequence[int], public: bool, viewer: int | None) -> str:
        """Everything seen, in order: each deal (its dealer and trump if ``public``), the cards ``seats`` were
        dealt in it, and (if ``public``) every call and card. ``viewer`` heads it: the seat it is for."""
        rules = self.setup.rules
        lines = [f"seat {viewer}" if viewer is not None else "public"]
        deals = iter(self.dealt_after)
        upcoming = next(deals, None)
        first_dealer = self.setup.first_dealer
        for count in range(len(self.moves) + 1):
            while upcoming is not None and upcoming[0] == count:
                (round_number, attempt) = upcoming[1]
                deck = self.deals.decks[upcoming[1]].deck
                dealer = dealer_of(first_dealer, round_number)
                trump = SUIT_OF[deck[51]] if rules.trump_mode is TrumpMode.LAST_CARD else int(rules.trump)
                line = f"round {round_number} deal {attempt}"
                if public:
                    line += f": dealer {dealer}, trump {'SHDC'[trump]}"
                for seat in seats:
                    mine = Hand.of_mask(sum(1 << card for card in self.dealt_to(seat, deck, dealer)))
                    line += f", {'you hold' if seat == viewer else f'seat {seat} holds'} {mine}"
                lines.append(line)
                upcoming = next(deals, None)
            if public and count < len(self.moves):
                lines.append(f"{self.actors[count]}: {action_text(self.moves[count])}")
        if self.wanted is not None:
            if public:
                lines.append(f"dealing: {len(self.dealing)} cards dealt")
            for seat in seats:
                so_far = self.dealt_to(seat, self.dealing, self.game.round.dealer)
                if so_far:
                    lines.append(f"{'being dealt' if seat == viewer else f'seat {seat} being dealt'}: "
                                 f"{' '.join(card_text(card) for card in so_far)}")
        return "\n".join(lines)

    def picture(self, seats: Sequence[int], public: bool, viewer: int | None) -> str:
        """The table now: the cards ``seats`` hold, and (if ``public``) what every seat sees."""
        lines = []
        if public:
            game = self.game
            view = game.view(0)  # its public part
            points = self.points
            unknown = self.wanted is not None and self.setup.rules.trump_mode is TrumpMode.LAST_CARD
            head = f"seat {viewer}, " if viewer is not None else ""
            lines.append(f"{head}round {view.round_number} of {self.setup.rules.rounds}, dealer {view.dealer}, "
                         f"trump {'?' if unknown else view.trump.letter}")
        for seat in seats:
            lines.append(self._held(seat) if seat == viewer else f"seat {seat}: {self._held(seat)}")
        if public:
            calls = " ".join("-" if call is None else str(call) for call in view.calls)
            played = ["".join(map(str, trick.cards)) for trick in view.tricks]
            dealing = f"; dealing, {len(self.dealing)} cards dealt" if self.wanted is not None else ""
            lines.append(f"calls {calls}; tricks won {' '.join(map(str, view.tricks_won))}; "
                         f"totals {' '.join(f'{total / points:g}' for total in view.totals)}{dealing}")
            lines.append(f"tricks {' '.join(played) or '-'}; this trick {' '.join(map(str, view.trick)) or '-'}")
        return "\n".join(lines)

    def resampled(self, seat: int, rng: random.Random) -> tuple[_Table, list[int]] | None:
        """A copy of this table in which every card of the deal in play that ``seat`` has not seen is dealt
        afresh, with that deal's cards in dealing order (as many as chance has dealt); None at the end, or when
        no deal fitting the play was found (then the real deal is the one sample)."""
        game = self.game
        if game.over:
            return None
        copy = self.__deepcopy__({})
        if self.wanted is not None:  # mid-deal: the other seats' cards so far, from the cards seat has not got
            dealer = game.round.dealer
            order = call_order(dealer)
            mine = set(self.dealt_to(seat, self.dealing, dealer))
            pool = [card for card in range(52) if card not in mine]
            rng.shuffle(pool)
            copy.dealing = [card if order[k & 3] == seat else pool.pop() for k, card in enumerate(self.dealing)]
            return copy, copy.dealing
        rnd = game.round
        world = deal_unseen(rnd, seat, rng)
        if world is None:
            return None
        deck = deck_of(world.initial, rnd.dealer, rnd.trump, self.setup.rules, rng)
        copy.deals.decks[(rnd.round_number, rnd.attempt)] = Deal(tuple(deck))
        copy.game.round = world
        return copy, deck


def deck_of(hands: Sequence[int], dealer: int, trump: int, rules: Rules, rng: random.Random) -> list[int]:
    """A dealing order (a deck) that deals ``hands`` (masks by seat) with ``dealer`` dealing: each hand's cards
    shuffled into its positions, and under ``trump_mode = last_card`` a card of the ``trump`` suit last."""
    deck = [0] * 52
    for position, seat in enumerate(call_order(dealer)):
        cards = [card for card in range(52) if hands[seat] >> card & 1]
        rng.shuffle(cards)
        if seat == dealer and rules.trump_mode is TrumpMode.LAST_CARD:
            # The trump was the dealer's last card: one of the trump suit must be last again.
            last = next(card for card in cards if SUIT_OF[card] == trump)
            cards.remove(last)
            cards.append(last)
        deck[position::4] = cards
    return deck


class CallbreakState(pyspiel.State):
    """A state of :class:`CallbreakGame`: a deal being made, a seat to act, or the game's end."""

    _script: list[tuple[int, int]] | None = None
    """While :meth:`_load` records a history: the players and actions it records (see there)."""
    _cursor = 0

    def __init__(self, game: CallbreakGame) -> None:
        super().__init__(game)
        self._table = _Table(game.setup)

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
