"""The game state machine: deal, calls, redeals, 13 tricks, round scores, next round, game end.

:class:`Round` is one deal played out; :class:`Game` strings rounds together, passes the deal
to the right, redeals where the rules say, keeps totals and gives places at the end. The only
way hidden cards leave the core is :meth:`Game.view`, which gives a
:class:`~arena.core.views.SeatView` holding exactly what one seat may know. The public facts of play
(:class:`Phase`, :class:`Trick`, :class:`RoundSummary`) are the views' module's, which knows nothing of
the game; they are named here too, as the game's.

Seats are 0-3 in playing order (seat s+1 plays after seat s). The seat after the dealer calls
first and leads the first trick; the dealer of the next round is the seat after this dealer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from arena.core.cards import CARDS, FULL_DECK, SUIT_OF, Card, Hand, Suit, card_text
from arena.core.dealing import Deal, DealSource, seat_seed
from arena.core.rules import TAKES, Rules, TrumpMode, explain, legal_cards, legal_from, legal_table
from arena.core.scoring import score_table
from arena.core.turns import NEXT_SEAT, call_order, dealer_of, four
from arena.core.views import Phase, PublicView, RoundSummary, SeatView, Trick
from arena.errors import IllegalCall, IllegalPlay

__all__ = [
    "MAX_REDEALS",
    "Game",
    "Phase",
    "Redeal",
    "Round",
    "RoundResult",
    "RoundSummary",
    "Trick",
    "places",
]

_CALLING, _PLAYING, _OVER = Phase.CALLING, Phase.PLAYING, Phase.OVER
"""The phases, read at every call and card (a module's name is read faster than an enum's member)."""

MAX_REDEALS = 20
"""Redeals allowed in one round; after that the round is played as dealt, whatever the calls."""


_new_trick = _new_result = tuple.__new__  # builds one without the keyword handling of its generated __new__
_SUITS = tuple(Suit)


@dataclasses.dataclass(frozen=True, slots=True)
class Redeal:
    """A deal thrown in and dealt again."""

    round_number: int
    attempt: int
    """The attempt thrown in (0 is the first deal of the round)."""
    reason: str


class RoundResult(NamedTuple):
    """The full record of a finished round, hands included (for records, never for a seat).

    A named tuple rather than a dataclass, like :class:`Trick`: one is made for every round played.
    """

    round_number: int
    attempt: int
    """Which redeal attempt was played (0: the first deal)."""
    dealer: int
    trump: Suit
    hands: tuple[Hand, Hand, Hand, Hand]
    """The initial hands, by seat."""
    calls: tuple[int, int, int, int]
    tricks: tuple[Trick, ...]
    tricks_won: tuple[int, int, int, int]
    scores: tuple[int, int, int, int]
    """Round scores in tenths."""
    totals: tuple[int, int, int, int]
    """Game totals in tenths after this round."""

    def summary(self) -> RoundSummary:
        """The public part of this result."""
        return RoundSummary(self.round_number, self.dealer, self.calls, self.tricks_won, self.scores)


class Round:
    """One deal played out: four calls in order, then 13 tricks.

    Two ways to drive it: call :meth:`call` and :meth:`play_index` one decision at a time (the
    table runner does), or hand :meth:`playout` two functions that decide (the fast path for
    in-process research runs). Both apply the same legal-card rule and reach the same state.
    """

    __slots__ = (
        "_beats",
        "_legal",
        "_seeds",
        "_table",
        "_takes",
        "_tricks",
        "attempt",
        "calls",
        "current_seat",
        "dealer",
        "hands",
        "initial",
        "leader",
        "leaders",
        "led",
        "phase",
        "played",
        "round_number",
        "rules",
        "scores",
        "tricks_won",
        "trump",
        "win",
        "win_seat",
        "winners",
    )

    def __init__(
        self, rules: Rules, hands: Sequence[int], dealer: int, trump: int,
        round_number: int = 1, attempt: int = 0,
    ) -> None:
        if len(hands) != 4:
            raise ValueError("a round needs four hands of 13 cards")
        h0, h1, h2, h3 = hands
        if h0.bit_count() != 13 or h1.bit_count() != 13 or h2.bit_count() != 13 or h3.bit_count() != 13:
            raise ValueError("a round needs four hands of 13 cards")
        if h0 | h1 | h2 | h3 != FULL_DECK:
            raise ValueError("the four hands of a round must hold the 52 cards between them")
        self.rules = rules
        self.round_number = round_number
        self.dealer = dealer
        self.trump = trump
        self.attempt = attempt
        self.hands = list(hands)
        """Cards still held, by seat, as masks."""
        self.initial: tuple[int, int, int, int] = four(hands)
        self.calls: list[int | None] = [None, None, None, None]
        self.phase = Phase.CALLING
        self.current_seat = NEXT_SEAT[dealer]
        self.leader = self.current_seat
        """The seat leading the current trick."""
        self.played: list[int] = []
        """Every card index played this round, in order; trick t is ``played[4t:4t+4]``."""
        self.leaders: list[int] = []
        """The leader of each finished trick."""
        self.winners: list[int] = []
        """The winner of each finished trick."""
        self.led = -1
        self.win = -1
        self.win_seat = -1
        self.tricks_won = [0, 0, 0, 0]
        self.scores: tuple[int, int, int, int] | None = None
        self._legal = -1
        self._table = legal_table(rules, trump)
        """The legal-card rule of these rules and trumps, read at every card."""
        self._takes = TAKES[trump]
        self._beats = self._takes[0]
        """The trick-winner rule under these trumps (``_takes``) and its row of the card now winning the trick (set
        at each lead: any row until then): what :meth:`play_index` reads at every card."""
        self._tricks: tuple[Trick, ...] = ()
        self._seeds: tuple[int, ...] = ()

    def seat_seed(self, seat: int, key: bytes, deal_set: int) -> int:
        """The seed this round of deal set ``deal_set`` hands ``seat`` under ``key``
        (:func:`arena.core.dealing.seat_seed`), made for the four seats when first asked."""
        if not self._seeds:
            initial, number = self.initial, self.round_number
            self._seeds = tuple(seat_seed(key, deal_set, number, s, initial[s]) for s in range(4))
        return self._seeds[seat]

    @property
    def trick(self) -> list[int]:
        """The card indices played to the current trick, in order."""
        return self.played[4 * len(self.winners):]

    @property
    def tricks(self) -> list[Trick]:
        """The finished tricks (built once each, as they are asked for)."""
        return list(self.finished_tricks())

    def finished_tricks(self) -> tuple[Trick, ...]:
        """:attr:`tricks` as a tuple, the same one until the next trick is over (views share it)."""
        made = self._tricks
        first, done = len(made), len(self.winners)
        if first == done:
            return made
        c, p, leaders, winners = CARDS, self.played, self.leaders, self.winners
        made += tuple([
            _new_trick(Trick, (leaders[t], (c[p[t * 4]], c[p[t * 4 + 1]], c[p[t * 4 + 2]], c[p[t * 4 + 3]]),
                               winners[t]))
            for t in range(first, done)
        ])
        self._tricks = made
        return made

    # -- calls ---------------------------------------------------------------------------

    def call(self, value: int) -> None:
        """The current seat calls ``value`` tricks."""
        if self.phase is not _CALLING:
            raise IllegalCall("the calls are over: it is time to play a card")
        rules = self.rules
        if isinstance(value, bool) or not isinstance(value, int) or not rules.min_call <= value <= rules.max_call:
            raise IllegalCall(
                f"a call must be a whole number from {rules.min_call} to {rules.max_call} under the "
                f"{rules.profile_name} rules; {value!r} is not allowed"
            )
        seat = self.current_seat
        self.calls[seat] = value
        self.current_seat = NEXT_SEAT[seat]
        if seat == self.dealer:
            self.phase = Phase.PLAYING

    # -- play ----------------------------------------------------------------------------

    def legal_mask(self) -> int:
        """The mask of the current seat's legal cards (cached until the next card)."""
        legal = self._legal
        if legal < 0:
            legal = self._legal = legal_cards(
                self._table, self.hands[self.current_seat], self.led, self.win, not self.winners
            )
        return legal

    def legal_reason(self) -> str:
        """Why the current seat's legal cards are what they are, in a student's words."""
        hand = self.hands[self.current_seat]
        legal, reason = legal_from(self._table, hand, self.led, self.win, not self.winners)
        return explain(reason, hand, self.trick, self.trump, legal)

    def play(self, card: Card | str) -> None:
        """The current seat plays ``card``; an illegal card raises :class:`IllegalPlay` and changes nothing."""
        if isinstance(card, str):
            card = Card.parse(card)
        self.play_index(card.index)

    def play_index(self, index: int) -> None:
        """:meth:`play` by card index."""
        if self.phase is not _PLAYING:
            if self.phase is Phase.CALLING:
                raise IllegalPlay("the calls are not finished yet: it is time to call, not to play")
            raise IllegalPlay("the round is over: there is no card to play")
        legal = self._legal
        if legal < 0:
            legal = self.legal_mask()
        if index < 0 or not legal >> index & 1:  # no card from 52 up is legal: a mask holds 52 bits
            raise IllegalPlay(self._refusal(index))
        seat = self.current_seat
        self.hands[seat] ^= 1 << index
        played = self.played
        played.append(index)
        self._legal = -1
        if self.led < 0:
            self.led = SUIT_OF[index]
            self.win = index
            self.win_seat = seat
            self._beats = self._takes[index]
        elif self._beats[index]:
            self.win = index
            self.win_seat = seat
            self._beats = self._takes[index]
        if len(played) & 3:
            self.current_seat = NEXT_SEAT[seat]
            return
        winner = self.win_seat
        self.leaders.append(self.leader)
        self.winners.append(winner)
        self.tricks_won[winner] += 1
        self.led = self.win = -1
        self.leader = self.current_seat = winner
        if len(played) == 52:
            self._score()

    def playout(self, choose_call: Chooser, choose_card: Chooser | Sequence[Chooser]) -> None:
        """Plays the rest of the round, asking ``choose_call(seat, round)`` for each call and
        ``choose_card(seat, legal_mask)`` for each card index (or ``choose_card[seat](seat, legal_mask)``
        when given one chooser per seat).

        The fast path for in-process research runs. It reads the legal-card rule and the trick
        winner from the tables :meth:`play_index` reads (:func:`arena.core.rules.legal_table`,
        :data:`arena.core.rules.TAKES`), with the trick state in local variables rather than
        attributes and no function call per card, which would cost a measurable part of its speed;
        the test suite checks it against :meth:`play_index` decision by decision over many
        thousands of seeded deals under every profile. A choice outside the legal set raises
        :class:`IllegalPlay` and leaves the round as it was before that choice.
        """
        self._legal = -1
        while self.phase is Phase.CALLING:
            self.call(choose_call(self.current_seat, self))
        choosers = [choose_card] * 4 if callable(choose_card) else list(choose_card)
        while self.phase is Phase.PLAYING and len(self.played) & 3:  # finish a trick begun step by step
            self.play_index(choosers[self.current_seat](self.current_seat, self.legal_mask()))
        if self.phase is not Phase.PLAYING:
            return
        trump, hands, played = self.trump, self.hands, self.played
        table = legal_table(self.rules, trump).lines  # locals: read at every card
        leads, takes, suit_of, next_seat = table[4], TAKES[trump], SUIT_OF, NEXT_SEAT
        won, leaders, winners = self.tricks_won, self.leaders, self.winners
        play = played.append
        leader = self.leader
        for _ in range(len(winners), 13):
            seat = leader
            hand = hands[seat]
            # The first line of the rule the hand meets decides; a lead has at most one before "any card".
            lines = leads[not winners]
            legal = hand & lines[0]
            if not legal or lines[1]:
                legal = hand
            index = choosers[seat](seat, legal)
            if not (0 <= index < 52 and legal >> index & 1):
                self.current_seat = seat
                raise IllegalPlay(self._refusal(index))
            hands[seat] = hand ^ (1 << index)
            play(index)
            win, win_seat, led = index, seat, suit_of[index]
            follows = table[led]
            lines, beats = follows[win], takes[win]  # change only when the lead of the trick does
            for _k in range(3):
                seat = next_seat[seat]
                hand = hands[seat]
                # The same reading of the same lines, four of them here (see LegalTable).
                if legal := hand & lines[0]:
                    if lines[1]:
                        legal = hand
                elif legal := hand & lines[2]:
                    if lines[3]:
                        legal = hand
                elif legal := hand & lines[4]:
                    if lines[5]:
                        legal = hand
                elif legal := hand & lines[6]:
                    if lines[7]:
                        legal = hand
                else:
                    legal = hand
                index = choosers[seat](seat, legal)
                if not (0 <= index < 52 and legal >> index & 1):
                    self.current_seat, self.led, self.win, self.win_seat = seat, led, win, win_seat
                    self._beats = beats
                    raise IllegalPlay(self._refusal(index))
                hands[seat] = hand ^ (1 << index)
                play(index)
                if beats[index]:
                    win, win_seat = index, seat
                    lines, beats = follows[win], takes[win]
            leaders.append(leader)
            winners.append(win_seat)
            won[win_seat] += 1
            leader = self.leader = self.current_seat = win_seat
        self._legal = -1
        self._score()

    def _score(self) -> None:
        self.phase = Phase.OVER
        table = score_table(self.rules)
        calls = self.calls
        won = self.tricks_won
        self.scores = (
            table[calls[0]][won[0]],  # type: ignore[index]
            table[calls[1]][won[1]],  # type: ignore[index]
            table[calls[2]][won[2]],  # type: ignore[index]
            table[calls[3]][won[3]],  # type: ignore[index]
        )

    def _refusal(self, index: int) -> str:
        text = card_text(index) if 0 <= index < 52 else repr(index)
        if not 0 <= index < 52 or not self.hands[self.current_seat] >> index & 1:
            return f"you do not hold {text}: your hand is {Hand(self.hands[self.current_seat])}"
        return f"{text} is not allowed: {self.legal_reason()}"


