"""The play of one state of the OpenSpiel game ``python_callbreak`` (:mod:`arena.envs.openspiel`): the game's
parameters read once (:class:`Setup`), the deals chance has made, the players' actions, and the rules core's game
they give, held by value so that a clone copies it and an action is applied to it as it stands; and what a seat
sees of it (the vectors and strings the game's observers give), and a deal of the cards a seat has not seen.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.core.cards import SUIT_OF, Hand, card_text
from arena.core.dealing import Deal
from arena.core.game import Game, Round
from arena.core.rules import Rules, TrumpMode
from arena.core.scoring import tenths_per_point
from arena.core.turns import call_order, dealer_of
from arena.core.views import Phase
from arena.envs.layout import CALL_BASE, HAND, TRUMP, action_text, observation_of
from arena.envs.unseen import deal_unseen
from arena.errors import RulesError

__all__ = ["DEFAULTS", "REWARDS", "Setup", "Table", "deck_of", "rules_of"]

REWARDS = ("round", "terminal")
"""The values of the ``rewards`` parameter."""
_PLACEHOLDER = Deal(tuple(range(52)))
"""The deal a game is given for a deal chance has not made yet; every hand of it holds every suit, so it
is never thrown in for want of a trump (the real deal replaces it once chance has made it)."""
_NONE = (0.0, 0.0, 0.0, 0.0)

DEFAULTS: dict[str, Any] = {"profile": "nepali", "switches": "", "rewards": "round", "start_round": 1,
                             "start_dealer": -1, "start_totals": "", "end_round": 0}


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
class Setup:
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
    def of(cls, params: dict[str, Any]) -> Setup:
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


class Table:
    """The play of one state: the deals made, the deal being made, the players' actions, and the game they give.

    One object (OpenSpiel clones a state by deep-copying each of its attributes apart). The rules core deals a
    round as the game reaches it, from a stand-in deal while chance has not made it; once chance has, the
    round is dealt again from the real deal (no player has acted in it yet). A copy copies the game by value.
    """

    __slots__ = ("actors", "dealing", "deals", "dealt_after", "game", "moves", "rewards", "setup")

    def __init__(self, setup: Setup) -> None:
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

    def __deepcopy__(self, memo: dict[int, Any]) -> Table:
        """A copy by value: the lists of the play copied, the game copied by :func:`_copied_game`."""
        copy = Table.__new__(Table)
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

    def resampled(self, seat: int, rng: random.Random) -> tuple[Table, list[int]] | None:
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
