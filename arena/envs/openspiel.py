"""Callbreak as an OpenSpiel game: importing this module registers ``python_callbreak`` with pyspiel.

    import pyspiel
    import arena.envs.openspiel  # registers the game

    game = pyspiel.load_game("python_callbreak", {"profile": "pagat", "switches": "rounds:1"})
    state = game.new_initial_state()

Parameters: ``profile``, a rules profile of ``docs/rules.md`` (``nepali`` by default), and ``switches``,
rules switches as ``key:value`` separated by spaces or semicolons (none by default; so the game's
name, ``python_callbreak(profile=pagat,switches=rounds:1 must_beat:off)``, holds no ``=`` or ``,`` in a
value). A game is the rules core's :class:`~arena.core.game.Game` under those rules; players 0-3 are
the seats 0-3 (seat s+1 plays after seat s), and the first dealer is the one a tournament gives: seat
3, or under ``draw_seating`` seat 0 (the seat that drew highest).

Chance deals every deal card by card: 52 chance nodes, the outcome at deal position k a card index
(uniform over the cards not dealt yet) that goes to hand ``k % 4``, hand 0 being the seat after the
dealer, as in :mod:`arena.core.dealing`. So the chance actions ``seeded_deal(seed, game, round,
attempt).deck`` are the arena's deal; :meth:`CallbreakState.deal_wanted` says which (round, attempt)
a chance node is dealing. A deal the rules throw in (``redeal_below``, ``redeal_no_trump``) is followed
by the 52 chance nodes of the next attempt.

Player actions are those of :mod:`arena.envs.layout` (0-51 a card, ``52 + v`` a call of v). Returns
are points, as the standings count them (tenths ÷ 10; DY points under DY scoring); :meth:`rewards`
gives each round's scores from the action that ends the round until the next player action, so that
they add up to the returns at every decision node, where OpenSpiel counts them.

Observations, for one seat:

- the observation tensor is the vector of :mod:`arena.envs.layout`, value for value what
  :mod:`arena.envs.callbreak_v0` gives that seat; while a deal is dealt, its hand block holds the cards
  dealt to the seat so far (and the trump block is empty until the last card under ``trump_mode =
  last_card``);
- the information-state tensor is that vector, then for each card (52, card order) the trick of this
  round it was played in, one-hot over 13: with the vector's cards by seat, that gives the order of
  every trick. Earlier rounds enter by the totals only, as each round is a fresh deal, so their
  cards say nothing about the cards in play;
- the information-state string is perfect recall: the seat's cards of every deal, and every call and
  card of the game in order; the observation string is the table now, as the seat sees it.

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

from arena.core.cards import SUIT_OF, Hand, card_text
from arena.core.dealing import Deal
from arena.core.game import MAX_REDEALS, Game
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

__all__ = ["GAME_NAME", "CallbreakGame", "CallbreakState", "rules_of"]

GAME_NAME = "python_callbreak"
"""The name the game is registered under."""
_TRICKS = 52 * 13
"""The size of the information state's block of the trick each card was played in."""
_PLACEHOLDER = Deal(tuple(range(52)))
"""The deal a game is given for a deal chance has not made yet; every hand of it holds every suit, so it
is never thrown in for want of a trump (the game is rebuilt from the real deal once it is made)."""

_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Callbreak (callbreak-arena rules core)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=4,
    min_num_players=4,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"profile": "nepali", "switches": ""},
)


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


