"""The Monte Carlo bot: deals the unseen cards many ways, plays each deal out, keeps the best choice.

In-process use: ``MonteCarloBot(seed, samples=64).call(view)`` / ``.play(view)`` on a
:class:`arena.SeatView`; over the network: ``python sample_bots/montecarlo_bot.py --arena HOST:PORT``
(``--option samples=64`` or ``--option budget=0.2``), with the token in the environment variable
``CALLBREAK_TOKEN``. Like the heuristic bot it reads only the public attributes a remote view also
offers (``seat``, ``dealer``, ``hand``, ``legal``, ``legal_calls``, ``calls``, ``trick``, ``leader``,
``tricks``, ``tricks_won``, ``trump``, ``rules``, ``played``, ``game_number``, ``round_number``), so
it plays the same behind the gRPC seat.

The method, at every decision with a real choice (perfect-information Monte Carlo):

1. **What the seat knows.** The unseen cards are the deck less its hand and the cards played.
   Replaying the round's tricks under the rules in force tells what each other seat cannot hold:
   a seat that failed to follow suit is void in it; one that failed to trump (``must_trump``) holds
   no trump, or none above the trump it failed to beat; one that followed under ``must_beat`` with
   a lower card holds nothing above the winner; a first lead of a trump under
   ``first_lead_no_trump`` means a hand of trumps only. How many cards each seat still holds is
   public too.
2. **Sampling deals.** The unseen cards are dealt to the other seats at random, respecting those
   exclusions and the hand sizes: cards only one seat may hold go to it; then each card that two
   seats may hold goes to one of them with a chance proportional to the room each has left, unless
   that would leave too few cards that the other seat may hold to fill its hand (Hall's condition,
   which with three seats reduces to one count per seat, so the dealing never gets stuck); the
   cards any seat may hold fill the room that is left, shuffled. Without exclusions this is exactly
   a uniform deal, and close to one with them.
3. **The calls as soft evidence.** A seat's call says something about the hand it was dealt. Each
   sampled deal is weighted by how well the hands it gives the seats that have called (the cards
   they still hold plus those they have played) agree with their calls: a normal likelihood, of
   spread :data:`CALL_SPREAD` tricks, around the heuristic bot's trick estimate
   (:func:`sample_bots.heuristic_bot.estimate_tricks`). Deals that put the high cards with the
   high callers count for more.
4. **Playing out.** Every sampled deal is played to the end of the round once for each candidate
   card (cards that are equivalent, with nothing unseen between them in their suit, are one
   candidate), by a fast policy on an inlined bitmask copy of the rules' legal-card algorithm with
   every switch (``must_beat``, ``must_trump``, ``lower_trump``, ``first_lead_no_trump``). The
   policy is a cheap cousin of the heuristic bot's, and reads only what its own seat would know. A
   seat that still needs tricks leads a side-suit card nothing unseen beats (while the others may
   still hold the suit, or no trumps), else the top trump if it is the best one left (to draw the
   others' trumps), else low from its shortest side suit; it follows with the cheapest card that
   nothing unseen of its suit beats, else with its highest card that beats the winner so far (its
   cheapest when it plays last), ruffs as low as it can, and otherwise throws its lowest card. A
   seat whose call is made ducks: it leads its lowest card and throws its highest losing one.
5. **Choosing.** The card with the highest weighted mean score is played; the score of a playout
   is this seat's round score under the rules' scoring (``arena.core.scoring.round_score``),
   less :data:`OPPONENT_WEIGHT` times the opponents' mean round score. The same deals serve
   every candidate, so their comparison is paired.
6. **Calling.** The same sampling, with the calls not yet made estimated from each sampled hand as
   the heuristic bot calls, gives by playout the distribution of the tricks this seat takes when
   it tries to take them all; each legal call is scored against that distribution under the rules'
   scoring (a miss costs the whole call, an overtrick a tenth, and so on) and the best expected
   score is called. Where taking too many tricks fails a call (pagat, DY), the best
   :data:`CALL_FINALISTS` calls are then played out again, each with this seat ducking once that
   call is made, and the best of those is called.

Every answer is one of the view's own ``legal`` cards or ``legal_calls``: the bot applies the rules
only to the deals it imagines, never to decide what it may play at the real table.

Budget. A decision stops after ``samples`` deals when that is given (deterministic: the deals are
drawn from a generator seeded by the bot's seed and the position, so the same seed in the same
position gives the same decision, in-process or over the network), otherwise once ``budget``
seconds have passed (default :data:`DEFAULT_BUDGET_S`; at least :data:`MIN_SAMPLES` deals), and
never after more than :data:`DEADLINE_SHARE` of the view's ``deadline_ms`` when the view offers one
(the arena's views do not today). A decision with one legal card, or one candidate, is answered at
once.

Common random numbers. The position's generator is keyed by the view's ``seat_seed`` where the
arena gives one: the same number for the same seat and cards in every rotation of a deal set. So two
versions of this bot with the same ``seed`` draw the same deals on the same cards, and a comparison
between them measures their difference more than their luck (``benchmarks/crn.py`` measures how many
games that saves). Where the view has no seat seed (0), the deal set, round and seat key it instead.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence

from arena import round_score
from arena.botkit import Bot, Card, LowerTrump, Rules, Scoring, View, run
from arena.core.cards import ABOVE, CARDS, FULL_DECK, SUIT_MASK, SUIT_OF
from sample_bots.heuristic_bot import cannot_hold, estimate_tricks

__all__ = ["Knowledge", "MonteCarloBot", "playout"]

# --- budget --------------------------------------------------------------------------------------

DEFAULT_BUDGET_S = 0.1
"""Seconds per decision when no sample count is given: well within the arena's default 1 s deadline."""
DEADLINE_SHARE = 0.25
"""The largest share of the view's ``deadline_ms`` (when it offers one) a decision may use."""
MIN_SAMPLES = 2
"""Deals played out before the clock is looked at, so even a tiny budget compares the candidates."""