Chooser = Callable[[int, Any], int]
"""A decision function for :meth:`Round.playout`: (seat, round or legal mask) -> call or card index."""


class Game:
    """A whole game: rounds of one profile with the deal passing on, totals, and places at the end."""

    def __init__(
        self, rules: Rules, deals: DealSource, *, game_number: int = 1, first_dealer: int = 3,
        max_redeals: int = MAX_REDEALS, seat_key: bytes | None = None,
    ) -> None:
        if not 0 <= first_dealer <= 3:
            raise ValueError(f"first_dealer must be a seat 0-3, not {first_dealer}")
        if seat_key is not None and not seat_key:
            raise ValueError("seat_key must not be empty: give the event's key, or None for no seat seeds")
        self.rules = rules
        self.deals = deals
        self.game_number = game_number
        self.seat_key = seat_key
        """The event's secret key of the seat seeds (:func:`arena.core.dealing.seat_seed`); ``None``: the
        views carry no seat seed (0)."""
        self.first_dealer = first_dealer
        self.max_redeals = max_redeals
        self.totals = [0, 0, 0, 0]
        self.results: list[RoundResult] = []
        self._summaries: tuple[RoundSummary, ...] = ()
        self.redeals: list[Redeal] = []
        self.exact8_winner: int | None = None
        """The seat that won at once by calling 8 and taking exactly 8, if any."""
        self.over = False
        self._public: PublicView | None = None
        self._moment: tuple[object, ...] = ()
        """What the cached :attr:`_public` view was made at (see :meth:`public_view`)."""
        self.round = self._deal(1, 0)

    # -- state ---------------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Calling, playing, or over (for the whole game)."""
        return Phase.OVER if self.over else self.round.phase

    @property
    def current_seat(self) -> int:
        """The seat to act."""
        return self.round.current_seat

    @property
    def round_number(self) -> int:
        """The current round, from 1."""
        return self.round.round_number

    @property
    def summaries(self) -> tuple[RoundSummary, ...]:
        """The public outcome of each finished round, made once each (every seat view holds them)."""
        done = self._summaries
        if len(done) < len(self.results):
            done = self._summaries = done + tuple(r.summary() for r in self.results[len(done):])
        return done

    def legal_calls(self) -> range:
        """The calls the current seat may make."""
        return self.rules.call_range

    def legal_mask(self) -> int:
        """The mask of the current seat's legal cards."""
        return self.round.legal_mask()

    def legal_cards(self) -> Hand:
        """The current seat's legal cards."""
        return Hand(self.round.legal_mask())

    # -- actions -------------------------------------------------------------------------

    def call(self, value: int) -> None:
        """The current seat calls; the last call may throw the deal in (``redeal_below``)."""
        if self.over:
            raise IllegalCall("the game is over")
        rnd = self.round
        rnd.call(value)
        if rnd.phase is Phase.PLAYING and self.rules.redeal_below and rnd.attempt < self.max_redeals:
            total = sum(c for c in rnd.calls if c is not None)
            if total < self.rules.redeal_below:
                self.redeals.append(Redeal(
                    rnd.round_number, rnd.attempt,
                    f"the calls total {total}, less than {self.rules.redeal_below}",
                ))
                self.round = self._deal(rnd.round_number, rnd.attempt + 1)

    def play(self, card: Card | str) -> None:
        """The current seat plays a card."""
        if isinstance(card, str):
            card = Card.parse(card)
        self.play_index(card.index)

    def play_index(self, index: int) -> None:
        """:meth:`play` by card index (the fast path)."""
        if self.over:
            raise IllegalPlay("the game is over")
        rnd = self.round
        rnd.play_index(index)
        if rnd.phase is _OVER:
            self._finish_round(rnd)

    def playout(self, choose_call: Chooser, choose_card: Chooser | Sequence[Chooser]) -> None:
        """Plays the rest of the game through :meth:`Round.playout` (the in-process fast path).

        ``choose_call(seat, round)`` and ``choose_card(seat, legal_mask)`` decide, as there. Redeals,
        scores, totals and the game end are handled as on the step-by-step path. A choice the
        rules forbid raises :class:`IllegalAction` and leaves the game as it was before it.
        """
        while not self.over:
            rnd = self.round
            while rnd.phase is Phase.CALLING and self.round is rnd:
                self.call(choose_call(rnd.current_seat, rnd))
            if self.round is not rnd:  # the calls threw the deal in: a new attempt was dealt
                continue
            rnd.playout(choose_call, choose_card)
            self._finish_round(rnd)

    # -- views ---------------------------------------------------------------------------

    def view(self, seat: int, deadline_ms: int = 0) -> SeatView:
        """What ``seat`` may know now: its own hand and everything public (and, when it is asked to
        decide, the ``deadline_ms`` it has to answer in)."""
        if not 0 <= seat <= 3:
            raise ValueError(f"seats are numbered 0 to 3, not {seat}")
        public = self.public_view()
        rnd = self.round
        to_act = not public.over and rnd.current_seat == seat
        legal = rnd.legal_mask() if to_act and rnd.phase is Phase.PLAYING else 0
        key = self.seat_key
        seed = rnd.seat_seed(seat, key, self.game_number) if key is not None else 0
        return SeatView(public, seat, rnd.hands[seat], to_act, legal, deadline_ms, seed)

    def public_view(self) -> PublicView:
        """What every seat may know now; the same object until the next call or card."""
        rnd = self.round
        # Each call or card changes the seat to act or the cards played; the phase tells the first
        # call from the first card (the same seat), the results a finished round, and a redeal is a new round.
        moment = (rnd, rnd.phase, rnd.current_seat, len(rnd.played), len(self.results))
        if moment != self._moment:
            hands = rnd.hands
            self._public = PublicView(
                game_number=self.game_number, round_number=rnd.round_number, dealer=rnd.dealer,
                trump=_SUITS[rnd.trump], rules=self.rules, phase=self.phase, over=self.over, calls=tuple(rnd.calls),
                trick_indices=tuple(rnd.played[4 * len(rnd.winners):]),
                # The hands still held cover exactly the cards not yet played: the rest is public.
                played_mask=FULL_DECK ^ (hands[0] | hands[1] | hands[2] | hands[3]),
                tricks=rnd.finished_tricks(), leader=rnd.leader, tricks_won=tuple(rnd.tricks_won),
                totals=tuple(self.totals), past_rounds=self.summaries,
            )
            self._moment = moment
        assert self._public is not None
        return self._public

    def places(self) -> tuple[int, int, int, int]:
        """Places 1-4 by total, exact ties sharing a place; an ``exact8_wins`` winner is first."""
        return places(self.totals, self.exact8_winner)

    # -- internals -----------------------------------------------------------------------

    def _deal(self, round_number: int, attempt: int) -> Round:
        dealer = dealer_of(self.first_dealer, round_number)
        while True:
            deal: Deal = self.deals(round_number, attempt)
            if self.rules.trump_mode is TrumpMode.LAST_CARD:
                trump = SUIT_OF[deal.deck[51]]
            else:
                trump = int(self.rules.trump)
            if self.rules.redeal_no_trump and attempt < self.max_redeals and deal.has_no_trump_hand(trump):
                self.redeals.append(Redeal(round_number, attempt, f"a hand holds no {Suit(trump).noun}"))
                attempt += 1
                continue
            masks = deal.masks
            hands = [0, 0, 0, 0]
            for position, seat in enumerate(call_order(dealer)):  # dealt from the seat after the dealer
                hands[seat] = masks[position]
            return Round(self.rules, hands, dealer, trump, round_number, attempt)

    def _finish_round(self, rnd: Round) -> None:
        assert rnd.scores is not None
        for seat in range(4):
            self.totals[seat] += rnd.scores[seat]
        calls = four([c if c is not None else 0 for c in rnd.calls])
        initial = rnd.initial
        self.results.append(_new_result(RoundResult, (
            rnd.round_number, rnd.attempt, rnd.dealer, _SUITS[rnd.trump],
            (Hand.of_mask(initial[0]), Hand.of_mask(initial[1]), Hand.of_mask(initial[2]), Hand.of_mask(initial[3])),
            calls, rnd.finished_tricks(), four(rnd.tricks_won), rnd.scores, four(self.totals),
        )))
        if self.rules.exact8_wins:
            for seat in range(4):
                if calls[seat] == 8 and rnd.tricks_won[seat] == 8:
                    self.exact8_winner = seat
        if self.exact8_winner is not None or rnd.round_number >= self.rules.rounds:
            self.over = True
        else:
            self.round = self._deal(rnd.round_number + 1, 0)


def places(totals: Sequence[int], first: int | None = None) -> tuple[int, int, int, int]:
    """Competition places (1, 2, 2, 4) by total, highest first; ``first`` (if given) is placed 1st."""
    result = [0, 0, 0, 0]
    for seat in range(4):
        if seat == first:
            result[seat] = 1
            continue
        better = sum(
            1 for other in range(4)
            if other != seat and (other == first or totals[other] > totals[seat])
        )
        result[seat] = better + 1
    return four(result)
