"""The heuristic bot: counts its winners to call, then plays to make the call and no more.

In-process use: ``HeuristicBot(seed).call(view)`` / ``.play(view)`` on a :class:`arena.SeatView`;
over the network: ``python sample_bots/heuristic_bot.py --arena HOST:PORT``, with the token in the
environment variable ``CALLBREAK_TOKEN``.
It reads only the public attributes a remote view also offers (``seat``, ``hand``, ``legal``,
``legal_calls``, ``calls``, ``trick``, ``leader``, ``tricks``, ``tricks_won``, ``trump``, ``rules``,
``played``, ``game_number``, ``round_number``), so it plays the same behind the gRPC seat. Its only
randomness is tie-breaking, drawn from its seed and the position: the same seed on the same cards
gives the same decisions, however many tables it serves at once.

Calling adds up weighted winners (aces, guarded kings, top trumps, trump length, ruffing chances),
floors the sum and clamps it to the legal range. Playing estimates, for every legal card, the
chance that it takes the current trick, from the cards not yet seen and what the other seats have
shown they cannot hold (a seat that failed to follow suit is void in it; one that followed under
``must_beat`` with a lower card holds nothing higher; and so on). While the call is not made it
wins as cheaply as it can; once the call is made it ducks and throws its dangerous cards away.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence

from arena.botkit import Bot, Card, LowerTrump, Rules, Scoring, View, run
from arena.core.cards import ABOVE, CARDS, FULL_DECK, SUIT_MASK, SUIT_OF

__all__ = ["HeuristicBot", "cannot_hold", "estimate_tricks"]


# --- calling weights ---------------------------------------------------------------------------
# Expected tricks of each holding. The values are a least-squares fit of the tricks these bots
# really take in self-play (16,000 hands, nepali rules), rounded; the residual spread is about one
# trick. A miss costs the whole call and an overtrick only 0.1, so the call floors the estimate.

BASE = -0.1
"""The fit's intercept: a hand of nothing still takes the odd trick, but less than zero on average."""
SIDE_ACE = 0.95
"""An ace of a side suit wins its first round nearly always."""
SIDE_ACE_LONG = 0.6
"""... but in a side suit of LONG_SUIT cards or more, some seat is likely void and ruffs it."""
LONG_SUIT = 6
"""Side-suit length from which the first round is often ruffed."""
SIDE_KING_WITH_ACE = 0.6
"""A-K: the king wins the second round unless it is ruffed."""
SIDE_KING_GUARDED = 0.6
"""K-x or K-x-x without the ace: the king wins once the ace has fallen."""
SIDE_KING_LONG = 0.45
"""K with three or more others: guarded, but the suit runs out around the table sooner."""
SIDE_KING_BARE = 0.15
"""A singleton king falls to the ace unless the ace holder is careless."""
SIDE_QUEEN = 0.3
"""A side-suit queen sometimes wins late, once the ace and king are gone."""
SIDE_QUEEN_WITH_AK = 0.4
"""A-K-Q of a suit of four or fewer: the queen wins the third round if nobody ruffs it."""
TRUMP_EACH = 0.3
"""Every trump: even a low one wins by ruffing a suit this seat runs out of."""
TRUMP_ACE = 0.95
"""The ace of trumps cannot lose (the fit is a shade under one because it overlaps TRUMP_EACH)."""
TRUMP_KING = 0.8
"""The king of trumps with another trump: loses only to the ace, and only if that falls on it."""
TRUMP_KING_BARE = 0.1
"""A singleton king of trumps: the ace is usually led through it."""
TRUMP_QUEEN = 0.65
"""The queen of trumps with at least two more trumps to guard it."""
TRUMP_JACK = 0.3
"""The jack of trumps in a suit of four or more."""
TRUMP_LENGTH = 0.7
"""Each trump beyond the third: once the others run out of trumps, it wins a trick."""
TRUMP_LENGTH_FREE = 3
"""The trumps that count as "normal length": only the ones beyond earn TRUMP_LENGTH."""
RUFF_VOID = 0.2
"""A side-suit void, per spare trump up to three (scaled): ruffs beyond what TRUMP_EACH counts."""
RUFF_SINGLETON = 0.1
"""A side-suit singleton, scaled the same way: a ruff on the second round."""