# --- evidence and objective ----------------------------------------------------------------------

CALL_SPREAD = 1.5
"""The spread (standard deviation, in tricks) of a call around the heuristic estimate of the hand
that made it. Wide, since the other bots need not count tricks as the heuristic bot does: a call two
tricks off the estimate still keeps 40 % of the weight of one on it."""
OPPONENT_WEIGHT = 0.1
"""How much each point the opponents score on average counts against this seat's own points: a
small weight, so that between cards of about equal worth to this seat it plays the one that costs
the others their calls (0.1 measured a little ahead of 0 against the heuristic bot)."""
CALL_FINALISTS = 3
"""Calls played out again under pagat and DY scoring, where too many tricks fail a call."""
MAX_EFFORT_CALL = 14
"""The call a seat plays to when asked for its most tricks: above any real call, so it never ducks."""

_SIDE = tuple(tuple(s for s in range(4) if s != trump) for trump in range(4))
"""The side suits of each trump suit."""


# --- what the seat knows -------------------------------------------------------------------------


class Knowledge:
    """What one seat knows about where the unseen cards lie, and how it deals them at random."""

    def __init__(self, view: View) -> None:
        self.seat = view.seat
        self.trump = int(view.trump)
        self.rules: Rules = view.rules
        self.hand: int = view.hand.mask
        played = view.played.mask
        self.unseen: int = FULL_DECK & ~played & ~self.hand
        """The cards the other three seats hold between them."""
        self.calls: tuple[int | None, ...] = tuple(view.calls)
        tricks = [(t.leader, [c.index for c in t.cards]) for t in view.tricks]
        current = [c.index for c in view.trick]
        self.sizes = [13 - len(tricks)] * 4
        """By seat, the cards still in hand."""
        for k in range(len(current)):
            self.sizes[(view.leader + k) & 3] -= 1
        self.gone = [0, 0, 0, 0]
        """By seat, the cards it has played this round (its dealt hand is these and what it holds)."""
        for leader, cards in [*tricks, (view.leader, current)]:
            for k, card in enumerate(cards):
                self.gone[(leader + k) & 3] |= 1 << card
        self.others = [(self.seat + k) & 3 for k in (1, 2, 3)]
        self.cannot = self._cannot_hold([*tricks, (view.leader, current)])
        """By seat, the unseen cards the seat has shown it cannot hold."""
        if not self._feasible():
            # Only a broken premise (a rule the arena did not apply) gets here: deal freely instead.
            self.cannot = [0, 0, 0, 0]
        self._order = [card for card in range(52) if self.unseen >> card & 1]
        self._estimate_cache: dict[int, float] = {}

    def _cannot_hold(self, tricks: Sequence[tuple[int, list[int]]]) -> list[int]:
        """Replays the tricks and notes what each failure to follow, trump or beat reveals (the
        heuristic bot's inference), and what a trump first lead reveals where it is allowed only to a
        hand of trumps."""
        rules, trump = self.rules, self.trump
        cannot = cannot_hold(rules, trump, tricks)
        if tricks and tricks[0][1] and rules.first_lead_no_trump and SUIT_OF[tricks[0][1][0]] == trump:
            cannot[tricks[0][0]] |= FULL_DECK & ~SUIT_MASK[trump]  # a trump lead here means trumps only
        return [mask & self.unseen for mask in cannot]

    def _feasible(self) -> bool:
        """Hall's condition for dealing the unseen cards: each card has a seat that may hold it, each
        seat may hold enough cards to fill its hand, and the cards only one seat may hold fit in it
        (with three seats these are all the subsets the condition asks about)."""
        a, b, c = self.others
        cannot, unseen, sizes = self.cannot, self.unseen, self.sizes
        if unseen & cannot[a] & cannot[b] & cannot[c]:
            return False
        for seat, one, two in ((a, b, c), (b, c, a), (c, a, b)):
            if (unseen & ~cannot[seat]).bit_count() < sizes[seat]:
                return False
            if (unseen & ~cannot[seat] & cannot[one] & cannot[two]).bit_count() > sizes[seat]:
                return False
        return True

    def sample(self, rng: random.Random) -> list[int]:
        """Four hands (by seat, as masks): this seat's own and a random deal of the unseen cards
        that respects every exclusion and hand size (see the module docstring, step 2)."""
        hands = [0, 0, 0, 0]
        hands[self.seat] = self.hand
        cards = self._order[:]
        rng.shuffle(cards)
        others, cannot, sizes = self.others, self.cannot, self.sizes
        if not (cannot[others[0]] | cannot[others[1]] | cannot[others[2]]):
            start = 0
            for seat in others:
                for card in cards[start:start + sizes[seat]]:
                    hands[seat] |= 1 << card
                start += sizes[seat]
            return hands
        room = sizes[:]
        free = []  # cards any of the three may hold
        pairs = []  # (card, seat, seat): cards two of them may hold
        may = [0, 0, 0, 0]  # by seat: how many of the cards still to deal it may hold
        for card in cards:
            bit = 1 << card
            holders = [seat for seat in others if not cannot[seat] & bit]
            if len(holders) == 1:
                hands[holders[0]] |= bit
                room[holders[0]] -= 1
            elif len(holders) == 2:
                pairs.append((card, holders[0], holders[1]))
                may[holders[0]] += 1
                may[holders[1]] += 1
            else:
                free.append(card)
        for seat in others:
            may[seat] += len(free)
        for card, a, b in pairs:
            may[a] -= 1
            may[b] -= 1
            # To a with a chance proportional to its room, unless b could then no longer be filled.
            to_a = room[a] > 0 and (room[b] == 0 or rng.random() * (room[a] + room[b]) < room[a])
            if to_a and may[b] < room[b]:
                to_a = False
            elif not to_a and may[a] < room[a]:
                to_a = True
            seat = a if to_a else b
            hands[seat] |= 1 << card
            room[seat] -= 1
        start = 0
        for seat in others:
            for card in free[start:start + room[seat]]:
                hands[seat] |= 1 << card
            start += room[seat]
        return hands

    def weight(self, hands: Sequence[int]) -> float:
        """The likelihood of the calls made so far, had the seats been dealt ``hands`` (step 3)."""
        rules = self.rules
        exponent = 0.0
        for seat in self.others:
            call = self.calls[seat]
            if call is None:
                continue
            dealt = hands[seat] | self.gone[seat]
            estimate = self._estimate_cache.get(dealt)
            if estimate is None:
                estimate = self._estimate_cache[dealt] = estimate_tricks(dealt, self.trump)
            # The heuristic calls floor(estimate): a call c stands for an estimate in [c, c + 1).
            gap = estimate - (call + 0.5)
            if (call == rules.min_call and gap < 0) or (call == rules.max_call and gap > 0):
                gap = 0.0  # a call at the end of the range also stands for every estimate beyond it
            exponent += gap * gap
        return math.exp(-exponent / (2 * CALL_SPREAD * CALL_SPREAD))

    def estimated_call(self, hand: int) -> int:
        """The call the heuristic bot would make with ``hand`` (for seats yet to call)."""
        rules = self.rules
        return min(max(math.floor(estimate_tricks(hand, self.trump) + 1e-9), rules.min_call), rules.max_call)