class CallbreakGame(pyspiel.Game):
    """The game of one rules profile; see the module docstring."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        rules = rules_of(params or {})
        points = tenths_per_point(rules)
        table = score_table(rules)
        scores = [table[call][tricks] for call in rules.call_range for tricks in range(14)]
        deals = rules.rounds * (MAX_REDEALS + 1)
        info = pyspiel.GameInfo(
            num_distinct_actions=ACTIONS,
            max_chance_outcomes=52,
            num_players=4,
            min_utility=rules.rounds * min(scores) / points,
            max_utility=rules.rounds * max(scores) / points,
            utility_sum=None,
            # Each deal asks four calls; the last deal of a round is played, 52 cards.
            max_game_length=deals * 4 + rules.rounds * 52,
        )
        super().__init__(_TYPE, info, params or {})
        self.rules = rules
        self.first_dealer = 0 if rules.draw_seating else 3

    def new_initial_state(self) -> CallbreakState:
        """A game about to be dealt."""
        return CallbreakState(self)

    def max_chance_nodes_in_history(self) -> int:
        return self.rules.rounds * (MAX_REDEALS + 1) * 52

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> _Observer:
        """The observer of one seat: the information state's with ``perfect_recall``, else the observation's."""
        if params:
            raise ValueError(f"python_callbreak's observations take no parameters, not {params}")
        obs_type = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
        if not obs_type.public_info or obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError("python_callbreak observes for one seat: the public information and the seat's cards")
        return _Observer(bool(obs_type.perfect_recall))


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


class _Table:
    """The play of one state: the deals made, the deal being made, the players' actions, and the game they give.

    One object (OpenSpiel clones a state by deep-copying each of its attributes apart), which rebuilds
    its game by replaying the actions whenever a deal is complete: the rules core deals a round as the
    game reaches it, and this is how it is handed a deal that chance made afterwards. A copy rebuilds
    its game the same way.
    """

    def __init__(self, rules: Rules, first_dealer: int) -> None:
        self.rules = rules
        self.first_dealer = first_dealer
        self.points = tenths_per_point(rules)
        self.deals = _Deals({})
        self.dealing: list[int] = []
        """The cards of the deal being made, in dealing order."""
        self.moves: list[int] = []
        """Every player action so far."""
        self.actors: list[int] = []
        """The seat that made each of them."""
        self.dealt_after: list[tuple[int, tuple[int, int]]] = []
        """Each deal made, with how many player actions came before it (for the information state)."""
        self.rewards = (0.0, 0.0, 0.0, 0.0)
        self.game = self._rebuild()

    def __deepcopy__(self, memo: dict[int, Any]) -> _Table:
        """A copy that replays the actions on its own game: cheaper than copying the game object by object,
        and the copy's game draws its deals from the copy's own source."""
        copy = _Table.__new__(_Table)
        copy.rules, copy.first_dealer, copy.points = self.rules, self.first_dealer, self.points
        copy.deals = _Deals(dict(self.deals.decks))
        copy.dealing = self.dealing[:]
        copy.moves = self.moves[:]
        copy.actors = self.actors[:]
        copy.dealt_after = self.dealt_after[:]
        copy.rewards = self.rewards
        copy.game = copy._rebuild()
        return copy

    @property
    def wanted(self) -> tuple[int, int] | None:
        """The (round, attempt) chance is dealing, or None when a player is to act or the game is over."""
        return None if self.game.over else self.deals.missing

    def deal(self, card: int) -> None:
        """Chance deals ``card`` at the next position of the deal being made."""
        self.dealing.append(card)
        if len(self.dealing) < 52:
            return
        key = self.deals.missing
        assert key is not None
        self.deals.decks[key] = Deal(tuple(self.dealing))
        self.dealing = []
        self.dealt_after.append((len(self.moves), key))
        self.game = self._rebuild()

    def act(self, action: int) -> None:
        """The seat to act makes ``action`` (its legality checked by the rules core)."""
        done = len(self.game.results)
        seat = self.game.current_seat
        self._apply(self.game, action)
        self.moves.append(action)
        self.actors.append(seat)
        game = self.game
        if len(game.results) > done:
            self.rewards = tuple(score / self.points for score in game.results[-1].scores)  # type: ignore[assignment]
        else:
            self.rewards = (0.0, 0.0, 0.0, 0.0)

    def _rebuild(self) -> Game:
        self.deals.missing = None
        game = Game(self.rules, self.deals, first_dealer=self.first_dealer)
        for action in self.moves:
            self._apply(game, action)
        return game

    @staticmethod
    def _apply(game: Game, action: int) -> None:
        if action >= CALL_BASE:
            game.call(action - CALL_BASE)
        else:
            game.play_index(action)

    def legal_actions(self) -> list[int]:
        """The legal actions of the seat to act, in increasing order."""
        rnd = self.game.round
        if rnd.phase is Phase.PLAYING:
            legal = rnd.legal_mask()
            return [card for card in range(52) if legal >> card & 1]
        return [CALL_BASE + value for value in self.rules.call_range]

    def dealt_to(self, seat: int, cards: list[int] | tuple[int, ...], dealer: int) -> list[int]:
        """The cards of a deal (or of its first positions) that went to ``seat``."""
        hand = call_order(dealer).index(seat)
        return list(cards[hand::4])

    def vector(self, seat: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        """``seat``'s observation vector (:mod:`arena.envs.layout`)."""
        game = self.game
        vector = observation_of(game.view(seat))["observation"]
        if self.wanted is not None:  # the game holds a stand-in deal: show the cards dealt so far
            vector[HAND:HAND + 52] = 0.0
            for card in self.dealt_to(seat, self.dealing, game.round.dealer):
                vector[HAND + card] = 1.0
            if self.rules.trump_mode is TrumpMode.LAST_CARD:
                vector[TRUMP:TRUMP + 4] = 0.0
        return vector

    def trick_of_card(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """For each card, the trick of this round it was played in, one-hot (all 0: not played)."""
        block = np.zeros((52, 13), np.float32)
        if self.wanted is None:
            for position, card in enumerate(self.game.round.played):
                block[card, position >> 2] = 1.0
        return block

    def information(self, seat: int) -> str:
        """Everything ``seat`` has seen, in order: its cards of each deal, every call and card."""
        lines = [f"seat {seat}"]
        deals = iter(self.dealt_after)
        upcoming = next(deals, None)
        for count in range(len(self.moves) + 1):
            while upcoming is not None and upcoming[0] == count:
                (round_number, attempt) = upcoming[1]
                deck = self.deals.decks[upcoming[1]].deck
                dealer = dealer_of(self.first_dealer, round_number)
                mine = self.dealt_to(seat, deck, dealer)
                trump = SUIT_OF[deck[51]] if self.rules.trump_mode is TrumpMode.LAST_CARD else int(self.rules.trump)
                lines.append(f"round {round_number} deal {attempt}: dealer {dealer}, trump {'SHDC'[trump]}, "
                             f"you hold {Hand.of_mask(sum(1 << card for card in mine))}")
                upcoming = next(deals, None)
            if count < len(self.moves):
                lines.append(f"{self.actors[count]}: {action_text(self.moves[count])}")
        if self.wanted is not None and self.dealing:
            mine = self.dealt_to(seat, self.dealing, self.game.round.dealer)
            lines.append(f"being dealt: {' '.join(card_text(card) for card in mine)}")
        return "\n".join(lines)

    def picture(self, seat: int) -> str:
        """The table now, as ``seat`` sees it."""
        game = self.game
        view = game.view(seat)
        points = self.points
        if self.wanted is not None:
            cards = self.dealt_to(seat, self.dealing, view.dealer)
            hand = f"being dealt {' '.join(card_text(card) for card in cards) or '-'}"
        else:
            hand = f"hand {view.hand}"
        calls = " ".join("-" if call is None else str(call) for call in view.calls)
        played = ["".join(map(str, trick.cards)) for trick in view.tricks]
        unknown = self.wanted is not None and self.rules.trump_mode is TrumpMode.LAST_CARD
        return (f"seat {seat}, round {view.round_number} of {self.rules.rounds}, dealer {view.dealer}, "
                f"trump {'?' if unknown else view.trump.letter}\n"
                f"{hand}\ncalls {calls}; tricks won {' '.join(map(str, view.tricks_won))}; "
                f"totals {' '.join(f'{total / points:g}' for total in view.totals)}\n"
                f"tricks {' '.join(played) or '-'}; this trick {' '.join(map(str, view.trick)) or '-'}")

    def resampled(self, seat: int, rng: random.Random) -> dict[tuple[int, int], list[int]]:
        """New cards for the deal in play, in dealing order, in which every card ``seat`` has not seen is
        dealt afresh; empty when none could be found (then the real deal is the one sample)."""
        game = self.game
        if self.wanted is not None:  # mid-deal: the other seats' cards so far, from the cards seat has not got
            dealer = game.round.dealer
            order = call_order(dealer)
            mine = set(self.dealt_to(seat, self.dealing, dealer))
            pool = [card for card in range(52) if card not in mine]
            rng.shuffle(pool)
            cards = [card if order[k & 3] == seat else pool.pop() for k, card in enumerate(self.dealing)]
            return {self.wanted: cards}
        if game.over:
            return {}
        rnd = game.round
        world = deal_unseen(rnd, seat, rng)
        if world is None:
            return {}
        key = (rnd.round_number, rnd.attempt)
        deck = list(self.deals.decks[key].deck)
        order = call_order(rnd.dealer)
        for hand, other in enumerate(order):
            if other == seat:
                continue
            cards = [card for card in range(52) if world.initial[other] >> card & 1]
            rng.shuffle(cards)
            if other == rnd.dealer and self.rules.trump_mode is TrumpMode.LAST_CARD:
                # The trump was the dealer's last card: one of the trump suit must be last again.
                last = next(card for card in cards if SUIT_OF[card] == rnd.trump)
                cards.remove(last)
                cards.append(last)
            deck[hand::4] = cards
        return {key: deck}


class CallbreakState(pyspiel.State):
    """A state of :class:`CallbreakGame`: a deal being made, a seat to act, or the game's end."""

    def __init__(self, game: CallbreakGame) -> None:
        super().__init__(game)
        self._table = _Table(game.rules, game.first_dealer)

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
        table = self._table
        if table.game.over:
            return int(pyspiel.PlayerId.TERMINAL)
        if table.wanted is not None:
            return int(pyspiel.PlayerId.CHANCE)
        return table.game.current_seat

    def _legal_actions(self, player: int) -> list[int]:
        return self._table.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        dealt = set(self._table.dealing)
        left = [card for card in range(52) if card not in dealt]
        return [(card, 1.0 / len(left)) for card in left]

    def _apply_action(self, action: int) -> None:
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
        """Each seat's score, in points, of the round the last player action ended, until the next one
        (through the chance nodes of the next deal: OpenSpiel counts rewards at decision nodes); else 0."""
        return list(self._table.rewards)

    def returns(self) -> list[float]:
        """Each seat's game total so far, in points."""
        points = self._table.points
        return [total / points for total in self._table.game.totals]

    def resample_from_infostate(self, player: int, sampler: Any) -> CallbreakState:
        """A state ``player`` cannot tell from this one: the cards it has not seen in the deal in play dealt
        afresh, every action replayed (``sampler`` is called once, for the generator's seed)."""
        rng = random.Random(int(sampler() * 2**53))
        replacement = self._table.resampled(player, rng)
        state = self.get_game().new_initial_state()
        for action in self.history():
            wanted = state.deal_wanted()
            if wanted is not None and wanted in replacement:
                action = replacement[wanted][len(state._table.dealing)]
            state.apply_action(action)
        return state  # type: ignore[no-any-return]

    def __str__(self) -> str:
        game = self._table.game
        rnd = game.round
        moment = "dealing" if self._table.wanted is not None else "game over" if game.over else rnd.phase.name.lower()
        lines = [f"round {rnd.round_number}, dealer {rnd.dealer}, {moment}"]
        if self._table.wanted is None:
            lines += [f"seat {seat}: {Hand.of_mask(rnd.hands[seat])}" for seat in range(4)]
        lines.append(f"actions {' '.join(action_text(action) for action in self._table.moves)}")
        return "\n".join(lines)


class _Observer:
    """OpenSpiel's observer of one seat (its ``tensor``, ``dict``, ``set_from`` and ``string_from``)."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        size = OBSERVATION_SIZE + (_TRICKS if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {
            "observation": self.tensor[:OBSERVATION_SIZE]}
        if perfect_recall:
            self.dict["trick_of_card"] = self.tensor[OBSERVATION_SIZE:].reshape(52, 13)

    def set_from(self, state: CallbreakState, player: int) -> None:
        table = state._table
        seat = player if 0 <= player < 4 else 0
        self.tensor[:OBSERVATION_SIZE] = table.vector(seat)
        if self.perfect_recall:
            self.dict["trick_of_card"][:] = table.trick_of_card()

    def string_from(self, state: CallbreakState, player: int) -> str:
        table = state._table
        return table.information(player) if self.perfect_recall else table.picture(player)


pyspiel.register_game(_TYPE, CallbreakGame)