SCORING_BIAS = {Scoring.STANDARD: 0.0, Scoring.PAGAT: 0.0, Scoring.DY: 0.0}
"""Added to the estimate per scoring scheme, to tune one scheme without the others. Pagat also
succeeds with call+1, which suggests calling higher, but +0.3 lost about 2 points a game to 0.0
in mixed games (the ducking already lands tricks on call or call+1); DY fails at double the
call, and -0.3 there was no better than 0.0 beyond noise. So all stay at zero."""

# --- play weights ------------------------------------------------------------------------------

FUTURE_WEIGHT = 0.75
"""How much a card's chance to win a later trick counts against spending it now (win mode)."""
DUMP_WEIGHT = 0.3
"""How much throwing away a card likely to win later is worth when ducking."""
LEAD_SURE = 0.7
"""A lead that wins with at least this chance is played as a winner."""
TRUMP_FUTURE_FLOOR = 0.4
"""A trump, however low, can win later by ruffing: its future value is at least this."""
VOID_BONUS = 0.05
"""Prefers discards and losing leads from short side suits (voids make ruffs)."""


def _rank(index: int) -> int:
    return index % 13


def _bits(mask: int) -> Iterable[int]:
    """The card indices of a mask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _beats(card: int, win: int, trump: int) -> bool:
    """True when ``card`` takes the lead of a trick now won by ``win``."""
    suit, win_suit = SUIT_OF[card], SUIT_OF[win]
    return (suit == win_suit and card > win) or (suit == trump and win_suit != trump)


def cannot_hold(rules: Rules, trump: int, tricks: Sequence[tuple[int, Sequence[int]]]) -> list[int]:
    """By seat, the cards each seat has shown it cannot hold: replays ``tricks`` (leader, cards played,
    in order) and notes what each failure to follow, to trump or to beat reveals under ``rules``."""
    cannot = [0, 0, 0, 0]
    for leader, cards in tricks:
        if not cards:
            continue
        led = SUIT_OF[cards[0]]
        win = cards[0]
        for k in range(1, len(cards)):
            seat, card = (leader + k) & 3, cards[k]
            suit, win_suit = SUIT_OF[card], SUIT_OF[win]
            if suit != led:
                cannot[seat] |= SUIT_MASK[led]
                if rules.must_trump and suit != trump:
                    # A void seat must trump (or overtrump): it did not, so it could not.
                    cannot[seat] |= SUIT_MASK[trump] if win_suit != trump else ABOVE[win]
                    if rules.lower_trump is LowerTrump.TRUMP:
                        cannot[seat] |= SUIT_MASK[trump]  # even a lower trump had to be played
                elif rules.must_trump and win_suit == trump and card < win:
                    cannot[seat] |= ABOVE[win]  # it undertrumped: it had nothing higher
            elif rules.must_beat and win_suit == led and card < win:
                cannot[seat] |= ABOVE[win]  # it had to beat the winner if it could
            if _beats(card, win, trump):
                win = card
    return cannot


def _winner(cards: Sequence[int], trump: int) -> int:
    """The winning card index of a (partial) trick."""
    win = cards[0]
    for card in cards[1:]:
        if _beats(card, win, trump):
            win = card
    return win


# --- calling -------------------------------------------------------------------------------------


def estimate_tricks(hand: int, trump: int) -> float:
    """The tricks a hand (a mask) is expected to take, by the weights above."""
    has = [[bool(hand >> (suit * 13 + rank) & 1) for rank in range(13)] for suit in range(4)]
    n_trumps = (hand & SUIT_MASK[trump]).bit_count()
    total = BASE + TRUMP_EACH * n_trumps + TRUMP_LENGTH * max(0, n_trumps - TRUMP_LENGTH_FREE)
    ace, king, queen, jack = has[trump][12], has[trump][11], has[trump][10], has[trump][9]
    total += TRUMP_ACE * ace
    if king:
        total += TRUMP_KING if n_trumps >= 2 else TRUMP_KING_BARE
    if queen and n_trumps >= 3:
        total += TRUMP_QUEEN
    if jack and n_trumps >= 4:
        total += TRUMP_JACK
    ruffers = min(n_trumps, 3) / 3  # a short suit is worth something only with trumps to ruff it
    for suit in range(4):
        if suit == trump:
            continue
        n = (hand & SUIT_MASK[suit]).bit_count()
        ace, king, queen = has[suit][12], has[suit][11], has[suit][10]
        if ace:
            total += SIDE_ACE if n < LONG_SUIT else SIDE_ACE_LONG
        if king:
            if ace:
                total += SIDE_KING_WITH_ACE
            elif n == 1:
                total += SIDE_KING_BARE
            else:
                total += SIDE_KING_GUARDED if n <= 3 else SIDE_KING_LONG
        if queen:
            total += SIDE_QUEEN_WITH_AK if ace and king and n <= 4 else SIDE_QUEEN
        if n == 0:
            total += RUFF_VOID * ruffers
        elif n == 1:
            total += RUFF_SINGLETON * ruffers
    return total


# --- what the table knows ------------------------------------------------------------------------


class _Table:
    """The position as one seat sees it, with the card-location reasoning the play needs."""

    def __init__(self, view: View) -> None:
        self.seat = view.seat
        self.trump = int(view.trump)
        self.rules = view.rules
        self.hand = view.hand.mask
        self.trick = [card.index for card in view.trick]
        self.leader = view.leader
        self.unseen: int = FULL_DECK & ~view.played.mask & ~self.hand
        """The cards the other three seats still hold between them."""
        finished = [(t.leader, [c.index for c in t.cards]) for t in view.tricks]
        self.sizes = [13 - len(finished)] * 4
        """By seat, the cards still in hand."""
        for k in range(len(self.trick)):
            self.sizes[(self.leader + k) & 3] -= 1
        self.after = [(self.seat + k) & 3 for k in range(1, 4 - len(self.trick))]
        """The seats still to play to this trick after this one."""
        self.opponents = [(self.seat + k) & 3 for k in (1, 2, 3)]
        self.cannot = cannot_hold(self.rules, self.trump, [*finished, (self.leader, self.trick)])
        """By seat, the cards that seat has shown it cannot hold."""
        self._pin_cards()
        self._groups = self._holder_groups()
        self._none: dict[int, float] = {}


    def _pin_cards(self) -> None:
        """A seat that may hold only as many unseen cards as it has in hand holds exactly those:
        the other seats cannot hold them (repeated, since each pin can pin another seat)."""
        changed = True
        while changed:
            changed = False
            for seat in self.opponents:
                possible = self.unseen & ~self.cannot[seat]
                if possible.bit_count() != self.sizes[seat]:
                    continue
                for other in self.opponents:
                    if other != seat and possible & ~self.cannot[other]:
                        self.cannot[other] |= possible
                        changed = True

    # -- where the unseen cards are -------------------------------------------------------------

    def _holder_groups(self) -> list[tuple[int, list[float]]]:
        """The unseen cards grouped by which opponents may hold them: (cards mask, by seat the
        chance that seat holds any one of those cards, its hand size over theirs together)."""
        groups = []
        for subset in range(1, 8):
            seats = [self.opponents[k] for k in range(3) if subset >> k & 1]
            mask = self.unseen
            for seat in self.opponents:
                mask &= ~self.cannot[seat] if seat in seats else self.cannot[seat]
            if not mask:
                continue
            total = sum(self.sizes[seat] for seat in seats) or 1
            groups.append((mask, [self.sizes[seat] / total if seat in seats else 0.0 for seat in range(4)]))
        return groups

    def p_none(self, seat: int, mask: int) -> float:
        """The chance that ``seat`` holds none of the cards of ``mask`` (treated as independent)."""
        key = seat << 52 | mask
        prob = self._none.get(key)
        if prob is None:
            prob = 1.0
            for cards, share in self._groups:
                count = (cards & mask).bit_count()
                if count and share[seat]:
                    prob *= (1.0 - share[seat]) ** count
            self._none[key] = prob
        return prob

    def p_beats(self, seat: int, card: int, led: int) -> float:
        """The chance that ``seat`` can beat ``card``, the winner of a trick in suit ``led``."""
        trump = self.trump
        if SUIT_OF[card] == trump:
            higher = 1.0 - self.p_none(seat, ABOVE[card])
            if led == trump:
                return higher
            # Over a trump on a side-suit lead it needs to be void in the led suit too.
            return self.p_none(seat, SUIT_MASK[led]) * higher
        void = self.p_none(seat, SUIT_MASK[led])
        no_higher = self.p_none(seat, ABOVE[card])
        has_trump = 1.0 - self.p_none(seat, SUIT_MASK[trump])
        # It beats with a higher card of the suit, or by ruffing when void (void implies no higher).
        return min(1.0, max(0.0, 1.0 - no_higher + void * has_trump))

    def p_win(self, card: int) -> float:
        """The chance that playing ``card`` now takes this trick."""
        if self.trick:
            led = SUIT_OF[self.trick[0]]
            if not _beats(card, _winner(self.trick, self.trump), self.trump):
                return 0.0
        else:
            led = SUIT_OF[card]
        prob = 1.0
        for seat in self.after:
            prob *= 1.0 - self.p_beats(seat, card, led)
        return prob

    def p_lead(self, card: int) -> float:
        """The chance that ``card`` would win a trick if this seat led it (its worth for later)."""
        led = SUIT_OF[card]
        prob = 1.0
        for seat in self.opponents:
            prob *= 1.0 - self.p_beats(seat, card, led)
        return prob

    def future(self, card: int) -> float:
        """What keeping ``card`` is worth in later tricks; low trumps still ruff."""
        value = self.p_lead(card)
        if SUIT_OF[card] == self.trump:
            value = max(value, TRUMP_FUTURE_FLOOR)
        return value

    def suit_length(self, card: int) -> int:
        """How many cards of ``card``'s suit this seat holds."""
        return (self.hand & SUIT_MASK[SUIT_OF[card]]).bit_count()

    def has_trumps(self) -> bool:
        """True while this seat holds a trump."""
        return bool(self.hand & SUIT_MASK[self.trump])

    def short_suit_bonus(self, card: int) -> float:
        """A small preference for giving up cards of short side suits, to make voids for ruffing."""
        if SUIT_OF[card] == self.trump or not self.has_trumps():
            return 0.0
        return VOID_BONUS * max(0, 4 - self.suit_length(card))