# --- the playout policy --------------------------------------------------------------------------


def _ranks(mask: int) -> int:
    """The ranks present in ``mask``, whatever the suit, as a 13-bit mask."""
    return (mask | mask >> 13 | mask >> 26 | mask >> 39) & 0x1FFF


def _low(mask: int, trump: int) -> int:
    """The lowest-ranked card of ``mask``, a side suit's before a trump (of any rank)."""
    side = mask & ~SUIT_MASK[trump]
    if not side:
        return (mask & -mask).bit_length() - 1
    ranks = _ranks(side)
    rank = (ranks & -ranks).bit_length() - 1
    for suit in _SIDE[trump]:
        if side >> (13 * suit + rank) & 1:
            return 13 * suit + rank
    raise AssertionError("unreachable: the rank came from a side suit")


def _high_side(mask: int, trump: int) -> int:
    """The highest-ranked side-suit card of ``mask``, else its highest trump."""
    side = mask & ~SUIT_MASK[trump]
    if not side:
        return mask.bit_length() - 1
    rank = _ranks(side).bit_length() - 1
    for suit in _SIDE[trump]:
        if side >> (13 * suit + rank) & 1:
            return 13 * suit + rank
    raise AssertionError("unreachable: the rank came from a side suit")


def _lead(legal: int, hand: int, unseen: int, trump: int, wants: bool) -> int:
    """The card a seat leads: ``unseen`` are the cards it cannot see, ``wants`` whether it needs tricks."""
    if not wants:
        return _low(legal, trump)
    trumps_out = unseen & SUIT_MASK[trump]
    best, best_count = -1, -1
    for suit in _SIDE[trump]:
        cards = legal & SUIT_MASK[suit]
        if cards:
            top = cards.bit_length() - 1
            count = (unseen & SUIT_MASK[suit]).bit_count()
            # A side card nothing unseen beats wins, unless the others are out of the suit and can ruff.
            if not ABOVE[top] & unseen and (count or not trumps_out) and count > best_count:
                best, best_count = top, count
    if best >= 0:
        return best
    trumps = legal & SUIT_MASK[trump]
    if trumps:
        if not trumps_out:
            return (trumps & -trumps).bit_length() - 1  # every trump is a winner: the cheapest
        top = trumps.bit_length() - 1
        if not ABOVE[top] & unseen:
            return top  # the top trump wins and pulls the others' trumps
    best, best_length = -1, 14
    for suit in _SIDE[trump]:
        cards = legal & SUIT_MASK[suit]
        if cards:
            length = (hand & SUIT_MASK[suit]).bit_count()
            if length < best_length:
                best, best_length = (cards & -cards).bit_length() - 1, length
    if best >= 0:
        return best  # low from the shortest side suit, to make a void to ruff with
    return (trumps & -trumps).bit_length() - 1


def _follow(legal: int, win: int, trump: int, unseen: int, wants: bool, last: bool) -> int:
    """The card a seat plays to a trick now won by ``win``; ``last`` when it plays fourth."""
    win_suit = SUIT_OF[win]
    if win_suit == trump:
        beaters = legal & ABOVE[win]
    else:
        beaters = legal & (ABOVE[win] | SUIT_MASK[trump])
    if wants:
        if not beaters:
            return _low(legal, trump)
        if last or SUIT_OF[beaters.bit_length() - 1] != win_suit:
            return (beaters & -beaters).bit_length() - 1  # the cheapest winner, or the lowest ruff
        suit = SUIT_OF[win]
        above = unseen & SUIT_MASK[suit]
        sure = beaters & ABOVE[above.bit_length() - 1] if above else beaters
        if sure:
            return (sure & -sure).bit_length() - 1  # the cheapest card nothing unseen of the suit beats
        return beaters.bit_length() - 1
    losers = legal & ~beaters
    if losers:
        return _high_side(losers, trump)
    if last:
        return beaters.bit_length() - 1  # the trick is ours anyway: spend the highest card on it
    return (beaters & -beaters).bit_length() - 1


def playout(
    rules: Rules, trump: int, hands: Sequence[int], calls: Sequence[int], won: Sequence[int], played: int,
    leader: int, trick: Sequence[int], first: bool,
) -> list[int]:
    """The tricks each seat has won at the end of the round, played on from this position by the
    fast policy: ``hands`` by seat (masks), ``calls`` by seat (what each plays to), ``won`` the
    tricks won so far, ``played`` every card played (the current trick's included), ``trick`` the
    card indices of the current trick led by ``leader`` (up to four), ``first`` true while the
    first trick of the round is being played."""
    hands = list(hands)
    won = list(won)
    must_beat, must_trump = rules.must_beat, rules.must_trump
    under = rules.lower_trump is LowerTrump.TRUMP
    no_trump_lead = rules.first_lead_no_trump
    trumps = SUIT_MASK[trump]
    above, suit_of, suit_mask = ABOVE, SUIT_OF, SUIT_MASK
    n = len(trick)
    led = win = win_seat = -1
    if n:
        led = suit_of[trick[0]]
        win, win_seat = trick[0], leader
        for k in range(1, n):
            card = trick[k]
            suit = suit_of[card]
            if (suit == suit_of[win] and card > win) or (suit == trump and suit_of[win] != trump):
                win, win_seat = card, (leader + k) & 3
    seat = (leader + n) & 3
    while True:
        if n == 4:
            won[win_seat] += 1
            seat, n, first = win_seat, 0, False
        hand = hands[seat]
        if not n:
            if not hand:
                return won
            legal = hand
            if first and no_trump_lead and hand & ~trumps:
                legal = hand & ~trumps
            card = _lead(legal, hand, FULL_DECK & ~played & ~hand, trump, won[seat] < calls[seat])
            led, win, win_seat = suit_of[card], card, seat
        else:
            legal = hand & suit_mask[led]
            if legal:
                if must_beat and suit_of[win] == led and legal & above[win]:
                    legal &= above[win]
            elif not must_trump or not hand & trumps:
                legal = hand
            elif suit_of[win] != trump:
                legal = hand & trumps
            elif hand & above[win]:
                legal = hand & above[win]
            else:
                legal = hand & trumps if under else hand
            if legal & (legal - 1):
                card = _follow(legal, win, trump, FULL_DECK & ~played & ~hand, won[seat] < calls[seat], n == 3)
            else:
                card = legal.bit_length() - 1
            suit = suit_of[card]
            if (suit == suit_of[win] and card > win) or (suit == trump and suit_of[win] != trump):
                win, win_seat = card, seat
        hands[seat] = hand ^ (1 << card)
        played |= 1 << card
        n += 1
        seat = (seat + 1) & 3