# --- the bot -------------------------------------------------------------------------------------


class HeuristicBot(Bot):
    """Calls its counted winners and plays to make the call cheaply, then ducks."""

    name = "heuristic"
    version = "1"

    def __init__(self, seed: int = 0, **options: object) -> None:
        """Options: ``aggression`` (float, default 0.0) is added to the trick estimate before
        flooring; ``duck_after_call`` (default True) makes it avoid overtricks once its call is
        made (it always avoids those that would turn a made call into a failure, under pagat and
        DY scoring); ``future_weight`` (default FUTURE_WEIGHT) is how much it saves its winners
        for later. An unknown option is an error, so a misspelt variant does not pass unnoticed."""
        unknown = sorted(set(options) - {"aggression", "duck_after_call", "future_weight"})
        if unknown:
            raise TypeError(
                f"unknown HeuristicBot option(s): {', '.join(unknown)}; "
                "the options are aggression, duck_after_call and future_weight"
            )
        self.seed = seed
        self.random = random.Random(seed)
        self.aggression = float(options.get("aggression", 0.0))  # type: ignore[arg-type]
        self.duck_after_call = bool(options.get("duck_after_call", True))
        self.future_weight = float(options.get("future_weight", FUTURE_WEIGHT))  # type: ignore[arg-type]
        self.dump_weight = DUMP_WEIGHT
        self.lead_sure = LEAD_SURE

    # -- calling --------------------------------------------------------------------------------

    def call(self, view: View) -> int:
        """Counted winners, floored, clamped to the legal calls."""
        legal = view.legal_calls
        estimate = estimate_tricks(view.hand.mask, int(view.trump))
        estimate += self.aggression + SCORING_BIAS.get(view.rules.scoring, 0.0)
        # Floored: a miss costs the whole call, an overtrick only a tenth.
        return min(max(math.floor(estimate + 1e-9), legal[0]), legal[-1])

    # -- playing --------------------------------------------------------------------------------

    def play(self, view: View) -> Card:
        """A legal card: win cheaply while the call is not made, duck once it is."""
        legal = list(_bits(view.legal.mask))
        if len(legal) == 1:
            return CARDS[legal[0]]
        # Tie-breaks are drawn from the position itself, so the bot plays the same way on the same
        # cards however many tables it serves at once and in whatever order they ask.
        self.random = random.Random(
            ((self.seed << 32 | view.game_number) << 16 | view.round_number << 2 | view.seat) << 52 | view.hand.mask
        )
        table = _Table(view)
        if self._ducking(view):
            index = self._duck(table, legal)
        elif table.trick:
            index = self._follow_to_win(table, legal)
        else:
            index = self._lead_to_win(table, legal)
        return CARDS[index]

    def _ducking(self, view: View) -> bool:
        """True when another trick is unwanted: the call is made and overtricks are avoided or hurt."""
        call = view.calls[view.seat]
        won = view.tricks_won[view.seat]
        if call is None or won < call:
            return False
        return self.duck_after_call or _overtrick_fails(view.rules, call, won + 1)

    def _pick(self, scored: list[tuple[float, int]]) -> int:
        """The card of the highest score; near ties go to the seeded generator."""
        best = max(score for score, _ in scored)
        tied = sorted(card for score, card in scored if score >= best - 1e-9)
        return tied[0] if len(tied) == 1 else self.random.choice(tied)

    def _follow_to_win(self, table: _Table, legal: list[int]) -> int:
        """Following while tricks are needed: the card that best trades winning now against
        what it would be worth later (so the lowest sure winner, a low ruff, or a cheap discard)."""
        scored = []
        for card in legal:
            now = table.p_win(card)
            keep = table.future(card)
            score = now - self.future_weight * keep
            if now == 0.0:
                score += table.short_suit_bonus(card)
            scored.append((score - 1e-4 * _rank(card), card))
        return self._pick(scored)

    def _lead_to_win(self, table: _Table, legal: list[int]) -> int:
        """Leading while tricks are needed: a side-suit winner, else a top trump, else a low card
        from a short side suit (to ruff it later), else the least valuable card."""
        trump = table.trump
        side = [c for c in legal if SUIT_OF[c] != trump]
        trumps = [c for c in legal if SUIT_OF[c] == trump]
        chances = {c: table.p_lead(c) for c in legal}
        winners = [(chances[c] + 1e-4 * _rank(c), c) for c in side if chances[c] >= self.lead_sure]
        if winners:
            return self._pick(winners)
        if trumps:
            top = max(trumps)
            # The highest trump left is a sure trick; leading it also pulls the others' trumps,
            # which protects the side-suit winners still to come.
            if not table.unseen & ABOVE[top]:
                return top
        if side:
            # A low card (no likely winner) from the shortest side suit, to make a void.
            scored = [(-table.future(c) + table.short_suit_bonus(c) - 1e-4 * _rank(c), c) for c in side]
            return self._pick(scored)
        return min(trumps)  # only trumps left and no sure one: the cheapest

    def _duck(self, table: _Table, legal: list[int]) -> int:
        """Once the call is made: the card least likely to take the trick, throwing away the card
        most likely to win later (the highest losing card of a suit, a dangerous ace)."""
        scored = []
        for card in legal:
            now = table.p_win(card)
            score = -now + self.dump_weight * table.future(card) + 1e-4 * _rank(card)
            scored.append((score, card))
        return self._pick(scored)


def _overtrick_fails(rules: Rules, call: int, tricks: int) -> bool:
    """True when taking ``tricks`` would fail a call that ``tricks - 1`` makes."""
    if rules.scoring is Scoring.PAGAT:
        return tricks > call + 1
    if rules.scoring is Scoring.DY:
        return tricks >= 2 * call
    return False


if __name__ == "__main__":
    raise SystemExit(run(HeuristicBot))