# --- the bot -------------------------------------------------------------------------------------


def _candidates(legal: int, unseen: int) -> list[int]:
    """The legal cards less those equivalent to a lower one: two cards of a suit with no unseen
    card between them win and lose the same tricks, so only the lowest of such a run is tried."""
    out = []
    last = -1
    mask = legal
    while mask:
        card = (mask & -mask).bit_length() - 1
        mask ^= 1 << card
        between = ((1 << card) - 1) & ~((2 << last) - 1) if last >= 0 else 0
        if last < 0 or SUIT_OF[last] != SUIT_OF[card] or between & unseen:
            out.append(card)
        last = card
    return out


class MonteCarloBot(Bot):
    """Samples deals consistent with what its seat knows and plays each out; calls and plays what
    scores best on average."""

    name = "montecarlo"
    version = "1"

    def __init__(self, seed: int = 0, *, budget: float = DEFAULT_BUDGET_S, samples: int | None = None) -> None:
        """``samples``: deals per decision (deterministic); without it, ``budget`` seconds per decision."""
        if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1):
            raise ValueError(f"samples must be a whole number of at least 1, not {samples!r}")
        if not budget > 0:
            raise ValueError(f"budget must be a positive number of seconds, not {budget!r}")
        self.seed = seed
        self.budget = float(budget)
        self.samples = samples
        self.clock: Callable[[], float] = time.perf_counter
        """The clock the time budget is measured on (seconds)."""
        self.deals = 0
        """How many deals the last decision sampled (0 when it had no choice to make)."""

    # -- the budget and the generator -------------------------------------------------------------

    def _random(self, view: View, knowledge: Knowledge) -> random.Random:
        """A generator keyed by the seed and the position (the arena's seat seed, or the deal set, round
        and seat where it gives none), so the same position gets the same deals."""
        seat_seed = view.seat_seed
        if seat_seed:
            key = self.seed << 64 | seat_seed
        else:
            key = (self.seed << 32 | view.game_number) << 16 | view.round_number << 2 | view.seat
        key = ((key << 52 | knowledge.hand) << 52 | knowledge.unseen) << 4 | len(view.trick)
        return random.Random(key)

    def _deadline(self, view: View, share: float = 1.0) -> float:
        """The :attr:`clock` value past which no new deal is started (time budget only), ``share``
        of the budget from now."""
        budget = self.budget
        deadline_ms = getattr(view, "deadline_ms", 0) or 0
        if deadline_ms > 0:
            budget = min(budget, DEADLINE_SHARE * deadline_ms / 1000.0)
        return self.clock() + share * budget

    def _more(self, done: int, deadline: float) -> bool:
        """True while another deal should be sampled."""
        if self.samples is not None:
            return done < self.samples
        return done < MIN_SAMPLES or self.clock() < deadline

    # -- calling ----------------------------------------------------------------------------------

    def call(self, view: View) -> int:
        """The legal call with the best expected score over the sampled deals (step 6)."""
        self.deals = 0
        legal = list(view.legal_calls)
        if len(legal) == 1:
            return legal[0]
        rules, seat, trump = view.rules, view.seat, int(view.trump)
        # Where the finalists are played out again, each of them costs as much as the first pass.
        refine = rules.scoring is not Scoring.STANDARD
        deadline = self._deadline(view, 1 / (1 + CALL_FINALISTS) if refine else 1.0)
        knowledge = Knowledge(view)
        rng = self._random(view, knowledge)
        leader = (view.dealer + 1) & 3
        deals: list[tuple[list[int], list[int], float]] = []
        tricks: list[tuple[int, float]] = []
        while self._more(len(deals), deadline):
            hands = knowledge.sample(rng)
            weight = knowledge.weight(hands)
            calls = [c if c is not None else knowledge.estimated_call(hands[s]) for s, c in enumerate(view.calls)]
            calls[seat] = MAX_EFFORT_CALL
            won = playout(rules, trump, hands, calls, (0, 0, 0, 0), 0, leader, (), True)
            deals.append((hands, calls, weight))
            tricks.append((won[seat], weight))
        self.deals = len(deals)
        total = sum(weight for _, weight in tricks) or 1.0

        def expected(call: int) -> float:
            return sum(weight * round_score(rules, call, won) for won, weight in tricks) / total

        ranked = sorted(legal, key=lambda call: (-expected(call), call))
        if not refine:
            return ranked[0]
        # Too many tricks fail a call here: play the best calls out as called, ducking once made.
        finalists = ranked[:CALL_FINALISTS]
        scores = dict.fromkeys(finalists, 0.0)
        for hands, calls, weight in deals:
            for call in finalists:
                calls[seat] = call
                won = playout(rules, trump, hands, calls, (0, 0, 0, 0), 0, leader, (), True)
                scores[call] += weight * self._value(rules, calls, won, seat)
        return min(finalists, key=lambda call: (-scores[call], call))

    # -- playing ----------------------------------------------------------------------------------

    def play(self, view: View) -> Card:
        """The legal card with the best weighted mean score over the sampled deals (steps 1-5)."""
        self.deals = 0
        legal = view.legal.mask
        if not legal & (legal - 1):
            return CARDS[legal.bit_length() - 1]
        deadline = self._deadline(view)
        knowledge = Knowledge(view)
        candidates = _candidates(legal, knowledge.unseen)
        if len(candidates) == 1:
            return CARDS[candidates[0]]
        rng = self._random(view, knowledge)
        rules, seat, trump = view.rules, view.seat, int(view.trump)
        calls = [c if c is not None else 0 for c in view.calls]
        won = tuple(view.tricks_won)
        trick = [card.index for card in view.trick]
        played = view.played.mask
        first = not view.tricks
        leader = view.leader
        scores = [0.0] * len(candidates)
        done = 0
        while self._more(done, deadline):
            hands = knowledge.sample(rng)
            weight = knowledge.weight(hands)
            own = hands[seat]
            for i, card in enumerate(candidates):
                bit = 1 << card
                hands[seat] = own ^ bit
                final = playout(rules, trump, hands, calls, won, played | bit, leader, [*trick, card], first)
                scores[i] += weight * self._value(rules, calls, final, seat)
            done += 1
        self.deals = done
        best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
        return CARDS[candidates[best]]

    @staticmethod
    def _value(rules: Rules, calls: Sequence[int], won: Sequence[int], seat: int) -> float:
        """A playout's worth to ``seat``: its round score less a share of the opponents' mean."""
        others = sum(round_score(rules, calls[s], won[s]) for s in range(4) if s != seat)
        return round_score(rules, calls[seat], won[seat]) - OPPONENT_WEIGHT * others / 3


if __name__ == "__main__":
    raise SystemExit(run(MonteCarloBot))
